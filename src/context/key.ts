/**
 * Context keys compared as (repo, branch, workstreamId) tuples. Joining the parts into one
 * string would make `("a/b", "c")` and `("a", "b/c")` collide and let one workstream's id
 * match another's by prefix; a tuple comparison cannot.
 */
import * as E from 'fp-ts/lib/Either.js';
import * as Ord from 'fp-ts/lib/Ord.js';
import * as S from 'fp-ts/lib/string.js';
import { pipe } from 'fp-ts/lib/function.js';
import { sha256HexPrefix } from '../base/hash.js';
import { isBlank } from '../base/text.js';
import { checkedKey, checkedText } from './arguments.js';
import { CONTEXT_LIMITS, type ContextError, type ContextKey } from './model.js';

/** Keys in (repo, branch, workstreamId) order, each part by UTF-16 code units. */
export const ordContextKey: Ord.Ord<ContextKey> = Object.freeze(
  pipe(
    Ord.tuple(S.Ord, S.Ord, S.Ord),
    Ord.contramap((key: ContextKey): readonly [string, string, string] => [key.repo, key.branch, key.workstreamId]),
  ),
);

/** A key as one string no other key gives (its parts JSON-quoted, never joined bare), to look contexts up by it. */
export const contextKeyId = (key: ContextKey): string => JSON.stringify([key.repo, key.branch, key.workstreamId]);

/** Negative, zero or positive as `a` sorts before, with or after `b`. A key that is none is refused with a TypeError. */
export const compareContextKeys = (a: ContextKey, b: ContextKey): number =>
  ordContextKey.compare(checkedKey(a, 'the first key'), checkedKey(b, 'the second key'));

/**
 * True when both keys name the same workstream: every part equal. A key that is none (whose
 * parts would all be undefined, and so equal another such key's) is refused with a TypeError.
 */
export const isSameContextKey = (a: ContextKey, b: ContextKey): boolean =>
  ordContextKey.equals(checkedKey(a, 'the first key'), checkedKey(b, 'the second key'));

/** Controls, line and paragraph separators, and format characters (bidi controls, zero-width, tag characters). */
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;
const UNPRINTABLE_ALL = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;

/** True when `text` holds a line break, a control character or an invisible format character: it could not stay on one visible line. */
export const hasControlCharacters = (text: string): boolean => UNPRINTABLE.test(text);

/**
 * A key part as it is stored and compared, whoever gave it (typed, read from git, read from a
 * file): Unicode composed (NFC), whitespace runs as one space, none at either end. Two names
 * that only look alike (`api` and `api `, a composed and a decomposed `café`) then name one
 * workstream instead of two shown identically, and a file written by hand or by an older
 * version, which stored a part as it was typed, is found by the part a command gives.
 */
export const normalizeKeyPart = (part: string): string =>
  checkedText(part, 'the key part').normalize('NFC').replace(/\s+/gu, ' ').trim();

/**
 * A key part made from a name the repository chose (a branch, a folder): every control or
 * invisible character spelled out as `\u{202E}`, so the name shows what it holds and still keys
 * apart from its look-alikes, then normalized as every key part is; a name longer than the
 * limit keeps its start and ends in `~` and a hash of the whole name (composed, so both
 * spellings of a long `café` stay one), so two long names stay apart.
 * Total: a hostile branch name never stops a command.
 */
export const sanitizeKeyPart = (raw: string): string => {
  const visible = normalizeKeyPart(
    checkedText(raw, 'the key part').replace(
      UNPRINTABLE_ALL,
      (character) => `\\u{${character.codePointAt(0)!.toString(16).toUpperCase()}}`,
    ),
  );
  const trimmed = visible === '' ? '(empty)' : visible;
  if (trimmed.length <= CONTEXT_LIMITS.keyPart) return trimmed;
  const hash = sha256HexPrefix(raw.normalize('NFC'), 8);
  let cut = CONTEXT_LIMITS.keyPart - hash.length - 1;
  // Never split a surrogate pair.
  const last = trimmed.charCodeAt(cut - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut -= 1;
  return `${trimmed.slice(0, cut)}~${hash}`;
};

/** Checks the parts of a key: each not blank (nor invisible characters only), at most `CONTEXT_LIMITS.keyPart` characters, on one line. */
export const parseContextKey = (parts: ContextKey): E.Either<ContextError, ContextKey> => {
  // Parts that are no object (null) give no key: said as a refused key, not as a failure inside.
  if (typeof parts !== 'object' || parts === null)
    return E.left({ code: 'invalid', message: 'a context key needs a repo, a branch and a workstream id' });
  for (const [name, value] of [
    ['repo', parts.repo],
    ['branch', parts.branch],
    ['workstream id', parts.workstreamId],
  ] as const) {
    if (typeof value !== 'string' || isBlank(value))
      return E.left({ code: 'invalid', message: `the ${name} of a context key is empty` });
    if (value.length > CONTEXT_LIMITS.keyPart)
      return E.left({
        code: 'invalid',
        message: `the ${name} of a context key is longer than ${CONTEXT_LIMITS.keyPart} characters`,
      });
    if (hasControlCharacters(value))
      return E.left({
        code: 'invalid',
        message: `the ${name} of a context key holds line breaks or control characters`,
      });
  }
  return E.right({ repo: parts.repo, branch: parts.branch, workstreamId: parts.workstreamId });
};
