/**
 * Retrieval as a pure pipeline: valid facts -> tag filter -> not the query's own task ->
 * relevance score (rank.ts) -> eligible (score above 0, or a convention) -> ranked -> at most
 * `maxFacts` -> the relevance floor -> the token budget, which takes the best fact first, then
 * the others by score per character (`RankingOptions.fill`), measured on the section exactly as
 * the caller renders it, in rank order.
 *
 * Scoring takes two passes when feedback, co-change or a convention base is on: the first
 * ranks by the query alone and gives the best few matches (whose words make the feedback
 * query, and whose files seed co-change) and the query's score scale; the second ranks with
 * everything.
 *
 * `retrieveFacts` finds each pass's exact top k through the index only: in a store of up to
 * `RetrievalScratch.scanFacts` valid facts by scanning what each pass reaches (scan.ts), in a
 * larger one by MaxScore over the postings, with per-term upper bounds (topk.ts).
 * `explainRetrieval` scores every stored fact the same way, with the same numbers added in the
 * same order, and records where each one left the pipeline; its included facts are exactly what
 * `retrieveFacts` returns.
 *
 * Nothing here catches: a query that is not one is a `Left` from `parseFactQuery` (the
 * `...Either` forms), and an exception (a bug, or a caller's token counter that throws)
 * reaches the caller's shell, which reports it; it never reads as an empty answer.
 */
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import { isFileFact, type SessionFact } from '../fact.js';
import { rememberedPriorFlags } from '../search/priors.js';
import { factTermWeights } from '../search/weights.js';
import { selectAllFacts } from '../store/selectors.js';
import { type FactStore, validCount } from '../store/state.js';
import { fitsBudget, fitToBudget, type SectionRenderer } from './budget.js';
import { estimateTokens } from '../../tokens/estimate.js';
import { contextTable, factContext } from './context.js';
import { passesFor } from './passes.js';
import { type FactQuery, parseFactQuery, type QueryFailure, settingsFor } from './query.js';
import type { ScoreParts } from './rank.js';
import {
  byRank,
  combineScore,
  type ExclusionReason,
  factCoChange,
  filterReason,
  type Pass,
  repeatsConvention,
  type Scored,
  type Settings,
} from './score.js';
import { scanPasses } from './scan.js';
import { rankPasses } from './topk.js';

export type { ExclusionReason } from './score.js';
/** The query's type, where the pipeline's callers have always found it. */
export type { FactQuery } from './query.js';

/** One fact's fate in a retrieval. `reason` is present exactly when excluded. */
export interface RetrievalDecision {
  readonly fact: SessionFact;
  readonly score: number;
  readonly decision: 'included' | 'excluded';
  readonly reason?: ExclusionReason;
  /** What the score is made of: term contributions, feedback, task context, recency, co-change, priors, boost. */
  readonly parts?: ScoreParts;
}

/**
 * The candidates within the count cap that pass the relevance floor: a score (boost aside) at
 * least `floor` times the best one's, unless boosted or a convention.
 */
const passesFloor = (settings: Settings, inCap: ReadonlyArray<Scored>): ((candidate: Scored) => boolean) => {
  const best = inCap.reduce((max, { parts }) => Math.max(max, parts.total - parts.boost), 0);
  const floor = settings.plan.ranking.floor * best;
  return ({ fact, parts }) => parts.boost > 0 || fact.tags.includes('convention') || parts.total - parts.boost >= floor;
};

/**
 * The order the budget fills the section in (`RankingOptions.fill`), as positions in `kept`: the
 * best candidate first, then the others by score per character of their line to the fill's power
 * (a line that is not a file change counting at most `longest` characters); candidates of equal
 * value keep their rank order.
 */
const fillOrder = (settings: Settings, kept: ReadonlyArray<Scored>): number[] => {
  const { power, longest } = settings.plan.ranking.fill;
  const rest: number[] = [];
  for (let at = 1; at < kept.length; at += 1) rest.push(at);
  if (power !== 0 && kept.length >= 3) {
    const { render, layout } = settings;
    const values = new Float64Array(kept.length);
    for (const at of rest) {
      const { fact, parts } = kept[at]!;
      const length = render.addedLength(fact, layout);
      const counted = isFileFact(fact) ? length : Math.min(length, longest);
      values[at] = parts.total / counted ** power;
    }
    rest.sort((a, b) => values[b]! - values[a]!);
  }
  return kept.length === 0 ? rest : [0, ...rest];
};

/**
 * The candidates the section holds, in rank order, and the reason each candidate within the cap
 * that passes the floor (`kept`, by its position there) is left out, if it is: the budget takes
 * them in the fill order (`fillOrder`), and the section is drawn in rank order. A token counter
 * that does not add up line by line (the default estimate in the `lines` layout does) could find
 * the section drawn in rank order over the budget: then the candidates taken last go until it fits.
 */
const budgeted = (
  settings: Settings,
  ranked: ReadonlyArray<Scored>,
): {
  keep: (candidate: Scored) => boolean;
  reasons: Array<ExclusionReason | undefined>;
  included: Scored[];
} => {
  const inCap = ranked.slice(0, settings.maxFacts);
  const keep = passesFloor(settings, inCap);
  const kept = inCap.filter(keep);
  const order = fillOrder(settings, kept);
  // By pushes, not `map`, for the reason `planQuery` gives: one shape of list in every tier.
  const inOrder: SessionFact[] = [];
  for (const at of order) inOrder.push(kept[at]!.fact);
  const fates = fitToBudget(settings, inOrder);
  const reasons: Array<ExclusionReason | undefined> = kept.map(() => undefined);
  order.forEach((at, i) => {
    reasons[at] = fates[i];
  });
  let included = kept.filter((_candidate, at) => reasons[at] === undefined);
  const taken = order.filter((at) => reasons[at] === undefined);
  // Drawn in the order it was measured in, or by a counter that adds up line by line, it fits.
  const reordered = taken.some((at, i) => i > 0 && at < taken[i - 1]!);
  if (reordered && (settings.countTokens !== estimateTokens || settings.layout !== 'lines')) {
    const draw = (): string =>
      settings.render(
        included.map(({ fact }) => fact),
        settings.layout,
      );
    while (included.length > 0 && !fitsBudget(draw(), settings.maxTokens, settings.countTokens)) {
      const last = taken.pop()!;
      reasons[last] = 'budget';
      included = included.filter((candidate) => candidate !== kept[last]);
    }
  }
  return { keep, reasons, included };
};

/** The ranked candidates with the reason each left out has: past the cap, below the floor, or over the budget. */
const finish = (settings: Settings, ranked: ReadonlyArray<Scored>): Array<Scored & { reason?: ExclusionReason }> => {
  const { keep, reasons } = budgeted(settings, ranked);
  let kept = 0;
  return ranked.map((candidate, rank) => {
    const reason: ExclusionReason | undefined =
      rank >= settings.maxFacts ? 'max_facts' : !keep(candidate) ? 'no_match' : reasons[kept++];
    return reason === undefined ? candidate : { ...candidate, reason };
  });
};

/**
 * The facts to inject for `query`, in rank order, within `maxFacts` and `maxTokens` measured on
 * the section as `render` draws it. A field that is not of its kind reads as its default (see
 * `settingsFor`; counts that are not counts give `[]`).
 */
export const retrieveRanked = (
  store: FactStore,
  query: FactQuery,
  render: SectionRenderer,
): ReadonlyArray<SessionFact> => {
  const settings = settingsFor(store, query, render);
  if (settings.maxFacts === 0 || settings.maxTokens < 0) return [];
  const table = contextTable(store, settings.plan, settings.scratch);
  const passes = passesFor(store, settings, table);
  const ranked =
    validCount(store) <= settings.scratch.scanFacts
      ? scanPasses(store, settings, passes)
      : rankPasses(store, settings, passes);
  // What `finish` includes: the candidates within the cap, past the floor and within the budget.
  return budgeted(settings, ranked).included.map((candidate) => candidate.fact);
};

/**
 * A stage that takes a query, as one that takes whatever the caller has and first checks it is
 * a query (`parseFactQuery`): a `Left` says what is wrong, a `Right` holds the stage's answer.
 */
const checked =
  <A>(
    stage: (store: FactStore, query: FactQuery, render: SectionRenderer) => A,
  ): ((store: FactStore, input: unknown, render: SectionRenderer) => E.Either<QueryFailure, A>) =>
  (store, input, render) =>
    pipe(
      parseFactQuery(input),
      E.map((query) => stage(store, query, render)),
    );

/** `retrieveRanked` of the query `input` holds, or why it is not a query (`parseFactQuery`). */
export const retrieveRankedEither = checked(retrieveRanked);

/**
 * The positions of each term in a pass's term list (a feedback word may repeat a query term):
 * a fact is read through its own few terms, not looked up once per term of the query, which
 * a pasted prompt can make tens of thousands.
 */
const termPositions = (pass: Pass): Map<string, number[]> => {
  const positions = new Map<string, number[]>();
  pass.terms.forEach(({ term }, at) => {
    const known = positions.get(term);
    if (known === undefined) positions.set(term, [at]);
    else known.push(at);
  });
  return positions;
};

/** Scores every stored fact in one pass, the slow way (from the fact's own text). */
const scoreAll = (
  store: FactStore,
  settings: Settings,
  pass: Pass,
  firstPass: boolean,
): Array<Scored & { reason?: ExclusionReason }> => {
  const { memo } = settings.scratch;
  const positions = termPositions(pass);
  // One list for every fact, `stored[i]` the fact's weight of `pass.terms[i]`: each fact sets
  // the positions of its terms (`held`), is scored from those alone and clears them (combineScore
  // keeps nothing of either).
  const stored = new Array<number | undefined>(pass.terms.length).fill(undefined);
  const held: number[] = [];
  return selectAllFacts(store).map((fact) => {
    const weights = factTermWeights(fact);
    for (let i = 0; i < weights.length; i += 2)
      for (const at of positions.get(weights[i] as string) ?? []) {
        stored[at] = weights[i + 1] as number;
        held.push(at);
      }
    const valid = fact.validTo === undefined;
    const extras = {
      context: valid ? factContext(pass.table, fact) : 0,
      recency: pass.recency.get(fact.sourceTaskId) ?? 0,
      coChange: valid ? factCoChange(pass, fact) : 0,
    };
    const parts = combineScore(
      pass,
      fact,
      stored,
      extras,
      repeatsConvention(store, fact),
      true,
      rememberedPriorFlags(fact, memo.flags),
      // In the pass's term order, the order the index path adds them in.
      held.sort((a, b) => a - b),
    );
    for (const at of held) stored[at] = undefined;
    held.length = 0;
    const reason = filterReason(settings, fact, parts, firstPass);
    return reason === undefined ? { fact, parts } : { fact, parts, reason };
  });
};

/**
 * Every stored fact with its score, its parts and its decision (as `retrieveRanked` decides with
 * the same renderer): the ranked candidates first, in rank order, then the rest.
 */
export const explainRanked = (
  store: FactStore,
  query: FactQuery,
  render: SectionRenderer,
): ReadonlyArray<RetrievalDecision> => {
  const settings = settingsFor(store, query, render);
  const table = contextTable(store, settings.plan, settings.scratch);
  const passes = passesFor(store, settings, table);
  const first =
    passes.first === undefined
      ? []
      : scoreAll(store, settings, passes.first, true)
          .filter((scored) => scored.reason === undefined)
          .sort(byRank)
          .slice(0, passes.first.k);
  const scored = scoreAll(store, settings, passes.last(first), false);
  const candidates = scored.filter((entry) => entry.reason === undefined).sort(byRank);
  const ranked = finish(settings, candidates).map(({ fact, parts, reason }): RetrievalDecision =>
    reason === undefined
      ? { fact, score: parts.total, decision: 'included', parts }
      : { fact, score: parts.total, decision: 'excluded', reason, parts },
  );
  const others = scored.flatMap(({ fact, parts, reason }): RetrievalDecision[] =>
    reason === undefined ? [] : [{ fact, score: parts.total, decision: 'excluded', reason, parts }],
  );
  return [...ranked, ...others];
};

/** `explainRanked` of the query `input` holds, or why it is not a query (`parseFactQuery`). */
export const explainRankedEither = checked(explainRanked);
