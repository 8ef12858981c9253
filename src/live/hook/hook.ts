/**
 * `fact-tracker hook`: one hook event of Claude Code or Codex in, at most one JSON object out.
 * A memory tool must never block the user's work, so nothing here fails the hook: every
 * problem becomes a line for standard error, and the ones the user should know about also a
 * `systemMessage`; the agent carries on.
 *
 * - `PreToolUse` of a subagent tool records the subagent's prompt in the session log (a prompt
 *   event, task id from a `Task ID:` line or the tool call's id) and computes its section. In
 *   Claude Code the section goes in front of the prompt through `updatedInput`, with no
 *   permission decision, so the user is asked exactly what they would be asked without the hook.
 *   Elsewhere, or where the host was seen not to apply the rewrite, it waits for `SubagentStart`.
 * - `PostToolUse` of the same `tool_use_id` records the subagent's answer under that call's task
 *   (or, for a subagent sent to the background, learns its agent id, so that its `SubagentStop`
 *   is recorded under the right task); `PostToolUseFailure` ends the call.
 * - `SubagentStart` hands a waiting section to a subagent of its type (`additionalContext`).
 * - `SubagentStop` records the last message of a subagent whose task is known; a repeated stop
 *   of an agent already recorded is a no-op.
 * See state.ts for the rules, and docs/hooks.md for which host gets which path.
 */
import { existsSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import * as O from 'fp-ts/lib/Option.js';
import { describeError } from '../../base/describe.js';
import { collapseWhitespace } from '../../base/text.js';
import { SESSION_CONTEXT_HEADER } from '../../core/prompt/format.js';
import { BEGIN_MARKER } from '../../core/extract/parse.js';
import type { TokenCounter } from '../../tokens/estimate.js';
import { LIMIT_CODES, MAX_OUTPUT_LENGTH, MAX_PROMPT_LENGTH } from '../session/limits.js';
import { appendToLog, flushLog, readLog, setAsideTail, withLogLock } from '../session/logFile.js';
import type { SessionError } from '../session/model.js';
import { resolveProjectDirectory } from '../session/project.js';
import {
  DEFAULT_LOCK_STALE_MS,
  type LiveSession,
  locateSession,
  openSession,
  type SessionOptions,
} from '../session/session.js';
import { writeHooksFile } from './file.js';
import {
  CLAUDE_SUBAGENT_TOOLS,
  type HookEvent,
  parseHookEvent,
  selectTaskId,
  type SubagentCallEnded,
  type SubagentCallFailed,
  type SubagentDispatch,
  type SubagentHandback,
  type SubagentStarted,
  type SubagentStopped,
} from './payload.js';
import {
  compactHookRecords,
  type DispatchState,
  foldHookRecords,
  type HookRecord,
  type HookState,
  isAgentSettled,
  isAwaitingToolResult,
  parseHookRecords,
  selectDispatchOfAgent,
  selectExpiredReports,
  selectWaiting,
} from './state.js';

/** Agent types matching this are reviewers; every other agent is an implementer. */
export const DEFAULT_REVIEWER_PATTERN = /review/iu;
/** Appended to a log's name for the file the hook events of its session share. */
export const HOOKS_EXTENSION = '.hooks';
/**
 * How long a section waits for its subagent, and a report for the call that names its agent:
 * a call the user denied or interrupted never starts a subagent and never ends.
 */
export const DEFAULT_PENDING_TIMEOUT_MS = 10 * 60_000;
/** How long a dispatch still waiting for its result is kept at all. */
const RETENTION_MS = 24 * 60 * 60_000;
/** The hooks file is compacted once it holds this many lines and more than twice what compaction keeps. */
const COMPACT_AT_LINES = 512;

/** How the hook runs. */
export interface HookOptions {
  /** The working directory when the payload names none. */
  readonly cwd: string;
  /** The project directory the agent names (Claude Code's `CLAUDE_PROJECT_DIR`). */
  readonly projectDir?: string;
  /** The sessions folder, relative to the project (default `.fact-tracker/sessions`). */
  readonly directory?: string;
  readonly reviewerPattern?: RegExp;
  /** Facts and token budget of a section (defaults 10 and 500, as in a history). */
  readonly maxFacts?: number;
  readonly maxTokens?: number;
  readonly countTokens?: TokenCounter;
  readonly clock?: () => number;
  readonly lockStaleMs?: number;
  /** How long a section waits for its subagent (default 10 minutes). */
  readonly pendingTimeoutMs?: number;
}

/** What the hook prints: at most one JSON object on stdout, and lines for stderr. */
export interface HookOutcome {
  readonly output?: Readonly<Record<string, unknown>>;
  /** Lines for standard error (every problem). */
  readonly messages: ReadonlyArray<string>;
  /** What the user should see in the agent's transcript (as `systemMessage`). */
  readonly notices: ReadonlyArray<string>;
}

const quiet: HookOutcome = { messages: [], notices: [] };

/** A problem for stderr and for the user. */
const alert = (message: string): HookOutcome => ({ messages: [message], notices: [message] });

/** The role of an agent type's results. */
export const selectRole = (agentType: string | undefined, pattern: RegExp = DEFAULT_REVIEWER_PATTERN) =>
  agentType !== undefined && new RegExp(pattern.source, pattern.flags.replace('g', '')).test(agentType)
    ? ('reviewer' as const)
    : ('implementer' as const);

const BLOCK_LINE = new RegExp(`^[ \\t]*${BEGIN_MARKER}[ \\t]*$`, 'mu');
const holdsResult = (text: string | undefined): text is string => text !== undefined && BLOCK_LINE.test(text);

/** Where the sessions of an event are: under its project, whatever directory the agent is in now. */
const sessionOptions = (event: { readonly cwd?: string }, options: HookOptions, create: boolean): SessionOptions => {
  // The payload's working directory is where the agent runs; a relative one means nothing here.
  const cwd = event.cwd !== undefined && isAbsolute(event.cwd) ? event.cwd : options.cwd;
  return {
    cwd: resolveProjectDirectory({
      ...(options.projectDir === undefined ? {} : { projectDir: options.projectDir }),
      cwd,
    }),
    create,
    ...(options.directory === undefined ? {} : { directory: options.directory }),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.countTokens === undefined ? {} : { countTokens: options.countTokens }),
    ...(options.lockStaleMs === undefined ? {} : { lockStaleMs: options.lockStaleMs }),
  };
};

const failure = (what: string, error: SessionError): string => `${error.code}: ${what}: ${error.message}`;

/** One event's work on the shared state: what it read, what it decided, and the session it may use. */
interface Turn {
  readonly state: HookState;
  readonly now: number;
  readonly timeoutMs: number;
  readonly options: HookOptions;
  readonly session: () => Promise<E.Either<SessionError, LiveSession>>;
  readonly records: HookRecord[];
  readonly messages: string[];
  readonly notices: string[];
}

const say = (turn: Turn, message: string, notice = true): void => {
  turn.messages.push(message);
  if (notice) turn.notices.push(message);
};

/** What recording a result needs. */
interface ResultToRecord {
  readonly taskId: string;
  readonly text: string;
  readonly agentType: string | undefined;
  readonly at: number;
  readonly key?: string;
  readonly agentId?: string;
  /** Who the result is, for messages. */
  readonly what: string;
}

/**
 * Records a subagent's result in the session log and marks it recorded. A result whose own
 * `task_id` differs from the task it lands on is told to the user: the facts are bound to the
 * task of the call it answered.
 */
const recordResult = async (turn: Turn, result: ResultToRecord): Promise<void> => {
  const { taskId, text, what } = result;
  if (text.length > MAX_OUTPUT_LENGTH) {
    say(
      turn,
      `${LIMIT_CODES.output}: the result of ${what} for task ${taskId} has ${text.length} characters; at most ${MAX_OUTPUT_LENGTH} are recorded, so it was not`,
    );
  } else {
    const session = await turn.session();
    if (E.isLeft(session)) return say(turn, failure(`the result of ${what} for task ${taskId}`, session.left));
    const role = selectRole(result.agentType, turn.options.reviewerPattern);
    const ingested = await session.right.ingestResult({ role, taskId, output: text, at: result.at });
    if (E.isLeft(ingested))
      say(turn, failure(`the result of ${what} for task ${taskId} was not recorded`, ingested.left));
    else
      for (const warning of ingested.right.warnings)
        say(
          turn,
          `result_warning: the result of ${what} for task ${taskId}: ${warning}`,
          /differs from/u.test(warning),
        );
  }
  // Marked whatever happened: a result the contract rejected is not retried by a repeated stop.
  turn.records.push({
    type: 'result',
    ...(result.key === undefined ? {} : { key: result.key }),
    ...(result.agentId === undefined ? {} : { agentId: result.agentId }),
    taskId,
    at: turn.now,
  });
};

const agentName = (agentId: string | undefined, agentType: string | undefined): string =>
  `${agentType ?? 'a subagent'}${agentId === undefined ? '' : ` (${agentId})`}`;

/** Reports whose call never named their agent in time: recorded under the task their agent took, else the agent's id. */
const settleExpiredReports = async (turn: Turn): Promise<void> => {
  for (const report of selectExpiredReports(turn.state, turn.now, turn.timeoutMs)) {
    const link = selectDispatchOfAgent(turn.state, report.agentId);
    const dispatch = O.isSome(link) && !link.value.dispatch.resulted ? link.value.dispatch : undefined;
    const taskId = dispatch?.record.taskId ?? report.agentId;
    say(
      turn,
      `report_unpaired: no tool call named the subagent ${report.agentId} within ${Math.round(turn.timeoutMs / 1000)} s; its result is recorded under task ${taskId}`,
    );
    await recordResult(turn, {
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

/** The prompt with its section in front, as the subagent gets it. */
const withSection = (section: string, prompt: string): string => `${section}\n\n${prompt}`;

const rewriteOutput = (event: SubagentDispatch, dispatch: DispatchState['record']) =>
  dispatch.channel === 'input' && dispatch.sessionContext !== ''
    ? {
        hookSpecificOutput: {
          hookEventName: 'PreToolUse',
          updatedInput: { ...event.toolInput, [event.promptField]: withSection(dispatch.sessionContext, event.prompt) },
        },
      }
    : undefined;

const onDispatch = async (event: SubagentDispatch, turn: Turn): Promise<Record<string, unknown> | undefined> => {
  const selected = selectTaskId(event);
  if (O.isNone(selected)) {
    say(
      turn,
      `${LIMIT_CODES.taskId}: ${event.toolName} call without a tool_use_id or a "Task ID:" line: its prompt was not recorded`,
    );
    return undefined;
  }
  const { taskId, warning } = selected.value;
  if (warning !== undefined) say(turn, warning);
  if (event.prompt.length > MAX_PROMPT_LENGTH) {
    say(
      turn,
      `${LIMIT_CODES.prompt}: the prompt of task ${taskId} has ${event.prompt.length} characters; at most ${MAX_PROMPT_LENGTH} are recorded, so it was not`,
    );
    return undefined;
  }
  const { state } = turn;
  // The same call again (a resumed, deferred call): the section computed the first time.
  const known = event.toolUseId === undefined ? undefined : state.byKey[event.toolUseId];
  if (known !== undefined) return rewriteOutput(event, known.record);
  if (event.toolUseId !== undefined && state.settledKeys[event.toolUseId] === true) return undefined;
  const claude = (CLAUDE_SUBAGENT_TOOLS as ReadonlyArray<string>).includes(event.toolName);
  const sectioned = event.prompt.trimStart().startsWith(SESSION_CONTEXT_HEADER);
  const channel = sectioned ? 'none' : claude && state.rewrite !== 'ignored' ? 'input' : 'start';
  const session = await turn.session();
  if (E.isLeft(session)) {
    say(turn, failure(`session ${event.sessionId}`, session.left));
    return undefined;
  }
  const compiled = await session.right.compileContext({
    taskId,
    taskPrompt: event.prompt,
    ...(turn.options.maxFacts === undefined ? {} : { maxFacts: turn.options.maxFacts }),
    ...(turn.options.maxTokens === undefined ? {} : { maxTokens: turn.options.maxTokens }),
    at: turn.now,
  });
  if (E.isLeft(compiled)) {
    say(turn, failure(`the prompt of task ${taskId}`, compiled.left));
    return undefined;
  }
  const record: DispatchState['record'] = {
    type: 'dispatch',
    key: event.toolUseId ?? `line:${compiled.right.line}`,
    taskId,
    line: compiled.right.line,
    ...(event.agentType === undefined ? {} : { agentType: event.agentType }),
    sessionContext: compiled.right.sessionContext,
    channel,
    join: claude ? 'tool' : 'agent',
    at: turn.now,
  };
  turn.records.push(record);
  return rewriteOutput(event, record);
};

const sameText = (a: string, b: string): boolean => collapseWhitespace(a) === collapseWhitespace(b);

const onCallEnded = async (event: SubagentCallEnded, turn: Turn): Promise<void> => {
  const { state, records } = turn;
  const { response } = event;
  const key = event.toolUseId;
  const dispatch = key === undefined ? undefined : state.byKey[key];
  if (dispatch === undefined) {
    if (key !== undefined && state.settledKeys[key] === true) return;
    // A call whose dispatch was never seen (hooks added mid-session): its answer still counts.
    if (response.status === 'async_launched' || !holdsResult(response.text)) return;
    const task = selectTaskId({ prompt: event.prompt ?? '', ...(key === undefined ? {} : { toolUseId: key }) });
    const taskId = O.isSome(task) ? task.value.taskId : (response.agentId ?? 'unknown');
    return recordResult(turn, {
      taskId,
      text: response.text,
      agentType: event.agentType,
      at: turn.now,
      ...(key === undefined ? {} : { key }),
      ...(response.agentId === undefined ? {} : { agentId: response.agentId }),
      what: agentName(response.agentId, event.agentType),
    });
  }
  const { record } = dispatch;
  if (record.channel === 'input' && record.sessionContext !== '' && !dispatch.observed) {
    const seen = response.prompt ?? event.prompt;
    if (seen !== undefined) {
      const honoured = seen.startsWith(record.sessionContext);
      records.push({ type: 'observe', key: record.key, rewrite: honoured ? 'honoured' : 'ignored', at: turn.now });
      if (!honoured)
        say(
          turn,
          `rewrite_ignored: this ${event.toolName} tool did not apply the hook's rewritten prompt, so the subagent of task ${record.taskId} started without its [Session Context]; later subagents of this session get theirs at SubagentStart (see docs/hooks.md)`,
        );
    }
  }
  const agentId = response.agentId ?? dispatch.agentId;
  if (response.agentId !== undefined && dispatch.agentId === undefined) {
    records.push({ type: 'launch', key: record.key, agentId: response.agentId, at: turn.now });
    const guessed = state.agents[response.agentId];
    const other = guessed === undefined ? undefined : state.byKey[guessed.key];
    if (
      other !== undefined &&
      other.record.key !== record.key &&
      other.record.channel === 'start' &&
      other.record.sessionContext !== ''
    )
      say(
        turn,
        `section_mismatch: the subagent of task ${record.taskId} (${response.agentId}) started with the [Session Context] of task ${other.record.taskId}`,
      );
  }
  const report = agentId === undefined ? undefined : state.reports[agentId];
  const launched = response.status === 'async_launched';
  const text = report?.text ?? (launched ? undefined : response.text);
  if (!dispatch.resulted && holdsResult(text)) {
    await recordResult(turn, {
      taskId: record.taskId,
      text,
      agentType: record.agentType ?? event.agentType,
      at: report?.at ?? turn.now,
      key: record.key,
      ...(agentId === undefined ? {} : { agentId }),
      what: agentName(agentId, record.agentType),
    });
    // The same answer kept from a stop whose agent the call did not name (older versions) is this one.
    if (agentId === undefined)
      for (const kept of Object.values(state.reports))
        if (sameText(kept.text, text))
          records.push({ type: 'result', agentId: kept.agentId, taskId: record.taskId, at: turn.now });
  }
  // A spawn that returns at once (Codex) is not the end of its subagent: only Claude Code's call is.
  records.push({ type: 'end', key: record.key, final: !launched && record.join === 'tool', at: turn.now });
};

const onCallFailed = (event: SubagentCallFailed, turn: Turn): void => {
  const dispatch = event.toolUseId === undefined ? undefined : turn.state.byKey[event.toolUseId];
  if (dispatch !== undefined && !dispatch.final)
    turn.records.push({ type: 'end', key: dispatch.record.key, final: true, at: turn.now });
};

/** A subagent's report (a handed-back one, or its last message): recorded where its task is known exactly, else kept. */
const onReport = async (
  turn: Turn,
  agentId: string | undefined,
  agentType: string | undefined,
  text: string,
  source: 'handback' | 'stop',
): Promise<void> => {
  const { state } = turn;
  // A repeated stop, or a stop after its call was over: its result is in, or no longer awaited.
  if (isAgentSettled(state, agentId)) return;
  const link = selectDispatchOfAgent(state, agentId);
  if (O.isSome(link)) {
    const { dispatch, exact } = link.value;
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
  if (agentId !== undefined && (O.isSome(link) || isAwaitingToolResult(state, turn.now, turn.timeoutMs))) {
    turn.records.push({ type: 'report', agentId, text, source, at: turn.now });
    return;
  }
  return recordResult(turn, {
    taskId: agentId ?? 'unknown',
    text,
    agentType,
    at: turn.now,
    ...(agentId === undefined ? {} : { agentId }),
    what: agentName(agentId, agentType),
  });
};

const onStart = (event: SubagentStarted, turn: Turn): Record<string, unknown> | undefined => {
  const { state } = turn;
  const section = (text: string) =>
    text === '' ? undefined : { hookSpecificOutput: { hookEventName: 'SubagentStart', additionalContext: text } };
  if (isAgentSettled(state, event.agentId)) return undefined;
  const link = selectDispatchOfAgent(state, event.agentId);
  if (O.isSome(link) && event.agentId !== undefined) {
    const { dispatch } = link.value;
    if (dispatch.record.channel !== 'start') return undefined;
    // Its call named it before it started: it takes its own section.
    if (!dispatch.claimed) {
      turn.records.push({ type: 'claim', key: dispatch.record.key, agentId: event.agentId, at: turn.now });
      return section(dispatch.record.sessionContext);
    }
    // A resumed subagent gets the section it took before (Claude Code injects it only if its copy is gone).
    return dispatch.claimedBy === event.agentId ? section(dispatch.record.sessionContext) : undefined;
  }
  const claimable = selectWaiting(state, 'section', event.agentType, turn.now, turn.timeoutMs);
  if (O.isNone(claimable)) {
    // Its section went in its prompt; remember whose it most likely is, in case its call never names it.
    const guess = selectWaiting(state, 'guess', event.agentType, turn.now, turn.timeoutMs);
    if (O.isSome(guess) && event.agentId !== undefined)
      turn.records.push({ type: 'claim', key: guess.value.record.key, agentId: event.agentId, at: turn.now });
    return undefined;
  }
  const { record } = claimable.value;
  turn.records.push({
    type: 'claim',
    key: record.key,
    ...(event.agentId === undefined ? {} : { agentId: event.agentId }),
    at: turn.now,
  });
  return section(record.sessionContext);
};

/** True when the event can change nothing in a session without a hooks file: it then touches no file. */
const needsNoFiles = (event: HookEvent): boolean => {
  switch (event.event) {
    case 'SubagentStart':
    case 'PostToolUseFailure':
      return true;
    case 'PostToolUse':
      return event.response.status === 'async_launched' || !holdsResult(event.response.text);
    default:
      return false;
  }
};

/** True when the event can change nothing at all. */
const isIdle = (event: HookEvent): boolean =>
  event.event === 'ignored' ||
  (event.event === 'SubagentStop' && !holdsResult(event.lastAssistantMessage)) ||
  (event.event === 'Handback' && !holdsResult(event.message));

const decide = async (event: HookEvent, turn: Turn): Promise<Record<string, unknown> | undefined> => {
  await settleExpiredReports(turn);
  switch (event.event) {
    case 'PreToolUse':
      return onDispatch(event, turn);
    case 'PostToolUse':
      await onCallEnded(event, turn);
      return undefined;
    case 'PostToolUseFailure':
      onCallFailed(event, turn);
      return undefined;
    case 'Handback':
      await onReport(turn, event.agentId, event.agentType, event.message, 'handback');
      return undefined;
    case 'SubagentStart':
      return onStart(event, turn);
    case 'SubagentStop':
      await onReport(turn, event.agentId, event.agentType, event.lastAssistantMessage ?? '', 'stop');
      return undefined;
    case 'ignored':
      return undefined;
  }
};

/**
 * Runs one event under the lock of its session's hooks file: reads the state, decides (calling
 * the session for prompts and results), appends the records the decision made and flushes them,
 * and compacts the file when it has grown well past what it must keep. The hook commands of
 * parallel subagents run at once; the lock makes each of them see the others' records.
 */
const runLocked = async (
  event: Exclude<HookEvent, { event: 'ignored' }>,
  options: HookOptions,
): Promise<HookOutcome> => {
  const now = (options.clock ?? Date.now)();
  const located = await locateSession(event.sessionId, sessionOptions(event, options, false));
  if (E.isLeft(located)) return alert(failure(`session ${event.sessionId}`, located.left));
  const file = `${located.right.file}${HOOKS_EXTENSION}`;
  if (needsNoFiles(event) && !existsSync(file)) return quiet;
  const settings = sessionOptions(event, options, true);
  const ready = await locateSession(event.sessionId, settings);
  if (E.isLeft(ready)) return alert(failure(`session ${event.sessionId}`, ready.left));
  const staleMs = Math.max(options.lockStaleMs ?? DEFAULT_LOCK_STALE_MS, 2_000);
  let opened: Promise<E.Either<SessionError, LiveSession>> | undefined;
  const messages: string[] = [];
  const notices: string[] = [];
  const locked = await withLogLock(file, { staleMs }, async (stillLocked) => {
    const read = await readLog(file, 0);
    if (E.isLeft(read)) return read;
    if (read.right.tail > 0) {
      const moved = await setAsideTail(
        file,
        `${file}.set-aside`,
        read.right.consumed,
        read.right.text.split('\n').length,
        now,
      );
      if (E.isLeft(moved)) return moved;
    }
    const turn: Turn = {
      state: foldHookRecords(parseHookRecords(read.right.text)),
      now,
      timeoutMs: options.pendingTimeoutMs ?? DEFAULT_PENDING_TIMEOUT_MS,
      options,
      session: () => (opened ??= openSession(event.sessionId, settings)),
      records: [],
      messages,
      notices,
    };
    const output = await decide(event, turn);
    if (turn.records.length === 0) return E.right({ output, written: false });
    const safe = stillLocked();
    if (E.isLeft(safe)) return safe;
    const appended = await appendToLog(file, turn.records.map((record) => `${JSON.stringify(record)}\n`).join(''));
    if (E.isLeft(appended)) return appended;
    const lines = turn.state.lines + turn.records.length;
    if (lines >= COMPACT_AT_LINES) {
      const all = foldHookRecords([...parseHookRecords(read.right.text), ...turn.records]);
      const kept = compactHookRecords(all, now, RETENTION_MS);
      if (lines > 2 * kept.length) {
        const rewritten = writeHooksFile(file, kept.map((record) => `${JSON.stringify(record)}\n`).join(''));
        if (E.isLeft(rewritten)) messages.push(failure('compacting the hooks file', rewritten.left));
        return E.right({ output, written: false });
      }
    }
    return E.right({ output, written: true });
  });
  if (E.isLeft(locked))
    return {
      messages: [...messages, failure(`session ${event.sessionId}`, locked.left)],
      notices: [...notices, failure(`session ${event.sessionId}`, locked.left)],
    };
  if (locked.right.written) {
    const flushed = flushLog(file, true);
    if (E.isLeft(flushed)) messages.push(failure(`session ${event.sessionId}`, flushed.left));
  }
  return { ...(locked.right.output === undefined ? {} : { output: locked.right.output }), messages, notices };
};

/** Runs one hook event given as the text of its payload. Never throws. */
export const runHook = async (payload: string, options: HookOptions): Promise<HookOutcome> => {
  try {
    const event = parseHookEvent(payload);
    if (E.isLeft(event)) return alert(event.left);
    if (isIdle(event.right) || event.right.event === 'ignored') return quiet;
    return await runLocked(event.right, options);
  } catch (error) {
    return alert(`internal_error: ${describeError(error)}`);
  }
};

/** The JSON object the hook prints: the event's own output, and the notices as a `systemMessage` the user sees. */
export const hookOutput = (outcome: HookOutcome): Readonly<Record<string, unknown>> | undefined =>
  outcome.notices.length === 0
    ? outcome.output
    : { ...outcome.output, systemMessage: `fact-tracker: ${outcome.notices.map(collapseWhitespace).join(' | ')}` };
