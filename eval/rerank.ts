/**
 * `npx tsx eval/rerank.ts`: whether a nonlinear second stage ranks better than the fitted
 * log-linear model. For each fold (FOLDS=7 as in eval/loop.ts) the shipped model is fitted on
 * the other histories (`fitRanking`), each prompt's best `TOP` candidates under it are kept, and
 * gradient-boosted regression trees (LambdaMART: pairwise logistic loss weighted by the change in
 * NDCG, Newton leaves, histogram splits) learn a correction of its log score from every signal
 * the experiments read (`Extended`), the candidate's place and its score relative to the
 * prompt's best. The held-out histories are then filled from the re-ranked candidates (best
 * first, each line that fits the budget) and scored against the first stage's own section
 * (`simulateSection`). An experiment: the library ranks by the log-linear model, whose score
 * the index bounds for its exact top k; see docs/retrieval.md for what this gave.
 *
 * Environment: FOLDS, TOP (candidates kept per prompt, 120), TREES (rounds, 200), DEPTH (4),
 * RATE (0.05), LEAF (least candidates in a leaf, 200). `--realworld DIR` as for `npm run eval`.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_MAX_TOKENS, SESSION_CONTEXT_HEADER } from '../src/index.js';
import { PRIOR_CLASSES } from '../src/core/search/priors.js';
import { type Extended, extended } from './extended.js';
import { fitRanking, prepareHistories, START } from './fit.js';
import { loadHistories, recencyLists } from './lib.js';
import { candidateScore, type PromptCandidates, type Ranking, setSectionOrder, simulateSection } from './model.js';

const USAGE = 'Usage: npx tsx eval/rerank.ts [--realworld DIR]';

/** Ends the run with one line and the usage on stderr (a wrong option is the user's to fix). */
const refuse = (message: string): never => {
  process.stderr.write(`eval/rerank.ts: ${message}\n${USAGE}\n`);
  process.exit(2);
};

const { values } = (() => {
  try {
    return parseArgs({ options: { realworld: { type: 'string' } } });
  } catch (error) {
    return refuse(error instanceof Error ? error.message : String(error));
  }
})();
const root = resolve(import.meta.dirname, '..');
const realworld = resolve(values.realworld ?? join(root, '..', 'shared', 'realworld'));
// The trees learn from the real histories: without them there is nothing to re-rank.
if (!existsSync(realworld)) refuse(`${realworld} is absent: the re-ranking needs its real histories (--realworld DIR)`);
const env = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);
const FOLDS = env('FOLDS', 7);
const TOP = env('TOP', 120);
const TREES = env('TREES', 200);
const DEPTH = env('DEPTH', 4);
const RATE = env('RATE', 0.05);
const LEAF = env('LEAF', 200);
const BINS = 32;
const REPORT_AT = [0, 25, 50, 100, 200, 400].filter((t) => t <= TREES);
const started = performance.now();
const progress = (what: string): void => {
  process.stderr.write(`${((performance.now() - started) / 1000).toFixed(0)} s: ${what}\n`);
};

/** The features of one kept candidate: its first-stage score, place and relative score, then its signals. */
const FEATURES: ReadonlyArray<readonly [string, (c: Extended, score: number, place: number, best: number) => number]> =
  [
    ['log score', (_c, s) => Math.log(s + 1e-9)],
    ['place', (_c, _s, place) => place],
    ['relative score', (_c, s, _p, best) => (best > 0 ? s / best : 0)],
    ['query', (c) => c.query],
    ['feedback', (c) => c.feedback],
    ['context', (c) => c.context],
    ['age', (c) => (c.age < 0 ? 1000 : c.age)],
    ['task files', (c) => c.taskFiles],
    ['co-change', (c) => c.coChange],
    ['base', (c) => c.base],
    ['named', (c) => (c.named ? 1 : 0)],
    ['convention', (c) => (c.convention ? 1 : 0)],
    ['file', (c) => (c.file === true ? 1 : 0)],
    ['cost', (c) => c.cost],
    ...[...PRIOR_CLASSES, 'duplicate'].map(
      (name, bit) => [`prior ${name}`, (c: Extended) => ((c.flags >> bit) & 1) as number] as const,
    ),
    ['churn', (c) => c.churn],
    ['heat', (c) => c.heat],
    ['directory heat', (c) => c.dirHeat],
    ['seed proximity', (c) => c.seedProximity],
    ['seed same directory', (c) => c.seedSameDir],
    ['recent proximity', (c) => c.recentProximity],
    ['path words', (c) => c.pathWords],
    ['recent co-change', (c) => c.recentCoChange],
    ['file document', (c) => c.fileDoc],
    ['previous context', (c) => c.prevContext],
    ['seed stem', (c) => c.seedStem],
    ['seed prefix', (c) => c.seedPrefix],
    ['context over files', (c) => c.contextEven],
    ['context whole', (c) => c.contextWhole],
  ];
const F = FEATURES.length;
/** The split gain each feature earned over every tree of every fold. */
const gains = new Float64Array(F);

/** One prompt's kept candidates: features row by row, labels, costs and the first stage's log score. */
interface Group {
  readonly x: Float64Array;
  readonly label: Uint8Array;
  readonly cost: Int32Array;
  readonly start: Float64Array;
  readonly expected: number;
}

const groupOf = (prompt: PromptCandidates, ranking: Ranking): Group => {
  const scored = prompt.candidates
    .map((c) => ({ c: c as Extended, s: candidateScore(c, ranking).total }))
    .filter(({ c, s }) => s > 0 || c.convention)
    .sort((a, b) => b.s - a.s || b.c.validFrom - a.c.validFrom || (a.c.id < b.c.id ? -1 : 1))
    .slice(0, TOP);
  const best = scored.length === 0 ? 0 : scored[0]!.s;
  const n = scored.length;
  const x = new Float64Array(n * F);
  scored.forEach(({ c, s }, place) => FEATURES.forEach(([, f], j) => (x[place * F + j] = f(c, s, place, best))));
  return {
    x,
    label: Uint8Array.from(scored, ({ c }) => (c.label ? 1 : 0)),
    cost: Int32Array.from(scored, ({ c }) => c.cost),
    start: Float64Array.from(scored, ({ s }) => Math.log(s + 1e-9)),
    expected: prompt.expected,
  };
};

/** A regression tree: internal nodes split feature <= threshold; leaves hold values. */
type Tree = { leaf: number } | { feature: number; threshold: number; left: Tree; right: Tree };
const predict = (tree: Tree, x: Float64Array, row: number): number => {
  let node = tree;
  while (!('leaf' in node)) node = x[row * F + node.feature]! <= node.threshold ? node.left : node.right;
  return node.leaf;
};

/** LambdaMART gradients and hessians of one group's scores, added into g and h at `offset`. */
const lambdas = (group: Group, scores: Float64Array, g: Float64Array, h: Float64Array, offset: number): void => {
  const n = group.label.length;
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => scores[b]! - scores[a]!);
  const rank = new Int32Array(n);
  order.forEach((i, r) => (rank[i] = r));
  let labels = 0;
  for (let i = 0; i < n; i += 1) labels += group.label[i]!;
  if (labels === 0 || labels === n) return;
  let ideal = 0;
  for (let r = 0; r < labels; r += 1) ideal += 1 / Math.log2(r + 2);
  for (let i = 0; i < n; i += 1) {
    if (group.label[i] !== 1) continue;
    const gi = 1 / Math.log2(rank[i]! + 2);
    for (let j = 0; j < n; j += 1) {
      if (group.label[j] === 1) continue;
      const delta = Math.abs(gi - 1 / Math.log2(rank[j]! + 2)) / ideal;
      const rho = 1 / (1 + Math.exp(scores[i]! - scores[j]!));
      const w = rho * (1 - rho) * delta;
      g[offset + i] = g[offset + i]! - rho * delta;
      g[offset + j] = g[offset + j]! + rho * delta;
      h[offset + i] = h[offset + i]! + w;
      h[offset + j] = h[offset + j]! + w;
    }
  }
};

/** Fits TREES trees on the training groups; returns them (each leaf already scaled by RATE). */
const fitTrees = (groups: ReadonlyArray<Group>, checkpoints: (trees: Tree[]) => void): Tree[] => {
  const offsets: number[] = [];
  let rows = 0;
  for (const group of groups) {
    offsets.push(rows);
    rows += group.label.length;
  }
  // Every row's features as bins of the training rows' quantiles.
  const thresholds: number[][] = [];
  const bins = new Uint8Array(rows * F);
  for (let j = 0; j < F; j += 1) {
    const column: number[] = [];
    groups.forEach((group) => {
      for (let i = 0; i < group.label.length; i += 1) column.push(group.x[i * F + j]!);
    });
    const sorted = Float64Array.from(column).sort();
    const cuts: number[] = [];
    for (let b = 1; b < BINS; b += 1) {
      const value = sorted[Math.floor((b * sorted.length) / BINS)]!;
      if (cuts.length === 0 || value > cuts[cuts.length - 1]!) cuts.push(value);
    }
    thresholds.push(cuts);
    column.forEach((value, row) => {
      let b = 0;
      while (b < cuts.length && value > cuts[b]!) b += 1;
      bins[row * F + j] = b;
    });
  }
  const scores = groups.map((group) => Float64Array.from(group.start));
  const g = new Float64Array(rows);
  const h = new Float64Array(rows);
  const trees: Tree[] = [];
  const lambda = 1;
  const grow = (members: Int32Array, depth: number): Tree => {
    let G = 0;
    let H = 0;
    for (const row of members) {
      G += g[row]!;
      H += h[row]!;
    }
    const leaf = { leaf: (-G / (H + lambda)) * RATE };
    if (depth === DEPTH || members.length < 2 * LEAF) return leaf;
    let bestGain = 0;
    let bestFeature = -1;
    let bestBin = -1;
    const hg = new Float64Array(BINS);
    const hh = new Float64Array(BINS);
    const hc = new Int32Array(BINS);
    for (let j = 0; j < F; j += 1) {
      hg.fill(0);
      hh.fill(0);
      hc.fill(0);
      for (const row of members) {
        const b = bins[row * F + j]!;
        hg[b] = hg[b]! + g[row]!;
        hh[b] = hh[b]! + h[row]!;
        hc[b] = hc[b]! + 1;
      }
      let GL = 0;
      let HL = 0;
      let CL = 0;
      for (let b = 0; b < thresholds[j]!.length; b += 1) {
        GL += hg[b]!;
        HL += hh[b]!;
        CL += hc[b]!;
        if (CL < LEAF || members.length - CL < LEAF) continue;
        const GR = G - GL;
        const HR = H - HL;
        const gain = (GL * GL) / (HL + lambda) + (GR * GR) / (HR + lambda) - (G * G) / (H + lambda);
        if (gain > bestGain) {
          bestGain = gain;
          bestFeature = j;
          bestBin = b;
        }
      }
    }
    if (bestFeature < 0) return leaf;
    gains[bestFeature] = gains[bestFeature]! + bestGain;
    const left: number[] = [];
    const right: number[] = [];
    for (const row of members) (bins[row * F + bestFeature]! <= bestBin ? left : right).push(row);
    return {
      feature: bestFeature,
      threshold: thresholds[bestFeature]![bestBin]!,
      left: grow(Int32Array.from(left), depth + 1),
      right: grow(Int32Array.from(right), depth + 1),
    };
  };
  const all = Int32Array.from({ length: rows }, (_, i) => i);
  for (let t = 0; t < TREES; t += 1) {
    g.fill(0);
    h.fill(0);
    groups.forEach((group, k) => lambdas(group, scores[k]!, g, h, offsets[k]!));
    const tree = grow(all, 0);
    trees.push(tree);
    groups.forEach((group, k) => {
      const s = scores[k]!;
      for (let i = 0; i < group.label.length; i += 1) s[i] = s[i]! + predict(tree, group.x, i);
    });
    if (REPORT_AT.includes(t + 1)) checkpoints(trees);
  }
  if (REPORT_AT.includes(0)) checkpoints([]);
  return trees;
};

const HEADER = SESSION_CONTEXT_HEADER.length;

/** Hits and tokens of a group's section: best re-ranked score first, each line while it fits, the score less `perChar` x ln(cost). */
const fill = (group: Group, trees: ReadonlyArray<Tree>, maxTokens: number, perChar: number): [number, number] => {
  const n = group.label.length;
  const value = new Float64Array(n);
  for (let i = 0; i < n; i += 1) {
    let s = group.start[i]!;
    for (const tree of trees) s += predict(tree, group.x, i);
    value[i] = s - perChar * Math.log(group.cost[i]!);
  }
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => value[b]! - value[a]! || a - b);
  let characters = HEADER;
  let hits = 0;
  let facts = 0;
  for (const i of order) {
    if (Math.ceil((characters + group.cost[i]!) / 4) > maxTokens) continue;
    characters += group.cost[i]!;
    facts += 1;
    hits += group.label[i]!;
  }
  return [hits, facts === 0 ? 0 : Math.ceil(characters / 4)];
};

const hand = loadHistories(join(root, 'eval', 'histories'), 'hand');
const real = loadHistories(join(realworld, 'histories'), 'real');
const core = [...hand, ...real];
progress(`replayed ${core.length} histories`);
const sets = core.map((history) => history.prompts.map((_, i) => extended(history, i)));
const recency = core.map(recencyLists);
const prepared = prepareHistories(sets, START.recency.tasks);
progress('read the candidates');
setSectionOrder(undefined);

const PER_CHAR = [0, 0.5, 1];
/** Per report: group -> [hits, tokens]; the first stage's own section under "shipped". */
const totals = new Map<string, Map<string, { hits: number; labels: number; tokens: number; prompts: number }>>();
const add = (report: string, group: string, hits: number, labels: number, tokens: number): void => {
  const byGroup = totals.get(report) ?? new Map();
  totals.set(report, byGroup);
  const t = byGroup.get(group) ?? { hits: 0, labels: 0, tokens: 0, prompts: 0 };
  t.hits += hits;
  t.labels += labels;
  t.tokens += tokens;
  t.prompts += 1;
  byGroup.set(group, t);
};

for (let fold = 0; fold < FOLDS; fold += 1) {
  const train = core.map((_, i) => i).filter((i) => i % FOLDS !== fold);
  const test = core.map((_, i) => i).filter((i) => i % FOLDS === fold);
  const ranking = fitRanking(
    train.map((i) => sets[i]!),
    train.map((i) => recency[i]!),
    DEFAULT_MAX_TOKENS,
    train.map((i) => prepared[i]!),
  );
  progress(`fold ${fold}: first stage fitted`);
  const trainGroups = train.flatMap((i) => sets[i]!.map((p) => groupOf(p, ranking)));
  const testGroups = test.map((i) => sets[i]!.map((p) => groupOf(p, ranking)));
  for (const i of test)
    for (const prompt of sets[i]!) {
      const section = simulateSection(prompt, ranking, Number.MAX_SAFE_INTEGER, DEFAULT_MAX_TOKENS);
      add('shipped', core[i]!.group, section.hits, prompt.expected, section.tokens);
    }
  fitTrees(trainGroups, (trees) => {
    test.forEach((i, k) => {
      for (const group of testGroups[k]!)
        for (const perChar of PER_CHAR) {
          const [hits, tokens] = fill(group, trees, DEFAULT_MAX_TOKENS, perChar);
          add(`${trees.length} trees, per char ${perChar}`, core[i]!.group, hits, group.expected, tokens);
        }
    });
  });
  progress(`fold ${fold}: trees fitted`);
}

const gainTotal = gains.reduce((a, b) => a + b, 0);
console.log(
  'split gain by feature: ' +
    FEATURES.map(([name], j) => [name, gains[j]! / gainTotal] as const)
      .filter(([, share]) => share >= 0.005)
      .sort((a, b) => b[1] - a[1])
      .map(([name, share]) => `${name} ${share.toFixed(3)}`)
      .join(', '),
);
for (const [report, byGroup] of totals)
  console.log(
    `[${report}] ` +
      [...byGroup]
        .map(
          ([group, t]) =>
            `${group} ${(t.hits / t.labels).toFixed(3)} (${t.hits} of ${t.labels}), ${(t.tokens / t.prompts).toFixed(0)} tokens`,
        )
        .join('; '),
  );
