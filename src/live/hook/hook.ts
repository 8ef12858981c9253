/**
 * `fact-tracker hook`: one hook event of Claude Code or Codex in, at most one JSON object out.
 * The shell of the hook's transition (transition.ts): under the lock of its session's hooks
 * file it reads the state, runs the transition on the event and the session's answers, appends
 * the records it returned (the record of a prompt's call and the note of a result before the
 * session writes their line) and prints its output. A memory tool must never block the user's
 * work, so nothing here fails the hook: every problem becomes a line for standard error, and
 * the ones the user should know about also a `systemMessage`; the agent carries on.
 */
import { existsSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import * as O from 'fp-ts/lib/Option.js';
import type { Failure } from '../../base/failure.js';
import { collapseWhitespace } from '../../base/text.js';
import type { SectionLayout } from '../../core/retrieve/defaults.js';
import type { TokenCounter } from '../../tokens/estimate.js';
import type { TokenizerName } from '../../tokens/names.js';
import { appendToLog, flushLog, logLines, readLog, setAsideTail, withLogLock } from '../session/logFile.js';
import { nameId } from '../session/id.js';
import type { SessionError } from '../session/model.js';
import type { SessionStore } from '../session/store.js';
import { resolveProjectDirectory } from '../session/project.js';
import {
  DEFAULT_LOCK_STALE_MS,
  type LiveSession,
  locateSession,
  openSession,
  type SessionOptions,
} from '../session/session.js';
import { selectCompaction } from './compact.js';
import { needsNoFiles } from './decide.js';
import { removeHooksFileLeftovers, writeHooksFile } from './file.js';
import {
  type ActiveHookEvent,
  type CompileEffect,
  DEFAULT_PENDING_TIMEOUT_MS,
  DEFAULT_REVIEWER_PATTERN,
  type HookEffect,
  type HookInput,
  type HookSettings,
  type HookStep,
  type LogEvents,
  type SayEffect,
  type SessionAnswer,
} from './model.js';
import { parseHookEvent } from './payload.js';
import { type DispatchRecord, formatHookRecords, type HookRecord, hookRecordsOf } from './records.js';
import { selectUnwritten } from './select.js';
import { applyHookRecords, type DispatchState, foldHookRecords, type HookState } from './state.js';
import { dispatchRecordOf, hookTransition, missedRecord, withdrawnRecord } from './transition.js';

/** Appended to a log's name for the file the hook events of its session share. */
export const HOOKS_EXTENSION = '.hooks';

/** How the hook runs. */
export interface HookOptions {
  /**
   * The working directory when the payload names none; absent when the process has none (it
   * was deleted): an event that names none then fails with `io`, unless the agent names the
   * project or `directory` is absolute.
   */
  readonly cwd?: string;
  /** The project directory the agent names (Claude Code's `CLAUDE_PROJECT_DIR`). */
  readonly projectDir?: string;
  /** The sessions folder, relative to the project (default `.fact-tracker/sessions`): the logs, and the hook's own files beside them. */
  readonly directory?: string;
  /**
   * Where the session logs are kept when not in that folder (a database the MCP servers and
   * hooks of other machines share); the hook's own files stay in the folder, which is this
   * machine's. The caller closes it.
   */
  readonly store?: SessionStore;
  readonly reviewerPattern?: RegExp;
  /** Facts and token budget of a section (defaults `DEFAULT_MAX_FACTS` 60 and `DEFAULT_MAX_TOKENS` 500, as in a history). */
  readonly maxFacts?: number;
  readonly maxTokens?: number;
  /** The sections' layout (default `lines`: one line per fact), kept in each prompt's line. */
  readonly layout?: SectionLayout;
  readonly countTokens?: TokenCounter;
  /** The name of `countTokens` (`o200k`), recorded in each prompt's line (see `SessionOptions`). */
  readonly tokenizer?: TokenizerName;
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

/** A failure as one line: its code first. */
const line = (said: Failure): string => `${said.code}: ${said.message}`;

/** A problem for stderr and for the user. */
export const alert = (said: Failure): HookOutcome => ({ messages: [line(said)], notices: [line(said)] });

const sessionFailure = (what: string, error: SessionError): Failure => ({
  code: error.code,
  message: `${what}: ${error.message}`,
});

/**
 * The project of an event, as `resolveProjectDirectory` finds it; none is needed (undefined)
 * when the sessions folder is absolute, since it holds the logs and the hook's own files
 * whatever the project, so a hook run from a deleted directory still finds them.
 */
const projectOf = (
  event: { readonly cwd?: string },
  options: HookOptions,
): E.Either<Failure<'io'>, string | undefined> => {
  if (options.directory !== undefined && isAbsolute(options.directory)) return E.right(undefined);
  // The payload's working directory is where the agent runs; a relative one means nothing here.
  const cwd = event.cwd !== undefined && isAbsolute(event.cwd) ? event.cwd : options.cwd;
  return resolveProjectDirectory({
    ...(options.projectDir === undefined ? {} : { projectDir: options.projectDir }),
    ...(cwd === undefined ? {} : { cwd }),
  });
};

/**
 * Where the sessions of an event are: under its project, whatever directory the agent is in
 * now, or in an absolute folder; or why there is none (no directory to find it from).
 */
const sessionOptions = (
  event: { readonly cwd?: string },
  options: HookOptions,
): E.Either<Failure<'io'>, Omit<SessionOptions, 'create'>> =>
  E.map((project: string | undefined) => ({
    ...(project === undefined ? {} : { cwd: project }),
    ...(options.directory === undefined ? {} : { directory: options.directory }),
    ...(options.store === undefined ? {} : { store: options.store }),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.countTokens === undefined ? {} : { countTokens: options.countTokens }),
    ...(options.tokenizer === undefined ? {} : { tokenizer: options.tokenizer }),
    ...(options.lockStaleMs === undefined ? {} : { lockStaleMs: options.lockStaleMs }),
  }))(projectOf(event, options));

const settingsOf = (options: HookOptions): HookSettings => ({
  timeoutMs: options.pendingTimeoutMs ?? DEFAULT_PENDING_TIMEOUT_MS,
  reviewerPattern: options.reviewerPattern ?? DEFAULT_REVIEWER_PATTERN,
  ...(options.maxFacts === undefined ? {} : { maxFacts: options.maxFacts }),
  ...(options.maxTokens === undefined ? {} : { maxTokens: options.maxTokens }),
  ...(options.layout === undefined ? {} : { layout: options.layout }),
});

/**
 * The session, opened on first use, its clock set to `at` for the call about to be made: it
 * stamps the event no earlier than just after the log's last, as it does every time its clock
 * gives, whatever this machine's clock says against the other writers'.
 */
type SessionSource = (at: number) => Promise<E.Either<SessionError, LiveSession>>;

/** What the session answers a call made at `at`, or which step failed. */
const ask = async <A>(
  session: SessionSource,
  at: number,
  call: (live: LiveSession) => Promise<E.Either<SessionError, A>>,
): Promise<SessionAnswer<A>> => {
  const opened = await session(at);
  if (E.isLeft(opened)) return E.left({ step: 'open', failure: opened.left });
  const answered = await call(opened.right);
  return E.isLeft(answered) ? E.left({ step: 'call', failure: answered.left }) : E.right(answered.right);
};

/**
 * Appends records to the hooks file before the session writes the line they are about, so that
 * a file that cannot take them refuses the line (see runLocked).
 */
type Note = (records: ReadonlyArray<HookRecord>) => Promise<E.Either<SessionError, unknown>>;

/** The transition's next input, and the records appended on the way (`Note`) that the state holds too. */
interface Answered {
  readonly input: HookInput;
  readonly noted: ReadonlyArray<HookRecord>;
}

/**
 * Records a prompt, the record of its call appended to the hooks file first, with the line and
 * section as planned: a file that cannot take it refuses the prompt, so the log never holds a
 * section its subagent was not given. A plan made anew (another writer appended first) withdraws
 * the record of the plan before; the transition withdraws one whose line was not written.
 */
const compile = async (effect: CompileEffect, session: SessionSource, note: Note, now: number): Promise<Answered> => {
  const { at, ...request } = effect.request;
  const written: HookRecord[] = [];
  let noted: DispatchRecord | undefined;
  let unnoted = false;
  const accept = async (section: { readonly line: number; readonly key: string; readonly sessionContext: string }) => {
    const record = dispatchRecordOf(effect, section);
    const records = noted === undefined ? [record] : [withdrawnRecord(noted, now), record];
    const appended = await note(records);
    unnoted = E.isLeft(appended);
    if (E.isRight(appended)) {
      written.push(...records);
      noted = record;
    }
    return appended;
  };
  const compiled = await ask(session, at, (live) => live.compileContext(request, { accept }));
  return {
    input: {
      type: 'compiled',
      effect,
      answer:
        E.isLeft(compiled) && unnoted
          ? E.left({ step: 'note', failure: compiled.left.failure })
          : E.map(({ line, sessionContext }: { line: number; sessionContext: string }) => ({ line, sessionContext }))(
              compiled,
            ),
      ...(noted === undefined ? {} : { noted }),
    },
    noted: written,
  };
};

/** Runs a session effect and gives its answer back as the transition's next input. */
const answer = async (
  effect: Exclude<HookEffect, SayEffect>,
  session: SessionSource,
  note: Note,
  now: number,
): Promise<Answered> => {
  if (effect.type === 'compile') return compile(effect, session, note, now);
  // The request's time is the session's clock (`SessionSource`): a result sent again with the
  // time its line was about to be written with is known by that line, and by nothing else, so
  // another dispatch's result of the same text is recorded too (but one an older release noted).
  const { at, ...request } = effect.request;
  let sentAt: number | undefined;
  let unnoted = false;
  const noteSent = async ({ at: planned }: { readonly at: number }) => {
    const noted = await note([missedRecord(effect, true, now, planned)]);
    if (E.isRight(noted)) sentAt = planned;
    unnoted = E.isLeft(noted);
    return noted;
  };
  const sent = await ask(session, at, (live) =>
    live.ingestResult(request, { byContent: effect.byContent === true, accept: noteSent }),
  );
  // The last event that brings the result sends it without the note rather than lose it, at its
  // own time, not moved: a later send of the same text at that time (its kept stop, once past
  // its wait, where the hooks file takes records again) is known as that line.
  const ingested =
    E.isLeft(sent) && unnoted && effect.final === true
      ? await ask(session, at, (live) => live.ingestResult({ ...request, at }))
      : sent;
  return {
    input: {
      type: 'ingested',
      effect,
      answer: E.map(({ warnings }: { warnings: ReadonlyArray<string> }) => ({ warnings }))(ingested),
      ...(sentAt === undefined ? {} : { sentAt }),
    },
    noted: [],
  };
};

/**
 * What the log holds on the lines of the dispatches not known to be written (`selectUnwritten`):
 * the key of each event there, among the log's last 1,000 (the session's `recent`).
 */
const logEventsOn = (
  unwritten: ReadonlyArray<DispatchState>,
  session: SessionSource,
  now: number,
): Promise<SessionAnswer<LogEvents>> => {
  const lines = new Set(unwritten.map(({ record }) => record.line));
  return ask(session, now, async (live) =>
    E.map(() => live.state().recent.filter(([, line]) => lines.has(line)))(await live.snapshot()),
  );
};

/** What one event did: the state after, the records to append, what to tell, and the output. */
interface Turn {
  readonly state: HookState;
  readonly records: ReadonlyArray<HookRecord>;
  readonly said: ReadonlyArray<SayEffect>;
  readonly output?: Readonly<Record<string, unknown>>;
  /** True when the output may be printed only where the hooks file took `records` (`HookStep`). */
  readonly outputNeedsRecords: boolean;
}

/**
 * Runs the transition on `event`, then on each session answer its effects ask for, in order:
 * the records and the lines to tell come out in the order the decisions were made. First, where
 * a process was killed between the record of a call and its prompt's line, what the log holds on
 * that line settles the record, appended at once: a record the event's call appends for the same
 * key then follows it.
 */
const runTurn = async (
  read: HookState,
  event: ActiveHookEvent,
  now: number,
  settings: HookSettings,
  session: SessionSource,
  note: Note,
): Promise<Turn> => {
  const records: HookRecord[] = [];
  const said: SayEffect[] = [];
  let state = read;
  let output: Readonly<Record<string, unknown>> | undefined;
  let outputNeedsRecords = false;
  const take = async (step: HookStep): Promise<void> => {
    state = step.state;
    records.push(...step.records);
    if (step.output !== undefined) {
      output = step.output;
      outputNeedsRecords = step.outputNeedsRecords === true;
    }
    for (const effect of step.effects)
      if (effect.type === 'say') said.push(effect);
      else {
        const answered = await answer(effect, session, note, now);
        state = applyHookRecords(state, answered.noted);
        await take(hookTransition(state, answered.input, now, settings));
      }
  };
  const unwritten = selectUnwritten(read);
  if (unwritten.length > 0) {
    const answer = await logEventsOn(unwritten, session, now);
    const checked = hookTransition(read, { type: 'checked', sessionId: event.sessionId, answer }, now, settings);
    // Where the file does not take them now, they go with the event's, as any other record.
    if (checked.records.length > 0 && E.isLeft(await note(checked.records))) records.push(...checked.records);
    state = checked.state;
    for (const effect of checked.effects) if (effect.type === 'say') said.push(effect);
  }
  await take(hookTransition(state, { type: 'event', event }, now, settings));
  return { state, records, said, outputNeedsRecords, ...(output === undefined ? {} : { output }) };
};

/**
 * What a turn under the lock leaves: the output to print, whether the hooks file was written (to
 * flush it), and why it did not take the turn's records, where the output stands without them.
 */
interface Locked {
  readonly output: Readonly<Record<string, unknown>> | undefined;
  readonly written: boolean;
  readonly refused?: SessionError;
}

/**
 * Runs one event under the lock of its session's hooks file: reads the state, runs the turn,
 * appends the records it made (some before the session writes the line they are about: `Note`)
 * and flushes them, and compacts the file when it has grown well
 * past what it must keep. The hook commands of parallel subagents run at once; the lock makes
 * each of them see the others' records.
 */
const runLocked = async (event: ActiveHookEvent, options: HookOptions): Promise<HookOutcome> => {
  const now = (options.clock ?? Date.now)();
  const about = `session ${nameId(event.sessionId)}`;
  const where = sessionOptions(event, options);
  if (E.isLeft(where)) return alert(sessionFailure(about, where.left));
  const located = await locateSession(event.sessionId, { ...where.right, create: false });
  if (E.isLeft(located)) return alert(sessionFailure(about, located.left));
  const file = `${located.right.file}${HOOKS_EXTENSION}`;
  if (needsNoFiles(event) && !existsSync(file)) return quiet;
  const settings: SessionOptions = { ...where.right, create: true };
  const ready = await locateSession(event.sessionId, settings);
  if (E.isLeft(ready)) return alert(sessionFailure(about, ready.left));
  const staleMs = Math.max(options.lockStaleMs ?? DEFAULT_LOCK_STALE_MS, 2_000);
  let opened: Promise<E.Either<SessionError, LiveSession>> | undefined;
  let requestAt = now;
  const session: SessionSource = (at) => {
    requestAt = at;
    return (opened ??= openSession(event.sessionId, { ...settings, clock: () => requestAt }));
  };
  const messages: string[] = [];
  const notices: string[] = [];
  const locked = await withLogLock(file, { staleMs }, async (stillLocked): Promise<E.Either<SessionError, Locked>> => {
    // A compaction killed halfway leaves its temporary file: no other turn is busy under the lock.
    removeHooksFileLeftovers(file, now, staleMs);
    const read = await readLog(file, 0);
    if (E.isLeft(read)) return read;
    // Its lines are read as a log's, a piece at a time, never as one string (the engine makes none
    // past 512 MiB), so a file damaged past that is read too: a line that is no record is skipped.
    const lines = logLines(read.right.bytes, true);
    if (read.right.tail > 0) {
      const moved = await setAsideTail(file, `${file}.set-aside`, read.right.consumed, lines.length + 1, now);
      if (E.isLeft(moved)) return moved;
    }
    // A result is noted as sent, with the time the session is about to write its line with,
    // before the session writes it: should its mark not reach this file after the line reached
    // the log (a disk full between the two), the agent's next stop sends it again with that
    // time, which the session knows as that line, rather than record it twice, whatever was
    // recorded since. A file that cannot take the note gets no result sent, but at the last event
    // that brings it (`answer`). A prompt's call is recorded here before its line too (`compile`).
    let noted = false;
    const note: Note = async (records) => {
      const safe = stillLocked();
      const appended = E.isLeft(safe) ? safe : await appendToLog(file, formatHookRecords(records));
      noted ||= E.isRight(appended);
      return appended;
    };
    const turn = await runTurn(foldHookRecords(hookRecordsOf(lines)), event, now, settingsOf(options), session, note);
    for (const { failure: said, notice } of turn.said) {
      messages.push(line(said));
      if (notice) notices.push(line(said));
    }
    if (turn.records.length === 0) return E.right({ output: turn.output, written: noted });
    const safe = stillLocked();
    const appended = E.isLeft(safe) ? safe : await appendToLog(file, formatHookRecords(turn.records));
    // The records the file could not take are lost, but not an output that stands without them:
    // a rewrite or a section its call named the agent for, whose prompt's line the log holds.
    if (E.isLeft(appended))
      return turn.output === undefined || turn.outputNeedsRecords
        ? appended
        : E.right({ output: turn.output, written: noted, refused: appended.left });
    const compacted = selectCompaction(turn.state, now);
    if (O.isNone(compacted)) return E.right({ output: turn.output, written: true });
    const rewritten = writeHooksFile(file, formatHookRecords(compacted.value));
    if (E.isLeft(rewritten)) messages.push(line(sessionFailure('compacting the hooks file', rewritten.left)));
    return E.right({ output: turn.output, written: false });
  });
  const refused = E.isLeft(locked) ? locked.left : locked.right.refused;
  if (refused !== undefined) {
    const said = line(sessionFailure(about, refused));
    messages.push(said);
    notices.push(said);
  }
  if (E.isLeft(locked)) return { messages, notices };
  if (locked.right.written) {
    const flushed = flushLog(file, true);
    if (E.isLeft(flushed)) messages.push(line(sessionFailure(about, flushed.left)));
  }
  return { ...(locked.right.output === undefined ? {} : { output: locked.right.output }), messages, notices };
};

/**
 * Runs one hook event given as the text of its payload. Every expected failure is in the
 * outcome; an exception is a bug, for the process's boundary (`fact-tracker hook`) to report.
 */
export const runHook = async (payload: string, options: HookOptions): Promise<HookOutcome> => {
  const event = parseHookEvent(payload);
  if (E.isLeft(event)) return alert(event.left);
  if (event.right.event === 'ignored') return quiet;
  return runLocked(event.right, options);
};

/** The JSON object the hook prints: the event's own output, and the notices as a `systemMessage` the user sees. */
export const hookOutput = (outcome: HookOutcome): Readonly<Record<string, unknown>> | undefined =>
  outcome.notices.length === 0
    ? outcome.output
    : { ...outcome.output, systemMessage: `fact-tracker: ${outcome.notices.map(collapseWhitespace).join(' | ')}` };
