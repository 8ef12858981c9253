/**
 * The exact top k of one scoring pass, found through the index. Three kinds of facts:
 *
 * - special facts, few and found directly: those with a task context, the facts of the recent
 *   tasks (continuity), and the facts of a file the query names (boost). Each is scored exactly.
 * - conventions, whose prior raises a score, through postings of their own (they are few): every
 *   matched one is scored exactly, and the unmatched ones are eligible too.
 * - every other fact, through MaxScore over the postings (Turtle and Flood): the terms are taken
 *   in ascending order of their upper bound (the term's largest weight, kept by the index, times
 *   its idf and multiplier, times the largest prior a fact can get). The leading terms whose
 *   bounds add up to less than the k-th best score so far cannot put a fact in the top k on their
 *   own; only facts holding one of the other ("essential") terms are visited, in document
 *   order, and each is completed with the rest only while its bound can still reach the k-th.
 *
 * Pruning only skips facts whose bound is strictly below the k-th best (a tie could still win on
 * recency), and scores are compared as the explaining path computes them, so the result is
 * exactly the first k of `explainRetrieval`'s ranking.
 */
import * as PMap from '../base/persistentMap.js';
import { getAt } from '../base/persistentVector.js';
import type { SessionFact } from '../fact.js';
import type { FactStore } from '../store/state.js';
import {
  forEachPosting,
  postingBlocks,
  type Postings,
  PostingsCursor,
  postingFlagsOf,
  postingsMaxWeight,
  postingsSize,
  postingWeightOf,
} from './index/postings.js';
import { fileNameOf } from './index/searchIndex.js';
import { priorFlags } from './index/priors.js';
import { postingWeight } from './index/weights.js';
import { isConventionFlags, maxPriorBound, namesSubject, priorBound, priorValue, type RankingPriors } from './rank.js';
import {
  byRank,
  combineScore,
  factContext,
  filterReason,
  type ContextTable,
  type Extras,
  type Pass,
  repeatsConvention,
  type Scored,
  type Settings,
  storedWeights,
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

  /** Adds a candidate if it ranks within the best k; true when it did. */
  offer(candidate: Scored): boolean {
    const { list, k } = this;
    if (list.length === k && byRank(candidate, list[k - 1]!) >= 0) return false;
    let at = list.length;
    while (at > 0 && byRank(candidate, list[at - 1]!) < 0) at -= 1;
    list.splice(at, 0, candidate);
    if (list.length > k) list.pop();
    return true;
  }
}

/** The facts of a query found directly through its context table and the files it names, by document. */
const contextFactsCache = new WeakMap<ContextTable, Map<number, SessionFact>>();

const addTaskFacts = (store: FactStore, taskId: string, into: Map<number, SessionFact>): void => {
  const { index } = store;
  const task = PMap.get(index.tasks, taskId);
  if (task === undefined) return;
  PMap.forEach(task.facts, (_true, id) => {
    const doc = PMap.get(index.ids, id);
    const fact = doc === undefined ? undefined : getAt(index.docs, doc);
    if (doc !== undefined && fact !== undefined) into.set(doc, fact);
  });
};

/** The facts with a task context (of a best-matching task, or of a file such a task touched) and those of a named file. */
const contextFacts = (store: FactStore, pass: Pass): Map<number, SessionFact> => {
  const known = contextFactsCache.get(pass.table);
  if (known !== undefined) return known;
  const { index } = store;
  const found = new Map<number, SessionFact>();
  for (const taskId of pass.table.byTask.keys()) addTaskFacts(store, taskId, found);
  for (const pair of pass.table.byPair.keys()) {
    const log = PMap.get(store.pairs, pair);
    if (log === undefined) continue;
    // The pair's valid facts are those of its asserted ids the index holds.
    for (const assertion of log.assertions) {
      const doc = PMap.get(index.ids, assertion.id);
      const valid = doc === undefined ? undefined : getAt(index.docs, doc);
      if (doc !== undefined && valid !== undefined) found.set(doc, valid);
    }
  }
  for (const path of pass.plan.paths) {
    const named = PMap.get(index.names, fileNameOf(path));
    if (named !== undefined)
      forEachPosting(named, (doc) => {
        const fact = getAt(index.docs, doc);
        if (fact !== undefined && namesSubject([path], fact.subject)) found.set(doc, fact);
      });
  }
  contextFactsCache.set(pass.table, found);
  return found;
};

/** The facts of a pass that are found directly: context, named files, and the recent tasks' (continuity). */
const specialFacts = (
  store: FactStore,
  pass: Pass,
): { readonly all: ReadonlyMap<number, SessionFact>; readonly described: ReadonlyArray<SpecialFact> } => {
  const shared = contextFacts(store, pass);
  if (pass.recent.size === 0) return { all: shared, described: describeSpecial(pass, shared) };
  const recent = new Map<number, SessionFact>();
  for (const taskId of pass.recent.keys()) addTaskFacts(store, taskId, recent);
  for (const doc of shared.keys()) recent.delete(doc);
  return {
    all: new Map([...shared, ...recent]),
    described: [...describeSpecial(pass, shared), ...describeSpecial(pass, recent)],
  };
};

/** The prior of every combination of flags, by the priors they were computed for (a query's passes share them). */
const priorTablesCache = new WeakMap<RankingPriors, { lower: Float64Array; upper: Float64Array }>();

const priorTables = (priors: RankingPriors): { lower: Float64Array; upper: Float64Array } => {
  let tables = priorTablesCache.get(priors);
  if (tables === undefined) {
    tables = { lower: new Float64Array(128), upper: new Float64Array(128) };
    for (let flags = 0; flags < 128; flags += 1) {
      tables.upper[flags] = priorBound(flags, priors);
      tables.lower[flags] = Math.min(priorValue(flags, priors, false), priorValue(flags, priors, true));
    }
    priorTablesCache.set(priors, tables);
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
    continuity: number,
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
    return (match + continuity + base) * this.priorOf(flags) + boost;
  }

  /** True when a candidate with this quick total could still enter the best k. */
  mayEnter(quick: number): boolean {
    return !this.best.full || quick * SLACK >= this.best.threshold;
  }

  /** Scores a fact exactly from its stored weights and offers it; true when it entered. */
  offer(fact: SessionFact, weights: ReadonlyArray<number | undefined>, known?: Extras): boolean {
    const { store, settings, pass, firstPass } = this;
    const extras = known ?? {
      context: factContext(pass.table, fact),
      continuity: pass.recent.get(fact.sourceTaskId) ?? 0,
    };
    const parts = combineScore(pass, fact, weights, extras, repeatsConvention(store, fact));
    return filterReason(settings, fact, parts, firstPass) === undefined && this.best.offer({ fact, parts });
  }
}

/** What a special fact brings to any pass of its query besides its terms and continuity. */
interface SpecialFact {
  readonly doc: number;
  readonly fact: SessionFact;
  readonly context: number;
  readonly flags: number;
  readonly named: boolean;
}

/** The per-query part of the special facts, by the map that holds them (both passes of a query share it). */
const specialCache = new WeakMap<ReadonlyMap<number, SessionFact>, SpecialFact[]>();

const describeSpecial = (pass: Pass, special: ReadonlyMap<number, SessionFact>): SpecialFact[] => {
  const known = specialCache.get(special);
  if (known !== undefined) return known;
  const { paths } = pass.plan;
  const described = [...special].map(([doc, fact]) => ({
    doc,
    fact,
    context: factContext(pass.table, fact),
    flags: priorFlags(fact),
    named: paths.length > 0 && namesSubject(paths, fact.subject),
  }));
  specialCache.set(special, described);
  return described;
};

/**
 * The special facts, each scored exactly, in descending order of an upper bound that needs no
 * postings (every term at its bound, plus the fact's context and continuity): once the best k
 * are found, the first fact whose bound cannot reach the k-th ends the walk.
 */
const offerSpecial = (search: Search, special: ReadonlyArray<SpecialFact>): void => {
  const { pass } = search;
  const { ranking } = pass.plan;
  const termBound = pass.terms.reduce((sum, planned) => sum + planned.bound, 0);
  const candidates = special.map((described) => {
    const continuity = pass.recent.get(described.fact.sourceTaskId) ?? 0;
    const base = isConventionFlags(described.flags) ? ranking.conventionBase * pass.scale : 0;
    const bound =
      (termBound + described.context + continuity + base) * search.priorOf(described.flags) +
      (described.named ? ranking.exactFileBoost : 0);
    return { described, continuity, bound };
  });
  candidates.sort((a, b) => b.bound - a.bound || a.described.doc - b.described.doc);
  for (const { described, continuity, bound } of candidates) {
    if (!search.mayEnter(bound)) break;
    const { doc, fact, context, flags, named } = described;
    const weights = storedWeights(pass, doc, isConventionFlags(flags));
    if (search.mayEnter(search.quickTotal(weights, flags, context, continuity, named)))
      search.offer(fact, weights, { context, continuity });
  }
};

/** The conventions the pass's terms do not match (eligible all the same, at their base). */
const offerUnmatchedConventions = (
  search: Search,
  special: ReadonlyMap<number, SessionFact>,
  matched: ReadonlySet<number>,
): void => {
  const { index } = search.store;
  const { ranking } = search.pass.plan;
  // Every unmatched convention scores at most its base times the largest prior a convention can get.
  const ceiling =
    ranking.conventionBase * search.pass.scale * ranking.priors.convention * maxPriorBound(ranking.priors);
  if (search.best.full && ceiling * SLACK < search.best.threshold) return;
  const none: Array<number | undefined> = [];
  PMap.forEach(index.conventions, (_true, id) => {
    const doc = PMap.get(index.ids, id);
    if (doc === undefined || special.has(doc) || matched.has(doc)) return;
    const fact = getAt(index.docs, doc);
    if (fact !== undefined && search.mayEnter(search.quickTotal(none, priorFlags(fact), 0, 0, false)))
      search.offer(fact, none);
  });
};

/**
 * Accumulators of one pass, by slot, in scratch arrays reused across queries (retrieval is
 * synchronous): `slotOf[doc]` is the doc's slot plus one (0: none), and per slot the doc, its
 * sum so far, its prior flags, and whether it is eligible (0 unknown, 1 yes, 2 no).
 */
let slotOf = new Int32Array(1024);
let slotDoc = new Int32Array(1024);
let slotSum = new Float64Array(1024);
let slotFlags = new Uint8Array(1024);
let slotEligible = new Uint8Array(1024);
/** Documents found directly (special facts), marked so that the postings pass skips them. */
let specialMark = new Uint8Array(1024);

const grown = (length: number, needed: number): number => Math.max(needed, 2 * length);

const ensureScratch = (documents: number): void => {
  if (slotOf.length < documents) {
    const size = grown(slotOf.length, documents);
    slotOf = new Int32Array(size);
    specialMark = new Uint8Array(size);
  }
};

const ensureSlots = (slots: number): void => {
  if (slotDoc.length >= slots) return;
  const size = grown(slotDoc.length, slots);
  const copy = <T extends Int32Array | Float64Array | Uint8Array>(from: T, to: T): T => {
    to.set(from);
    return to;
  };
  slotDoc = copy(slotDoc, new Int32Array(size));
  slotSum = copy(slotSum, new Float64Array(size));
  slotFlags = copy(slotFlags, new Uint8Array(size));
  slotEligible = copy(slotEligible, new Uint8Array(size));
};

interface List {
  /** The term's position in the pass. */
  readonly at: number;
  /** Its multiplier times its idf: a stored weight w adds factor x w / 1000. */
  readonly factor: number;
  /** The most it adds to a fact's relevance (before priors). */
  readonly bound: number;
  readonly postings: Postings;
}

/** The k-th largest of `values` (0 when fewer), by a small min-heap. */
class KthLargest {
  private readonly heap: number[] = [];
  constructor(private readonly k: number) {}

  /** The current k-th largest (0 until there are k values). */
  get value(): number {
    return this.heap.length < this.k ? 0 : this.heap[0]!;
  }

  /** True when `value` would change the k-th largest. */
  wouldEnter(value: number): boolean {
    return this.heap.length < this.k || value > this.heap[0]!;
  }

  push(value: number): void {
    const { heap } = this;
    if (heap.length < this.k) {
      heap.push(value);
      for (let i = heap.length - 1; i > 0;) {
        const parent = (i - 1) >> 1;
        if (heap[parent]! <= heap[i]!) break;
        [heap[parent], heap[i]] = [heap[i]!, heap[parent]!];
        i = parent;
      }
      return;
    }
    heap[0] = value;
    for (let i = 0; ;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let least = i;
      if (left < heap.length && heap[left]! < heap[least]!) least = left;
      if (right < heap.length && heap[right]! < heap[least]!) least = right;
      if (least === i) break;
      [heap[least], heap[i]] = [heap[i]!, heap[least]!];
      i = least;
    }
  }
}

/**
 * MaxScore, term at a time (Turtle and Flood): the postings of the facts that are neither special
 * nor conventions are read term by term, in descending order of the terms' upper bounds, each
 * fact's sum gathered in an accumulator. Before each term, the bound of a fact not seen yet is
 * what the remaining terms can add at most, times the largest prior; once that is below the
 * k-th best score the facts seen so far are sure to reach, no new accumulator is opened: the
 * remaining terms only complete the facts already found, by seeking their documents in the
 * postings (skipping whole blocks by their last document) when that reads less than the list.
 * Then every accumulator whose upper bound can still reach the k-th best is scored exactly.
 */
const offerByMaxScore = (
  search: Search,
  special: ReadonlyMap<number, SessionFact>,
  conventions: boolean,
): ReadonlySet<number> => {
  const { pass, best, store, settings } = search;
  const lists: List[] = [];
  pass.terms.forEach((planned, at) => {
    const postings = conventions ? planned.conventions : planned.postings;
    if (postings === undefined) return;
    const factor = planned.multiplier * planned.idf;
    const bound = factor * postingWeight(postingsMaxWeight(postings));
    if (bound > 0) lists.push({ at, factor, bound, postings });
  });
  const matched = new Set<number>();
  if (lists.length === 0) return matched;
  lists.sort((a, b) => b.bound - a.bound || a.at - b.at);
  // above[i]: what lists i, i+1, ... can add at most (before priors).
  const above: number[] = new Array<number>(lists.length + 1).fill(0);
  for (let i = lists.length - 1; i >= 0; i -= 1) above[i] = above[i + 1]! + lists[i]!.bound;

  const { docs } = store.index;
  ensureScratch(store.index.nextDoc);
  for (const doc of special.keys()) specialMark[doc] = 1;
  const { lower, upper } = search;
  const topPrior = maxPriorBound(pass.plan.ranking.priors);
  let used = 0;

  /** True when the fact in `slot` passes the filters (tags, own task): checked once, when it matters. */
  const eligible = (slot: number): boolean => {
    if (slotEligible[slot] === 0) {
      const fact = getAt(docs, slotDoc[slot]!);
      slotEligible[slot] =
        fact !== undefined &&
        (settings.wanted.size === 0 || fact.tags.some((tag) => settings.wanted.has(tag))) &&
        fact.sourceTaskId !== settings.taskId
          ? 1
          : 2;
    }
    return slotEligible[slot] === 1;
  };

  /** A score the k-th best is sure to reach: from the accumulators' sums so far, and the best found directly. */
  const sureThreshold = (): number => {
    const kth = new KthLargest(best.k);
    for (let slot = 0; slot < used; slot += 1) {
      const value = slotSum[slot]! * lower[slotFlags[slot]!]!;
      if (kth.wouldEnter(value) && eligible(slot)) kth.push(value);
    }
    return Math.max(kth.value / SLACK, best.full ? best.threshold : 0);
  };

  /** Adds one term's list to the accumulators: opening new ones while `admit`, else completing the open ones. */
  const accumulate = (postings: Postings, factor: number, admit: boolean): void => {
    const scale = factor / 1000;
    for (const block of postingBlocks(postings))
      for (let i = 0; i < block.length; i += 2) {
        const doc = block[i]!;
        let slot = slotOf[doc]! - 1;
        if (slot < 0) {
          if (!admit || specialMark[doc] === 1) continue;
          slot = used;
          used += 1;
          if (slot >= slotDoc.length) ensureSlots(slot + 1);
          slotOf[doc] = slot + 1;
          slotDoc[slot] = doc;
          slotSum[slot] = 0;
          slotFlags[slot] = postingFlagsOf(block[i + 1]!);
          slotEligible[slot] = 0;
        }
        slotSum[slot] = slotSum[slot]! + scale * postingWeightOf(block[i + 1]!);
      }
  };

  /**
   * Drops the open accumulators that can no longer reach `threshold` even with everything the
   * lists from `next` on can add: fewer facts to complete, so the rest are sought, not read.
   */
  const prune = (threshold: number, next: number): void => {
    let kept = 0;
    for (let slot = 0; slot < used; slot += 1) {
      const doc = slotDoc[slot]!;
      if ((slotSum[slot]! + above[next]!) * upper[slotFlags[slot]!]! * SLACK < threshold) {
        slotOf[doc] = 0;
        continue;
      }
      slotDoc[kept] = doc;
      slotSum[kept] = slotSum[slot]!;
      slotFlags[kept] = slotFlags[slot]!;
      slotEligible[kept] = slotEligible[slot]!;
      slotOf[doc] = kept + 1;
      kept += 1;
    }
    used = kept;
  };

  let admitting = true;
  try {
    for (let i = 0; i < lists.length; i += 1) {
      const { postings, factor } = lists[i]!;
      // Conventions are few: every one the terms match is read (and the rest are known unmatched).
      // The k-th best is worth computing only once the lists read so far could give more than
      // the lists left (every open sum holds only what the lists read so far add).
      if (!conventions && i > 0 && used >= best.k) {
        const rest = above[i]! * topPrior * SLACK;
        if (rest < (above[0]! - above[i]!) * topPrior) {
          const threshold = sureThreshold();
          if (rest < threshold) admitting = false;
          if (!admitting) prune(threshold, i);
        }
      }
      if (!admitting && used * 8 < postingsSize(postings)) {
        // Few facts to complete: seek each one in the list, in document order.
        const sorted = slotDoc.slice(0, used).sort();
        const cursor = new PostingsCursor(postings);
        const scale = factor / 1000;
        for (const doc of sorted) {
          cursor.seek(doc);
          if (cursor.doc === Infinity) break;
          if (cursor.doc === doc) {
            const slot = slotOf[doc]! - 1;
            slotSum[slot] = slotSum[slot]! + scale * postingWeightOf(cursor.value);
          }
        }
      } else accumulate(postings, factor, admitting);
    }
    // Every fact whose upper bound can reach the k-th best, scored exactly.
    const threshold = sureThreshold();
    for (let slot = 0; slot < used; slot += 1) {
      if (slotSum[slot]! * upper[slotFlags[slot]!]! * SLACK < threshold || !eligible(slot)) continue;
      const fact = getAt(docs, slotDoc[slot]!);
      if (fact !== undefined && search.mayEnter(slotSum[slot]! * upper[slotFlags[slot]!]! * SLACK))
        search.offer(fact, storedWeights(pass, slotDoc[slot]!, conventions));
    }
    if (conventions) for (let slot = 0; slot < used; slot += 1) matched.add(slotDoc[slot]!);
    return matched;
  } finally {
    for (let slot = 0; slot < used; slot += 1) slotOf[slotDoc[slot]!] = 0;
    for (const doc of special.keys()) specialMark[doc] = 0;
  }
};

/** The pass's best `pass.k` candidates, in rank order: exactly what scoring every fact would rank first. */
export const topK = (store: FactStore, settings: Settings, pass: Pass, firstPass: boolean): Scored[] => {
  if (!(Math.min(pass.k, store.index.nextDoc) > 0)) return [];
  const search = new Search(store, settings, pass, firstPass);
  const { all: special, described } = specialFacts(store, pass);
  offerSpecial(search, described);
  // The other facts by MaxScore first: conventions are fewer, and most are then turned away by
  // the threshold MaxScore leaves.
  offerByMaxScore(search, special, false);
  const matched = offerByMaxScore(search, special, true);
  // The first pass looks for matches only; the last also takes conventions the query does not
  // match (at their base, or at 0, filling places nothing else takes).
  if (!firstPass) offerUnmatchedConventions(search, special, matched);
  return search.best.list;
};
