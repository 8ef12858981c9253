/**
 * Scoring one fact in one pass of a query: the formula both the index path (topk.ts) and the
 * explaining path (retrieve.ts) use, with the same numbers added in the same order, so they
 * rank exactly alike.
 */
import * as PMap from '../../persistent/persistentMap.js';
import { getAt, type PersistentVector } from '../../persistent/persistentVector.js';
import { isFileFact, type SessionFact } from '../fact.js';
import { type FactStore, pairKey, selectValidFact } from '../store/state.js';
import { selectPairLog } from '../store/write.js';
import type { BudgetSettings } from './budget.js';
import { keptView, listChunks, type Postings, postingValue, postingWeightOf, viewValue } from '../search/postings.js';
import { priorFlags } from '../search/priors.js';
import { postingWeight } from '../search/weights.js';
import { flagPriors, namesSubject, type PlannedTerm, priorValue, type QueryPlan, type ScoreParts } from './rank.js';

/** Why a fact was not injected. */
export type ExclusionReason = 'invalidated' | 'tag' | 'own_task' | 'no_match' | 'max_facts' | 'budget';

/** The query, read once and resolved. */
export interface Settings extends BudgetSettings {
  readonly plan: QueryPlan;
  readonly taskId: string;
  readonly wanted: ReadonlySet<string>;
  readonly minScore: number;
  readonly documents: number;
}

/**
 * One scoring pass of a query: its terms (the query's, then any feedback words), the context
 * table, the recency of recent tasks and the co-change of files (last pass only), the query's
 * score scale, and how many of the best facts it looks for.
 */
export interface Pass {
  readonly plan: QueryPlan;
  readonly terms: ReadonlyArray<PlannedTerm>;
  /** How many of `terms` are the query's own (the rest are feedback words). */
  readonly queryTerms: number;
  readonly table: ContextTable;
  /** Task id -> the recency of its facts (times its weight). */
  readonly recency: ReadonlyMap<string, number>;
  /** File pair key -> its co-change score (times its weight). */
  readonly coChange: ReadonlyMap<string, number>;
  /** The query's own best score (boost aside), from the first pass; 0 in the first pass. */
  readonly scale: number;
  readonly k: number;
}

/** The two passes of a query: the first (the query alone) and the last (everything), with what links them. */
export interface Passes {
  readonly first: Pass | undefined;
  readonly last: (first: ReadonlyArray<Scored>) => Pass;
  /** The recent tasks and the recency the last pass gives their facts: known before the first pass. */
  readonly recency: ReadonlyMap<string, number>;
}

/**
 * Context scores for one query: per task (its prompt and summary, shared out over the task's
 * valid facts), for the `contextTasks` best-matching tasks, and per file pair (the sum over
 * those tasks that asserted a fact about the file, each shared out over the files it changed: a
 * file is described by all the work done on it, and a task that changed twenty files does not
 * lend each of them its whole score).
 */
export interface ContextTable {
  readonly byTask: ReadonlyMap<string, number>;
  readonly byPair: ReadonlyMap<string, number>;
}

/**
 * Puts `entry` in `list`, kept in `order` and at most `limit` long, when it ranks within it;
 * true when it did. For the short lists of the best few (the scan of every entry only compares
 * most of them with the last).
 */
export const offerRanked = <T>(list: T[], entry: T, limit: number, order: (a: T, b: T) => number): boolean => {
  if (list.length >= limit && order(entry, list[limit - 1]!) >= 0) return false;
  let at = list.length;
  while (at > 0 && order(entry, list[at - 1]!) < 0) at -= 1;
  list.splice(at, 0, entry);
  if (list.length > limit) list.pop();
  return true;
};

/**
 * The best `limit` of the scores offered it (ties: the smaller key), in order: a short sorted
 * list in typed scratch, so that a query that offers thousands of scores makes no entry for
 * each and sorts none of them. Reused across queries (retrieval is synchronous): `start`, offer,
 * then `take`.
 */
class Leaders {
  private scores = new Float64Array(64);
  private readonly keys: string[] = [];
  private limit = 0;
  private size = 0;

  start(limit: number): void {
    if (this.scores.length < limit) this.scores = new Float64Array(Math.max(limit, 2 * this.scores.length));
    this.limit = limit;
    this.size = 0;
    this.keys.length = 0;
  }

  /** True when a score is sure to stay out: below the last of a full list. */
  refuses(score: number): boolean {
    return this.size === this.limit && score < this.scores[this.limit - 1]!;
  }

  offer(score: number, key: string): void {
    const { scores, keys, limit } = this;
    let at = this.size;
    while (at > 0 && (score > scores[at - 1]! || (score === scores[at - 1]! && key < keys[at - 1]!))) at -= 1;
    if (at === limit) return;
    for (let j = Math.min(this.size, limit - 1); j > at; j -= 1) {
      scores[j] = scores[j - 1]!;
      keys[j] = keys[j - 1]!;
    }
    scores[at] = score;
    keys[at] = key;
    if (this.size < limit) this.size += 1;
  }

  /** The entries kept, in order; the list is empty after. */
  take(): Array<[string, number]> {
    const entries = this.keys.splice(0, this.size).map((key, i): [string, number] => [key, this.scores[i]!]);
    this.size = 0;
    return entries;
  }
}

const pairLeaders = new Leaders();

/**
 * The `limit` entries of a score map with the highest scores (ties: the smaller key), as a map
 * in that order; the map itself when it holds no more.
 */
export const bestEntries = (scores: Map<string, number>, limit: number): Map<string, number> => {
  if (scores.size <= limit) return scores;
  pairLeaders.start(Math.max(0, Math.floor(limit)));
  scores.forEach((score, key) => pairLeaders.offer(score, key));
  return new Map(pairLeaders.take());
};

/**
 * How many file pairs a query's context reaches at most: the best-scored ones. A task that
 * changed hundreds of files lends each of them a share too small to rank it, and describing
 * them all would cost more than the rest of the query.
 */
export const CONTEXT_PAIRS = 512;

/**
 * Scratch space reused across queries (retrieval is synchronous): the sums by task number, and
 * the numbers of the tasks a query's terms reached.
 */
let sums = new Float64Array(1024);
let reached = new Int32Array(1024);
const taskLeaders = new Leaders();
/** A task's file pairs, read into scratch (see `PMap.keysInto`). */
const touchedPairs: string[] = [];

/**
 * Adds one run of a context term's postings to the sums, appending each task it reaches first
 * to `reached` after the `count` reached before; returns the new count.
 */
const addContextPostings = (list: ArrayLike<number>, idf: number, count: number): number => {
  let at = count;
  for (let i = 0; i < list.length; i += 2) {
    const num = list[i]!;
    const sum = sums[num]!;
    if (sum === 0) reached[at++] = num;
    sums[num] = sum + idf * postingWeight(postingWeightOf(list[i + 1]!));
  }
  return at;
};

/**
 * The `limit` best of the `count` tasks reached (score: the sum times `weight`, above 0; ties to
 * the smaller id), in order. A task's id is read only when its score may enter.
 */
const bestTasks = (
  taskIds: PersistentVector<string>,
  count: number,
  weight: number,
  limit: number,
): Array<[string, number]> => {
  taskLeaders.start(limit);
  for (let t = 0; t < count; t += 1) {
    const num = reached[t]!;
    const score = sums[num]! * weight;
    if (score > 0 && !taskLeaders.refuses(score)) taskLeaders.offer(score, getAt(taskIds, num)!);
  }
  return taskLeaders.take();
};

/**
 * The context table of a query. A task's score is its BM25 against the query, summed in
 * query-term order, then weighted; tasks are summed into file pairs in id order.
 */
export const contextTable = (store: FactStore, plan: QueryPlan): ContextTable => {
  const { index } = store;
  const limit = plan.ranking.contextTasks;
  const byTask = new Map<string, number>();
  const byPair = new Map<string, number>();
  if (plan.contextTerms.length === 0 || limit < 1) return { byTask, byPair };
  if (sums.length < index.nextTask) sums = new Float64Array(Math.max(index.nextTask, 2 * sums.length));
  let count = 0;
  let ranked: Array<[string, number]>;
  try {
    for (const term of plan.contextTerms)
      if (term.postings !== undefined)
        for (const list of listChunks(term.postings)) {
          // A posting reaches at most one task not reached before (its sum is above 0 from then on).
          const most = count + list.length / 2;
          if (reached.length < most) {
            const grown = new Int32Array(Math.max(most, 2 * reached.length));
            grown.set(reached.subarray(0, count));
            reached = grown;
          }
          count = addContextPostings(list, term.idf, count);
        }
    ranked = bestTasks(index.taskIds, count, plan.ranking.contextWeight, Math.min(Math.floor(limit), count));
  } finally {
    // The sums are all 0 between queries, whatever a malformed index throws.
    for (let t = 0; t < count; t += 1) sums[reached[t]!] = 0;
  }
  ranked.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [taskId, score] of ranked) {
    const task = PMap.get(index.tasks, taskId);
    byTask.set(taskId, score / Math.max(1, task === undefined ? 0 : PMap.size(task.facts)));
    if (task === undefined) continue;
    const share = score / Math.max(1, PMap.size(task.touched));
    for (let i = 0, count = PMap.keysInto(task.touched, touchedPairs); i < count; i += 1) {
      const pair = touchedPairs[i]!;
      byPair.set(pair, (byPair.get(pair) ?? 0) + share);
    }
  }
  return { byTask, byPair: bestEntries(byPair, CONTEXT_PAIRS) };
};

/** The context score of a fact: its pair's, for a file fact, else its task's. */
export const factContext = (table: ContextTable, fact: SessionFact): number =>
  (isFileFact(fact) ? table.byPair.get(pairKey(fact.subject, fact.relation)) : table.byTask.get(fact.sourceTaskId)) ??
  0;

/** True when an `issue` fact's text is also a valid `convention` of its subject, asserted with it. */
export const repeatsConvention = (store: FactStore, fact: SessionFact): boolean => {
  if (fact.relation !== 'issue') return false;
  const twin = selectPairLog(store, fact.subject, 'convention')?.assertions.find(
    (assertion) => assertion.validFrom === fact.validFrom && assertion.object === fact.object,
  );
  // The twin's run must be the valid one: the valid record of an id is the assertion that opened its run.
  return twin !== undefined && selectValidFact(store, twin.id)?.validFrom === twin.validFrom;
};

/** What a fact gets besides its terms in a pass. */
export interface Extras {
  readonly context: number;
  readonly recency: number;
  readonly coChange: number;
}

/** The co-change score of a fact in a pass: its pair's, for a file fact. */
export const factCoChange = (pass: Pass, fact: SessionFact): number =>
  pass.coChange.size === 0 || !isFileFact(fact) ? 0 : (pass.coChange.get(pairKey(fact.subject, fact.relation)) ?? 0);

/**
 * A fact's score from its stored term weights (`weights[i]` for `pass.terms[i]`, undefined when
 * it does not hold the term), summed in the pass's term order: the one formula both paths use.
 * Without `detail` (the index path, which only ranks) the parts name no terms and no priors;
 * every number is the same.
 */
export const combineScore = (
  pass: Pass,
  fact: SessionFact,
  weights: ReadonlyArray<number | undefined>,
  extras: Extras,
  duplicate: boolean,
  detail = true,
  /** The fact's prior flags, when the caller knows them (the index path reads them from the postings). */
  flags = priorFlags(fact),
): ScoreParts => {
  const { ranking, paths } = pass.plan;
  // The index path names no terms: it shares one empty list instead of making one per fact.
  const terms: Array<{ term: string; contribution: number }> | undefined = detail ? [] : undefined;
  let query = 0;
  let feedback = 0;
  const planned = pass.terms;
  for (let i = 0; i < planned.length; i += 1) {
    const stored = weights[i];
    if (stored === undefined) continue;
    const { multiplier, idf, term } = planned[i]!;
    const contribution = multiplier * idf * postingWeight(stored);
    if (i < pass.queryTerms) {
      terms?.push({ term, contribution });
      query += contribution;
    } else feedback += contribution;
  }
  const { names, value } = detail
    ? flagPriors(flags, ranking.priors, duplicate)
    : { names: NO_NAMES, value: priorValue(flags, ranking.priors, duplicate) };
  const match = query + feedback + extras.context;
  const base = match === 0 && fact.tags.includes('convention') ? ranking.conventionBase * pass.scale : 0;
  const relevance = match + extras.recency + extras.coChange + base;
  const boost = match > 0 && namesSubject(paths, fact.subject) ? ranking.exactFileBoost : 0;
  return {
    terms: terms ?? NO_TERMS,
    feedback,
    context: extras.context,
    recency: extras.recency,
    coChange: extras.coChange,
    base,
    priors: names,
    prior: value,
    boost,
    total: relevance * value + boost,
  };
};

const NO_NAMES: ReadonlyArray<string> = Object.freeze([]);
const NO_TERMS: ScoreParts['terms'] = Object.freeze([]);

/** The first stage a stored fact fails, given its score; undefined when it is a candidate. */
export const filterReason = (
  settings: Settings,
  fact: SessionFact,
  parts: ScoreParts,
  firstPass: boolean,
): ExclusionReason | undefined => {
  if (fact.validTo !== undefined) return 'invalidated';
  if (settings.wanted.size > 0 && !fact.tags.some((tag) => settings.wanted.has(tag))) return 'tag';
  if (fact.sourceTaskId === settings.taskId) return 'own_task';
  // The first pass looks for matches; the last also keeps conventions the query does not match.
  if (!(parts.total > 0) && (firstPass || !fact.tags.includes('convention'))) return 'no_match';
  if (!firstPass && parts.total < settings.minScore) return 'no_match';
  return undefined;
};

/** A candidate: a fact and its score. */
export interface Scored {
  readonly fact: SessionFact;
  readonly parts: ScoreParts;
}

/** Rank order: score, then the most recent, then the id. */
export const byRank = (a: Scored, b: Scored): number =>
  b.parts.total - a.parts.total ||
  b.fact.validFrom - a.fact.validFrom ||
  (a.fact.id < b.fact.id ? -1 : a.fact.id > b.fact.id ? 1 : 0);

/**
 * A pass's lists of one population (the facts, or the conventions), by term, for looking
 * documents up: each read through the view a query kept of it (a binary search of a typed
 * array), else through the list itself. Made once the lists are read, for the exact scoring of
 * many candidates, so that each lookup is not also a search for the list's view.
 */
export interface TermLists {
  readonly views: ReadonlyArray<Int32Array | undefined>;
  readonly lists: ReadonlyArray<Postings | undefined>;
}

export const termLists = (pass: Pass, convention: boolean): TermLists => {
  const lists = pass.terms.map((term) => (convention ? term.conventions : term.postings));
  return { lists, views: lists.map((postings) => (postings === undefined ? undefined : keptView(postings))) };
};

/** How many of a pass's terms a `held` mask of `storedWeights` has bits for (one per bit of an integer). */
export const MASKED_TERMS = 32;

/**
 * The stored weight of each pass term in a document, read from the postings (undefined: absent),
 * written into `into` (a scratch list the caller reuses and never keeps) and returned. Of the
 * first MASKED_TERMS terms, only those with their bit set in `held` are looked up (the others
 * are known to be absent; -1 looks every term up).
 */
export const storedWeights = (
  { views, lists }: TermLists,
  doc: number,
  into: Array<number | undefined>,
  held = -1,
): Array<number | undefined> => {
  into.length = lists.length;
  for (let i = 0; i < lists.length; i += 1) {
    if (i < MASKED_TERMS && (held & (1 << i)) === 0) {
      into[i] = undefined;
      continue;
    }
    const view = views[i];
    const postings = lists[i];
    const value =
      view !== undefined ? viewValue(view, doc) : postings === undefined ? undefined : postingValue(postings, doc);
    into[i] = value === undefined ? undefined : postingWeightOf(value);
  }
  return into;
};
