/**
 * One history scored under one setting against its baselines: the library, the seed design, the
 * recency baseline at the library's tokens, the library at the seed's tokens, the oracle, and the
 * library and recency at each budget of the curve. The seed and the oracle do not depend on the
 * ranking, so they are computed once per history and shared by every setting (the defaults and
 * each leave-one-out fold).
 */
import { DEFAULT_MAX_FACTS, DEFAULT_MAX_TOKENS, type SectionLayout } from '../src/index.js';
import {
  type History,
  libraryAtTokens,
  libraryRetriever,
  oracleRetriever,
  type PromptOutcome,
  recencyRetriever,
  scorePrompts,
  seedRetriever,
  type Setting,
  type Tally,
  emptyTally,
  tripleKey,
} from './lib.js';

/** The seed design's count cap: ten facts, whatever the budget. */
export const SEED_MAX_FACTS = 10;

/** The budgets of the recall-by-budget curve (tokens, estimated). */
export const CURVE_BUDGETS: ReadonlyArray<number> = [150, 250, 500, 1000];

/** The columns of a comparison: each a retriever's outcome per labeled prompt. */
export const COLUMNS = ['library', 'seed', 'recency', 'atSeedTokens', 'oracle'] as const;
export type Column = (typeof COLUMNS)[number];

/** The library and the recency baseline at its tokens, at one budget of the curve. */
export interface CurvePoint {
  readonly budget: number;
  readonly library: ReadonlyArray<PromptOutcome>;
  readonly recency: ReadonlyArray<PromptOutcome>;
}

/** A history's outcomes per column, and (when asked for) per budget of the curve. */
export type Compared = Readonly<Record<Column, ReadonlyArray<PromptOutcome>>> & {
  readonly curve: ReadonlyArray<CurvePoint>;
};

/**
 * The count cap at a budget of the curve: the default cap, scaled with the budget above the
 * default budget (the cap is a safety limit set for 500 tokens; left at 50 it would bind at 1,000
 * and the curve would measure the cap, not the ranking).
 */
export const capAt = (budget: number): number =>
  Math.max(DEFAULT_MAX_FACTS, Math.ceil((DEFAULT_MAX_FACTS * budget) / DEFAULT_MAX_TOKENS));

const fixedBaselines = new WeakMap<History, { seed: PromptOutcome[]; oracle: PromptOutcome[] }>();

/** The seed design and the oracle on a history at a budget, computed once per history. */
const baselinesOf = (history: History, maxTokens: number): { seed: PromptOutcome[]; oracle: PromptOutcome[] } => {
  let baselines = fixedBaselines.get(history);
  if (baselines === undefined) {
    baselines = {
      seed: scorePrompts(history, seedRetriever(SEED_MAX_FACTS, maxTokens)),
      oracle: scorePrompts(history, oracleRetriever(maxTokens)),
    };
    fixedBaselines.set(history, baselines);
  }
  return baselines;
};

/** How the library's sections under `setting` are drawn, and so counted. */
export const layoutOf = (setting: Setting): { layout?: SectionLayout } =>
  setting.layout === undefined ? {} : { layout: setting.layout };

/** The library at `setting` and the recency baseline at the library's tokens. */
const atBudget = (history: History, setting: Setting): { library: PromptOutcome[]; recency: PromptOutcome[] } => {
  const library = scorePrompts(history, libraryRetriever(setting), layoutOf(setting));
  return {
    library,
    recency: scorePrompts(
      history,
      recencyRetriever((i) => library[i]!.tokens),
    ),
  };
};

/** A history under a setting against its baselines, with the curve when `curve` is set. */
export const compare = (history: History, setting: Setting, curve = false): Compared => {
  const { library, recency } = atBudget(history, setting);
  const { seed, oracle } = baselinesOf(history, DEFAULT_MAX_TOKENS);
  return {
    library,
    seed,
    recency,
    atSeedTokens: scorePrompts(
      history,
      libraryAtTokens(setting, (i) => seed[i]!.tokens),
      layoutOf(setting),
    ),
    oracle,
    curve: curve
      ? CURVE_BUDGETS.map((budget) => ({
          budget,
          ...(budget === setting.maxTokens
            ? { library, recency }
            : atBudget(history, { ...setting, maxTokens: budget, maxFacts: capAt(budget) })),
        }))
      : [],
  };
};

/**
 * A window's prompts asked again inside a long session that ends with the same commits: each
 * window prompt's labels, their task ids turned into the session's (by commit), against what the
 * session's section at the same commit holds. Undefined when the session lacks a commit of it.
 */
export const windowInSession = (window: History, session: History, setting: Setting): Tally | undefined => {
  const taskOfCommit = new Map([...session.commits].map(([taskId, commit]) => [commit, taskId]));
  const promptOfCommit = new Map(session.prompts.map((prompt, i) => [prompt.commit, i]));
  const tally = emptyTally();
  for (const prompt of window.prompts) {
    const at = promptOfCommit.get(prompt.commit);
    if (prompt.commit === undefined || at === undefined) return undefined;
    const section = new Set(libraryRetriever(setting)(session.prompts[at]!, at).map(tripleKey));
    tally.prompts += 1;
    for (const label of prompt.expect) {
      const task = /^task:(.+)$/u.exec(label.object)?.[1];
      const commit = task === undefined ? undefined : window.commits.get(task);
      const sessionTask = commit === undefined ? undefined : taskOfCommit.get(commit);
      if (sessionTask === undefined) return undefined;
      tally.expected += 1;
      if (section.has(tripleKey({ ...label, object: `task:${sessionTask}` }))) tally.hits += 1;
    }
  }
  return tally;
};
