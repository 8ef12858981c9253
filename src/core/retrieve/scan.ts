/**
 * The exact top k of a query's passes by scanning: every fact a pass reaches (a special fact, or
 * one a posting of its terms names) gets its term sum in full, and with what it gets besides its
 * terms and the largest prior its flags allow, a bound; those whose bound can still reach the
 * k-th best are scored exactly, the highest bound first, and the first bound that cannot ends it.
 *
 * MaxScore (topk.ts) pays for its bounds with what they let it skip. In a store of a few thousand
 * facts a query skips little: the facts of the context and of the recent tasks are most of the
 * store, and they are reached directly, not through the lists. There, reading every list in full
 * costs less than keeping the bounds that would skip part of them (see docs/performance.md).
 * Both give exactly the first k of `explainRetrieval`'s ranking: a candidate's score is always
 * `combineScore`'s, from its term sums, which the scan adds in `combineScore`'s order (the query's
 * own terms apart from the feedback words, each in the pass's term order), so it need not look its
 * stored weights up again; its bound (within `SLACK`, as it adds the rest in another order) orders
 * and stops the exact scoring.
 */
import { getAt } from '../../persistent/persistentVector.js';
import { hasWantedTag } from '../fact.js';
import { listChunks } from '../search/postingViews.js';
import { postingFlagsOf, postingWeightOf } from '../search/postings.js';
import { postingWeight } from '../search/weights.js';
import type { FactStore } from '../store/state.js';
import { clearMatched, clearOwnTask, markMatched, markOwnTask } from './accumulate.js';
import { Search } from './best.js';
import { offerUnmatchedConventions } from './conventions.js';
import { firstTier, nextTier, popCandidate } from './heap.js';
import { isConventionFlags } from './rank.js';
import type { Pass, Passes, Scored, Settings } from './score.js';
import { type DocumentScratch, growRetrievalScratch, type RetrievalScratch } from './scratch.js';
import { clearSpecial, specialFactsOf } from './special.js';

/**
 * Scans one pass: every posting of the pass's terms from `read` on, in term order, then the
 * bounds of the `count` special facts (read where the special list describes them) and of the
 * facts only a posting reached, then the exact scoring of each fact whose bound can reach the
 * k-th best. It sets each document's sums and co-change before it reads them (MaxScore leaves
 * its own behind, and one scratch may serve both ways in turn), but for what the pass before it
 * left: the sums of its first `read` terms (the query's own) in the first `described`
 * special facts and in the facts only a posting reached (`DocumentScratch.reachedCount`, kept
 * in the order they were reached), as the two passes share the query's terms. The documents it
 * reached stay marked in `state` for the next pass (`scanPasses` unmarks them); the conventions
 * a term or the special list reached stay marked in `matched`, for the unmatched conventions.
 *
 * Its three steps are functions of their own, each with one hot loop: a function that holds
 * several is compiled on the stack at its first hot loop, with no feedback yet from the loops
 * after it, and that code then left the optimized tier at those loops on call after call.
 */
const scanPass = (search: Search, count: number, described: number, read: number): void => {
  const { scratch } = search.settings;
  const { docs, special } = scratch;
  const { state, sum, feedback, coChange } = docs;
  const { mark } = special;
  for (let i = 0; i < count; i += 1) {
    const doc = special.docs[i]!;
    // A fact the pass before reached only through a posting keeps its sum: it leaves `reached` below.
    if (i >= described && state[doc] === 0) {
      sum[doc] = 0;
      feedback[doc] = 0;
    }
    coChange[doc] = 0;
  }
  if (count > described) {
    const reached = docs.openFacts;
    let kept = 0;
    for (let r = 0; r < docs.reachedCount; r += 1) {
      const doc = reached[r]!;
      if (mark[doc] === 0) reached[kept++] = doc;
      else state[doc] = 0;
    }
    docs.reachedCount = kept;
  }
  for (let i = 0; i < special.coChangedCount; i += 1) coChange[special.coChangedDocs[i]!] = special.coChangedScores[i]!;
  readPostings(search.pass, scratch, read);
  walkCandidates(search, count, offerCandidates(search, count));
};

/**
 * Adds every posting of the pass's terms from `read` on into the sums (the query's own terms
 * into `sum`, feedback words into `feedback`), opening each fact no special way and no term
 * before reached (counted in `DocumentScratch.reachedCount` whatever throws, so that they are
 * unmarked).
 */
const readPostings = (pass: Pass, scratch: RetrievalScratch, read: number): void => {
  const { docs, special } = scratch;
  const { state, flags, sum, feedback } = docs;
  const { mark } = special;
  const reached = docs.openFacts;
  const { views } = scratch.memo;
  let reachedCount = docs.reachedCount;
  try {
    for (let at = read; at < pass.terms.length; at += 1) {
      const term = pass.terms[at]!;
      const factor = term.multiplier * term.idf;
      const into = at < pass.queryTerms ? sum : feedback;
      for (const conventions of [false, true]) {
        const postings = conventions ? term.conventions : term.postings;
        if (postings === undefined) continue;
        for (const list of listChunks(postings, views))
          for (let j = 0; j < list.length; j += 2) {
            const doc = list[j]!;
            const value = list[j + 1]!;
            if (state[doc] === 0 && mark[doc] === 0) {
              state[doc] = 1;
              flags[doc] = postingFlagsOf(value);
              sum[doc] = 0;
              feedback[doc] = 0;
              reached[reachedCount++] = doc;
            }
            if (conventions) markMatched(docs, doc);
            into[doc] = into[doc]! + factor * postingWeight(postingWeightOf(value));
          }
      }
    }
  } finally {
    docs.reachedCount = reachedCount;
  }
};

/**
 * Puts every eligible fact with a bound that may enter into the candidate scratch, unordered: a
 * special fact by its place in the special list, another by `count` plus its place in the facts
 * only a posting reached. The bound has the parts of `combineScore`, added in another order
 * (`Search.mayEnter` allows for it), with the largest prior the fact's flags allow. Returns how
 * many it put.
 */
const offerCandidates = (search: Search, count: number): number => {
  const { pass, settings, store, upper } = search;
  const { docs, special } = settings.scratch;
  const { flags, sum, feedback, coChange, own } = docs;
  const reached = docs.openFacts;
  const reachedCount = docs.reachedCount;
  const { ranking } = pass.plan;
  const base = ranking.conventionBase * pass.scale;
  const boost = ranking.exactFileBoost;
  const anyTag = settings.wanted.size === 0;
  const lastPass = !search.firstPass;
  const withRecency = pass.recency.size > 0;
  const heap = settings.scratch.candidates;
  if (heap.docs.length < count + reachedCount) {
    heap.docs = new Int32Array(Math.max(count + reachedCount, 2 * heap.docs.length));
    heap.bounds = new Float64Array(heap.docs.length);
  }
  let candidates = 0;
  const offerBound = (id: number, doc: number, f: number, context: number, extra: number, named: boolean): void => {
    if (own[doc] === 1) return;
    const match = sum[doc]! + feedback[doc]! + context;
    const convention = isConventionFlags(f);
    const bound =
      (match + extra + (match === 0 && convention ? base : 0)) * upper[f]! + (match > 0 && named ? boost : 0);
    // Scores are never negative: 0 is the exact score, and only a convention of the last pass enters with it.
    if (!(bound > 0 || (convention && lastPass))) return;
    if (!anyTag) {
      const fact = getAt(store.index.docs, doc);
      if (fact === undefined || !hasWantedTag(fact, settings.wanted)) return;
    }
    heap.docs[candidates] = id;
    heap.bounds[candidates] = bound;
    candidates += 1;
  };
  for (let i = 0; i < count; i += 1) {
    const doc = special.docs[i]!;
    const f = special.flags[i]!;
    if (isConventionFlags(f)) markMatched(docs, doc);
    const recency = withRecency ? special.recencies[i]! : 0;
    offerBound(i, doc, f, special.contexts[i]!, recency + coChange[doc]!, special.named[i] === 1);
  }
  for (let r = 0; r < reachedCount; r += 1) {
    const doc = reached[r]!;
    offerBound(count + r, doc, flags[doc]!, 0, 0, false);
  }
  return candidates;
};

/**
 * Scores exactly the `candidates` of the candidate scratch, highest bound first (in tiers: see
 * `firstTier`), until a bound can no longer reach the k-th best.
 */
const walkCandidates = (search: Search, count: number, candidates: number): void => {
  const { pass, settings, store } = search;
  const { docs, special, candidates: heap } = settings.scratch;
  const { flags, sum, feedback, coChange } = docs;
  const reached = docs.openFacts;
  const withRecency = pass.recency.size > 0;
  const tier = firstTier(heap, candidates);
  let waiting = candidates - tier;
  for (let left = tier; left > 0 || waiting > 0; left -= 1) {
    if (left === 0) {
      left = nextTier(heap, tier, waiting);
      waiting = 0;
    }
    const id = heap.docs[0]!;
    const bound = heap.bounds[0]!;
    popCandidate(heap, left);
    if (!search.mayEnter(bound)) break;
    const isSpecial = id < count;
    const doc = isSpecial ? special.docs[id]! : reached[id - count]!;
    const fact = getAt(store.index.docs, doc);
    if (fact === undefined) continue;
    const f = isSpecial ? special.flags[id]! : flags[doc]!;
    const extras = isSpecial
      ? {
          context: special.contexts[id]!,
          recency: withRecency ? special.recencies[id]! : 0,
          coChange: coChange[doc]!,
        }
      : NO_EXTRAS;
    search.offerSums(fact, f, sum[doc]!, feedback[doc]!, extras);
  }
};

/**
 * True when the pass's terms begin with the other pass's (the query's own, as the same planned
 * terms), and both count the same of them as the query's own (they are summed apart).
 */
const startsWithTerms = (pass: Pass, other: Pass): boolean =>
  other.queryTerms === pass.queryTerms &&
  other.terms.length <= pass.terms.length &&
  other.terms.every((term, at) => pass.terms[at] === term);

/** Unmarks the documents the passes reached only through a posting. */
const clearReached = (docs: DocumentScratch): void => {
  for (let r = 0; r < docs.reachedCount; r += 1) docs.state[docs.openFacts[r]!] = 0;
  docs.reachedCount = 0;
};

/** What a fact no special way reached gets besides its terms. */
const NO_EXTRAS = Object.freeze({ context: 0, recency: 0, coChange: 0 });

/**
 * The last pass's best `settings.maxFacts` candidates, in rank order, by scanning each pass
 * (see the module's comment): exactly what `rankPasses` gives.
 */
export const scanPasses = (
  store: FactStore,
  settings: Settings,
  { first, last, recency, recentRecords }: Passes,
): Scored[] => {
  const documents = store.index.nextDoc;
  if (!(Math.min(settings.maxFacts, documents) > 0)) return [];
  const { scratch } = settings;
  growRetrievalScratch(scratch, documents);
  const { docs } = scratch;
  const specialFacts = specialFactsOf(scratch, store, recency, recentRecords);
  try {
    markOwnTask(docs, store, settings.taskId);
    let firstBest: ReadonlyArray<Scored> = [];
    let described = 0;
    if (first !== undefined) {
      const search = new Search(store, settings, first, true);
      described = specialFacts(first);
      scanPass(search, described, 0, 0);
      firstBest = search.best.list;
    }
    const search = new Search(store, settings, last(firstBest), false);
    const read = first !== undefined && startsWithTerms(search.pass, first) ? first.terms.length : 0;
    if (read === 0) clearReached(docs);
    scanPass(search, specialFacts(search.pass), read === 0 ? 0 : described, read);
    // The last pass also takes the conventions no term matched (at their base, or at 0).
    offerUnmatchedConventions(search, docs.matched);
    return search.best.list;
  } finally {
    clearReached(docs);
    clearMatched(docs);
    clearSpecial(scratch.special);
    clearOwnTask(docs);
  }
};
