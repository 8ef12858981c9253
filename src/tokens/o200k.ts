/**
 * An exact token counter: o200k_base, the BPE encoding of GPT-4o-class models, from the
 * gpt-tokenizer package. It is its own entry point (`session-fact-tracker/o200k`) because its
 * tables are large: only users who ask for exact budgets load them.
 *
 * gpt-tokenizer merges the byte pairs of a piece (what the encoding's pattern splits text
 * into) by scanning every pair for the lowest rank on each merge: quadratic in the piece. The
 * pattern leaves runs of letters, punctuation and spaces whole, so one long run in a dispatch
 * output (100,000 `!`) took minutes. This counter uses the package's tables, pattern and
 * counting, on an instance of its own whose merge of a long piece keeps the pairs in a heap:
 * the same merges in the same order (lowest rank first, the leftmost of equal ranks), so the
 * same tokens, in O(n log n).
 */
import { BytePairEncodingCore } from 'gpt-tokenizer/BytePairEncodingCore';
import bpeRanksExport from 'gpt-tokenizer/bpeRanks/o200k_base';
import { O200KBase } from 'gpt-tokenizer/encodingParams/o200k_base';
import { refuseArgument } from '../base/describe.js';
import type { TokenCounter } from './estimate.js';

/**
 * The encoding's ranks: the default export of the package's ES module build, and `default` of the
 * exports of its CommonJS build, which the binary's bundle requires (see `scripts/bundle.ts`).
 */
const bpeRanks: typeof bpeRanksExport = Array.isArray(bpeRanksExport)
  ? bpeRanksExport
  : (bpeRanksExport as unknown as { readonly default: typeof bpeRanksExport }).default;

/** The core's merge of one piece and its rank lookup: methods it has at run time, not in its declared types. */
interface MergingCore {
  bytePairMerge(piece: Uint8Array): number[];
  getBpeRankFromBytes(bytes: Uint8Array): number | undefined;
  getBpeRankFromString(text: string): number | undefined;
}

/** A pair that is no token (ranks are below 2^21: packed with a start, they stay exact in a double). */
const NOT_A_TOKEN = 0x7fffffff;

/** Pieces up to this many bytes merge the package's way (faster when short); longer ones through the heap. */
const LONG_PIECE = 256;

/** Candidates are packed as rank * 2^32 + start: one number orders them by rank, then leftmost first. */
const SHIFT = 2 ** 32;

/**
 * A binary min-heap of packed merge candidates, in a typed array sized for every candidate a
 * piece of `length` bytes can offer (one per pair at first, at most two per merge).
 */
class CandidateHeap {
  private readonly keys: Float64Array;
  size = 0;

  constructor(length: number) {
    this.keys = new Float64Array(3 * length + 1);
  }

  push(key: number): void {
    const { keys } = this;
    let i = this.size;
    this.size += 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (keys[parent]! <= key) break;
      keys[i] = keys[parent]!;
      i = parent;
    }
    keys[i] = key;
  }

  /** Removes and returns the least key. */
  pop(): number {
    const { keys } = this;
    const least = keys[0]!;
    this.size -= 1;
    const last = keys[this.size]!;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= this.size) break;
      if (child + 1 < this.size && keys[child + 1]! < keys[child]!) child += 1;
      if (keys[child]! >= last) break;
      keys[i] = keys[child]!;
      i = child;
    }
    keys[i] = last;
    return least;
  }
}

/** The piece as the string it is when it is all ASCII (each byte one character), else undefined. */
const asciiText = (piece: Uint8Array): string | undefined => {
  let text = '';
  // In slices: spreading a whole long piece into one call would pass the engine's argument limit.
  for (let start = 0; start < piece.length; start += 4096) {
    const slice = piece.subarray(start, start + 4096);
    for (let i = 0; i < slice.length; i += 1) if (slice[i]! >= 0x80) return undefined;
    text += String.fromCharCode(...slice);
  }
  return text;
};

/** The rank of the bytes of `piece` from `start` to `end` (a token's), or NOT_A_TOKEN; an ASCII piece is looked up by its text. */
const rankLookup = (core: MergingCore, piece: Uint8Array): ((start: number, end: number) => number) => {
  const text = asciiText(piece);
  return text === undefined
    ? (start, end) => core.getBpeRankFromBytes(piece.subarray(start, end)) ?? NOT_A_TOKEN
    : (start, end) => core.getBpeRankFromString(text.slice(start, end)) ?? NOT_A_TOKEN;
};

/**
 * The tokens of a long piece: its parts are a list over byte offsets (a part is known by where
 * it starts), each adjacent pair a candidate in the heap. Merging a pair changes the candidates
 * of the merged part and of its left neighbour; a part's older candidates are recognized by
 * their rank, which is no longer its pair's (a pair only grows, so its rank never comes back),
 * and skipped. A part is always a token (single bytes are), so each lookup reads a few bytes.
 */
const heapMerge = (core: MergingCore, piece: Uint8Array): number[] => {
  const length = piece.length;
  const next = new Int32Array(length + 1);
  const previous = new Int32Array(length + 1);
  /** The rank of each part's pair with the part after it, as last offered (NOT_A_TOKEN: none). */
  const pairRank = new Int32Array(length + 1).fill(NOT_A_TOKEN);
  for (let i = 0; i <= length; i += 1) {
    next[i] = i + 1;
    previous[i] = i - 1;
  }
  const lookup = rankLookup(core, piece);
  const rankOf = (start: number, end: number): number => (end > length ? NOT_A_TOKEN : lookup(start, end));
  const heap = new CandidateHeap(length);
  const offer = (start: number): void => {
    const rank = rankOf(start, next[next[start]!]!);
    pairRank[start] = rank;
    if (rank !== NOT_A_TOKEN) heap.push(rank * SHIFT + start);
  };
  for (let start = 0; start < length - 1; start += 1) offer(start);
  while (heap.size > 0) {
    const key = heap.pop();
    const start = key % SHIFT;
    if (pairRank[start] !== (key - start) / SHIFT) continue;
    // Merge the part at `start` with the one after it.
    const gone = next[start]!;
    next[start] = next[gone]!;
    previous[next[gone]!] = start;
    pairRank[gone] = NOT_A_TOKEN;
    offer(start);
    const before = previous[start]!;
    if (before >= 0) offer(before);
  }
  const tokens: number[] = [];
  for (let start = 0; start < length; start = next[start]!) tokens.push(rankOf(start, next[start]!));
  return tokens;
};

/** A core of o200k_base whose long pieces merge through the heap. */
const createCore = (): BytePairEncodingCore => {
  const core = new BytePairEncodingCore(O200KBase(bpeRanks));
  const merging = core as unknown as MergingCore;
  const merge = merging.bytePairMerge.bind(core);
  merging.bytePairMerge = (piece) => (piece.length <= LONG_PIECE ? merge(piece) : heapMerge(merging, piece));
  return core;
};

const core = createCore();

// Agent output may quote special tokens such as <|endoftext|>: none is allowed, so they are counted as the text they are.
const NO_SPECIAL_TOKENS = new Set<string>();

/**
 * The number of o200k_base tokens of `text`. A text that is no string (null) is refused with a
 * TypeError naming it, as `estimateTokens` refuses it, rather than failing inside the encoder.
 */
export const countO200kTokens: TokenCounter = (text) => {
  if (typeof text !== 'string') refuseArgument('the text', text, 'a string');
  return core.countNative(text, NO_SPECIAL_TOKENS);
};
