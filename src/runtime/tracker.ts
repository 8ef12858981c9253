/**
 * The stateful shell: one mutable binding holding the current store, a listener set and the
 * event log. Everything it does is a reducer call over plain data; it only adds the clock,
 * notification, and the guarantee that no call throws.
 */
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import type { DispatchResult, ImplementerResult, ReviewerResult } from '../extract/contract.js';
import { type Extraction, extractFromImplementer, extractFromReviewer, normalizeTaskId } from '../extract/extractor.js';
import { type FactTag, isSourceRole, type SessionFact, type SourceRole } from '../fact.js';
import { formatSessionFacts } from '../prompt/format.js';
import { buildDispatchDynamicTail } from '../prompt/tail.js';
import { retrieveFacts } from '../retrieve/retrieve.js';
import type { TokenCounter } from '../tokens/estimate.js';
import type { RankingOverrides } from '../retrieve/rank.js';
import { type CompactionReport, compactIn } from '../store/compact.js';
import { addFactsIn } from '../store/addFacts.js';
import { applyEventIn, type TrackerEvent } from '../store/events.js';
import { deepFreeze } from '../base/immer.js';
import { emptyFactStore, type FactStore, pairKey } from '../store/state.js';
import { latestAssertionTime } from '../store/timeline.js';
import { type Batch, beginTransientBatch, sealTree } from '../store/trie.js';
import { selectPairLogs } from '../store/write.js';
import { type ContractError, parseDispatchOutput, parseDispatchResult } from './parse.js';

/** Options of `createFactTracker`. */
export interface FactTrackerOptions {
  /** Epoch milliseconds now (default `Date.now`). */
  readonly clock?: () => number;
  readonly maxValidFacts?: number;
  /** Default facts per prompt (10). */
  readonly maxFacts?: number;
  /** Default token budget of the section (500). */
  readonly maxTokens?: number;
  readonly countTokens?: TokenCounter;
  /** Overrides of the ranking defaults. */
  readonly ranking?: RankingOverrides;
}

/** Input of `ingestOutput`: raw agent text, or an already-parsed result object. */
export interface IngestInput {
  readonly role: SourceRole;
  readonly taskId: string;
  readonly output: string | unknown;
}

/** Input of `compilePrompt`. */
export interface CompilePromptInput {
  readonly taskId: string;
  readonly taskPrompt: string;
  readonly tags?: ReadonlyArray<FactTag>;
  readonly deltaPacket?: Record<string, unknown>;
  readonly maxOutputTokens?: number;
  readonly guideCacheKey?: string;
  readonly guideInstruction?: string;
  /** Facts for this prompt, over the tracker's default. */
  readonly maxFacts?: number;
  /** Token budget of this prompt's section, over the tracker's default. */
  readonly maxTokens?: number;
}

/** A compiled dispatch tail and what went into its `[Session Context]` section. */
export interface CompiledPrompt {
  readonly prompt: string;
  readonly sessionContext: string;
  readonly facts: ReadonlyArray<SessionFact>;
}

/** Called after a public call changed the state. */
export type StoreListener = (next: FactStore, previous: FactStore) => void;

/** The session's fact memory. No method throws. */
export interface FactTracker {
  ingestOutput(input: IngestInput): E.Either<ContractError, Extraction>;
  compilePrompt(input: CompilePromptInput): CompiledPrompt;
  /** Closes the valid facts of (subject, relation) at `at` (default: the clock). */
  invalidate(subject: string, relation: string, at?: number): FactStore;
  /** Compacts to `maxFacts` valid facts and reports what went. */
  compact(maxFacts: number): CompactionReport;
  getSnapshot(): FactStore;
  subscribe(listener: StoreListener): () => void;
  events(): ReadonlyArray<TrackerEvent>;
}

const DEFAULT_MAX_FACTS = 10;
const DEFAULT_MAX_TOKENS = 500;
const DEFAULT_MAX_OUTPUT_TOKENS = 1200;

/** Relations a later review of the same task settles: what it does not repeat is fixed. */
const REVIEW_OPEN_ITEMS = new Set(['issue', 'must_fix']);

const invalidInput = (message: string): ContractError => ({ code: 'invalid_input', message });

const asText = (value: unknown): string =>
  typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : '';

const orDefault = (value: unknown, fallback: number): number =>
  typeof value === 'number' && value >= 0 && !Number.isNaN(value) ? value : fallback;

/**
 * The invalidations a review implies: the `issue` and `must_fix` facts that earlier reviews of
 * the same task raised and this one does not repeat are closed at this review's time. A pair
 * belongs to the task when the task's reviewer made its latest assertion.
 */
export const settledReviewItems = (
  store: FactStore,
  taskId: string,
  newFacts: ReadonlyArray<SessionFact>,
  at: number,
): TrackerEvent[] => {
  const reasserted = new Set(newFacts.map((fact) => pairKey(fact.subject, fact.relation)));
  return selectPairLogs(store)
    .filter((log) => REVIEW_OPEN_ITEMS.has(log.relation) && !reasserted.has(pairKey(log.subject, log.relation)))
    .filter((log) => {
      const latest = latestAssertionTime(log);
      const stillOpen = !log.clears.some((clear) => clear >= latest);
      return (
        stillOpen &&
        log.assertions.some(
          (fact) => fact.validFrom === latest && fact.sourceTaskId === taskId && fact.sourceRole === 'reviewer',
        )
      );
    })
    .map((log): TrackerEvent => ({ type: 'facts/invalidated', subject: log.subject, relation: log.relation, at }));
};

const readClock = (clock: () => number): E.Either<ContractError, number> => {
  try {
    const now = clock();
    return typeof now === 'number' && Number.isFinite(now)
      ? E.right(now)
      : E.left(invalidInput(`the clock returned ${String(now)}, not a finite number of milliseconds`));
  } catch (error) {
    return E.left(invalidInput(`the clock failed: ${error instanceof Error ? error.message : String(error)}`));
  }
};

/** Creates a tracker holding an empty store. */
export const createFactTracker = (options: FactTrackerOptions = {}): FactTracker => createTracker(options, {});

/** How a tracker keeps its state, beyond the public options. */
export interface TrackerInternals {
  /**
   * Write in place between snapshots (see `beginTransientBatch`): the state is sealed only
   * when it leaves the tracker (`getSnapshot`, `invalidate`, a listener). Only for a caller
   * that owns the tracker outright, as the replay of a history does: every value it sees is
   * still frozen and equal to the persistent result, but a reducer failing half-way would
   * leave the state half-written.
   */
  readonly transient?: boolean;
}

/** `createFactTracker` with internal settings. */
export const createTracker = (options: FactTrackerOptions, internals: TrackerInternals): FactTracker => {
  const settings = typeof options === 'object' && options !== null ? options : {};
  const clock = typeof settings.clock === 'function' ? settings.clock : Date.now;
  const maxFacts = orDefault(settings.maxFacts, DEFAULT_MAX_FACTS);
  const maxTokens = orDefault(settings.maxTokens, DEFAULT_MAX_TOKENS);
  const countTokens = typeof settings.countTokens === 'function' ? settings.countTokens : undefined;
  const ranking = settings.ranking;

  let state = emptyFactStore(settings.maxValidFacts === undefined ? {} : { maxValidFacts: settings.maxValidFacts });
  const log: TrackerEvent[] = [];
  const listeners = new Set<StoreListener>();
  /** The transient batch the unsealed part of `state` belongs to. */
  let open: Batch | undefined;

  /** The state, sealed: from here on nothing may write to it in place. */
  const share = (): FactStore => {
    if (open !== undefined) {
      sealTree(state);
      open = undefined;
    }
    return state;
  };

  /** The batch the next write goes to (undefined: a sealed batch per reducer call). */
  const writeBatch = (): Batch | undefined => {
    // Listeners receive the previous state too, so it must stay as it is.
    if (internals.transient !== true || listeners.size > 0) {
      share();
      return undefined;
    }
    return (open ??= beginTransientBatch());
  };

  /**
   * Applies events, keeps those that changed the state, and notifies once. `reduce` defaults
   * to the events' reducers; a caller that already computed the result passes it instead.
   */
  const commit = (
    events: ReadonlyArray<TrackerEvent>,
    reduce: (store: FactStore, event: TrackerEvent, batch?: Batch) => FactStore = applyEventIn,
  ): void => {
    const batch = writeBatch();
    const previous = state;
    for (const event of events) {
      // Frozen first: what a reducer keeps of an event can no longer change behind its back.
      deepFreeze(event);
      const next = reduce(state, event, batch);
      if (next === state) continue;
      log.push(event);
      state = next;
    }
    if (state === previous) return;
    for (const listener of [...listeners]) {
      try {
        listener(state, previous);
      } catch {
        // A failing listener must not break the caller or the other listeners.
      }
    }
  };

  const ingest = (input: IngestInput): E.Either<ContractError, Extraction> => {
    if (typeof input !== 'object' || input === null) return E.left(invalidInput('the input is not an object'));
    const { role, output } = input;
    if (!isSourceRole(role))
      return E.left(invalidInput(`unknown role ${JSON.stringify(String(role))}: expected implementer or reviewer`));
    return pipe(
      normalizeTaskId(input.taskId),
      E.mapLeft(invalidInput),
      E.chain((taskId) =>
        pipe(
          typeof output === 'string' ? parseDispatchOutput(output, role) : parseDispatchResult(output, role),
          E.chain((result) =>
            pipe(
              readClock(clock),
              E.map((at) => ({ taskId, result, at })),
            ),
          ),
        ),
      ),
      E.map(({ taskId, result, at }) => {
        const extraction = extractFor(role, result, taskId, at);
        const settled = role === 'reviewer' ? settledReviewItems(state, taskId, extraction.facts, at) : [];
        const added: TrackerEvent = { type: 'facts/added', facts: extraction.facts };
        // The extractor checked these facts as it built them (commit freezes them first), so
        // they enter the store without a second check; a replay of the event checks them again.
        commit([...settled, added], (store, event, batch) =>
          event === added ? addFactsIn(store, extraction.facts, batch, true) : applyEventIn(store, event, batch),
        );
        return extraction;
      }),
    );
  };

  const compile = (input: CompilePromptInput): CompiledPrompt => {
    const source: Partial<CompilePromptInput> = typeof input === 'object' && input !== null ? input : {};
    const taskId = asText(source.taskId);
    const taskPrompt = asText(source.taskPrompt);
    const facts = retrieveFacts(state, {
      taskDescription: taskPrompt,
      taskId,
      ...(Array.isArray(source.tags) ? { tags: source.tags } : {}),
      maxFacts: source.maxFacts === undefined ? maxFacts : source.maxFacts,
      maxTokens: source.maxTokens === undefined ? maxTokens : source.maxTokens,
      ...(countTokens === undefined ? {} : { countTokens }),
      ...(ranking === undefined ? {} : { ranking }),
    });
    const sessionContext = formatSessionFacts(facts);
    // The task's prompt becomes context for the facts its dispatches will produce.
    const normalizedTaskId = normalizeTaskId(taskId);
    const now = readClock(clock);
    if (E.isRight(normalizedTaskId) && E.isRight(now) && taskPrompt.trim() !== '')
      commit([{ type: 'prompt/recorded', taskId: normalizedTaskId.right, taskPrompt, at: now.right }]);
    const deltaPacket = typeof source.deltaPacket === 'object' && source.deltaPacket !== null ? source.deltaPacket : {};
    const prompt = buildDispatchDynamicTail({
      taskId,
      maxOutputTokens: orDefault(source.maxOutputTokens, DEFAULT_MAX_OUTPUT_TOKENS),
      deltaPacket,
      ...(typeof source.guideCacheKey === 'string' ? { guideCacheKey: source.guideCacheKey } : {}),
      ...(typeof source.guideInstruction === 'string' ? { guideInstruction: source.guideInstruction } : {}),
      sessionContext,
      taskPrompt,
    });
    return { prompt, sessionContext, facts };
  };

  return {
    ingestOutput: (input) => {
      try {
        return ingest(input);
      } catch (error) {
        return E.left(invalidInput(`unexpected failure: ${error instanceof Error ? error.message : String(error)}`));
      }
    },
    compilePrompt: (input) => {
      try {
        return compile(input);
      } catch {
        const source: Partial<CompilePromptInput> = typeof input === 'object' && input !== null ? input : {};
        const taskId = asText(source.taskId);
        const taskPrompt = asText(source.taskPrompt);
        return {
          prompt: buildDispatchDynamicTail({
            taskId,
            maxOutputTokens: DEFAULT_MAX_OUTPUT_TOKENS,
            deltaPacket: {},
            taskPrompt,
          }),
          sessionContext: '',
          facts: [],
        };
      }
    },
    invalidate: (subject, relation, at) => {
      try {
        const time = at === undefined ? readClock(clock) : E.right(at);
        if (E.isRight(time)) commit([{ type: 'facts/invalidated', subject, relation, at: time.right }]);
      } catch {
        // Bad input leaves the state as it is.
      }
      return share();
    },
    compact: (maxFacts) => {
      try {
        const { store, report } = compactIn(state, maxFacts, writeBatch());
        commit([{ type: 'store/compacted', maxFacts }], () => store);
        return report;
      } catch {
        return { removedClosed: [], summaries: [], dropped: [] };
      }
    },
    getSnapshot: share,
    subscribe: (listener) => {
      if (typeof listener !== 'function') return () => undefined;
      const entry: StoreListener = (next, previous) => listener(next, previous);
      listeners.add(entry);
      return () => {
        listeners.delete(entry);
      };
    },
    events: () => Object.freeze([...log]),
  };
};

const extractFor = (role: SourceRole, result: DispatchResult, taskId: string, at: number): Extraction =>
  role === 'implementer'
    ? extractFromImplementer(result as ImplementerResult, taskId, at)
    : extractFromReviewer(result as ReviewerResult, taskId, at);

/** Facts in the `{ k, v, confidence }` shape of an orchestrator's state snapshot. */
export const toStateSnapshotFacts = (
  facts: ReadonlyArray<SessionFact>,
): ReadonlyArray<{ k: string; v: string; confidence: number }> =>
  facts.map((fact) => ({
    k: `session_fact:${fact.subject}:${fact.relation}`,
    v: fact.object,
    confidence: fact.confidence,
  }));
