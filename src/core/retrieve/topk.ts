/**
 * The exact top k of one scoring pass, found through the index, by term-at-a-time MaxScore
 * (Turtle and Flood) over the postings:
 *
 * - The terms are read in descending order of their upper bound (the term's largest weight,
 *   kept by the index, times its idf and multiplier). Each fact's sum is gathered in an
 *   accumulator. The special facts (those with a task context, of a recent task, of a file that
 *   changed with the query's best files, or of a file the query names) have one from the start,
 *   with what they get besides their terms.
 * - Before each term, the most a fact not seen yet can score is what the remaining terms can
 *   add, times the largest prior. Once that is below a score the k-th best is sure to reach
 *   (the k-th of the accumulators' lower bounds, kept as they grow), no accumulator is opened
 *   (before that, a posting whose own weight and the remaining terms cannot reach it opens none),
 *   those that can no longer reach it are dropped, and the rest are completed by seeking their
 *   documents in the remaining lists (skipping whole blocks) when that reads less than the list.
 * - Every accumulator whose upper bound can still reach the k-th best is then scored exactly.
 *   Conventions, whose prior raises a score, have postings of their own, pruned the same way
 *   (with their prior in the bounds) but every posting read, to mark each one a term matches;
 *   the conventions no term matches are eligible too, at their base.
 *
 * Pruning only skips facts whose bound is strictly below the k-th best (a tie could still win on
 * recency), and scores are compared as the explaining path computes them, so the result is
 * exactly the first k of `explainRetrieval`'s ranking.
 *
 * The parts: the query's scratch (scratch.ts), the special facts (special.ts), the bounds and
 * the pool of lower bounds (bounds.ts), one search's best k (best.ts), the phases (phase.ts),
 * the accumulators (accumulate.ts), the candidate heap (heap.ts), the unmatched conventions
 * (conventions.ts), and here the passes.
 */
import {
  accumulate,
  clearMatched,
  clearOwnTask,
  clearPopulations,
  markOwnTask,
  seedSpecial,
  TRACKED_POSTINGS,
} from './accumulate.js';
import { Search } from './best.js';
import { listsOf, SLACK } from './bounds.js';
import { offerUnmatchedConventions } from './conventions.js';
import { Phase, Population } from './phase.js';
import { postingsSize } from '../search/postings.js';
import type { FactStore } from '../store/state.js';
import type { Passes, Scored, Settings } from './score.js';
import { growRetrievalScratch } from './scratch.js';
import { clearSpecial, specialFactsOf } from './special.js';

/**
 * The last pass's best `settings.maxFacts` candidates, in rank order: exactly what scoring
 * every fact in both passes would rank first. A two-pass query reads the query's own terms
 * once, for both passes (see `Phase`): the first pass's best come from the facts that phase
 * keeps, and the last pass then reads only the feedback words' lists, or every list again when
 * those are long.
 */
export const rankPasses = (
  store: FactStore,
  settings: Settings,
  { first, last, recency, recentRecords }: Passes,
): Scored[] => {
  const documents = store.index.nextDoc;
  const lastK = Math.min(settings.maxFacts, documents);
  if (!(lastK > 0)) return [];
  const { scratch } = settings;
  growRetrievalScratch(scratch, documents);
  const { docs } = scratch;
  let postings = 0;
  for (const term of settings.plan.terms)
    postings +=
      (term.postings === undefined ? 0 : postingsSize(term.postings)) +
      (term.conventions === undefined ? 0 : postingsSize(term.conventions));
  const tracksTerms = postings <= TRACKED_POSTINGS;
  const populations = [
    new Population(false, docs.openFacts, tracksTerms),
    new Population(true, docs.openConventions, tracksTerms),
  ];
  const specialFacts = specialFactsOf(scratch, store, recency, recentRecords);
  const run = (phase: Phase): void => {
    // The facts first, then the conventions: they are fewer, and most are turned away by the
    // floor the facts leave.
    for (const population of populations) accumulate(phase, population);
  };
  try {
    markOwnTask(docs, store, settings.taskId);
    let lastPhase: Phase;
    if (first === undefined) {
      lastPhase = new Phase(new Search(store, settings, last([]), false), 0, true, lastK, 0);
      seedSpecial(scratch, lastPhase.search.pass, specialFacts(lastPhase.search.pass), populations, false);
    } else {
      const firstSearch = new Search(store, settings, first, true);
      const queryPhase = new Phase(firstSearch, 0, false, Math.max(firstSearch.best.k, lastK), 0);
      try {
        seedSpecial(scratch, first, specialFacts(first), populations, false);
        run(queryPhase);
      } catch (error) {
        queryPhase.pool.clear();
        throw error;
      }
      const lastSearch = new Search(store, settings, last(firstSearch.best.list), false);
      const { pass } = lastSearch;
      const read = (from: number, to: number): { lists: number; postings: number } => {
        const lists = [...listsOf(pass, from, to, false), ...listsOf(pass, from, to, true)];
        return { lists: lists.length, postings: lists.reduce((sum, list) => sum + postingsSize(list.postings), 0) };
      };
      const query = read(0, pass.queryTerms);
      const feedback = read(pass.queryTerms, pass.terms.length);
      // Completing a fact only feedback opened costs a seek in each query list, but most such facts
      // are dropped by their bound before that: every list is read again only when the feedback
      // lists are long enough that the seeks could cost more than twice reading the query lists.
      const reuse = feedback.postings * query.lists < 2 * query.postings;
      if (reuse) {
        lastPhase = new Phase(lastSearch, pass.queryTerms, true, lastK, queryPhase.floor() * SLACK);
        queryPhase.pool.clear();
      } else {
        // The feedback words may lift any fact: every list is read again, from the floor the query phase reached.
        lastPhase = new Phase(lastSearch, 0, true, lastK, 0);
        queryPhase.pool.moveTo(lastPhase.pool);
        clearPopulations(docs, populations);
      }
      seedSpecial(scratch, pass, specialFacts(pass), populations, reuse);
    }
    try {
      run(lastPhase);
    } finally {
      lastPhase.pool.clear();
    }
    // The last pass also takes conventions the query does not match (at their base, or at 0,
    // filling places nothing else takes).
    offerUnmatchedConventions(lastPhase.search, docs.matched);
    return lastPhase.search.best.list;
  } finally {
    clearMatched(docs);
    clearSpecial(scratch.special);
    clearPopulations(docs, populations);
    clearOwnTask(docs);
  }
};
