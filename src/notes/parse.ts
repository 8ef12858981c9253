/**
 * Reading the small model's answer. Models wrap JSON in prose and code fences and now and
 * then return a bad entry; one bad entry must not cost the user the whole list, so entries
 * are validated one by one and dropped with a warning, while an answer with no usable list at
 * all is an error and leaves the ledger as it was.
 */
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import { clipEnd, collapseWhitespace } from '../base/text.js';
import { type CategorizedFact, categoryNames, DEFAULT_CATEGORIES, keepValidFacts, NOTES_LIMITS } from './model.js';

/** Why an answer holds no usable fact list. */
export type NotableFactsErrorCode = 'empty_response' | 'no_json' | 'invalid_json' | 'no_fact_list' | 'no_valid_facts';

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
  /** The most facts kept (default: the hard cap, 25). */
  readonly maxFacts?: number;
}

/** The keys under which an answer's object may hold its list, the documented one first. */
const LIST_KEYS = ['notableFacts', 'facts'] as const;

/** Openings tried before giving up on finding JSON in prose. */
const MAX_OPENINGS = 64;

const FENCE = /```[^\n`]*\r?\n([\s\S]*?)```/gu;

const failure = (code: NotableFactsErrorCode, message: string): NotableFactsError => ({ code, message });

/** The end (exclusive) of the JSON value opening at `start`, tracking strings; -1 if it never closes. */
const balancedEnd = (text: string, start: number): number => {
  const stack: string[] = [];
  let inString = false;
  for (let i = start; i < text.length; i += 1) {
    const char = text[i];
    if (inString) {
      if (char === '\\') i += 1;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{' || char === '[') stack.push(char === '{' ? '}' : ']');
    else if (char === '}' || char === ']') {
      if (stack.pop() !== char) return -1;
      if (stack.length === 0) return i + 1;
    }
  }
  return -1;
};

/** Texts that may be the JSON answer, most likely first: fenced blocks, the whole text, balanced spans. */
const candidates = (text: string): string[] => {
  const found = [...text.matchAll(FENCE)].map((match) => (match[1] ?? '').trim());
  found.push(text.trim());
  let openings = 0;
  for (let i = 0; i < text.length && openings < MAX_OPENINGS; i += 1) {
    if (text[i] !== '{' && text[i] !== '[') continue;
    openings += 1;
    const end = balancedEnd(text, i);
    if (end !== -1) found.push(text.slice(i, end));
  }
  return found;
};

type Parsed = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly reason: string };

const parseJson = (text: string): Parsed => {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, reason: collapseWhitespace(error instanceof Error ? error.message : String(error)) };
  }
};

/** The entry list of a parsed answer: a bare array, or an object's `notableFacts` (or `facts`) array. */
const entriesOf = (value: unknown): ReadonlyArray<unknown> | undefined => {
  if (Array.isArray(value)) return value;
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Readonly<Record<string, unknown>>;
  return LIST_KEYS.map((key) => record[key]).find(Array.isArray);
};

/** The first candidate holding a fact list; otherwise the most telling error. */
const findEntries = (text: string): E.Either<NotableFactsError, ReadonlyArray<unknown>> => {
  if (text.trim() === '') return E.left(failure('empty_response', 'the response is empty'));
  let firstJsonError: string | undefined;
  let parsedWithoutList = false;
  for (const candidate of candidates(text)) {
    const parsed = parseJson(candidate);
    if (!parsed.ok) {
      if (/^[[{]/u.test(candidate)) firstJsonError ??= parsed.reason;
      continue;
    }
    const entries = entriesOf(parsed.value);
    if (entries !== undefined) return E.right(entries);
    parsedWithoutList = true;
  }
  if (parsedWithoutList)
    return E.left(failure('no_fact_list', 'the JSON in the response holds no "notableFacts" array'));
  if (firstJsonError !== undefined)
    return E.left(failure('invalid_json', `the JSON in the response does not parse: ${clipEnd(firstJsonError, 160)}`));
  return E.left(failure('no_json', 'the response holds no JSON object or array'));
};

/**
 * Reads the model's answer: the JSON may be surrounded by prose or in a code fence, as
 * `{"notableFacts": [...]}` or a bare array. Each entry is validated (`parseCategorizedFact`);
 * invalid and duplicate entries are dropped (`parseNotableFactsResponseWithWarnings` says
 * which and why), and at most `maxFacts` (25) are kept. An empty list is a valid answer; a
 * list none of whose entries is usable is not.
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
  const categories =
    Array.isArray(options.categories) && options.categories.length > 0
      ? options.categories
      : categoryNames(DEFAULT_CATEGORIES);
  const maxFacts =
    typeof options.maxFacts === 'number' && options.maxFacts >= 1 ? Math.floor(options.maxFacts) : NOTES_LIMITS.hardCap;
  return pipe(
    findEntries(typeof text === 'string' ? text : ''),
    E.chain((entries) => {
      const result = keepValidFacts(entries, categories, maxFacts);
      return entries.length > 0 && result.facts.length === 0
        ? E.left(
            failure(
              'no_valid_facts',
              `none of the ${entries.length} entries is a usable fact (${clipEnd(result.warnings.join('; '), 240)})`,
            ),
          )
        : E.right(result);
    }),
  );
};
