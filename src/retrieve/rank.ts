/**
 * Relevance of a fact to a task description: BM25 over the fact's own fields (from the index
 * postings) plus a weighted BM25 match against the context of the task that produced it (its
 * prompt and summary), times explicit priors for kinds of facts that rarely help a later
 * task, plus a boost that puts the facts of a file the query names exactly first.
 */
import * as PMap from '../base/persistentMap.js';
import type { SessionFact } from '../fact.js';
import type { SearchIndex, TermPostings } from './index/searchIndex.js';
import { mentionedPaths, queryTerms } from './index/terms.js';
import { factTermWeights, idf, postingWeight, quantize } from './index/weights.js';

/**
 * Multipliers for kinds of facts. Each was measured on the labeled evaluation (`npm run eval`):
 * status, test and review-outcome facts, test files and lock/manifest files rarely help a
 * later task; conventions bind every later task.
 */
export interface RankingPriors {
  /** `completed_with` and `reviewed_as`: the outcome of a task or review. */
  readonly status: number;
  /** `tested_by` and `test_failure`: test runs. */
  readonly test: number;
  /** Facts whose subject is a test file (`test/`, `*.test.ts`, `*_test.go`, ...). */
  readonly testFile: number;
  /** Facts whose subject is a lock file or a package manifest. */
  readonly manifest: number;
  /** Facts tagged `convention`. */
  readonly convention: number;
  /** `summary` facts: the task's summary also reaches its facts as context. */
  readonly summary: number;
  /** `issue` facts: review findings. */
  readonly issue: number;
  /** An `issue` whose text is also stored as a `convention` of the same subject (the convention carries it). */
  readonly duplicate: number;
}

/** How retrieval ranks; every field has a documented default. */
export interface RankingOptions {
  readonly priors: RankingPriors;
  /** Weight of the match against the producing task's prompt and summary (0 turns it off). */
  readonly contextWeight: number;
  /** How many of the best-matching tasks lend their context (bounds the cost in long sessions). */
  readonly contextTasks: number;
  /** Added to the score of a fact whose subject is a file the query names exactly. */
  readonly exactFileBoost: number;
}

/** Ranking options a caller may override, priors one by one. */
export type RankingOverrides = Partial<Omit<RankingOptions, 'priors'>> & { readonly priors?: Partial<RankingPriors> };

/** The defaults, chosen on the evaluation histories (see README, Retrieval quality). */
export const DEFAULT_RANKING: RankingOptions = {
  priors: {
    status: 0.2,
    test: 0.2,
    testFile: 0.5,
    manifest: 0.3,
    convention: 2,
    summary: 0.3,
    issue: 0.6,
    duplicate: 0.1,
  },
  contextWeight: 1,
  contextTasks: 16,
  exactFileBoost: 100,
};

const finiteOr = (value: unknown, fallback: number): number =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : fallback;

/** Defaults with the valid overrides applied. */
export const resolveRanking = (overrides: unknown): RankingOptions => {
  const o = (typeof overrides === 'object' && overrides !== null ? overrides : {}) as Record<string, unknown>;
  const p = (typeof o['priors'] === 'object' && o['priors'] !== null ? o['priors'] : {}) as Record<string, unknown>;
  const d = DEFAULT_RANKING;
  return {
    priors: {
      status: finiteOr(p['status'], d.priors.status),
      test: finiteOr(p['test'], d.priors.test),
      testFile: finiteOr(p['testFile'], d.priors.testFile),
      manifest: finiteOr(p['manifest'], d.priors.manifest),
      convention: finiteOr(p['convention'], d.priors.convention),
      summary: finiteOr(p['summary'], d.priors.summary),
      issue: finiteOr(p['issue'], d.priors.issue),
      duplicate: finiteOr(p['duplicate'], d.priors.duplicate),
    },
    contextWeight: finiteOr(o['contextWeight'], d.contextWeight),
    contextTasks: Math.floor(finiteOr(o['contextTasks'], d.contextTasks)),
    exactFileBoost: finiteOr(o['exactFileBoost'], d.exactFileBoost),
  };
};

const STATUS_RELATIONS = new Set(['completed_with', 'reviewed_as']);
const TEST_RELATIONS = new Set(['tested_by', 'test_failure']);
const TEST_FILE =
  /(^|[/\\])(tests?|__tests__|spec|specs|e2e|testdata)[/\\]|[._-](test|spec)\.[\w]+$|_test\.go$|(^|[/\\])test_[^/\\]+\.py$/iu;
const MANIFEST_FILE =
  /(^|[/\\])(package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|bun\.lockb|package\.json|cargo\.lock|cargo\.toml|go\.sum|go\.mod|poetry\.lock|pyproject\.toml|uv\.lock|pipfile(\.lock)?|requirements[\w.-]*\.txt|gemfile(\.lock)?|composer\.(json|lock)|[\w.-]+\.lock)$/iu;

/**
 * The priors that apply to a fact, by name, and their product. `duplicate` says whether the
 * fact repeats a stored convention (the caller knows the store).
 */
export const factPriors = (
  fact: SessionFact,
  priors: RankingPriors,
  duplicate = false,
): { names: string[]; value: number } => {
  const names: string[] = [];
  let value = 1;
  const apply = (name: keyof RankingPriors): void => {
    names.push(name);
    value *= priors[name];
  };
  if (STATUS_RELATIONS.has(fact.relation)) apply('status');
  if (TEST_RELATIONS.has(fact.relation)) apply('test');
  if (TEST_FILE.test(fact.subject)) apply('testFile');
  if (MANIFEST_FILE.test(fact.subject)) apply('manifest');
  if (fact.tags.includes('convention')) apply('convention');
  if (fact.relation === 'summary') apply('summary');
  if (fact.relation === 'issue') apply(duplicate ? 'duplicate' : 'issue');
  return { names, value };
};

/** One query term with its inverse document frequency and postings. */
export interface PlannedTerm {
  readonly term: string;
  readonly idf: number;
  readonly postings: TermPostings | undefined;
}

/** The query, resolved against the index once. */
export interface QueryPlan {
  readonly terms: ReadonlyArray<PlannedTerm>;
  readonly contextTerms: ReadonlyArray<PlannedTerm>;
  readonly paths: ReadonlyArray<string>;
  readonly ranking: RankingOptions;
}

/**
 * Terms too common to tell facts apart are skipped: they would dominate the cost of a query
 * and barely move a score. That is a term in more than half the documents (idf below 0.7, in
 * stores of 50 or more), or in more than 1,000 documents and more than 1% of them (idf below
 * 4.6, against 8 to 12 for the words that identify a fact in a large store).
 */
const isTooCommon = (documents: number, frequency: number): boolean =>
  (frequency > 1000 && frequency * 100 > documents) || (documents >= 50 && frequency * 2 > documents);

const planTerms = (trie: SearchIndex['terms'], documents: number, terms: ReadonlyArray<string>): PlannedTerm[] =>
  terms.flatMap((term) => {
    const postings = PMap.get(trie, term);
    const frequency = postings === undefined ? 0 : PMap.size(postings);
    return isTooCommon(documents, frequency) ? [] : [{ term, idf: idf(documents, frequency), postings }];
  });

/** Resolves a task description against the index. */
export const planQuery = (
  index: SearchIndex,
  validCount: number,
  description: string,
  ranking: RankingOptions,
): QueryPlan => {
  const terms = queryTerms(description);
  return {
    terms: planTerms(index.terms, validCount, terms),
    contextTerms: ranking.contextWeight > 0 ? planTerms(index.taskTerms, index.contextCount, terms) : [],
    paths: mentionedPaths(description),
    ranking,
  };
};

/** A score and what it is made of. */
export interface ScoreParts {
  /** BM25 contribution of each matched query term (idf x the fact's term weight). */
  readonly terms: ReadonlyArray<{ readonly term: string; readonly contribution: number }>;
  /** Weighted BM25 match against the producing task's prompt and summary. */
  readonly context: number;
  /** The priors that applied, by name, and their product. */
  readonly priors: ReadonlyArray<string>;
  readonly prior: number;
  /** The exact-file boost, when the query names the fact's subject. */
  readonly boost: number;
  /** (sum of terms + context) x prior + boost. */
  readonly total: number;
}

/** True when the query names the fact's subject as a file, whole or by its trailing path. */
const namesSubject = (paths: ReadonlyArray<string>, subject: string): boolean =>
  paths.some((path) => subject === path || subject.endsWith(`/${path}`));

/** A score without its term breakdown (what ranking needs). */
export interface Score {
  readonly total: number;
  readonly context: number;
  readonly priors: ReadonlyArray<string>;
  readonly prior: number;
  readonly boost: number;
}

/** Combines a fact's term score (summed in query-term order) with its context, priors and boost. */
export const combineScore = (
  plan: QueryPlan,
  fact: SessionFact,
  termScore: number,
  context: number,
  duplicate: boolean,
): Score => {
  const { names, value } = factPriors(fact, plan.ranking.priors, duplicate);
  const relevance = termScore + context;
  const boost = relevance > 0 && namesSubject(plan.paths, fact.subject) ? plan.ranking.exactFileBoost : 0;
  return { total: relevance * value + boost, context, priors: names, prior: value, boost };
};

/** Scores any fact from its own fields and a given context score, with the term breakdown: the slow path used to explain. */
export const scoreFact = (plan: QueryPlan, fact: SessionFact, context: number, duplicate: boolean): ScoreParts => {
  const weights = factTermWeights(fact);
  const terms: Array<{ term: string; contribution: number }> = [];
  let termScore = 0;
  for (const { term, idf: weight } of plan.terms) {
    const w = weights.get(term);
    if (w === undefined) continue;
    const contribution = weight * postingWeight(quantize(w));
    terms.push({ term, contribution });
    termScore += contribution;
  }
  return { terms, ...combineScore(plan, fact, termScore, context, duplicate) };
};
