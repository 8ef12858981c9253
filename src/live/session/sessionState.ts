/**
 * A live session as a value: the tracker's state after the lines of its log read so far, and
 * what the session adds to it (where in the log it is, the rejected lines it reports, and the
 * keys that recognize an event sent twice). Two pure functions move it: `applyLogLine` for a
 * line read from the log (a prompt there was answered when written: it is only recorded), and
 * `planEvent` for an event to record, which says whether to append it and what it answers. The
 * session shell only reads and appends lines; `replay` of the same log folds the same tracker
 * transition, so both give the same sections and facts.
 */
import * as E from 'fp-ts/lib/Either.js';
import { canonicalJson } from '../../base/canonicalJson.js';
import { describeError, kindOf, refuseArgument } from '../../base/describe.js';
import { sha256HexPrefix } from '../../base/hash.js';
import { timeAfter } from '../../base/time.js';
import { asOneRun } from '../../persistent/owner.js';
import { type Extraction, normalizeTaskId } from '../../core/extract/extractor.js';
import type { SessionFact } from '../../core/fact.js';
import { type HistoryEvent, type HistoryPromptEvent, parseHistoryLine } from '../../core/history/events.js';
import { MAX_REPORTED_ERRORS, type ReplayError } from '../../core/replay/replay.js';
import type { CompactionReport } from '../../core/store/compact.js';
import { type FactStore, normalizeMaxValidFacts, withLastEventAt } from '../../core/store/state.js';
import { factStoreProblem } from '../../core/store/storeShape.js';
import { reviveFileRecords, type StoredFileRecord, storedFileRecords } from '../../core/search/searchIndex.js';
import type { PersistentMap } from '../../persistent/persistentMap.js';
import { initialTrackerState, type TrackerState, trackerSettings } from '../../core/tracker/state.js';
import {
  recordPrompt,
  selectSessionContext,
  type TrackerEnvironment,
  type TrackerOutput,
  trackerTransition,
} from '../../core/tracker/transition.js';
import type { SessionError } from './model.js';
import { invalidSnapshot, type SnapshotFailure } from './store.js';

/** How many of the log's most recent events a resent event is recognized among. */
export const DUPLICATE_WINDOW = 1_000;
/** How many of the most recent tasks the last result is remembered for (a result resent without a time). */
export const RESULT_TASKS = 1_000;

/** A session's state after the first `lines` lines of its log. Plain, frozen data. */
export interface SessionState {
  readonly tracker: TrackerState;
  /** Lines read (blank ones included), as `replay` numbers them. */
  readonly lines: number;
  /** The time of the last event, which a line without `at` follows by one second. */
  readonly previousAt: number | undefined;
  /** Events applied, rejected dispatches included, as `replay` counts them. */
  readonly events: number;
  /** The first rejected lines (`MAX_REPORTED_ERRORS`), and how many more there were. */
  readonly errors: ReadonlyArray<ReplayError>;
  readonly errorsOmitted: number;
  /** The keys of the most recent events and their lines, oldest first: what a resent event is recognized by. */
  readonly recent: ReadonlyArray<readonly [key: string, line: number]>;
  /** The content key and line of the last result recorded for each of the most recent tasks, oldest first. */
  readonly results: ReadonlyArray<readonly [taskId: string, key: string, line: number]>;
}

/** A session before its first line: an empty store, or `store`. */
export const initialSessionState = (store?: FactStore): SessionState =>
  Object.freeze({
    tracker: initialTrackerState(store === undefined ? {} : { store }),
    lines: 0,
    previousAt: undefined,
    events: 0,
    errors: Object.freeze([]),
    errorsOmitted: 0,
    recent: Object.freeze([]),
    results: Object.freeze([]),
  });

/**
 * One key per distinct event: the same fields at the same time are the same event, wherever the
 * line came from and in whatever order its objects' members were written (a client that
 * re-serializes a result sends the same result).
 */
export const eventKey = (event: HistoryEvent): string => {
  const { line: _line, ...fields } = event;
  return sha256HexPrefix(canonicalJson(fields), 16);
};

/** The key of a result's content: its task, role and output, whatever its time and the order of its members. */
export const resultKey = (taskId: unknown, role: unknown, output: unknown): string =>
  sha256HexPrefix(canonicalJson([taskId, role, output]), 16);

/** `list` with `entry` last, any entry of the same key dropped, and at most `limit` entries. */
const remember = <T extends readonly [string, ...unknown[]]>(
  list: ReadonlyArray<T>,
  entry: T,
  limit: number,
): ReadonlyArray<T> => {
  const kept: T[] = [];
  for (let i = 0; i < list.length; i += 1) if (list[i]![0] !== entry[0]) kept.push(list[i]!);
  kept.push(Object.freeze(entry));
  return Object.freeze(kept.length > limit ? kept.slice(kept.length - limit) : kept);
};

/**
 * The first entry of `list` whose key (its first element) is `key`. A state's lists are frozen,
 * and the engine runs `filter`, `find` and `some` over a frozen array off their fast paths, many
 * times slower than a walk by index (see persistent/sliceable.ts), so they are walked by index
 * here: every event recorded reads two lists of up to 1,000 entries, and writes them.
 */
const entryOf = <T extends readonly [string, ...unknown[]]>(list: ReadonlyArray<T>, key: string): T | undefined => {
  for (let i = 0; i < list.length; i += 1) if (list[i]![0] === key) return list[i];
  return undefined;
};

/**
 * The session's store as a replay of its log hands it out: recording its last event's time, so
 * a history that resumes it (`replayHistory`'s `initial`) goes on as the log itself does.
 */
export const selectSessionStore = (state: SessionState): FactStore =>
  state.previousAt === undefined ? state.tracker.store : withLastEventAt(state.tracker.store, state.previousAt);

const withError = (state: SessionState, error: ReplayError): Pick<SessionState, 'errors' | 'errorsOmitted'> =>
  state.errors.length < MAX_REPORTED_ERRORS
    ? { errors: Object.freeze([...state.errors, Object.freeze(error)]), errorsOmitted: state.errorsOmitted }
    : { errors: state.errors, errorsOmitted: state.errorsOmitted + 1 };

/** The state after an event of the log at its line, as `replay` counts it: a rejected dispatch is an error, anything else is known by its key. */
const noteEvent = (
  state: SessionState,
  tracker: TrackerState,
  event: HistoryEvent,
  rejection: { readonly code: ReplayError['code']; readonly message: string } | undefined,
): SessionState => {
  const counted = { tracker, lines: event.line, previousAt: event.at, events: state.events + 1 };
  if (rejection !== undefined)
    return Object.freeze({ ...state, ...counted, ...withError(state, { line: event.line, ...rejection }) });
  return Object.freeze({
    ...state,
    ...counted,
    recent: remember(state.recent, [eventKey(event), event.line] as const, DUPLICATE_WINDOW),
    results:
      event.type === 'dispatch'
        ? remember(
            state.results,
            [event.taskId, resultKey(event.taskId, event.role, event.output), event.line] as const,
            RESULT_TASKS,
          )
        : state.results,
  });
};

/**
 * `state`, refused with a TypeError when it is not a session state (null from an unset
 * variable, a tracker state): a programmer's mistake, said plainly rather than deep inside.
 */
const checkedState = (state: SessionState): SessionState =>
  typeof state === 'object' && state !== null && typeof state.tracker === 'object' && state.tracker !== null
    ? state
    : refuseArgument('the state', state, 'a session state (initialSessionState makes one)');

/** An environment that is none (null) reads as none, as options do. */
const environmentOf = (env: TrackerEnvironment): TrackerEnvironment =>
  typeof env === 'object' && env !== null ? env : {};

/**
 * The state after one line read from the log (blank lines are only counted): parsed as
 * `replay` parses it, and applied as `trackerTransition` applies it, except that a prompt,
 * answered when it was written, is only recorded.
 */
export const applyLogLine = (
  state: SessionState,
  line: number,
  text: string,
  env: TrackerEnvironment = {},
): SessionState => {
  checkedState(state);
  if (typeof line !== 'number') refuseArgument('the line number', line, 'a number');
  if (typeof text !== 'string') refuseArgument('the line', text, 'a string');
  if (text.trim() === '') return Object.freeze({ ...state, lines: line });
  const parsed = parseHistoryLine(text, line, state.previousAt);
  if (E.isLeft(parsed)) return Object.freeze({ ...state, lines: line, ...withError(state, parsed.left) });
  const event = parsed.right;
  if (event.type === 'prompt') {
    // A prompt whose task no record can hold is a rejected line, as in a replay of the log.
    const taskId = normalizeTaskId(event.taskId);
    if (E.isLeft(taskId))
      return noteEvent(state, state.tracker, event, { code: 'invalid_input', message: taskId.left });
    return noteEvent(state, recordPrompt(state.tracker, event)[0], event, undefined);
  }
  const [tracker, , output] = trackerTransition(state.tracker, event, environmentOf(env));
  const rejection = output.type === 'dispatch' && E.isLeft(output.ingested) ? output.ingested.left : undefined;
  return noteEvent(state, tracker, event, rejection);
};

/** The state after the log's lines up to line `position`, the blank ones after the last listed line included. */
export const applyLogLines = (
  state: SessionState,
  lines: ReadonlyArray<{ readonly line: number; readonly text: string }>,
  position: number,
  env: TrackerEnvironment = {},
): SessionState => {
  checkedState(state);
  if (!Array.isArray(lines)) refuseArgument('lines', lines, 'an array of lines ({ line, text })');
  if (typeof position !== 'number') refuseArgument('the position', position, 'a number (the last line read)');
  // One write run for the batch, as a replay writes: no state between two lines escapes it.
  return asOneRun(() => {
    let next = state;
    for (let index = 0; index < lines.length; index += 1) {
      const entry: unknown = lines[index];
      // A hole or a null among the lines is named by its place, not failed on deep inside.
      if (typeof entry !== 'object' || entry === null)
        refuseArgument(`lines[${index}]`, entry, 'a line ({ line, text })');
      const { line, text } = entry as { readonly line: number; readonly text: string };
      next = applyLogLine(next, line, text, env);
    }
    return next.lines === position ? next : Object.freeze({ ...next, lines: position });
  });
};

/** What recording an event answers: where it is in the log, and what it did. */
export interface RecordedEvent {
  /** The line of the log that holds the event. */
  readonly line: number;
  /** True when the log held this very event already: nothing is to be written. */
  readonly duplicate: boolean;
  /** What the event answered; nothing for a duplicate (a prompt's is its line's section: `selectSectionAtLine`). */
  readonly output?: TrackerOutput;
}

/** What to do with an event to record: append its line and take the next state, or nothing (a duplicate). */
export type EventPlan =
  | {
      readonly kind: 'append';
      readonly text: string;
      /** The event's key: a read that finds it on `recorded.line` finds this very event (`holdsEvent`). */
      readonly key: string;
      /** The time its line is written with: the clock's, or moved past the log's last event. */
      readonly at: number;
      readonly next: SessionState;
      readonly recorded: RecordedEvent;
    }
  | {
      readonly kind: 'duplicate';
      readonly recorded: RecordedEvent;
      /** The event's key, as on the line that holds it. */
      readonly key: string;
      /** For a prompt, the event as its line holds it: its section is that line's (`selectSectionAtLine`). */
      readonly prompt?: HistoryPromptEvent;
    };

/** A result to recognize when it is sent again without a time: its task and content key. */
export interface SameResult {
  readonly taskId: string;
  readonly key: string;
}

/** The line `fields` are written as, or why JSON cannot hold them (a BigInt, a toJSON or a getter that throws): the caller's input. */
const lineText = (fields: Readonly<Record<string, unknown>>): E.Either<SessionError, string> => {
  try {
    const text: unknown = JSON.stringify(fields);
    if (typeof text === 'string') return E.right(text);
  } catch (error) {
    return E.left({
      code: 'invalid_input',
      message: `the event cannot be written to the log as JSON: ${describeError(error)}`,
    });
  }
  return E.left({ code: 'invalid_input', message: `the event is ${kindOf(fields)}, not fields of a line` });
};

/** An event to record, parsed as the line after the state's last, with its text and key. */
interface NextEvent {
  readonly text: string;
  readonly event: HistoryEvent;
  readonly key: string;
}

/** The event whose line is `fields`, parsed exactly as `replay` will parse it after the state's last line. */
const nextEvent = (
  state: SessionState,
  fields: Readonly<Record<string, unknown>>,
): E.Either<SessionError, NextEvent> => {
  const written = lineText(fields);
  if (E.isLeft(written)) return written;
  const text = written.right;
  const parsed = parseHistoryLine(text, state.lines + 1, state.previousAt);
  if (E.isLeft(parsed)) return E.left({ code: parsed.left.code, message: parsed.left.message });
  return E.right({ text, event: parsed.right, key: eventKey(parsed.right) });
};

/**
 * The plan of an event the log holds already, or none: among its recent events, or, for a result
 * sent without a time, as the last result of its task.
 */
const duplicatePlan = (
  state: SessionState,
  { event, key }: NextEvent,
  sameResult: SameResult | undefined,
): EventPlan | undefined => {
  const last = sameResult === undefined || sameResult === null ? undefined : entryOf(state.results, sameResult.taskId);
  const earlier = last !== undefined && last[1] === sameResult?.key ? last[2] : entryOf(state.recent, key)?.[1];
  if (earlier === undefined) return undefined;
  return {
    kind: 'duplicate',
    recorded: { line: earlier, duplicate: true },
    key,
    // A prompt sent again is not recorded twice, and answers the section of its line, not one of the state as it is.
    ...(event.type === 'prompt' ? { prompt: Object.freeze({ ...event, line: earlier }) } : {}),
  };
};

/** The plan of appending `next` after the state's last line; a dispatch result the contract rejects is a Left. */
const appendPlan = (
  state: SessionState,
  { text, event, key }: NextEvent,
  env: TrackerEnvironment,
): E.Either<SessionError, EventPlan> => {
  const [tracker, , output] = trackerTransition(state.tracker, event, environmentOf(env));
  if (output.type === 'dispatch' && E.isLeft(output.ingested)) return E.left(output.ingested.left);
  return E.right({
    kind: 'append',
    text,
    key,
    at: event.at,
    next: noteEvent(state, tracker, event, undefined),
    recorded: { line: state.lines + 1, duplicate: false, output },
  });
};

/**
 * The time an event a clock stamped at `at` is recorded at after the state's last event: a
 * millisecond after that event at the earliest (held at the last of the year 9999). Each process
 * reads its own clock, and one behind another's (stepped back, another machine's) would stamp a
 * later event before the log's last, which it would then not supersede: the order the clocks'
 * events reach the log is the order of their times.
 */
const stampAfterLastEvent = (state: SessionState, at: number): number =>
  state.previousAt === undefined ? at : Math.max(at, timeAfter(state.previousAt, 1));

/** `planEvent`, the time of an event not recognized as the log's already given by `stamp` first. */
const planStamped = (
  state: SessionState,
  fields: Readonly<Record<string, unknown>>,
  env: TrackerEnvironment,
  sameResult: SameResult | undefined,
  stamp: (state: SessionState, at: number) => number,
): E.Either<SessionError, EventPlan> => {
  checkedState(state);
  const next = nextEvent(state, fields);
  if (E.isLeft(next)) return next;
  const duplicate = duplicatePlan(state, next.right, sameResult);
  if (duplicate !== undefined) return E.right(duplicate);
  const at = stamp(state, next.right.event.at);
  return at === next.right.event.at ? appendPlan(state, next.right, env) : planEvent(state, { ...fields, at }, env);
};

/** The time a caller gave: kept. */
const givenTime = (_state: SessionState, at: number): number => at;

/**
 * Plans recording the event whose line is `fields` after the state's last line: parsed exactly
 * as `replay` will parse it there, recognized when the log holds it already (among its recent
 * events, or, for a result sent without a time, as the last result of its task), and applied
 * with `trackerTransition`. A dispatch result the contract rejects is a Left: nothing is written.
 */
export const planEvent = (
  state: SessionState,
  fields: Readonly<Record<string, unknown>>,
  env: TrackerEnvironment = {},
  sameResult?: SameResult,
): E.Either<SessionError, EventPlan> => planStamped(state, fields, env, sameResult, givenTime);

/**
 * `planEvent` for an event whose `at` a clock gave: recognized as the log's already at that time
 * (an event sent again with the time it was first given) or by its content (`sameResult`), else
 * recorded at `stampAfterLastEvent`, the time its line is written with.
 */
export const planClockedEvent = (
  state: SessionState,
  fields: Readonly<Record<string, unknown>>,
  env: TrackerEnvironment = {},
  sameResult?: SameResult,
): E.Either<SessionError, EventPlan> => planStamped(state, fields, env, sameResult, stampAfterLastEvent);

/**
 * The section of the prompt `prompt` recorded on its line, as `replay` computes it there: on the
 * state the log's lines before that line leave (`before`). What the prompt sent again answers,
 * whatever was recorded since.
 */
export const selectSectionAtLine = (
  before: SessionState,
  prompt: HistoryPromptEvent,
  env: TrackerEnvironment = {},
): TrackerOutput => selectSessionContext(before.tracker, prompt, environmentOf(env));

/** True when the log as `state` read it holds the event of key `key` on line `line` (among its recent events). */
export const holdsEvent = (state: SessionState, key: string, line: number): boolean => {
  const { recent } = state;
  for (let i = 0; i < recent.length; i += 1) if (recent[i]![0] === key && recent[i]![1] === line) return true;
  return false;
};

/** The facts a recorded dispatch added and its warnings (both empty for a duplicate). */
export const extractionOf = (recorded: RecordedEvent): Extraction =>
  recorded.output?.type === 'dispatch' && E.isRight(recorded.output.ingested)
    ? recorded.output.ingested.right
    : { facts: [], warnings: [] };

/** The section and facts of a recorded prompt. */
export const sectionOf = (
  recorded: RecordedEvent,
): { readonly sessionContext: string; readonly facts: ReadonlyArray<SessionFact> } =>
  recorded.output?.type === 'prompt'
    ? { sessionContext: recorded.output.sessionContext, facts: recorded.output.facts }
    : { sessionContext: '', facts: [] };

/** The facts a recorded invalidation closed (none for a duplicate). */
export const closedOf = (recorded: RecordedEvent): ReadonlyArray<SessionFact> =>
  recorded.output?.type === 'invalidate' ? recorded.output.closed : [];

/** What a recorded compaction reported (nothing for a duplicate). */
export const compactionOf = (recorded: RecordedEvent): CompactionReport | undefined =>
  recorded.output?.type === 'compact' ? recorded.output.report : undefined;

/** The prompt event an input describes, parsed as a history line (line 0: it is not written), for a query that records nothing. */
export const parsePromptQuery = (
  fields: Readonly<Record<string, unknown>>,
): E.Either<SessionError, HistoryPromptEvent> => {
  const text = lineText(fields);
  if (E.isLeft(text)) return text;
  const parsed = parseHistoryLine(text.right, 0, undefined);
  if (E.isLeft(parsed)) return E.left({ code: parsed.left.code, message: parsed.left.message });
  return parsed.right.type === 'prompt'
    ? E.right(parsed.right)
    : E.left({ code: 'invalid_input', message: 'the input is not a prompt' });
};

const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;
const isText = (value: unknown): value is string => typeof value === 'string';
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isListOf = (value: unknown, item: (entry: unknown) => boolean): boolean =>
  Array.isArray(value) && value.every(item);
const isTuple = (entry: unknown, ...kinds: ReadonlyArray<(field: unknown) => boolean>): boolean =>
  Array.isArray(entry) && entry.length === kinds.length && kinds.every((kind, i) => kind(entry[i]));

/**
 * A session's state as text for a snapshot: plain JSON, the store's file records in their
 * stored form. Parsing it back (`decodeSessionState`) gives the very state, index and all,
 * several times faster than a replay of the log.
 */
export const encodeSessionState = (state: SessionState): string => {
  const { store } = checkedState(state).tracker;
  return JSON.stringify({
    ...state,
    previousAt: state.previousAt ?? null,
    tracker: {
      ...state.tracker,
      store: { ...store, index: { ...store.index, files: storedFileRecords(store.index.files) } },
    },
  });
};

/** Adds the objects among an array's elements to `pending`. */
const pushArrayChildren = (node: ReadonlyArray<unknown>, pending: unknown[]): void => {
  for (let i = 0; i < node.length; i += 1) {
    const child: unknown = node[i];
    if (typeof child === 'object' && child !== null) pending.push(child);
  }
};

/** Adds the objects among an object's property values to `pending`. */
const pushObjectChildren = (node: Readonly<Record<string, unknown>>, pending: unknown[]): void => {
  for (const key in node) {
    const child: unknown = node[key];
    if (typeof child === 'object' && child !== null) pending.push(child);
  }
};

/**
 * Deeply freezes a value just parsed from JSON (plain objects and arrays only), with a stack of
 * its own. It runs once, in a process just started (a hook's, a server's first open): each kind
 * of node has its own small loop, which the engine optimizes after a few calls, where one loop
 * for both stayed slow code for most of the walk.
 */
const freezeParsed = <T>(value: T): T => {
  const pending: unknown[] = [value];
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    Object.freeze(node);
    if (Array.isArray(node)) pushArrayChildren(node, pending);
    else pushObjectChildren(node as Readonly<Record<string, unknown>>, pending);
  }
  return value;
};

/** The state a stored snapshot holds, or why it cannot be trusted: unreadable, or of another line than its position. */
export const decodeSnapshot = (snapshot: {
  readonly position: number;
  readonly state: string;
}): E.Either<SnapshotFailure, SessionState> =>
  E.chain((state: SessionState) =>
    state.lines === snapshot.position ? E.right(state) : notState('the snapshot does not match its position'),
  )(decodeSessionState(snapshot.state));

const notState = (message: string): E.Either<SnapshotFailure, never> => E.left(invalidSnapshot(message));

/**
 * The state `encodeSessionState` wrote, or why the text is not one. The store is checked in its
 * outline only, with the check every reducer makes of a store (`factStoreProblem`: its bound,
 * its pair logs, its index's fields, each of its kind), so a snapshot whose hash matches but whose
 * store is not one (crafted, or written by a faulty version) is refused here and the session
 * rebuilt from its log, instead of failing every call on it. The store's contents are not
 * walked: a snapshot's store is vouched for by the store that wrote it (a hash, a version), and
 * this is a cache the log can always rebuild.
 */
export const decodeSessionState = (text: string): E.Either<SnapshotFailure, SessionState> => {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return notState('the snapshot is not JSON (cut short or corrupt)');
  }
  if (
    !isObject(value) ||
    !isCount(value['lines']) ||
    !(value['previousAt'] === null || typeof value['previousAt'] === 'number') ||
    !isCount(value['events']) ||
    !isListOf(
      value['errors'],
      (error) => isObject(error) && isCount(error['line']) && isText(error['code']) && isText(error['message']),
    ) ||
    !isCount(value['errorsOmitted']) ||
    !isListOf(value['recent'], (entry) => isTuple(entry, isText, isCount)) ||
    !isListOf(value['results'], (entry) => isTuple(entry, isText, isText, isCount)) ||
    !isObject(value['tracker']) ||
    !isObject(value['tracker']['settings'])
  )
    return notState('the snapshot is not a session state of this layout');
  const store = value['tracker']['store'];
  // The reducers' own check of a store; one it passes is an object with an index (said again for the compiler).
  const problem = factStoreProblem(store);
  if (problem !== undefined || !isObject(store) || !isObject(store['index']))
    return notState(`the snapshot holds no fact store (${problem ?? 'the store is not an object'})`);
  // A bound no store is made with (`emptyFactStore` normalizes it to a whole number, 1 or more).
  if (normalizeMaxValidFacts(store['maxValidFacts']) !== store['maxValidFacts'])
    return notState("the snapshot holds no fact store (the store's maxValidFacts is not a whole number, 1 or more)");
  const index = store['index'];
  try {
    index['files'] = reviveFileRecords(index['files'] as PersistentMap<StoredFileRecord>);
  } catch {
    return notState("the snapshot holds no fact store (its index's file records cannot be read)");
  }
  const previousAt = value['previousAt'];
  return E.right(
    freezeParsed({
      ...(value as unknown as SessionState),
      tracker: { settings: trackerSettings(value['tracker']['settings']), store: store as unknown as FactStore },
      previousAt: typeof previousAt === 'number' ? previousAt : undefined,
    }),
  );
};
