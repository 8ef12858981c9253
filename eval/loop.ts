/**
 * `npx tsx eval/loop.ts VARIANT...`: a fast loop for ranking experiments. It replays the
 * hand-written and real histories once, reads every prompt's candidates once (the signals under
 * START, as the fit does, plus a few the library does not score, for trying them), and runs the
 * leave-one-history-out fit for each variant named, scoring each held-out history by simulating
 * its sections from its candidates (`simulateSection`) instead of retrieving through the library:
 * a variant costs its fits (about 3 minutes for 7 folds on a shared 2-core machine), not a full
 * `npm run eval`. Within 0.01 of the library's figures (the simulated leave-one-out of the
 * earlier ranking: 0.842 real, 0.853 hand-written, against 0.842 and 0.843 through the library).
 *
 * Environment: FOLDS=7 leaves out every 7th history together instead of one at a time (three
 * times faster; a proxy to compare variants, not the figure to report); L2=0.02 sets the fit's
 * penalty; HAND_WEIGHT=3 counts each label of a hand-written history three times in the fit's
 * smooth loss; LONG=3 also measures every third prompt of each long session (never fitted on)
 * under each fold's ranking, their mean (with the head signals below, give the process more heap:
 * NODE_OPTIONS=--max-old-space-size=12000); HEAD_WORDS=6 sets how many leading words are the
 * prompt's head (10); STOPS=kind:share[:power],... also measures the held-out sections of every
 * fold's ranking under each of those stops in place of the relevance floor (`SectionStop` in
 * eval/model.ts: `ratio:0.1`, `mass:0.003:2`, `nucleus:0.9:1`); QUERY_BS=0,0.3 gives the
 * variants `queryB0` and `queryB0.3` (the query part length-normalized with that b, with
 * QUERY_SUBJECT=1.5 the subject weighing that much); QTF_K3=1.2 gives `queryQtf1.2` (each prompt
 * term weighed by how often the prompt says it); FILL_POOL=100 lets the fill order take from that
 * many of the best (the count cap's 60). `--realworld DIR` as for `npm run eval`.
 *
 * The variants: `shipped` (the defaults' model), `evenShare`, `quarterShare` and `wholeShare` (a
 * task's context over its files' number, their fourth root, or whole, instead of over their root), `noShared` (no shared recency),
 * `churn` (how many tasks changed a file, log2(1 + tasks), in place of the feedback words),
 * `churnSpecial` (the same for facts another signal already reaches), `noFeedback`, `noPolish` (no
 * sweep on the target after the smooth fit), `churnX`, `churnCapX`, `heatX` and `sizeX` (a file
 * fact's score times a fitted power of a signal of the file: the tasks that changed it, at most 8
 * of them, its recent changes, or the files of the task that last changed it; see
 * `Candidate.factor`), `ageX` and `ageAllX` (a file fact's, or every fact's, score times a fitted
 * power of 1 plus its task's place among all the other tasks by prompt time), `div90`, `div110` and `div125` (a section filled greedily, each fact's
 * score times that factor per fact of its task already in it), the fill
 * orders `perChar100`, `perChar075`, `perChar050` (every line by its score over its characters
 * to that power), `perFile100`, `perFile100r80`, `perFile100r120`, `perFile050` (file lines so,
 * the others as 40, 80 or 120 characters), `perNoConv100`, `perNoConv100r60`, `perNoConv100r80`,
 * `perNoConv075` (a convention as that many characters), `perCap100r40` to `perCap100r80` and
 * `perCap075r60` (a line that is not a file change at most that many: the shipped order is
 * `perCap075r60`) and `perPlain100` (only in prompts without conventions); `normMax`,
 * `normMaxAll`, `normSqrt`, `normCtxMax` and `normCtxSqrt` (the query and context signals, or the
 * context alone, or the feedback too, each divided by a tenth of its largest value among the
 * prompt's candidates, or by a third of that value's square root: a scale per prompt, so that a
 * long prompt's sums do not drown the recency a short one leaves room for); and each
 * signal of `Extended` (directory proximity to the first pass's best files, to the latest tasks'
 * files, the prompt's share of a path's words, recency-weighted changes of a file or of its
 * directory, co-change with the latest task, BM25 against a file's history as one document, the task context of the latest other task's prompt, a seed's name stem (`seedStem`), or a stem that starts with a seed's or begins it (`seedPrefix`), a file's name stem among the prompt's words (`promptStem`), a recency tail over every task, 1 over 1 plus its task's place or over the base-2 logarithm of 2 plus it (`ageTail`, `ageLogTail`), BM25 against a file's history only for a file last changed 63 or 150 tasks or more before (`fileDocOld`, `fileDocOld150`), the query and task-context parts of the prompt's first words alone (`headQuery`, `headContext`, both: `headMatch`); the time since the fact's start of validity, `exp(-hours / scale)` at an hour, six hours, a day or a week (`gap1h`, `gap6h`, `gap1d`, `gap1w`), or the recency decay times that at a day (`gapRec1d`, `gapRec6h`); and products of two signals: recency with the task
 * context, the query or both, co-change with the task context) in place of the feedback words (`seedProximity`) or
 * beside every signal of the defaults with a weight of its own, fitted as the others are
 * (`seedProximity+`). See docs/retrieval.md for what they gave.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_MAX_TOKENS } from '../src/index.js';
import { AGE_DECAYS, type Extended, extended, QTF_K3, QUERY_BS } from './extended.js';
import { fitRanking, prepareHistories, START, type Weight } from './fit.js';
import { loadHistories, recencyLists } from './lib.js';
import {
  type Candidate,
  type PromptCandidates,
  type Ranking,
  type SectionOrder,
  type SectionStop,
  setSectionOrder,
  setSectionStop,
  simulateSection,
} from './model.js';

const USAGE = 'Usage: npx tsx eval/loop.ts [--realworld DIR] VARIANT...';

/** Ends the run with one line and the usage on stderr (a wrong option or variant is the user's to fix). */
const refuse = (message: string): never => {
  process.stderr.write(`eval/loop.ts: ${message}\n${USAGE}\n`);
  process.exit(2);
};

const { values, positionals } = (() => {
  try {
    return parseArgs({ options: { realworld: { type: 'string' } }, allowPositionals: true });
  } catch (error) {
    return refuse(error instanceof Error ? error.message : String(error));
  }
})();
const root = resolve(import.meta.dirname, '..');
const realworld = resolve(values.realworld ?? join(root, '..', 'shared', 'realworld'));
const started = performance.now();
const progress = (what: string): void => {
  process.stderr.write(`${((performance.now() - started) / 1000).toFixed(0)} s: ${what}\n`);
};

/** A variant: each candidate's signals as the variant scores them, and the weights it leaves out of the fit. */
interface Variant {
  readonly signals: (c: Extended) => Candidate;
  readonly off?: ReadonlyArray<Weight>;
  /** False: no sweep on the target after the smooth fit and the floor (step 3 of the fit). */
  readonly polish?: boolean;
  /** Below 1: each fact of a task already in the section scores this much less (see simulateSection). */
  readonly diversity?: number;
  /** The section's order, in the fit and in the measure (see setSectionOrder). */
  readonly order?: SectionOrder;
  /** A prompt's candidates changed together, after `signals` (a scale per prompt). */
  readonly perPrompt?: (candidates: ReadonlyArray<Candidate>) => ReadonlyArray<Candidate>;
}

/**
 * A prompt's candidates with each of `fields` divided by `scale` of that field's largest value
 * among them (left as it is when that value is 0).
 */
const scaledBy =
  (fields: ReadonlyArray<'query' | 'context' | 'feedback'>, scale: (max: number) => number) =>
  (candidates: ReadonlyArray<Candidate>): ReadonlyArray<Candidate> => {
    const divisors = fields.map((field) => {
      const max = candidates.reduce((m, c) => Math.max(m, c[field]), 0);
      return max > 0 ? scale(max) : 1;
    });
    return candidates.map((c) => ({
      ...c,
      ...Object.fromEntries(fields.map((field, i) => [field, c[field] / divisors[i]!])),
    }));
  };
const churnOf = (c: Extended): number => (c.churn > 0 ? Math.log2(1 + c.churn) : 0);
const VARIANTS: Readonly<Record<string, Variant>> = {
  shipped: { signals: (c) => c },
  // The task context with each lending task's score decayed by its age (AGE_DECAYS), in place of the context.
  ...Object.fromEntries(
    AGE_DECAYS.map((decay, i): [string, Variant] => [
      `ageContext${decay}`,
      { signals: (c) => ({ ...c, context: c.contextAged[i]! }) },
    ]),
  ),
  // The query part length-normalized with each b of QUERY_BS, in place of the library's.
  ...Object.fromEntries(
    QUERY_BS.map((b, i): [string, Variant] => [`queryB${b}`, { signals: (c) => ({ ...c, query: c.queryNorm[i]! }) }]),
  ),
  // The query part with the prompt's term frequencies (QTF_K3), in place of the library's.
  ...Object.fromEntries(
    QTF_K3.map((k3, i): [string, Variant] => [`queryQtf${k3}`, { signals: (c) => ({ ...c, query: c.queryQtf[i]! }) }]),
  ),
  evenShare: { signals: (c) => ({ ...c, context: c.contextEven }) },
  quarterShare: { signals: (c) => ({ ...c, context: c.contextQuarter }) },
  wholeShare: { signals: (c) => ({ ...c, context: c.contextWhole }) },
  noShared: { signals: (c) => c, off: ['shared'] },
  noFeedback: { signals: (c) => ({ ...c, feedback: 0 }), off: ['feedback'] },
  noPolish: { signals: (c) => c, polish: false },
  churnX: { signals: (c) => ({ ...c, factor: c.file === true ? Math.log2(Math.max(1, c.churn)) : 0 }) },
  churnCapX: { signals: (c) => ({ ...c, factor: c.file === true ? Math.log2(Math.min(8, Math.max(1, c.churn))) : 0 }) },
  heatX: { signals: (c) => ({ ...c, factor: c.file === true ? Math.log1p(c.heat) : 0 }) },
  ageX: { signals: (c) => ({ ...c, factor: c.file === true && c.taskAge >= 0 ? Math.log2(1 + c.taskAge) : 0 }) },
  ageAllX: { signals: (c) => ({ ...c, factor: c.taskAge >= 0 ? Math.log2(1 + c.taskAge) : 0 }) },
  sizeX: { signals: (c) => ({ ...c, factor: c.file === true ? Math.log2(Math.max(1, c.taskFiles)) : 0 }) },
  div90: { signals: (c) => c, diversity: 0.9 },
  div110: { signals: (c) => c, diversity: 1.1 },
  div125: { signals: (c) => c, diversity: 1.25 },
  perChar100: { signals: (c) => c, order: { power: 1, scope: 'all', reference: 40 } },
  perChar050: { signals: (c) => c, order: { power: 0.5, scope: 'all', reference: 40 } },
  perFile100: { signals: (c) => c, order: { power: 1, scope: 'files', reference: 40 } },
  perFile100r80: { signals: (c) => c, order: { power: 1, scope: 'files', reference: 80 } },
  perFile050: { signals: (c) => c, order: { power: 0.5, scope: 'files', reference: 40 } },
  perNoConv100: { signals: (c) => c, order: { power: 1, scope: 'notConventions', reference: 40 } },
  perNoConv100r60: { signals: (c) => c, order: { power: 1, scope: 'notConventions', reference: 60 } },
  perNoConv075: { signals: (c) => c, order: { power: 0.75, scope: 'notConventions', reference: 40 } },
  perChar075: { signals: (c) => c, order: { power: 0.75, scope: 'all', reference: 40 } },
  perFile100r120: { signals: (c) => c, order: { power: 1, scope: 'files', reference: 120 } },
  perNoConv100r80: { signals: (c) => c, order: { power: 1, scope: 'notConventions', reference: 80 } },
  perCap100r60: { signals: (c) => c, order: { power: 1, scope: 'capped', reference: 60 } },
  perCap100r40: { signals: (c) => c, order: { power: 1, scope: 'capped', reference: 40 } },
  perCap100r50: { signals: (c) => c, order: { power: 1, scope: 'capped', reference: 50 } },
  perCap075r60: { signals: (c) => c, order: { power: 0.75, scope: 'capped', reference: 60 } },
  perCap100r80: { signals: (c) => c, order: { power: 1, scope: 'capped', reference: 80 } },
  perPlain100: { signals: (c) => c, order: { power: 1, scope: 'noConventions', reference: 40 } },
  normMax: { signals: (c) => c, perPrompt: scaledBy(['query', 'context'], (max) => max / 10) },
  normMaxAll: { signals: (c) => c, perPrompt: scaledBy(['query', 'context', 'feedback'], (max) => max / 10) },
  normSqrt: { signals: (c) => c, perPrompt: scaledBy(['query', 'context'], (max) => Math.sqrt(max) / 3) },
  normCtxMax: { signals: (c) => c, perPrompt: scaledBy(['context'], (max) => max / 10) },
  normCtxSqrt: { signals: (c) => c, perPrompt: scaledBy(['context'], (max) => Math.sqrt(max) / 3) },
  churnSpecial: {
    signals: (c) => ({ ...c, feedback: c.context > 0 || c.age >= 0 || c.coChange > 0 ? churnOf(c) : 0 }),
  },
};

/** Sections' hits, labels and tokens, and the prompts they are of. */
interface Sums {
  readonly hits: number;
  readonly labels: number;
  readonly tokens: number;
  readonly prompts: number;
}
const NO_SUMS: Sums = { hits: 0, labels: 0, tokens: 0, prompts: 0 };
const added = (a: Sums, b: Sums): Sums => ({
  hits: a.hits + b.hits,
  labels: a.labels + b.labels,
  tokens: a.tokens + b.tokens,
  prompts: a.prompts + b.prompts,
});

/** Hits and labels of one held-out history under a ranking, at a budget, for the labels `counts` keeps. */
const held = (
  prompts: ReadonlyArray<PromptCandidates>,
  ranking: Ranking,
  maxTokens: number,
  counts?: (c: Extended) => boolean,
  diversity = 1,
): { hits: number; labels: number; tokens: number } => {
  let hits = 0;
  let labels = 0;
  let tokens = 0;
  for (const prompt of prompts) {
    const kept =
      counts === undefined
        ? prompt
        : { ...prompt, candidates: prompt.candidates.map((c) => ({ ...c, label: c.label && counts(c as Extended) })) };
    const section = simulateSection(kept, ranking, Number.MAX_SAFE_INTEGER, maxTokens, diversity);
    hits += section.hits;
    // Every label counts, those no candidate holds too (a miss whatever the ranking).
    labels += counts === undefined ? prompt.expected : kept.candidates.filter((c) => c.label).length;
    tokens += section.tokens;
  }
  return { hits, labels, tokens };
};

const run = (name: string, variant: Variant): void => {
  setSectionOrder(variant.order);
  const perPrompt = variant.perPrompt ?? ((candidates: ReadonlyArray<Candidate>) => candidates);
  const sets = read.map((prompts) =>
    prompts.map((p) => ({ ...p, candidates: perPrompt(p.candidates.map((c) => variant.signals(c as Extended))) })),
  );
  const handWeight = Number(process.env['HAND_WEIGHT'] ?? 1);
  const prepared = prepareHistories(sets, START.recency.tasks).map((p, i) =>
    core[i]!.group === 'hand' && handWeight !== 1 ? { ...p, weight: handWeight } : p,
  );
  const folds = Number(process.env['FOLDS'] ?? core.length);
  const l2 = Number(process.env['L2'] ?? 0.005);
  const fitted = new Map<number, Ranking>();
  const groups = new Map<
    string,
    { at500: number; at250: number; big: number; bigLabels: number; labels: number; tokens: number; prompts: number }
  >();
  const per: string[] = [];
  core.forEach((history, h) => {
    const fold = h % folds;
    let ranking = fitted.get(fold);
    if (ranking === undefined) {
      const train = core.map((_, i) => i).filter((i) => i % folds !== fold);
      ranking = fitRanking(
        train.map((i) => sets[i]!),
        train.map((i) => recency[i]!),
        DEFAULT_MAX_TOKENS,
        train.map((i) => prepared[i]!),
        'micro',
        variant.polish ?? true,
        l2,
        undefined,
        variant.off,
      );
      fitted.set(fold, ranking);
    }
    const { diversity } = variant;
    const at500 = held(sets[h]!, ranking, DEFAULT_MAX_TOKENS, undefined, diversity);
    const at250 = held(sets[h]!, ranking, 250, undefined, diversity);
    const big = held(sets[h]!, ranking, DEFAULT_MAX_TOKENS, (c) => c.labelFiles > 10, diversity);
    const g = groups.get(history.group) ?? {
      at500: 0,
      at250: 0,
      big: 0,
      bigLabels: 0,
      labels: 0,
      tokens: 0,
      prompts: 0,
    };
    g.at500 += at500.hits;
    g.at250 += at250.hits;
    g.big += big.hits;
    g.bigLabels += big.labels;
    g.labels += at500.labels;
    g.tokens += at500.tokens;
    g.prompts += sets[h]!.length;
    groups.set(history.group, g);
    per.push(`${history.name} ${(at500.hits / at500.labels).toFixed(3)}`);
  });
  console.log(`[${name}] ${per.join(', ')}`);
  const extras = [...fitted.values()].map((r) => r.extraWeight).filter((w) => w !== undefined);
  if (extras.length > 0) console.log(`[${name}] extra weight per fold: ${extras.join(', ')}`);
  const factors = [...fitted.values()].map((r) => r.factorWeight).filter((w) => w !== undefined);
  if (factors.length > 0) console.log(`[${name}] factor weight per fold: ${factors.join(', ')}`);
  for (const [group, g] of groups)
    console.log(
      `[${name}] ${group}: 500 tokens ${(g.at500 / g.labels).toFixed(3)}, 250 tokens ${(g.at250 / g.labels).toFixed(3)}, ` +
        `labels of >10 files ${(g.big / g.bigLabels).toFixed(3)} (${g.bigLabels}), ${(g.tokens / g.prompts).toFixed(0)} tokens`,
    );
  // The long sessions' prompts with the variant's signals.
  const longSets = longRead.map((prompts) =>
    prompts.map((p) => ({ ...p, candidates: perPrompt(p.candidates.map((c) => variant.signals(c as Extended))) })),
  );
  /** Long session `h` under every fold's ranking (each as `adjust` changes it), summed over the folds. */
  const longOverFolds = (h: number, adjust: (ranking: Ranking) => Ranking = (ranking) => ranking): Sums =>
    [...fitted.values()]
      .map((ranking) => ({
        ...held(longSets[h]!, adjust(ranking), DEFAULT_MAX_TOKENS, undefined, variant.diversity),
        prompts: longSets[h]!.length,
      }))
      .reduce(added, NO_SUMS);
  // STOPS=kind:share[:power],...: the held-out sections again under each stop (see SectionStop).
  for (const spec of (process.env['STOPS'] ?? '').split(',').filter((s) => s !== '')) {
    const [kind, share, power] = spec.split(':');
    setSectionStop({ kind: kind as SectionStop['kind'], share: Number(share), power: Number(power ?? 1) });
    const byGroup = new Map<string, Sums>();
    core.forEach((history, h) => {
      const result = held(sets[h]!, fitted.get(h % folds)!, DEFAULT_MAX_TOKENS, undefined, variant.diversity);
      byGroup.set(history.group, added(byGroup.get(history.group) ?? NO_SUMS, { ...result, prompts: sets[h]!.length }));
    });
    let longFigure = '';
    if (long.length > 0) {
      const { hits, labels, tokens, prompts } = long.map((_, h) => longOverFolds(h)).reduce(added, NO_SUMS);
      longFigure = `, long ${(hits / labels).toFixed(3)} (${(tokens / prompts).toFixed(0)} tokens)`;
    }
    console.log(
      `[${name} stop ${spec}] ` +
        [...byGroup]
          .map(
            ([group, g]) => `${group} ${(g.hits / g.labels).toFixed(3)} (${(g.tokens / g.prompts).toFixed(0)} tokens)`,
          )
          .join(', ') +
        longFigure,
    );
    setSectionStop(undefined);
  }
  // LONG_EXTRA=w,...: the long sessions under every fold's ranking with the extra signal's weight
  // set to each w (for a signal no 150-commit history holds, which the fit leaves at 0), then
  // each session held out: the w the other long sessions score best with, on it.
  const longExtra = (process.env['LONG_EXTRA'] ?? '')
    .split(',')
    .filter((w) => w !== '')
    .map(Number);
  if (long.length > 0 && longExtra.length > 0) {
    const table = longExtra.map((w) =>
      long.map((_, h) => longOverFolds(h, (ranking) => ({ ...ranking, extraWeight: w }))),
    );
    longExtra.forEach((w, i) => {
      const hits = table[i]!.reduce((n, r) => n + r.hits, 0);
      const labels = table[i]!.reduce((n, r) => n + r.labels, 0);
      console.log(
        `[${name} long extra ${w}] ${(hits / labels).toFixed(3)}; ` +
          long
            .map((history, h) => `${history.name} ${(table[i]![h]!.hits / table[i]![h]!.labels).toFixed(3)}`)
            .join(', '),
      );
    });
    let hits = 0;
    let labels = 0;
    const chosen = long.map((history, h) => {
      let best = 0;
      let bestHits = -1;
      longExtra.forEach((_, i) => {
        const others = table[i]!.reduce((n, r, j) => (j === h ? n : n + r.hits), 0);
        if (others > bestHits) {
          bestHits = others;
          best = i;
        }
      });
      hits += table[best]![h]!.hits;
      labels += table[best]![h]!.labels;
      return `${history.name} ${longExtra[best]}`;
    });
    console.log(`[${name} long extra, leave-one-session-out] ${(hits / labels).toFixed(3)}; ${chosen.join(', ')}`);
  }
  if (long.length > 0) {
    // Each long session under every fold's ranking: the mean over the folds.
    const per = long.map((history, h) => ({ name: history.name, ...longOverFolds(h) }));
    const hits = per.reduce((n, p) => n + p.hits, 0);
    const labels = per.reduce((n, p) => n + p.labels, 0);
    console.log(
      `[${name}] long (every ${longStep}th prompt): 500 tokens ${(hits / labels).toFixed(3)}; ` +
        per.map((p) => `${p.name} ${(p.hits / p.labels).toFixed(3)}`).join(', '),
    );
  }
  progress(name);
};

/**
 * The extended signals a variant tries: `NAME` in place of the feedback words (whose ablation
 * moves nothing), `NAME+` beside every signal of the defaults, with a weight of its own.
 */
const EXTRAS: Readonly<Record<string, (c: Extended) => number>> = {
  churn: churnOf,
  seedProximity: (c) => c.seedProximity,
  seedSameDir: (c) => c.seedSameDir,
  recentProximity: (c) => c.recentProximity,
  recentProximity3: (c) => c.recentProximity3,
  pathWords: (c) => c.pathWords,
  startProximity: (c) => c.startProximity,
  heat: (c) => c.heat,
  dirHeat: (c) => c.dirHeat,
  recentCoChange: (c) => c.recentCoChange,
  recXctx: (c) => (c.age >= 0 ? 0.9 ** c.age * c.context : 0),
  recXquery: (c) => (c.age >= 0 ? 0.9 ** c.age * c.query : 0),
  recXmatch: (c) => (c.age >= 0 ? 0.9 ** c.age * (c.query + c.context) : 0),
  coXctx: (c) => c.coChange * c.context,
  fileDoc: (c) => c.fileDoc,
  prevContext: (c) => c.prevContext,
  prevMatch: (c) => c.prevMatch,
  fileDocOld: (c) => (c.taskAge >= 63 ? c.fileDoc : 0),
  fileDocOld150: (c) => (c.taskAge >= 150 ? c.fileDoc : 0),
  ageTail: (c) => (c.taskAge >= 0 ? 1 / (1 + c.taskAge) : 0),
  ageLogTail: (c) => (c.taskAge >= 0 ? 1 / Math.log2(2 + c.taskAge) : 0),
  seedStem: (c) => c.seedStem,
  promptStem: (c) => c.promptStem,
  seedPrefix: (c) => c.seedPrefix,
  headQuery: (c) => c.headQuery,
  headContext: (c) => c.headContext,
  headMatch: (c) => c.headQuery + c.headContext,
  gap1h: (c) => Math.exp(-c.gapHours),
  gap6h: (c) => Math.exp(-c.gapHours / 6),
  gap1d: (c) => Math.exp(-c.gapHours / 24),
  gap1w: (c) => Math.exp(-c.gapHours / 168),
  gapRec1d: (c) => (c.age >= 0 ? 0.9 ** c.age * Math.exp(-c.gapHours / 24) : 0),
  gapRec6h: (c) => (c.age >= 0 ? 0.9 ** c.age * Math.exp(-c.gapHours / 6) : 0),
};

/** The variant a name given on the command line asks for, or undefined when it names none. */
const variantOf = (name: string): Variant | undefined => {
  const beside = name.endsWith('+');
  const signal = EXTRAS[beside ? name.slice(0, -1) : name];
  if (signal === undefined) return VARIANTS[name];
  return beside
    ? { signals: (c: Extended) => ({ ...c, extra: signal(c) }) }
    : { signals: (c: Extended) => ({ ...c, feedback: signal(c) }) };
};

// Every name is checked before the histories are replayed, which takes minutes.
if (positionals.length === 0) refuse('name a variant to run');
const variants = positionals.map(
  (name) =>
    [
      name,
      variantOf(name) ??
        refuse(
          `unknown variant ${JSON.stringify(name)}: one of ${Object.keys(VARIANTS).join(', ')}, or one of ${Object.keys(EXTRAS).join(', ')}, alone or followed by +`,
        ),
    ] as const,
);

// The loop fits on the real histories: without them it has nothing to compare variants on.
if (!existsSync(realworld)) refuse(`${realworld} is absent: the loop needs its real histories (--realworld DIR)`);
const hand = loadHistories(join(root, 'eval', 'histories'), 'hand');
const real = loadHistories(join(realworld, 'histories'), 'real');
const core = [...hand, ...real];
progress(`replayed ${core.length} histories`);
// The head signals cost a third query a prompt: read only for a variant of them.
const heads = positionals.some((name) => name.startsWith('head'));
const read = core.map((history) => history.prompts.map((_, i) => extended(history, i, heads)));
const recency = core.map(recencyLists);
progress('read the candidates');
// LONG=N: also every Nth prompt of each long session, measured (never fitted on) under each fold's ranking.
const longStep = Number(process.env['LONG'] ?? 0);
const long = longStep > 0 ? loadHistories(join(realworld, 'scale'), 'long') : [];
const longRead = long.map((history) =>
  history.prompts.flatMap((_, i) => (i % longStep === 0 ? [extended(history, i, heads)] : [])),
);
if (long.length > 0) progress(`read every ${longStep}th prompt of ${long.length} long sessions`);

for (const [name, variant] of variants) run(name, variant);
