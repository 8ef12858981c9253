/**
 * Retrieval as a pure pipeline: valid facts -> tag filter -> not the query's own task ->
 * relevance score (rank.ts) -> eligible (score above 0, or a convention) -> ranked -> at most
 * `maxFacts` -> the relevance floor -> the token budget, measured on the section exactly as
 * the caller renders it.
 *
 * Scoring takes two passes when feedback, co-change or a convention base is on: the first
 * ranks by the query alone and gives the best few matches (whose words make the feedback
 * query, and whose files seed co-change) and the query's score scale; the second ranks with
 * everything.
 *
 * `retrieveFacts` finds each pass's exact top k through the index only (topk.ts: MaxScore over
 * the postings, with per-term upper bounds). `explainRetrieval` scores every stored fact the
 * same way, with the same numbers added in the same order, and records where each one left
 * the pipeline; its included facts are exactly what `retrieveFacts` returns.
 */
import * as PMap from '../../persistent/persistentMap.js';
import { collapseWhitespace } from '../../base/text.js';
import { type FactTag, isFileFact, type SessionFact } from '../fact.js';
import { selectAllFacts } from '../store/selectors.js';
import { type FactStore, pairKey, validCount } from '../store/state.js';
import { estimateTokens, type TokenCounter } from '../../tokens/estimate.js';
import { fitToBudget, type SectionRenderer } from './budget.js';
import { DEFAULT_LAYOUT, SECTION_LAYOUTS, type SectionLayout } from './defaults.js';
import { factTermWeights, postingWeight, storedTermWeight } from '../search/weights.js';
import {
  planQuery,
  planTerm,
  type PlannedTerm,
  type RankingOverrides,
  resolveRanking,
  type ScoreParts,
} from './rank.js';
import { lastFactTime, type TaskDoc } from '../search/searchIndex.js';
import {
  bestEntries,
  byRank,
  combineScore,
  type ContextTable,
  contextTable,
  type ExclusionReason,
  factCoChange,
  factContext,
  filterReason,
  offerRanked,
  type Pass,
  type Passes,
  repeatsConvention,
  type Scored,
  type Settings,
} from './score.js';
import { rankPasses } from './topk.js';

export type { ExclusionReason } from './score.js';

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
  /** The section's layout, which the budget is measured on (default `lines`). */
  readonly layout?: SectionLayout;
}

/** One fact's fate in a retrieval. `reason` is present exactly when excluded. */
export interface RetrievalDecision {
  readonly fact: SessionFact;
  readonly score: number;
  readonly decision: 'included' | 'excluded';
  readonly reason?: ExclusionReason;
  /** What the score is made of: term contributions, feedback, task context, recency, co-change, priors, boost. */
  readonly parts?: ScoreParts;
}

const isCount = (value: unknown): value is number => typeof value === 'number' && value >= 0;

/** Reads each field of the query once (a getter may throw or change its answer), inside the caller's guard. */
const settingsFor = (store: FactStore, query: FactQuery, render: SectionRenderer): Settings => {
  const q: Partial<FactQuery> = typeof query === 'object' && query !== null ? query : {};
  const { taskDescription, taskId, tags, maxFacts, maxTokens, countTokens, ranking, minScore, layout } = q;
  const rawTaskId = typeof taskId === 'string' || typeof taskId === 'number' ? String(taskId) : '';
  const documents = validCount(store);
  return {
    plan: planQuery(
      store.index,
      documents,
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
    layout:
      typeof layout === 'string' && (SECTION_LAYOUTS as ReadonlyArray<string>).includes(layout)
        ? layout
        : DEFAULT_LAYOUT,
    documents,
  };
};

/**
 * The most recent other tasks (by their latest valid fact, then id; the index keeps them in
 * order) with the recency of their facts: weight, weight x decay, weight x decay^2, ...
 */
const recentTasks = (store: FactStore, settings: Settings): Map<string, number> => {
  const { recency } = settings.plan.ranking;
  const recent = new Map<string, number>();
  if (recency.weight <= 0) return recent;
  const list = store.index.recent;
  for (let at = 0; at < list.length && recent.size < recency.tasks; at += 2) {
    const taskId = list[at] as string;
    if (taskId !== settings.taskId) recent.set(taskId, recency.weight * recency.decay ** recent.size);
  }
  return recent;
};

/** How many of its best facts a first pass keeps: feedback takes the first few, co-change the first few file facts. */
const FIRST_PASS_FACTS = 10;

/** Co-change reads at most this many of a seed's tasks, the latest (a manifest changes with everything). */
const CO_CHANGE_TASKS = 32;
/**
 * A task that changed more files than this tells nothing of what changes together (a sweep:
 * a rename, a reformat, a dependency bump), as in co-change mining generally: co-change skips it.
 */
const CO_CHANGE_MAX_FILES = 32;
/** Co-change reaches at most this many file pairs, the best-scored ones. */
const CO_CHANGE_PAIRS = 64;

/**
 * The docs of the latest CO_CHANGE_TASKS of these tasks that changed at most CO_CHANGE_MAX_FILES
 * files: latest by their prompt's time, then their latest valid fact's, then id (what the store
 * holds, so a store rebuilt from a saved state picks the same).
 */
const latestTasks = (store: FactStore, taskIds: ReadonlyArray<string>): Array<readonly [string, TaskDoc]> => {
  const docs: Array<readonly [string, TaskDoc]> = [];
  for (const taskId of taskIds) {
    const task = PMap.get(store.index.tasks, taskId);
    if (task !== undefined && PMap.size(task.touched) <= CO_CHANGE_MAX_FILES) docs.push([taskId, task]);
  }
  if (docs.length <= CO_CHANGE_TASKS) return docs;
  const time = (task: TaskDoc): number => task.promptAt ?? -Infinity;
  /** Negative when the first task is the later. */
  const later = ([a, x]: readonly [string, TaskDoc], [b, y]: readonly [string, TaskDoc]): number =>
    time(y) - time(x) || lastFactTime(y) - lastFactTime(x) || (a < b ? -1 : a > b ? 1 : 0);
  // A file every task changes (a manifest) has hundreds: the latest are kept in a short sorted
  // list, which turns most of the rest away by its last, instead of sorting them all.
  const latest: Array<readonly [string, TaskDoc]> = [];
  for (const entry of docs) offerRanked(latest, entry, CO_CHANGE_TASKS, later);
  return latest;
};

/**
 * Co-change scores of one query: the first pass's best `coChange.seeds` file facts (among its
 * best FIRST_PASS_FACTS) are its seeds; every other file a seed's latest CO_CHANGE_TASKS tasks
 * (see `latestTasks`) changed gets, per seed, the share of those
 * tasks that changed it, times the seed's score relative to the best seed's, times the weight.
 * Summed over the seeds in rank order, by pair key; the CO_CHANGE_PAIRS best are kept.
 */
const coChangeScores = (store: FactStore, settings: Settings, first: ReadonlyArray<Scored>): Map<string, number> => {
  const { coChange } = settings.plan.ranking;
  const scores = new Map<string, number>();
  if (coChange.weight <= 0) return scores;
  const seeds = first.filter(({ fact }) => isFileFact(fact)).slice(0, coChange.seeds);
  const top = seeds.length === 0 ? 0 : seeds[0]!.parts.total - seeds[0]!.parts.boost;
  if (!(top > 0)) return scores;
  for (const { fact, parts } of seeds) {
    const key = pairKey(fact.subject, fact.relation);
    const tasks = latestTasks(store, PMap.get(store.index.files, key)?.tasks ?? []);
    const share = (coChange.weight * (parts.total - parts.boost)) / top / Math.max(1, tasks.length);
    if (!(share > 0)) continue;
    for (const [, task] of tasks)
      PMap.forEach(task.touched, (_true, pair) => {
        if (pair !== key) scores.set(pair, (scores.get(pair) ?? 0) + share);
      });
  }
  return bestEntries(scores, CO_CHANGE_PAIRS);
};

/**
 * The feedback words of a first pass: the terms of its best facts (subject and object, as the
 * index splits and stems them) that the query lacks, 3 characters or longer, and found in at
 * most `feedback.maxShare` of the valid facts, each weighted by its mean weight in those facts;
 * the `feedback.terms` most telling (weight x idf).
 */
const feedbackTerms = (store: FactStore, settings: Settings, first: ReadonlyArray<Scored>): PlannedTerm[] => {
  const { feedback } = settings.plan.ranking;
  const top = first.slice(0, feedback.facts);
  if (feedback.weight <= 0 || top.length === 0) return [];
  const inQuery = new Set(settings.plan.terms.map(({ term }) => term));
  const sums = new Map<string, number>();
  for (const { fact } of top) {
    const weights = factTermWeights(fact);
    for (let i = 0; i < weights.length; i += 2) {
      const term = weights[i] as string;
      if (term.length >= 3 && !inQuery.has(term))
        sums.set(term, (sums.get(term) ?? 0) + postingWeight(weights[i + 1] as number));
    }
  }
  const mostFacts = Math.max(1, feedback.maxShare * settings.documents);
  return [...sums]
    .map(([term, sum]) => planTerm(store.index, settings.documents, term, (feedback.weight * sum) / top.length))
    .filter(({ frequency }) => frequency <= mostFacts)
    .sort((a, b) => b.multiplier * b.idf - a.multiplier * a.idf || (a.term < b.term ? -1 : a.term > b.term ? 1 : 0))
    .slice(0, feedback.terms);
};

const needsFirstPass = (settings: Settings): boolean => {
  const { feedback, coChange, conventionBase } = settings.plan.ranking;
  return (
    (feedback.weight > 0 && feedback.facts > 0) || (coChange.weight > 0 && coChange.seeds > 0) || conventionBase > 0
  );
};

const passesFor = (store: FactStore, settings: Settings, table: ContextTable): Passes => {
  const { plan } = settings;
  const { feedback, coChange } = plan.ranking;
  const none = new Map<string, number>();
  const recency = recentTasks(store, settings);
  const queryPass = (
    k: number,
    scale: number,
    terms: PlannedTerm[],
    recency: ReadonlyMap<string, number>,
    coChanged: ReadonlyMap<string, number>,
  ): Pass => ({ plan, terms, queryTerms: plan.terms.length, table, recency, coChange: coChanged, scale, k });
  const first = needsFirstPass(settings)
    ? queryPass(
        Math.max(
          1,
          feedback.facts,
          coChange.weight > 0 && coChange.seeds > 0 ? Math.max(coChange.seeds, FIRST_PASS_FACTS) : 0,
        ),
        0,
        [...plan.terms],
        none,
        none,
      )
    : undefined;
  return {
    first,
    recency,
    last: (firstRanked) => {
      const best = firstRanked[0];
      const scale = best === undefined ? 0 : best.parts.total - best.parts.boost;
      return queryPass(
        settings.maxFacts,
        scale,
        [...plan.terms, ...feedbackTerms(store, settings, firstRanked)],
        recency,
        coChangeScores(store, settings, firstRanked),
      );
    },
  };
};

/**
 * The candidates within the count cap that pass the relevance floor: a score (boost aside) at
 * least `floor` times the best one's, unless boosted or a convention.
 */
const passesFloor = (settings: Settings, inCap: ReadonlyArray<Scored>): ((candidate: Scored) => boolean) => {
  const best = inCap.reduce((max, { parts }) => Math.max(max, parts.total - parts.boost), 0);
  const floor = settings.plan.ranking.floor * best;
  return ({ fact, parts }) => parts.boost > 0 || fact.tags.includes('convention') || parts.total - parts.boost >= floor;
};

/** The ranked candidates within the cap that pass the floor, each with the reason the budget leaves it out, if it does. */
const budgeted = (
  settings: Settings,
  ranked: ReadonlyArray<Scored>,
): { keep: (candidate: Scored) => boolean; kept: Scored[]; fitted: Array<Scored & { reason?: ExclusionReason }> } => {
  const inCap = ranked.slice(0, settings.maxFacts);
  const keep = passesFloor(settings, inCap);
  const kept = inCap.filter(keep);
  return { keep, kept, fitted: fitToBudget(settings, kept) };
};

/** The ranked candidates with the reason each left out has: past the cap, below the floor, or over the budget. */
const finish = (settings: Settings, ranked: ReadonlyArray<Scored>): Array<Scored & { reason?: ExclusionReason }> => {
  const { keep, kept, fitted: fittedKept } = budgeted(settings, ranked);
  const reasons = new Map<Scored, ExclusionReason>();
  fittedKept.forEach((candidate, i) => {
    if (candidate.reason !== undefined) reasons.set(kept[i]!, candidate.reason);
  });
  return ranked.map((candidate, rank) => {
    const reason: ExclusionReason | undefined =
      rank >= settings.maxFacts ? 'max_facts' : !keep(candidate) ? 'no_match' : reasons.get(candidate);
    return reason === undefined ? candidate : { ...candidate, reason };
  });
};

/**
 * The facts to inject for `query`, in rank order, within `maxFacts` and `maxTokens` measured on
 * the section as `render` draws it. Valid queries only throw for a bug (or a counter that throws).
 */
export const retrieveRanked = (
  store: FactStore,
  query: FactQuery,
  render: SectionRenderer,
): ReadonlyArray<SessionFact> => {
  const settings = settingsFor(store, query, render);
  if (settings.maxFacts === 0 || settings.maxTokens < 0) return [];
  const table = contextTable(store, settings.plan);
  const passes = passesFor(store, settings, table);
  const ranked = rankPasses(store, settings, passes);
  // What `finish` includes: the candidates within the cap, past the floor and within the budget.
  return budgeted(settings, ranked)
    .fitted.filter((candidate) => candidate.reason === undefined)
    .map((candidate) => candidate.fact);
};

/** Scores every stored fact in one pass, the slow way (from the fact's own text). */
const scoreAll = (
  store: FactStore,
  settings: Settings,
  pass: Pass,
  firstPass: boolean,
): Array<Scored & { reason?: ExclusionReason }> =>
  selectAllFacts(store).map((fact) => {
    const weights = factTermWeights(fact);
    const stored = pass.terms.map(({ term }) => storedTermWeight(weights, term));
    const valid = fact.validTo === undefined;
    const extras = {
      context: valid ? factContext(pass.table, fact) : 0,
      recency: pass.recency.get(fact.sourceTaskId) ?? 0,
      coChange: valid ? factCoChange(pass, fact) : 0,
    };
    const parts = combineScore(pass, fact, stored, extras, repeatsConvention(store, fact));
    const reason = filterReason(settings, fact, parts, firstPass);
    return reason === undefined ? { fact, parts } : { fact, parts, reason };
  });

/**
 * Every stored fact with its score, its parts and its decision (as `retrieveRanked` decides with
 * the same renderer): the ranked candidates first, in rank order, then the rest.
 */
export const explainRanked = (
  store: FactStore,
  query: FactQuery,
  render: SectionRenderer,
): ReadonlyArray<RetrievalDecision> => {
  const settings = settingsFor(store, query, render);
  const table = contextTable(store, settings.plan);
  const passes = passesFor(store, settings, table);
  const first =
    passes.first === undefined
      ? []
      : scoreAll(store, settings, passes.first, true)
          .filter((scored) => scored.reason === undefined)
          .sort(byRank)
          .slice(0, passes.first.k);
  const scored = scoreAll(store, settings, passes.last(first), false);
  const candidates = scored.filter((entry) => entry.reason === undefined).sort(byRank);
  const ranked = finish(settings, candidates).map(({ fact, parts, reason }): RetrievalDecision =>
    reason === undefined
      ? { fact, score: parts.total, decision: 'included', parts }
      : { fact, score: parts.total, decision: 'excluded', reason, parts },
  );
  const others = scored.flatMap(({ fact, parts, reason }): RetrievalDecision[] =>
    reason === undefined ? [] : [{ fact, score: parts.total, decision: 'excluded', reason, parts }],
  );
  return [...ranked, ...others];
};
