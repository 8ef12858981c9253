/**
 * `npx tsx eval/online.ts '[SETTING, ...]'`: an experiment on a ranking that adapts to its
 * session. Each held-out history starts from the ranking fitted on the others (leave-one-out
 * folds as in eval/loop.ts; FOLDS=21 for one history a fold, 7 by default) and, after each
 * prompt, takes one gradient step of the fit's stand-in loss (ListNet, see fit.ts) on that
 * prompt's labels, pulled back towards the fitted weights: what a tracker could learn from
 * each task's result, since the files a task changes are its prompt's labels on the real
 * histories. Sections are simulated from the candidates (`simulateSection`), as the loop does.
 *
 * A SETTING is a JSON object: `rate` (the step; 0 is the fitted ranking alone), `pull` (towards
 * the fitted weights), `priors` (adapt the priors too), `temperature` (the softmax's, about the
 * fit's), `perLabel` (the step over the prompt's labels). docs/retrieval.md has what it gave.
 */
import { join, resolve } from 'node:path';
import { DEFAULT_MAX_TOKENS } from '../src/index.js';
import { fitRanking, prepareHistories, START } from './fit.js';
import { loadHistories, recencyLists } from './lib.js';
import {
  historyCandidates,
  PRIOR_NAMES,
  type PromptCandidates,
  priorOf,
  type Ranking,
  simulateSection,
} from './model.js';
import { PRIOR_CLASSES } from '../src/core/search/priors.js';

const root = resolve(import.meta.dirname, '..');
const realworld = resolve(join(root, '..', 'shared', 'realworld'));
const hand = loadHistories(join(root, 'eval', 'histories'), 'hand');
const real = loadHistories(join(realworld, 'histories'), 'real');
const core = [...hand, ...real];
const sets = historyCandidates(core, START);
const recency = core.map(recencyLists);
const folds = Number(process.env['FOLDS'] ?? 7);
const prepared = prepareHistories(sets, START.recency.tasks);
const fitted: Ranking[] = [];
for (let fold = 0; fold < folds; fold += 1) {
  const train = core.map((_, i) => i).filter((i) => i % folds !== fold);
  fitted.push(
    fitRanking(
      train.map((i) => sets[i]!),
      train.map((i) => recency[i]!),
      DEFAULT_MAX_TOKENS,
      train.map((i) => prepared[i]!),
    ),
  );
  process.stderr.write(`fold ${fold + 1} of ${folds} fitted\n`);
}

/** Parameters: log feedback, log context, log recency, log coChange, log shared, decay logit, then log priors. */
const NW = 5;
const DECAY = NW;
const P0 = NW + 1;
const SIZE = P0 + PRIOR_NAMES.length;

const thetaOf = (r: Ranking): Float64Array => {
  const t = new Float64Array(SIZE);
  t[0] = Math.log(r.feedback.weight);
  t[1] = Math.log(r.contextWeight);
  t[2] = Math.log(r.recency.weight);
  t[3] = Math.log(r.coChange.weight);
  t[4] = Math.log(r.recency.shared);
  t[DECAY] = Math.log(r.recency.decay / (1 - r.recency.decay));
  PRIOR_NAMES.forEach((name, k) => {
    t[P0 + k] = Math.log(r.priors[name]);
  });
  return t;
};

const rankingOf = (base: Ranking, t: Float64Array): Ranking => ({
  ...base,
  feedback: { ...base.feedback, weight: Math.exp(t[0]!) },
  contextWeight: Math.exp(t[1]!),
  recency: { ...base.recency, weight: Math.exp(t[2]!), shared: Math.exp(t[4]!), decay: 1 / (1 + Math.exp(-t[DECAY]!)) },
  coChange: { ...base.coChange, weight: Math.exp(t[3]!) },
  priors: Object.fromEntries(
    PRIOR_NAMES.map((name, k) => [name, Math.exp(t[P0 + k]!)]),
  ) as unknown as Ranking['priors'],
});

const DUPLICATE = 1 << PRIOR_CLASSES.length;
const priorIndices = (flags: number): number[] => {
  const out: number[] = [];
  for (let bit = 0; bit < PRIOR_CLASSES.length; bit += 1)
    if ((flags & (1 << bit)) !== 0)
      out.push(PRIOR_CLASSES[bit] === 'issue' && (flags & DUPLICATE) !== 0 ? PRIOR_NAMES.indexOf('duplicate') : bit);
  return out;
};

/**
 * The gradient of one prompt's ListNet loss at ranking r and temperature a, over the parameters
 * (see `thetaOf`), and its labels; the candidates as fit.ts's step 1 reads them.
 */
const gradient = (prompt: PromptCandidates, r: Ranking, a: number): { g: Float64Array; labels: number } => {
  const g = new Float64Array(SIZE);
  const tasks = r.recency.tasks;
  const cands = prompt.candidates.filter(
    (c) =>
      !(c.named && (c.query > 0 || c.feedback > 0 || c.context > 0)) &&
      (c.query > 0 || c.feedback > 0 || c.context > 0 || (c.age >= 0 && c.age < tasks) || c.coChange > 0 || c.base > 0),
  );
  const labels = cands.filter((c) => c.label).length;
  if (labels === 0) return { g, labels };
  const n = cands.length;
  const z = new Float64Array(n);
  const lin = new Float64Array(n);
  const rec = new Float64Array(n);
  const sh = new Float64Array(n);
  const base = new Float64Array(n);
  let max = -Infinity;
  const decay = r.recency.decay;
  for (let i = 0; i < n; i += 1) {
    const c = cands[i]!;
    rec[i] = c.age >= 0 && c.age < tasks ? decay ** c.age : 0;
    sh[i] = 1 / Math.sqrt(Math.max(1, c.taskFiles));
    base[i] = c.convention && c.query === 0 && c.feedback === 0 && c.context === 0 ? c.base : 0;
    lin[i] =
      c.query +
      r.feedback.weight * c.feedback +
      r.contextWeight * c.context +
      r.recency.weight * rec[i]! +
      r.coChange.weight * c.coChange +
      r.conventionBase * base[i]! +
      r.recency.shared * rec[i]! * sh[i]! +
      1e-9;
    z[i] = a * (Math.log(priorOf(c.flags, r.priors)) + Math.log(lin[i]!));
    if (z[i]! > max) max = z[i]!;
  }
  let den = 0;
  for (let i = 0; i < n; i += 1) den += Math.exp(z[i]! - max);
  for (let i = 0; i < n; i += 1) {
    const c = cands[i]!;
    const dz = labels * (Math.exp(z[i]! - max) / den) - (c.label ? 1 : 0);
    const per = (a * dz) / lin[i]!;
    const add = (k: number, value: number): void => {
      g[k] = g[k]! + value;
    };
    add(0, per * c.feedback * r.feedback.weight);
    add(1, per * c.context * r.contextWeight);
    add(2, per * rec[i]! * r.recency.weight);
    add(3, per * c.coChange * r.coChange.weight);
    add(4, per * rec[i]! * sh[i]! * r.recency.shared);
    if (c.age > 0) add(DECAY, per * c.age * rec[i]! * (r.recency.weight + r.recency.shared * sh[i]!) * (1 - decay));
    for (const k of priorIndices(c.flags)) add(P0 + k, a * dz);
  }
  return { g, labels };
};

interface Setting {
  readonly name: string;
  readonly rate: number;
  readonly pull: number;
  readonly priors: boolean;
  readonly temperature: number;
  /** Normalize the step by the prompt's labels. */
  readonly perLabel: boolean;
}

const run = (s: Setting): void => {
  const groups = new Map<string, { hits: number; labels: number; tokens: number; prompts: number; base: number }>();
  const per: string[] = [];
  core.forEach((history, h) => {
    const fitRank = fitted[h % folds]!;
    const theta0 = thetaOf(fitRank);
    const theta = theta0.slice();
    let hits = 0;
    let baseHits = 0;
    let labels = 0;
    let tokens = 0;
    for (const prompt of sets[h]!) {
      const ranking = rankingOf(fitRank, theta);
      const section = simulateSection(prompt, ranking, Number.MAX_SAFE_INTEGER, DEFAULT_MAX_TOKENS);
      hits += section.hits;
      baseHits += simulateSection(prompt, fitRank, Number.MAX_SAFE_INTEGER, DEFAULT_MAX_TOKENS).hits;
      labels += prompt.expected;
      tokens += section.tokens;
      if (s.rate === 0) continue;
      const { g, labels: n } = gradient(prompt, ranking, s.temperature);
      if (n === 0) continue;
      const scale = s.perLabel ? 1 / n : 1;
      const last = s.priors ? SIZE : P0;
      for (let k = 0; k < last; k += 1)
        theta[k] = theta[k]! - s.rate * (g[k]! * scale + s.pull * (theta[k]! - theta0[k]!));
      // A decay within about 0.0025 and 0.9975.
      theta[DECAY] = Math.max(-6, Math.min(6, theta[DECAY]!));
    }
    const g = groups.get(history.group) ?? { hits: 0, labels: 0, tokens: 0, prompts: 0, base: 0 };
    g.hits += hits;
    g.base += baseHits;
    g.labels += labels;
    g.tokens += tokens;
    g.prompts += sets[h]!.length;
    groups.set(history.group, g);
    per.push(`${history.name} ${(baseHits / labels).toFixed(3)}->${(hits / labels).toFixed(3)}`);
  });
  for (const [group, g] of groups)
    console.log(
      `[${s.name}] ${group}: static ${(g.base / g.labels).toFixed(4)} online ${(g.hits / g.labels).toFixed(4)} (${(g.tokens / g.prompts).toFixed(0)} tokens)`,
    );
  if (process.env['PER']) console.log(per.join(', '));
};

const grid = JSON.parse(process.argv[2] ?? '[]') as Array<Partial<Setting>>;
const defaults: Setting = { name: 'online', rate: 0.05, pull: 0.05, priors: false, temperature: 1.9, perLabel: true };
for (const g of grid.length === 0 ? [{}] : grid) run({ ...defaults, ...g, name: JSON.stringify(g) });
