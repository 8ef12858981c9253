/**
 * The posting list of one term: the documents holding it, in ascending document number, each
 * with a packed value (the term's stored weight in the document, and the document's prior
 * flags). Laid out for dynamic pruning: a short list is one flat array; a long one is a list
 * of blocks of at most BLOCK postings, with the last document and the largest weight of each
 * block, and the largest weight of the whole list, all kept up to date as postings come and
 * go. So a query knows each term's upper bound without reading its postings, and skips blocks
 * by their last document.
 *
 * Plain data (numbers in arrays, JSON-serializable, frozen). Writers run inside a write run
 * (`asOneRun`; the index's reducers do): blocks the run created change in place. Reading whole
 * lists fast is postingViews.ts.
 */
import { fresh, own, type Writable } from '../../persistent/owner.js';
import * as PMap from '../../persistent/persistentMap.js';

/** Postings a block holds at most (a flat list holds at most this many too). */
export const BLOCK = 64;

/** A long list: blocks of [doc, value, doc, value, ...], each block's last doc and largest weight. */
export interface BlockedPostings {
  /** The number of postings. */
  readonly n: number;
  /** The largest weight in the list (the term's upper bound). */
  readonly max: number;
  readonly blocks: ReadonlyArray<ReadonlyArray<number>>;
  readonly lasts: ReadonlyArray<number>;
  readonly maxes: ReadonlyArray<number>;
}

/** A posting list: flat ([doc, value, ...], at most BLOCK postings) or blocked. */
export type Postings = ReadonlyArray<number> | BlockedPostings;

/** Prior flags a posting carries, in its low bits. */
export const FLAG_BITS = 9;
const FLAG_MASK = (1 << FLAG_BITS) - 1;

/** A posting's value: the stored weight (thousandths) and the document's prior flags. */
export const packPosting = (weight: number, flags: number): number => weight * (1 << FLAG_BITS) + flags;
/** The stored weight of a posting value. */
export const postingWeightOf = (value: number): number => Math.floor(value / (1 << FLAG_BITS));
/** The prior flags of a posting value. */
export const postingFlagsOf = (value: number): number => value & FLAG_MASK;

/** True for a flat list (one array of at most BLOCK postings). */
export const isFlat = (postings: Postings): postings is ReadonlyArray<number> => Array.isArray(postings);

/** The empty list. */
export const NO_POSTINGS: Postings = Object.freeze([]);

/** The number of postings. */
export const postingsSize = (postings: Postings): number => (isFlat(postings) ? postings.length / 2 : postings.n);

const flatMax = (flat: ReadonlyArray<number>): number => {
  let max = 0;
  for (let i = 1; i < flat.length; i += 2) max = Math.max(max, postingWeightOf(flat[i]!));
  return max;
};

/** The largest stored weight in the list (0 when empty). */
export const postingsMaxWeight = (postings: Postings): number => (isFlat(postings) ? flatMax(postings) : postings.max);

/** The position of `doc` in a flat run, or of the first larger doc (as a negative number minus one) when absent. */
export const findPosting = (flat: ArrayLike<number>, doc: number): number => {
  let low = 0;
  let high = flat.length / 2 - 1;
  while (low <= high) {
    const mid = (low + high) >> 1;
    const at = flat[2 * mid]!;
    if (at === doc) return 2 * mid;
    if (at < doc) low = mid + 1;
    else high = mid - 1;
  }
  return -(2 * low) - 1;
};

/** The index of the block that holds, or would hold, `doc`. */
const blockFor = (lasts: ReadonlyArray<number>, doc: number): number => {
  let low = 0;
  let high = lasts.length - 1;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (lasts[mid]! < doc) low = mid + 1;
    else high = mid;
  }
  return low;
};

/** `flat` with (doc, value) put in order (the same array, changed, when the run owns it). */
const putFlat = (flat: ReadonlyArray<number>, doc: number, value: number): number[] => {
  // A term's first posting: a new array the run does not register (a WeakSet entry for every
  // new term, which comes with nearly every path and summary, cost more than the copy a second
  // posting then makes, which registers it).
  if (flat.length === 0) return [doc, value];
  // Documents are numbered as they come, so a new posting usually goes last.
  const at = flat[flat.length - 2]! < doc ? -flat.length - 1 : findPosting(flat, doc);
  const list = own(flat) as number[];
  if (at >= 0) list[at + 1] = value;
  else if (-at - 1 === list.length) list.push(doc, value);
  else list.splice(-at - 1, 0, doc, value);
  return list;
};

const largest = (values: ReadonlyArray<number>): number => {
  let max = 0;
  for (const value of values) if (value > max) max = value;
  return max;
};

const blocked = (blocks: number[][]): BlockedPostings => {
  const lasts = fresh(blocks.map((block) => block[block.length - 2]!));
  const maxes = fresh(blocks.map(flatMax));
  return fresh({
    n: blocks.reduce((sum, block) => sum + block.length / 2, 0),
    max: largest(maxes),
    blocks: fresh(blocks),
    lasts,
    maxes,
  });
};

/** The arrays of a list owned by this write run (copied once if not), to change in place. */
const ownArrays = (list: Writable<BlockedPostings>): { blocks: number[][]; lasts: number[]; maxes: number[] } => {
  list.blocks = own(list.blocks);
  list.lasts = own(list.lasts);
  list.maxes = own(list.maxes);
  return { blocks: list.blocks as number[][], lasts: list.lasts as number[], maxes: list.maxes as number[] };
};

/** The list with `doc` holding `value` (added, or its value replaced). */
export const putPosting = (postings: Postings, doc: number, value: number): Postings => {
  if (isFlat(postings)) {
    const flat = putFlat(postings, doc, value);
    if (flat.length <= 2 * BLOCK) return flat;
    const half = Math.floor(flat.length / 4) * 2;
    return blocked([fresh(flat.slice(0, half)), fresh(flat.slice(half))]);
  }
  const list = own(postings) as Writable<BlockedPostings>;
  const i = blockFor(list.lasts, doc);
  const before = postingsSize(list.blocks[i]!);
  // The common case, a new document after every other, appends to the last block or starts one.
  if (doc > list.lasts[i]! && list.blocks[i]!.length >= 2 * BLOCK) {
    const { blocks, lasts, maxes } = ownArrays(list);
    blocks.push(fresh([doc, value]));
    lasts.push(doc);
    maxes.push(postingWeightOf(value));
    list.n += 1;
    list.max = Math.max(list.max, postingWeightOf(value));
    return list;
  }
  const source = list.blocks[i]!;
  const replaced = postingValue(source, doc);
  // The block's bound only needs a pass over it when the posting replaced may have been its largest.
  const blockMax =
    replaced !== undefined && postingWeightOf(replaced) >= list.maxes[i]!
      ? undefined
      : Math.max(list.maxes[i]!, postingWeightOf(value));
  const block = putFlat(source, doc, value);
  const { blocks, lasts, maxes } = ownArrays(list);
  if (block.length > 2 * BLOCK) {
    const half = Math.floor(block.length / 4) * 2;
    const left = fresh(block.slice(0, half));
    const right = fresh(block.slice(half));
    blocks.splice(i, 1, left, right);
    lasts.splice(i, 1, left[left.length - 2]!, right[right.length - 2]!);
    maxes.splice(i, 1, flatMax(left), flatMax(right));
  } else {
    blocks[i] = block;
    lasts[i] = block[block.length - 2]!;
    maxes[i] = blockMax ?? flatMax(block);
  }
  list.n += postingsSize(block) - before;
  // A new posting can only raise the bound; a replaced one may lower it.
  list.max =
    replaced !== undefined && postingWeightOf(replaced) >= list.max
      ? largest(maxes)
      : Math.max(list.max, postingWeightOf(value));
  return list;
};

/** The list without `doc` (the same list when it does not hold it). */
export const removePosting = (postings: Postings, doc: number): Postings => {
  if (isFlat(postings)) {
    const at = findPosting(postings, doc);
    if (at < 0) return postings;
    if (postings.length === 2) return NO_POSTINGS;
    const list = own(postings) as number[];
    list.splice(at, 2);
    return list;
  }
  const i = blockFor(postings.lasts, doc);
  const source = postings.blocks[i];
  if (source === undefined) return postings;
  const at = findPosting(source, doc);
  if (at < 0) return postings;
  const list = own(postings) as Writable<BlockedPostings>;
  const { blocks, lasts, maxes } = ownArrays(list);
  const removed = postingWeightOf(source[at + 1]!);
  if (source.length === 2) {
    blocks.splice(i, 1);
    lasts.splice(i, 1);
    maxes.splice(i, 1);
  } else {
    const block = own(source) as number[];
    block.splice(at, 2);
    blocks[i] = block;
    lasts[i] = block[block.length - 2]!;
    if (removed >= maxes[i]!) maxes[i] = flatMax(block);
  }
  list.n -= 1;
  if (removed >= list.max) list.max = largest(maxes);
  // A list that has shrunk to half a block goes back to one flat array.
  return list.n <= BLOCK / 2 ? fresh(blocks.flat()) : list;
};

/** The packed value of `doc` in the list, or undefined when it does not hold it. */
export const postingValue = (postings: Postings, doc: number): number | undefined => {
  const block = isFlat(postings) ? postings : postings.blocks[blockFor(postings.lasts, doc)];
  if (block === undefined) return undefined;
  const at = findPosting(block, doc);
  return at < 0 ? undefined : block[at + 1];
};

/** The list's runs of [doc, value, doc, value, ...], in document order (for loops that read every posting). */
export const postingBlocks = (postings: Postings): ReadonlyArray<ReadonlyArray<number>> =>
  isFlat(postings) ? [postings] : postings.blocks;

/** Calls `visit` for every posting, in document order. */
export const forEachPosting = (postings: Postings, visit: (doc: number, value: number) => void): void => {
  const blocks = isFlat(postings) ? [postings] : postings.blocks;
  for (const block of blocks) for (let i = 0; i < block.length; i += 2) visit(block[i]!, block[i + 1]!);
};

/** The term map with `doc` posted under `key` with `value` (a list the run owns changes in place). */
export const postIn = (
  map: PMap.PersistentMap<Postings>,
  key: string,
  doc: number,
  value: number,
): PMap.PersistentMap<Postings> => {
  const existing = PMap.get(map, key);
  const postings = putPosting(existing ?? NO_POSTINGS, doc, value);
  // A list the run owns was changed in place: the map already holds it.
  return postings === existing ? map : PMap.set(map, key, postings);
};

/** The term map without `doc` under `key` (a list left empty leaves the map). */
export const unpostIn = (map: PMap.PersistentMap<Postings>, key: string, doc: number): PMap.PersistentMap<Postings> => {
  const existing = PMap.get(map, key);
  if (existing === undefined) return map;
  const postings = removePosting(existing, doc);
  if (postings === existing) return map;
  return postingsSize(postings) === 0 ? PMap.remove(map, key) : PMap.set(map, key, postings);
};
