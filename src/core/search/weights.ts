/**
 * The BM25 weights of the index: what a posting stores for a term of a fact or of a task's
 * context. Facts are short triples of similar length, so there is no length normalization
 * (BM25 with b = 0); term frequencies are saturated with k1.
 */
import type { SessionFact } from '../fact.js';
import { memoize } from '../../base/memo.js';
import { textTerms } from './terms.js';

/**
 * Field weights of a fact's terms. The relation is not indexed: a dozen relations name the
 * kinds of facts, their terms would be the longest posting lists of all, and kinds are ranked
 * by explicit priors instead.
 */
export const FIELD_WEIGHTS = { subject: 3, object: 1 } as const;
/** BM25 term-frequency saturation. */
export const BM25_K1 = 1.2;

const saturate = (weightedFrequency: number): number =>
  (weightedFrequency * (BM25_K1 + 1)) / (weightedFrequency + BM25_K1);

const addWeighted = (weights: Map<string, number>, text: string, weight: number): void => {
  const terms = textTerms(text);
  for (let i = 0; i < terms.length; i += 1) weights.set(terms[i]!, (weights.get(terms[i]!) ?? 0) + weight);
};

const saturateAll = (weights: Map<string, number>): Map<string, number> => {
  weights.forEach((frequency, term) => weights.set(term, saturate(frequency)));
  return weights;
};

/** A fact's terms with their stored weights (see `quantize`): term, weight, term, weight, ... */
export type StoredTermWeights = ReadonlyArray<string | number>;

/**
 * The stored BM25 weight of each term of a fact (subject weighted 3, object 1), in the order
 * the terms first occur, memoized for the most recently read facts: facts are immutable values,
 * and the index reads a fact's weights when it enters and again when it leaves (in a bounded
 * store, soon after). Bounded, not weak: a weak table would keep the weights alive beside every
 * stored fact. Flat, the weights small integers: a map per fact held several times the memory
 * (see docs/performance.md), which the engine copied out of its young generation for every
 * fact indexed.
 */
export const factTermWeights = memoize(4_096, (fact: Pick<SessionFact, 'subject' | 'object'>): StoredTermWeights => {
  const frequencies = new Map<string, number>();
  addWeighted(frequencies, fact.subject, FIELD_WEIGHTS.subject);
  addWeighted(frequencies, fact.object, FIELD_WEIGHTS.object);
  const stored: Array<string | number> = [];
  frequencies.forEach((frequency, term) => stored.push(term, quantize(saturate(frequency))));
  return Object.freeze(stored);
});

/** The stored weight of `term` in a fact's weights, if the fact holds it. */
export const storedTermWeight = (weights: StoredTermWeights, term: string): number | undefined => {
  for (let i = 0; i < weights.length; i += 2) if (weights[i] === term) return weights[i + 1] as number;
  return undefined;
};

/**
 * The BM25 weight of each term of a task's context text: `text`, the `pieces` it joins with line
 * breaks (its prompt and summaries). Memoized by text: a task's text is read when it starts and
 * stops lending it. Made from each piece's terms, which are memoized apart (a prompt and a
 * summary are read again each time the task's context changes); no term spans a line break,
 * so they are the joined text's terms.
 */
export const contextTermWeights = memoize(
  4_096,
  (text: string, pieces: ReadonlyArray<string> = [text]): ReadonlyMap<string, number> => {
    const weights = new Map<string, number>();
    for (const piece of pieces) addWeighted(weights, piece, 1);
    return saturateAll(weights);
  },
);

/**
 * Posting weights are stored as integers (thousandths): small integers are unboxed in the
 * engine, so a posting costs no separate number object.
 */
export const quantize = (weight: number): number => Math.max(1, Math.round(weight * 1000));
/** A stored posting weight as a BM25 term weight. */
export const postingWeight = (stored: number): number => stored / 1000;

/** The inverse document frequency of a term found in `frequency` of `documents`. */
export const idf = (documents: number, frequency: number): number =>
  Math.log(1 + (documents - frequency + 0.5) / (frequency + 0.5));
