/**
 * Parsing raw agent output: the JSON result sits between lines `BEGIN_DISPATCH_RESULT` and
 * `END_DISPATCH_RESULT`. Markers count only on a line of their own, so prose that names them
 * does not break parsing; with several complete blocks, the last one wins.
 */
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import { parseJson } from '../../base/json.js';
import { quoteValue } from '../../base/schema.js';
import { escapeForLine } from '../../base/text.js';
import { type DispatchResult, validateDispatchResult } from './contract.js';
import { isSourceRole, type SourceRole } from '../fact.js';

/** Why a dispatch result was rejected. `invalid_input`: a bad role or task id given to the shell. */
export interface ContractError {
  readonly code: 'marker_missing' | 'json_parse_failed' | 'schema_invalid' | 'invalid_input';
  readonly message: string;
}

/** The marker line that opens a result block. */
export const BEGIN_MARKER = 'BEGIN_DISPATCH_RESULT';
/** The marker line that closes a result block. */
export const END_MARKER = 'END_DISPATCH_RESULT';

const contractError = (code: ContractError['code'], message: string): ContractError => ({ code, message });

/**
 * Where the body of the last complete block lies in `raw` (its lines, from the one after the
 * BEGIN to the END's), if any. A BEGIN opens a block (a later BEGIN before any END restarts
 * it); the first END after it closes it; an END outside a block is prose.
 */
export const lastBlockRange = (raw: string): { readonly from: number; readonly to: number } | undefined => {
  const breaks = /\r\n|\r|\n/gu;
  let range: { from: number; to: number } | undefined;
  let open: number | undefined;
  let start = 0;
  for (;;) {
    const found = breaks.exec(raw);
    const next = found === null ? raw.length : found.index + found[0].length;
    const marker = raw.slice(start, found === null ? raw.length : found.index).trim();
    if (marker === BEGIN_MARKER) open = next;
    else if (marker === END_MARKER && open !== undefined) {
      range = { from: open, to: start };
      open = undefined;
    }
    if (found === null) return range;
    start = next;
  }
};

/** The lines of the body of the last complete block, or `marker_missing` (see `lastBlockRange`). */
const findLastBlock = (raw: string): E.Either<ContractError, string[]> => {
  const range = lastBlockRange(raw);
  return range === undefined
    ? E.left(
        contractError('marker_missing', `no complete ${BEGIN_MARKER} ... ${END_MARKER} block on lines of their own`),
      )
    : E.right(raw.slice(range.from, range.to).split(/\r\n|\r|\n/u));
};

/** A character of a fence's info string (`json`, `jsonc`, `x-result`): a word character or `-`. */
const isInfoCharacter = (code: number): boolean =>
  (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95 || code === 45;

/**
 * True for a fence that opens a block: three backticks and an info string of word characters and
 * `-`. Read by a loop: a pattern's loop over a line of millions of characters outside Latin-1 (an
 * output of a history line may hold 16 Mi) overflowed the engine's regexp stack.
 */
const isOpeningFence = (line: string): boolean => {
  if (!line.startsWith('```')) return false;
  for (let at = 3; at < line.length; at += 1) if (!isInfoCharacter(line.charCodeAt(at))) return false;
  return true;
};

/** The block body without a surrounding Markdown code fence (blank lines around it dropped by index: a block may hold thousands). */
export const stripFence = (body: ReadonlyArray<string>): string => {
  let first = 0;
  let last = body.length - 1;
  while (first <= last && body[first]!.trim() === '') first += 1;
  while (last >= first && body[last]!.trim() === '') last -= 1;
  if (first <= last && isOpeningFence(body[first]!.trim())) first += 1;
  if (first <= last && body[last]!.trim() === '```') last -= 1;
  return body.slice(first, last + 1).join('\n');
};

const parseBlockJson = (text: string): E.Either<ContractError, unknown> =>
  text.trim() === ''
    ? E.left(contractError('json_parse_failed', 'the result block is empty'))
    : E.mapLeft((reason: string) => contractError('json_parse_failed', `invalid JSON: ${escapeForLine(reason)}`))(
        parseJson(text),
      );

/** The JSON of the last complete result block of `raw`, unvalidated (see `lastBlockRange`). */
export const parseResultJson = (raw: string): E.Either<ContractError, unknown> =>
  pipe(findLastBlock(raw), E.map(stripFence), E.chain(parseBlockJson));

/** Validates an already-parsed result object against the role's contract. */
export const parseDispatchResult = (value: unknown, role: SourceRole): E.Either<ContractError, DispatchResult> =>
  isSourceRole(role)
    ? validateDispatchResult(value, role)
    : E.left(contractError('invalid_input', `unknown role ${quoteValue(role)}: expected implementer or reviewer`));

/** Parses raw agent output into a validated result of the given role. */
export const parseDispatchOutput = (raw: string, role: SourceRole): E.Either<ContractError, DispatchResult> =>
  !isSourceRole(role)
    ? parseDispatchResult(undefined, role)
    : typeof raw !== 'string'
      ? E.left(contractError('invalid_input', 'the output is not a string'))
      : E.chain((value) => parseDispatchResult(value, role))(parseResultJson(raw));
