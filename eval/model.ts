/**
 * The ranking as a model to fit: each candidate fact of a labeled prompt described by the raw
 * signals the library scores it with, so that any setting of the weights is scored by a few
 * multiplications per fact instead of a retrieval.
 *
 * A fact's score in the library (see src/retrieve/rank.ts) is
 *
 *     (query + w_fb x feedback + w_ctx x context + (w_rec + w_sh / sqrt(files)) x decay^age + w_co x co-change
 *      + w_base x base) x prior + boost
 *
 * The raw signals are read from `explainRetrieval` with every weight at 1 (recency at decay 1/2,
 * so that its part tells the age), which is exact: each part is linear in its weight. Two
 * signals depend on the first pass (feedback words and co-change seeds come from its best
 * facts, the convention base from its best score), whose ranking uses the context weight and
 * the priors: they are read under the weights being fitted, and the fit alternates reading and
 * fitting (see fit.ts).
 */
import {
  DEFAULT_MAX_FACTS,
  type DEFAULT_RANKING,
  explainRetrieval,
  formatFactLine,
  SESSION_CONTEXT_HEADER,
} from '../src/index.js';
import { PRIOR_CLASSES, priorFlags } from '../src/core/search/priors.js';
import { isFileFact } from '../src/core/fact.js';
import * as PMap from '../src/persistent/persistentMap.js';
import type { History, LabeledPrompt } from './lib.js';
import { queryOf, tripleKey } from './lib.js';

/**
 * A resolved ranking: the library's own shape, and the weight of a signal the library does not
 * score (`Candidate.extra`), set only by fits of candidates that carry one (eval/loop.ts).
 */
export type Ranking = typeof DEFAULT_RANKING & { readonly extraWeight?: number; readonly factorWeight?: number };

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
  /** How many files its task changed (the shared recency is divided by its square root). */
  readonly taskFiles: number;
  readonly coChange: number;
  /** The first pass's best score, for a convention no signal matches (0 otherwise). */
  readonly base: number;
  readonly named: boolean;
  readonly convention: boolean;
  /** Prior flags (see priors.ts), with bit PRIOR_CLASSES.length set for a duplicate issue. */
  readonly flags: number;
  /** A signal the library does not score, to try it (eval/loop.ts): added to the relevance times `extraWeight`. */
  readonly extra?: number;
  /** A signal the library does not score, as a multiplier (eval/loop.ts): the score times exp(`factorWeight` x it). */
  readonly factor?: number;
  /** Its task's number, for the section's diversity (eval/loop.ts); -1 or absent: none. */
  readonly group?: number;
  /** A file fact (`isFileFact`), for an experiment's section order (eval/loop.ts). */
  readonly file?: boolean;
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
  recency: { ...ranking.recency, weight: 1, decay: 0.5, shared: 0 },
  coChange: { ...ranking.coChange, weight: 1 },
  conventionBase: 1,
  exactFileBoost: 1,
  floor: 0,
});

/** How many files a task changed (0 for a task the store does not know). */
const taskFilesOf = (store: LabeledPrompt['store'], taskId: string): number => {
  const task = PMap.get(store.index.tasks, taskId);
  return task === undefined ? 0 : PMap.size(task.touched);
};

/** What a fact of a recent task gets per unit of decay: the weight, plus the shared weight over the root of its task's files. */
export const recencyFactor = (recency: Ranking['recency'], taskFiles: number): number =>
  recency.shared > 0 ? recency.weight + recency.shared / Math.sqrt(Math.max(1, taskFiles)) : recency.weight;

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
      file: isFileFact(fact),
      cost: formatFactLine(fact).length + 1,
      validFrom: fact.validFrom,
      id: fact.id,
      query,
      feedback: parts.feedback,
      context: ranking.contextWeight > 0 ? parts.context / ranking.contextWeight : 0,
      age: parts.recency > 0 ? Math.round(-Math.log2(parts.recency)) : -1,
      taskFiles: taskFilesOf(prompt.store, fact.sourceTaskId),
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
    c.age >= 0 && c.age < ranking.recency.tasks
      ? recencyFactor(ranking.recency, c.taskFiles) * ranking.recency.decay ** c.age
      : 0;
  const base = match === 0 && c.convention ? ranking.conventionBase * c.base : 0;
  const relevance =
    match + recency + ranking.coChange.weight * c.coChange + base + (ranking.extraWeight ?? 0) * (c.extra ?? 0);
  const boost = match > 0 && c.named ? ranking.exactFileBoost : 0;
  const factor = Math.exp((ranking.factorWeight ?? 0) * (c.factor ?? 0));
  return { total: relevance * priorOf(c.flags, ranking.priors) * factor + boost, boost };
};

/** What one prompt's section holds under a setting: hits, facts, tokens (estimated, as the library's default). */
export interface Section {
  readonly hits: number;
  readonly facts: number;
  readonly tokens: number;
}

const HEADER = SESSION_CONTEXT_HEADER.length;

/**
 * A prompt's candidates as columns, built once per prompt: `simulateSection` runs for every
 * setting a fit tries (tens per fold, every fold), and reading typed columns costs a fraction of
 * reading the candidate objects.
 */
interface Columns {
  readonly query: Float64Array;
  readonly feedback: Float64Array;
  readonly context: Float64Array;
  readonly coChange: Float64Array;
  readonly base: Float64Array;
  readonly extra: Float64Array;
  readonly factor: Float64Array;
  readonly age: Int32Array;
  readonly taskFiles: Int32Array;
  readonly flags: Int32Array;
  readonly cost: Int32Array;
  readonly named: Uint8Array;
  readonly convention: Uint8Array;
  readonly label: Uint8Array;
  readonly group: Int32Array;
  readonly file: Uint8Array;
  /** Each candidate's place in the tie order: most recent first, then by id. */
  readonly tie: Int32Array;
}

const columnsOf = (() => {
  const built = new WeakMap<PromptCandidates, Columns>();
  return (prompt: PromptCandidates): Columns => {
    let columns = built.get(prompt);
    if (columns !== undefined) return columns;
    const list = prompt.candidates;
    const order = list
      .map((c, i) => ({ c, i }))
      .sort((a, b) => b.c.validFrom - a.c.validFrom || (a.c.id < b.c.id ? -1 : a.c.id > b.c.id ? 1 : 0));
    const tie = new Int32Array(list.length);
    order.forEach(({ i }, place) => {
      tie[i] = place;
    });
    columns = {
      query: Float64Array.from(list, (c) => c.query),
      feedback: Float64Array.from(list, (c) => c.feedback),
      context: Float64Array.from(list, (c) => c.context),
      coChange: Float64Array.from(list, (c) => c.coChange),
      base: Float64Array.from(list, (c) => c.base),
      extra: Float64Array.from(list, (c) => c.extra ?? 0),
      factor: Float64Array.from(list, (c) => c.factor ?? 0),
      age: Int32Array.from(list, (c) => c.age),
      taskFiles: Int32Array.from(list, (c) => c.taskFiles),
      flags: Int32Array.from(list, (c) => c.flags),
      cost: Int32Array.from(list, (c) => c.cost),
      named: Uint8Array.from(list, (c) => (c.named ? 1 : 0)),
      convention: Uint8Array.from(list, (c) => (c.convention ? 1 : 0)),
      label: Uint8Array.from(list, (c) => (c.label ? 1 : 0)),
      group: Int32Array.from(list, (c) => c.group ?? -1),
      file: Uint8Array.from(list, (c) => (c.file === true ? 1 : 0)),
      tie,
    };
    built.set(prompt, columns);
    return columns;
  };
})();

/** The prior of each combination of flags under a set of priors, computed once per set. */
const priorTableOf = (() => {
  const tables = new WeakMap<Ranking['priors'], Map<number, number>>();
  return (priors: Ranking['priors']): Map<number, number> => {
    let table = tables.get(priors);
    if (table === undefined) {
      table = new Map();
      tables.set(priors, table);
    }
    return table;
  };
})();

/** Scratch for `simulateSection` (the eval is single-threaded; sized to the largest prompt seen). */
let totals = new Float64Array(1024);
let boosts = new Float64Array(1024);
let ranked = new Int32Array(1024);

/**
 * An experiment's fill order in place of the ranking's `fill` (eval/loop.ts): the best fact
 * first, then the others among the cap's worth of the best by score over their line's characters
 * to `power`. `scope` says how a line's characters count: `all`, each at its length; `files`, a
 * line that is not a file change as `reference`; `notConventions`, a convention's as `reference`;
 * `capped` (the library's), a line that is not a file change at most `reference`; `noConventions`,
 * as `all`, but only in a prompt none of whose candidates is a convention.
 */
export interface SectionOrder {
  readonly power: number;
  readonly scope: 'all' | 'files' | 'noConventions' | 'notConventions' | 'capped';
  readonly reference: number;
}
let sectionOrder: SectionOrder | undefined;
/** Sets the section order every `simulateSection` uses from now on (undefined: the ranking's `fill`, as the library). */
export const setSectionOrder = (order: SectionOrder | undefined): void => {
  sectionOrder = order;
};

/**
 * A stop other than the ranking's relevance floor, for eval/loop.ts's experiments (the library
 * has only the floor): `ratio`, the floor at `share` of the best score instead of the ranking's;
 * `mass`, a fact whose score to the power `power` is under `share` of the sum of those powers over
 * the capped candidates; `nucleus`, the facts in rank order until their powers hold `share` of
 * that sum (the smallest such set).
 */
export interface SectionStop {
  readonly kind: 'ratio' | 'mass' | 'nucleus';
  readonly share: number;
  readonly power: number;
}
let sectionStop: SectionStop | undefined;

/** Sets the stop every `simulateSection` uses from now on (undefined: the ranking's floor, as the library). */
export const setSectionStop = (stop: SectionStop | undefined): void => {
  sectionStop = stop;
};

/** How many of the best facts a `diversity` other than 1 re-ranks (the rest keep their order). */
const DIVERSE_HEAD = 160;

/** How many of the best candidates the fill order takes from (the library's count cap; `FILL_POOL=100` to try another). */
const FILL_POOL = Number(process.env['FILL_POOL'] ?? DEFAULT_MAX_FACTS);

/**
 * The section the library would inject: candidates ranked (score, then most recent, then id),
 * those scoring 0 out (conventions excepted), at most `maxFacts`, the relevance floor, then the
 * token budget on the one-line-per-fact layout with the estimate `ceil(characters / 4)`. The
 * score is `candidateScore`'s, computed on the prompt's columns. An experiment's `diversity`
 * (eval/loop.ts; the library has none) re-ranks the best greedily by task (see below).
 */

export const simulateSection = (
  prompt: PromptCandidates,
  ranking: Ranking,
  maxFacts: number,
  maxTokens: number,
  diversity = 1,
): Section => {
  const c = columnsOf(prompt);
  const n = c.tie.length;
  if (totals.length < n) {
    totals = new Float64Array(2 * n);
    boosts = new Float64Array(2 * n);
    ranked = new Int32Array(2 * n);
  }
  const priors = priorTableOf(ranking.priors);
  const { tasks, decay } = ranking.recency;
  const feedbackWeight = ranking.feedback.weight;
  const coChangeWeight = ranking.coChange.weight;
  const extraWeight = ranking.extraWeight ?? 0;
  const factorWeight = ranking.factorWeight ?? 0;
  let eligible = 0;
  for (let i = 0; i < n; i += 1) {
    const match = c.query[i]! + feedbackWeight * c.feedback[i]! + ranking.contextWeight * c.context[i]!;
    const age = c.age[i]!;
    const recency = age >= 0 && age < tasks ? recencyFactor(ranking.recency, c.taskFiles[i]!) * decay ** age : 0;
    const convention = c.convention[i] === 1;
    const base = match === 0 && convention ? ranking.conventionBase * c.base[i]! : 0;
    const relevance = match + recency + coChangeWeight * c.coChange[i]! + base + extraWeight * c.extra[i]!;
    const boost = match > 0 && c.named[i] === 1 ? ranking.exactFileBoost : 0;
    const flags = c.flags[i]!;
    let prior = priors.get(flags);
    if (prior === undefined) {
      prior = priorOf(flags, ranking.priors);
      priors.set(flags, prior);
    }
    const total = relevance * prior * (factorWeight === 0 ? 1 : Math.exp(factorWeight * c.factor[i]!)) + boost;
    if (total > 0 || convention) {
      totals[i] = total;
      boosts[i] = boost;
      ranked[eligible] = i;
      eligible += 1;
    }
  }
  const { tie } = c;
  let order = ranked.subarray(0, eligible).sort((a, b) => totals[b]! - totals[a]! || tie[a]! - tie[b]!);
  const inCap = Math.min(eligible, maxFacts);
  if (diversity !== 1) {
    // Greedy: a fact's score is multiplied by `diversity` once per fact of its task already in the section.
    const head = Array.from(order.subarray(0, Math.min(inCap, DIVERSE_HEAD)));
    const counts = new Map<number, number>();
    const picked: number[] = [];
    while (head.length > 0) {
      let bestAt = 0;
      let bestScore = -Infinity;
      for (let at = 0; at < head.length; at += 1) {
        const i = head[at]!;
        const g = c.group[i]!;
        const score = g < 0 ? totals[i]! : totals[i]! * diversity ** (counts.get(g) ?? 0);
        if (score > bestScore) {
          bestScore = score;
          bestAt = at;
        }
      }
      const i = head.splice(bestAt, 1)[0]!;
      picked.push(i);
      const g = c.group[i]!;
      if (g >= 0) counts.set(g, (counts.get(g) ?? 0) + 1);
    }
    order = Int32Array.from([...picked, ...order.subarray(picked.length)]);
  }
  // The fill order (RankingOptions.fill, as the library's `fillOrder`), among the cap's worth of the best.
  const fill = sectionOrder ?? { power: ranking.fill.power, scope: 'capped', reference: ranking.fill.longest };
  if (fill.power !== 0 && inCap > 2) {
    const { power, scope, reference } = fill;
    let applies = true;
    if (scope === 'noConventions') for (let i = 0; i < n && applies; i += 1) if (c.convention[i] === 1) applies = false;
    if (applies) {
      const end = Math.min(inCap, FILL_POOL);
      const rest: Array<{ i: number; value: number }> = [];
      for (let k = 1; k < end; k += 1) {
        const i = order[k]!;
        const cost = c.cost[i]!;
        const counted =
          (scope === 'files' && c.file[i] !== 1) || (scope === 'notConventions' && c.convention[i] === 1)
            ? reference
            : scope === 'capped' && c.file[i] !== 1
              ? Math.min(cost, reference)
              : cost;
        rest.push({ i, value: totals[i]! / counted ** power });
      }
      rest.sort((a, b) => b.value - a.value);
      order = Int32Array.from([order[0]!, ...rest.map(({ i }) => i), ...order.subarray(end)]);
    }
  }
  let best = 0;
  for (let k = 0; k < inCap; k += 1) {
    const i = order[k]!;
    best = Math.max(best, totals[i]! - boosts[i]!);
  }
  let floor = ranking.floor * best;
  if (sectionStop !== undefined) {
    const { kind, share, power } = sectionStop;
    if (kind === 'ratio') floor = share * best;
    else {
      // The capped candidates' scores, boost aside, highest first.
      const scores: number[] = [];
      for (let k = 0; k < inCap; k += 1) {
        const i = order[k]!;
        scores.push(Math.max(0, totals[i]! - boosts[i]!));
      }
      scores.sort((a, b) => b - a);
      const masses = scores.map((score) => score ** power);
      const sum = masses.reduce((a, b) => a + b, 0);
      if (kind === 'mass') floor = (share * sum) ** (1 / power);
      else {
        let held = 0;
        let k = 0;
        while (k < masses.length && held < share * sum) held += masses[k++]!;
        floor = k === 0 ? Infinity : scores[k - 1]!;
      }
    }
  }
  let characters = HEADER;
  let hits = 0;
  let facts = 0;
  for (let k = 0; k < inCap; k += 1) {
    const i = order[k]!;
    const boost = boosts[i]!;
    if (!(boost > 0 || c.convention[i] === 1 || totals[i]! - boost >= floor)) continue;
    if (Math.ceil((characters + c.cost[i]!) / 4) > maxTokens) continue;
    characters += c.cost[i]!;
    facts += 1;
    if (c.label[i] === 1) hits += 1;
  }
  return { hits, facts, tokens: facts === 0 ? 0 : Math.ceil(characters / 4) };
};
