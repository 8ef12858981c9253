/**
 * The evidence ledger: claims about the work, each with pointers that back it. A claim that
 * says something is done, implemented or fixed must point at a file and a line range, or at a
 * symbol; otherwise it is refused, so a later session never inherits an unbacked "done".
 */
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import { deepFreeze } from '../persistent/freeze.js';
import { collapseWhitespace } from '../base/text.js';
import { number } from '../base/count.js';
import { kindOf, refuseArgument } from '../base/describe.js';
import { checkedList, checkedText } from './arguments.js';
import { hasControlCharacters } from './key.js';
import { type Claim, CONTEXT_LIMITS, type ContextError, type EvidenceLedger, type FileEvidence } from './model.js';
import { secretProblem } from './secrets.js';

/** A line range as numbers, 1-based and inclusive. */
export interface LineRange {
  readonly start: number;
  readonly end: number;
}

/** A claim to record: its text, its evidence, and when it was made. */
export interface ClaimInput {
  readonly claim: string;
  /** Files with a line range: `L10-L40`, `10-40`, `L7`, or `{ start, end }`. */
  readonly files?: ReadonlyArray<{ readonly path: string; readonly lines: string | LineRange }>;
  readonly symbols?: ReadonlyArray<string>;
  readonly at?: number;
}

/** Why a claim was refused: `{ code, message }` as every failure of the library, and `reason`, the same text. */
export interface ClaimRejection {
  readonly code: 'missing_evidence' | 'invalid_claim' | 'invalid_evidence' | 'secret' | 'ledger_full';
  readonly message: string;
  /** The same as `message` (the name the claim ledger first gave it). */
  readonly reason: string;
}

/** A claim whose evidence names a file the repository does not have. */
export interface MissingEvidence {
  readonly claim: string;
  readonly path: string;
}

/**
 * Words that report work as finished, in the forms a report or a commit message uses: "done",
 * "fixed", "fixes", "implemented", "completes", "resolved", ... Bare verbs ("fix", "implement")
 * say it only as a commit subject, at the start ("Fix the parser"); elsewhere ("how to fix")
 * they name work still to do.
 */
const COMPLETION =
  /\b(?:done|(?:re)?fix(?:e[sd])|(?:re)?implement(?:s|ed)|complete[sd]?|finish(?:e[sd])|resolve[sd]|solve[sd]|ship(?:s|ped))\b|\bclose[sd]?\s+#\d/giu;
const COMMIT_SUBJECT = /^\W*(?:(?:re)?fix|(?:re)?implement|complete|finish|resolve|solve|ship)\b/iu;

/**
 * Letters of other scripts that render as Latin ones (Cyrillic and Greek lookalikes): read as
 * those, so that "іmplemented" with a Cyrillic і is the word it shows.
 */
const LOOKALIKES: Readonly<Record<string, string>> = {
  а: 'a',
  е: 'e',
  о: 'o',
  р: 'p',
  с: 'c',
  у: 'y',
  х: 'x',
  і: 'i',
  ј: 'j',
  ѕ: 's',
  ԁ: 'd',
  һ: 'h',
  ԛ: 'q',
  ԝ: 'w',
  А: 'A',
  В: 'B',
  Е: 'E',
  К: 'K',
  М: 'M',
  Н: 'H',
  О: 'O',
  Р: 'P',
  С: 'C',
  Т: 'T',
  Х: 'X',
  І: 'I',
  Ј: 'J',
  Ѕ: 'S',
  ο: 'o',
  ν: 'v',
  ι: 'i',
  α: 'a',
  κ: 'k',
  ρ: 'p',
  τ: 't',
  υ: 'u',
  Ο: 'O',
  Ι: 'I',
  Α: 'A',
  Β: 'B',
  Ε: 'E',
  Ζ: 'Z',
  Η: 'H',
  Κ: 'K',
  Μ: 'M',
  Ν: 'N',
  Ρ: 'P',
  Τ: 'T',
  Υ: 'Y',
  Χ: 'X',
};
const LOOKALIKE = new RegExp(`[${Object.keys(LOOKALIKES).join('')}]`, 'gu');

/** `text` with its lookalike letters read as the Latin ones they show. */
const asShown = (text: string): string => text.normalize('NFKC').replace(LOOKALIKE, (letter) => LOOKALIKES[letter]!);
/**
 * A negation of the completion word right after it, in the same clause: "not done", "isn't
 * fixed", "not yet fully implemented", "never resolved", "yet to be done". Only a few adverbs
 * may stand between them, and no punctuation: in "No regressions, fixed the parser" the "no"
 * negates something else.
 */
const NEGATION =
  /(?:\b(?:not|never|no)|n't|\byet to be)(?:\s+(?:yet|been|be|being|fully|completely|entirely|quite|really|properly|actually|even|ever|all|always))*\s+$/iu;

/** True when `text` says some work is done, implemented or fixed (and does not negate it). */
export const isCompletionClaim = (given: string): boolean => {
  const text = asShown(checkedText(given));
  return (
    COMMIT_SUBJECT.test(text) ||
    [...text.matchAll(COMPLETION)].some((match) => !NEGATION.test(text.slice(0, match.index)))
  );
};

const invalid = (message: string): ContextError => ({ code: 'invalid', message });

const LINES = /^L?(\d{1,9})(?:-L?(\d{1,9}))?$/iu;

/** Parses `L10-L40`, `10-40`, `L7` or `7` into a range; the start must be 1 or more and the end not before it. */
export const parseLineRange = (text: string): E.Either<ContextError, LineRange> => {
  // What is no text is no range: refused as a Left, as the rest of what it parses.
  if (typeof text !== 'string') return E.left(invalid('needs a line range (L10-L40)'));
  const match = LINES.exec(text.trim());
  if (match === null) return E.left(invalid(`${JSON.stringify(text)} is not a line range: use L10-L40 or L10`));
  const start = Number(match[1]);
  const end = match[2] === undefined ? start : Number(match[2]);
  if (start < 1) return E.left(invalid(`${JSON.stringify(text)} starts before line 1`));
  if (end < start) return E.left(invalid(`${JSON.stringify(text)} ends before it starts`));
  return E.right({ start, end });
};

/** A range in the ledger's notation: `L10-L40`, or `L7` for one line. */
export const formatLineRange = (range: LineRange): string => {
  if (!isRange(range)) refuseArgument('the range', range, 'a line range ({ start, end } of whole numbers)');
  const { start, end } = range;
  return start === end ? `L${start}` : `L${start}-L${end}`;
};

const isRange = (value: unknown): value is LineRange =>
  typeof value === 'object' &&
  value !== null &&
  Number.isSafeInteger((value as LineRange).start) &&
  Number.isSafeInteger((value as LineRange).end);

const normalizeLines = (lines: unknown): E.Either<ContextError, string> => {
  if (typeof lines === 'string') return E.map(formatLineRange)(parseLineRange(lines));
  if (!isRange(lines)) return E.left(invalid('needs a line range (L10-L40)'));
  return lines.start >= 1 && lines.end >= lines.start
    ? E.right(formatLineRange(lines))
    : E.left(invalid(`${lines.start}-${lines.end} is not a line range of 1-based lines`));
};

/**
 * The segments of a relative path with `.` and empty ones dropped and each `..` taking away the
 * one before it, as git reads a path on its command line (`src/../src/a.ts` is `src/a.ts`);
 * undefined when a `..` has nothing left to take away: the path climbs above the root.
 */
const resolveDotSegments = (slashed: string): ReadonlyArray<string> | undefined => {
  const kept: string[] = [];
  for (const segment of slashed.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment !== '..') kept.push(segment);
    else if (kept.pop() === undefined) return undefined;
  }
  return kept;
};

/** Why a path is no evidence path: what `resolveEvidencePath` refuses. */
type EvidencePathFault = 'empty' | 'control' | 'absolute' | 'above' | 'root' | 'long';

/** A path with forward slashes, its `.` and `..` segments resolved, or what is wrong with it. */
const resolveEvidencePath = (path: string): E.Either<EvidencePathFault, string> => {
  if (hasControlCharacters(path)) return E.left('control');
  const slashed = path.trim().replace(/\\/gu, '/');
  if (slashed === '') return E.left('empty');
  if (slashed.startsWith('/') || /^[A-Za-z]:/u.test(slashed)) return E.left('absolute');
  const segments = resolveDotSegments(slashed);
  if (segments === undefined) return E.left('above');
  if (segments.length === 0) return E.left('root');
  const resolved = segments.join('/');
  return resolved.length > CONTEXT_LIMITS.path ? E.left('long') : E.right(resolved);
};

/**
 * A repository-relative path with forward slashes, its `.` and `..` segments resolved, or why
 * not: evidence points into the repository, so an absolute path and one whose `..` climbs above
 * the root are refused. The resolved path is what the shell then checks git tracks.
 */
export const normalizeEvidencePath = (path: unknown): E.Either<ContextError, string> => {
  if (typeof path !== 'string') return E.left(invalid('needs a path'));
  const quoted = JSON.stringify(path);
  return pipe(
    resolveEvidencePath(path),
    E.mapLeft((fault) =>
      invalid(
        {
          empty: 'needs a path',
          control: `${quoted} holds line breaks or control characters`,
          absolute: `${quoted} is absolute: give a path relative to the repository`,
          above: `${quoted} goes above the repository root: a path starts at the root (src/a.ts), wherever the command runs`,
          root: `${quoted} names the repository root, not a file`,
          long: `path is longer than ${CONTEXT_LIMITS.path} characters`,
        }[fault],
      ),
    ),
  );
};

/**
 * Why a recorded evidence path (read from a file, which a hostile repository writes) is not one
 * a claim could have recorded, or undefined when it is: every path is stored resolved, so one
 * that is absolute, climbs with `..` or holds `.` segments is refused, never followed. The
 * reason never quotes the path.
 */
export const recordedEvidencePathProblem = (path: string): string | undefined => {
  const resolved = resolveEvidencePath(path);
  if (E.isRight(resolved))
    return resolved.right === path
      ? undefined
      : 'is not a path from the repository root in its resolved form (no ., .., doubled slash or backslash)';
  return {
    empty: 'is empty',
    control: 'holds line breaks or control characters',
    absolute: 'is absolute: evidence is a path inside the repository',
    above: 'goes above the repository root',
    root: 'names the repository root, not a file',
    long: `is longer than ${CONTEXT_LIMITS.path} characters`,
  }[resolved.left];
};

const reject = (code: ClaimRejection['code'], reason: string): E.Either<ClaimRejection, never> =>
  E.left({ code, message: reason, reason });

const normalizeFiles = (files: ClaimInput['files']): E.Either<ClaimRejection, FileEvidence[]> => {
  const out: FileEvidence[] = [];
  if (files !== undefined && files !== null && !Array.isArray(files))
    return reject('invalid_evidence', `files is ${kindOf(files)}, not a list of { path, lines }`);
  for (const [index, file] of (files ?? []).entries()) {
    const path = normalizeEvidencePath(file?.path);
    if (E.isLeft(path)) return reject('invalid_evidence', `files[${index}]: ${path.left.message}`);
    const lines = normalizeLines(file.lines);
    if (E.isLeft(lines)) return reject('invalid_evidence', `files[${index}] (${path.right}): ${lines.left.message}`);
    if (!out.some((known) => known.path === path.right && known.lines === lines.right))
      out.push({ path: path.right, lines: lines.right });
  }
  return E.right(out);
};

const normalizeSymbols = (symbols: ClaimInput['symbols']): E.Either<ClaimRejection, string[]> => {
  const out: string[] = [];
  if (symbols !== undefined && symbols !== null && !Array.isArray(symbols))
    return reject('invalid_evidence', `symbols is ${kindOf(symbols)}, not a list of names`);
  for (const [index, raw] of (symbols ?? []).entries()) {
    if (typeof raw !== 'string') return reject('invalid_evidence', `symbols[${index}] is ${kindOf(raw)}, not text`);
    const symbol = collapseWhitespace(raw);
    if (symbol === '') return reject('invalid_evidence', `symbols[${index}] is empty`);
    if (symbol.length > CONTEXT_LIMITS.symbol)
      return reject('invalid_evidence', `symbols[${index}] is longer than ${CONTEXT_LIMITS.symbol} characters`);
    if (!out.includes(symbol)) out.push(symbol);
  }
  return E.right(out);
};

/** Validates a claim into its ledger form: one line of text, normalized evidence. */
export const parseClaim = (input: ClaimInput): E.Either<ClaimRejection, Claim> => {
  const text = typeof input?.claim === 'string' ? collapseWhitespace(input.claim) : '';
  if (text === '') return reject('invalid_claim', 'a claim needs text');
  if (text.length > CONTEXT_LIMITS.claim)
    return reject(
      'invalid_claim',
      `a claim is at most ${CONTEXT_LIMITS.claim} characters, this one has ${number(text.length)}`,
    );
  if (input.at !== undefined && !Number.isSafeInteger(input.at))
    return reject('invalid_claim', 'a claim time must be whole epoch milliseconds');
  const files = normalizeFiles(input.files);
  if (E.isLeft(files)) return files;
  const symbols = normalizeSymbols(input.symbols);
  if (E.isLeft(symbols)) return symbols;
  const secret = [
    secretProblem('the claim', text),
    ...files.right.map((file, index) => secretProblem(`files[${index}]`, file.path)),
    ...symbols.right.map((symbol, index) => secretProblem(`symbols[${index}]`, symbol)),
  ].find((problem) => problem !== undefined);
  if (secret !== undefined) return reject('secret', secret);
  if (files.right.length + symbols.right.length > CONTEXT_LIMITS.evidencePerClaim)
    return reject('invalid_evidence', `a claim carries at most ${CONTEXT_LIMITS.evidencePerClaim} pieces of evidence`);
  if (files.right.length === 0 && symbols.right.length === 0 && isCompletionClaim(text))
    return reject(
      'missing_evidence',
      `"${text.length > 60 ? `${text.slice(0, 57)}...` : text}" says the work is done but gives no evidence: add a file with a line range (src/a.ts:L10-L40) or a symbol`,
    );
  return E.right({
    claim: text,
    files: files.right,
    symbols: symbols.right,
    ...(input.at === undefined ? {} : { at: input.at }),
  });
};

/**
 * Adds a claim to the ledger, or says why it cannot. A claim with the same text replaces the
 * earlier one (it moves to the end); a new claim in a ledger that holds `CONTEXT_LIMITS.claims`
 * already is refused (`ledger_full`): nothing stored is pushed out to make room.
 */
export const recordClaim = (ledger: EvidenceLedger, claim: ClaimInput): E.Either<ClaimRejection, EvidenceLedger> => {
  // A ledger that is none is a programmer's mistake; the claim is input, refused as a Left.
  checkedList(ledger, 'the ledger', 'claims');
  return pipe(
    parseClaim(claim),
    E.chain((parsed) => {
      const others = ledger.filter((entry) => entry.claim !== parsed.claim);
      return others.length >= CONTEXT_LIMITS.claims
        ? reject(
            'ledger_full',
            `the evidence ledger holds ${others.length} claims, the most it may: remove claims that no longer matter from its evidence_ledger in the context file (or record this one under another workstream), then try again`,
          )
        : E.right(deepFreeze([...others, parsed]));
    }),
  );
};

/** Every file the ledger points at, once each, in code-unit order: what the shell checks exists. */
export const selectEvidencePaths = (ledger: EvidenceLedger): ReadonlyArray<string> =>
  [
    ...new Set(checkedList(ledger, 'the ledger', 'claims').flatMap((claim) => claim.files.map((file) => file.path))),
  ].sort();

/** The claims whose evidence names a file that `exists` says is gone, one entry per file. */
export const findMissingEvidence = (
  ledger: EvidenceLedger,
  exists: (path: string) => boolean,
): ReadonlyArray<MissingEvidence> => {
  if (typeof exists !== 'function') refuseArgument('exists', exists, 'a function (whether a path exists)');
  return checkedList(ledger, 'the ledger', 'claims').flatMap((claim) =>
    [...new Set(claim.files.map((file) => file.path))]
      .filter((path) => !exists(path))
      .map((path) => ({ claim: claim.claim, path })),
  );
};
