/**
 * Retrieval as a pure pipeline: valid facts -> tag filter -> not the query's own task ->
 * relevance score -> eligible (score above 0, or a convention) -> ranked -> at most `maxFacts`
 * -> token budget measured on the section exactly as rendered.
 *
 * `retrieveFacts` reaches its candidates through the index (the postings of the query's terms,
 * the facts of tasks whose context matches, and the conventions), so a query never scans the
 * store. `explainRetrieval` scores every stored fact the same way and records where each one
 * left the pipeline; its included facts are exactly what `retrieveFacts` returns.
 */
import * as PMap from '../base/persistentMap.js';
import { collapseWhitespace } from '../base/text.js';
import type { FactTag, SessionFact } from '../fact.js';
import { selectAllFacts } from '../store/selectors.js';
import { type FactStore, pairKey, selectValidFact, validCount } from '../store/state.js';
import { deriveRecords } from '../store/timeline.js';
import { isFileFact, selectPairLog } from '../store/write.js';
import { estimateTokens, type TokenCounter } from '../tokens/estimate.js';
import { type BudgetSettings, fitToBudget, type SectionRenderer } from './budget.js';
import { queryTerms } from './index/terms.js';
import { postingWeight } from './index/weights.js';
import {
  combineScore,
  planQuery,
  type QueryPlan,
  type RankingOverrides,
  resolveRanking,
  type Score,
  type ScoreParts,
  scoreFact,
} from './rank.js';

/** What the next task needs facts for. */
export interface FactQuery {
  readonly taskDescription: string;
  readonly taskId: string;
  readonly tags?: ReadonlyArray<FactTag>;
  readonly maxFacts: number;
  readonly maxTokens: number;
  readonly countTokens?: TokenCounter;
  /** Overrides of the ranking defaults (`DEFAULT_RANKING`). */
  readonly ranking?: RankingOverrides;
  /** Facts scoring below this are left out as `no_match`, conventions included (default: none). */
  readonly minScore?: number;
}

/** Why a fact was not injected. */
export type ExclusionReason = 'invalidated' | 'tag' | 'own_task' | 'no_match' | 'max_facts' | 'budget';

/** One fact's fate in a retrieval. `reason` is present exactly when excluded. */
export interface RetrievalDecision {
  readonly fact: SessionFact;
  readonly score: number;
  readonly decision: 'included' | 'excluded';
  readonly reason?: ExclusionReason;
  /** What the score is made of: term contributions, task context, priors, boost. */
  readonly parts?: ScoreParts;
}

interface Settings extends BudgetSettings {
  readonly plan: QueryPlan;
  readonly taskId: string;
  readonly wanted: ReadonlySet<string>;
  readonly minScore: number;
}

const isCount = (value: unknown): value is number => typeof value === 'number' && value >= 0;

/** Reads each field of the query once (a getter may throw or change its answer), inside the caller's guard. */
const settingsFor = (store: FactStore, query: FactQuery, render: SectionRenderer): Settings => {
  const q: Partial<FactQuery> = typeof query === 'object' && query !== null ? query : {};
  const { taskDescription, taskId, tags, maxFacts, maxTokens, countTokens, ranking, minScore } = q;
  const rawTaskId = typeof taskId === 'string' || typeof taskId === 'number' ? String(taskId) : '';
  return {
    plan: planQuery(
      store.index,
      validCount(store),
      typeof taskDescription === 'string' ? taskDescription : '',
      resolveRanking(ranking),
    ),
    taskId: collapseWhitespace(rawTaskId),
    wanted: new Set<string>(Array.isArray(tags) ? tags : []),
    maxFacts: isCount(maxFacts) ? Math.floor(maxFacts) : 0,
    maxTokens: isCount(maxTokens) ? maxTokens : -1,
    countTokens: typeof countTokens === 'function' ? countTokens : estimateTokens,
    minScore: typeof minScore === 'number' && Number.isFinite(minScore) ? minScore : -Infinity,
    render,
  };
};

/**
 * Context scores for one query: per task (its prompt and summary), for the `contextTasks`
 * best-matching tasks, and per file pair (the sum over those tasks that asserted a fact about
 * the file: a file is described by all the work done on it, and a file many tasks touched is
 * central). Tasks are summed in id order, so the fast and the explaining path add the same
 * numbers in the same order.
 */
interface ContextTable {
  readonly byTask: ReadonlyMap<string, number>;
  readonly byPair: ReadonlyMap<string, number>;
}

const contextTable = (store: FactStore, plan: QueryPlan): ContextTable => {
  // A task's context score: its BM25 against the query, summed in query-term order, then weighted.
  const sums = new Map<string, number>();
  for (const { idf, postings } of plan.contextTerms)
    if (postings !== undefined)
      PMap.forEach(postings, (weight, taskId) =>
        sums.set(taskId, (sums.get(taskId) ?? 0) + idf * postingWeight(weight)),
      );
  // The best `contextTasks` tasks, kept in a short sorted list (no sort of every match).
  const limit = plan.ranking.contextTasks;
  const best: Array<[string, number]> = [];
  const better = ([a, x]: [string, number], [b, y]: [string, number]): boolean => x > y || (x === y && a < b);
  for (const [taskId, sum] of sums) {
    const entry: [string, number] = [taskId, sum * plan.ranking.contextWeight];
    if (!(entry[1] > 0) || limit < 1) continue;
    if (best.length === limit && !better(entry, best[limit - 1]!)) continue;
    let at = best.length;
    while (at > 0 && better(entry, best[at - 1]!)) at -= 1;
    best.splice(at, 0, entry);
    if (best.length > limit) best.pop();
  }
  const ranked = best.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const byTask = new Map(ranked);
  const byPair = new Map<string, number>();
  for (const [taskId, score] of ranked)
    for (const pair of PMap.keys(PMap.get(store.index.tasks, taskId)?.touched ?? PMap.empty))
      byPair.set(pair, (byPair.get(pair) ?? 0) + score);
  return { byTask, byPair };
};

const factContext = (table: ContextTable, fact: SessionFact): number =>
  (isFileFact(fact) ? table.byPair.get(pairKey(fact.subject, fact.relation)) : table.byTask.get(fact.sourceTaskId)) ??
  0;

/** True when an `issue` fact's text is also a valid `convention` of its subject, asserted with it. */
const repeatsConvention = (store: FactStore, fact: SessionFact): boolean => {
  if (fact.relation !== 'issue') return false;
  const twin = selectPairLog(store, fact.subject, 'convention')?.assertions.find(
    (assertion) => assertion.validFrom === fact.validFrom && assertion.object === fact.object,
  );
  // The twin's run must be the valid one: the valid record of an id is the assertion that opened its run.
  return twin !== undefined && selectValidFact(store, twin.id)?.validFrom === twin.validFrom;
};

/** The first stage a valid fact fails, given its score; undefined when it is a candidate. */
const filterReason = (settings: Settings, fact: SessionFact, parts: Score): ExclusionReason | undefined => {
  if (fact.validTo !== undefined) return 'invalidated';
  if (settings.wanted.size > 0 && !fact.tags.some((tag) => settings.wanted.has(tag))) return 'tag';
  if (fact.sourceTaskId === settings.taskId) return 'own_task';
  if (!(parts.total > 0) && !fact.tags.includes('convention')) return 'no_match';
  if (parts.total < settings.minScore) return 'no_match';
  return undefined;
};

interface Scored<P extends Score = Score> {
  readonly fact: SessionFact;
  readonly parts: P;
}

const byRank = (a: Scored, b: Scored): number =>
  b.parts.total - a.parts.total ||
  b.fact.validFrom - a.fact.validFrom ||
  (a.fact.id < b.fact.id ? -1 : a.fact.id > b.fact.id ? 1 : 0);

/** Ranks candidates, then applies `maxFacts` and the token budget; returns each candidate's reason (none: included). */
const selectRanked = <P extends Score>(settings: Settings, candidates: Array<Scored<P>>) =>
  fitToBudget(settings, candidates.sort(byRank));

/** A max-heap of candidate indices by their upper bound. */
const popOrder = (bounds: Float64Array): (() => number | undefined) => {
  const heap = Array.from(bounds.keys());
  const above = (a: number, b: number): boolean => bounds[heap[a]!]! > bounds[heap[b]!]!;
  const swap = (a: number, b: number): void => {
    [heap[a], heap[b]] = [heap[b]!, heap[a]!];
  };
  const sink = (from: number): void => {
    for (let i = from; ;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let top = i;
      if (left < heap.length && above(left, top)) top = left;
      if (right < heap.length && above(right, top)) top = right;
      if (top === i) return;
      swap(i, top);
      i = top;
    }
  };
  for (let i = (heap.length >> 1) - 1; i >= 0; i -= 1) sink(i);
  return () => {
    if (heap.length === 0) return undefined;
    const first = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      sink(0);
    }
    return first;
  };
};

/** The largest product of priors any fact can get (priors below 1 only lower a score). */
const maxPrior = (plan: QueryPlan): number =>
  Object.values(plan.ranking.priors).reduce((product, prior) => product * Math.max(1, prior), 1);

/**
 * The best `maxFacts` candidates of a query, exactly as `explainRetrieval` ranks them, found
 * through the index only. Every candidate gets an upper bound from what the index tells
 * without reading it (its term score, the best context it can inherit, the largest prior,
 * and the exact-file boost when it holds every term of a named path); candidates are then
 * scored exactly in order of that bound, stopping once no bound can reach the last place.
 */
const topCandidates = (store: FactStore, settings: Settings): Scored[] => {
  const { plan } = settings;
  const canMask = plan.terms.length <= 30;
  // Term scores summed in query-term order, as scoreFact sums them, and which terms matched.
  const matches = new Map<string, { score: number; mask: number }>();
  plan.terms.forEach(({ idf, postings }, bit) => {
    if (postings === undefined) return;
    PMap.forEach(postings, (weight, key) => {
      const match = matches.get(key);
      const contribution = idf * postingWeight(weight);
      if (match === undefined) matches.set(key, { score: contribution, mask: canMask ? 1 << bit : 0 });
      else {
        match.score += contribution;
        if (canMask) match.mask |= 1 << bit;
      }
    });
  });
  const table = contextTable(store, plan);
  const contextBound = new Map<string, number>();
  const raise = (key: string, value: number): void => {
    if (!(value <= (contextBound.get(key) ?? 0))) contextBound.set(key, value);
  };
  for (const [taskId, score] of table.byTask)
    for (const key of PMap.keys(PMap.get(store.index.tasks, taskId)?.facts ?? PMap.empty)) raise(key, score);
  for (const [pair, score] of table.byPair) {
    const log = PMap.get(store.pairs, pair);
    if (log !== undefined) for (const fact of deriveRecords(log)) if (fact.validTo === undefined) raise(fact.id, score);
  }
  const keys = new Set([...matches.keys(), ...contextBound.keys()]);

  const termIndex = new Map(plan.terms.map(({ term }, bit) => [term, bit]));
  const pathMasks = plan.paths.map((path) =>
    queryTerms(path).reduce((mask, term) => (termIndex.has(term) ? mask | (1 << termIndex.get(term)!) : mask), 0),
  );
  const mayBeNamed = (key: string): boolean =>
    pathMasks.length > 0 && (!canMask || pathMasks.some((mask) => ((matches.get(key)?.mask ?? 0) & mask) === mask));
  const prior = maxPrior(plan);
  const list = [...keys];
  const bounds = new Float64Array(list.length);
  list.forEach((key, i) => {
    const relevance = (matches.get(key)?.score ?? 0) + (contextBound.get(key) ?? 0);
    bounds[i] = relevance * prior + (relevance > 0 && mayBeNamed(key) ? plan.ranking.exactFileBoost : 0);
  });

  const best: Scored[] = [];
  const consider = (key: string): void => {
    const fact = selectValidFact(store, key);
    if (fact === undefined) return;
    const parts = combineScore(
      plan,
      fact,
      matches.get(key)?.score ?? 0,
      factContext(table, fact),
      repeatsConvention(store, fact),
    );
    if (filterReason(settings, fact, parts) !== undefined) return;
    const candidate = { fact, parts };
    let at = best.length;
    while (at > 0 && byRank(candidate, best[at - 1]!) < 0) at -= 1;
    if (at < settings.maxFacts) {
      best.splice(at, 0, candidate);
      if (best.length > settings.maxFacts) best.pop();
    }
  };
  const next = popOrder(bounds);
  for (let i = next(); i !== undefined; i = next()) {
    const last = best[settings.maxFacts - 1];
    if (last !== undefined && bounds[i]! < last.parts.total) break;
    consider(list[i]!);
  }
  // Conventions are eligible with no match at all; they fill the places left, most recent first.
  if (best.length < settings.maxFacts)
    PMap.forEach(store.index.conventions, (_true, key) => keys.has(key) || consider(key));
  return best;
};

/**
 * The facts to inject for `query`, in rank order, within `maxFacts` and `maxTokens` measured on
 * the section as `render` draws it; never throws.
 */
export const retrieveRanked = (
  store: FactStore,
  query: FactQuery,
  render: SectionRenderer,
): ReadonlyArray<SessionFact> => {
  try {
    const settings = settingsFor(store, query, render);
    if (settings.maxFacts === 0 || settings.maxTokens < 0) return [];
    return selectRanked(settings, topCandidates(store, settings))
      .filter((candidate) => candidate.reason === undefined)
      .map((candidate) => candidate.fact);
  } catch {
    return [];
  }
};

/**
 * Every stored fact with its score, its parts and its decision (as `retrieveRanked` decides with
 * the same renderer): the ranked candidates first, in rank order, then the rest.
 */
export const explainRanked = (
  store: FactStore,
  query: FactQuery,
  render: SectionRenderer,
): ReadonlyArray<RetrievalDecision> => {
  try {
    const settings = settingsFor(store, query, render);
    const candidates: Array<Scored<ScoreParts>> = [];
    const others: RetrievalDecision[] = [];
    const table = contextTable(store, settings.plan);
    for (const fact of selectAllFacts(store)) {
      const parts = scoreFact(settings.plan, fact, factContext(table, fact), repeatsConvention(store, fact));
      const reason = filterReason(settings, fact, parts);
      if (reason === undefined) candidates.push({ fact, parts });
      else others.push({ fact, score: parts.total, decision: 'excluded', reason, parts });
    }
    const ranked = selectRanked(settings, candidates).map(({ fact, parts, reason }): RetrievalDecision =>
      reason === undefined
        ? { fact, score: parts.total, decision: 'included', parts }
        : { fact, score: parts.total, decision: 'excluded', reason, parts },
    );
    return [...ranked, ...others];
  } catch {
    return [];
  }
};
