/**
 * The accumulators of a query's top-k search (see topk.ts): one population's lists read term
 * at a time by MaxScore, its accumulators pruned by their bounds, and the ones that can still
 * reach the k-th best scored exactly. The accumulators live in the scratch's per-document
 * arrays (`DocumentScratch`), reset where a query wrote them.
 */
import * as PMap from '../../persistent/persistentMap.js';
import { getAt } from '../../persistent/persistentVector.js';
import { hasWantedTag } from '../fact.js';
import { listChunks, PostingsCursor } from '../search/postingViews.js';
import { postingFlagsOf, postingsSize, postingWeightOf } from '../search/postings.js';
import { entryDoc } from '../search/searchIndex.js';
import type { FactStore } from '../store/state.js';
import { listsOf, SLACK } from './bounds.js';
import { popCandidate, pushCandidate } from './heap.js';
import type { Phase, Population } from './phase.js';
import { isConventionFlags, maxPriorBound } from './rank.js';
import { MASKED_TERMS, type Pass, storedWeights, termLists } from './score.js';
import type { DocumentScratch, RetrievalScratch } from './scratch.js';

/** An accumulator is open. */
const OPEN = 1;
/** Found directly (context, a named file, a recent task, a co-changed file): never dropped. */
const SPECIAL = 2;
/** The query names the fact's file. */
const NAMED = 4;
/** Whether the fact passes the filters (tags, own task) is known, and whether it does. */
const CHECKED = 8;
const ELIGIBLE = 16;
/**
 * The sum lacks the query's own terms: the query phase dropped the fact (or never opened it),
 * so they add less than that phase's floor (`Phase.partialCap`, priors included).
 */
const PARTIAL = 32;

/**
 * Past this many postings in a query's own lists, the term bits (`DocumentScratch.terms`) cost
 * more than the lookups they spare: each list read in full is read a second time to set them,
 * and exact scoring looks up a few terms for about a hundred candidates (see docs/performance.md).
 * A fact a list's admission floor turns away is never opened by a later list of the phase (lists
 * come by descending bound, so what it could still get there is less than it could before), so
 * the bits are complete for every open document.
 */
export const TRACKED_POSTINGS = 50_000;

/** Marks a convention as given an accumulator by the query (the rest are walked apart, at their base). */
export const markMatched = (docs: DocumentScratch, doc: number): void => {
  if (docs.matched[doc] === 1) return;
  docs.matched[doc] = 1;
  docs.marked[docs.markedCount++] = doc;
};

/** Unmarks the conventions a query matched. */
export const clearMatched = (docs: DocumentScratch): void => {
  for (let i = 0; i < docs.markedCount; i += 1) docs.matched[docs.marked[i]!] = 0;
  docs.markedCount = 0;
};

/** Marks the documents of the query's own task's valid facts, which no answer holds. */
export const markOwnTask = (docs: DocumentScratch, store: FactStore, taskId: string): void => {
  const task = PMap.get(store.index.tasks, taskId);
  if (task !== undefined)
    PMap.forEach(task.facts, (entry) => {
      const doc = entryDoc(entry);
      docs.own[doc] = 1;
      docs.owned[docs.ownedCount++] = doc;
    });
};

/** Unmarks the query's own task's documents. */
export const clearOwnTask = (docs: DocumentScratch): void => {
  for (let i = 0; i < docs.ownedCount; i += 1) docs.own[docs.owned[i]!] = 0;
  docs.ownedCount = 0;
};

/** The bit of `DocumentScratch.terms` for the pass's term at `at` (none past MASKED_TERMS: then nothing reads the bits). */
const termBit = (at: number): number => (at < MASKED_TERMS ? 1 << at : 0);

/**
 * Reads one population's lists of a phase, term at a time, by MaxScore (see the top of this
 * file), then scores exactly, for the phase's search, every accumulator whose bound can still
 * reach the k-th best. Accumulators the phase leaves open keep their sums for the next phase.
 */
export const accumulate = (phase: Phase, population: Population): void => {
  const { search, pool, partialCap } = phase;
  const { pass, store, settings } = search;
  const { scratch } = settings;
  const { conventions } = population;
  const { ranking } = pass.plan;
  const lists = listsOf(pass, phase.from, pass.terms.length, conventions);
  // above[i]: what lists i, i+1, ... can add at most (before priors).
  const above: number[] = new Array<number>(lists.length + 1).fill(0);
  for (let i = lists.length - 1; i >= 0; i -= 1) above[i] = above[i + 1]! + lists[i]!.bound;

  const { docs } = store.index;
  // Locals, not the scratch's fields, in the loops below.
  const {
    state,
    flags: flagsOf,
    sum: sums,
    context: contexts,
    recency: recencies,
    coChange: coChanges,
    terms,
    matched: matchedMark,
    own,
  } = scratch.docs;
  const { views } = scratch.memo;
  const tracking = population.tracksTerms;
  // Without a bit for every term, exact scoring looks every term up.
  const masked = tracking && pass.terms.length <= MASKED_TERMS;
  const { open } = population;
  const { lower, upper } = search;
  // The largest prior a fact of the population can get (a convention's own prior included).
  const topPrior = maxPriorBound(ranking.priors) * (conventions ? Math.max(1, ranking.priors.convention) : 1);
  const base = conventions ? ranking.conventionBase * pass.scale : 0;
  const boost = ranking.exactFileBoost;
  let used = population.used;

  const anyTag = settings.wanted.size === 0;
  /**
   * True when the fact of `doc` passes the filters (tags, own task): without tags, by the marks
   * of the query's own task's documents, without reading the fact (at 100,000 facts, reading it
   * is a cache miss for every fact a list lifts into the pool); with tags, checked once, when it
   * matters.
   */
  const eligible = (doc: number): boolean => {
    if (anyTag) return own[doc] === 0;
    const known = state[doc]!;
    if ((known & CHECKED) === 0) {
      const fact = getAt(docs, doc);
      const passes = fact !== undefined && hasWantedTag(fact, settings.wanted) && own[doc] === 0;
      state[doc] = known | CHECKED | (passes ? ELIGIBLE : 0);
      return passes;
    }
    return (known & ELIGIBLE) !== 0;
  };

  /** A score the fact of `doc` is sure to reach (its base and the boost aside, unless certain). */
  const lowerBound = (doc: number): number => {
    const st = state[doc]!;
    if ((st & SPECIAL) === 0) return sums[doc]! * lower[flagsOf[doc]!]!;
    const matched = sums[doc]! + contexts[doc]!;
    return (
      (matched + recencies[doc]! + coChanges[doc]!) * lower[flagsOf[doc]!]! +
      ((st & NAMED) !== 0 && matched > 0 ? boost : 0)
    );
  };

  /** The most the fact of `doc` can score once its terms are all read (a convention's base only when nothing may match). */
  const upperBound = (doc: number): number => {
    const st = state[doc]!;
    const special = (st & SPECIAL) !== 0;
    const partial = (st & PARTIAL) !== 0;
    const matched = special ? sums[doc]! + contexts[doc]! : sums[doc]!;
    return (
      (matched + (special ? recencies[doc]! + coChanges[doc]! : 0) + (matched > 0 && !partial ? 0 : base)) *
        upper[flagsOf[doc]!]! +
      ((st & NAMED) !== 0 ? boost : 0) +
      (partial ? partialCap : 0)
    );
  };

  const consider = (doc: number): void => {
    const value = lowerBound(doc);
    if (value > 0 && value >= settings.minScore && value > pool.least && eligible(doc)) pool.offer(doc, value);
  };

  /**
   * Drops the accumulators (special ones aside) among the first `count` that cannot reach `floor`
   * with all that lists `next`... can add; returns how many are left (passed in and out, the
   * count stays a plain local of the hot loops instead of a variable the closure shares).
   */
  const prune = (count: number, floor: number, next: number): number => {
    const rest = above[next]!;
    let kept = 0;
    for (let i = 0; i < count; i += 1) {
      const doc = open[i]!;
      const st = state[doc]!;
      if (
        (st & SPECIAL) === 0 &&
        ((sums[doc]! + rest) * upper[flagsOf[doc]!]! + ((st & PARTIAL) !== 0 ? partialCap : 0)) * SLACK < floor
      )
        state[doc] = 0;
      else open[kept++] = doc;
    }
    return kept;
  };

  /**
   * Adds the query phase's terms to the PARTIAL facts among the first `count` (seeking each in
   * those lists, in document order), so that their bounds are exact again; returns `count`.
   */
  const completePartial = (count: number): number => {
    const partial: number[] = [];
    for (let i = 0; i < count; i += 1) if ((state[open[i]!]! & PARTIAL) !== 0) partial.push(open[i]!);
    if (partial.length === 0) return count;
    partial.sort((a, b) => a - b);
    for (const { at, postings, factor } of listsOf(pass, 0, phase.from, conventions)) {
      const cursor = new PostingsCursor(postings, views);
      const bit = termBit(at);
      for (const doc of partial) {
        cursor.seek(doc);
        if (cursor.doc === Infinity) break;
        if (cursor.doc !== doc) continue;
        sums[doc] = sums[doc]! + (factor / 1000) * postingWeightOf(cursor.value);
        if (tracking) terms[doc] = terms[doc]! | bit;
      }
    }
    for (const doc of partial) {
      state[doc] = state[doc]! & ~PARTIAL;
      consider(doc);
    }
    return count;
  };

  try {
    for (let i = 0; i < used; i += 1) consider(open[i]!);

    let admitting = true;
    /** The open accumulators' documents in order, once no accumulator is opened any more. */
    let sorted: Int32Array | undefined;
    for (let i = 0; i < lists.length; i += 1) {
      const { at, postings, factor } = lists[i]!;
      const bit = termBit(at);
      if (i > 0) {
        const floor = phase.floor();
        if (admitting && (above[i]! * topPrior + partialCap) * SLACK < floor) admitting = false;
        // Once no accumulator opens, each list read lowers what the rest can add: drop those that can no longer make it.
        if (!admitting) {
          const before = used;
          used = prune(used, floor, i);
          if (used !== before) sorted = undefined;
        }
      }
      const scale = factor / 1000;
      // Every posting of a convention is read, to mark it matched (the unmatched are weighed apart).
      if (!admitting && !conventions && used * 8 < postingsSize(postings)) {
        // Few facts to complete: seek each one in the list, in document order.
        if (sorted === undefined) {
          if (scratch.sorted.length < used) scratch.sorted = new Int32Array(Math.max(used, 2 * scratch.sorted.length));
          scratch.sorted.set(open.subarray(0, used));
          sorted = scratch.sorted.subarray(0, used).sort();
        }
        const cursor = new PostingsCursor(postings, views);
        for (const doc of sorted) {
          cursor.seek(doc);
          if (cursor.doc === Infinity) break;
          if (cursor.doc !== doc) continue;
          sums[doc] = sums[doc]! + scale * postingWeightOf(cursor.value);
          if (tracking) terms[doc] = terms[doc]! | bit;
          consider(doc);
        }
        continue;
      }
      // A fact first seen here gets at most its weight here and all the later lists can add:
      // one that cannot reach the k-th best even so is not opened. Should a later list open
      // it, its partial sum is still a lower bound, and the bounds it gets can only turn it
      // away, which it deserves.
      const admitFloor = phase.floor();
      const later = above[i + 1]!;
      const openedBefore = used;
      for (const list of listChunks(postings, views))
        for (let j = 0; j < list.length; j += 2) {
          const doc = list[j]!;
          const st = state[doc]!;
          let sum: number;
          if (st === 0) {
            // After a query phase, a fact's part of its terms is unknown (a convention's only if one matched it).
            const partial = partialCap > 0 && (!conventions || matchedMark[doc] === 1);
            if (conventions) markMatched(scratch.docs, doc);
            if (!admitting) continue;
            const value = list[j + 1]!;
            const flags = postingFlagsOf(value);
            sum = scale * postingWeightOf(value);
            if (((sum + later) * upper[flags]! + partialCap) * SLACK < admitFloor) continue;
            state[doc] = partial ? OPEN | PARTIAL : OPEN;
            flagsOf[doc] = flags;
            open[used++] = doc;
          } else sum = sums[doc]! + scale * postingWeightOf(list[j + 1]!);
          sums[doc] = sum;
          if (sum * lower[flagsOf[doc]!]! > pool.least || (st & SPECIAL) !== 0) consider(doc);
        }
      // The term bits, in a pass of their own over the list, so that the loop above stays as lean
      // without them: the documents this list opened start with none, then every open one holds it.
      if (tracking) {
        for (let o = openedBefore; o < used; o += 1) terms[open[o]!] = 0;
        for (const list of listChunks(postings, views))
          for (let j = 0; j < list.length; j += 2) {
            const doc = list[j]!;
            if (state[doc] !== 0) terms[doc] = terms[doc]! | bit;
          }
      }
    }

    if (phase.partialCap > 0) used = completePartial(prune(used, phase.floor(), lists.length));

    // Every fact whose upper bound can reach the k-th best is scored exactly, the highest bound
    // first (the k-th best rises soonest, and the first bound it turns away ends the walk); the
    // rest are dropped, unless special (a later phase may add to them).
    const floor = phase.floor();
    // Scores are never negative, so a bound of 0 is the exact score, and only a convention of
    // the last pass may enter with it (`filterReason`): the special facts no term or extra
    // reaches (most of the recent tasks' facts in a first pass) are not scored one by one.
    const zeroEnters = conventions && !search.firstPass;
    const heap = scratch.candidates;
    let candidates = 0;
    let kept = 0;
    for (let i = 0; i < used; i += 1) {
      const doc = open[i]!;
      const bound = upperBound(doc);
      if ((bound * SLACK < floor && (state[doc]! & SPECIAL) === 0) || !eligible(doc)) {
        state[doc] = 0;
        continue;
      }
      open[kept++] = doc;
      if (bound * SLACK >= floor && (bound > 0 || zeroEnters) && search.mayEnter(bound))
        candidates = pushCandidate(heap, candidates, doc, bound);
    }
    const lookup = candidates === 0 ? undefined : termLists(pass, conventions, views);
    for (let left = candidates; left > 0; left -= 1) {
      const doc = heap.docs[0]!;
      const bound = heap.bounds[0]!;
      popCandidate(heap, left);
      if (!search.mayEnter(bound)) break;
      const fact = getAt(docs, doc);
      if (fact === undefined) continue;
      const st = state[doc]!;
      const weights = storedWeights(lookup!, doc, scratch.weights, masked ? terms[doc]! : -1);
      const isSpecial = (st & SPECIAL) !== 0;
      const context = isSpecial ? contexts[doc]! : 0;
      const recency = isSpecial ? recencies[doc]! : 0;
      const coChange = isSpecial ? coChanges[doc]! : 0;
      if (search.mayEnter(search.quickTotal(weights, flagsOf[doc]!, context, recency + coChange, (st & NAMED) !== 0)))
        search.offer(fact, flagsOf[doc]!, weights, { context, recency, coChange });
    }
    used = kept;
  } finally {
    population.used = used;
  }
};

/**
 * Gives the special facts of a pass accumulators (or, those a phase kept, their extras of this
 * pass); `partial` after a query phase whose sums the pass reuses without reading its lists.
 */
export const seedSpecial = (
  { docs, special }: RetrievalScratch,
  pass: Pass,
  count: number,
  populations: ReadonlyArray<Population>,
  partial: boolean,
): void => {
  const { recency } = pass;
  for (let i = 0; i < count; i += 1) {
    const flags = special.flags[i]!;
    const population = populations[isConventionFlags(flags) ? 1 : 0]!;
    const doc = special.docs[i]!;
    const st = docs.state[doc]!;
    const kept = (st & OPEN) !== 0;
    // After a query phase, one it did not keep has its query sum unknown (a convention only if a term matched it).
    const unknown = partial && (!population.conventions || docs.matched[doc] === 1);
    docs.state[doc] = (kept ? st : OPEN | (unknown ? PARTIAL : 0)) | SPECIAL | (special.named[i] === 1 ? NAMED : 0);
    if (population.conventions) markMatched(docs, doc);
    if (!kept) {
      docs.flags[doc] = flags;
      docs.sum[doc] = 0;
      docs.terms[doc] = 0;
      population.open[population.used++] = doc;
    }
    docs.context[doc] = special.contexts[i]!;
    docs.recency[doc] = recency.size === 0 ? 0 : special.recencies[i]!;
    docs.coChange[doc] = 0;
  }
  // The co-changed files' facts (none but in the last pass) are special, described by this pass or before.
  for (let i = 0; i < special.coChangedCount; i += 1)
    docs.coChange[special.coChangedDocs[i]!] = special.coChangedScores[i]!;
};

/** Drops every accumulator a query opened. */
export const clearPopulations = ({ state }: DocumentScratch, populations: ReadonlyArray<Population>): void => {
  for (const population of populations) {
    for (let i = 0; i < population.used; i += 1) state[population.open[i]!] = 0;
    population.used = 0;
  }
};
