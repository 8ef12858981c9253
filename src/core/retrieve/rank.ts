/**
 * The ranking, in one place: what a fact's score is made of, its defaults, and how a query is
 * resolved against the index. A fact's score is a linear model over a few signals, times a
 * prior for its kind:
 *
 *     (query BM25 + feedback + context + recency + co-change + convention base) x prior + boost
 *
 * - query BM25: the fact's own fields (subject weighted 3, object 1) against the query terms
 *   (its weight is 1: every other weight is relative to it);
 * - feedback: the same scorer with the words of the query's best few matches (pseudo-relevance
 *   feedback), for facts that need the words of the best matches, not of the prompt;
 * - context: BM25 of the query against the prompt and summary of the task that produced the fact,
 *   shared out over what the task did (for a file fact, summed over every task that changed
 *   the file, each task's score divided by the number of files it changed to the power
 *   `contextShare`), among the best-matching tasks, an old task's times `contextOld`;
 * - recency: the facts of the most recent other tasks, decaying per task, on their own weight:
 *   a prompt that matches nothing still gets what the last tasks did; plus a shared recency,
 *   over the square root of the files the task changed (the task's size as a feature);
 * - co-change: files that changed together with the query's best-matching files, by how often;
 * - convention base: a share of the query's best score for a convention it does not match
 *   (conventions bind every later task);
 * - priors: multipliers for kinds of facts that rarely (or always) help a later task;
 * - boost: puts the facts of a file the query names exactly first.
 *
 * The weights and priors are fitted on labeled histories (`npm run eval -- --fit`, see
 * docs/retrieval.md); `DEFAULT_RANKING` ships the fitted values.
 */
import { deepFreeze } from '../../persistent/freeze.js';
import * as PMap from '../../persistent/persistentMap.js';
import { kindOf } from '../../base/describe.js';
import { isRecord } from '../../base/record.js';
import { checkedFact, type SessionFact } from '../fact.js';
import { type Postings, postingsSize } from '../search/postings.js';
import { PRIOR_CLASSES, priorFlags } from '../search/priors.js';
import { RECENT_TASKS, type SearchIndex } from '../search/searchIndex.js';
import { withoutSessionContext } from '../search/sectionLines.js';
import { mentionedPaths, queryTerms } from '../search/terms.js';
import { idf } from '../search/weights.js';

/**
 * Multipliers for kinds of facts, fitted on the labeled evaluation (`npm run eval -- --fit`):
 * status, test and review-outcome facts and summaries rarely help a later task; conventions
 * bind every later task. A fact of several kinds gets the product.
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
  /** File facts of documentation (`docs/`, `*.md`, `README`, `CHANGELOG`, ...). */
  readonly docs: number;
  /** File facts of generated files (snapshots, `generated/`, `dist/`, `vendor/`, `*.pb.go`, `*.min.js`, ...). */
  readonly generated: number;
  /** Facts tagged `convention`. */
  readonly convention: number;
  /** `summary` facts: the task's summary also reaches its facts as context. */
  readonly summary: number;
  /** `issue` facts: review findings. */
  readonly issue: number;
  /** An `issue` whose text is also stored as a `convention` of the same subject (the convention carries it). */
  readonly duplicate: number;
}

/** Pseudo-relevance feedback: a second query made of the words of the first one's best matches. */
export interface FeedbackOptions {
  /** Weight of the feedback BM25 in the relevance (0 turns it off). */
  readonly weight: number;
  /** How many of the best first-pass facts lend their words. */
  readonly facts: number;
  /** How many words the feedback query keeps (the most telling ones). */
  readonly terms: number;
  /**
   * A word is a feedback word only while it is in at most this share of the valid facts (and in
   * at least one fact besides the feedback facts' own): `src`, `app` and `ts` tell nothing.
   */
  readonly maxShare: number;
}

/** Recency: the facts of the tasks just before the query's own, on their own weight. */
export interface RecencyOptions {
  /** What the facts of the most recent other task get (0 turns it off). */
  readonly weight: number;
  /** How many recent tasks get it (at most RECENT_TASKS - 1: the index keeps the most recent tasks in order). */
  readonly tasks: number;
  /** What each task further back gets, relative to the one after it. */
  readonly decay: number;
  /**
   * What the facts of the most recent other task get besides, divided by the square root of the
   * number of files the task changed (decaying the same): of a task that changed one file, that
   * file is likely the next task's; of a sweep of thirty, any one of them less so.
   */
  readonly shared: number;
}

/** Co-change: files that changed in the same tasks as the query's best-matching files. */
export interface CoChangeOptions {
  /**
   * Weight of the co-change score: for each of the first pass's best files, the share of the
   * tasks that changed it that also changed this file, times that file's score relative to the
   * best (0 turns it off).
   */
  readonly weight: number;
  /** How many of the first pass's best file facts are looked at. */
  readonly seeds: number;
}

/**
 * How the token budget is spent once the facts are ranked: the best fact first, then the others
 * by their score per character of their line (its line break included; in the grouped layout,
 * a task's own file change counts the path and `, ` it adds to its task's line) to `power`, so
 * that the budget holds more of the short lines that score nearly as well as a long one. A
 * line that is not a file change counts at most `longest` characters: the length of a
 * convention, a requirement or a finding is what it says, while a path's says nothing of its
 * worth. The budget, the cap and the floor are the same either way; only the order in which
 * the section is filled changes (see docs/retrieval.md).
 */
export interface FillOptions {
  /** The power of a line's characters its score is divided by (0: the section is filled in rank order). */
  readonly power: number;
  /** The most characters a line that is not a file change counts for (at least 1). */
  readonly longest: number;
}

/** How retrieval ranks; every field has a documented default. */
export interface RankingOptions {
  readonly priors: RankingPriors;
  /** Weight of the match against the producing task's prompt and summary (0 turns it off). */
  readonly contextWeight: number;
  /** How many of the best-matching tasks lend their context (bounds the cost in long sessions). */
  readonly contextTasks: number;
  /**
   * How a task's context is shared out over the files it changed: each file gets the task's
   * score divided by its number of files to this power (1: shared evenly; 0: each file gets the
   * whole score). Below 1, the files of a sweeping commit (a rename, a refactor, a dependency
   * bump) are not starved by their number.
   */
  readonly contextShare: number;
  /**
   * The share of its context an old task lends (1: as much as any other; 0: none): a task is old
   * once OLD_TASK_AFTER (150) tasks have had a prompt recorded after its own. In a long session
   * the best-matching tasks are chosen among many more, and an old task's prompt that matches
   * well outweighs the latest work on the files it changed; chosen on the long sessions (see
   * docs/retrieval.md), and the same for every session shorter than that.
   */
  readonly contextOld: number;
  /** Added to the score of a fact whose subject is a file the query names exactly. */
  readonly exactFileBoost: number;
  readonly feedback: FeedbackOptions;
  readonly recency: RecencyOptions;
  readonly coChange: CoChangeOptions;
  /** Share of the query's best score a convention gets when the query does not match it. */
  readonly conventionBase: number;
  /**
   * The relevance floor: a fact whose score (boost aside) is below this share of the best one's
   * is left out (boosted facts and conventions excepted). With the token budget, it decides how
   * many facts go in.
   */
  readonly floor: number;
  readonly fill: FillOptions;
}

/** Ranking options a caller may override, field by field. */
export type RankingOverrides = Partial<
  Omit<RankingOptions, 'priors' | 'feedback' | 'recency' | 'coChange' | 'fill'>
> & {
  readonly priors?: Partial<RankingPriors>;
  readonly feedback?: Partial<FeedbackOptions>;
  readonly recency?: Partial<RecencyOptions>;
  readonly coChange?: Partial<CoChangeOptions>;
  readonly fill?: Partial<FillOptions>;
};

/** The defaults: fitted on the labeled histories (`npm run eval -- --fit`; see docs/retrieval.md). Frozen: shared by every query. */
export const DEFAULT_RANKING: RankingOptions = deepFreeze({
  priors: {
    status: 0.204,
    test: 0.567,
    testFile: 0.803,
    manifest: 1.13,
    docs: 0.762,
    generated: 0.835,
    convention: 3.66,
    summary: 0.3,
    issue: 1.09,
    duplicate: 0.704,
  },
  contextWeight: 1.3,
  contextTasks: 32,
  contextShare: 0.25,
  contextOld: 0.7,
  exactFileBoost: 100,
  feedback: { weight: 0.243, facts: 3, terms: 8, maxShare: 0.05 },
  recency: { weight: 2.02, tasks: 63, decay: 0.971, shared: 0.441 },
  coChange: { weight: 1.86, seeds: 3 },
  conventionBase: 0.425,
  floor: 0.03,
  fill: { power: 0.75, longest: 60 },
});

/**
 * The largest weight or prior a ranking takes (every field but the counts, `contextShare` and
 * `recency.decay`): a larger one is taken as this, and one above 0 but smaller than its inverse,
 * `MIN_RANKING_WEIGHT`, as that. Without bounds, weights near the largest double (1e308) made
 * scores overflow to Infinity (a relevance floor of Infinity left out every finite score,
 * Infinity times a prior of 0 gave NaN), and weights below 1e-307 made them lose their
 * precision: either way the top k found through the index no longer matched the exhaustive
 * ranking. Within the bounds every score is 0 or between about 1e-300 and 1e210. A signal before
 * its weight is between about 1e-13 (a term in every fact) and 1e22 (BM25 summed over every term
 * a string can hold, a context over every task); a score is signals times weights, plus the
 * convention base (a weight times the query's best score, which has its weight and priors) and
 * co-change (a weight times the ratio of two such scores), times the fact's priors, at most six
 * (a relation's, a convention's and four of its path). Far beyond the fitted weights (0.15 to
 * 100) both ways, a caller can still make one signal outweigh, or trail, every other.
 */
export const MAX_RANKING_WEIGHT = 1e12;

/** The smallest weight or prior above 0 a ranking takes (see `MAX_RANKING_WEIGHT`); 0 stays 0, a signal turned off. */
export const MIN_RANKING_WEIGHT = 1 / MAX_RANKING_WEIGHT;

/**
 * The bounds of a recency decay above 0: the recency of the 63rd task back is the weight times
 * decay^62, within 1e-124 and 1e124 here, which keeps it within the range the weights' bounds
 * keep every score in.
 */
export const RECENCY_DECAY_BOUNDS = { min: 0.01, max: 100 } as const;

/** The largest `fill.power` a ranking takes: past it, a line's length alone orders the section. */
export const MAX_FILL_POWER = 8;

/** True for what a ranking field takes: a finite number 0 or more (anything else is its default). */
const isRankingNumber = (value: unknown): value is number =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0;

/** `value` when a ranking takes it, -0 read as 0 (as the tracker's settings keep it), else `fallback`. */
const finiteOr = (value: unknown, fallback: number): number => (isRankingNumber(value) ? value + 0 : fallback);

/** A weight: `finiteOr`, and when above 0 within `min` and `max` (0 stays 0: the signal turned off). */
const weightOr = (value: unknown, fallback: number, min = MIN_RANKING_WEIGHT, max = MAX_RANKING_WEIGHT): number => {
  const weight = finiteOr(value, fallback);
  return weight === 0 ? 0 : Math.min(max, Math.max(min, weight));
};

const fieldsOf = (value: unknown): Record<string, unknown> =>
  (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;

/**
 * Defaults with the valid overrides applied: a field that is not a finite number >= 0 keeps its
 * default, and a weight, prior or decay above 0 is taken within its bounds
 * (`MAX_RANKING_WEIGHT`, `MIN_RANKING_WEIGHT`, `RECENCY_DECAY_BOUNDS`), so that no score
 * overflows or loses its precision.
 */
export const resolveRanking = (overrides: unknown): RankingOptions => {
  // No overrides, the usual query: the one frozen value, so every such query's plan has the same
  // shape (a fresh object per query changed shape once the engine optimized this function, and
  // code compiled for the plan left the optimized tier).
  if (overrides === undefined) return DEFAULT_RANKING;
  const o = fieldsOf(overrides);
  const p = fieldsOf(o['priors']);
  const f = fieldsOf(o['feedback']);
  const r = fieldsOf(o['recency']);
  const c = fieldsOf(o['coChange']);
  const l = fieldsOf(o['fill']);
  const d = DEFAULT_RANKING;
  return {
    priors: {
      status: weightOr(p['status'], d.priors.status),
      test: weightOr(p['test'], d.priors.test),
      testFile: weightOr(p['testFile'], d.priors.testFile),
      manifest: weightOr(p['manifest'], d.priors.manifest),
      docs: weightOr(p['docs'], d.priors.docs),
      generated: weightOr(p['generated'], d.priors.generated),
      convention: weightOr(p['convention'], d.priors.convention),
      summary: weightOr(p['summary'], d.priors.summary),
      issue: weightOr(p['issue'], d.priors.issue),
      duplicate: weightOr(p['duplicate'], d.priors.duplicate),
    },
    contextWeight: weightOr(o['contextWeight'], d.contextWeight),
    contextTasks: Math.floor(finiteOr(o['contextTasks'], d.contextTasks)),
    contextShare: Math.min(1, finiteOr(o['contextShare'], d.contextShare)),
    contextOld: Math.min(1, finiteOr(o['contextOld'], d.contextOld)),
    exactFileBoost: weightOr(o['exactFileBoost'], d.exactFileBoost),
    feedback: {
      weight: weightOr(f['weight'], d.feedback.weight),
      facts: Math.floor(finiteOr(f['facts'], d.feedback.facts)),
      terms: Math.floor(finiteOr(f['terms'], d.feedback.terms)),
      maxShare: weightOr(f['maxShare'], d.feedback.maxShare),
    },
    recency: {
      weight: weightOr(r['weight'], d.recency.weight),
      tasks: Math.min(RECENT_TASKS - 1, Math.floor(finiteOr(r['tasks'], d.recency.tasks))),
      decay: weightOr(r['decay'], d.recency.decay, RECENCY_DECAY_BOUNDS.min, RECENCY_DECAY_BOUNDS.max),
      shared: weightOr(r['shared'], d.recency.shared),
    },
    coChange: {
      weight: weightOr(c['weight'], d.coChange.weight),
      seeds: Math.floor(finiteOr(c['seeds'], d.coChange.seeds)),
    },
    conventionBase: weightOr(o['conventionBase'], d.conventionBase),
    floor: weightOr(o['floor'], d.floor),
    fill: {
      power: Math.min(MAX_FILL_POWER, finiteOr(l['power'], d.fill.power)),
      longest: Math.max(1, finiteOr(l['longest'], d.fill.longest)),
    },
  };
};

/**
 * The overrides of `value` a ranking takes, read into plain, frozen data: of the fields
 * `DEFAULT_RANKING` has, each finite number 0 or more (-0 as 0, as JSON writes it), and each
 * group with one. What is left out (a bigint, a string, a function, a symbol, a Map, a field
 * no ranking has, a `toJSON`) `resolveRanking` reads as its default anyway, so no ranking
 * changes; what is kept survives `JSON.stringify` and `structuredClone` as it is, and ranks the
 * same there. Only the fields named are read, each once.
 */
export const readRankingOverrides = (value: unknown): RankingOverrides => {
  const read = (given: unknown, defaults: object): Readonly<Record<string, unknown>> => {
    const fields = fieldsOf(given);
    const kept: Record<string, unknown> = {};
    for (const [key, fallback] of Object.entries(defaults)) {
      const field = fields[key];
      if (typeof fallback === 'number') {
        if (isRankingNumber(field)) kept[key] = field + 0;
      } else {
        const group = read(field, fallback as object);
        if (Object.keys(group).length > 0) kept[key] = group;
      }
    }
    return Object.freeze(kept);
  };
  return read(value, DEFAULT_RANKING) as RankingOverrides;
};

const ISSUE = 1 << PRIOR_CLASSES.indexOf('issue');
const CONVENTION = 1 << PRIOR_CLASSES.indexOf('convention');

/**
 * The priors of a fact with these prior flags, by name, and their product. `duplicate` says
 * whether an `issue` repeats a stored convention (which the store, not the fact, knows).
 */
export const flagPriors = (
  flags: number,
  priors: RankingPriors,
  duplicate: boolean,
): { names: string[]; value: number } => {
  const names: string[] = [];
  let value = 1;
  PRIOR_CLASSES.forEach((name, bit) => {
    if ((flags & (1 << bit)) === 0) return;
    const applied = name === 'issue' && duplicate ? 'duplicate' : name;
    names.push(applied);
    value *= priors[applied];
  });
  return { names, value };
};

/** The product of the priors of these flags (as `flagPriors`, without naming them). */
export const priorValue = (flags: number, priors: RankingPriors, duplicate: boolean): number => {
  let value = 1;
  for (let bit = 0; bit < PRIOR_CLASSES.length; bit += 1)
    if ((flags & (1 << bit)) !== 0) {
      const name = PRIOR_CLASSES[bit]!;
      value *= priors[name === 'issue' && duplicate ? 'duplicate' : name];
    }
  return value;
};

/**
 * The priors that apply to a fact, by name, and their product (`duplicate`: see `flagPriors`).
 * A fact or priors that are no object (null) are refused with a TypeError naming them.
 */
export const factPriors = (
  fact: SessionFact,
  priors: RankingPriors,
  duplicate = false,
): { names: string[]; value: number } => {
  const flags = priorFlags(checkedFact(fact, 'the fact'));
  if (!isRecord(priors)) throw new TypeError(`the priors are ${kindOf(priors)}, not ranking priors (an object)`);
  return flagPriors(flags, priors, duplicate);
};

/**
 * The largest prior a fact with these flags can get, whatever the store says of duplicates:
 * an upper bound that needs no lookup.
 */
export const priorBound = (flags: number, priors: RankingPriors): number => {
  const base = priorValue(flags & ~ISSUE, priors, false);
  return (flags & ISSUE) === 0 ? base : base * Math.max(priors.issue, priors.duplicate);
};

/**
 * The largest prior any fact but a convention can get: the product of every prior class
 * above 1 (with the defaults, 1). Conventions are ranked apart (see `conventionTerms`).
 */
export const maxPriorBound = (priors: RankingPriors): number =>
  PRIOR_CLASSES.reduce((product, name) => {
    if (name === 'convention') return product;
    const prior = name === 'issue' ? Math.max(priors.issue, priors.duplicate) : priors[name];
    return product * Math.max(1, prior);
  }, 1);

/** True for the flags of an `issue` (whose prior depends on whether it repeats a convention). */
export const hasIssueFlag = (flags: number): boolean => (flags & ISSUE) !== 0;

/** True for the flags of a convention. */
export const isConventionFlags = (flags: number): boolean => (flags & CONVENTION) !== 0;

/** One term of a query: its inverse document frequency, its multiplier, and where its postings are. */
export interface PlannedTerm {
  readonly term: string;
  readonly idf: number;
  /** 1 for a word of the query; the feedback weight for a feedback word. */
  readonly multiplier: number;
  /** Postings over the facts that are not conventions. */
  readonly postings: Postings | undefined;
  /** Postings over the conventions. */
  readonly conventions: Postings | undefined;
  /** How many valid facts hold the term. */
  readonly frequency: number;
}

/** The query, resolved against the index once. */
export interface QueryPlan {
  readonly terms: ReadonlyArray<PlannedTerm>;
  readonly contextTerms: ReadonlyArray<PlannedTerm>;
  readonly paths: ReadonlyArray<string>;
  readonly ranking: RankingOptions;
}

const sizeOf = (postings: Postings | undefined): number => (postings === undefined ? 0 : postingsSize(postings));

/** A fact term of a query, resolved against the index; `weight` multiplies its contributions. */
export const planTerm = (index: SearchIndex, documents: number, term: string, multiplier: number): PlannedTerm => {
  const postings = PMap.get(index.terms, term);
  const conventions = PMap.get(index.conventionTerms, term);
  const frequency = sizeOf(postings) + sizeOf(conventions);
  return { term, idf: idf(documents, frequency), multiplier, postings, conventions, frequency };
};

const planContextTerm = (index: SearchIndex, term: string): PlannedTerm => {
  const postings = PMap.get(index.taskTerms, term);
  const frequency = sizeOf(postings);
  return { term, idf: idf(index.contextCount, frequency), multiplier: 1, postings, conventions: undefined, frequency };
};

/** Resolves a task description against the index. Every term counts: none is skipped as too common. */
export const planQuery = (
  index: SearchIndex,
  validCount: number,
  description: string,
  ranking: RankingOptions,
): QueryPlan => {
  // A section the prompt carries from an earlier one is facts, not words of this task.
  const words = withoutSessionContext(description);
  const terms = queryTerms(words);
  // Filled by pushes, not `map`: once the engine compiles this function, its inlined `map` makes
  // holey arrays, whose shape differs from those the interpreter made, and every function
  // compiled for the plan's lists then left the optimized tier at once.
  const planned: PlannedTerm[] = [];
  const context: PlannedTerm[] = [];
  for (const term of terms) {
    planned.push(planTerm(index, validCount, term, 1));
    if (ranking.contextWeight > 0) context.push(planContextTerm(index, term));
  }
  return { terms: planned, contextTerms: context, paths: mentionedPaths(words), ranking };
};

/** A score and what it is made of. */
export interface ScoreParts {
  /** BM25 contribution of each matched query term (idf x the fact's term weight). */
  readonly terms: ReadonlyArray<{ readonly term: string; readonly contribution: number }>;
  /** Pseudo-relevance feedback: the weighted BM25 of the feedback words (already times the feedback weight). */
  readonly feedback: number;
  /** Weighted BM25 match against the producing task's prompt and summary. */
  readonly context: number;
  /** The recency of a fact of one of the most recent other tasks, the shared recency included (already weighted). */
  readonly recency: number;
  /** The co-change score of a file that changed with the query's best files (already times its weight). */
  readonly coChange: number;
  /** The base a convention gets when the query does not match it. */
  readonly base: number;
  /** The priors that applied, by name, and their product. */
  readonly priors: ReadonlyArray<string>;
  readonly prior: number;
  /** The exact-file boost, when the query names the fact's subject. */
  readonly boost: number;
  /** (sum of terms + feedback + context + recency + co-change + base) x prior + boost. */
  readonly total: number;
}

/**
 * True when the query names the fact's subject as a file, whole or by its trailing path (the
 * subject ends with `/` and the path; checked without building that string, once per fact and path).
 */
export const namesSubject = (paths: ReadonlyArray<string>, subject: string): boolean => {
  for (const path of paths)
    if (
      subject === path ||
      (subject.length > path.length &&
        subject.charCodeAt(subject.length - path.length - 1) === 47 &&
        subject.endsWith(path))
    )
      return true;
  return false;
};
