/**
 * Fitting the ranking on labeled histories.
 *
 * What is fitted: the weights of feedback, context, recency (and its decay per task), the shared
 * recency, co-change and the convention base relative to the query's own BM25 (weight 1), the
 * prior of each kind of fact, and the relevance floor; for eval/loop.ts's experiments, also the
 * weight of a signal the library does not score, when the candidates carry one. The rest of the
 * ranking is structure, kept as it is: how many tasks lend context or recency, how a task's
 * context is shared out over its files (`contextShare`), how many feedback words and co-change
 * seeds, the exact-file boost.
 *
 * The objective is recall within the budget: the share of the labels the section holds, each
 * label counting the same (`micro`; weighing each history the same, `macro`, gave 0.831 instead
 * of 0.841 leave-one-out on the real histories before the L2 penalty). Recall at a budget is a
 * step function of the weights, so it is reached in three steps:
 *
 * 1. The weights and priors minimize a smooth stand-in, the listwise cross-entropy of the labels
 *    under a softmax over the log scores (ListNet): it is lowest when the labels hold the highest
 *    scores of their prompt, which is what puts them in the budget. Adam, a fixed number of
 *    steps from all weights 1, so a fit is deterministic. An L2 penalty (L2) pulls every log
 *    weight towards 0, that is every weight towards 1: without it the fit follows the histories
 *    it sees too closely (leave-one-out recall on the real histories 0.840 with 0.001; 0.842 to
 *    0.856 with 0.005 to 0.02, with no clear best among them: see docs/retrieval.md).
 * 2. The floor is chosen on recall within the budget itself: the highest recall whose precision
 *    is at least PRECISION_MARGIN times the recency baseline's at the same tokens, on the
 *    histories the fit sees.
 * 3. One sweep over the weights and priors, each halved or doubled where that raises recall
 *    within the budget under the same precision condition (`polish`).
 *
 * The feedback words, co-change seeds and convention base come from the first pass, which the
 * weights being fitted rank: they are read once, under START (reading them again under the
 * fitted weights and fitting again changed no figure of the evaluation).
 */
import { DEFAULT_RANKING } from '../src/index.js';
import { PRIOR_CLASSES } from '../src/core/search/priors.js';
import { type PromptCandidates, PRIOR_NAMES, type Ranking, simulateSection } from './model.js';

/** The weights step 1 fits, besides the priors and the recency decay. */
const WEIGHTS = ['feedback', 'context', 'recency', 'coChange', 'base', 'shared', 'extra'] as const;
/** One weight step 1 fits. */
export type Weight = (typeof WEIGHTS)[number];

/** The fitted ranking's precision must be at least this times the recency baseline's at the same tokens. */
export const PRECISION_MARGIN = 1.1;

/** Where every fit starts: all weights and priors 1, no floor (the structure of the defaults). */
export const START: Ranking = {
  ...DEFAULT_RANKING,
  priors: Object.fromEntries(PRIOR_NAMES.map((name) => [name, 1])) as unknown as Ranking['priors'],
  contextWeight: 1,
  feedback: { ...DEFAULT_RANKING.feedback, weight: 1 },
  recency: { ...DEFAULT_RANKING.recency, weight: 1, decay: 0.9, shared: 1 },
  coChange: { ...DEFAULT_RANKING.coChange, weight: 1 },
  conventionBase: 1,
  floor: 0,
};

const STEPS = 200;
const LEARNING_RATE = 0.08;
const L2 = 0.005;
const EPSILON = 1e-9;

/**
 * One prompt's candidates as arrays, without the boosted ones (the boost puts them first whatever
 * the weights) and without those no signal reaches (no weight can rank them: a label among them
 * is a miss whatever the fit does, and left in it would only pull the temperature down).
 */
interface Prepared {
  readonly labels: number;
  readonly label: Uint8Array;
  readonly signals: Record<'query' | Weight, Float64Array>;
  readonly age: Int32Array;
  /** The experimental multiplier signal (model.ts's `Candidate.factor`; 0 without one). */
  readonly factor: Float64Array;
  /** The candidate's prior flags (see model.ts). */
  readonly flags: Int32Array;
}

/** A history's prompts prepared for step 1, and how many labels they hold (for the `macro` weighting). */
export interface PreparedHistory {
  readonly prompts: ReadonlyArray<Prepared>;
  readonly labels: number;
  /** How much each of its labels counts in step 1's loss, against 1 for another history's (eval/loop.ts's HAND_WEIGHT). */
  readonly weight?: number;
}

/** The weighting of histories in the loss: each history the same (`macro`) or each label the same (`micro`). */
export type Weighting = 'macro' | 'micro';

/**
 * Each history's prompts as step 1 reads them, for recency over the last `tasks` tasks. They do
 * not depend on the weights, so leave-one-out prepares every history once and each fold takes
 * the others'.
 */
export const prepareHistories = (
  histories: ReadonlyArray<ReadonlyArray<PromptCandidates>>,
  tasks: number,
): PreparedHistory[] =>
  histories.map((prompts) => {
    const out: Prepared[] = [];
    for (const prompt of prompts) {
      const candidates = prompt.candidates.filter(
        (c) =>
          !(c.named && (c.query > 0 || c.feedback > 0 || c.context > 0)) &&
          (c.query > 0 ||
            c.feedback > 0 ||
            c.context > 0 ||
            (c.age >= 0 && c.age < tasks) ||
            c.coChange > 0 ||
            c.base > 0 ||
            (c.extra ?? 0) > 0),
      );
      const count = candidates.filter((c) => c.label).length;
      if (count === 0) continue;
      const n = candidates.length;
      const column = (read: (i: number) => number): Float64Array => Float64Array.from({ length: n }, (_, i) => read(i));
      out.push({
        labels: count,
        label: Uint8Array.from(candidates, (c) => (c.label ? 1 : 0)),
        signals: {
          query: column((i) => candidates[i]!.query),
          feedback: column((i) => candidates[i]!.feedback),
          context: column((i) => candidates[i]!.context),
          recency: column(() => 1),
          shared: column((i) => 1 / Math.sqrt(Math.max(1, candidates[i]!.taskFiles))),
          coChange: column((i) => candidates[i]!.coChange),
          base: column((i) => {
            const c = candidates[i]!;
            return c.convention && c.query === 0 && c.feedback === 0 && c.context === 0 ? c.base : 0;
          }),
          extra: column((i) => candidates[i]!.extra ?? 0),
        },
        factor: column((i) => candidates[i]!.factor ?? 0),
        age: Int32Array.from(candidates, (c) => (c.age >= 0 && c.age < tasks ? c.age : -1)),
        flags: Int32Array.from(candidates, (c) => c.flags),
      });
    }
    return { prompts: out, labels: out.reduce((sum, p) => sum + p.labels, 0) };
  });

/** Step 1's view of the prepared prompts: each with its weight and its candidates' flag combinations. */
const weighted = (
  histories: ReadonlyArray<PreparedHistory>,
  weighting: Weighting,
  combinations: number[],
): Array<Prepared & { weight: number; combination: Int32Array }> => {
  const at = new Map<number, number>();
  const combinationOf = (flags: number): number => {
    let index = at.get(flags);
    if (index === undefined) {
      index = combinations.push(flags) - 1;
      at.set(flags, index);
    }
    return index;
  };
  return histories.flatMap(({ prompts, labels, weight = 1 }) =>
    prompts.map((p) => ({
      ...p,
      weight: weight * (weighting === 'macro' ? 1 / labels : 1),
      combination: p.flags.map(combinationOf),
    })),
  );
};

/** The prior indices (into PRIOR_NAMES) a combination of flags multiplies. */
const priorIndices = (flags: number): number[] => {
  const out: number[] = [];
  for (let bit = 0; bit < PRIOR_CLASSES.length; bit += 1)
    if ((flags & (1 << bit)) !== 0)
      out.push(
        PRIOR_CLASSES[bit] === 'issue' && (flags & (1 << PRIOR_CLASSES.length)) !== 0
          ? PRIOR_NAMES.indexOf('duplicate')
          : bit,
      );
  return out;
};

/** Step 1: weights, priors and decay minimizing the listwise cross-entropy, from START. */
const fitWeights = (
  histories: ReadonlyArray<PreparedHistory>,
  base: Ranking,
  weighting: Weighting,
  l2: number = L2,
  off: ReadonlyArray<Weight> = [],
): Ranking => {
  // The extra signal is fitted only when some candidate carries it (eval/loop.ts's experiments).
  const hasExtra = histories.some((h) => h.prompts.some((p) => p.signals.extra.some((x) => x > 0)));
  const on = WEIGHTS.map((name) => (off.includes(name) || (name === 'extra' && !hasExtra) ? 0 : 1));
  const combinations: number[] = [];
  const data = weighted(histories, weighting, combinations);
  const indices = combinations.map(priorIndices);
  // Parameters: log weights, log priors, the decay's logit, the log temperature.
  const nw = WEIGHTS.length;
  const np = PRIOR_NAMES.length;
  const hasFactor = histories.some((h) => h.prompts.some((p) => p.factor.some((x) => x !== 0)));
  const size = nw + np + 3;
  const theta = new Float64Array(size);
  const decayAt = nw + np;
  const temperatureAt = decayAt + 1;
  const factorAt = decayAt + 2;
  theta[decayAt] = Math.log(START.recency.decay / (1 - START.recency.decay));
  const m = new Float64Array(size);
  const v = new Float64Array(size);
  const total = data.reduce((sum, p) => sum + p.weight * p.labels, 0);
  const largest = data.reduce((max, p) => Math.max(max, p.label.length), 0);
  const lin = new Float64Array(largest);
  const z = new Float64Array(largest);
  /** exp(z - max) per candidate: the softmax's numerators, read twice a step. */
  const shifted = new Float64Array(largest);
  const rec = new Float64Array(largest);
  const powers = new Float64Array(base.recency.tasks + 1);
  const logPriors = new Float64Array(combinations.length);
  const perCombination = new Float64Array(combinations.length);
  for (let step = 1; step <= STEPS; step += 1) {
    const w = WEIGHTS.map((_, k) => on[k]! * Math.exp(theta[k]!));
    const decay = 1 / (1 + Math.exp(-theta[decayAt]!));
    const a = Math.exp(theta[temperatureAt]!);
    for (let age = 0; age < powers.length; age += 1) powers[age] = decay ** age;
    indices.forEach((list, c) => {
      logPriors[c] = list.reduce((sum, k) => sum + theta[nw + k]!, 0);
    });
    perCombination.fill(0);
    const grad = new Float64Array(size);
    let gFeedback = 0;
    let gContext = 0;
    let gRecency = 0;
    let gCoChange = 0;
    let gBase = 0;
    let gShared = 0;
    let gExtra = 0;
    let gDecay = 0;
    let gTemperature = 0;
    let gFactor = 0;
    const u = hasFactor ? theta[factorAt]! : 0;
    for (const p of data) {
      const n = p.label.length;
      const { query, feedback, context, coChange, base: baseSignal, shared, extra } = p.signals;
      let max = -Infinity;
      for (let i = 0; i < n; i += 1) {
        const age = p.age[i]!;
        rec[i] = age >= 0 ? powers[age]! : 0;
        lin[i] =
          query[i]! +
          w[0]! * feedback[i]! +
          w[1]! * context[i]! +
          w[2]! * rec[i]! +
          w[3]! * coChange[i]! +
          w[4]! * baseSignal[i]! +
          w[5]! * rec[i]! * shared[i]! +
          w[6]! * extra[i]! +
          EPSILON;
        z[i] = a * (logPriors[p.combination[i]!]! + Math.log(lin[i]!) + u * p.factor[i]!);
        if (z[i]! > max) max = z[i]!;
      }
      let denominator = 0;
      for (let i = 0; i < n; i += 1) {
        shifted[i] = Math.exp(z[i]! - max);
        denominator += shifted[i]!;
      }
      for (let i = 0; i < n; i += 1) {
        const dz = p.weight * (p.labels * (shifted[i]! / denominator) - p.label[i]!);
        const dls = a * dz;
        const perLin = dls / lin[i]!;
        gFeedback += perLin * feedback[i]!;
        gContext += perLin * context[i]!;
        gRecency += perLin * rec[i]!;
        gCoChange += perLin * coChange[i]!;
        gBase += perLin * baseSignal[i]!;
        gShared += perLin * rec[i]! * shared[i]!;
        gExtra += perLin * extra[i]!;
        if (p.age[i]! > 0) gDecay += perLin * p.age[i]! * rec[i]! * (w[2]! + w[5]! * shared[i]!);
        const c = p.combination[i]!;
        perCombination[c] = perCombination[c]! + dls;
        gTemperature += dz * z[i]!;
        gFactor += dls * p.factor[i]!;
      }
    }
    grad[0] = gFeedback * w[0]!;
    grad[1] = gContext * w[1]!;
    grad[2] = gRecency * w[2]!;
    grad[3] = gCoChange * w[3]!;
    grad[4] = gBase * w[4]!;
    grad[5] = gShared * w[5]!;
    grad[6] = gExtra * w[6]!;
    indices.forEach((list, c) => {
      for (const k of list) grad[nw + k] = grad[nw + k]! + perCombination[c]!;
    });
    grad[decayAt] = gDecay * (1 - decay);
    grad[temperatureAt] = gTemperature;
    grad[factorAt] = hasFactor ? gFactor : 0;
    for (let k = 0; k < size; k += 1) {
      const g = grad[k]! / total + l2 * theta[k]!;
      m[k] = 0.9 * m[k]! + 0.1 * g;
      v[k] = 0.999 * v[k]! + 0.001 * g * g;
      theta[k] =
        theta[k]! - (LEARNING_RATE * (m[k]! / (1 - 0.9 ** step))) / (Math.sqrt(v[k]! / (1 - 0.999 ** step)) + 1e-8);
    }
  }
  const weight = (name: Weight): number => (off.includes(name) ? 0 : round(Math.exp(theta[WEIGHTS.indexOf(name)]!)));
  return {
    ...base,
    priors: Object.fromEntries(
      PRIOR_NAMES.map((name, k) => [name, round(Math.exp(theta[nw + k]!))]),
    ) as unknown as Ranking['priors'],
    contextWeight: weight('context'),
    feedback: { ...base.feedback, weight: weight('feedback') },
    recency: {
      ...base.recency,
      weight: weight('recency'),
      decay: round(1 / (1 + Math.exp(-theta[decayAt]!))),
      shared: weight('shared'),
    },
    coChange: { ...base.coChange, weight: weight('coChange') },
    conventionBase: weight('base'),
    ...(on[WEIGHTS.indexOf('extra')] === 1 ? { extraWeight: weight('extra') } : {}),
    ...(hasFactor ? { factorWeight: round(theta[factorAt]!) } : {}),
  };
};

/** Three significant digits: what ships is a readable number, and the eval scores exactly it. */
const round = (value: number): number => Number(value.toPrecision(3));

/** Recall, precision and tokens of a setting over prompts (per history, to weigh each history the same). */
export interface Measured {
  /** Mean over histories of each history's recall. */
  readonly recall: number;
  /** Hits over facts injected, over every prompt. */
  readonly precision: number;
  readonly tokens: number;
  /** The recency baseline's precision at each prompt's tokens. */
  readonly recencyPrecision: number;
}

/**
 * The recency baseline of one prompt as a ranking: its file facts newest first (costs and labels),
 * so its section at any budget is a fill of this list.
 */
export interface RecencyList {
  readonly costs: ReadonlyArray<number>;
  readonly labels: ReadonlyArray<boolean>;
}

const fillRecency = (list: RecencyList, maxTokens: number): { hits: number; facts: number } => {
  let characters = '[Session Context]'.length;
  let hits = 0;
  let facts = 0;
  list.costs.forEach((cost, i) => {
    if (Math.ceil((characters + cost) / 4) > maxTokens) return;
    characters += cost;
    facts += 1;
    if (list.labels[i]) hits += 1;
  });
  return { hits, facts };
};

/**
 * `fillRecency`, remembered per list and budget: every setting a fit tries compares with recency
 * at its own tokens, which are mostly the same few budgets per prompt, in every fold.
 */
const filledRecency = (() => {
  const filled = new WeakMap<RecencyList, Map<number, { hits: number; facts: number }>>();
  return (list: RecencyList, maxTokens: number): { hits: number; facts: number } => {
    let byBudget = filled.get(list);
    if (byBudget === undefined) {
      byBudget = new Map();
      filled.set(list, byBudget);
    }
    let fill = byBudget.get(maxTokens);
    if (fill === undefined) {
      fill = fillRecency(list, maxTokens);
      byBudget.set(maxTokens, fill);
    }
    return fill;
  };
})();

/** A setting measured on the histories' prompts (parallel arrays: candidates and recency lists). */
export const measure = (
  histories: ReadonlyArray<ReadonlyArray<PromptCandidates>>,
  recency: ReadonlyArray<ReadonlyArray<RecencyList>>,
  ranking: Ranking,
  maxFacts: number,
  maxTokens: number,
): Measured => {
  let recallSum = 0;
  let counted = 0;
  let hits = 0;
  let facts = 0;
  let tokens = 0;
  let prompts = 0;
  let baselineHits = 0;
  let baselineFacts = 0;
  histories.forEach((history, h) => {
    let historyHits = 0;
    let expected = 0;
    history.forEach((prompt, i) => {
      const section = simulateSection(prompt, ranking, maxFacts, maxTokens);
      const baseline = filledRecency(recency[h]![i]!, section.tokens);
      historyHits += section.hits;
      expected += prompt.expected;
      facts += section.facts;
      tokens += section.tokens;
      prompts += 1;
      baselineHits += baseline.hits;
      baselineFacts += baseline.facts;
    });
    hits += historyHits;
    if (expected > 0) {
      recallSum += historyHits / expected;
      counted += 1;
    }
  });
  return {
    recall: counted === 0 ? 0 : recallSum / counted,
    precision: facts === 0 ? 0 : hits / facts,
    tokens: prompts === 0 ? 0 : tokens / prompts,
    recencyPrecision: baselineFacts === 0 ? 0 : baselineHits / baselineFacts,
  };
};

/** The floors step 2 tries. */
const FLOORS = [0, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3];
/**
 * No count cap while fitting: the floor and the budget decide the count. The cap that ships is a
 * safety limit above every section the fitted ranking fills (see `largestSection`).
 */
const NO_CAP = Number.MAX_SAFE_INTEGER;

/** Step 2: the floor with the highest recall whose precision keeps the margin over recency. */
const fitFloor = (
  histories: ReadonlyArray<ReadonlyArray<PromptCandidates>>,
  recency: ReadonlyArray<ReadonlyArray<RecencyList>>,
  ranking: Ranking,
  maxTokens: number,
): Ranking => {
  let best: { ranking: Ranking; recall: number; precision: number; ok: boolean } | undefined;
  for (const floor of FLOORS) {
    const candidate = { ...ranking, floor };
    const m = measure(histories, recency, candidate, NO_CAP, maxTokens);
    const ok = m.precision >= PRECISION_MARGIN * m.recencyPrecision;
    const better =
      best === undefined ||
      (ok && !best.ok) ||
      (ok === best.ok &&
        (ok
          ? m.recall > best.recall || (m.recall === best.recall && m.precision > best.precision)
          : m.precision > best.precision));
    if (better) best = { ranking: candidate, recall: m.recall, precision: m.precision, ok };
  }
  return best!.ranking;
};

/** The most facts a section holds under a ranking, over every prompt (the count cap must stay above it). */
export const largestSection = (
  histories: ReadonlyArray<ReadonlyArray<PromptCandidates>>,
  ranking: Ranking,
  maxTokens: number,
): number =>
  histories.reduce(
    (most, prompts) =>
      prompts.reduce(
        (inner, prompt) => Math.max(inner, simulateSection(prompt, ranking, NO_CAP, maxTokens).facts),
        most,
      ),
    0,
  );

/** The numbers step 3 adjusts: the weights, the decay and the priors, each read and set on a ranking. */
const ADJUSTED: ReadonlyArray<{
  readonly get: (r: Ranking) => number;
  readonly set: (r: Ranking, v: number) => Ranking;
}> = [
  { get: (r) => r.contextWeight, set: (r, v) => ({ ...r, contextWeight: v }) },
  { get: (r) => r.feedback.weight, set: (r, v) => ({ ...r, feedback: { ...r.feedback, weight: v } }) },
  { get: (r) => r.recency.weight, set: (r, v) => ({ ...r, recency: { ...r.recency, weight: v } }) },
  { get: (r) => r.recency.shared, set: (r, v) => ({ ...r, recency: { ...r.recency, shared: v } }) },
  { get: (r) => r.coChange.weight, set: (r, v) => ({ ...r, coChange: { ...r.coChange, weight: v } }) },
  { get: (r) => r.conventionBase, set: (r, v) => ({ ...r, conventionBase: v }) },
  ...PRIOR_NAMES.map((name) => ({
    get: (r: Ranking) => r.priors[name],
    set: (r: Ranking, v: number) => ({ ...r, priors: { ...r.priors, [name]: v } }),
  })),
];
/** The weight of the extra signal, adjusted when a fit has one (eval/loop.ts). */
const EXTRA = {
  get: (r: Ranking): number => r.extraWeight ?? 0,
  set: (r: Ranking, v: number): Ranking => ({ ...r, extraWeight: v }),
};
/** The weight of the multiplier signal, adjusted when a fit has one (eval/loop.ts). */
const FACTOR = {
  get: (r: Ranking): number => r.factorWeight ?? 0,
  set: (r: Ranking, v: number): Ranking => ({ ...r, factorWeight: v }),
};
/** The factors step 3 tries on each number. */
const FACTORS = [0.5, 2];

/**
 * Step 3: from step 1's weights, each number in turn takes the factor of FACTORS that raises
 * recall within the budget on the histories the fit sees (precision keeping its margin over
 * recency), one sweep: the stand-in of step 1 is not recall, and a weight it leaves low (a
 * signal that matters in few prompts) can be worth more within the budget.
 */
const polish = (
  histories: ReadonlyArray<ReadonlyArray<PromptCandidates>>,
  recency: ReadonlyArray<ReadonlyArray<RecencyList>>,
  start: Ranking,
  maxTokens: number,
  factors: ReadonlyArray<number> = FACTORS,
): Ranking => {
  const value = (r: Ranking): number => {
    const m = measure(histories, recency, r, NO_CAP, maxTokens);
    return m.precision >= PRECISION_MARGIN * m.recencyPrecision ? m.recall : -1;
  };
  let best = start;
  let bestValue = value(best);
  const adjusted = [
    ...ADJUSTED,
    ...(start.extraWeight === undefined ? [] : [EXTRA]),
    ...(start.factorWeight === undefined ? [] : [FACTOR]),
  ];
  for (const { get, set } of adjusted)
    for (const factor of factors) {
      const candidate = set(best, round(get(best) * factor));
      const candidateValue = value(candidate);
      if (candidateValue > bestValue) {
        best = candidate;
        bestValue = candidateValue;
      }
    }
  return best;
};

/**
 * The whole fit on some histories, their signals read under START (the first pass's seeds and
 * feedback words then come from a ranking with every prior at 1: reading them again under the
 * fitted weights and fitting again changed no figure of the evaluation, see docs/retrieval.md):
 * step 1, the floor (step 2), and step 3 when `adjust` is set. `prepared` is `atStart` prepared
 * for step 1 (`prepareHistories`), when the caller keeps it across fits.
 */
export const fitRanking = (
  atStart: ReadonlyArray<ReadonlyArray<PromptCandidates>>,
  recency: ReadonlyArray<ReadonlyArray<RecencyList>>,
  maxTokens: number,
  prepared: ReadonlyArray<PreparedHistory> = prepareHistories(atStart, START.recency.tasks),
  weighting: Weighting = 'micro',
  adjust = true,
  l2: number = L2,
  factors: ReadonlyArray<number> = FACTORS,
  off: ReadonlyArray<Weight> = [],
): Ranking => {
  const weights = fitWeights(prepared, START, weighting, l2, off);
  const floored = fitFloor(atStart, recency, weights, maxTokens);
  return adjust ? polish(atStart, recency, floored, maxTokens, factors) : floored;
};
