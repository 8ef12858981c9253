/**
 * One top-k search of one pass: the best k so far, in rank order, and a cheap way to turn most
 * candidates away before their score parts are built.
 */
import type { SessionFact } from '../fact.js';
import { postingWeight } from '../search/weights.js';
import type { FactStore } from '../store/state.js';
import { factContext } from './context.js';
import { priorTables, SLACK } from './bounds.js';
import { isConventionFlags, type ScoreParts } from './rank.js';
import {
  byRank,
  combineScore,
  combineSums,
  type Extras,
  factCoChange,
  filterReason,
  offerRanked,
  type Pass,
  repeatsConvention,
  type Scored,
  type Settings,
} from './score.js';

/** The best k candidates seen so far, in rank order. */
export class Best {
  readonly list: Scored[] = [];
  constructor(readonly k: number) {}

  /** True once it holds k candidates. */
  get full(): boolean {
    return this.list.length >= this.k;
  }

  /** The score a candidate must reach to enter (when full). */
  get threshold(): number {
    return this.full ? this.list[this.k - 1]!.parts.total : 0;
  }

  /** True when a full list certainly turns away a candidate of this exact score asserted at `validFrom`. */
  refuses(total: number, validFrom: number): boolean {
    const last = this.list[this.k - 1]!.parts.total;
    return total < last || (total === last && validFrom < this.list[this.k - 1]!.fact.validFrom);
  }

  /** Adds a candidate if it ranks within the best k; true when it did. */
  offer(candidate: Scored): boolean {
    return offerRanked(this.list, candidate, this.k, byRank);
  }
}

/**
 * One top-k search: the best so far, and a cheap way to turn most candidates away. `quickTotal`
 * adds a fact's numbers exactly as `combineScore` does, with the largest prior its flags allow
 * (the exact prior, unless an issue's duplicate prior is the higher one), so a candidate whose
 * quick total is below the k-th best is turned away without building its score parts.
 */
export class Search {
  readonly best: Best;
  /** Per prior flags: the exact prior, or for an issue the lower (`lower`) and the higher (`upper`) of its two. */
  readonly lower: Float64Array;
  readonly upper: Float64Array;

  constructor(
    readonly store: FactStore,
    readonly settings: Settings,
    readonly pass: Pass,
    readonly firstPass: boolean,
  ) {
    this.best = new Best(Math.min(pass.k, store.index.nextDoc));
    ({ lower: this.lower, upper: this.upper } = priorTables(
      pass.plan.ranking.priors,
      settings.scratch.memo.priorTables,
    ));
  }

  /** The largest prior of a fact with these flags. */
  priorOf(flags: number): number {
    return this.upper[flags]!;
  }

  /** A fact's total with the largest prior its flags allow, from its stored weights and extras. */
  quickTotal(
    weights: ReadonlyArray<number | undefined>,
    flags: number,
    context: number,
    extra: number,
    named: boolean,
  ): number {
    const { terms, queryTerms, plan, scale } = this.pass;
    let query = 0;
    let feedback = 0;
    for (let i = 0; i < terms.length; i += 1) {
      const stored = weights[i];
      if (stored === undefined) continue;
      const { multiplier, idf } = terms[i]!;
      const contribution = multiplier * idf * postingWeight(stored);
      if (i < queryTerms) query += contribution;
      else feedback += contribution;
    }
    const match = query + feedback + context;
    const base = match === 0 && isConventionFlags(flags) ? plan.ranking.conventionBase * scale : 0;
    const boost = match > 0 && named ? plan.ranking.exactFileBoost : 0;
    return (match + extra + base) * this.priorOf(flags) + boost;
  }

  /** True when a candidate with this quick total could still enter the best k. */
  mayEnter(quick: number): boolean {
    return !this.best.full || quick * SLACK >= this.best.threshold;
  }

  /** Scores a fact (with these prior flags) exactly from its stored weights and offers it; true when it entered. */
  offer(fact: SessionFact, flags: number, weights: ReadonlyArray<number | undefined>, known?: Extras): boolean {
    const { store, pass } = this;
    const extras = known ?? {
      context: factContext(pass.table, fact),
      recency: pass.recency.get(fact.sourceTaskId) ?? 0,
      coChange: factCoChange(pass, fact),
    };
    return this.enter(fact, combineScore(pass, fact, weights, extras, repeatsConvention(store, fact), false, flags));
  }

  /**
   * Scores a fact exactly from its term sums (see `combineSums`) and what it gets besides its
   * terms, and offers it; true when it entered.
   */
  offerSums(fact: SessionFact, flags: number, query: number, feedback: number, extras: Extras): boolean {
    const { store, pass } = this;
    return this.enter(fact, combineSums(pass, fact, query, feedback, extras, repeatsConvention(store, fact), flags));
  }

  /** Offers a scored fact that passes the filters; true when it entered. */
  private enter(fact: SessionFact, parts: ScoreParts): boolean {
    return filterReason(this.settings, fact, parts, this.firstPass) === undefined && this.best.offer({ fact, parts });
  }
}
