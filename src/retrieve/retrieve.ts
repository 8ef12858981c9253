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
import { createFactId, type FactTag, type SessionFact } from '../fact.js';
import { formatSessionFacts } from '../prompt/format.js';
import { selectAllFacts } from '../store/selectors.js';
import { shardGet } from '../store/shards.js';
import { keyHash } from '../store/searchIndex.js';
import { type FactStore, pairHash, recordKey } from '../store/state.js';
import { deriveRecords } from '../store/timeline.js';
import { isFileFact, selectPairLog } from '../store/write.js';
import { trieForEach, trieGet } from '../store/trie.js';
import { collapseWhitespace } from '../text.js';
import { combineScore, contextScore, planQuery, type QueryPlan, type RankingOverrides, resolveRanking, type ScoreParts, scoreFact } from './rank.js';
import { estimateTokens, type TokenCounter } from './tokens.js';

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

interface Settings {
  readonly plan: QueryPlan;
  readonly taskId: string;
  readonly wanted: ReadonlySet<string>;
  readonly maxFacts: number;
  readonly maxTokens: number;
  readonly countTokens: TokenCounter;
}

const isCount = (value: unknown): value is number => typeof value === 'number' && value >= 0;

const settingsFor = (store: FactStore, query: FactQuery): Settings => {
  const q: Partial<FactQuery> = typeof query === 'object' && query !== null ? query : {};
  const description = typeof q.taskDescription === 'string' ? q.taskDescription : '';
  const rawTaskId = typeof q.taskId === 'string' || typeof q.taskId === 'number' ? String(q.taskId) : '';
  return {
    plan: planQuery(store.index, store.validCount, description, resolveRanking(q.ranking)),
    taskId: collapseWhitespace(rawTaskId),
    wanted: new Set<string>(Array.isArray(q.tags) ? q.tags : []),
    maxFacts: isCount(q.maxFacts) ? Math.floor(q.maxFacts) : 0,
    maxTokens: isCount(q.maxTokens) ? q.maxTokens : -1,
    countTokens: typeof q.countTokens === 'function' ? q.countTokens : estimateTokens,
  };
};

/**
 * The context score of a fact: the match of its producing task's prompt and summary; for a
 * file fact, the sum over every task that asserted it (a file is described by all the work
 * done on it, and a file many tasks touched is central).
 */
const factContext = (store: FactStore, plan: QueryPlan, fact: SessionFact, cache: Map<string, number>): number => {
  const scoreOf = (taskId: string): number => {
    let score = cache.get(taskId);
    if (score === undefined) cache.set(taskId, (score = contextScore(plan, taskId)));
    return score;
  };
  if (!isFileFact(fact)) return scoreOf(fact.sourceTaskId);
  const tasks = new Set((selectPairLog(store, fact.subject, fact.relation)?.assertions ?? [fact]).map((a) => a.sourceTaskId));
  let total = 0;
  for (const taskId of tasks) total += scoreOf(taskId);
  return total;
};

/** True when an `issue` fact's text is also a valid `convention` of its subject, asserted with it. */
const repeatsConvention = (store: FactStore, fact: SessionFact): boolean => {
  if (fact.relation !== 'issue') return false;
  const id = createFactId(fact.subject, 'convention', fact.object);
  const convention = shardGet(store.records, id, `${id}@${fact.validFrom}`);
  return convention !== undefined && convention.validTo === undefined;
};

/** The first stage a valid fact fails, given its score; undefined when it is a candidate. */
const filterReason = (settings: Settings, fact: SessionFact, parts: ScoreParts): ExclusionReason | undefined => {
  if (fact.validTo !== undefined) return 'invalidated';
  if (settings.wanted.size > 0 && !fact.tags.some((tag) => settings.wanted.has(tag))) return 'tag';
  if (fact.sourceTaskId === settings.taskId) return 'own_task';
  if (!(parts.total > 0) && !fact.tags.includes('convention')) return 'no_match';
  return undefined;
};

interface Scored {
  readonly fact: SessionFact;
  readonly parts: ScoreParts;
}

const byRank = (a: Scored, b: Scored): number =>
  b.parts.total - a.parts.total ||
  b.fact.validFrom - a.fact.validFrom ||
  (a.fact.id < b.fact.id ? -1 : a.fact.id > b.fact.id ? 1 : 0);

const fitsBudget = (section: string, maxTokens: number, countTokens: TokenCounter): boolean => {
  try {
    const tokens = countTokens(section);
    return typeof tokens === 'number' && tokens <= maxTokens;
  } catch {
    return false;
  }
};

/** Ranks candidates and applies `maxFacts` and the token budget; returns each candidate's reason (none: included). */
const selectRanked = (settings: Settings, candidates: Scored[]): Array<Scored & { reason?: ExclusionReason }> => {
  candidates.sort(byRank);
  const included: SessionFact[] = [];
  return candidates.map((candidate, rank) => {
    if (rank >= settings.maxFacts) return { ...candidate, reason: 'max_facts' as const };
    if (!fitsBudget(formatSessionFacts([...included, candidate.fact]), settings.maxTokens, settings.countTokens))
      return { ...candidate, reason: 'budget' as const };
    included.push(candidate.fact);
    return candidate;
  });
};

/** The candidates of a query, scored, found through the index only. */
const indexedCandidates = (store: FactStore, settings: Settings): Scored[] => {
  const { plan } = settings;
  const termParts = new Map<string, Array<{ term: string; contribution: number }>>();
  for (const { term, idf, postings } of plan.terms)
    trieForEach(postings?.p, (weight, key) => {
      const parts = termParts.get(key);
      const part = { term, contribution: idf * weight };
      if (parts === undefined) termParts.set(key, [part]);
      else parts.push(part);
    });
  const keys = new Set(termParts.keys());
  const contextTasks = new Set<string>();
  for (const { postings } of plan.contextTerms) trieForEach(postings?.p, (_weight, taskId) => contextTasks.add(taskId));
  for (const taskId of contextTasks) {
    const doc = trieGet(store.index.tasks, keyHash(taskId), taskId);
    for (const key in doc?.facts ?? {}) keys.add(key);
    for (const pair in doc?.touched ?? {}) {
      const log = shardGet(store.pairs, pairHash(pair), pair);
      if (log !== undefined) for (const fact of deriveRecords(log)) if (fact.validTo === undefined) keys.add(recordKey(fact));
    }
  }
  trieForEach(store.index.conventions, (_true, key) => keys.add(key));

  const contextByTask = new Map<string, number>();
  const scored: Scored[] = [];
  for (const key of keys) {
    const fact = shardGet(store.records, key.slice(0, key.indexOf('@')), key);
    if (fact === undefined) continue;
    const context = factContext(store, plan, fact, contextByTask);
    const parts = combineScore(plan, fact, termParts.get(key) ?? [], context, repeatsConvention(store, fact));
    if (filterReason(settings, fact, parts) === undefined) scored.push({ fact, parts });
  }
  return scored;
};

/** The facts to inject for `query`, in rank order, within `maxFacts` and `maxTokens`; never throws. */
export const retrieveFacts = (store: FactStore, query: FactQuery): ReadonlyArray<SessionFact> => {
  try {
    const settings = settingsFor(store, query);
    if (settings.maxFacts === 0 || settings.maxTokens < 0) return [];
    return selectRanked(settings, indexedCandidates(store, settings))
      .filter((candidate) => candidate.reason === undefined)
      .map((candidate) => candidate.fact);
  } catch {
    return [];
  }
};

/** Every stored fact with its score, its parts and its decision: the ranked candidates first, in rank order, then the rest. */
export const explainRetrieval = (store: FactStore, query: FactQuery): ReadonlyArray<RetrievalDecision> => {
  try {
    const settings = settingsFor(store, query);
    const candidates: Scored[] = [];
    const others: RetrievalDecision[] = [];
    const contextByTask = new Map<string, number>();
    for (const fact of selectAllFacts(store)) {
      const context = factContext(store, settings.plan, fact, contextByTask);
      const parts = scoreFact(settings.plan, fact, context, repeatsConvention(store, fact));
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
