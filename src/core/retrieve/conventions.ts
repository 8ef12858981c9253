/**
 * The conventions a query's terms do not match: eligible all the same in the last pass, at
 * their base (a share of the query's best score), so they are weighed apart from the lists.
 */
import { getAt } from '../../persistent/persistentVector.js';
import type { SessionFact } from '../fact.js';
import { postingBlocks, postingFlagsOf } from '../search/postings.js';
import type { FactStore } from '../store/state.js';
import type { Search } from './best.js';
import { FLAG_COMBINATIONS, SLACK } from './bounds.js';
import { hasIssueFlag, maxPriorBound } from './rank.js';

/**
 * When each convention of a frozen block was asserted, by position (a frozen block and the facts
 * it names never change, so `memo` keeps it); undefined for a block a write run still owns,
 * which may change in place: the facts of its few conventions the rank order settles are read.
 */
const blockTimes = (
  store: FactStore,
  block: ReadonlyArray<number>,
  memo: WeakMap<ReadonlyArray<number>, Float64Array>,
): Float64Array | undefined => {
  if (!Object.isFrozen(block)) return undefined;
  let times = memo.get(block);
  if (times === undefined) {
    times = new Float64Array(block.length / 2);
    for (let j = 0; j < block.length; j += 2) times[j / 2] = getAt(store.index.docs, block[j]!)?.validFrom ?? NaN;
    memo.set(block, times);
  }
  return times;
};

/**
 * Offers the conventions the pass's terms do not match (those not marked in `matched`). Each
 * scores its base times its prior, known from the flags its posting carries, so most are turned
 * away without reading the fact. Once the best k are full, one at the k-th best score (the
 * common case: they all score alike) is settled by when it was asserted, read from a frozen
 * block's table (`blockTimes`) instead of from the fact.
 */
export const offerUnmatchedConventions = (search: Search, matched: Uint8Array): void => {
  const { store, best } = search;
  const { ranking } = search.pass.plan;
  // Every unmatched convention scores at most its base times the largest prior a convention can get.
  const ceiling =
    ranking.conventionBase * search.pass.scale * ranking.priors.convention * maxPriorBound(ranking.priors);
  if (best.full && ceiling * SLACK < best.threshold) return;
  const { scratch } = search.settings;
  const memo = scratch.memo.blockTimes;
  const none: Array<number | undefined> = [];
  if (scratch.quickTotals.length < FLAG_COMBINATIONS) scratch.quickTotals = new Float64Array(FLAG_COMBINATIONS);
  // They depend on the pass: each call works them out again, once per flags it meets.
  const quick = scratch.quickTotals.fill(NaN);
  // Newest documents first: when they are also the most recent facts, the first k take the places.
  const blocks = postingBlocks(store.index.conventions);
  for (let b = blocks.length - 1; b >= 0; b -= 1) {
    const block = blocks[b]!;
    // null until the rank order first needs the block's times.
    let times: Float64Array | undefined | null = null;
    for (let j = block.length - 2; j >= 0; j -= 2) {
      const doc = block[j]!;
      if (matched[doc] === 1) continue;
      const flags = postingFlagsOf(block[j + 1]!);
      if (Number.isNaN(quick[flags]!)) quick[flags] = search.quickTotal(none, flags, 0, 0, false);
      const total = quick[flags]!;
      if (!search.mayEnter(total)) continue;
      let fact: SessionFact | undefined;
      // Without an issue's duplicate prior the quick total is the exact score, so the rank order decides now.
      if (best.full && !hasIssueFlag(flags)) {
        if (times === null) times = blockTimes(store, block, memo);
        const validFrom =
          times === undefined ? ((fact = getAt(store.index.docs, doc))?.validFrom ?? NaN) : times[j / 2]!;
        if (best.refuses(total, validFrom)) continue;
      }
      fact ??= getAt(store.index.docs, doc);
      if (fact !== undefined) search.offer(fact, flags, none);
    }
  }
};
