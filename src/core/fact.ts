import * as E from 'fp-ts/lib/Either.js';
import { kindOf, refuseArgument } from '../base/describe.js';
import { type Failure, failure } from '../base/failure.js';
import { sha256HexPrefix } from '../base/hash.js';
import { isRecord } from '../base/record.js';
import { normalizePath } from '../base/path.js';
import { clipStartRedacted, findSecret, redactSecrets } from '../base/secrets.js';
import { collapseWhitespace, isBlank, wellFormed } from '../base/text.js';
import { isWithinYears, plainTime } from '../base/time.js';

/** The categories a fact can carry. */
export const FACT_TAGS = Object.freeze([
  'file_change',
  'convention',
  'decision',
  'error',
  'dependency',
  'test',
] as const);
/** One category of a fact. */
export type FactTag = (typeof FACT_TAGS)[number];

/** The dispatch roles whose results produce facts. */
export const SOURCE_ROLES = Object.freeze(['implementer', 'reviewer'] as const);
/** The role of the dispatch a fact came from. */
export type SourceRole = (typeof SOURCE_ROLES)[number];

/** A (subject, relation, object) fact with the valid-time interval [validFrom, validTo). */
export interface SessionFact {
  readonly id: string;
  readonly subject: string;
  readonly relation: string;
  readonly object: string;
  readonly tags: ReadonlyArray<FactTag>;
  readonly validFrom: number;
  readonly validTo?: number;
  readonly sourceTaskId: string;
  readonly sourceRole: SourceRole;
  readonly confidence: number;
}

/** Length limits of a fact's fields, in UTF-16 units. */
export const FACT_LIMITS = Object.freeze({
  subject: 200,
  relation: 50,
  object: 200,
  sourceTaskId: 50,
  maxTags: 3,
} as const);

const ID_SEPARATOR = '\u001f';

/**
 * The first 16 hex characters of SHA-256 over `subject \u001f relation \u001f object`. A part
 * that is no string (null) is refused with a TypeError naming it, rather than hashed as the
 * text "null": one `typeof` a part, as every fact made is hashed here.
 */
export const createFactId = (subject: string, relation: string, object: string): string => {
  if (typeof subject !== 'string') refuseArgument('the subject', subject, 'a string');
  if (typeof relation !== 'string') refuseArgument('the relation', relation, 'a string');
  if (typeof object !== 'string') refuseArgument('the object', object, 'a string');
  return sha256HexPrefix(subject + ID_SEPARATOR + relation + ID_SEPARATOR + object, 8);
};

/** The longest path kept as a subject: a subject's limit. */
export const PATH_LIMIT = FACT_LIMITS.subject;

/**
 * A path as a subject: whitespace-collapsed, in the one spelling of its file (`normalizePath`:
 * `./src\b/../a.ts:12` is `src/a.ts`), clipped to 200 characters keeping its end (its file
 * name), with a secret the respelling or the clip makes redacted. Extraction makes a path's
 * subject so, and an invalidation reads a subject no pair holds so.
 */
export const pathText = (text: string): string => {
  if (typeof text !== 'string') refuseArgument('the text', text, 'a string');
  const written = collapseWhitespace(text);
  const spelled = normalizePath(written);
  // Resolving `..` or reading `\` as `/` can join what a secret's shape needs (an AWS key after `aws_secret_key/x/../`).
  const clipped = clipStartRedacted(spelled === written ? spelled : redactSecrets(spelled), PATH_LIMIT);
  // The clip's mark is a segment, which a `..` after it resolves away (`.../../a.ts` is `../a.ts`):
  // that spelling is the subject, so the answer is its own spelling, as `normalizePath`'s is. No
  // more than one pass: the respelled path is within the limit, and its spelling is its own.
  const again = normalizePath(clipped);
  return again === clipped ? clipped : redactSecrets(again);
};

/** Facts about files: their history lends them the context of every task that asserted them. */
export const isFileFact = (fact: SessionFact): boolean => fact.tags.includes('file_change');

/**
 * `fact`, refused with a TypeError naming it when it is no object (null from an unset variable):
 * a programmer's mistake, said plainly rather than as a failure deep inside.
 */
export const checkedFact = (fact: SessionFact, name: string): SessionFact => {
  if (typeof fact !== 'object' || fact === null) refuseArgument(name, fact, 'a fact');
  return fact;
};

/** True for one of the six fact tags. */
export const isFactTag = (value: unknown): value is FactTag =>
  typeof value === 'string' && (FACT_TAGS as ReadonlyArray<string>).includes(value);

/**
 * True when the fact carries one of the `wanted` tags. An indexed loop: a fact's tags are a
 * frozen array, and the engine runs `some` on a frozen array several times slower, which a
 * query filtered by tags paid for every fact it weighed.
 */
export const hasWantedTag = (fact: SessionFact, wanted: ReadonlySet<string>): boolean => {
  const { tags } = fact;
  for (let i = 0; i < tags.length; i += 1) if (wanted.has(tags[i]!)) return true;
  return false;
};

/** True for `implementer` or `reviewer`. */
export const isSourceRole = (value: unknown): value is SourceRole =>
  typeof value === 'string' && (SOURCE_ROLES as ReadonlyArray<string>).includes(value);

/** Every list of 1 to `FACT_LIMITS.maxTags` distinct tags, in every order, by its tags joined with commas. */
const allTagLists = (): ReadonlyMap<string, ReadonlyArray<FactTag>> => {
  const lists = new Map<string, ReadonlyArray<FactTag>>();
  const extend = (list: ReadonlyArray<FactTag>): void => {
    if (list.length > 0) lists.set(list.join(','), Object.freeze([...list]));
    if (list.length < FACT_LIMITS.maxTags) for (const tag of FACT_TAGS) if (!list.includes(tag)) extend([...list, tag]);
  };
  extend([]);
  return lists;
};

/**
 * Tag lists are shared per combination: a store holds one array per combination instead of one
 * per fact. Every combination a fact may carry is made once, when the module loads (156 of them).
 */
const TAG_LISTS = allTagLists();

/** The one frozen list of these tags (repeats dropped, order kept). */
export const shareTags = (tags: ReadonlyArray<FactTag>): ReadonlyArray<FactTag> => {
  const unique = tags.length === 1 ? tags : [...new Set(tags)];
  // More tags than a fact may carry, or unknown ones, have no shared list: a list of their own.
  return TAG_LISTS.get(unique.length === 1 ? unique[0]! : unique.join(',')) ?? Object.freeze([...unique]);
};

/**
 * Why a fact's text field is malformed (not a string, blank, or longer than `max`), or
 * undefined: the rule every fact's fields pass, wherever a fact is made or read. Text of
 * invisible characters only (zero-width spaces, joiners, U+2060) is blank: it shows nothing.
 */
export const textFieldProblem = (field: string, value: unknown, max: number): string | undefined => {
  if (typeof value !== 'string' || isBlank(value)) return `${field} is missing or empty`;
  if (value.length > max) return `${field} is longer than ${max} characters`;
  return undefined;
};

/**
 * Why a task id (`field`, its whitespace collapsed) may not name a task, holding a secret named
 * by its shape and never quoted, or undefined. Refused, not redacted: the id names its task in
 * every fact, section and log line, and ids holding different tokens would all name one task
 * once redacted.
 */
export const taskIdSecretProblem = (field: string, taskId: string): string | undefined => {
  const secret = findSecret(taskId);
  return secret === undefined
    ? undefined
    : `${field} holds what looks like ${secret}: a task id is written into facts and sections, and no secret may be`;
};

/**
 * A task id as the store names its task, in a fact's `sourceTaskId` and a recorded prompt alike:
 * its whitespace collapsed (extraction and a query's task id take it so) and each lone surrogate
 * U+FFFD. One task, one id: a prompt recorded for `7  a` lends its words to the facts of `7 a`.
 */
export const spelledTaskId = (taskId: string): string => wellFormed(collapseWhitespace(taskId));

/**
 * True for text holding U+001F, which joins a triple's fields into fact ids and pair keys: no
 * stored field holds it, or `('a\u001fb', 'c')` and `('a', 'b\u001fc')` would be one pair with one id.
 */
export const holdsSeparator = (text: string): boolean => text.includes(ID_SEPARATOR);

const separatorProblem = (field: string, value: string): string | undefined =>
  holdsSeparator(value) ? `${field} holds U+001F, the separator of fact ids and pair keys` : undefined;

/** Why a fact's tags are malformed (not 1 to `FACT_LIMITS.maxTags` known tags), or undefined. */
export const tagsProblem = (tags: unknown): string | undefined => {
  if (!Array.isArray(tags) || tags.length < 1 || tags.length > FACT_LIMITS.maxTags)
    return `tags must hold 1 to ${FACT_LIMITS.maxTags} tags`;
  if (!tags.every(isFactTag)) return 'tags hold an unknown tag';
  return undefined;
};

/** Why a fact cannot enter the store. */
export type FactFailure = Failure<'invalid_fact'>;

/**
 * Validates one fact as it enters the store and returns a fresh plain copy holding only the
 * known fields (its text well-formed: each lone surrogate U+FFFD), or why it is malformed
 * (`invalid_fact`; a task id holding a secret is, see `taskIdSecretProblem`). History (`validTo`)
 * never enters this way.
 */
export const parseNewFact = (input: unknown): E.Either<FactFailure, SessionFact> =>
  E.mapLeft((message: string) => failure('invalid_fact', message))(validateNewFact(input));

const validateNewFact = (input: unknown): E.Either<string, SessionFact> => {
  if (!isRecord(input)) return E.left('fact is not an object');
  // Each field read once: a getter or a Proxy may answer a later read with what the checks never saw.
  const { id, subject, relation, object, sourceTaskId, sourceRole, tags, validFrom, validTo, confidence } =
    input as Record<string, unknown> & Record<'id' | 'subject' | 'relation' | 'object' | 'sourceTaskId', string>;
  const textProblem =
    textFieldProblem('id', id, 64) ??
    textFieldProblem('subject', subject, FACT_LIMITS.subject) ??
    textFieldProblem('relation', relation, FACT_LIMITS.relation) ??
    textFieldProblem('object', object, FACT_LIMITS.object) ??
    textFieldProblem('sourceTaskId', sourceTaskId, FACT_LIMITS.sourceTaskId);
  if (textProblem !== undefined) return E.left(textProblem);
  const taskId = spelledTaskId(sourceTaskId);
  // As `normalizeTaskId` refuses it, so a fact handed to `addFacts` keeps no secret in its id either.
  const secretInId = taskIdSecretProblem('sourceTaskId', taskId);
  if (secretInId !== undefined) return E.left(secretInId);
  const separated =
    separatorProblem('subject', subject) ??
    separatorProblem('relation', relation) ??
    separatorProblem('object', object);
  if (separated !== undefined) return E.left(separated);
  if (id !== createFactId(subject, relation, object)) return E.left('id is not createFactId of the triple');
  // A list that is not frozen is copied once too: a Proxy's elements may change between the
  // check and the list kept (a frozen one cannot: a Proxy must answer its target's frozen values).
  // Copied only once known to be short: a spread of a list with a hole copies the whole length it claims.
  const tagList: unknown =
    Array.isArray(tags) && !Object.isFrozen(tags) && tags.length <= FACT_LIMITS.maxTags
      ? [...(tags as ReadonlyArray<unknown>)]
      : tags;
  const tagProblem = tagsProblem(tagList);
  if (tagProblem !== undefined) return E.left(tagProblem);
  if (typeof validFrom !== 'number' || !isWithinYears(validFrom))
    return E.left('validFrom is not a time within the years 0000 to 9999');
  if (validTo !== undefined) return E.left('validTo is already set');
  if (typeof confidence !== 'number' || !(confidence >= 0 && confidence <= 1))
    return E.left('confidence is not a number in 0..1');
  if (!isSourceRole(sourceRole)) return E.left('sourceRole is unknown');
  // Lone surrogates become U+FFFD, as the id's hash already reads them: one id, one text.
  return E.right({
    id,
    subject: wellFormed(subject),
    relation: wellFormed(relation),
    object: wellFormed(object),
    tags: shareTags(tagList as ReadonlyArray<FactTag>),
    validFrom: plainTime(validFrom),
    sourceTaskId: taskId,
    sourceRole,
    // -0 is 0, as a time's is (see `plainTime`): JSON writes it as 0.
    confidence: confidence + 0,
  });
};

/**
 * Builds a fact with its id derived from the triple (no validation: pass it through
 * `parseNewFact` or `addFacts`). Fields that are no object (null) are refused with a TypeError.
 */
export const makeFact = (fields: Omit<SessionFact, 'id' | 'validTo'>): SessionFact => {
  if (!isRecord(fields)) throw new TypeError(`the fields are ${kindOf(fields)}, not an object (a fact's fields)`);
  return {
    id: createFactId(fields.subject, fields.relation, fields.object),
    subject: fields.subject,
    relation: fields.relation,
    object: fields.object,
    tags: fields.tags,
    validFrom: fields.validFrom,
    sourceTaskId: fields.sourceTaskId,
    sourceRole: fields.sourceRole,
    confidence: fields.confidence,
  };
};

/**
 * How a `[Session Context]` section lays its facts out: one line per fact, or grouped by task
 * and subject. Named here, below the history format (a prompt event may carry one) and the
 * retrieval that renders it.
 */
export const SECTION_LAYOUTS = Object.freeze(['lines', 'grouped'] as const);
/** One section layout. */
export type SectionLayout = (typeof SECTION_LAYOUTS)[number];

/** True for the name of a section layout. */
export const isSectionLayout = (value: unknown): value is SectionLayout =>
  (SECTION_LAYOUTS as ReadonlyArray<unknown>).includes(value);
