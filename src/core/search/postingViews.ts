/**
 * Reading posting lists fast, for queries (not state). A frozen list's numbers are read slower
 * than a typed array's: a frozen list never changes (its blocks are frozen with
 * it), so it is read through a typed copy kept, weakly, with the list (one lookup per list
 * read, not one per block). A list a write run still owns (a replay reads the state between
 * writes) may change in place, and reads at full speed: a flat one is read as it is, a blocked
 * one through a copy into a scratch array, valid until the next such read (`PostingsCursor`
 * reads one list at a time; the loops that read whole lists read a blocked one's blocks, see
 * `listChunks`). Documents and packed values are integers well inside 32 bits.
 *
 * The kept copies and the scratch are an explicit object (`ListViews`), which the query that
 * reads the lists holds (see `RetrievalScratch`).
 */
import { BLOCK, findPosting, isFlat, postingBlocks, type Postings } from './postings.js';

/** What reading lists keeps between queries: the typed copies of frozen lists, and the scratch for owned ones. */
export interface ListViews {
  /** Frozen list -> its postings as one typed array. */
  readonly kept: WeakMap<Postings, Int32Array>;
  /** The copy of the last blocked list read that a write run still owns. */
  scratch: Int32Array;
}

/** Empty views. */
export const createListViews = (): ListViews => ({ kept: new WeakMap(), scratch: new Int32Array(4 * BLOCK) });

/** A whole list's postings as one array [doc, value, doc, value, ...], for the loops that read lists (see the module's comment). */
export const listView = (postings: Postings, views: ListViews): ArrayLike<number> => {
  const kept = views.kept.get(postings);
  if (kept !== undefined) return kept;
  const frozen = Object.isFrozen(postings);
  if (isFlat(postings)) {
    if (!frozen) return postings;
    const view = new Int32Array(postings);
    views.kept.set(postings, view);
    return view;
  }
  if (!frozen && views.scratch.length < 2 * postings.n)
    views.scratch = new Int32Array(Math.max(4 * postings.n, 2 * views.scratch.length));
  const view = frozen ? new Int32Array(2 * postings.n) : views.scratch.subarray(0, 2 * postings.n);
  let at = 0;
  for (const block of postings.blocks) {
    for (let i = 0; i < block.length; i += 1) view[at + i] = block[i]!;
    at += block.length;
  }
  if (frozen) views.kept.set(postings, view);
  return view;
};

/**
 * A whole list's postings as runs of [doc, value, doc, value, ...], in document order, for the
 * loops that read every posting of a list: a frozen list as its kept typed view (`listView`),
 * one a write run still owns (a replay reads the state between writes) as its own blocks,
 * read where they are instead of copied.
 */
export const listChunks = (postings: Postings, views: ListViews): ReadonlyArray<ArrayLike<number>> =>
  Object.isFrozen(postings) ? [listView(postings, views)] : postingBlocks(postings);

/** The view `listView` keeps for a frozen list it has read, if any. */
export const keptView = (postings: Postings, views: ListViews): ArrayLike<number> | undefined =>
  views.kept.get(postings);

/** The packed value of `doc` in a list's kept view (see `keptView`), or undefined when it does not hold it. */
export const viewValue = (view: ArrayLike<number>, doc: number): number | undefined => {
  const at = findPosting(view, doc);
  return at < 0 ? undefined : view[at + 1];
};

/**
 * A reader of one list in document order, for a query (not state). `doc` is the current
 * document (Infinity past the end) and `value` its packed value. Seeks gallop forward (1, 2,
 * 4, ... postings, then a binary search), so seeking many documents in order costs about one
 * step each when they are spread over the list, and a binary search when they are far apart.
 * It reads through `listView`: while it is in use, no other list a write run owns may be read.
 */
export class PostingsCursor {
  doc = Infinity;
  value = 0;
  /** The position of the current posting's document in `data`. */
  private at = 0;
  private readonly data: ArrayLike<number>;

  constructor(postings: Postings, views: ListViews) {
    this.data = listView(postings, views);
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
