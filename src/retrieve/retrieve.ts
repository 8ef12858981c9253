/**
 * Retrieval as a pure pipeline: valid facts -> tag filter -> not the query's own task ->
 * relevance score -> eligible (score above 0, or a convention) -> ranked -> at most `maxFacts`
 * -> token budget measured on the section exactly as rendered. `explainRetrieval` runs the same
 * stages and records, for every fact, where it left the pipeline.
 */
import type { FactTag, SessionFact } from '../fact.js';
import { formatSessionFacts } from '../prompt/format.js';
import { selectAllFacts } from '../store/selectors.js';
import type { FactStore } from '../store/state.js';
import { collapseWhitespace } from '../text.js';
import { keywordOverlap, keywordTokens } from './keywords.js';
import { estimateTokens, type TokenCounter } from './tokens.js';

/** What the next task needs facts for. */
export interface FactQuery {
  readonly taskDescription: string;
  readonly taskId: string;
  readonly tags?: ReadonlyArray<FactTag>;
  readonly maxFacts: number;
  readonly maxTokens: number;
  readonly countTokens?: TokenCounter;
}

/** Why a fact was not injected. */
export type ExclusionReason = 'invalidated' | 'tag' | 'own_task' | 'no_match' | 'max_facts' | 'budget';

/** One fact's fate in a retrieval. `reason` is present exactly when excluded. */
export interface RetrievalDecision {
  readonly fact: SessionFact;
  readonly score: number;
  readonly decision: 'included' | 'excluded';
  readonly reason?: ExclusionReason;
}

const isCount = (value: unknown): value is number => typeof value === 'number' && value >= 0;

const byRank =
  (scores: ReadonlyMap<SessionFact, number>) =>
  (a: SessionFact, b: SessionFact): number =>
    scores.get(b)! - scores.get(a)! || b.validFrom - a.validFrom || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

const fitsBudget = (section: string, maxTokens: number, countTokens: TokenCounter): boolean => {
  try {
    const tokens = countTokens(section);
    return typeof tokens === 'number' && tokens <= maxTokens;
  } catch {
    return false;
  }
};

/** Every fact of the store with its score and decision: the ranked candidates first, in rank order, then the rest. */
export const explainRetrieval = (store: FactStore, query: FactQuery): ReadonlyArray<RetrievalDecision> => {
  try {
    const all = selectAllFacts(store);
    const description = typeof query?.taskDescription === 'string' ? query.taskDescription : '';
    const taskId = collapseWhitespace(typeof query?.taskId === 'string' ? query.taskId : String(query?.taskId ?? ''));
    const wanted = new Set<string>(Array.isArray(query?.tags) ? query.tags : []);
    const countTokens = typeof query?.countTokens === 'function' ? query.countTokens : estimateTokens;
    const queryKeywords = new Set(keywordTokens(description));

    const scores = new Map<SessionFact, number>();
    const excluded = new Map<SessionFact, ExclusionReason>();
    const candidates: SessionFact[] = [];
    for (const fact of all) {
      const score = keywordOverlap(queryKeywords, `${fact.subject} ${fact.relation} ${fact.object}`);
      scores.set(fact, score);
      if (fact.validTo !== undefined) excluded.set(fact, 'invalidated');
      else if (wanted.size > 0 && !fact.tags.some((tag) => wanted.has(tag))) excluded.set(fact, 'tag');
      else if (fact.sourceTaskId === taskId) excluded.set(fact, 'own_task');
      else if (score <= 0 && !fact.tags.includes('convention')) excluded.set(fact, 'no_match');
      else candidates.push(fact);
    }
    candidates.sort(byRank(scores));

    const maxFacts = isCount(query?.maxFacts) ? Math.floor(query.maxFacts) : 0;
    const maxTokens = isCount(query?.maxTokens) ? query.maxTokens : -1;
    const included: SessionFact[] = [];
    candidates.forEach((fact, rank) => {
      if (rank >= maxFacts) excluded.set(fact, 'max_facts');
      else if (fitsBudget(formatSessionFacts([...included, fact]), maxTokens, countTokens)) included.push(fact);
      else excluded.set(fact, 'budget');
    });

    const decide = (fact: SessionFact): RetrievalDecision => {
      const reason = excluded.get(fact);
      const score = scores.get(fact) ?? 0;
      return reason === undefined
        ? { fact, score, decision: 'included' }
        : { fact, score, decision: 'excluded', reason };
    };
    const ranked = new Set(candidates);
    return [...candidates.map(decide), ...all.filter((fact) => !ranked.has(fact)).map(decide)];
  } catch {
    return [];
  }
};

/** The facts to inject for `query`, in rank order, within `maxFacts` and `maxTokens`; never throws. */
export const retrieveFacts = (store: FactStore, query: FactQuery): ReadonlyArray<SessionFact> =>
  explainRetrieval(store, query)
    .filter((decision) => decision.decision === 'included')
    .map((decision) => decision.fact);
