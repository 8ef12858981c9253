/**
 * Reading the small model's answer. Models wrap JSON in prose and code fences and now and
 * then return a bad entry; one bad entry must not cost the user the whole list, so entries
 * are validated one by one and dropped with a warning, while an answer with no usable list at
 * all is an error and leaves the ledger as it was.
 */
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import { exceedsJsonDepth, parseJson } from '../base/json.js';
import { findDuplicateKey } from '../base/jsonKeys.js';
import { openJsonEnd } from '../base/jsonPrefix.js';
import { type Fields, isRecord } from '../base/record.js';
import { clipEndRedacted } from '../base/secrets.js';
import { clipEnd, collapseWhitespace, isBlank, quoteText } from '../base/text.js';
import {
  type CategorizedFact,
  categoryNames,
  DEFAULT_CATEGORIES,
  keepValidFacts,
  NOTES_LIMITS,
  type NotedFact,
} from './model.js';

/** Why an answer holds no usable fact list (`truncated`: it ends inside its list, cut before it was complete). */
export type NotableFactsErrorCode =
  'empty_response' | 'too_large' | 'no_json' | 'invalid_json' | 'truncated' | 'no_fact_list' | 'no_valid_facts';

/** An answer that cannot update the ledger. */
export interface NotableFactsError {
  readonly code: NotableFactsErrorCode;
  readonly message: string;
}

/** A validated fact list, and one warning per entry or fact left out. */
export interface NotableFactsResponse {
  readonly facts: ReadonlyArray<CategorizedFact>;
  readonly warnings: ReadonlyArray<string>;
}

/** Options of `parseNotableFactsResponse` and `parseNotableFactsResponseWithWarnings`. */
export interface ParseNotableFactsOptions {
  /** The accepted category names (default: the five defaults). */
  readonly categories?: ReadonlyArray<string>;
  /** The most facts kept (default: the hard cap, 25); past it the newest stay. */
  readonly maxFacts?: number;
  /** The list the answer updates: past the cap, facts it carries over go before new ones, the least recently told first. */
  readonly previous?: ReadonlyArray<NotedFact>;
}

/** Scans for balanced spans, and JSON parses of spans, before giving up on finding JSON in prose. */
const MAX_SCANS = 64;
const MAX_FRAGMENTS = 64;
/** A fact list answer nests three levels deep; JSON nested deeper than this is not an answer, and is not parsed. */
const MAX_DEPTH = 32;

const FENCE = /```[^\n`]*\r?\n([\s\S]*?)```/dgu;

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

const failure = (code: NotableFactsErrorCode, message: string): NotableFactsError => ({ code, message });

const isOpening = (code: number): boolean => code === OPEN_BRACE || code === OPEN_BRACKET;

/**
 * Scans the JSON value opening at `start`, tracking strings from there, and returns its end
 * (exclusive), or -1 when it never closes or closes with the wrong bracket. Every opening
 * the scan passes outside a string is decided on the way: a scan started there would see
 * exactly what this one sees, so its end is where this scan's depth falls back below it.
 */
const scanFrom = (text: string, start: number, decided: Int32Array, open: Int32Array): number => {
  let depth = 0;
  const fail = (): number => {
    for (let level = 0; level < depth; level += 1) decided[open[level]!] = -1;
    return -1;
  };
  let inString = false;
  for (let i = start; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === BACKSLASH) i += 1;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) inString = true;
    else if (isOpening(code)) open[depth++] = i;
    else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      const opening = open[depth - 1]!;
      if (text.charCodeAt(opening) !== (code === CLOSE_BRACE ? OPEN_BRACE : OPEN_BRACKET)) return fail();
      depth -= 1;
      decided[opening] = i + 1;
      if (depth === 0) return i + 1;
    }
  }
  return fail();
};

/**
 * The balanced spans of `text` that may be JSON, in the order of their opening bracket. An
 * opening inside a string of an earlier scan gets a scan of its own, at most 64 in all, so
 * the time is linear in the text whatever it holds (a text of brackets is a single scan).
 */
const balancedSpans = (text: string): Array<readonly [number, number]> => {
  // One allocation for both (typed: no growth, no garbage per opening).
  const scratch = new Int32Array(2 * text.length);
  /** Per opening: its end, -1 when it never closes, 0 while no scan has decided it. */
  const decided = scratch.subarray(0, text.length);
  /** The open brackets of the running scan, innermost last. */
  const open = scratch.subarray(text.length);
  const spans: Array<readonly [number, number]> = [];
  let scans = 0;
  for (let i = 0; i < text.length; i += 1) {
    if (!isOpening(text.charCodeAt(i))) continue;
    let end = decided[i]!;
    if (end === 0) {
      if (scans === MAX_SCANS) continue;
      scans += 1;
      end = scanFrom(text, i, decided, open);
    }
    if (end > 0) spans.push([i, end]);
  }
  return spans;
};

/**
 * A candidate parsed, or why not: `whole` when it is one value refused as a whole (nested too
 * deep, or giving a key twice), whose parts must not be read on their own.
 */
type Parsed =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly reason: string; readonly whole: boolean };

/**
 * JSON.parse, refusing first what cannot be an answer (building thousands of nested arrays costs
 * far more than reading them), and then an object that gives a key twice: JSON.parse keeps the
 * last (`{"notableFacts": [...], "notableFacts": []}` would clear every fact), where the answer
 * says two things.
 */
const parseAnswerJson = (text: string): Parsed => {
  if (exceedsJsonDepth(text, MAX_DEPTH))
    return { ok: false, reason: `it nests deeper than ${MAX_DEPTH} levels`, whole: true };
  const parsed = parseJson(text);
  if (E.isLeft(parsed)) return { ok: false, reason: collapseWhitespace(parsed.left), whole: false };
  const twice = findDuplicateKey(text);
  return twice === undefined
    ? { ok: true, value: parsed.right }
    : {
        ok: false,
        reason: `it gives the key ${quoteText(twice)} twice in one object`,
        whole: true,
      };
};

/**
 * A fact list found in an answer, ranked: an object with the documented key, then one with
 * `facts`, then a bare array that is the whole answer (or a whole code block), then arrays
 * in prose holding objects, then any other non-empty array. A bracket in prose (`message
 * [1]`, `no changes []`) must never outrank the answer object, and an empty array in prose
 * is no list at all: applying it would delete the user's facts.
 */
interface Found {
  readonly entries: ReadonlyArray<unknown>;
  readonly rank: number;
}

const rankOf = (value: object, whole: boolean): Found | undefined => {
  if (Array.isArray(value)) {
    if (whole) return { entries: value, rank: 2 };
    if (value.some(isRecord)) return { entries: value, rank: 3 };
    return value.length > 0 ? { entries: value, rank: 4 } : undefined;
  }
  const record = value as Fields;
  if (Array.isArray(record['notableFacts'])) return { entries: record['notableFacts'], rank: 0 };
  if (Array.isArray(record['facts'])) return { entries: record['facts'], rank: 1 };
  return undefined;
};

/** The best-ranked list in `root` and the values inside it (document order breaks ties), without recursion. */
const bestListIn = (root: unknown, whole: boolean): Found | undefined => {
  let best: Found | undefined;
  const pending: unknown[] = [root];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value !== 'object' || value === null) continue;
    const found = rankOf(value, whole && value === root);
    if (found !== undefined && (best === undefined || found.rank < best.rank)) {
      best = found;
      if (best.rank === 0) return best;
    }
    const children = Array.isArray(value) ? value : Object.values(value);
    for (let i = children.length - 1; i >= 0; i -= 1) pending.push(children[i]);
  }
  return best;
};

/** A list found where it stands in the answer: from `start` to `end`, in prose or as a whole answer or code block. */
interface Candidate extends Found {
  readonly start: number;
  readonly end: number;
  readonly inProse: boolean;
}

/** The outcome of reading the candidates so far. */
interface Search {
  readonly candidates: Candidate[];
  parsedWithoutList: boolean;
  firstJsonError: string | undefined;
}

/** How a candidate read: it parsed, it was refused as one value (nested too deep, a key given twice), or it is no JSON. */
type Reading = 'parsed' | 'refused' | 'not_json';

/** Parses the text from `start` to `end` into `search`, and says how it read. */
const tryCandidate = (search: Search, text: string, start: number, end: number, whole: boolean): Reading => {
  const candidate = text.slice(start, end).trim();
  const parsed = parseAnswerJson(candidate);
  if (!parsed.ok) {
    if (/^[[{]/u.test(candidate)) search.firstJsonError ??= parsed.reason;
    return parsed.whole ? 'refused' : 'not_json';
  }
  const found = bestListIn(parsed.value, whole);
  if (found === undefined) search.parsedWithoutList = true;
  else search.candidates.push({ ...found, start, end, inProse: !whole });
  return 'parsed';
};

/** A better candidate: a better rank, or the same rank later in the answer (its final answer, not one it quotes). */
const better = (a: Candidate, b: Candidate | undefined): boolean =>
  b === undefined || a.rank < b.rank || (a.rank === b.rank && a.start > b.start);

/**
 * The list the answer gives: the best-ranked candidate, the last one of its rank; but never an
 * empty list found in prose while a non-empty list follows it.
 */
const chosen = (candidates: ReadonlyArray<Candidate>): Candidate | undefined => {
  let best: Candidate | undefined;
  for (const candidate of candidates) if (better(candidate, best)) best = candidate;
  if (best === undefined || best.entries.length > 0 || !best.inProse) return best;
  let after: Candidate | undefined;
  for (const candidate of candidates)
    if (candidate.start > best.start && candidate.entries.length > 0 && better(candidate, after)) after = candidate;
  return after ?? best;
};

/**
 * Where the answer ends inside a JSON value left open after `from`: the opening of the
 * outermost one whose rest reads as JSON cut short, when that rest reads as a fact list (it
 * names `notableFacts` or a `category`); otherwise -1. A model stopped at its token limit leaves
 * exactly this; prose that holds a bracket it never closes (`{ by "category"`) does not, and
 * must not cost the list before it.
 */
const cutListFrom = (text: string, from: number): number => {
  const open: number[] = [];
  let inString = false;
  for (let i = from; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === BACKSLASH) i += 1;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) inString = true;
    else if (isOpening(code)) open.push(i);
    else if ((code === CLOSE_BRACE || code === CLOSE_BRACKET) && open.length > 0) open.pop();
  }
  // An opening inside a value that fails to read fails at the same place (the value never closes,
  // so what it holds is read alike from either), so the next to try is the first past the failure:
  // one pass in all.
  let readTo = 0;
  for (const start of open) {
    if (start < readTo) continue;
    readTo = openJsonEnd(text, start);
    if (readTo === text.length) return /"(?:notableFacts|category)"/u.test(text.slice(start)) ? start : -1;
  }
  return -1;
};

/**
 * The best fact list of the answer; otherwise the most telling error. Candidates, most
 * likely first: fenced blocks, the whole text, then balanced spans in prose (at most 64
 * parsed, none inside a candidate that already parsed, whose values were searched whole, nor
 * inside a span refused whole: nested too deep to parse, or giving a key twice).
 * An answer that ends inside a list after the one chosen was cut: `truncated`, not the stale
 * list before it.
 */
const findEntries = (text: string): E.Either<NotableFactsError, ReadonlyArray<unknown>> => {
  if (text.length > NOTES_LIMITS.responseLength)
    return E.left(
      failure(
        'too_large',
        `the response holds ${text.length} characters, more than the ${NOTES_LIMITS.responseLength} an answer may have`,
      ),
    );
  if (isBlank(text)) return E.left(failure('empty_response', 'the response is empty'));
  const search: Search = { candidates: [], parsedWithoutList: false, firstJsonError: undefined };
  /** Regions whose JSON parsed, sorted by start: spans inside them were searched already. */
  const covered: Array<readonly [number, number]> = [];
  for (const match of text.matchAll(FENCE)) {
    const [start, end] = match.indices?.[1] ?? [0, 0];
    if (tryCandidate(search, text, start, end, true) === 'parsed') covered.push([start, end]);
  }
  if (tryCandidate(search, text, 0, text.length, true) === 'parsed') covered.unshift([0, text.length]);
  covered.sort((a, b) => a[0] - b[0]);
  let coverEnd = 0;
  let next = 0;
  let fragments = 0;
  for (const [start, end] of balancedSpans(text)) {
    while (next < covered.length && covered[next]![0] <= start) coverEnd = Math.max(coverEnd, covered[next++]![1]);
    if (end <= coverEnd) continue;
    if (fragments === MAX_FRAGMENTS) break;
    fragments += 1;
    // A span refused as one value (too deep to parse, a key given twice) is not prose: the spans
    // inside it are its parts (an entry's nested field, one of the two lists of a key given
    // twice), and read apart one would pass for the answer's list.
    if (tryCandidate(search, text, start, end, false) !== 'not_json') coverEnd = end;
  }
  const best = chosen(search.candidates);
  if (cutListFrom(text, best?.end ?? 0) !== -1)
    return E.left(failure('truncated', 'the answer ends inside its fact list: it was cut off before it was complete'));
  if (best !== undefined) return E.right(best.entries);
  if (search.parsedWithoutList)
    return E.left(failure('no_fact_list', 'the JSON in the response holds no "notableFacts" array'));
  if (search.firstJsonError !== undefined)
    return E.left(
      failure('invalid_json', `the JSON in the response does not parse: ${clipEnd(search.firstJsonError, 160)}`),
    );
  return E.left(failure('no_json', 'the response holds no JSON object or array'));
};

/**
 * Reads the model's answer: the JSON may be surrounded by prose or in a code fence, as
 * `{"notableFacts": [...]}` or a bare array; the documented object wins over any bracket in
 * prose, the last one of an answer wins over one it quotes before it ("Previous list: ...
 * Updated list: ..."), and an empty list in prose is not applied while a non-empty one follows.
 * Each entry is validated (`parseCategorizedFact`: a placeholder such as `...` is no fact);
 * invalid and duplicate entries are dropped (`parseNotableFactsResponseWithWarnings` says
 * which and why), and at most `maxFacts` (25) are kept, the newest. An empty list is a valid
 * answer; a list none of whose entries is usable is not, and an answer cut inside its list is
 * `truncated`. An answer over 100,000 characters is refused as `too_large` unread; the time is
 * linear in the answer whatever it holds.
 */
export const parseNotableFactsResponse = (
  text: string,
  options: ParseNotableFactsOptions = {},
): E.Either<NotableFactsError, ReadonlyArray<CategorizedFact>> =>
  pipe(
    parseNotableFactsResponseWithWarnings(text, options),
    E.map((response) => response.facts),
  );

/** `parseNotableFactsResponse`, with a warning for each entry dropped. */
export const parseNotableFactsResponseWithWarnings = (
  text: string,
  options: ParseNotableFactsOptions = {},
): E.Either<NotableFactsError, NotableFactsResponse> => {
  // A JavaScript caller may pass null.
  const given: ParseNotableFactsOptions = typeof options === 'object' && options !== null ? options : {};
  const categories =
    Array.isArray(given.categories) && given.categories.length > 0
      ? given.categories
      : categoryNames(DEFAULT_CATEGORIES);
  const maxFacts =
    typeof given.maxFacts === 'number' && given.maxFacts >= 1 ? Math.floor(given.maxFacts) : NOTES_LIMITS.hardCap;
  return pipe(
    findEntries(typeof text === 'string' ? text : ''),
    E.chain((entries) => {
      const result = keepValidFacts(entries, categories, maxFacts, Array.isArray(given.previous) ? given.previous : []);
      return entries.length > 0 && result.facts.length === 0
        ? E.left(
            failure(
              'no_valid_facts',
              `none of the ${entries.length} entries is a usable fact (${clipEndRedacted(result.warnings.join('; '), 240)})`,
            ),
          )
        : E.right(result);
    }),
  );
};
