/**
 * Scoring one fact in one pass of a query: the formula both the index path (topk.ts) and the
 * explaining path (retrieve.ts) use, with the same numbers added in the same order, so they
 * rank exactly alike.
 */
import { hasWantedTag, isFileFact, type SessionFact } from '../fact.js';
import { keptView, type ListViews, viewValue } from '../search/postingViews.js';
import { type Postings, postingValue, postingWeightOf } from '../search/postings.js';
import { priorFlags } from '../search/priors.js';
import type { TaskDoc } from '../search/searchIndex.js';
import { postingWeight } from '../search/weights.js';
import { type FactStore, pairKey, selectValidFact } from '../store/state.js';
import { selectPairLog } from '../store/write.js';
import type { BudgetSettings } from './budget.js';
import type { ContextTable } from './context.js';
import { flagPriors, namesSubject, type PlannedTerm, priorValue, type QueryPlan, type ScoreParts } from './rank.js';
import type { RetrievalScratch } from './scratch.js';

/** Why a fact was not injected. */
export type ExclusionReason = 'invalidated' | 'tag' | 'own_task' | 'no_match' | 'max_facts' | 'budget';

/** The query, read once and resolved. */
export interface Settings extends BudgetSettings {
  readonly plan: QueryPlan;
  readonly taskId: string;
  readonly wanted: ReadonlySet<string>;
  readonly minScore: number;
  readonly documents: number;
  /** What the query writes besides its answer (`FactQuery.scratch`, or the default one). */
  readonly scratch: RetrievalScratch;
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
  /** The recent tasks' records, in the order of `recency`. */
  readonly recentRecords: ReadonlyArray<TaskDoc>;
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
  /** The positions where `weights` holds a weight, ascending, when the caller knows them (by default every one is read). */
  held?: ReadonlyArray<number>,
): ScoreParts => {
  const { ranking } = pass.plan;
  // The index path names no terms: it shares one empty list instead of making one per fact.
  const terms: Array<{ term: string; contribution: number }> | undefined = detail ? [] : undefined;
  let query = 0;
  let feedback = 0;
  const planned = pass.terms;
  const count = held?.length ?? planned.length;
  for (let at = 0; at < count; at += 1) {
    const i = held === undefined ? at : held[at]!;
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
  return scoreParts(pass, fact, terms ?? NO_TERMS, query, feedback, extras, names, value);
};

/**
 * A fact's score, for the index path, from its term sums: `query` and `feedback` must be what
 * `combineScore` adds from the fact's stored weights, contribution by contribution in the pass's
 * term order (each sum from 0), so that every number is the same as `combineScore`'s.
 */
export const combineSums = (
  pass: Pass,
  fact: SessionFact,
  query: number,
  feedback: number,
  extras: Extras,
  duplicate: boolean,
  flags: number,
): ScoreParts =>
  scoreParts(
    pass,
    fact,
    NO_TERMS,
    query,
    feedback,
    extras,
    NO_NAMES,
    priorValue(flags, pass.plan.ranking.priors, duplicate),
  );

/** The parts of a fact's score from its term sums, its extras and its prior. */
const scoreParts = (
  pass: Pass,
  fact: SessionFact,
  terms: ScoreParts['terms'],
  query: number,
  feedback: number,
  extras: Extras,
  names: ReadonlyArray<string>,
  value: number,
): ScoreParts => {
  const { ranking, paths } = pass.plan;
  const match = query + feedback + extras.context;
  const base = match === 0 && fact.tags.includes('convention') ? ranking.conventionBase * pass.scale : 0;
  const relevance = match + extras.recency + extras.coChange + base;
  const boost = match > 0 && namesSubject(paths, fact.subject) ? ranking.exactFileBoost : 0;
  return {
    terms,
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
  if (settings.wanted.size > 0 && !hasWantedTag(fact, settings.wanted)) return 'tag';
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
  readonly views: ReadonlyArray<ArrayLike<number> | undefined>;
  readonly lists: ReadonlyArray<Postings | undefined>;
}

/** The pass's lists of the facts (or of the conventions), with the views `views` keeps of them. */
export const termLists = (pass: Pass, convention: boolean, views: ListViews): TermLists => {
  const lists = pass.terms.map((term) => (convention ? term.conventions : term.postings));
  return { lists, views: lists.map((postings) => (postings === undefined ? undefined : keptView(postings, views))) };
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
