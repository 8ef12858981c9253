/**
 * The exact top k of one scoring pass, found through the index, by term-at-a-time MaxScore
 * (Turtle and Flood) over the postings:
 *
 * - The terms are read in descending order of their upper bound (the term's largest weight,
 *   kept by the index, times its idf and multiplier). Each fact's sum is gathered in an
 *   accumulator. The special facts (those with a task context, of a recent task, of a file that
 *   changed with the query's best files, or of a file the query names) have one from the start,
 *   with what they get besides their terms.
 * - Before each term, the most a fact not seen yet can score is what the remaining terms can
 *   add, times the largest prior. Once that is below a score the k-th best is sure to reach
 *   (the k-th of the accumulators' lower bounds, kept as they grow), no accumulator is opened
 *   (before that, a posting whose own weight and the remaining terms cannot reach it opens none),
 *   those that can no longer reach it are dropped, and the rest are completed by seeking their
 *   documents in the remaining lists (skipping whole blocks) when that reads less than the list.
 * - Every accumulator whose upper bound can still reach the k-th best is then scored exactly.
 *   Conventions, whose prior raises a score, have postings of their own, pruned the same way
 *   (with their prior in the bounds) but every posting read, to mark each one a term matches;
 *   the conventions no term matches are eligible too, at their base.
 *
 * Pruning only skips facts whose bound is strictly below the k-th best (a tie could still win on
 * recency), and scores are compared as the explaining path computes them, so the result is
 * exactly the first k of `explainRetrieval`'s ranking.
 */
import * as PMap from '../../persistent/persistentMap.js';
import { getAt } from '../../persistent/persistentVector.js';
import { isFileFact, type SessionFact } from '../fact.js';
import type { FactStore } from '../store/state.js';
import {
  forEachPosting,
  listChunks,
  postingBlocks,
  type Postings,
  PostingsCursor,
  postingFlagsOf,
  postingsSize,
  postingWeightOf,
} from '../search/postings.js';
import { entryDoc, entryFlags, entryIsFile, fileNameOf, indexedDocument } from '../search/searchIndex.js';
import { PRIOR_CLASSES, priorFlags } from '../search/priors.js';
import { postingWeight } from '../search/weights.js';
import {
  hasIssueFlag,
  isConventionFlags,
  maxPriorBound,
  namesSubject,
  priorBound,
  priorValue,
  type RankingPriors,
} from './rank.js';
import {
  byRank,
  combineScore,
  factCoChange,
  factContext,
  filterReason,
  type Extras,
  MASKED_TERMS,
  offerRanked,
  type Pass,
  type Passes,
  repeatsConvention,
  type Scored,
  type Settings,
  storedWeights,
  termLists,
} from './score.js';

/** Bounds are sums in another order than the exact scores: a margin keeps rounding from pruning a tie. */
const SLACK = 1 + 1e-9;

/** The best k candidates seen so far, in rank order. */
class Best {
  readonly list: Scored[] = [];
  constructor(readonly k: number) {}

  get full(): boolean {
    return this.list.length >= this.k;
  }

  /** The score a candidate must reach to enter (when full). */
  get threshold(): number {
    return this.full ? this.list[this.k - 1]!.parts.total : 0;
  }

  /** True when a full list certainly turns away a candidate of this exact score asserted at `validFrom`. */
  refuses(total: number, validFrom: number): boolean {
    const last = this.list[this.k - 1]!.parts.total;
    return total < last || (total === last && validFrom < this.list[this.k - 1]!.fact.validFrom);
  }

  /** Adds a candidate if it ranks within the best k; true when it did. */
  offer(candidate: Scored): boolean {
    return offerRanked(this.list, candidate, this.k, byRank);
  }
}

/**
 * The documents a query found directly (marked 1 by document), each described once, by the
 * first way in that finds it, at the next position of the special list: its document, context
 * score, recency (in the last pass), prior flags and whether the query names it. Scratch
 * arrays, like the accumulators below, reset where a query wrote them when it ends.
 */
let specialMark = new Uint8Array(1024);
let specialDocs = new Int32Array(1024);
let specialContexts = new Float64Array(1024);
let specialRecencies = new Float64Array(1024);
let specialFlags = new Uint16Array(1024);
let specialNamed = new Uint8Array(1024);
let specialCount = 0;
const NO_RECENCY: ReadonlyMap<string, number> = new Map();
/** The recency the last pass of the query being described gives each recent task's facts. */
let describedRecency = NO_RECENCY;
/** The co-changed files' facts of the last pass (`coChangedCount` of them) and their co-change scores. */
let coChangedDocs = new Int32Array(1024);
let coChangedScores = new Float64Array(1024);
let coChangedCount = 0;

/**
 * Describes the fact of `doc` for the query's passes and marks it (the callers pass over what
 * is marked), with its context score (`factContext`'s, which the way in mostly tells: see
 * `describeContextFacts`).
 */
const describe = (pass: Pass, doc: number, fact: SessionFact, context: number): void => {
  const { paths } = pass.plan;
  describeDocument(
    doc,
    priorFlags(fact),
    paths.length > 0 && namesSubject(paths, fact.subject),
    context,
    describedRecency.size === 0 ? 0 : (describedRecency.get(fact.sourceTaskId) ?? 0),
  );
};

/** Describes the fact of `doc` from what is known of it (see `describe`). */
const describeDocument = (doc: number, flags: number, named: boolean, context: number, recency: number): void => {
  const at = specialCount++;
  specialMark[doc] = 1;
  specialDocs[at] = doc;
  specialContexts[at] = context;
  specialRecencies[at] = recency;
  specialFlags[at] = flags;
  specialNamed[at] = named ? 1 : 0;
};

const clearSpecial = (): void => {
  for (let i = 0; i < specialCount; i += 1) specialMark[specialDocs[i]!] = 0;
  specialCount = 0;
  coChangedCount = 0;
  describedRecency = NO_RECENCY;
};

/** A task's fact entries, read into scratch (see `PMap.valuesInto`). */
const taskEntries: number[] = [];

/**
 * Describes the task's valid facts not described yet: all asserted by the task, so their context
 * is the task's, but a file fact's, which is its pair's: none, as the facts of the context's
 * pairs are described first. The task's entries tell each fact's document, flags and whether it
 * is a file fact: a fact is read only when the query names paths (to tell whether it names its file).
 */
const describeTaskFacts = (store: FactStore, pass: Pass, taskId: string): void => {
  const { index } = store;
  const task = PMap.get(index.tasks, taskId);
  if (task === undefined) return;
  const { paths } = pass.plan;
  const context = pass.table.byTask.get(taskId) ?? 0;
  const recency = describedRecency.size === 0 ? 0 : (describedRecency.get(taskId) ?? 0);
  const count = PMap.valuesInto(task.facts, taskEntries);
  for (let i = 0; i < count; i += 1) {
    const entry = taskEntries[i]!;
    const doc = entryDoc(entry);
    // A number outside the scratch is no document of this index (as a malformed one could hold).
    if (!(doc >= 0 && doc < specialMark.length) || specialMark[doc] === 1) continue;
    const ownContext = entryIsFile(entry) ? 0 : context;
    if (paths.length === 0) describeDocument(doc, entryFlags(entry), false, ownContext, recency);
    else {
      const fact = getAt(index.docs, doc);
      if (fact !== undefined)
        describeDocument(doc, entryFlags(entry), namesSubject(paths, fact.subject), ownContext, recency);
    }
  }
};

/**
 * The valid facts of a pair, as their documents in `pairDocs[0..count)` (the count returned):
 * those of its ids asserted at its latest assertion time (an older one is closed by it) that
 * the index holds, read from the end of the log, however long its history. Scratch, like the
 * rest: a pair holds a few valid facts at most.
 */
let pairDocs = new Int32Array(64);

const validDocsOfPair = (store: FactStore, pair: string): number => {
  const log = PMap.get(store.pairs, pair);
  if (log === undefined) return 0;
  const { assertions } = log;
  const latest = assertions[assertions.length - 1]?.validFrom;
  let count = 0;
  for (let i = assertions.length - 1; i >= 0 && assertions[i]!.validFrom === latest; i -= 1) {
    const doc = indexedDocument(store.index, assertions[i]!);
    if (doc < 0) continue;
    if (count === pairDocs.length) {
      const grown = new Int32Array(2 * count);
      grown.set(pairDocs);
      pairDocs = grown;
    }
    pairDocs[count++] = doc;
  }
  return count;
};

/** Describes the valid facts of a pair of the context not described yet (a file fact's context is `score`). */
const describePairFacts = (store: FactStore, pass: Pass, pair: string, score: number): void => {
  const { docs } = store.index;
  for (let i = 0, count = validDocsOfPair(store, pair); i < count; i += 1) {
    const doc = pairDocs[i]!;
    if (specialMark[doc] !== 0) continue;
    const fact = getAt(docs, doc)!;
    describe(pass, doc, fact, isFileFact(fact) ? score : factContext(pass.table, fact));
  }
};

/**
 * Describes the valid facts of the pass's co-changed files not described yet (with no context:
 * the facts of the context's tasks and pairs are described first), and lists each file fact
 * among them, described now or before, with its co-change score.
 */
const describeCoChanged = (store: FactStore, pass: Pass): void => {
  const { docs } = store.index;
  coChangedCount = 0;
  pass.coChange.forEach((score, pair) => {
    for (let i = 0, count = validDocsOfPair(store, pair); i < count; i += 1) {
      const doc = pairDocs[i]!;
      const fact = getAt(docs, doc)!;
      if (specialMark[doc] === 0) describe(pass, doc, fact, 0);
      if (!isFileFact(fact)) continue;
      coChangedDocs[coChangedCount] = doc;
      coChangedScores[coChangedCount++] = score;
    }
  });
};

/**
 * Describes the facts with a task context (of a file a best-matching task touched, then of such
 * a task) and those of a named file. A pair's every valid fact is described through it, and a
 * task's through it, so a fact described after those two loops (here, or of a recent task or a
 * co-changed file) has no context: a file fact's pair is not the context's, nor is another
 * fact's task.
 */
const describeContextFacts = (store: FactStore, pass: Pass): void => {
  const { index } = store;
  pass.table.byPair.forEach((score, pair) => describePairFacts(store, pass, pair, score));
  for (const taskId of pass.table.byTask.keys()) describeTaskFacts(store, pass, taskId);
  for (const path of pass.plan.paths) {
    const named = PMap.get(index.names, fileNameOf(path));
    if (named !== undefined)
      forEachPosting(named, (doc) => {
        if (specialMark[doc] === 1) return;
        const fact = getAt(index.docs, doc);
        if (fact !== undefined && namesSubject([path], fact.subject)) describe(pass, doc, fact, 0);
      });
  }
};

/**
 * How many of the special list each pass of one query has: the facts of its context, of the
 * files it names and of the recent tasks first (the passes share the context table, the plan
 * and the recent tasks, so they are found and described once), then those of the co-changed
 * files (in the last pass). The recent tasks' facts get their recency in the last pass only,
 * but are special in the first too: the query phase then reads their query terms in full, and
 * the last pass need not seek them in every list of the query again.
 */
const specialFactsOf = (store: FactStore, recent: ReadonlyMap<string, number>): ((pass: Pass) => number) => {
  let shared = -1;
  return (pass) => {
    describedRecency = recent;
    if (shared < 0) {
      describeContextFacts(store, pass);
      for (const taskId of recent.keys()) describeTaskFacts(store, pass, taskId);
      shared = specialCount;
    }
    describeCoChanged(store, pass);
    return specialCount;
  };
};

/**
 * The prior of every combination of flags, by the values of the priors (each query resolves its
 * own ranking object, most often with the same numbers); a few sets of priors are kept.
 */
const priorTablesCache = new Map<string, { lower: Float64Array; upper: Float64Array }>();
const PRIOR_NAMES = [...PRIOR_CLASSES, 'duplicate'] as const;
/** Every combination of prior flags. */
const FLAG_COMBINATIONS = 1 << PRIOR_CLASSES.length;

const priorTables = (priors: RankingPriors): { lower: Float64Array; upper: Float64Array } => {
  const key = PRIOR_NAMES.map((name) => priors[name]).join(',');
  let tables = priorTablesCache.get(key);
  if (tables === undefined) {
    tables = { lower: new Float64Array(FLAG_COMBINATIONS), upper: new Float64Array(FLAG_COMBINATIONS) };
    for (let flags = 0; flags < FLAG_COMBINATIONS; flags += 1) {
      tables.upper[flags] = priorBound(flags, priors);
      tables.lower[flags] = Math.min(priorValue(flags, priors, false), priorValue(flags, priors, true));
    }
    if (priorTablesCache.size >= 32) priorTablesCache.clear();
    priorTablesCache.set(key, tables);
  }
  return tables;
};

/**
 * One top-k search: the best so far, and a cheap way to turn most candidates away. `quickTotal`
 * adds a fact's numbers exactly as `combineScore` does, with the largest prior its flags allow
 * (the exact prior, unless an issue's duplicate prior is the higher one), so a candidate whose
 * quick total is below the k-th best is turned away without building its score parts.
 */
class Search {
  readonly best: Best;
  /** Per prior flags: the exact prior, or for an issue the lower (`lower`) and the higher (`upper`) of its two. */
  readonly lower: Float64Array;
  readonly upper: Float64Array;

  constructor(
    readonly store: FactStore,
    readonly settings: Settings,
    readonly pass: Pass,
    readonly firstPass: boolean,
  ) {
    this.best = new Best(Math.min(pass.k, store.index.nextDoc));
    ({ lower: this.lower, upper: this.upper } = priorTables(pass.plan.ranking.priors));
  }

  /** The largest prior of a fact with these flags. */
  priorOf(flags: number): number {
    return this.upper[flags]!;
  }

  quickTotal(
    weights: ReadonlyArray<number | undefined>,
    flags: number,
    context: number,
    extra: number,
    named: boolean,
  ): number {
    const { terms, queryTerms, plan, scale } = this.pass;
    let query = 0;
    let feedback = 0;
    for (let i = 0; i < terms.length; i += 1) {
      const stored = weights[i];
      if (stored === undefined) continue;
      const { multiplier, idf } = terms[i]!;
      const contribution = multiplier * idf * postingWeight(stored);
      if (i < queryTerms) query += contribution;
      else feedback += contribution;
    }
    const match = query + feedback + context;
    const base = match === 0 && isConventionFlags(flags) ? plan.ranking.conventionBase * scale : 0;
    const boost = match > 0 && named ? plan.ranking.exactFileBoost : 0;
    return (match + extra + base) * this.priorOf(flags) + boost;
  }

  /** True when a candidate with this quick total could still enter the best k. */
  mayEnter(quick: number): boolean {
    return !this.best.full || quick * SLACK >= this.best.threshold;
  }

  /** Scores a fact (with these prior flags) exactly from its stored weights and offers it; true when it entered. */
  offer(fact: SessionFact, flags: number, weights: ReadonlyArray<number | undefined>, known?: Extras): boolean {
    const { store, settings, pass, firstPass } = this;
    const extras = known ?? {
      context: factContext(pass.table, fact),
      recency: pass.recency.get(fact.sourceTaskId) ?? 0,
      coChange: factCoChange(pass, fact),
    };
    const parts = combineScore(pass, fact, weights, extras, repeatsConvention(store, fact), false, flags);
    return filterReason(settings, fact, parts, firstPass) === undefined && this.best.offer({ fact, parts });
  }
}

/** When each convention of a block was asserted, by position (a frozen block and the facts it names never change). */
const blockTimesCache = new WeakMap<ReadonlyArray<number>, Float64Array>();

const blockTimes = (store: FactStore, block: ReadonlyArray<number>): Float64Array => {
  let times = blockTimesCache.get(block);
  if (times === undefined) {
    times = new Float64Array(block.length / 2);
    for (let j = 0; j < block.length; j += 2) times[j / 2] = getAt(store.index.docs, block[j]!)?.validFrom ?? NaN;
    // A block a mutation run still owns may change in place: only a frozen one is remembered.
    if (Object.isFrozen(block)) blockTimesCache.set(block, times);
  }
  return times;
};

/**
 * The conventions the pass's terms do not match (eligible all the same, at their base). Each
 * scores its base times its prior, known from the flags its posting carries, so most are turned
 * away without reading the fact. Once the best k are full, one at the k-th best score (the
 * common case: they all score alike) is settled by when it was asserted, read from a per-block
 * table instead of from the fact.
 */
const offerUnmatchedConventions = (search: Search, matched: Uint8Array): void => {
  const { store, best } = search;
  const { ranking } = search.pass.plan;
  // Every unmatched convention scores at most its base times the largest prior a convention can get.
  const ceiling =
    ranking.conventionBase * search.pass.scale * ranking.priors.convention * maxPriorBound(ranking.priors);
  if (best.full && ceiling * SLACK < best.threshold) return;
  const none: Array<number | undefined> = [];
  const quick = new Float64Array(FLAG_COMBINATIONS).fill(NaN);
  // Newest documents first: when they are also the most recent facts, the first k take the places.
  const blocks = postingBlocks(store.index.conventions);
  for (let b = blocks.length - 1; b >= 0; b -= 1) {
    const block = blocks[b]!;
    let times: Float64Array | undefined;
    for (let j = block.length - 2; j >= 0; j -= 2) {
      const doc = block[j]!;
      if (matched[doc] === 1) continue;
      const flags = postingFlagsOf(block[j + 1]!);
      if (Number.isNaN(quick[flags]!)) quick[flags] = search.quickTotal(none, flags, 0, 0, false);
      const total = quick[flags]!;
      if (!search.mayEnter(total)) continue;
      // Without an issue's duplicate prior the quick total is the exact score, so the rank order decides now.
      if (best.full && !hasIssueFlag(flags)) {
        times ??= blockTimes(store, block);
        if (best.refuses(total, times[j / 2]!)) continue;
      }
      const fact = getAt(store.index.docs, doc);
      if (fact !== undefined) search.offer(fact, flags, none);
    }
  }
};

/**
 * Accumulators, by document, in scratch arrays reused across queries (retrieval is
 * synchronous): per document its state bits, its prior flags and its term sum so far, and for
 * a special fact what it gets besides its terms (context, recency and co-change). Each population (the
 * facts that are not conventions, and the conventions) lists the documents it opened. Opening
 * one writes three numbers, dropping one clears its state: the arrays are only ever reset
 * where a query wrote them.
 */
const OPEN = 1;
/** Found directly (context, a named file, a recent task, a co-changed file): never dropped. */
const SPECIAL = 2;
/** The query names the fact's file. */
const NAMED = 4;
/** Whether the fact passes the filters (tags, own task) is known, and whether it does. */
const CHECKED = 8;
const ELIGIBLE = 16;
/**
 * The sum lacks the query's own terms: the query phase dropped the fact (or never opened it),
 * so they add less than that phase's floor (`Phase.partialCap`, priors included).
 */
const PARTIAL = 32;

let docState = new Uint8Array(1024);
let docFlags = new Uint16Array(1024);
let docSum = new Float64Array(1024);
let docContext = new Float64Array(1024);
let docRecency = new Float64Array(1024);
let docCoChange = new Float64Array(1024);
/**
 * Which of the pass's first MASKED_TERMS terms a document's sum holds, one bit per term: exact
 * scoring then looks up only those terms' weights (a fact holds a few of a query's terms), not
 * every term's. Complete for every open document: a fact a list's admission floor turns away
 * is never opened by a later list of the phase (lists come by descending bound, so what it
 * could still get there is less than it could before). Kept only for a query whose own terms'
 * lists hold at most TRACKED_POSTINGS postings (see `Population.tracksTerms`).
 */
let docTerms = new Int32Array(1024);
/**
 * Past this many postings in a query's own lists, the bits cost more than the lookups they
 * spare: each list read in full is read a second time to set them, and exact scoring looks up
 * a few terms for about a hundred candidates (measured: a 30-word store of 100,000 facts, about
 * 90,000 postings a query, 2 to 3% slower with the bits; stores of 1,000 facts 3 to 6% faster).
 */
const TRACKED_POSTINGS = 50_000;
let openFacts = new Int32Array(1024);
let openConventions = new Int32Array(1024);
let poolAt = new Int32Array(1024);
/**
 * The conventions a query gave an accumulator (matched by a term, or special), by document (1),
 * listed in `marked[0..markedCount)`: the rest are walked apart, at their base.
 */
let matchedMark = new Uint8Array(1024);
let marked = new Int32Array(1024);
let markedCount = 0;

const markMatched = (doc: number): void => {
  if (matchedMark[doc] === 1) return;
  matchedMark[doc] = 1;
  marked[markedCount++] = doc;
};

/**
 * The documents of the query's own task's valid facts (1), which no answer holds, listed in
 * `owned[0..ownedCount)`: the index knows them by task, so eligibility reads no fact.
 */
let ownMark = new Uint8Array(1024);
let owned = new Int32Array(1024);
let ownedCount = 0;

const markOwnTask = (store: FactStore, taskId: string): void => {
  const task = PMap.get(store.index.tasks, taskId);
  if (task !== undefined)
    PMap.forEach(task.facts, (entry) => {
      const doc = entryDoc(entry);
      ownMark[doc] = 1;
      owned[ownedCount++] = doc;
    });
};

const clearOwnTask = (): void => {
  for (let i = 0; i < ownedCount; i += 1) ownMark[owned[i]!] = 0;
  ownedCount = 0;
};

const ensureScratch = (documents: number): void => {
  if (docState.length >= documents) return;
  const size = Math.max(documents, 2 * docState.length);
  docState = new Uint8Array(size);
  docFlags = new Uint16Array(size);
  docSum = new Float64Array(size);
  docContext = new Float64Array(size);
  docRecency = new Float64Array(size);
  docCoChange = new Float64Array(size);
  docTerms = new Int32Array(size);
  openFacts = new Int32Array(size);
  openConventions = new Int32Array(size);
  poolAt = new Int32Array(size);
  matchedMark = new Uint8Array(size);
  ownMark = new Uint8Array(size);
  owned = new Int32Array(size);
  marked = new Int32Array(size);
  specialMark = new Uint8Array(size);
  specialDocs = new Int32Array(size);
  specialContexts = new Float64Array(size);
  specialRecencies = new Float64Array(size);
  specialFlags = new Uint16Array(size);
  specialNamed = new Uint8Array(size);
  coChangedDocs = new Int32Array(size);
  coChangedScores = new Float64Array(size);
};

/**
 * The k largest lower bounds seen, one per document: its smallest is a score the k-th best is
 * sure to reach. A document's bound only grows, so an older, smaller value stays a valid bound.
 */
class Pool {
  private readonly docs: number[] = [];
  private readonly values: number[] = [];
  private leastAt = 0;
  /** The k-th largest bound, or -Infinity until there are k: a value must exceed it to matter. */
  least = -Infinity;

  constructor(private readonly k: number) {}

  /** The k-th largest bound (0 until there are k). */
  get threshold(): number {
    return Math.max(0, this.least);
  }

  /** Moves every bound into `into` (a pool of the same query), leaving this one empty. */
  moveTo(into: Pool): void {
    this.clear();
    this.docs.forEach((doc, i) => into.offer(doc, this.values[i]!));
  }

  offer(doc: number, value: number): void {
    const at = poolAt[doc]! - 1;
    if (at >= 0) {
      if (value <= this.values[at]!) return;
      this.values[at] = value;
      if (this.docs.length < this.k || at !== this.leastAt) return;
    } else if (this.docs.length < this.k) {
      poolAt[doc] = this.docs.push(doc);
      this.values.push(value);
      if (this.docs.length < this.k) return;
    } else {
      poolAt[this.docs[this.leastAt]!] = 0;
      this.docs[this.leastAt] = doc;
      this.values[this.leastAt] = value;
      poolAt[doc] = this.leastAt + 1;
    }
    let leastAt = 0;
    for (let i = 1; i < this.values.length; i += 1) if (this.values[i]! < this.values[leastAt]!) leastAt = i;
    this.leastAt = leastAt;
    this.least = this.values[leastAt]!;
  }

  clear(): void {
    for (const doc of this.docs) poolAt[doc] = 0;
  }
}

interface List {
  /** The term's position in the pass. */
  readonly at: number;
  /** Its multiplier times its idf: a stored weight w adds factor x w / 1000. */
  readonly factor: number;
  /** The most it adds to a fact's relevance (before priors). */
  readonly bound: number;
  readonly postings: Postings;
}

/** The lists of a population for the pass's terms from `from` on, by descending bound. */
const listsOf = (pass: Pass, from: number, to: number, conventions: boolean): List[] => {
  const lists: List[] = [];
  for (let at = from; at < to; at += 1) {
    const planned = pass.terms[at]!;
    const postings = conventions ? planned.conventions : planned.postings;
    if (postings === undefined) continue;
    const factor = planned.multiplier * planned.idf;
    const bound = factor * postingWeight(conventions ? planned.conventionsMax : planned.postingsMax);
    if (bound > 0) lists.push({ at, factor, bound, postings });
  }
  return lists.sort((a, b) => b.bound - a.bound || a.at - b.at);
};

/** One population's accumulators: the documents it opened (`open[0..used)`), kept across the phases of a query. */
class Population {
  used = 0;
  constructor(
    readonly conventions: boolean,
    readonly open: Int32Array,
    /** Whether its documents' term bits are kept (`docTerms`): decided once for every phase of the query. */
    readonly tracksTerms: boolean,
  ) {}
}

/**
 * One phase of a query: the terms it reads (`search.pass`'s from `from` on), and the k largest
 * lower bounds it has seen. The query phase of a two-pass query reads the query's own terms
 * with k the larger of the two passes' counts: the last pass scores each fact at least as high
 * as the first (it only adds feedback, recency, co-change and a base), so its floor holds for both.
 * The facts it keeps have their query sums complete, and every fact it drops scores less than
 * that floor from them. The last pass's phase then either reads only the feedback words' lists
 * (`from` past the query's terms, that floor as `partialCap`): a fact the query phase did not
 * keep, opened there or special, is PARTIAL until its query sum is completed; or it reads every
 * list again from the start, its pool seeded with the query phase's bounds (see `rankPasses`).
 */
class Phase {
  readonly pool: Pool;
  constructor(
    readonly search: Search,
    /** The first of the pass's terms this phase reads. */
    readonly from: number,
    /** Whether the search's own k-th best may prune: only in the last pass, which nothing follows. */
    readonly final: boolean,
    k: number,
    /** What the terms before `from` add at most to a PARTIAL fact's score (priors included). */
    readonly partialCap: number,
  ) {
    this.pool = new Pool(k);
  }

  /** A score the k-th best is sure to reach, less the rounding margin: facts whose bound is below it are out. */
  floor(): number {
    const best = this.search.best;
    return Math.max(this.pool.threshold, this.final && best.full ? best.threshold : 0) / SLACK;
  }
}

/**
 * The candidates a phase scores exactly, as a max-heap by bound in scratch arrays: the walk
 * takes them highest bound first and mostly stops after a few dozen, so they are not sorted.
 */
let candidateDocs = new Int32Array(1024);
let candidateBounds = new Float64Array(1024);

/** Adds a candidate to the heap of `count`; returns the new count. */
const pushCandidate = (count: number, doc: number, bound: number): number => {
  if (count === candidateDocs.length) {
    const docs = new Int32Array(2 * count);
    const bounds = new Float64Array(2 * count);
    docs.set(candidateDocs);
    bounds.set(candidateBounds);
    candidateDocs = docs;
    candidateBounds = bounds;
  }
  let at = count;
  while (at > 0) {
    const parent = (at - 1) >> 1;
    if (candidateBounds[parent]! >= bound) break;
    candidateDocs[at] = candidateDocs[parent]!;
    candidateBounds[at] = candidateBounds[parent]!;
    at = parent;
  }
  candidateDocs[at] = doc;
  candidateBounds[at] = bound;
  return count + 1;
};

/** Removes the top of the heap of `count` candidates. */
const popCandidate = (count: number): void => {
  const n = count - 1;
  const doc = candidateDocs[n]!;
  const bound = candidateBounds[n]!;
  let at = 0;
  for (;;) {
    const left = 2 * at + 1;
    if (left >= n) break;
    const child = left + 1 < n && candidateBounds[left + 1]! > candidateBounds[left]! ? left + 1 : left;
    if (candidateBounds[child]! <= bound) break;
    candidateDocs[at] = candidateDocs[child]!;
    candidateBounds[at] = candidateBounds[child]!;
    at = child;
  }
  candidateDocs[at] = doc;
  candidateBounds[at] = bound;
};

/** The open accumulators' documents, sorted, for seeking them in a list (scratch reused across lists and queries). */
let sortedScratch = new Int32Array(1024);

/** The bit of `docTerms` for the pass's term at `at` (none past MASKED_TERMS: then nothing reads the bits). */
const termBit = (at: number): number => (at < MASKED_TERMS ? 1 << at : 0);

/**
 * Reads one population's lists of a phase, term at a time, by MaxScore (see the top of this
 * file), then scores exactly, for the phase's search, every accumulator whose bound can still
 * reach the k-th best. Accumulators the phase leaves open keep their sums for the next phase.
 */
const accumulate = (phase: Phase, population: Population): void => {
  const { search, pool, partialCap } = phase;
  const { pass, store, settings } = search;
  const { conventions } = population;
  const { ranking } = pass.plan;
  const lists = listsOf(pass, phase.from, pass.terms.length, conventions);
  // above[i]: what lists i, i+1, ... can add at most (before priors).
  const above: number[] = new Array<number>(lists.length + 1).fill(0);
  for (let i = lists.length - 1; i >= 0; i -= 1) above[i] = above[i + 1]! + lists[i]!.bound;

  const { docs } = store.index;
  // Locals, not the module's bindings, in the loops below.
  const state = docState;
  const flagsOf = docFlags;
  const sums = docSum;
  const contexts = docContext;
  const recencies = docRecency;
  const coChanges = docCoChange;
  const terms = docTerms;
  const tracking = population.tracksTerms;
  // Without a bit for every term, exact scoring looks every term up.
  const masked = tracking && pass.terms.length <= MASKED_TERMS;
  const { open } = population;
  const { lower, upper } = search;
  // The largest prior a fact of the population can get (a convention's own prior included).
  const topPrior = maxPriorBound(ranking.priors) * (conventions ? Math.max(1, ranking.priors.convention) : 1);
  const base = conventions ? ranking.conventionBase * pass.scale : 0;
  const boost = ranking.exactFileBoost;
  let used = population.used;

  const own = ownMark;
  const anyTag = settings.wanted.size === 0;
  /**
   * True when the fact of `doc` passes the filters (tags, own task): without tags, by the marks
   * of the query's own task's documents, without reading the fact (at 100,000 facts, reading it
   * is a cache miss for every fact a list lifts into the pool); with tags, checked once, when it
   * matters.
   */
  const eligible = (doc: number): boolean => {
    if (anyTag) return own[doc] === 0;
    const known = state[doc]!;
    if ((known & CHECKED) === 0) {
      const fact = getAt(docs, doc);
      const passes = fact !== undefined && fact.tags.some((tag) => settings.wanted.has(tag)) && own[doc] === 0;
      state[doc] = known | CHECKED | (passes ? ELIGIBLE : 0);
      return passes;
    }
    return (known & ELIGIBLE) !== 0;
  };

  /** A score the fact of `doc` is sure to reach (its base and the boost aside, unless certain). */
  const lowerBound = (doc: number): number => {
    const st = state[doc]!;
    if ((st & SPECIAL) === 0) return sums[doc]! * lower[flagsOf[doc]!]!;
    const matched = sums[doc]! + contexts[doc]!;
    return (
      (matched + recencies[doc]! + coChanges[doc]!) * lower[flagsOf[doc]!]! +
      ((st & NAMED) !== 0 && matched > 0 ? boost : 0)
    );
  };

  /** The most the fact of `doc` can score once its terms are all read (a convention's base only when nothing may match). */
  const upperBound = (doc: number): number => {
    const st = state[doc]!;
    const special = (st & SPECIAL) !== 0;
    const partial = (st & PARTIAL) !== 0;
    const matched = special ? sums[doc]! + contexts[doc]! : sums[doc]!;
    return (
      (matched + (special ? recencies[doc]! + coChanges[doc]! : 0) + (matched > 0 && !partial ? 0 : base)) *
        upper[flagsOf[doc]!]! +
      ((st & NAMED) !== 0 ? boost : 0) +
      (partial ? partialCap : 0)
    );
  };

  const consider = (doc: number): void => {
    const value = lowerBound(doc);
    if (value > 0 && value >= settings.minScore && value > pool.least && eligible(doc)) pool.offer(doc, value);
  };

  /**
   * Drops the accumulators (special ones aside) among the first `count` that cannot reach `floor`
   * with all that lists `next`... can add; returns how many are left (passed in and out, the
   * count stays a plain local of the hot loops instead of a variable the closure shares).
   */
  const prune = (count: number, floor: number, next: number): number => {
    const rest = above[next]!;
    let kept = 0;
    for (let i = 0; i < count; i += 1) {
      const doc = open[i]!;
      const st = state[doc]!;
      if (
        (st & SPECIAL) === 0 &&
        ((sums[doc]! + rest) * upper[flagsOf[doc]!]! + ((st & PARTIAL) !== 0 ? partialCap : 0)) * SLACK < floor
      )
        state[doc] = 0;
      else open[kept++] = doc;
    }
    return kept;
  };

  /**
   * Adds the query phase's terms to the PARTIAL facts among the first `count` (seeking each in
   * those lists, in document order), so that their bounds are exact again; returns `count`.
   */
  const completePartial = (count: number): number => {
    const partial: number[] = [];
    for (let i = 0; i < count; i += 1) if ((state[open[i]!]! & PARTIAL) !== 0) partial.push(open[i]!);
    if (partial.length === 0) return count;
    partial.sort((a, b) => a - b);
    for (const { at, postings, factor } of listsOf(pass, 0, phase.from, conventions)) {
      const cursor = new PostingsCursor(postings);
      const bit = termBit(at);
      for (const doc of partial) {
        cursor.seek(doc);
        if (cursor.doc === Infinity) break;
        if (cursor.doc !== doc) continue;
        sums[doc] = sums[doc]! + (factor / 1000) * postingWeightOf(cursor.value);
        if (tracking) terms[doc] = terms[doc]! | bit;
      }
    }
    for (const doc of partial) {
      state[doc] = state[doc]! & ~PARTIAL;
      consider(doc);
    }
    return count;
  };

  try {
    for (let i = 0; i < used; i += 1) consider(open[i]!);

    let admitting = true;
    /** The open accumulators' documents in order, once no accumulator is opened any more. */
    let sorted: Int32Array | undefined;
    for (let i = 0; i < lists.length; i += 1) {
      const { at, postings, factor } = lists[i]!;
      const bit = termBit(at);
      if (i > 0) {
        const floor = phase.floor();
        if (admitting && (above[i]! * topPrior + partialCap) * SLACK < floor) admitting = false;
        // Once no accumulator opens, each list read lowers what the rest can add: drop those that can no longer make it.
        if (!admitting) {
          const before = used;
          used = prune(used, floor, i);
          if (used !== before) sorted = undefined;
        }
      }
      const scale = factor / 1000;
      // Every posting of a convention is read, to mark it matched (the unmatched are weighed apart).
      if (!admitting && !conventions && used * 8 < postingsSize(postings)) {
        // Few facts to complete: seek each one in the list, in document order.
        if (sorted === undefined) {
          if (sortedScratch.length < used) sortedScratch = new Int32Array(Math.max(used, 2 * sortedScratch.length));
          sortedScratch.set(open.subarray(0, used));
          sorted = sortedScratch.subarray(0, used).sort();
        }
        const cursor = new PostingsCursor(postings);
        for (const doc of sorted) {
          cursor.seek(doc);
          if (cursor.doc === Infinity) break;
          if (cursor.doc !== doc) continue;
          sums[doc] = sums[doc]! + scale * postingWeightOf(cursor.value);
          if (tracking) terms[doc] = terms[doc]! | bit;
          consider(doc);
        }
        continue;
      }
      // A fact first seen here gets at most its weight here and all the later lists can add:
      // one that cannot reach the k-th best even so is not opened. Should a later list open
      // it, its partial sum is still a lower bound, and the bounds it gets can only turn it
      // away, which it deserves.
      const admitFloor = phase.floor();
      const later = above[i + 1]!;
      const openedBefore = used;
      for (const list of listChunks(postings))
        for (let j = 0; j < list.length; j += 2) {
          const doc = list[j]!;
          const st = state[doc]!;
          let sum: number;
          if (st === 0) {
            // After a query phase, a fact's part of its terms is unknown (a convention's only if one matched it).
            const partial = partialCap > 0 && (!conventions || matchedMark[doc] === 1);
            if (conventions) markMatched(doc);
            if (!admitting) continue;
            const value = list[j + 1]!;
            const flags = postingFlagsOf(value);
            sum = scale * postingWeightOf(value);
            if (((sum + later) * upper[flags]! + partialCap) * SLACK < admitFloor) continue;
            state[doc] = partial ? OPEN | PARTIAL : OPEN;
            flagsOf[doc] = flags;
            open[used++] = doc;
          } else sum = sums[doc]! + scale * postingWeightOf(list[j + 1]!);
          sums[doc] = sum;
          if (sum * lower[flagsOf[doc]!]! > pool.least || (st & SPECIAL) !== 0) consider(doc);
        }
      // The term bits, in a pass of their own over the list, so that the loop above stays as lean
      // without them: the documents this list opened start with none, then every open one holds it.
      if (tracking) {
        for (let o = openedBefore; o < used; o += 1) terms[open[o]!] = 0;
        for (const list of listChunks(postings))
          for (let j = 0; j < list.length; j += 2) {
            const doc = list[j]!;
            if (state[doc] !== 0) terms[doc] = terms[doc]! | bit;
          }
      }
    }

    if (phase.partialCap > 0) used = completePartial(prune(used, phase.floor(), lists.length));

    // Every fact whose upper bound can reach the k-th best is scored exactly, the highest bound
    // first (the k-th best rises soonest, and the first bound it turns away ends the walk); the
    // rest are dropped, unless special (a later phase may add to them).
    const floor = phase.floor();
    // Scores are never negative, so a bound of 0 is the exact score, and only a convention of
    // the last pass may enter with it (`filterReason`): the special facts no term or extra
    // reaches (most of the recent tasks' facts in a first pass) are not scored one by one.
    const zeroEnters = conventions && !search.firstPass;
    let candidates = 0;
    let kept = 0;
    for (let i = 0; i < used; i += 1) {
      const doc = open[i]!;
      const bound = upperBound(doc);
      if ((bound * SLACK < floor && (state[doc]! & SPECIAL) === 0) || !eligible(doc)) {
        state[doc] = 0;
        continue;
      }
      open[kept++] = doc;
      if (bound * SLACK >= floor && (bound > 0 || zeroEnters) && search.mayEnter(bound))
        candidates = pushCandidate(candidates, doc, bound);
    }
    const lookup = candidates === 0 ? undefined : termLists(pass, conventions);
    for (let left = candidates; left > 0; left -= 1) {
      const doc = candidateDocs[0]!;
      const bound = candidateBounds[0]!;
      popCandidate(left);
      if (!search.mayEnter(bound)) break;
      const fact = getAt(docs, doc);
      if (fact === undefined) continue;
      const st = state[doc]!;
      const weights = storedWeights(lookup!, doc, weightsScratch, masked ? terms[doc]! : -1);
      const isSpecial = (st & SPECIAL) !== 0;
      const context = isSpecial ? contexts[doc]! : 0;
      const recency = isSpecial ? recencies[doc]! : 0;
      const coChange = isSpecial ? coChanges[doc]! : 0;
      if (search.mayEnter(search.quickTotal(weights, flagsOf[doc]!, context, recency + coChange, (st & NAMED) !== 0)))
        search.offer(fact, flagsOf[doc]!, weights, { context, recency, coChange });
    }
    used = kept;
  } finally {
    population.used = used;
  }
};

/**
 * Gives the special facts of a pass accumulators (or, those a phase kept, their extras of this
 * pass); `partial` after a query phase whose sums the pass reuses without reading its lists.
 */
const seedSpecial = (pass: Pass, count: number, populations: ReadonlyArray<Population>, partial: boolean): void => {
  const { recency } = pass;
  for (let i = 0; i < count; i += 1) {
    const flags = specialFlags[i]!;
    const population = populations[isConventionFlags(flags) ? 1 : 0]!;
    const doc = specialDocs[i]!;
    const st = docState[doc]!;
    const kept = (st & OPEN) !== 0;
    // After a query phase, one it did not keep has its query sum unknown (a convention only if a term matched it).
    const unknown = partial && (!population.conventions || matchedMark[doc] === 1);
    docState[doc] = (kept ? st : OPEN | (unknown ? PARTIAL : 0)) | SPECIAL | (specialNamed[i] === 1 ? NAMED : 0);
    if (population.conventions) markMatched(doc);
    if (!kept) {
      docFlags[doc] = flags;
      docSum[doc] = 0;
      docTerms[doc] = 0;
      population.open[population.used++] = doc;
    }
    docContext[doc] = specialContexts[i]!;
    docRecency[doc] = recency.size === 0 ? 0 : specialRecencies[i]!;
    docCoChange[doc] = 0;
  }
  // The co-changed files' facts (none but in the last pass) are special, described by this pass or before.
  for (let i = 0; i < coChangedCount; i += 1) docCoChange[coChangedDocs[i]!] = coChangedScores[i]!;
};

/** The stored weights of the fact being scored exactly (combineScore reads them, nothing keeps them). */
const weightsScratch: Array<number | undefined> = [];

/** Drops every accumulator a query opened. */
const clearPopulations = (populations: ReadonlyArray<Population>): void => {
  for (const population of populations) {
    for (let i = 0; i < population.used; i += 1) docState[population.open[i]!] = 0;
    population.used = 0;
  }
};

/**
 * The last pass's best `settings.maxFacts` candidates, in rank order: exactly what scoring
 * every fact in both passes would rank first. A two-pass query reads the query's own terms
 * once, for both passes (see `Phase`): the first pass's best come from the facts that phase
 * keeps, and the last pass then reads only the feedback words' lists, or every list again when
 * those are long.
 */
export const rankPasses = (store: FactStore, settings: Settings, { first, last, recency }: Passes): Scored[] => {
  const documents = store.index.nextDoc;
  const lastK = Math.min(settings.maxFacts, documents);
  if (!(lastK > 0)) return [];
  ensureScratch(documents);
  let postings = 0;
  for (const term of settings.plan.terms)
    postings +=
      (term.postings === undefined ? 0 : postingsSize(term.postings)) +
      (term.conventions === undefined ? 0 : postingsSize(term.conventions));
  const tracksTerms = postings <= TRACKED_POSTINGS;
  const populations = [
    new Population(false, openFacts, tracksTerms),
    new Population(true, openConventions, tracksTerms),
  ];
  const specialFacts = specialFactsOf(store, recency);
  const run = (phase: Phase): void => {
    // The facts first, then the conventions: they are fewer, and most are turned away by the
    // floor the facts leave.
    for (const population of populations) accumulate(phase, population);
  };
  try {
    markOwnTask(store, settings.taskId);
    let lastPhase: Phase;
    if (first === undefined) {
      lastPhase = new Phase(new Search(store, settings, last([]), false), 0, true, lastK, 0);
      seedSpecial(lastPhase.search.pass, specialFacts(lastPhase.search.pass), populations, false);
    } else {
      const firstSearch = new Search(store, settings, first, true);
      const queryPhase = new Phase(firstSearch, 0, false, Math.max(firstSearch.best.k, lastK), 0);
      try {
        seedSpecial(first, specialFacts(first), populations, false);
        run(queryPhase);
      } catch (error) {
        queryPhase.pool.clear();
        throw error;
      }
      const lastSearch = new Search(store, settings, last(firstSearch.best.list), false);
      const { pass } = lastSearch;
      const read = (from: number, to: number): { lists: number; postings: number } => {
        const lists = [...listsOf(pass, from, to, false), ...listsOf(pass, from, to, true)];
        return { lists: lists.length, postings: lists.reduce((sum, list) => sum + postingsSize(list.postings), 0) };
      };
      const query = read(0, pass.queryTerms);
      const feedback = read(pass.queryTerms, pass.terms.length);
      // Completing a fact only feedback opened costs a seek in each query list, but most such facts
      // are dropped by their bound before that: every list is read again only when the feedback
      // lists are long enough that the seeks could cost more than twice reading the query lists.
      const reuse = feedback.postings * query.lists < 2 * query.postings;
      if (reuse) {
        lastPhase = new Phase(lastSearch, pass.queryTerms, true, lastK, queryPhase.floor() * SLACK);
        queryPhase.pool.clear();
      } else {
        // The feedback words may lift any fact: every list is read again, from the floor the query phase reached.
        lastPhase = new Phase(lastSearch, 0, true, lastK, 0);
        queryPhase.pool.moveTo(lastPhase.pool);
        clearPopulations(populations);
      }
      seedSpecial(pass, specialFacts(pass), populations, reuse);
    }
    try {
      run(lastPhase);
    } finally {
      lastPhase.pool.clear();
    }
    // The last pass also takes conventions the query does not match (at their base, or at 0,
    // filling places nothing else takes).
    offerUnmatchedConventions(lastPhase.search, matchedMark);
    return lastPhase.search.best.list;
  } finally {
    for (let i = 0; i < markedCount; i += 1) matchedMark[marked[i]!] = 0;
    markedCount = 0;
    clearSpecial();
    clearPopulations(populations);
    clearOwnTask();
  }
};
