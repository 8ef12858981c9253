/**
 * `createFactTracker`: the fact tracker's thin shell. It is a clock, one mutable binding (the
 * shell of `shell/shell.ts`) and `trackerTransition`: each call reads its input into a history
 * event stamped with the clock's time, runs the transition, and keeps the state it returns. It
 * never throws at its caller, and never hides a bug: an exception nobody expected becomes a
 * `Left` with code `internal`, which `onError` hears too.
 */
import * as E from 'fp-ts/lib/Either.js';
import { describeError } from '../../base/describe.js';
import { isRecord, readInput, readOnce, refuseUnlessDenseArray } from '../../base/record.js';
import { internalFailure } from '../../base/failure.js';
import { parseEventTime, type TimeFailure } from '../../base/time.js';
import { deepFreeze } from '../../persistent/freeze.js';
import { outsideRuns } from '../../persistent/owner.js';
import { createShell } from '../../shell/shell.js';
import { type Extraction, normalizeTaskId } from '../extract/extractor.js';
import { checkedFact, type FactTag, isFactTag, type SessionFact, type SourceRole } from '../fact.js';
import { buildDispatchDynamicTail } from '../prompt/tail.js';
import type { SectionLayout } from '../retrieve/defaults.js';
import type { RankingOverrides } from '../retrieve/rank.js';
import type { CompactionReport } from '../store/compact.js';
import { applyEvent, type TrackerEvent } from '../store/events.js';
import type { FactStore } from '../store/state.js';
import { namedTokenCounter, tokenCountFailure } from '../../tokens/checked.js';
import { estimateTokens, type TokenCounter } from '../../tokens/estimate.js';
import { strictlyIncreasingNow } from './clock.js';
import { initialTrackerState, type TrackerState } from './state.js';
import {
  type PromptInput,
  type PromptOutput,
  recordPrompt,
  selectSessionContext,
  type TrackerEnvironment,
  type TrackerError,
  trackerTransition,
} from './transition.js';

/** Options of `createFactTracker`. */
export interface FactTrackerOptions {
  /** Epoch milliseconds now (default `Date.now`). */
  readonly clock?: () => number;
  readonly maxValidFacts?: number;
  /** Default facts per prompt (`DEFAULT_MAX_FACTS`). */
  readonly maxFacts?: number;
  /** Default token budget of the section (`DEFAULT_MAX_TOKENS`). */
  readonly maxTokens?: number;
  /**
   * Counts the tokens of sections (default: ceil(characters / 4)). An answer that is not a
   * finite number 0 or more fails the call with `invalid_input` naming `countTokens`.
   */
  readonly countTokens?: TokenCounter;
  /** Overrides of the ranking defaults. */
  readonly ranking?: RankingOverrides;
  /**
   * Facts one dispatch result may add (default `MAX_FACTS_PER_RESULT`, 1,000): past it, facts
   * are dropped in rule order, and the extraction's warnings say how many.
   */
  readonly maxFactsPerResult?: number;
  /**
   * Keep the event log `events()` returns (default true). Off, `events()` is empty and memory
   * no longer grows with every call: for a long-running caller that never replays the log.
   */
  readonly keepEvents?: boolean;
  /** The section's layout (default `lines`: one line per fact). */
  readonly layout?: SectionLayout;
  /** The store to start from (default: an empty one with `maxValidFacts`), such as one `decodeState` read back. */
  readonly initial?: FactStore;
  /** Hears every failure with code `internal`: a bug, reported to the caller as a `Left` as well. */
  readonly onError?: (error: TrackerError) => void;
}

/** Input of `ingestOutput`: raw agent text, or an already-parsed result object. */
export interface IngestInput {
  readonly role: SourceRole;
  readonly taskId: string;
  readonly output: string | unknown;
}

/** Input of `compilePrompt` and `previewPrompt`. */
export interface CompilePromptInput {
  readonly taskId: string;
  readonly taskPrompt: string;
  readonly tags?: ReadonlyArray<FactTag>;
  readonly deltaPacket?: Record<string, unknown>;
  /** The output budget the tail states (default 1,200, as is a value that is no finite count 0 or more). */
  readonly maxOutputTokens?: number;
  readonly guideCacheKey?: string;
  readonly guideInstruction?: string;
  /** Facts for this prompt, over the tracker's default. */
  readonly maxFacts?: number;
  /** Token budget of this prompt's section, over the tracker's default. */
  readonly maxTokens?: number;
}

/**
 * A compiled dispatch tail and what went into its `[Session Context]` section. There is always
 * a prompt to dispatch with: when the section could not be built (an input that is not one, or
 * a bug), the prompt goes without it and `error` says why, never a silent empty section.
 */
export interface CompiledPrompt {
  readonly prompt: string;
  readonly sessionContext: string;
  readonly facts: ReadonlyArray<SessionFact>;
  /** Present when the section could not be built: why. */
  readonly error?: TrackerError;
}

/** What an invalidation closed. */
export interface InvalidatedFacts {
  readonly closed: ReadonlyArray<SessionFact>;
}

/** Called after a public call changed the state. */
export type StoreListener = (next: FactStore, previous: FactStore) => void;

/**
 * The session's fact memory. No method throws; every answer is an `Either`, but `compilePrompt`'s
 * and `previewPrompt`'s, which keep the seed's shape: a prompt always, and `error` when its
 * section could not be built.
 */
export interface FactTracker {
  /** Records a dispatch result (raw agent text or the result object) and returns the facts extracted. */
  ingestOutput(input: IngestInput): E.Either<TrackerError, Extraction>;
  /** The dispatch tail with the `[Session Context]` section for a task's prompt; records the prompt. */
  compilePrompt(input: CompilePromptInput): CompiledPrompt;
  /** What `compilePrompt` would answer now, recording nothing: a pure query. */
  previewPrompt(input: CompilePromptInput): CompiledPrompt;
  /**
   * Records a task's prompt as context for the facts its dispatches will produce, at `at`
   * (default: the clock), without compiling a section: what `compilePrompt` does to the state.
   * A blank prompt records nothing; a task id no task record can hold (empty, past 50
   * characters, holding a secret) is refused with `invalid_input`, as `compilePrompt` refuses it.
   */
  recordPrompt(taskId: string, taskPrompt: string, at?: number): E.Either<TrackerError, void>;
  /** Closes the valid facts of (subject, relation) at `at` (default: the clock) and returns them. */
  invalidate(subject: string, relation: string, at?: number): E.Either<TrackerError, InvalidatedFacts>;
  /** Compacts to `maxFacts` valid facts at `at` (default: the clock) and reports what went. */
  compact(maxFacts: number, at?: number): E.Either<TrackerError, CompactionReport>;
  /** The current store: plain, frozen, JSON-serializable (`encodeState`). */
  getSnapshot(): FactStore;
  /** The current state: the store and the settings the tracker applies events with. */
  getState(): TrackerState;
  subscribe(listener: StoreListener): () => void;
  /** Every state change as data: `replay(events)` rebuilds the snapshot. */
  events(): ReadonlyArray<TrackerEvent>;
}

const DEFAULT_MAX_OUTPUT_TOKENS = 1200;

const invalidInput = (message: string): TrackerError => ({ code: 'invalid_input', message });

const isCount = (value: unknown): value is number => typeof value === 'number' && value >= 0 && !Number.isNaN(value);

/** A count the tail can print: a budget of Infinity tokens is none, and would read "Max output tokens: Infinity". */
const isFiniteCount = (value: unknown): value is number => isCount(value) && Number.isFinite(value);

/** The fields `compilePrompt` reads. */
const PROMPT_FIELDS = [
  'taskId',
  'taskPrompt',
  'tags',
  'deltaPacket',
  'maxOutputTokens',
  'guideCacheKey',
  'guideInstruction',
  'maxFacts',
  'maxTokens',
] as const;

/** A compilePrompt input's fields as read: plain values, whatever the input was. */
type PromptFields = Partial<Record<(typeof PROMPT_FIELDS)[number], unknown>>;

/** An input's fields as read, and the ones whose getters threw (they read as not given). */
interface ReadFields<K extends string> {
  readonly fields: Partial<Record<K, unknown>>;
  readonly unreadable: ReadonlyArray<K>;
}

/**
 * Reads each field of an input exactly once (a getter may throw, or answer differently twice);
 * a field whose getter throws reads as not given, and is named in `unreadable`.
 */
const readFields = <K extends string>(
  input: unknown,
  keys: ReadonlyArray<K>,
): E.Either<TrackerError, ReadFields<K>> => {
  if (typeof input !== 'object' || input === null) return E.left(invalidInput('the input is not an object'));
  const fields: Partial<Record<K, unknown>> = {};
  const unreadable: K[] = [];
  for (const key of keys)
    try {
      fields[key] = (input as Record<string, unknown>)[key];
    } catch {
      unreadable.push(key);
    }
  return E.right({ fields, unreadable });
};

/** A failure naming the required fields that could not be read, if any. */
const unreadableOf = <K extends string>(read: ReadFields<K>, required: ReadonlyArray<K>): TrackerError | undefined => {
  const missing = read.unreadable.filter((key) => required.includes(key));
  return missing.length === 0 ? undefined : invalidInput(`the input's ${missing.join(', ')} cannot be read`);
};

/** The prompt event a compilePrompt input describes at `at`, or why it describes none. */
const promptEvent = (fields: PromptFields, at: number): E.Either<TrackerError, PromptInput> => {
  const { taskId, taskPrompt, maxFacts, maxTokens } = fields;
  // The list read once: its elements checked are the ones the retrieval filters by.
  const read = readInput('tags', fields.tags);
  if (E.isLeft(read)) return read;
  const tags = read.right;
  if (typeof taskId !== 'string' && typeof taskId !== 'number') return E.left(invalidInput('taskId must be a string'));
  // An id no task record can hold (empty, past 50 characters) is refused as ingestOutput refuses
  // it, rather than giving a section while the prompt goes unrecorded for ranking.
  const id = normalizeTaskId(taskId);
  if (E.isLeft(id)) return E.left(invalidInput(id.left));
  if (typeof taskPrompt !== 'string') return E.left(invalidInput('taskPrompt must be a string'));
  if (tags !== undefined && !(Array.isArray(tags) && tags.every(isFactTag)))
    return E.left(invalidInput('tags must be an array of fact tags'));
  if (maxFacts !== undefined && !isCount(maxFacts)) return E.left(invalidInput('maxFacts must be a number 0 or more'));
  if (maxTokens !== undefined && !isCount(maxTokens))
    return E.left(invalidInput('maxTokens must be a number 0 or more'));
  return E.right({
    type: 'prompt',
    at,
    taskId: String(taskId),
    taskPrompt,
    ...(tags === undefined ? {} : { tags: tags as ReadonlyArray<FactTag> }),
    ...(maxFacts === undefined ? {} : { maxFacts }),
    ...(maxTokens === undefined ? {} : { maxTokens }),
  });
};

/** The dispatch tail around a section, as the seed's `buildDispatchDynamicTail` draws it. */
const tailOf = (fields: PromptFields, event: PromptInput, output: PromptOutput): CompiledPrompt => {
  const { deltaPacket, maxOutputTokens, guideCacheKey, guideInstruction } = fields;
  const prompt = buildDispatchDynamicTail({
    taskId: event.taskId,
    maxOutputTokens: isFiniteCount(maxOutputTokens) ? maxOutputTokens : DEFAULT_MAX_OUTPUT_TOKENS,
    // An optional field that is not of its kind (an array, a number) reads as its default.
    deltaPacket: isRecord(deltaPacket) ? deltaPacket : {},
    ...(typeof guideCacheKey === 'string' ? { guideCacheKey } : {}),
    ...(typeof guideInstruction === 'string' ? { guideInstruction } : {}),
    sessionContext: output.sessionContext,
    taskPrompt: event.taskPrompt,
  });
  return { prompt, sessionContext: output.sessionContext, facts: output.facts };
};

/**
 * The state frozen to be handed out: its store first, as a transition freezes the state's own
 * record but, inside a transient run, not the store it holds (whose native maps become tries).
 */
const shareState = (state: TrackerState): TrackerState => {
  deepFreeze(state.store);
  return deepFreeze(state);
};

const OPTION_NAMES = [
  'clock',
  'maxValidFacts',
  'maxFacts',
  'maxTokens',
  'countTokens',
  'ranking',
  'maxFactsPerResult',
  'keepEvents',
  'layout',
  'initial',
  'onError',
] as const satisfies ReadonlyArray<keyof FactTrackerOptions>;

/**
 * The caller's options, each read once, as a call's input is: a getter or Proxy trap that throws
 * reads as an option not given, and so does a ranking one of whose fields throws.
 */
const readOptions = (options: unknown): FactTrackerOptions => {
  if (typeof options !== 'object' || options === null) return {};
  const read: Record<string, unknown> = {};
  for (const name of OPTION_NAMES) {
    try {
      const value = (options as Record<string, unknown>)[name];
      if (value !== undefined) read[name] = name === 'ranking' ? readOnce(value) : value;
    } catch {
      // The caller's getter failed: the option is not given.
    }
  }
  return read as FactTrackerOptions;
};

/** Creates a tracker holding an empty store, or the `initial` one. */
export const createFactTracker = (options: FactTrackerOptions = {}): FactTracker => {
  const settings = readOptions(options);
  const { clock: userClock, countTokens: userCounter, onError } = settings;
  // The caller's functions run outside any write run its own code may have open.
  const clock = typeof userClock === 'function' ? (): number => outsideRuns(userClock) : strictlyIncreasingNow();
  // The library's own estimate is taken as it is (see `budgeted` in retrieve.ts); the caller's
  // counter says its exceptions are its own (`namedTokenCounter`).
  const env: TrackerEnvironment =
    typeof userCounter !== 'function' || userCounter === estimateTokens
      ? {}
      : { countTokens: namedTokenCounter((text) => outsideRuns(() => userCounter(text))) };
  const shell = createShell<TrackerState, TrackerEvent>({
    initial: initialTrackerState({
      ...(settings.maxFacts === undefined ? {} : { maxFacts: settings.maxFacts }),
      ...(settings.maxTokens === undefined ? {} : { maxTokens: settings.maxTokens }),
      ...(settings.layout === undefined ? {} : { layout: settings.layout }),
      ...(settings.maxFactsPerResult === undefined ? {} : { maxFactsPerResult: settings.maxFactsPerResult }),
      ...(settings.ranking === undefined ? {} : { ranking: settings.ranking }),
      ...(settings.maxValidFacts === undefined ? {} : { maxValidFacts: settings.maxValidFacts }),
      ...(settings.initial === undefined ? {} : { store: settings.initial }),
    }),
    reduce: (state, event) => {
      const store = applyEvent(state.store, event);
      return store === state.store ? state : { store, settings: state.settings };
    },
    keepLog: settings.keepEvents !== false,
    share: shareState,
  });

  /**
   * The time of a call: `at` when given, else the clock's; a time must be a finite number within
   * the years 0000 to 9999, as a history's and a session's are, so that the tracker's events can
   * always be written out as one.
   */
  const timeOf = (at?: unknown): E.Either<TrackerError, number> => {
    if (at !== undefined) {
      if (typeof at !== 'number' || !Number.isFinite(at))
        return E.left(invalidInput('the time is not a finite number'));
      return E.mapLeft(({ message }: TimeFailure) => invalidInput(`the time: ${message}`))(parseEventTime(at));
    }
    let now: unknown;
    try {
      now = clock();
    } catch (error) {
      // The clock is the caller's function: its failure is the caller's input, not a bug here.
      return E.left(invalidInput(`the clock failed: ${describeError(error)}`));
    }
    if (typeof now !== 'number' || !Number.isFinite(now))
      return E.left(invalidInput(`the clock returned ${String(now)}, not a finite number of milliseconds`));
    return E.mapLeft(({ message }: TimeFailure) => invalidInput(`the clock returned a time out of range: ${message}`))(
      parseEventTime(now),
    );
  };

  /**
   * The shell's boundary: runs a call, and turns an exception nobody expected into a `Left`
   * with code `internal` that `onError` hears too. A token counter that answered no number of
   * tokens is the caller's setting at fault, not a bug: `invalid_input`, which `onError` does
   * not hear (as a clock that answers no time).
   */
  const guard = <T>(call: () => E.Either<TrackerError, T>): E.Either<TrackerError, T> => {
    try {
      return call();
    } catch (error) {
      const miscounted = tokenCountFailure(error);
      if (miscounted !== undefined) return E.left(miscounted);
      const failure = internalFailure(error);
      if (typeof onError === 'function')
        try {
          outsideRuns(() => onError(failure));
        } catch {
          // The listener is the caller's: its failure must not replace the answer it was told about.
        }
      return E.left(failure);
    }
  };

  /** Keeps a transition's state and events. */
  const keep = (state: TrackerState, events: ReadonlyArray<TrackerEvent>): void => {
    shell.update(state, events);
  };

  /** The tail without a section, for a prompt whose section could not be built, with why. */
  const withoutSection = (fields: PromptFields, error: TrackerError): CompiledPrompt => {
    const taskId = fields.taskId;
    const taskPrompt = fields.taskPrompt;
    const event: PromptInput = {
      type: 'prompt',
      at: 0,
      taskId: typeof taskId === 'string' || typeof taskId === 'number' ? String(taskId) : '',
      taskPrompt: typeof taskPrompt === 'string' ? taskPrompt : '',
    };
    return { ...tailOf(fields, event, { type: 'prompt', taskId: event.taskId, sessionContext: '', facts: [] }), error };
  };

  const compile = (input: CompilePromptInput, records: boolean): CompiledPrompt => {
    const read = readFields(input, PROMPT_FIELDS);
    const fields = E.isRight(read) ? read.right.fields : {};
    const compiled = guard(() => {
      if (E.isLeft(read)) return read;
      const unreadable = unreadableOf(read.right, ['taskId', 'taskPrompt']);
      if (unreadable !== undefined) return E.left(unreadable);
      const at = records ? timeOf() : E.right(0);
      if (E.isLeft(at)) return at;
      const event = promptEvent(fields, at.right);
      if (E.isLeft(event)) return event;
      if (!records)
        return E.right(tailOf(fields, event.right, selectSessionContext(shell.getState(), event.right, env)));
      const [state, events, output] = trackerTransition(shell.getState(), event.right, env);
      keep(state, events);
      return E.right(tailOf(fields, event.right, output));
    });
    if (E.isRight(compiled)) return compiled.right;
    try {
      return withoutSection(fields, compiled.left);
    } catch (error) {
      // Drawing the bare tail failed too: the caller still gets an answer, and why.
      return { prompt: '', sessionContext: '', facts: [], error: internalFailure(error) };
    }
  };

  return {
    ingestOutput: (input) =>
      guard(() => {
        const read = readFields(input, ['role', 'taskId', 'output'] as const);
        if (E.isLeft(read)) return read;
        const unreadable = unreadableOf(read.right, ['role', 'taskId', 'output']);
        if (unreadable !== undefined) return E.left(unreadable);
        const { role, taskId } = read.right.fields;
        const output = readInput('output', read.right.fields.output);
        if (E.isLeft(output)) return output;
        const at = timeOf();
        if (E.isLeft(at)) return at;
        const [state, events, answer] = trackerTransition(
          shell.getState(),
          {
            type: 'dispatch',
            at: at.right,
            role: role as SourceRole,
            taskId: taskId as string,
            output: output.right as string,
          },
          env,
        );
        keep(state, events);
        return answer.ingested;
      }),
    compilePrompt: (input) => compile(input, true),
    previewPrompt: (input) => compile(input, false),
    recordPrompt: (taskId, taskPrompt, at) =>
      guard(() => {
        // An id no task record can hold is refused as compilePrompt refuses it, not dropped unsaid.
        const id = normalizeTaskId(taskId);
        if (E.isLeft(id)) return E.left(invalidInput(id.left));
        if (typeof taskPrompt !== 'string') return E.left(invalidInput('taskPrompt must be a string'));
        const time = timeOf(at);
        if (E.isLeft(time)) return time;
        const [state, events] = recordPrompt(shell.getState(), { taskId, taskPrompt, at: time.right });
        keep(state, events);
        return E.right(undefined);
      }),
    invalidate: (subject, relation, at) =>
      guard(() => {
        if (typeof subject !== 'string' || typeof relation !== 'string')
          return E.left(invalidInput('subject and relation must be strings'));
        const time = timeOf(at);
        if (E.isLeft(time)) return time;
        const [state, events, output] = trackerTransition(shell.getState(), {
          type: 'invalidate',
          at: time.right,
          subject,
          relation,
        });
        keep(state, events);
        return E.right({ closed: output.closed });
      }),
    compact: (maxFacts, at) =>
      guard(() => {
        if (!isCount(maxFacts)) return E.left(invalidInput('maxFacts must be a number 0 or more'));
        const time = timeOf(at);
        if (E.isLeft(time)) return time;
        const [state, events, output] = trackerTransition(shell.getState(), {
          type: 'compact',
          at: time.right,
          maxFacts,
        });
        keep(state, events);
        return E.right(output.report);
      }),
    getSnapshot: () => {
      const { store } = shell.getState();
      deepFreeze(store);
      return store;
    },
    getState: () => shareState(shell.getState()),
    subscribe: (listener) =>
      shell.subscribe((next, previous) => {
        if (next.store !== previous.store) listener(next.store, previous.store);
      }),
    events: () => shell.events(),
  };
};

/** Facts in the `{ k, v, confidence }` shape of an orchestrator's state snapshot. */
export const toStateSnapshotFacts = (
  facts: ReadonlyArray<SessionFact>,
): ReadonlyArray<{ k: string; v: string; confidence: number }> => {
  // Facts that are not a list of them (null from an unset variable) are a programmer's mistake: said plainly.
  refuseUnlessDenseArray('facts', facts, 'an array of facts');
  return facts.map((fact, i) => {
    const { subject, relation, object, confidence } = checkedFact(fact, `facts[${i}]`);
    return { k: `session_fact:${subject}:${relation}`, v: object, confidence };
  });
};
