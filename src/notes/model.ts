/**
 * The notable-facts model: a categorized one-sentence fact about one user, the categories a
 * ledger accepts, and the limits every list obeys. Fact text comes from a model, so it is
 * normalized here, where it enters, and every later stage can trust it to sit on one line.
 */
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import { kindOf, refuseArgument } from '../base/describe.js';
import { type Failure, failure } from '../base/failure.js';
import { isRecord } from '../base/record.js';
import { describeKind } from '../base/schema.js';
import { clipEndRedacted, redactedClipEnd, redactSecrets } from '../base/secrets.js';
import { clipEnd, collapseWhitespace, isBlank, trimEndOf, wellFormed } from '../base/text.js';
import { deepFreeze } from '../persistent/freeze.js';

/** One fact about a user: a category from the ledger's set and one sentence. */
export interface CategorizedFact {
  readonly category: string;
  readonly fact: string;
}

/** A fact category and what belongs in it (the description is shown to the extraction model). */
export interface NoteCategory {
  readonly name: string;
  readonly description?: string;
}

/** The five default categories, in the order blocks render them. */
export const DEFAULT_CATEGORIES: ReadonlyArray<NoteCategory> = deepFreeze([
  { name: 'People', description: 'names, roles and relationships (e.g. "Daughter Emma is 14")' },
  { name: 'Logistics', description: 'schedules, places, money and other practical circumstances' },
  { name: 'Conflict', description: 'specific disagreements, their triggers and recurring patterns' },
  { name: 'Emotional', description: 'feelings, frustrations, fears and hopes' },
  { name: 'History', description: 'past events, the timeline of the relationship, backstory' },
]);

/**
 * The limits of the ledger, in UTF-16 units (an id's in characters, as its user reads it) and
 * facts. The soft limit is what the extraction prompt asks for (the middle of the 15–20 the
 * design wants); the hard cap is what the parser enforces whatever the model returns; the
 * global cap bounds a user's cross-session profile.
 */
export const NOTES_LIMITS = Object.freeze({
  /** A fact longer than this is clipped, ending in `...`. */
  factLength: 200,
  /** The longest category name. */
  categoryLength: 40,
  /** The longest user or session id, in characters (code points: an emoji is one). */
  idLength: 200,
  /** The number of facts the extraction prompt asks the model to stay within. */
  softLimit: 18,
  /** The most facts one (user, session) list holds; the parser drops the rest. */
  hardCap: 25,
  /** The most facts a user's global profile holds; the least recent fall off. */
  globalCap: 50,
  /** The longest model answer read; a longer one is refused as `too_large` before any parsing. */
  responseLength: 100_000,
  /** The most parser warnings one event keeps; one more line counts the rest. */
  warnings: 20,
  /** The longest failure message an event keeps. */
  messageLength: 500,
} as const);

/** Characters that would let a category name fake a `[Category]` line or a list item. */
const CATEGORY_FORBIDDEN = /[[\]]/gu;

/**
 * A list marker or a `[Category]` tag a model sometimes puts in front of a fact. Never the
 * `[redacted: ...]` that `redactSecrets` writes in place of a secret, nor a tag that would
 * swallow one: markers are stripped after the redaction (before it, a key block's `-----BEGIN`
 * would lose its dashes and its shape), and a fact that opens with a secret still says one was there.
 */
const LEADING_MARKERS = /^(?:[-*•·]+\s*|\[(?!redacted: )(?:(?!\[redacted: )[^\]])*\]\s*)+/u;

/** Trailing sentence punctuation (and spaces: the only whitespace collapsed text holds), ignored when facts are compared. */
const TRAILING_PUNCTUATION = ' .!;,';

/** The most of a fact's text `normalizeFactText` reads. */
const FACT_TEXT_READ = 1_000_000;

/**
 * A fact's text as the ledger keeps it: well-formed Unicode, whitespace- and control-collapsed
 * (so it can never start a new line), its secrets redacted (a model may note a token a user
 * pasted: `base/secrets.ts`), without leading list markers or `[Category]` tags, clipped to 200
 * (never between the halves of a pair). The redaction looks at the collapsed text, as the
 * text is kept and shown (a control or direction character between `Bearer` and its token is a
 * space there), and comes before the clip, so no part of a secret stays past the cut; a secret
 * the cut makes of a text that held none (`ghp_` and 300 letters kept to 200) is redacted too.
 */
export const normalizeFactText = (text: string): string => {
  if (typeof text !== 'string') refuseArgument('the text', text, 'a string');
  // Only its first million characters: far more than any fact the ledger keeps (200) or answer it
  // reads (100,000), and the markers' pattern looped over a run of millions of characters outside
  // Latin-1 overflowed the engine's regexp stack.
  const read = text.length > FACT_TEXT_READ ? clipEnd(text, FACT_TEXT_READ) : text;
  return clipEndRedacted(
    redactSecrets(collapseWhitespace(wellFormed(read))).replace(LEADING_MARKERS, ''),
    NOTES_LIMITS.factLength,
  );
};

/** A category name as the ledger keeps it: well-formed, collapsed, without brackets, at most 40 characters. */
export const normalizeCategoryName = (name: string): string =>
  clipEnd(
    collapseWhitespace(collapseWhitespace(wellFormed(name)).replace(CATEGORY_FORBIDDEN, ' ')),
    NOTES_LIMITS.categoryLength,
  );

/**
 * True for text no fact can be: nothing but punctuation, symbols and ellipses (the `...` of the
 * prompt's own answer template, a `-` or a `…` a model puts where it has nothing to say).
 */
export const isPlaceholder = (text: string): boolean => !/[\p{L}\p{N}]/u.test(text);

/**
 * The comparison key of a fact: its text ignoring case, whitespace and trailing punctuation.
 * A fact that is none, or whose text is no string, is refused with a TypeError.
 */
export const factKey = (fact: Pick<CategorizedFact, 'fact'>): string => {
  if (typeof fact !== 'object' || fact === null || typeof fact.fact !== 'string')
    throw new TypeError(
      `the fact is ${typeof fact === 'object' && fact !== null ? `an object whose fact is ${kindOf(fact.fact)}` : kindOf(fact)}, not a categorized fact ({ category, fact })`,
    );
  return trimEndOf(collapseWhitespace(fact.fact).toLowerCase(), TRAILING_PUNCTUATION);
};

/** `list`, refused with a TypeError naming it when it is no array (null from an unset variable). */
const checkedList = <T>(list: ReadonlyArray<T>, name: string, of: string): ReadonlyArray<T> =>
  Array.isArray(list) ? list : refuseArgument(name, list, `an array of ${of}`);

/** `names`, refused with a TypeError naming it when it is no array of names, or naming the first entry that is no text (a null, a hole). */
const checkedNames = (names: ReadonlyArray<string>, name: string): ReadonlyArray<string> => {
  const list = checkedList(names, name, 'category names');
  for (let index = 0; index < list.length; index += 1)
    if (typeof list[index] !== 'string') refuseArgument(`${name}[${index}]`, list[index], 'a category name (text)');
  return list;
};

/** The names of `categories`, in order. */
export const categoryNames = (categories: ReadonlyArray<NoteCategory>): ReadonlyArray<string> =>
  Array.from(checkedList(categories, 'categories', 'categories'), (category: unknown, index) =>
    typeof (category as Partial<NoteCategory> | null)?.name === 'string'
      ? (category as NoteCategory).name
      : refuseArgument(`categories[${index}]`, category, 'a category ({ name: text, description? })'),
  );

/** The categories named `names`, described by `known` or else by the defaults (a custom name may have no description). */
export const describeCategories = (
  names: ReadonlyArray<string>,
  known: ReadonlyArray<NoteCategory> = DEFAULT_CATEGORIES,
): ReadonlyArray<NoteCategory> => {
  checkedList(known, 'known', 'categories');
  return checkedNames(names, 'names').map(
    (name) =>
      known.find((category) => category.name === name) ??
      DEFAULT_CATEGORIES.find((category) => category.name === name) ?? { name },
  );
};

/**
 * Validates a category set: one to twenty categories, each a name (or `{ name, description }`)
 * that is not empty once normalized, no two equal ignoring case. The five defaults keep their
 * descriptions when given by name.
 */
export const parseCategories = (input: unknown): E.Either<Failure<'invalid_categories'>, ReadonlyArray<NoteCategory>> =>
  pipe(
    !Array.isArray(input) || input.length === 0 || input.length > 20
      ? E.left('categories must be an array of 1 to 20 categories')
      : pipe(input, E.traverseArrayWithIndex(parseCategory), E.chainFirst(noRepeatedCategory)),
    E.mapLeft((message) => failure('invalid_categories', message)),
  );

/**
 * Why categories given as an option cannot be used (what `parseCategories` refuses), or
 * undefined when they can or none are given (undefined, null: options read null as none).
 */
export const unusableCategories = (categories: unknown): string | undefined => {
  if (categories === undefined || categories === null) return undefined;
  const parsed = parseCategories(categories);
  return E.isLeft(parsed) ? parsed.left.message : undefined;
};

const parseCategory = (index: number, entry: unknown): E.Either<string, NoteCategory> => {
  const given = typeof entry === 'string' ? { name: entry } : entry;
  if (!isRecord(given) || typeof given['name'] !== 'string')
    return E.left(`categories[${index}] must be a name or { name, description }, not ${describeKind(entry)}`);
  const name = normalizeCategoryName(given['name']);
  if (name === '') return E.left(`categories[${index}] has an empty name`);
  const description =
    typeof given['description'] === 'string'
      ? collapseWhitespace(given['description'])
      : DEFAULT_CATEGORIES.find((category) => category.name === name)?.description;
  return E.right(description === undefined || description === '' ? { name } : { name, description });
};

/** Names are compared ignoring case: `people` and `People` would be the same tag in a block. */
const noRepeatedCategory = (categories: ReadonlyArray<NoteCategory>): E.Either<string, true> => {
  const names = categories.map((category) => category.name.toLowerCase());
  const repeat = names.findIndex((name, index) => names.indexOf(name) !== index);
  return repeat === -1
    ? E.right(true)
    : E.left(`categories[${repeat}] repeats the category ${JSON.stringify(categories[repeat]!.name)}`);
};

const notFact = (message: string): E.Either<Failure<'invalid_fact'>, never> => E.left(failure('invalid_fact', message));

/**
 * A category a model wrote, quoted for the warning that refuses it: collapsed, then its secrets
 * redacted, then clipped, as a fact's text is (`normalizeFactText`), since the warning is kept
 * in the `notes/extracted` event and a model may put a pasted token in any field.
 */
const quotedCategory = (category: string): string =>
  JSON.stringify(redactedClipEnd(collapseWhitespace(category), NOTES_LIMITS.categoryLength));

/**
 * Validates one fact against the category names `categories`: the category must be one of
 * them (ignoring case; the configured spelling is kept) and the text must not be empty once
 * normalized. Returns a fresh normalized copy, or why the entry is unusable (`invalid_fact`).
 */
export const parseCategorizedFact = (
  input: unknown,
  categories: ReadonlyArray<string>,
): E.Either<Failure<'invalid_fact'>, CategorizedFact> => {
  checkedNames(categories, 'categories');
  if (!isRecord(input)) return notFact(`expected { "category", "fact" }, not ${describeKind(input)}`);
  const { category, fact } = input;
  if (typeof category !== 'string') return notFact(`category must be a string, not ${describeKind(category)}`);
  if (typeof fact !== 'string') return notFact(`fact must be a string, not ${describeKind(fact)}`);
  const wanted = normalizeCategoryName(category).toLowerCase();
  const known = categories.find((name) => name.toLowerCase() === wanted);
  if (known === undefined)
    return notFact(`category ${quotedCategory(category)} is not one of ${categories.join(', ')}`);
  const text = normalizeFactText(fact);
  if (text === '') return notFact('fact is empty');
  return isPlaceholder(text) ? notFact('fact is a placeholder, not a fact') : E.right({ category: known, fact: text });
};

/** The result of `keepValidFacts`: the usable facts, and one line per entry left out. */
export interface ValidatedFacts {
  readonly facts: ReadonlyArray<CategorizedFact>;
  readonly warnings: ReadonlyArray<string>;
}

/** The most dropped facts a warning names; the rest are counted. */
const NAMED_DROPS = 5;

/** The warning for facts dropped past a cap, naming the first few (oldest first); `of` says which facts (`of other categories`). */
export const capWarning = (dropped: ReadonlyArray<CategorizedFact>, max: number, of = ''): string => {
  const named = dropped.slice(0, NAMED_DROPS).map((fact) => JSON.stringify(clipEndRedacted(fact.fact, 60)));
  const rest = dropped.length - named.length;
  return `${dropped.length} ${dropped.length === 1 ? 'fact' : 'facts'}${of === '' ? '' : ` ${of}`} over the cap of ${max} dropped, the oldest first: ${named.join(', ')}${rest > 0 ? ` and ${rest} more` : ''}`;
};

/**
 * The facts of a list past the cap, newest kept: a model lists the facts it adds after the ones
 * it keeps, so the earliest go first; of those, facts carried over from `previous` (by
 * `factKey`) go before new ones, so a model that appends is always heard. Carried-over facts go
 * by the time `previous` says each was first told (`NotedFact.at`; one without counts as told
 * with the list, after every one with), the earliest listed first among equals: a model that
 * lists by category would else drop a fact told a message ago before one told hours earlier.
 */
export const capNewest = (
  facts: ReadonlyArray<CategorizedFact>,
  max: number,
  previous: ReadonlyArray<NotedFact> = [],
): { readonly kept: ReadonlyArray<CategorizedFact>; readonly dropped: ReadonlyArray<CategorizedFact> } => {
  const over = facts.length - max;
  if (over <= 0) return { kept: facts, dropped: [] };
  const toldAt = new Map(
    previous.map((fact) => [factKey(fact), typeof fact.at === 'number' ? fact.at : Number.POSITIVE_INFINITY]),
  );
  const told = facts.map((fact) => toldAt.get(factKey(fact)));
  // Carried-over facts first, least recently told first; then, if that is not enough, the earliest new ones.
  const carried = facts
    .map((_, index) => index)
    .filter((index) => told[index] !== undefined)
    .sort((a, b) => told[a]! - told[b]! || a - b);
  const fresh = facts.map((_, index) => index).filter((index) => told[index] === undefined);
  const gone = [...carried, ...fresh].slice(0, over);
  const drop = new Set(gone);
  return { kept: facts.filter((_, index) => !drop.has(index)), dropped: gone.map((index) => facts[index]!) };
};

/** Why `distinctFacts` left an entry out: it is no valid fact, or it repeats the entry at `first`. */
export type LeftOut =
  { readonly kind: 'invalid'; readonly reason: string } | { readonly kind: 'repeat'; readonly first: number };

/**
 * The entries of `entries` that are valid facts of `categories` and repeat no earlier one (by
 * `factKey`), in order, each with the entry it was read from; every other entry is told to
 * `leftOut` with its index and why.
 */
export const distinctFacts = (
  entries: ReadonlyArray<unknown>,
  categories: ReadonlyArray<string>,
  leftOut: (index: number, problem: LeftOut, entry: unknown) => void,
): Array<{ readonly fact: CategorizedFact; readonly entry: unknown }> => {
  const facts: Array<{ readonly fact: CategorizedFact; readonly entry: unknown }> = [];
  const seen = new Map<string, number>();
  // Every index, a hole's too (forEach would skip it): a hole is an entry left out, and said.
  for (let index = 0; index < entries.length; index += 1) {
    const entry = entries[index];
    const parsed = parseCategorizedFact(entry, categories);
    if (E.isLeft(parsed)) {
      leftOut(index, { kind: 'invalid', reason: parsed.left.message }, entry);
      continue;
    }
    const key = factKey(parsed.right);
    const first = seen.get(key);
    if (first !== undefined) {
      leftOut(index, { kind: 'repeat', first }, entry);
      continue;
    }
    seen.set(key, index);
    facts.push({ fact: parsed.right, entry });
  }
  return facts;
};

/**
 * The valid, distinct facts of `entries`, at most `max` of them, in order; past the cap the
 * newest stay (`capNewest`, the facts carried over from `previous` by the time each was first told).
 * Duplicates (by `factKey`) keep their first occurrence; every entry left out gets a warning
 * naming its index, and the facts over the cap one warning naming them.
 */
export const keepValidFacts = (
  entries: ReadonlyArray<unknown>,
  categories: ReadonlyArray<string>,
  max: number,
  previous: ReadonlyArray<NotedFact> = [],
): ValidatedFacts => {
  checkedNames(categories, 'categories');
  checkedList(previous, 'previous', 'categorized facts');
  const warnings: string[] = [];
  const facts = distinctFacts(checkedList(entries, 'entries', 'entries'), categories, (index, problem) =>
    warnings.push(
      `entry ${index} dropped: ${problem.kind === 'invalid' ? problem.reason : `it repeats entry ${problem.first}`}`,
    ),
  ).map(({ fact }) => fact);
  const { kept, dropped } = capNewest(facts, max, previous);
  if (dropped.length > 0) warnings.push(capWarning(dropped, max));
  return { facts: kept, warnings };
};

/** True when two fact lists hold the same facts in the same order, to the letter. */
export const sameFacts = (a: ReadonlyArray<CategorizedFact>, b: ReadonlyArray<CategorizedFact>): boolean =>
  a.length === b.length && a.every((fact, i) => fact.category === b[i]!.category && fact.fact === b[i]!.fact);

/**
 * True when `id` holds at most `NOTES_LIMITS.idLength` characters, counted as code points (an
 * emoji is one, a lone surrogate one too), not UTF-16 units: every store keeps such an id
 * (PostgreSQL's 800 bytes of UTF-8 hold 200 of the widest). Only a text of 201 to 400 units is
 * counted.
 */
const isShortEnough = (id: string): boolean =>
  id.length <= NOTES_LIMITS.idLength ||
  (id.length <= 2 * NOTES_LIMITS.idLength && [...id].length <= NOTES_LIMITS.idLength);

/** A usable user or session id: a string of at most 200 characters (code points) that is not blank (nor invisible characters only). */
export const isNotesId = (value: unknown): value is string =>
  typeof value === 'string' && isShortEnough(value) && !isBlank(value);

/**
 * An id a tracker takes from its caller: a usable one (`isNotesId`) that every store can keep,
 * so without U+0000 or an unpaired surrogate (PostgreSQL refuses both in text and JSON; a
 * message under such an id could never be saved nor queued, and would be tried again forever).
 */
export const isStorableNotesId = (value: unknown): value is string =>
  isNotesId(value) && !value.includes('\u0000') && wellFormed(value) === value;

/** Why a model call gave nothing usable: no answer in time, a failed call, an answer cut at its token limit, an unusable answer. */
export type ModelFailureCode = 'timeout' | 'model_error' | 'truncated' | 'invalid_response';

/** A model call that produced no list: a tagged failure. */
export type ModelFailure = Failure<ModelFailureCode>;

/** An extraction returned the user's complete list for the session (`applyExtraction`). */
export interface NotesExtractedEvent {
  readonly type: 'notes/extracted';
  readonly user: string;
  readonly session: string;
  readonly facts: ReadonlyArray<CategorizedFact>;
  readonly at: number;
  /** Epoch milliseconds of the latest user message the extraction covered (absent: `at`). */
  readonly messagesAt?: number;
  /** The entries the parser dropped, for the record. */
  readonly warnings?: ReadonlyArray<string>;
  /**
   * Present when the extraction was made without the session's stored record, whose load had
   * failed (without leases): the keys (`factKey`) of the facts its model was shown. Applied again
   * onto that record once loaded, it keeps the stored facts its model was not shown (`againstStored`).
   */
  readonly blind?: ReadonlyArray<string>;
}

/** An extraction failed or timed out; the list stays as it was. */
export interface NotesExtractionFailedEvent {
  readonly type: 'notes/extractionFailed';
  readonly user: string;
  readonly session: string;
  readonly code: ModelFailureCode;
  readonly message: string;
  readonly at: number;
}

/** A session's facts were merged into the user's profile at the end of a stage (`consolidateSession`). */
export interface NotesSessionConsolidatedEvent {
  readonly type: 'notes/sessionConsolidated';
  readonly user: string;
  readonly session: string;
  readonly at: number;
}

/** The model rewrote a user's profile (`rewriteProfile`). */
export interface NotesProfileRewrittenEvent {
  readonly type: 'notes/profileRewritten';
  readonly user: string;
  readonly facts: ReadonlyArray<CategorizedFact>;
  readonly at: number;
  readonly warnings?: ReadonlyArray<string>;
}

/** A model-backed profile rewrite failed; the profile stays as the deterministic merge left it. */
export interface NotesProfileRewriteFailedEvent {
  readonly type: 'notes/profileRewriteFailed';
  readonly user: string;
  readonly code: ModelFailureCode;
  readonly message: string;
  readonly at: number;
}

/**
 * The notes store held other notes than the ledger for a user (another process saved them):
 * the user's notes in `session` and their profile are now these, as read (and with this
 * process's unsaved changes applied again).
 */
export interface NotesLoadedEvent {
  readonly type: 'notes/loaded';
  readonly user: string;
  readonly session: string;
  readonly notes?: SessionNotes;
  readonly profile?: GlobalFacts;
}

/**
 * A tracker let go of one user's notes in one session (or, with no session, of everything it
 * held of the user): the store keeps them, and a later message loads them again. Also recorded
 * when a save of a session the store held no record of was fenced, and when the store refused a
 * save of a session as `invalid_input`: its work is dropped.
 */
export interface NotesReleasedEvent {
  readonly type: 'notes/released';
  readonly user: string;
  readonly session?: string;
}

/**
 * The store refused a save of a user's profile as `invalid_input`: the tracker let go of the
 * profile (`dropped`, unless a change made since the refused save touches it), and the sessions
 * named in `unmerged` (their merge dropped with it) are no longer marked merged. No session is
 * let go of, and a later message loads the profile again.
 */
export interface NotesProfileRefusedEvent {
  readonly type: 'notes/profileRefused';
  readonly user: string;
  readonly dropped: boolean;
  readonly unmerged: ReadonlyArray<string>;
}

/** A fact of a session's list, with the time it was first told when that is earlier than the list's. */
export interface NotedFact extends CategorizedFact {
  /**
   * Epoch milliseconds of the messages it was first told in, when the list carries it over from
   * earlier ones (absent: the list's own time, `listTimeOf`): a fact listed again as it stands is
   * not told again, and must not outrank a correction told meanwhile.
   */
  readonly at?: number;
}

/** One user's facts in one session. */
export interface SessionNotes {
  /** The list the last successful extraction returned, in the model's order. */
  readonly facts: ReadonlyArray<NotedFact>;
  /** Epoch milliseconds of the extraction that last changed the list. */
  readonly updatedAt: number;
  /** True once the list as it stands has been merged into the user's profile. */
  readonly consolidated: boolean;
  /** Epoch milliseconds of the latest user message the list covers (absent: as `updatedAt`): how new its facts are. */
  readonly messagesAt?: number;
  /** Epoch milliseconds of the session's first merge into the profile: it counts once in `sessionCount`. */
  readonly mergedAt?: number;
}

/** Epoch milliseconds of the latest user message a session's list covers: `messagesAt`, else `updatedAt`. */
export const listTimeOf = (notes: Pick<SessionNotes, 'updatedAt' | 'messagesAt'>): number =>
  notes.messagesAt ?? notes.updatedAt;

/** Epoch milliseconds of the messages a fact of `notes` was first told in: its own `at`, else the list's time. */
export const toldTimeOf = (notes: Pick<SessionNotes, 'updatedAt' | 'messagesAt'>, fact: NotedFact): number =>
  fact.at ?? listTimeOf(notes);

/** A fact of a profile, with where it came from. */
export interface ProfileFact extends CategorizedFact {
  /** The session whose merge put it there (absent: a model's rewrite, or a profile saved before sessions were named). */
  readonly session?: string;
  /** Epoch milliseconds of the messages it was told in: newer facts replace older ones about the same thing. */
  readonly at?: number;
}

/** A user's profile from earlier sessions. */
export interface GlobalFacts {
  /** Least recent first (by the time of the messages they were told in); at most 50. */
  readonly facts: ReadonlyArray<ProfileFact>;
  /** Epoch milliseconds of the last consolidation that changed the profile (whole, see `profileTime`). */
  readonly consolidatedAt: number;
  /** The sessions whose facts changed the profile. */
  readonly sessionCount: number;
}

/** The latest time a `Date` holds, and so an ISO string says: what lies beyond is written as that (no clock reaches it). */
const LAST_DATE = 8.64e15;

/**
 * A profile's `consolidatedAt` for the time `at`: whole milliseconds (toward zero, -0 as 0) held
 * within what a `Date` holds, which is what the ISO string it leaves the library as says. A
 * clock with a fraction (`performance.timeOrigin + performance.now()`) or in nanoseconds would
 * otherwise give a profile that its saved section and its store record read back as another.
 */
export const profileTime = (at: number): number => Math.min(Math.max(Math.trunc(at), -LAST_DATE), LAST_DATE) + 0;

/** Every ledger change and every failed model call, as serializable data: replaying them rebuilds the ledger. */
export type NotesEvent =
  | NotesExtractedEvent
  | NotesExtractionFailedEvent
  | NotesSessionConsolidatedEvent
  | NotesProfileRewrittenEvent
  | NotesProfileRewriteFailedEvent
  | NotesLoadedEvent
  | NotesReleasedEvent
  | NotesProfileRefusedEvent;
