/**
 * The posting list of one term: the documents holding it, in ascending document number, each
 * with a packed value (the term's stored weight in the document, and the document's prior
 * flags). Laid out for dynamic pruning: a short list is one flat array; a long one is a list
 * of blocks of at most BLOCK postings, with the last document and the largest weight of each
 * block, and the largest weight of the whole list, all kept up to date as postings come and
 * go. So a query knows each term's upper bound without reading its postings, and skips blocks
 * by their last document.
 *
 * Plain data (numbers in arrays, JSON-serializable, frozen). Writers run inside a
 * `withMutations` run (the index's reducers do): blocks the run created change in place.
 */
import { fresh, own } from '../../persistent/owner.js';

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

type Writable<T> = { -readonly [K in keyof T]: T[K] };

/** Prior flags a posting carries, in its low bits. */
export const FLAG_BITS = 9;
const FLAG_MASK = (1 << FLAG_BITS) - 1;

/** A posting's value: the stored weight (thousandths) and the document's prior flags. */
export const packPosting = (weight: number, flags: number): number => weight * (1 << FLAG_BITS) + flags;
/** The stored weight of a posting value. */
export const postingWeightOf = (value: number): number => Math.floor(value / (1 << FLAG_BITS));
/** The prior flags of a posting value. */
export const postingFlagsOf = (value: number): number => value & FLAG_MASK;

const isFlat = (postings: Postings): postings is ReadonlyArray<number> => Array.isArray(postings);

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
const search = (flat: ArrayLike<number>, doc: number): number => {
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
  // Documents are numbered as they come, so a new posting usually goes last.
  const at = flat.length === 0 || flat[flat.length - 2]! < doc ? -flat.length - 1 : search(flat, doc);
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

/** The arrays of a list owned by this mutation run (copied once if not), to change in place. */
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
    const at = search(postings, doc);
    if (at < 0) return postings;
    if (postings.length === 2) return NO_POSTINGS;
    const list = own(postings) as number[];
    list.splice(at, 2);
    return list;
  }
  const i = blockFor(postings.lasts, doc);
  const source = postings.blocks[i];
  if (source === undefined) return postings;
  const at = search(source, doc);
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

/**
 * A reader of one list in document order, for a query (not state). `doc` is the current
 * document (Infinity past the end) and `value` its packed value. Seeks gallop forward (1, 2,
 * 4, ... postings, then a binary search), so seeking many documents in order costs about one
 * step each when they are spread over the list, and a binary search when they are far apart.
 * It reads through `listView`: while it is in use, no other list a mutation run owns may be read.
 */
export class PostingsCursor {
  doc = Infinity;
  value = 0;
  /** The position of the current posting's document in `data`. */
  private at = 0;
  private readonly data: ArrayLike<number>;

  constructor(postings: Postings) {
    this.data = listView(postings);
    this.load();
  }

  private load(): void {
    const { data, at } = this;
    if (at >= data.length) {
      this.doc = Infinity;
      return;
    }
    this.doc = data[at]!;
    this.value = data[at + 1]!;
  }

  /** Moves to the first posting whose document is `target` or later (never backwards). */
  seek(target: number): void {
    if (this.doc >= target) return;
    const { data } = this;
    // Postings are (doc, value) pairs: gallop over pair indices.
    let low = this.at / 2 + 1;
    let step = 1;
    let high = low;
    const end = data.length / 2;
    while (high < end && data[2 * high]! < target) {
      low = high + 1;
      high += step;
      step *= 2;
    }
    if (high > end) high = end;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (data[2 * mid]! < target) low = mid + 1;
      else high = mid;
    }
    this.at = 2 * low;
    this.load();
  }
}

/** The packed value of `doc` in the list, or undefined when it does not hold it. */
export const postingValue = (postings: Postings, doc: number): number | undefined => {
  const block = isFlat(postings) ? postings : postings.blocks[blockFor(postings.lasts, doc)];
  if (block === undefined) return undefined;
  const at = search(block, doc);
  return at < 0 ? undefined : block[at + 1];
};

/** The list's runs of [doc, value, doc, value, ...], in document order (for loops that read every posting). */
export const postingBlocks = (postings: Postings): ReadonlyArray<ReadonlyArray<number>> =>
  isFlat(postings) ? [postings] : postings.blocks;

/**
 * A whole list's postings as one array [doc, value, doc, value, ...], for the loops that read
 * lists. A frozen list's numbers are read several times slower than a typed array's: a frozen
 * list never changes (its blocks are frozen with it), so it is read through a typed copy kept,
 * weakly, with the list (one lookup per list read, not one per block). A list a mutation run
 * still owns (a replay reads the state between writes) may change in place, and reads at full
 * speed: a flat one is read as it is, a blocked one through a copy into a scratch array, valid
 * until the next such read (`PostingsCursor` reads one list at a time; the loops that read
 * whole lists read a blocked one's blocks, see `listChunks`). Documents and packed values
 * are integers well inside 32 bits.
 */
const views = new WeakMap<Postings, Int32Array>();
let scratch = new Int32Array(4 * BLOCK);

export const listView = (postings: Postings): ArrayLike<number> => {
  const kept = views.get(postings);
  if (kept !== undefined) return kept;
  const frozen = Object.isFrozen(postings);
  if (isFlat(postings)) {
    if (!frozen) return postings;
    const view = new Int32Array(postings);
    views.set(postings, view);
    return view;
  }
  if (!frozen && scratch.length < 2 * postings.n)
    scratch = new Int32Array(Math.max(4 * postings.n, 2 * scratch.length));
  const view = frozen ? new Int32Array(2 * postings.n) : scratch.subarray(0, 2 * postings.n);
  let at = 0;
  for (const block of postings.blocks) {
    for (let i = 0; i < block.length; i += 1) view[at + i] = block[i]!;
    at += block.length;
  }
  if (frozen) views.set(postings, view);
  return view;
};

/**
 * A whole list's postings as runs of [doc, value, doc, value, ...], in document order, for the
 * loops that read every posting of a list: a frozen list as its kept typed view (`listView`),
 * one a mutation run still owns (a replay reads the state between writes) as its own blocks,
 * read where they are instead of copied.
 */
export const listChunks = (postings: Postings): ReadonlyArray<ArrayLike<number>> =>
  Object.isFrozen(postings) ? [listView(postings)] : postingBlocks(postings);

/** The view `listView` keeps for a frozen list it has read, if any. */
export const keptView = (postings: Postings): Int32Array | undefined => views.get(postings);

/** The packed value of `doc` in a list's kept view (see `keptView`), or undefined when it does not hold it. */
export const viewValue = (view: Int32Array, doc: number): number | undefined => {
  const at = search(view, doc);
  return at < 0 ? undefined : view[at + 1];
};

/** Calls `visit` for every posting, in document order. */
export const forEachPosting = (postings: Postings, visit: (doc: number, value: number) => void): void => {
  const blocks = isFlat(postings) ? [postings] : postings.blocks;
  for (const block of blocks) for (let i = 0; i < block.length; i += 2) visit(block[i]!, block[i + 1]!);
};
