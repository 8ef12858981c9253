/** How a subagent's result is paired with its call: at the call's end, at the agent's stop or handback, or at expiry. */
import * as O from 'fp-ts/lib/Option.js';
import { failure } from '../../base/failure.js';
import { BEGIN_MARKER, END_MARKER } from '../../core/extract/parse.js';
import { collapseWhitespace } from '../../base/text.js';
import { nameId } from '../session/id.js';
import { agentTaskId, selectTaskId, type SubagentCallEnded, type SubagentCallFailed } from './payload.js';
import type { ResultRecord } from './records.js';
import type { DispatchState, Missed } from './state.js';
import {
  isAgentSettled,
  isAwaitingToolResult,
  isTakenByGuess,
  selectAnsweredDispatch,
  selectDispatchOfAgent,
  selectExpiredReports,
  selectMissed,
} from './select.js';
import { agentName, digestOf, holdsResult, recordResult, say, selectResultTaskId, type Turn } from './turn.js';

/**
 * Tells the user, once per dispatch, that an answer its subagent gave has no result block, so
 * nothing was recorded from it: without this the hooks drop such an answer without a word.
 */
const tellUnmarked = (turn: Turn, dispatch: DispatchState, what: string): void => {
  if (dispatch.unmarked) return;
  say(
    turn,
    failure(
      'marker_missing',
      `the answer of ${what} for task ${nameId(dispatch.record.taskId)} has no result between a line ${BEGIN_MARKER} and a line ${END_MARKER}, so nothing was recorded from it; ask subagents to end their answer with one (see docs/hooks.md)`,
    ),
  );
  turn.records.push({ type: 'unmarked', key: dispatch.record.key, at: turn.now });
};

/**
 * Reports whose call never named their agent in time: recorded under the task their agent took,
 * else the agent's id (`agentTaskId`). The report of the agent `named`, which the event's own call
 * names however late, is left to that call's end, which records it under the call's task.
 */
export const settleExpiredReports = (turn: Turn, named?: string): void => {
  const { timeoutMs } = turn.settings;
  for (const report of selectExpiredReports(turn.state, turn.now, timeoutMs)) {
    if (report.agentId === named) continue;
    const link = selectDispatchOfAgent(turn.state, report.agentId);
    const dispatch = O.isSome(link) && !link.value.dispatch.resulted ? link.value.dispatch : undefined;
    const taskId = dispatch?.record.taskId ?? agentTaskId(report.agentId);
    say(
      turn,
      failure(
        'report_unpaired',
        `no tool call named the subagent ${nameId(report.agentId)} within ${Math.round(timeoutMs / 1000)} s; its result is recorded under task ${nameId(taskId)}`,
      ),
    );
    recordResult(turn, {
      taskId,
      text: report.text,
      agentType: dispatch?.record.agentType,
      at: report.at,
      ...(dispatch === undefined ? {} : { key: dispatch.record.key }),
      agentId: report.agentId,
      what: agentName(report.agentId, dispatch?.record.agentType),
    });
  }
};

const sameText = (a: string, b: string): boolean => collapseWhitespace(a) === collapseWhitespace(b);

/**
 * The reports kept of `text` from stops whose agent the call did not name (older versions): they
 * are this call's answer, marked recorded with it under `taskId`.
 */
const keptReportsOf = (turn: Turn, text: string, taskId: string): ReadonlyArray<ResultRecord> =>
  Object.values(turn.state.reports)
    .filter((kept) => sameText(kept.text, text))
    .map((kept) => ({ type: 'result', agentId: kept.agentId, taskId, at: turn.now }));

/**
 * A call whose dispatch was never seen (hooks added mid-session, or a dispatch the hooks file
 * could not take): its answer still counts, once. Its agent's report, kept while other calls
 * waited, is recorded under the call's task; an agent whose result is in already (its stop, or
 * that stop's expiry, recorded it under its agent id) records nothing more: that line stands, as
 * the log is only ever appended to.
 */
const onUnknownCallEnded = (event: SubagentCallEnded, turn: Turn): void => {
  const { response } = event;
  const key = event.toolUseId;
  const { agentId } = response;
  if (key !== undefined && turn.state.settledKeys[key] === true) return;
  if (isAgentSettled(turn.state, agentId)) return;
  const report = agentId === undefined ? undefined : turn.state.reports[agentId];
  const text = report?.text ?? (response.status === 'async_launched' ? undefined : response.text);
  if (!holdsResult(text)) return;
  const task = selectTaskId({ prompt: event.prompt ?? '', ...(key === undefined ? {} : { toolUseId: key }) });
  const taskId = O.isSome(task) ? task.value.taskId : agentTaskId(agentId);
  recordResult(
    turn,
    {
      taskId,
      text,
      agentType: event.agentType,
      at: report?.at ?? turn.now,
      ...(key === undefined ? {} : { key }),
      ...(agentId === undefined ? {} : { agentId }),
      what: agentName(agentId, event.agentType),
    },
    agentId === undefined ? keptReportsOf(turn, text, taskId) : [],
  );
};

/** True when the section of `dispatch` is handed out at `SubagentStart` (and is not empty). */
const isStartSection = ({ record }: DispatchState): boolean =>
  record.channel === 'start' && record.sessionContext !== '';

/**
 * Tells the user, once per subagent, that it took another call's section by its type, as the call
 * of `dispatch` naming `agentId` shows: that agent took another's, or another subagent took this
 * call's before it named its own (a Codex spawn: its own agent still takes it, sections.ts).
 */
const tellMismatches = (turn: Turn, dispatch: DispatchState, agentId: string): void => {
  const { state } = turn;
  const { taskId } = dispatch.record;
  // An agent an earlier call named (resumed by this one) took no section by a guess. One a Codex
  // spawn named another agent for was told of at that naming.
  const guessed = state.agents[agentId];
  const other = guessed === undefined || guessed.exact ? undefined : state.byKey[guessed.key];
  if (
    other !== undefined &&
    other.record.key !== dispatch.record.key &&
    isStartSection(other) &&
    !(other.agentId !== undefined && isTakenByGuess(other, other.agentId))
  )
    say(
      turn,
      failure(
        'section_mismatch',
        `the subagent of task ${nameId(taskId)} (${nameId(agentId)}) started with the [Session Context] of task ${nameId(other.record.taskId)}`,
      ),
    );
  // One whose own spawn named it already was told of then.
  const { claimedBy } = dispatch;
  if (
    isStartSection(dispatch) &&
    isTakenByGuess(dispatch, agentId) &&
    (claimedBy === undefined || state.agents[claimedBy]?.exact !== true)
  )
    say(
      turn,
      failure(
        'section_mismatch',
        `the subagent ${claimedBy === undefined ? 'without an agent_id' : nameId(claimedBy)} started with the [Session Context] of task ${nameId(taskId)}, whose call named another (${nameId(agentId)})`,
      ),
    );
};

/** `PostToolUse` of a subagent tool: the call's answer, or the agent it launched. */
export const onCallEnded = (event: SubagentCallEnded, turn: Turn): void => {
  const { state, records } = turn;
  const { response } = event;
  const dispatch = event.toolUseId === undefined ? undefined : state.byKey[event.toolUseId];
  if (dispatch === undefined) return onUnknownCallEnded(event, turn);
  const { record } = dispatch;
  if (record.channel === 'input' && record.sessionContext !== '' && !dispatch.observed) {
    const seen = response.prompt ?? event.prompt;
    if (seen !== undefined) {
      const honoured = seen.startsWith(record.sessionContext);
      records.push({ type: 'observe', key: record.key, rewrite: honoured ? 'honoured' : 'ignored', at: turn.now });
      if (!honoured)
        say(
          turn,
          failure(
            'rewrite_ignored',
            `this ${event.toolName} tool did not apply the hook's rewritten prompt, so the subagent of task ${nameId(record.taskId)} started without its [Session Context]; later subagents of this session get theirs at SubagentStart (see docs/hooks.md)`,
          ),
        );
    }
  }
  const agentId = response.agentId ?? dispatch.agentId;
  if (response.agentId !== undefined && dispatch.agentId === undefined) {
    records.push({ type: 'launch', key: record.key, agentId: response.agentId, at: turn.now });
    tellMismatches(turn, dispatch, response.agentId);
  }
  const report = agentId === undefined ? undefined : state.reports[agentId];
  const launched = response.status === 'async_launched';
  // A spawn that returns at once (Codex) is not the end of its subagent: only Claude Code's call is.
  const final = !launched && record.join === 'tool';
  const text = report?.text ?? (launched ? undefined : response.text);
  if (!dispatch.resulted && holdsResult(text))
    recordResult(
      turn,
      {
        taskId: record.taskId,
        text,
        agentType: record.agentType ?? event.agentType,
        at: report?.at ?? turn.now,
        key: record.key,
        ...(agentId === undefined ? {} : { agentId }),
        what: agentName(agentId, record.agentType),
        final,
      },
      agentId === undefined ? keptReportsOf(turn, text, record.taskId) : [],
    );
  if (final && !dispatch.resulted && !dispatch.final && text !== undefined && !holdsResult(text))
    tellUnmarked(turn, dispatch, agentName(agentId, record.agentType ?? event.agentType));
  records.push({ type: 'end', key: record.key, final, at: turn.now });
};

/** `PostToolUseFailure`: the call is over, and no result will come. */
export const onCallFailed = (event: SubagentCallFailed, turn: Turn): void => {
  const dispatch = event.toolUseId === undefined ? undefined : turn.state.byKey[event.toolUseId];
  if (dispatch !== undefined && !dispatch.final)
    turn.records.push({ type: 'end', key: dispatch.record.key, final: true, at: turn.now });
};

/**
 * A subagent's report (a handed-back one, or its last message): recorded where its task is known
 * exactly, else kept. An agent whose earlier report the session did not record is not settled:
 * its next report is recorded (a Codex subagent stops after every turn).
 */
export const onReport = (
  turn: Turn,
  agentId: string | undefined,
  agentType: string | undefined,
  text: string,
  source: 'handback' | 'stop',
): void => {
  const { state } = turn;
  // A repeated stop, or a stop after its call was over: its result is in, or no longer awaited.
  if (isAgentSettled(state, agentId)) return;
  // The same report again while it waits for its call: it is kept already, and recorded once.
  const kept = agentId === undefined ? undefined : state.reports[agentId];
  if (kept !== undefined && sameText(kept.text, text)) return;
  const link = selectDispatchOfAgent(state, agentId);
  // A text the session refused for this agent before: the user was told then.
  const key = O.isSome(link) ? link.value.dispatch.record.key : undefined;
  if (
    holdsResult(text) &&
    O.exists((missed: Missed) => !missed.retry)(selectMissed(state, key, agentId, digestOf(text)))
  )
    return;
  if (!holdsResult(text)) {
    // Nothing to record or keep; said where the report is known to be its call's answer.
    if (O.isSome(link) && (link.value.exact || link.value.dispatch.record.join === 'agent'))
      tellUnmarked(turn, link.value.dispatch, agentName(agentId, agentType ?? link.value.dispatch.record.agentType));
    return;
  }
  // A report that names no agent can be paired with no call, nor told apart from its own retry:
  // recorded, it would land under no task, and again at each retry. A call waiting for its own end
  // gets the answer from there.
  if (agentId === undefined) {
    if (!isAwaitingToolResult(state, turn.now, turn.settings.timeoutMs))
      say(
        turn,
        failure(
          'report_unpaired',
          `a ${source === 'stop' ? 'SubagentStop' : 'handed-back report'} named no agent_id, so its result could not be paired with its task and was not recorded`,
        ),
      );
    return;
  }
  if (O.isSome(link)) {
    const { exact } = link.value;
    // A section taken by a guess may be another subagent's: the result's task says whose it answered.
    const dispatch = exact
      ? link.value.dispatch
      : selectAnsweredDispatch(state, link.value.dispatch, agentId, selectResultTaskId(text));
    if (exact || dispatch.record.join === 'agent')
      return recordResult(turn, {
        taskId: dispatch.record.taskId,
        text,
        agentType: dispatch.record.agentType ?? agentType,
        at: turn.now,
        key: dispatch.record.key,
        ...(agentId === undefined ? {} : { agentId }),
        what: agentName(agentId, agentType),
      });
  }
  // Its call will name it (Claude Code): wait for that, unless no call is waiting at all.
  if (O.isSome(link) || isAwaitingToolResult(state, turn.now, turn.settings.timeoutMs)) {
    turn.records.push({ type: 'report', agentId, text, source, at: turn.now });
    return;
  }
  recordResult(turn, {
    taskId: agentTaskId(agentId),
    text,
    agentType,
    at: turn.now,
    agentId,
    what: agentName(agentId, agentType),
  });
};
