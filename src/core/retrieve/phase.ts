/**
 * The phases of a query's top-k search and the accumulators each population keeps across them
 * (see topk.ts for the algorithm).
 */
import { Pool, SLACK } from './bounds.js';
import type { Search } from './best.js';

/** One population's accumulators: the documents it opened (`open[0..used)`), kept across the phases of a query. */
export class Population {
  used = 0;
  constructor(
    readonly conventions: boolean,
    readonly open: Int32Array,
    /** Whether its documents' term bits are kept (`DocumentScratch.terms`): decided once for every phase of the query. */
    readonly tracksTerms: boolean,
  ) {}
}

/**
 * One phase of a query: the terms it reads (`search.pass`'s from `from` on), and the k largest
 * lower bounds it has seen. The query phase of a two-pass query reads the query's own terms
 * with k the larger of the two passes' counts: the last pass scores each fact at least as high
 * as the first (it only adds feedback, recency, co-change and a base), so its floor holds for both.
 * The facts it keeps have their query sums complete, and every fact it drops scores less than
 * that floor from them. The last pass's phase then either reads only the feedback words' lists
 * (`from` past the query's terms, that floor as `partialCap`): a fact the query phase did not
 * keep, opened there or special, is PARTIAL until its query sum is completed; or it reads every
 * list again from the start, its pool seeded with the query phase's bounds (see `rankPasses`).
 */
export class Phase {
  readonly pool: Pool;
  constructor(
    readonly search: Search,
    /** The first of the pass's terms this phase reads. */
    readonly from: number,
    /** Whether the search's own k-th best may prune: only in the last pass, which nothing follows. */
    readonly final: boolean,
    k: number,
    /** What the terms before `from` add at most to a PARTIAL fact's score (priors included). */
    readonly partialCap: number,
  ) {
    this.pool = new Pool(k, search.settings.scratch.docs.poolAt);
  }

  /** A score the k-th best is sure to reach, less the rounding margin: facts whose bound is below it are out. */
  floor(): number {
    const best = this.search.best;
    return Math.max(this.pool.threshold, this.final && best.full ? best.threshold : 0) / SLACK;
  }
}
