/**
 * What the top-k search knows before it scores a fact exactly: the most each term's list can
 * add (its bound), the prior each combination of flags allows, and the k largest lower bounds
 * seen, whose smallest is a score the k-th best is sure to reach.
 */
import { type Postings, postingsMaxWeight } from '../search/postings.js';
import { PRIOR_CLASSES } from '../search/priors.js';
import { postingWeight } from '../search/weights.js';
import { type PlannedTerm, priorBound, priorValue, type RankingPriors } from './rank.js';
import type { Pass } from './score.js';
import type { PriorTables, PriorTablesMemo } from './scratch.js';

/** Bounds are sums in another order than the exact scores: a margin keeps rounding from pruning a tie. */
export const SLACK = 1 + 1e-9;

const PRIOR_NAMES = [...PRIOR_CLASSES, 'duplicate'] as const;
/** Every combination of prior flags. */
export const FLAG_COMBINATIONS = 1 << PRIOR_CLASSES.length;

/**
 * The prior of every combination of flags for these priors, kept in `memo` by their values (a
 * few sets are kept): the last ones found are compared value by value, without making a key.
 */
export const priorTables = (priors: RankingPriors, memo: PriorTablesMemo): PriorTables => {
  if (memo.last !== undefined && sameValues(priors, memo.lastValues)) return memo.last;
  const values = PRIOR_NAMES.map((name) => priors[name]);
  const key = values.join(',');
  const cache = memo.byValues;
  let tables = cache.get(key);
  if (tables === undefined) {
    const lower = new Float64Array(FLAG_COMBINATIONS);
    const upper = new Float64Array(FLAG_COMBINATIONS);
    for (let flags = 0; flags < FLAG_COMBINATIONS; flags += 1) {
      upper[flags] = priorBound(flags, priors);
      lower[flags] = Math.min(priorValue(flags, priors, false), priorValue(flags, priors, true));
    }
    tables = { lower, upper };
    if (cache.size >= 32) cache.clear();
    cache.set(key, tables);
  }
  memo.lastValues = values;
  memo.last = tables;
  return tables;
};

/** True when the priors have these values, in the order of `PRIOR_NAMES`. */
const sameValues = (priors: RankingPriors, values: ReadonlyArray<number>): boolean => {
  for (let i = 0; i < PRIOR_NAMES.length; i += 1) if (priors[PRIOR_NAMES[i]!] !== values[i]) return false;
  return true;
};

/**
 * The k largest lower bounds seen, one per document: its smallest is a score the k-th best is
 * sure to reach. A document's bound only grows, so an older, smaller value stays a valid bound.
 * `poolAt` is the scratch that tells each document's place (plus one; 0 when not in the pool).
 */
export class Pool {
  private readonly docs: number[] = [];
  private readonly values: number[] = [];
  private leastAt = 0;
  /** The k-th largest bound, or -Infinity until there are k: a value must exceed it to matter. */
  least = -Infinity;

  constructor(
    private readonly k: number,
    private readonly poolAt: Int32Array,
  ) {}

  /** The k-th largest bound (0 until there are k). */
  get threshold(): number {
    return Math.max(0, this.least);
  }

  /** Moves every bound into `into` (a pool of the same query), leaving this one empty. */
  moveTo(into: Pool): void {
    this.clear();
    this.docs.forEach((doc, i) => into.offer(doc, this.values[i]!));
  }

  /** Records a lower bound of `doc`'s score, if it is among the k largest. */
  offer(doc: number, value: number): void {
    const { poolAt } = this;
    const at = poolAt[doc]! - 1;
    if (at >= 0) {
      if (value <= this.values[at]!) return;
      this.values[at] = value;
      if (this.docs.length < this.k || at !== this.leastAt) return;
    } else if (this.docs.length < this.k) {
      poolAt[doc] = this.docs.push(doc);
      this.values.push(value);
      if (this.docs.length < this.k) return;
    } else {
      poolAt[this.docs[this.leastAt]!] = 0;
      this.docs[this.leastAt] = doc;
      this.values[this.leastAt] = value;
      poolAt[doc] = this.leastAt + 1;
    }
    let leastAt = 0;
    for (let i = 1; i < this.values.length; i += 1) if (this.values[i]! < this.values[leastAt]!) leastAt = i;
    this.leastAt = leastAt;
    this.least = this.values[leastAt]!;
  }

  /** Clears the places it wrote in the scratch. */
  clear(): void {
    for (const doc of this.docs) this.poolAt[doc] = 0;
  }
}

/** One term's list of one population, as the search reads it. */
export interface List {
  /** The term's position in the pass. */
  readonly at: number;
  /** Its multiplier times its idf: a stored weight w adds factor x w / 1000. */
  readonly factor: number;
  /** The most it adds to a fact's relevance (before priors). */
  readonly bound: number;
  readonly postings: Postings;
}

/**
 * The largest stored weight of each planned term's lists (of the facts, of the conventions),
 * read once per term: a query reads its lists' bounds in every phase, and only MaxScore does.
 */
const largestWeights = new WeakMap<PlannedTerm, readonly [number, number]>();

const largestWeight = (planned: PlannedTerm, conventions: boolean): number => {
  let known = largestWeights.get(planned);
  if (known === undefined) {
    const of = (postings: Postings | undefined): number => (postings === undefined ? 0 : postingsMaxWeight(postings));
    known = [of(planned.postings), of(planned.conventions)];
    largestWeights.set(planned, known);
  }
  return known[conventions ? 1 : 0];
};

/** The lists of a population for the pass's terms from `from` on, by descending bound. */
export const listsOf = (pass: Pass, from: number, to: number, conventions: boolean): List[] => {
  const lists: List[] = [];
  for (let at = from; at < to; at += 1) {
    const planned = pass.terms[at]!;
    const postings = conventions ? planned.conventions : planned.postings;
    if (postings === undefined) continue;
    const factor = planned.multiplier * planned.idf;
    const bound = factor * postingWeight(largestWeight(planned, conventions));
    if (bound > 0) lists.push({ at, factor, bound, postings });
  }
  return lists.sort((a, b) => b.bound - a.bound || a.at - b.at);
};
