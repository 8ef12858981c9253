/** How a section reaches its subagent: the prompt a subagent call records, and the section a starting subagent takes. */
import * as O from 'fp-ts/lib/Option.js';
import { failure } from '../../base/failure.js';
import { SESSION_CONTEXT_HEADER } from '../../core/prompt/format.js';
import { LIMIT_CODES, MAX_PROMPT_LENGTH } from '../session/limits.js';
import { nameId } from '../session/id.js';
import { CLAUDE_SUBAGENT_TOOLS, selectTaskId, type SubagentDispatch, type SubagentStarted } from './payload.js';
import type { DispatchRecord } from './records.js';
import { isAgentSettled, isTakenByGuess, selectDispatchOfAgent, selectNamedAt, selectWaitingOrLate } from './select.js';
import { say, type Turn } from './turn.js';

/** The prompt with its section in front, as the subagent gets it. */
const withSection = (section: string, prompt: string): string => `${section}\n\n${prompt}`;

/** The output of a call whose section goes in its prompt: its input, the prompt rewritten. */
export const rewriteOutput = (
  call: SubagentDispatch,
  dispatch: DispatchRecord,
): Readonly<Record<string, unknown>> | undefined =>
  dispatch.channel === 'input' && dispatch.sessionContext !== ''
    ? {
        hookSpecificOutput: {
          hookEventName: 'PreToolUse',
          updatedInput: { ...call.toolInput, [call.promptField]: withSection(dispatch.sessionContext, call.prompt) },
        },
      }
    : undefined;

/** `PreToolUse` of a subagent tool: asks the session to record its prompt (or answers a repeated call at once). */
export const onDispatch = (event: SubagentDispatch, turn: Turn): Readonly<Record<string, unknown>> | undefined => {
  const selected = selectTaskId(event);
  if (O.isNone(selected)) {
    say(
      turn,
      failure(
        LIMIT_CODES.taskId,
        `${event.toolName} call without a tool_use_id or a "Task ID:" line: its prompt was not recorded`,
      ),
    );
    return undefined;
  }
  const { taskId, warning } = selected.value;
  if (warning !== undefined) say(turn, warning);
  if (event.prompt.length > MAX_PROMPT_LENGTH) {
    say(
      turn,
      failure(
        LIMIT_CODES.prompt,
        `the prompt of task ${nameId(taskId)} has ${event.prompt.length} characters; at most ${MAX_PROMPT_LENGTH} are recorded, so it was not`,
      ),
    );
    return undefined;
  }
  const { state, settings } = turn;
  // The same call again (a resumed, deferred call): the section computed the first time.
  const known = event.toolUseId === undefined ? undefined : state.byKey[event.toolUseId];
  if (known !== undefined) return rewriteOutput(event, known.record);
  if (event.toolUseId !== undefined && state.settledKeys[event.toolUseId] === true) return undefined;
  const claude = (CLAUDE_SUBAGENT_TOOLS as ReadonlyArray<string>).includes(event.toolName);
  const sectioned = event.prompt.trimStart().startsWith(SESSION_CONTEXT_HEADER);
  turn.effects.push({
    type: 'compile',
    request: {
      taskId,
      taskPrompt: event.prompt,
      ...(settings.maxFacts === undefined ? {} : { maxFacts: settings.maxFacts }),
      ...(settings.maxTokens === undefined ? {} : { maxTokens: settings.maxTokens }),
      ...(settings.layout === undefined ? {} : { layout: settings.layout }),
      at: turn.now,
    },
    call: event,
    dispatch: {
      type: 'dispatch',
      ...(event.toolUseId === undefined ? {} : { key: event.toolUseId }),
      taskId,
      ...(event.agentType === undefined ? {} : { agentType: event.agentType }),
      channel: sectioned ? 'none' : claude && state.rewrite !== 'ignored' ? 'input' : 'start',
      join: claude ? 'tool' : 'agent',
      at: turn.now,
    },
  });
  return undefined;
};

/** `SubagentStart`: hands a waiting section to a subagent of its type. */
export const onStart = (event: SubagentStarted, turn: Turn): Readonly<Record<string, unknown>> | undefined => {
  const { state, now } = turn;
  const { timeoutMs } = turn.settings;
  const section = (text: string) =>
    text === '' ? undefined : { hookSpecificOutput: { hookEventName: 'SubagentStart', additionalContext: text } };
  const link = selectDispatchOfAgent(state, event.agentId);
  const settled = isAgentSettled(state, event.agentId);
  // A Claude Code subagent whose call is over starts again: resumed, by a call of its own whose
  // section waits as any other (a foreground call names its agent at its end only), or by none.
  const resumed = settled && O.isSome(link) && link.value.dispatch.record.join === 'tool';
  if (settled && !resumed) return undefined;
  if (!resumed && O.isSome(link) && event.agentId !== undefined) {
    const { dispatch } = link.value;
    if (dispatch.record.channel !== 'start') return undefined;
    // Its call named it before it started: it takes its own section.
    if (!dispatch.claimed) {
      turn.records.push({ type: 'claim', key: dispatch.record.key, agentId: event.agentId, at: now });
      return section(dispatch.record.sessionContext);
    }
    // So where another subagent of its type took it by a guess before its call named this one
    // (handed out twice, the user told at that naming). That subagent keeps its claim, through which
    // its answer is paired, so nothing is recorded: a start again is handed it again.
    if (link.value.exact && isTakenByGuess(dispatch, event.agentId)) return section(dispatch.record.sessionContext);
    // Started again before its call is over: the section it took before (Claude Code injects it
    // only if its copy is gone).
    return dispatch.claimedBy === event.agentId ? section(dispatch.record.sessionContext) : undefined;
  }
  // A section older than the wait is a call's that waited on the user. A subagent resumed takes
  // one made since the call it worked for named it (its new call's, which names it), never that
  // of a call made before (one the user denied, whose subagent never starts).
  const since = O.isSome(link) && resumed ? selectNamedAt(link.value.dispatch) : -Infinity;
  const claimable = selectWaitingOrLate(state, 'section', event.agentType, now, timeoutMs, since);
  if (O.isNone(claimable)) {
    if (resumed) return undefined;
    // Its section went in its prompt; remember whose it most likely is, in case its call never names
    // it, and so that its stop waits for its call's end, which records its answer (a call allowed
    // past the wait too: the end of one no subagent is known for would record it a second time).
    const guess = selectWaitingOrLate(state, 'guess', event.agentType, now, timeoutMs);
    if (O.isSome(guess) && event.agentId !== undefined)
      turn.records.push({ type: 'claim', key: guess.value.record.key, agentId: event.agentId, at: now });
    return undefined;
  }
  const { record } = claimable.value;
  turn.outputNeedsRecords = true;
  turn.records.push({
    type: 'claim',
    key: record.key,
    ...(event.agentId === undefined ? {} : { agentId: event.agentId }),
    at: now,
  });
  return section(record.sessionContext);
};
