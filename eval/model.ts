/**
 * The ranking as a model to fit: each candidate fact of a labeled prompt described by the raw
 * signals the library scores it with, so that any setting of the weights is scored by a few
 * multiplications per fact instead of a retrieval.
 *
 * A fact's score in the library (see src/retrieve/rank.ts) is
 *
 *     (query + w_fb x feedback + w_ctx x context + w_rec x decay^age + w_co x co-change + w_base x base) x prior + boost
 *
 * The raw signals are read from `explainRetrieval` with every weight at 1 (recency at decay 1/2,
 * so that its part tells the age), which is exact: each part is linear in its weight. Two
 * signals depend on the first pass (feedback words and co-change seeds come from its best
 * facts, the convention base from its best score), whose ranking uses the context weight and
 * the priors: they are read under the weights being fitted, and the fit alternates reading and
 * fitting (see fit.ts).
 */
import { type DEFAULT_RANKING, explainRetrieval, formatFactLine, SESSION_CONTEXT_HEADER } from '../src/index.js';
import { PRIOR_CLASSES, priorFlags } from '../src/core/search/priors.js';
import type { History, LabeledPrompt } from './lib.js';
import { queryOf, tripleKey } from './lib.js';

/** A resolved ranking: the library's own shape. */
export type Ranking = typeof DEFAULT_RANKING;

/** The prior names, in flag order, then `duplicate` (an issue that repeats a stored convention). */
export const PRIOR_NAMES = [...PRIOR_CLASSES, 'duplicate'] as const;
export type PriorName = (typeof PRIOR_NAMES)[number];

/** One candidate fact of a prompt and its raw signals. */
export interface Candidate {
  readonly label: boolean;
  /** Characters its line adds to the section (the line and its line break). */
  readonly cost: number;
  readonly validFrom: number;
  readonly id: string;
  readonly query: number;
  readonly feedback: number;
  readonly context: number;
  /** Its task's place among the most recent other tasks (0: the latest), or -1. */
  readonly age: number;
  readonly coChange: number;
  /** The first pass's best score, for a convention no signal matches (0 otherwise). */
  readonly base: number;
  readonly named: boolean;
  readonly convention: boolean;
  /** Prior flags (see priors.ts), with bit PRIOR_CLASSES.length set for a duplicate issue. */
  readonly flags: number;
}

/** A labeled prompt's candidates (every valid fact that passes the tag and own-task filters). */
export interface PromptCandidates {
  readonly history: string;
  readonly expected: number;
  readonly candidates: ReadonlyArray<Candidate>;
}

const DUPLICATE = 1 << PRIOR_CLASSES.length;

/** The ranking that makes each part of a score its raw signal. */
const probeRanking = (ranking: Ranking): Ranking => ({
  ...ranking,
  feedback: { ...ranking.feedback, weight: 1 },
  recency: { ...ranking.recency, weight: 1, decay: 0.5 },
  coChange: { ...ranking.coChange, weight: 1 },
  conventionBase: 1,
  exactFileBoost: 1,
  floor: 0,
});

/** The candidates of one prompt, their signals read under `ranking` (which sets the first pass). */
export const promptCandidates = (history: string, prompt: LabeledPrompt, ranking: Ranking): PromptCandidates => {
  const probe = probeRanking(ranking);
  const labels = new Set(prompt.expect.map(tripleKey));
  const decisions = explainRetrieval(
    prompt.store,
    queryOf(prompt, { maxFacts: Number.MAX_SAFE_INTEGER, maxTokens: Number.MAX_SAFE_INTEGER, ranking: probe }),
  );
  const candidates: Candidate[] = [];
  for (const { fact, parts, reason } of decisions) {
    if (parts === undefined || reason === 'invalidated' || reason === 'tag' || reason === 'own_task') continue;
    const query = parts.terms.reduce((sum, { contribution }) => sum + contribution, 0);
    const duplicate = parts.priors.includes('duplicate');
    candidates.push({
      label: labels.has(tripleKey(fact)),
      cost: formatFactLine(fact).length + 1,
      validFrom: fact.validFrom,
      id: fact.id,
      query,
      feedback: parts.feedback,
      context: ranking.contextWeight > 0 ? parts.context / ranking.contextWeight : 0,
      age: parts.recency > 0 ? Math.round(-Math.log2(parts.recency)) : -1,
      coChange: parts.coChange,
      base: parts.base,
      named: parts.boost > 0,
      convention: fact.tags.includes('convention'),
      flags: priorFlags(fact) | (duplicate ? DUPLICATE : 0),
    });
  }
  return { history, expected: prompt.expect.length, candidates };
};

/** Every labeled prompt of the histories, as candidates read under `ranking`. */
export const historyCandidates = (histories: ReadonlyArray<History>, ranking: Ranking): PromptCandidates[][] =>
  histories.map((history) => history.prompts.map((prompt) => promptCandidates(history.name, prompt, ranking)));

/** The prior of a candidate's flags under the ranking's priors. */
export const priorOf = (flags: number, priors: Ranking['priors']): number => {
  let value = 1;
  for (let bit = 0; bit < PRIOR_CLASSES.length; bit += 1)
    if ((flags & (1 << bit)) !== 0) {
      const name = PRIOR_CLASSES[bit]!;
      value *= priors[name === 'issue' && (flags & DUPLICATE) !== 0 ? 'duplicate' : name];
    }
  return value;
};

/** A candidate's score under a ranking, as the library computes it (boost included). */
export const candidateScore = (c: Candidate, ranking: Ranking): { total: number; boost: number } => {
  const match = c.query + ranking.feedback.weight * c.feedback + ranking.contextWeight * c.context;
  const recency =
    c.age >= 0 && c.age < ranking.recency.tasks ? ranking.recency.weight * ranking.recency.decay ** c.age : 0;
  const base = match === 0 && c.convention ? ranking.conventionBase * c.base : 0;
  const relevance = match + recency + ranking.coChange.weight * c.coChange + base;
  const boost = match > 0 && c.named ? ranking.exactFileBoost : 0;
  return { total: relevance * priorOf(c.flags, ranking.priors) + boost, boost };
};

/** What one prompt's section holds under a setting: hits, facts, tokens (estimated, as the library's default). */
export interface Section {
  readonly hits: number;
  readonly facts: number;
  readonly tokens: number;
}

const HEADER = SESSION_CONTEXT_HEADER.length;

/**
 * The section the library would inject: candidates ranked (score, then most recent, then id),
 * those scoring 0 out (conventions excepted), at most `maxFacts`, the relevance floor, then the
 * token budget on the one-line-per-fact layout with the estimate `ceil(characters / 4)`.
 */
export const simulateSection = (
  prompt: PromptCandidates,
  ranking: Ranking,
  maxFacts: number,
  maxTokens: number,
): Section => {
  const scored: Array<{ c: Candidate; total: number; boost: number }> = [];
  for (const c of prompt.candidates) {
    const { total, boost } = candidateScore(c, ranking);
    if (total > 0 || c.convention) scored.push({ c, total, boost });
  }
  scored.sort(
    (a, b) => b.total - a.total || b.c.validFrom - a.c.validFrom || (a.c.id < b.c.id ? -1 : a.c.id > b.c.id ? 1 : 0),
  );
  const inCap = scored.slice(0, maxFacts);
  const best = inCap.reduce((max, { total, boost }) => Math.max(max, total - boost), 0);
  const floor = ranking.floor * best;
  let characters = HEADER;
  let hits = 0;
  let facts = 0;
  for (const { c, total, boost } of inCap) {
    if (!(boost > 0 || c.convention || total - boost >= floor)) continue;
    if (Math.ceil((characters + c.cost) / 4) > maxTokens) continue;
    characters += c.cost;
    facts += 1;
    if (c.label) hits += 1;
  }
  return { hits, facts, tokens: facts === 0 ? 0 : Math.ceil(characters / 4) };
};
