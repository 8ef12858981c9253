/**
 * What retrieval keeps between queries, as one explicit object: the scratch arrays a query
 * writes, and memo tables of what it derives from frozen values. Each query resets the marks
 * and lists it wrote before it returns, whatever it throws, so every query starts with none
 * (`state`, `matched`, `own`, the pool's places, the special marks); a document's sums and
 * what it gets besides its terms are written when a query first reaches it, before they are
 * read, so both ways to the top k (topk.ts, scan.ts) may leave theirs behind. Retrieval
 * is synchronous, so one scratch serves every query run one after another; queries that may
 * interleave (or a caller that wants its own memory) pass their own in `FactQuery.scratch`.
 * The typed arrays indexed by document grow with the index and are never shrunk.
 */
import type { SessionFact } from '../fact.js';
import { createListViews, type ListViews } from '../search/postingViews.js';
import type { PriorFlagsMemo } from '../search/priors.js';
import { Leaders } from './leaders.js';

/**
 * Accumulators, by document (see accumulate.ts): per document its state bits, its prior flags
 * and its term sum so far, for a special fact what it gets besides its terms (context, recency
 * and co-change), and which of the pass's first terms its sum holds. Each population (the
 * facts that are not conventions, and the conventions) lists the documents it opened. Opening
 * one writes three numbers, dropping one clears its state: the arrays are only ever reset
 * where a query wrote them.
 */
export interface DocumentScratch {
  state: Uint8Array;
  flags: Uint16Array;
  sum: Float64Array;
  /** The scan's sum of a document's feedback terms (its `sum` then holds the query's own terms). */
  feedback: Float64Array;
  context: Float64Array;
  recency: Float64Array;
  coChange: Float64Array;
  /** Which of the pass's first MASKED_TERMS terms a document's sum holds, one bit per term (see `Population.tracksTerms`). */
  terms: Int32Array;
  /** The facts MaxScore opened; for the scan, the facts only a posting reached (`reachedCount` of them). */
  openFacts: Int32Array;
  /** How many facts the scan's passes reached only through a posting, marked in `state` until the query ends. */
  reachedCount: number;
  openConventions: Int32Array;
  /** Each document's place in its phase's pool of lower bounds, plus one (0: not in it). */
  poolAt: Int32Array;
  /**
   * The conventions a query gave an accumulator (matched by a term, or special), by document (1),
   * listed in `marked[0..markedCount)`: the rest are walked apart, at their base.
   */
  matched: Uint8Array;
  marked: Int32Array;
  markedCount: number;
  /**
   * The documents of the query's own task's valid facts (1), which no answer holds, listed in
   * `owned[0..ownedCount)`: the index knows them by task, so eligibility reads no fact.
   */
  own: Uint8Array;
  owned: Int32Array;
  ownedCount: number;
}

/**
 * The documents a query found directly (marked 1 by document), each described once, by the
 * first way in that finds it, at the next position of the special list (see special.ts): its
 * document, context score, recency (in the last pass), prior flags and whether the query names it.
 */
export interface SpecialScratch {
  mark: Uint8Array;
  docs: Int32Array;
  contexts: Float64Array;
  recencies: Float64Array;
  flags: Uint16Array;
  named: Uint8Array;
  count: number;
  /** The recency the last pass of the query being described gives each recent task's facts. */
  recency: ReadonlyMap<string, number>;
  /**
   * The same by task number (0 for a task that is not recent), set for the tasks listed in
   * `recentTasks`: a pair's facts are described from their entries, which hold their task's number.
   */
  recencyByTask: Float64Array;
  readonly recentTasks: number[];
  /**
   * The documents of the facts whose file the query names (1), listed in `namedDocs[0..namedCount)`
   * (see special.ts): a fact is described from its entry, without reading its subject.
   */
  namesFile: Uint8Array;
  namedDocs: Int32Array;
  namedCount: number;
  /** The co-changed files' facts of the last pass (`coChangedCount` of them) and their co-change scores. */
  coChangedDocs: Int32Array;
  coChangedScores: Float64Array;
  coChangedCount: number;
  /** The valid documents of one pair (a pair holds a few valid facts at most). */
  pairDocs: Int32Array;
  /** A task's fact entries (see `PMap.valuesInto`). */
  readonly taskEntries: number[];
}

/** The candidates a phase scores exactly, as a max-heap by bound (see heap.ts). */
export interface CandidateScratch {
  docs: Int32Array;
  bounds: Float64Array;
}

/** The context table's sums by task number, and the numbers of the tasks a query's terms reached (see context.ts). */
export interface ContextScratch {
  sums: Float64Array;
  reached: Int32Array;
  /** By task number, 1 for a task among the latest prompted (see `markYoungTasks`); 0 between queries. */
  young: Uint8Array;
  readonly taskLeaders: Leaders;
  readonly pairLeaders: Leaders;
  /** A task's file pairs (see `PMap.keysInto`). */
  readonly touchedPairs: string[];
}

/** The prior of every combination of prior flags: the exact one, or for an issue the lower and the higher of its two. */
export interface PriorTables {
  readonly lower: Float64Array;
  readonly upper: Float64Array;
}

/** Prior tables by the values of the priors, and the last ones found, by the values themselves. */
export interface PriorTablesMemo {
  readonly byValues: Map<string, PriorTables>;
  /** The values of the priors the last tables were found for (in the order of the key of `byValues`). */
  lastValues: ReadonlyArray<number>;
  last: PriorTables | undefined;
}

/** What retrieval derives from frozen values and keeps, each table by the value it came from. */
export interface RetrievalMemo {
  /** Typed copies of the frozen posting lists read. */
  readonly views: ListViews;
  /** Facts' prior flags. */
  readonly flags: PriorFlagsMemo;
  /** Prior tables by the values of the priors (each query resolves its own ranking, most often with the same numbers). */
  readonly priorTables: PriorTablesMemo;
  /** When each convention of a frozen posting block was asserted, by position. */
  readonly blockTimes: WeakMap<ReadonlyArray<number>, Float64Array>;
  /** `decay ** age` for ages 0, 1, 2, ... by decay (recency weighs each recent task by one). */
  readonly decayPowers: Map<number, number[]>;
}

/** Everything retrieval keeps between queries (see the module's comment). */
export interface RetrievalScratch {
  readonly docs: DocumentScratch;
  readonly special: SpecialScratch;
  readonly candidates: CandidateScratch;
  readonly context: ContextScratch;
  readonly memo: RetrievalMemo;
  /** The open accumulators' documents, sorted, for seeking them in a list. */
  sorted: Int32Array;
  /** The stored weights of the fact being scored exactly (the score reads them, nothing keeps them). */
  readonly weights: Array<number | undefined>;
  /** By prior flags, the quick total of an unmatched convention with them (see conventions.ts; NaN: not yet known). */
  quickTotals: Float64Array;
  /**
   * Stores of at most this many valid facts are ranked by scanning what a query reaches
   * (scan.ts), larger ones by MaxScore (topk.ts): the two give the same answer, at their own
   * cost (`SCAN_FACTS` by default; 0 always takes MaxScore, Infinity always the scan).
   */
  readonly scanFacts: number;
}

/**
 * The store size up to which a query scans rather than prunes (see `RetrievalScratch.scanFacts`
 * and docs/performance.md).
 */
export const SCAN_FACTS = 4_096;

/** What a new scratch may be told. */
export interface RetrievalScratchOptions {
  /** See `RetrievalScratch.scanFacts` (a number of 0 or more; another value keeps the default). */
  readonly scanFacts?: number;
}

const SIZE = 1024;

/** `scanFacts` when given, a number of 0 or more; options that are none (null) read as none. */
const scanFactsOf = (options: RetrievalScratchOptions | null): number => {
  const scanFacts = options?.scanFacts;
  return typeof scanFacts === 'number' && scanFacts >= 0 ? scanFacts : SCAN_FACTS;
};

/** A new scratch, for queries that must not share one (see the module's comment). */
export const createRetrievalScratch = (options: RetrievalScratchOptions = {}): RetrievalScratch => ({
  docs: {
    state: new Uint8Array(SIZE),
    flags: new Uint16Array(SIZE),
    sum: new Float64Array(SIZE),
    feedback: new Float64Array(SIZE),
    context: new Float64Array(SIZE),
    recency: new Float64Array(SIZE),
    coChange: new Float64Array(SIZE),
    terms: new Int32Array(SIZE),
    openFacts: new Int32Array(SIZE),
    reachedCount: 0,
    openConventions: new Int32Array(SIZE),
    poolAt: new Int32Array(SIZE),
    matched: new Uint8Array(SIZE),
    marked: new Int32Array(SIZE),
    markedCount: 0,
    own: new Uint8Array(SIZE),
    owned: new Int32Array(SIZE),
    ownedCount: 0,
  },
  special: {
    mark: new Uint8Array(SIZE),
    docs: new Int32Array(SIZE),
    contexts: new Float64Array(SIZE),
    recencies: new Float64Array(SIZE),
    flags: new Uint16Array(SIZE),
    named: new Uint8Array(SIZE),
    count: 0,
    recency: new Map(),
    recencyByTask: new Float64Array(SIZE),
    recentTasks: [],
    namesFile: new Uint8Array(SIZE),
    namedDocs: new Int32Array(SIZE),
    namedCount: 0,
    coChangedDocs: new Int32Array(SIZE),
    coChangedScores: new Float64Array(SIZE),
    coChangedCount: 0,
    pairDocs: new Int32Array(64),
    taskEntries: [],
  },
  candidates: { docs: new Int32Array(SIZE), bounds: new Float64Array(SIZE) },
  context: {
    sums: new Float64Array(SIZE),
    reached: new Int32Array(SIZE),
    young: new Uint8Array(SIZE),
    taskLeaders: new Leaders(),
    pairLeaders: new Leaders(),
    touchedPairs: [],
  },
  memo: {
    views: createListViews(),
    flags: new WeakMap<SessionFact, number>(),
    priorTables: { byValues: new Map(), lastValues: [], last: undefined },
    blockTimes: new WeakMap(),
    decayPowers: new Map(),
  },
  sorted: new Int32Array(SIZE),
  weights: [],
  quickTotals: new Float64Array(0),
  scanFacts: scanFactsOf(options),
});

/** The scratch a query uses when it names none: one for the whole process, as retrieval is synchronous. */
export const defaultRetrievalScratch: RetrievalScratch = createRetrievalScratch();

/** Grows the arrays indexed by document to hold `documents` (a query's first step; they are never shrunk). */
export const growRetrievalScratch = ({ docs, special }: RetrievalScratch, documents: number): void => {
  if (docs.state.length >= documents) return;
  const size = Math.max(documents, 2 * docs.state.length);
  docs.state = new Uint8Array(size);
  docs.flags = new Uint16Array(size);
  docs.sum = new Float64Array(size);
  docs.feedback = new Float64Array(size);
  docs.context = new Float64Array(size);
  docs.recency = new Float64Array(size);
  docs.coChange = new Float64Array(size);
  docs.terms = new Int32Array(size);
  docs.openFacts = new Int32Array(size);
  docs.openConventions = new Int32Array(size);
  docs.poolAt = new Int32Array(size);
  docs.matched = new Uint8Array(size);
  docs.own = new Uint8Array(size);
  docs.owned = new Int32Array(size);
  docs.marked = new Int32Array(size);
  special.mark = new Uint8Array(size);
  special.docs = new Int32Array(size);
  special.contexts = new Float64Array(size);
  special.recencies = new Float64Array(size);
  special.flags = new Uint16Array(size);
  special.named = new Uint8Array(size);
  special.namesFile = new Uint8Array(size);
  special.namedDocs = new Int32Array(size);
  special.coChangedDocs = new Int32Array(size);
  special.coChangedScores = new Float64Array(size);
};
