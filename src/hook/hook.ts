/**
 * `fact-tracker hook`: one hook event of Claude Code or Codex in, at most one JSON object out.
 * A memory tool must never block the user's work, so nothing here fails the hook: every
 * problem becomes a line for standard error and the agent carries on.
 *
 * - `PreToolUse` of a subagent tool records the subagent's prompt in the session log (a prompt
 *   event, task id from a `Task ID:` line or the tool call's id), computes its section and
 *   leaves it pending.
 * - `SubagentStart` hands the oldest pending section of its agent type to the subagent as
 *   `hookSpecificOutput.additionalContext`.
 * - `SubagentStop` records the subagent's last message when it holds a dispatch result block.
 */
import { existsSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { describeError } from '../base/describe.js';
import * as O from 'fp-ts/lib/Option.js';
import { BEGIN_MARKER } from '../runtime/parse.js';
import type { TokenCounter } from '../tokens/estimate.js';
import { appendToLog, flushLog, readLog, setAsideTail, withLogLock } from '../session/logFile.js';
import type { SessionError } from '../session/model.js';
import { DEFAULT_LOCK_STALE_MS, locateSession, openSession, type SessionOptions } from '../session/session.js';
import {
  type HookEvent,
  parseHookEvent,
  selectTaskId,
  type SubagentDispatch,
  type SubagentStarted,
  type SubagentStopped,
} from './payload.js';
import { foldHookRecords, type HookRecord, type HookState, selectPendingFor } from './pending.js';

/** Agent types matching this are reviewers; every other agent is an implementer. */
export const DEFAULT_REVIEWER_PATTERN = /review/iu;
/** Appended to a log's name for the file the hook events of its session share. */
const HOOKS_EXTENSION = '.hooks';

/** How the hook runs. */
export interface HookOptions {
  /** The working directory when the payload names none. */
  readonly cwd: string;
  /** The sessions folder (default `.fact-tracker/sessions` under the payload's `cwd`). */
  readonly directory?: string;
  readonly reviewerPattern?: RegExp;
  /** Facts and token budget of a section (defaults 10 and 500, as in a history). */
  readonly maxFacts?: number;
  readonly maxTokens?: number;
  readonly countTokens?: TokenCounter;
  readonly clock?: () => number;
  readonly lockStaleMs?: number;
}

/** What the hook prints: at most one JSON object on stdout, and lines for stderr. */
export interface HookOutcome {
  readonly output?: Readonly<Record<string, unknown>>;
  readonly messages: ReadonlyArray<string>;
}

const quiet: HookOutcome = { messages: [] };
const say = (message: string): HookOutcome => ({ messages: [message] });

/** The role of an agent type's results. */
export const selectRole = (agentType: string | undefined, pattern: RegExp = DEFAULT_REVIEWER_PATTERN) =>
  agentType !== undefined && new RegExp(pattern.source, pattern.flags.replace('g', '')).test(agentType)
    ? ('reviewer' as const)
    : ('implementer' as const);

const BLOCK_LINE = new RegExp(`^[ \\t]*${BEGIN_MARKER}[ \\t]*$`, 'mu');

const sessionOptions = (event: { readonly cwd?: string }, options: HookOptions, create: boolean): SessionOptions => ({
  // The payload's working directory is where the agent runs; a relative one means nothing here.
  cwd: event.cwd !== undefined && isAbsolute(event.cwd) ? event.cwd : options.cwd,
  create,
  ...(options.directory === undefined ? {} : { directory: options.directory }),
  ...(options.clock === undefined ? {} : { clock: options.clock }),
  ...(options.countTokens === undefined ? {} : { countTokens: options.countTokens }),
  ...(options.lockStaleMs === undefined ? {} : { lockStaleMs: options.lockStaleMs }),
});

const failure = (what: string, error: SessionError): HookOutcome => say(`${what}: ${error.code}: ${error.message}`);

/**
 * Reads the hooks file of a session under its lock, lets `decide` append records, and flushes
 * them before returning. The hook commands of parallel subagents run at once; the lock makes
 * each claim of a pending section happen once.
 */
const withHookState = async <T>(
  sessionId: string,
  options: SessionOptions,
  decide: (state: HookState) => { readonly records: ReadonlyArray<HookRecord>; readonly result: T },
): Promise<E.Either<SessionError, T>> => {
  const files = await locateSession(sessionId, options);
  if (E.isLeft(files)) return files;
  const file = `${files.right.file}${HOOKS_EXTENSION}`;
  // A session nobody dispatched to yet has nothing pending, and is not to be created by a reader.
  if (options.create === false && !existsSync(file)) {
    const { records, result } = decide(foldHookRecords(''));
    if (records.length === 0) return E.right(result);
  }
  const locked = await withLogLock(
    file,
    { staleMs: Math.max(options.lockStaleMs ?? DEFAULT_LOCK_STALE_MS, 2_000) },
    async (stillLocked) => {
      const read = await readLog(file, 0);
      if (E.isLeft(read)) return read;
      if (read.right.tail > 0) {
        const line = read.right.text.split('\n').length;
        const moved = await setAsideTail(
          file,
          `${file}.set-aside`,
          read.right.consumed,
          line,
          (options.clock ?? Date.now)(),
        );
        if (E.isLeft(moved)) return moved;
      }
      const { records, result } = decide(foldHookRecords(read.right.text));
      if (records.length === 0) return E.right({ result, written: false });
      const safe = stillLocked();
      if (E.isLeft(safe)) return safe;
      const appended = await appendToLog(file, records.map((record) => `${JSON.stringify(record)}\n`).join(''));
      return E.map(() => ({ result, written: true }))(appended);
    },
  );
  if (E.isLeft(locked)) return locked;
  const flushed = locked.right.written ? flushLog(file, true) : E.right(undefined);
  return E.map(() => locked.right.result)(flushed);
};

const onDispatch = async (event: SubagentDispatch, options: HookOptions): Promise<HookOutcome> => {
  const taskId = selectTaskId(event);
  if (O.isNone(taskId))
    return say(`${event.toolName} call without a tool_use_id or a "Task ID:" line: its prompt was not recorded`);
  const settings = sessionOptions(event, options, true);
  const session = await openSession(event.sessionId, settings);
  if (E.isLeft(session)) return failure(`session ${event.sessionId}`, session.left);
  const compiled = await session.right.compileContext({
    taskId: taskId.value,
    taskPrompt: event.prompt,
    ...(options.maxFacts === undefined ? {} : { maxFacts: options.maxFacts }),
    ...(options.maxTokens === undefined ? {} : { maxTokens: options.maxTokens }),
  });
  if (E.isLeft(compiled)) return failure(`the prompt of task ${taskId.value}`, compiled.left);
  const now = (options.clock ?? Date.now)();
  const pending: HookRecord = {
    type: 'pending',
    line: compiled.right.line,
    taskId: taskId.value,
    ...(event.agentType === undefined ? {} : { agentType: event.agentType }),
    ...(event.toolUseId === undefined ? {} : { toolUseId: event.toolUseId }),
    sessionContext: compiled.right.sessionContext,
    at: now,
  };
  const left = await withHookState(event.sessionId, settings, () => ({ records: [pending], result: undefined }));
  return E.isLeft(left) ? failure(`the pending section of task ${taskId.value}`, left.left) : quiet;
};

const onStart = async (event: SubagentStarted, options: HookOptions): Promise<HookOutcome> => {
  const settings = sessionOptions(event, options, false);
  const now = (options.clock ?? Date.now)();
  const claimed = await withHookState(event.sessionId, settings, (state) => {
    const pending = selectPendingFor(state, event.agentType);
    return O.isNone(pending)
      ? { records: [], result: O.none }
      : {
          records: [
            {
              type: 'started' as const,
              line: pending.value.line,
              taskId: pending.value.taskId,
              ...(event.agentId === undefined ? {} : { agentId: event.agentId }),
              ...(event.agentType === undefined ? {} : { agentType: event.agentType }),
              at: now,
            },
          ],
          result: O.some(pending.value),
        };
  });
  if (E.isLeft(claimed)) return failure(`session ${event.sessionId}`, claimed.left);
  if (O.isNone(claimed.right) || claimed.right.value.sessionContext === '') return quiet;
  return {
    output: {
      hookSpecificOutput: { hookEventName: 'SubagentStart', additionalContext: claimed.right.value.sessionContext },
    },
    messages: [],
  };
};

const onStop = async (event: SubagentStopped, options: HookOptions): Promise<HookOutcome> => {
  const message = event.lastAssistantMessage;
  if (message === undefined || !BLOCK_LINE.test(message)) return quiet;
  const settings = sessionOptions(event, options, true);
  const now = (options.clock ?? Date.now)();
  // The task this agent was started for; without a start on record, the oldest pending one of its type.
  const task = await withHookState(event.sessionId, settings, (state) => {
    const running = event.agentId === undefined ? undefined : state.running[event.agentId];
    const pending = selectPendingFor(state, event.agentType);
    const taskId = running ?? (O.isSome(pending) ? pending.value.taskId : (event.agentId ?? 'unknown'));
    const claim: ReadonlyArray<HookRecord> =
      running === undefined && O.isSome(pending)
        ? [
            {
              type: 'started',
              line: pending.value.line,
              taskId,
              ...(event.agentId === undefined ? {} : { agentId: event.agentId }),
              at: now,
            },
          ]
        : [];
    return {
      records: [
        ...claim,
        { type: 'stopped', taskId, ...(event.agentId === undefined ? {} : { agentId: event.agentId }), at: now },
      ],
      result: taskId,
    };
  });
  if (E.isLeft(task)) return failure(`session ${event.sessionId}`, task.left);
  const session = await openSession(event.sessionId, settings);
  if (E.isLeft(session)) return failure(`session ${event.sessionId}`, session.left);
  const role = selectRole(event.agentType, options.reviewerPattern);
  const ingested = await session.right.ingestResult({ role, taskId: task.right, output: message });
  return E.isLeft(ingested)
    ? failure(`the result of ${event.agentType ?? 'an agent'} for task ${task.right} was not recorded`, ingested.left)
    : quiet;
};

const handle = (event: HookEvent, options: HookOptions): Promise<HookOutcome> => {
  switch (event.event) {
    case 'PreToolUse':
      return onDispatch(event, options);
    case 'SubagentStart':
      return onStart(event, options);
    case 'SubagentStop':
      return onStop(event, options);
    case 'ignored':
      return Promise.resolve(quiet);
  }
};

/** Runs one hook event given as the text of its payload. Never throws. */
export const runHook = async (payload: string, options: HookOptions): Promise<HookOutcome> => {
  try {
    const event = parseHookEvent(payload);
    return E.isLeft(event) ? say(event.left) : await handle(event.right, options);
  } catch (error) {
    return say(`unexpected failure: ${describeError(error)}`);
  }
};
