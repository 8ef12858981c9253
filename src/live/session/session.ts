/**
 * A live session: a thin stateful shell over the pure core whose state is its log, a JSON Lines
 * file in the dispatch-history format. Opening a session replays the log into a tracker with
 * the same step `replayHistory` runs; every change is an event appended (and fsynced) under a
 * cross-process lock before the call returns; every call first catches up with what other
 * processes appended. So a session answers exactly what `fact-tracker replay` prints for its
 * log, whoever wrote it.
 */
import { lstatSync, type Stats } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import { describeError } from '../../base/describe.js';
import { sha256HexPrefix } from '../../base/hash.js';
import { exceedsValueDepth } from '../../base/json.js';
import { isRecord } from '../../base/record.js';
import { type HistoryEvent, type HistoryPromptEvent, parseHistoryLine } from '../../core/history/events.js';
import {
  type AdvancedHistoryEvent,
  type AppliedHistoryEvent,
  createHistoryPlayer,
  type HistoryPlayer,
} from '../../core/tracker/player.js';
import { MAX_REPORTED_ERRORS, type ReplayError } from '../../core/replay/replay.js';
import { formatSessionFacts } from '../../core/prompt/format.js';
import { explainRetrieval, retrieveFacts } from '../../core/prompt/retrieve.js';
import type { RetrievalDecision } from '../../core/retrieve/retrieve.js';
import { selectValidFacts } from '../../core/store/selectors.js';
import type { FactStore } from '../../core/store/state.js';
import { asOneRun } from '../../persistent/owner.js';
import { selectLatestPrompts } from '../../core/store/write.js';
import type { TokenCounter } from '../../tokens/estimate.js';
import { parseSessionId } from './id.js';
import { MAX_OUTPUT_DEPTH, MAX_OUTPUT_LENGTH, MAX_PROMPT_LENGTH, MAX_TASK_ID_LENGTH } from './limits.js';
import {
  appendToLog,
  flushLog,
  type LockSettings,
  prepareDirectory,
  readLog,
  setAsideTail,
  withLogLock,
} from './logFile.js';
import type {
  CompileContextInput,
  CompiledContext,
  IngestedResult,
  IngestResultInput,
  InvalidatedFacts,
  Recorded,
  SessionError,
  SessionReport,
  SetAsideLine,
} from './model.js';
import { readSnapshot, type SessionSnapshot, type SnapshotUse, snapshotTail, writeSnapshot } from './snapshot.js';

/** Where session logs live when nothing says otherwise, under the working directory. */
export const DEFAULT_SESSIONS_DIRECTORY = '.fact-tracker/sessions';
/** The extension of a session log. */
const LOG_EXTENSION = '.jsonl';
/** Appended to a log's name for the side file that keeps torn last lines. */
const SET_ASIDE_EXTENSION = '.set-aside';
/** A lock not refreshed for this long is taken over: its holder died. */
export const DEFAULT_LOCK_STALE_MS = 5_000;
/** A writer saves a snapshot once this many lines were read or written since the last one: no process replays more. */
export const SNAPSHOT_EVERY = 64;
/** A reader saves one only past this many (it must take the lock for it). */
const SNAPSHOT_EVERY_READER = 4 * SNAPSHOT_EVERY;
/** Prompts whose queries a warm-up runs: the most recent, whose words the next prompt most likely shares. */
const WARM_QUERIES = 8;
/** How many of the log's most recent events a resent event is recognized among. */
export const DUPLICATE_WINDOW = 1_000;
/** How many of the most recent tasks the last result is remembered for (a result resent without a time). */
const RESULT_TASKS = 1_000;
/** Torn lines this process set aside that the report lists. */
const REPORTED_SET_ASIDE = 100;

/** Where the sessions are and how a session runs. */
export interface SessionOptions {
  /** The folder of the logs (default `.fact-tracker/sessions` under `cwd`). */
  readonly directory?: string;
  /** The working directory (default: the process's). */
  readonly cwd?: string;
  /** Create the session when it has no log yet (default true); when false, `unknown_session`. */
  readonly create?: boolean;
  /** Epoch milliseconds now, for events given without a time (default `Date.now`). */
  readonly clock?: () => number;
  /** Counts the tokens of sections (default: ceil(characters / 4), what `replay` uses by default). */
  readonly countTokens?: TokenCounter;
  /** When a dead writer's lock is taken over (default 5,000 ms; at least 2,000). */
  readonly lockStaleMs?: number;
}

/** The question `explainContext` answers: a prompt, without recording it. */
export type ExplainContextInput = Omit<CompileContextInput, 'at'>;

/** An invalidation to record. */
export interface InvalidateFactInput {
  readonly subject: string;
  readonly relation: string;
  /** Epoch milliseconds (default: the session's clock). */
  readonly at?: number;
}

/** A compaction to record. */
export interface CompactInput {
  readonly maxFacts: number;
  readonly at?: number;
}

/** An open session. No method throws; each catches up with other processes first. */
export interface LiveSession {
  readonly id: string;
  /** The log's path. */
  readonly file: string;
  /** Records a dispatch result and extracts its facts; a result the contract rejects writes nothing. */
  ingestResult(input: IngestResultInput): Promise<E.Either<SessionError, IngestedResult>>;
  /** Records a prompt and returns its `[Session Context]` section. */
  compileContext(input: CompileContextInput): Promise<E.Either<SessionError, CompiledContext>>;
  /** Every fact's score and decision for a prompt, ranked candidates first; records nothing. */
  explainContext(input: ExplainContextInput): Promise<E.Either<SessionError, ReadonlyArray<RetrievalDecision>>>;
  /** Records the closing of the valid facts of (subject, relation). */
  invalidateFact(input: InvalidateFactInput): Promise<E.Either<SessionError, InvalidatedFacts>>;
  /** Records a compaction to `maxFacts` valid facts. */
  compact(input: CompactInput): Promise<E.Either<SessionError, Recorded>>;
  /** The store after every event of the log. */
  snapshot(): Promise<E.Either<SessionError, FactStore>>;
  /** What reading the log met so far. */
  report(): SessionReport;
  /** Whether the session started from the snapshot beside its log (and how far into the log it reached), or why not. */
  snapshotUse(): SnapshotUse;
  /**
   * Runs the queries of the latest recorded prompts once on the state as read, one at a time,
   * until `stop` says so; records nothing and never fails. A first call then finds the query's
   * code compiled and the lists it reads ready: a warm-up for a process that has just opened
   * the session.
   */
  warm(stop?: () => boolean): Promise<void>;
}

/** The sessions folder `options` name, and the folder it must stay inside (the default one must stay in `cwd`). */
export const resolveSessionsDirectory = (
  options: Pick<SessionOptions, 'directory' | 'cwd'> = {},
): { readonly directory: string; readonly within?: string } => {
  const cwd = resolve(options.cwd ?? process.cwd());
  return options.directory === undefined
    ? { directory: join(cwd, ...DEFAULT_SESSIONS_DIRECTORY.split('/')), within: cwd }
    : { directory: resolve(cwd, options.directory) };
};

/** The ids of the sessions in the folder `options` name, sorted. */
export const listSessionIds = async (
  options: Pick<SessionOptions, 'directory' | 'cwd'> = {},
): Promise<ReadonlyArray<string>> => {
  const { directory } = resolveSessionsDirectory(options);
  const names = await readdir(directory).catch(() => [] as string[]);
  return names
    .filter((name) => name.endsWith(LOG_EXTENSION))
    .map((name) => name.slice(0, -LOG_EXTENSION.length))
    .filter((id) => E.isRight(parseSessionId(id)))
    .sort();
};

/** The entry at `path` itself (a link is not followed), or undefined when it cannot be read. */
const lstatQuietly = (path: string): Stats | undefined => {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
};

/**
 * The id of the session whose log changed last in the folder `options` name (ties: the smaller
 * id), or undefined when it holds none. Only regular files count: a symlinked log is not
 * followed. Never throws.
 */
export const latestSessionId = async (
  options: Pick<SessionOptions, 'directory' | 'cwd'> = {},
): Promise<string | undefined> => {
  const { directory } = resolveSessionsDirectory(options);
  let latest: { readonly id: string; readonly at: number } | undefined;
  for (const id of await listSessionIds(options)) {
    // Synchronous, as the log's own calls are: one short call each, where a round trip through
    // the thread pool per log made a folder of 10,000 sessions take 0.4 s.
    const stats = lstatQuietly(join(directory, `${id}${LOG_EXTENSION}`));
    if (stats?.isFile() === true && (latest === undefined || stats.mtimeMs > latest.at))
      latest = { id, at: stats.mtimeMs };
  }
  return latest?.id;
};

/**
 * How many bytes of a session's log a process opening it would replay: those after its
 * snapshot when the snapshot's header says it can be used, else the whole log; undefined when
 * the session has no log (or the id or the folder is not valid). Reads no store, creates
 * nothing, follows no symlinked log. Never throws.
 */
export const bytesToReplay = async (
  sessionId: unknown,
  options: Pick<SessionOptions, 'directory' | 'cwd'> = {},
): Promise<number | undefined> => {
  try {
    const files = await locateSession(sessionId, { ...options, create: false });
    if (E.isLeft(files)) return undefined;
    const stats = lstatQuietly(files.right.file);
    if (stats?.isFile() !== true) return undefined;
    return snapshotTail(files.right.file) ?? stats.size;
  } catch {
    return undefined;
  }
};

const LINE_BREAK = /\r\n|\n|\r/u;

/** One key per distinct event: the same fields at the same time are the same event, wherever the line came from. */
const eventKey = (event: HistoryEvent): string => {
  const { line: _line, ...fields } = event;
  return sha256HexPrefix(JSON.stringify(fields), 16);
};

/** The key of a result's content: its task, role and output, whatever its time. */
const resultKey = (taskId: unknown, role: unknown, output: unknown): string =>
  sha256HexPrefix(JSON.stringify([taskId, role, output]), 16);

const invalidInput = (message: string): SessionError => ({ code: 'invalid_input', message });

/** A map that forgets its oldest entries past `limit` (a key set again becomes the newest). */
const remember = <K, V>(map: Map<K, V>, key: K, value: V, limit: number): void => {
  map.delete(key);
  map.set(key, value);
  if (map.size > limit) map.delete(map.keys().next().value as K);
};

/** A task id the session takes: what facts can carry, the same for prompts and results. */
const checkTaskId = (taskId: unknown): E.Either<SessionError, void> =>
  typeof taskId === 'string' && taskId.length > MAX_TASK_ID_LENGTH
    ? E.left({
        code: 'invalid_field',
        message: `taskId is ${taskId.length} characters long; at most ${MAX_TASK_ID_LENGTH} are allowed`,
      })
    : E.right(undefined);

/** A prompt the session takes: a task id facts can carry and a prompt of at most `MAX_PROMPT_LENGTH` characters. */
const checkPrompt = (input: unknown): E.Either<SessionError, void> => {
  const { taskId, taskPrompt } = isRecord(input) ? input : { taskId: undefined, taskPrompt: undefined };
  if (typeof taskPrompt === 'string' && taskPrompt.length > MAX_PROMPT_LENGTH)
    return E.left({
      code: 'prompt_too_large',
      message: `taskPrompt is ${taskPrompt.length} characters long; at most ${MAX_PROMPT_LENGTH} are taken`,
    });
  return checkTaskId(taskId);
};

/** An output the session takes: text or a result object of at most `MAX_OUTPUT_LENGTH` characters, nested at most `MAX_OUTPUT_DEPTH` deep. */
const checkOutput = (output: unknown): E.Either<SessionError, void> => {
  if (isRecord(output) && exceedsValueDepth(output, MAX_OUTPUT_DEPTH))
    return E.left({ code: 'too_large', message: `output nests arrays and objects more than ${MAX_OUTPUT_DEPTH} deep` });
  const size = typeof output === 'string' ? output.length : isRecord(output) ? JSON.stringify(output).length : 0;
  return size > MAX_OUTPUT_LENGTH
    ? E.left({
        code: 'output_too_large',
        message: `output is ${size} characters; at most ${MAX_OUTPUT_LENGTH} are taken (a dispatch result is a few KB: send the final message, not a transcript)`,
      })
    : E.right(undefined);
};

/** A finite time, or the clock's. */
const timeOf = (at: number | undefined, clock: () => number): E.Either<SessionError, number> => {
  const value = at ?? clock();
  return typeof value === 'number' && Number.isFinite(value)
    ? E.right(value)
    : E.left(invalidInput(`the time must be a finite number of epoch milliseconds, not ${String(value)}`));
};

/** Where a session's files are. */
export interface SessionFiles {
  readonly id: string;
  /** The log. */
  readonly file: string;
  /** Torn last lines set aside. */
  readonly setAsideFile: string;
}

/**
 * Checks `sessionId` and the sessions folder (creating it when `create`) and names the
 * session's files, without reading them: for shells that keep files of their own beside a log.
 */
export const locateSession = async (
  sessionId: unknown,
  options: Pick<SessionOptions, 'directory' | 'cwd' | 'create'> = {},
): Promise<E.Either<SessionError, SessionFiles>> => {
  const id = parseSessionId(sessionId);
  if (E.isLeft(id)) return E.left({ code: 'invalid_session_id', message: id.left });
  const { directory, within } = resolveSessionsDirectory(options);
  const ready = await prepareDirectory(directory, within, options.create !== false);
  if (E.isLeft(ready)) return ready;
  const file = join(directory, `${id.right}${LOG_EXTENSION}`);
  return E.right({ id: id.right, file, setAsideFile: `${file}${SET_ASIDE_EXTENSION}` });
};

/** Opens the session `sessionId` (validated) and replays its log; a torn last line is set aside and reported. */
export const openSession = async (
  sessionId: unknown,
  options: SessionOptions = {},
): Promise<E.Either<SessionError, LiveSession>> => {
  const files = await locateSession(sessionId, options);
  if (E.isLeft(files)) return files;
  try {
    return await open(files.right, options);
  } catch (error) {
    return E.left({ code: 'io', message: `cannot open session ${files.right.id}: ${describeError(error)}` });
  }
};

const open = async (
  { id, file, setAsideFile: sideFile }: SessionFiles,
  options: SessionOptions,
): Promise<E.Either<SessionError, LiveSession>> => {
  const create = options.create !== false;
  const clock = options.clock ?? Date.now;
  const lock: LockSettings = { staleMs: Math.max(options.lockStaleMs ?? DEFAULT_LOCK_STALE_MS, 2_000) };
  const playerOptions = {
    keepEvents: false,
    ...(options.countTokens === undefined ? {} : { countTokens: options.countTokens }),
  };

  // What the log held when last read; all reset when the file was replaced or cut behind our back.
  // Nothing here grows with the log: the store is bounded by its own compaction, the rest by a count.
  let player: HistoryPlayer;
  let offset: number;
  let lines: number;
  let previousAt: number | undefined;
  let identity: string;
  let events: number;
  /** The first rejected lines, and how many more. */
  let errors: ReplayError[];
  let errorsOmitted: number;
  /** The keys of the most recent events, with their lines. */
  let recent: Map<string, number>;
  /** Per recent task, the content key and line of its last result. */
  let results: Map<string, { readonly key: string; readonly line: number }>;
  /** Lines read or written since the state of the snapshot on disk (or since the first line). */
  let sinceSnapshot: number;
  /** The snapshot file is read once per rebuild, before the first line. */
  let snapshotChecked: boolean;
  /** The tracker may hold an event the log does not: rebuild from the file before the next answer. */
  let stale = false;
  let snapshotUse: SnapshotUse = { used: false, reason: 'not read yet' };
  const setAside: SetAsideLine[] = [];

  const reset = (): void => {
    player = createHistoryPlayer(playerOptions);
    offset = 0;
    lines = 0;
    previousAt = undefined;
    identity = '';
    events = 0;
    errors = [];
    errorsOmitted = 0;
    recent = new Map();
    results = new Map();
    sinceSnapshot = 0;
    snapshotChecked = false;
    stale = false;
  };
  reset();

  /** Starts from the snapshot beside the log when it can be trusted; otherwise the log is read from its first line. */
  const resume = (): void => {
    snapshotChecked = true;
    const read = readSnapshot(file);
    if (E.isLeft(read) || read.right === undefined) {
      snapshotUse = { used: false, reason: E.isLeft(read) ? read.left : 'there is no snapshot' };
      return;
    }
    const snapshot = read.right;
    player = createHistoryPlayer({ ...playerOptions, initial: snapshot.store });
    ({ offset, identity, lines, previousAt, events, errorsOmitted } = snapshot);
    errors = [...snapshot.errors];
    recent = new Map(snapshot.recent);
    results = new Map(snapshot.results.map(([taskId, key, line]) => [taskId, { key, line }]));
    sinceSnapshot = 0;
    snapshotUse = { used: true, offset };
  };

  const reject = (error: ReplayError): void => {
    if (errors.length < MAX_REPORTED_ERRORS) errors.push(error);
    else errorsOmitted += 1;
  };

  /** Counts an event that is in the log, as `replay` counts it; one that applied is known by its key from now on. */
  const note = (event: HistoryEvent, applied: AdvancedHistoryEvent): void => {
    lines = event.line;
    previousAt = event.at;
    events += 1;
    sinceSnapshot += 1;
    if (applied.type === 'dispatch' && E.isLeft(applied.ingested)) {
      reject({ line: event.line, code: applied.ingested.left.code, message: applied.ingested.left.message });
      return;
    }
    remember(recent, eventKey(event), event.line, DUPLICATE_WINDOW);
    if (event.type === 'dispatch')
      remember(
        results,
        event.taskId,
        { key: resultKey(event.taskId, event.role, event.output), line: event.line },
        RESULT_TASKS,
      );
  };

  /** Applies complete lines read from the log, numbered and parsed as `parseHistory` does. */
  const applyText = (text: string): void => {
    const pieces = (offset === 0 ? text.replace(/^\uFEFF/u, '') : text).split(LINE_BREAK);
    // The text ends with a line break, so the last piece is the empty rest after it.
    pieces.pop();
    // One in-place run for the batch, as `replayHistory` does: no intermediate snapshot escapes it.
    asOneRun(() => {
      for (const content of pieces) {
        lines += 1;
        if (content.trim() === '') continue;
        const parsed = parseHistoryLine(content, lines, previousAt);
        if (E.isLeft(parsed)) {
          reject(parsed.left);
          sinceSnapshot += 1;
          continue;
        }
        // Prompts in the log were answered when written: catching up only records them.
        note(parsed.right, player.advance(parsed.right));
      }
      return player.tracker.getSnapshot();
    });
  };

  /**
   * Applies what other processes appended since the last read. Holding the lock, a torn last
   * line is a dead writer's and is set aside; without it, it may be a line being written right
   * now, and is left for later.
   */
  const catchUp = async (locked: boolean): Promise<E.Either<SessionError, { exists: boolean; tail: number }>> => {
    if (offset === 0 && !snapshotChecked) resume();
    const read = await readLog(file, offset);
    if (E.isLeft(read)) return read;
    const { exists, identity: current, size, text, consumed, tail } = read.right;
    if (stale || (offset > 0 && (!exists || current !== identity || size < offset))) {
      reset();
      return catchUp(locked);
    }
    identity = current;
    applyText(text);
    offset += consumed;
    if (!locked || tail === 0) return E.right({ exists, tail });
    const moved = await setAsideTail(file, sideFile, offset, lines + 1, clock());
    if (E.isLeft(moved)) return moved;
    if (setAside.length < REPORTED_SET_ASIDE) setAside.push(moved.right);
    return E.right({ exists, tail: 0 });
  };

  /** The state as a snapshot at the end of what was read. */
  const snapshotNow = (): SessionSnapshot => ({
    offset,
    identity,
    lines,
    previousAt,
    events,
    errors,
    errorsOmitted,
    recent: [...recent],
    results: [...results].map(([taskId, { key, line }]) => [taskId, key, line] as const),
    store: player.tracker.getSnapshot(),
  });

  /**
   * Saves the snapshot when enough was read since the last one. Call it holding the lock, caught
   * up. A snapshot that cannot be written is only a cache missed: the call goes on.
   */
  const saveSnapshotIfDue = (threshold: number): void => {
    if (sinceSnapshot < threshold || stale || offset === 0) return;
    if (E.isRight(writeSnapshot(file, snapshotNow()))) sinceSnapshot = 0;
  };

  // Calls of this process take turns, so a catch-up never runs twice over the same bytes.
  let queue: Promise<unknown> = Promise.resolve();
  const serialize = <T>(work: () => Promise<E.Either<SessionError, T>>): Promise<E.Either<SessionError, T>> => {
    const guarded = async (): Promise<E.Either<SessionError, T>> => {
      try {
        return await work();
      } catch (error) {
        stale = true;
        return E.left({ code: 'io', message: `session ${id}: ${describeError(error)}` });
      }
    };
    const run = queue.then(guarded, guarded);
    queue = run;
    return run;
  };

  /**
   * Catches up without the lock, then answers from the tracker. A reader that had a long stretch
   * to read saves a snapshot (under the lock), so the next process does not read it again.
   */
  const read = <T>(answer: () => E.Either<SessionError, T>): Promise<E.Either<SessionError, T>> =>
    serialize(async () => {
      const caught = await catchUp(false);
      if (E.isLeft(caught)) return caught;
      if (sinceSnapshot >= SNAPSHOT_EVERY_READER && caught.right.exists)
        await withLogLock(file, lock, async () =>
          E.map(() => saveSnapshotIfDue(SNAPSHOT_EVERY_READER))(await catchUp(true)),
        );
      return answer();
    });

  /** What `record` hands its answer: where the event is, what applying it did, and the store before it. */
  interface Outcome {
    readonly recorded: Recorded;
    /** Absent for a duplicate: nothing was applied. */
    readonly applied?: AppliedHistoryEvent;
    readonly before: FactStore;
  }

  /** What the locked part of `record` did: the outcome, and whether a line was written to a new or an existing file. */
  interface Written {
    readonly outcome: Outcome;
    /** Absent when nothing was written (a duplicate). */
    readonly created: boolean | undefined;
  }

  /**
   * Appends one event, given as the fields of its line, unless the log holds it already (among
   * its recent events, or, for a result sent without a time, as the last result of its task).
   * Under the lock: catch up, number the line and parse it exactly as `replay` will, apply it,
   * and write it only when it applied (a result the contract rejects leaves the log as it was).
   */
  const record = <T>(
    fields: Readonly<Record<string, unknown>>,
    answer: (outcome: Outcome) => E.Either<SessionError, T>,
    sameResult?: { readonly taskId: string; readonly key: string },
  ): Promise<E.Either<SessionError, T>> =>
    serialize(async () => {
      // Most of what others appended is applied before the lock is taken, so little work waits on it.
      const early = await catchUp(false);
      if (E.isLeft(early)) return early;
      const written = await withLogLock(file, lock, async (stillLocked): Promise<E.Either<SessionError, Written>> => {
        const caught = await catchUp(true);
        if (E.isLeft(caught)) return caught;
        const text = JSON.stringify(fields);
        const parsed = parseHistoryLine(text, lines + 1, previousAt);
        if (E.isLeft(parsed)) return E.left({ code: parsed.left.code, message: parsed.left.message });
        const event = parsed.right;
        const before = player.tracker.getSnapshot();
        const last = sameResult === undefined ? undefined : results.get(sameResult.taskId);
        const earlier = last !== undefined && last.key === sameResult?.key ? last.line : recent.get(eventKey(event));
        if (earlier !== undefined)
          return E.right({ outcome: { recorded: { line: earlier, duplicate: true }, before }, created: undefined });
        const applied = player.apply(event);
        if (applied.type === 'dispatch' && E.isLeft(applied.ingested)) return E.left(applied.ingested.left);
        // The tracker holds the event now: until it is in the file, the file is the truth.
        stale = true;
        const safe = stillLocked();
        if (E.isLeft(safe)) return safe;
        const created = offset === 0;
        const appended = await appendToLog(file, `${text}\n`);
        if (E.isLeft(appended)) return appended;
        offset += appended.right.bytes;
        identity = appended.right.identity;
        note(event, applied);
        stale = false;
        saveSnapshotIfDue(SNAPSHOT_EVERY);
        return E.right({ outcome: { recorded: { line: event.line, duplicate: false }, applied, before }, created });
      });
      if (E.isLeft(written)) return written;
      const { outcome, created } = written.right;
      // Flushed after the lock is released (see `appendToLog`), but before the call returns.
      const flushed = created === undefined ? E.right(undefined) : flushLog(file, created);
      return E.isLeft(flushed) ? flushed : answer(outcome);
    });

  const time = (at: number | undefined): E.Either<SessionError, number> => timeOf(at, clock);

  /** A prompt event from `input`, parsed as a history line (line 0: it is not written), for the query it runs. */
  const promptEvent = (input: ExplainContextInput): E.Either<SessionError, HistoryPromptEvent> =>
    pipe(
      checkPrompt(input),
      E.chain(() =>
        pipe(
          parseHistoryLine(JSON.stringify(promptFields(input, 0)), 0, undefined),
          E.mapLeft((error): SessionError => ({ code: error.code, message: error.message })),
        ),
      ),
      E.map((event) => event as HistoryPromptEvent),
    );

  const session: LiveSession = {
    id,
    file,
    ingestResult: async (input) => {
      const fields = dispatchFields(input);
      if (E.isLeft(fields)) return fields;
      const given = input.at;
      const at = time(given);
      if (E.isLeft(at)) return at;
      return record(
        fields.right.line(at.right),
        ({ recorded, applied }) =>
          E.right({
            ...recorded,
            ...(applied?.type === 'dispatch' && E.isRight(applied.ingested)
              ? applied.ingested.right
              : { facts: [], warnings: [] }),
          }),
        // Without a time, a resend gets the clock's: the same content as the task's last result is what makes it one.
        given === undefined ? fields.right.sameResult : undefined,
      );
    },
    compileContext: async (input) => {
      const at = time(isRecord(input) ? input.at : undefined);
      if (E.isLeft(at)) return at;
      const query = promptEvent(input);
      if (E.isLeft(query)) return query;
      return record(promptFields(input, at.right), ({ recorded, applied, before }) => {
        if (applied?.type === 'prompt')
          return E.right({
            ...recorded,
            sessionContext: applied.compiled.sessionContext,
            facts: applied.compiled.facts,
          });
        // A re-sent prompt is not recorded twice: its section is computed again on the store as it is.
        const facts = retrieveFacts(before, player.queryFor(query.right));
        return E.right({ ...recorded, sessionContext: formatSessionFacts(facts), facts });
      });
    },
    warm: async (stop = () => false) => {
      try {
        const store = player.tracker.getSnapshot();
        for (const { taskId, prompt } of selectLatestPrompts(store, WARM_QUERIES)) {
          // One query at a time, each after a turn of the event loop that reads what has come
          // in: a call that came meanwhile goes first and ends the warm-up.
          await new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)));
          if (stop()) return;
          const query = promptEvent({ taskId, taskPrompt: prompt });
          if (E.isRight(query)) retrieveFacts(store, player.queryFor(query.right));
        }
      } catch {
        // Only a warm-up: the first call runs its query as it would have.
      }
    },
    explainContext: async (input) => {
      const query = promptEvent(input);
      if (E.isLeft(query)) return query;
      return read(() => E.right(explainRetrieval(player.tracker.getSnapshot(), player.queryFor(query.right))));
    },
    invalidateFact: async (input) => {
      const at = time(isRecord(input) ? input.at : undefined);
      if (E.isLeft(at)) return at;
      const { subject, relation } = isRecord(input) ? input : { subject: undefined, relation: undefined };
      return record({ type: 'invalidate', subject, relation, at: at.right }, ({ recorded, before }) => {
        const after = new Set(selectValidFacts(player.tracker.getSnapshot()).map((fact) => fact.id));
        const closed = selectValidFacts(before).filter(
          (fact) => fact.subject === subject && fact.relation === relation && !after.has(fact.id),
        );
        return E.right({ ...recorded, closed });
      });
    },
    compact: async (input) => {
      const at = time(isRecord(input) ? input.at : undefined);
      if (E.isLeft(at)) return at;
      const maxFacts = isRecord(input) ? input.maxFacts : undefined;
      return record({ type: 'compact', maxFacts, at: at.right }, ({ recorded }) => E.right(recorded));
    },
    snapshot: () => read(() => E.right(player.tracker.getSnapshot())),
    report: () => ({
      events,
      errors: [...errors],
      ...(errorsOmitted === 0 ? {} : { errorsOmitted }),
      setAside: [...setAside],
    }),
    snapshotUse: () => snapshotUse,
  };

  // Opening reads the log; a torn last line is set aside under the lock (a writer still busy
  // with it will have finished by the time the lock is ours, and then there is nothing to move).
  const opened = await serialize(async () => {
    const caught = await catchUp(false);
    if (E.isLeft(caught)) return caught;
    if (!caught.right.exists && !create)
      return E.left({ code: 'unknown_session', message: `there is no session ${id} (no log at ${file})` });
    return caught.right.tail > 0 ? withLogLock(file, lock, () => catchUp(true)) : caught;
  });
  return E.map(() => session)(opened);
};

/** The fields of a prompt line, in the order the history format documents them. */
const promptFields = (input: ExplainContextInput, at: number): Readonly<Record<string, unknown>> => {
  const { taskId, taskPrompt, tags, maxFacts, maxTokens } = isRecord(input) ? input : ({} as ExplainContextInput);
  return {
    type: 'prompt',
    taskId,
    taskPrompt,
    ...(tags === undefined ? {} : { tags }),
    ...(maxFacts === undefined ? {} : { maxFacts }),
    ...(maxTokens === undefined ? {} : { maxTokens }),
    at,
  };
};

/** A dispatch to record: the fields of its line at a time, and the task and content key a resend is recognized by. */
interface DispatchFields {
  readonly line: (at: number) => Readonly<Record<string, unknown>>;
  readonly sameResult: { readonly taskId: string; readonly key: string };
}

/** The fields of a dispatch line, in the documented order: raw text goes in `output`, a result object in `result`. */
const dispatchFields = (input: IngestResultInput): E.Either<SessionError, DispatchFields> => {
  if (!isRecord(input)) return E.left(invalidInput('the input is not an object'));
  const { role, taskId, output } = input;
  if (typeof output !== 'string' && !isRecord(output))
    return E.left(invalidInput('output must be the raw agent text (a string) or the result object'));
  const limited = pipe(
    checkTaskId(taskId),
    E.chain(() => checkOutput(output)),
  );
  if (E.isLeft(limited)) return limited;
  return E.right({
    line: (at) => ({ type: 'dispatch', role, taskId, at, [typeof output === 'string' ? 'output' : 'result']: output }),
    sameResult: { taskId, key: resultKey(taskId, role, output) },
  });
};
