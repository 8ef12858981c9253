/**
 * The ledger's section of the saved-state file (`notes`): sessions and profiles as sorted
 * lists, so the same ledger always writes the same text. Decoding is a zod schema over every
 * field and fact (the facts checked against the section's own categories), and names the
 * first problem by its path; it never yields a half-read ledger. A notes store's record is read
 * leniently instead (`readSessionRecord`, `readProfileRecord`): what is stored must not be lost
 * for one entry this tracker cannot use.
 */
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import { z } from 'zod';
import { deepFreeze } from '../persistent/freeze.js';
import * as PMap from '../persistent/persistentMap.js';
import { type Fields, isRecord } from '../base/record.js';
import { type Failure, failure } from '../base/failure.js';
import { describeIssue, describeKind } from '../base/schema.js';
import { parseEventTime } from '../base/time.js';
import type { GlobalFacts } from './global.js';
import {
  checkedLedger,
  type NotesLedger,
  selectSessions,
  selectUserIds,
  selectUserNotes,
  type SessionNotes,
  type UserNotes,
} from './ledger.js';
import {
  capNewest,
  type CategorizedFact,
  capWarning,
  categoryNames,
  distinctFacts,
  factKey,
  isNotesId,
  type NotedFact,
  NOTES_LIMITS,
  parseCategories,
  parseCategorizedFact,
  type ProfileFact,
  profileTime,
} from './model.js';
import type { JsonValue } from './store.js';

/** One user's facts in one session, as saved. */
export interface SavedSessionNotes extends SessionNotes {
  readonly user: string;
  readonly session: string;
}

/**
 * One user's profile as it leaves the library (the saved section, a store record: the JSON a
 * chat backend keeps as the seed's `User.globalFacts`): `consolidatedAt` is an ISO 8601 string,
 * as the seed names it; in the ledger it is epoch milliseconds.
 */
export interface StoredProfile extends Omit<GlobalFacts, 'consolidatedAt'> {
  readonly consolidatedAt: string;
}

/** One user's profile, as saved. */
export interface SavedProfile extends StoredProfile {
  readonly user: string;
}

/** The `notes` section of a saved state. */
export interface SavedNotes {
  readonly categories: ReadonlyArray<string>;
  /** Sorted by user, then session. */
  readonly sessions: ReadonlyArray<SavedSessionNotes>;
  /** Sorted by user. */
  readonly profiles: ReadonlyArray<SavedProfile>;
}

/** Epoch milliseconds as an ISO 8601 string. */
const isoTime = (ms: number): string => new Date(profileTime(ms)).toISOString();

/** A session's fact as saved and read: its text, and its own time only where it has one. */
const notedFact = ({ category, fact, at }: NotedFact): NotedFact => ({
  category,
  fact,
  ...(at === undefined ? {} : { at }),
});

/** One user's notes in one session as they are saved and stored (fields in a fixed order). */
export const encodeSessionNotes = (notes: SessionNotes): SessionNotes => ({
  facts: notes.facts.map(notedFact),
  updatedAt: notes.updatedAt,
  consolidated: notes.consolidated,
  ...(notes.messagesAt === undefined ? {} : { messagesAt: notes.messagesAt }),
  ...(notes.mergedAt === undefined ? {} : { mergedAt: notes.mergedAt }),
});

/** One user's profile as it leaves the library: facts with where they came from, the time as an ISO string. */
export const encodeProfile = (profile: GlobalFacts): StoredProfile => ({
  facts: profile.facts.map(({ category, fact, session, at }) => ({
    category,
    fact,
    ...(session === undefined ? {} : { session }),
    ...(at === undefined ? {} : { at }),
  })),
  consolidatedAt: isoTime(profile.consolidatedAt),
  sessionCount: profile.sessionCount,
});

/** The ledger as the `notes` section of a saved state (deterministic). */
export const encodeNotes = (ledger: NotesLedger): SavedNotes => ({
  categories: checkedLedger(ledger).categories,
  sessions: selectSessions(ledger).map(({ user, session, notes }) => ({ user, session, ...encodeSessionNotes(notes) })),
  profiles: selectUserIds(ledger).flatMap((user) => {
    const profile = selectUserNotes(ledger, user)?.profile;
    return profile === undefined ? [] : [{ user, ...encodeProfile(profile) }];
  }),
});

/** Where a profile fact came from, when the entry says so: its session and the time it was told. */
const origin = (entry: unknown): { session?: string; at?: number } => {
  if (!isRecord(entry)) return {};
  const { session, at } = entry;
  return {
    ...(isNotesId(session) ? { session } : {}),
    ...(typeof at === 'number' && Number.isFinite(at) ? { at } : {}),
  };
};

/** A fact list of the section: each entry validated against the ledger's categories, no two alike, at most `cap`. */
const factsSchema = (categories: ReadonlyArray<string>, cap: number) =>
  z
    .array(
      z.unknown().transform((entry, context) =>
        pipe(
          parseCategorizedFact(entry, categories),
          E.map((fact): ProfileFact => ({ ...fact, ...origin(entry) })),
          E.getOrElseW(({ message }) => {
            context.addIssue({ code: 'custom', message: `: ${message}` });
            return z.NEVER;
          }),
        ),
      ),
      { error: 'is not an array' },
    )
    .max(cap, { error: (issue) => `holds ${(issue.input as unknown[]).length} facts, more than the cap of ${cap}` })
    .superRefine((facts, context) => {
      const seen = new Set<string>();
      facts.forEach((fact, index) => {
        if (seen.has(factKey(fact)))
          context.addIssue({ code: 'custom', path: [index], message: 'repeats an earlier fact' });
        seen.add(factKey(fact));
      });
    });

const ID = `an id of 1 to ${NOTES_LIMITS.idLength} characters`;
/**
 * An id of 1 to 200 characters. One that no store could keep (U+0000, an unpaired surrogate) is
 * still read: no replay or tracker of this version saves one, and an earlier version's file that
 * holds one keeps its fact store and its other notes readable.
 */
const idSchema = z.custom<string>(isNotesId, {
  error: (issue) =>
    issue.input === undefined ? `is missing: ${ID}` : `must be ${ID}, not ${describeKind(issue.input)}`,
});
const timeSchema = z.number({ error: 'is not a finite time' });
const optionalTime = timeSchema.optional();
/**
 * A time as `isoTime` writes it, whatever the clock said: the string `toISOString` gives (six-digit
 * years before 0000 and after 9999 included), another ISO 8601 string, or epoch milliseconds, as
 * sections written before held them.
 */
const storedTime = (value: unknown): E.Either<string, number> => {
  if (typeof value === 'number')
    return Number.isFinite(value) ? E.right(value) : E.left('not a finite number of milliseconds');
  const written = typeof value === 'string' ? Date.parse(value) : Number.NaN;
  return Number.isFinite(written) && new Date(written).toISOString() === value
    ? E.right(written)
    : E.mapLeft(({ message }: { readonly message: string }) => message)(parseEventTime(value));
};

/**
 * A time written as an ISO 8601 string (or, as sections written before, epoch milliseconds), read
 * as a profile keeps it (`profileTime`), so what is read back is written again the same.
 */
const isoTimeSchema = z.unknown().transform((value, context) =>
  pipe(
    storedTime(value),
    E.map(profileTime),
    E.getOrElseW(() => {
      context.addIssue({ code: 'custom', message: 'is not a time (an ISO 8601 string)' });
      return z.NEVER;
    }),
  ),
);

/** Reports the entries after the first that `keyOf` gives an already seen key, as `repeats ...`. */
const unique =
  <T>(keyOf: (entry: T) => string, repeats: (entry: T) => string) =>
  (entries: ReadonlyArray<T>, context: z.core.$RefinementCtx<ReadonlyArray<T>>): void => {
    const seen = new Set<string>();
    entries.forEach((entry, index) => {
      const key = keyOf(entry);
      if (seen.has(key)) context.addIssue({ code: 'custom', path: [index], message: repeats(entry) });
      seen.add(key);
    });
  };

/** The fields of one user's notes in one session, their facts in `categories`. */
const sessionFields = (categories: ReadonlyArray<string>) => ({
  updatedAt: timeSchema,
  consolidated: z.boolean({ error: 'is not true or false' }),
  messagesAt: optionalTime,
  mergedAt: optionalTime,
  facts: factsSchema(categories, NOTES_LIMITS.hardCap),
});

/** The fields of one user's profile, its facts in `categories`. */
const profileFields = (categories: ReadonlyArray<string>) => ({
  consolidatedAt: isoTimeSchema,
  sessionCount: z.int({ error: 'is not a whole number 0 or more' }).min(0, {
    error: 'is not a whole number 0 or more',
  }),
  facts: factsSchema(categories, NOTES_LIMITS.globalCap),
});

/** The section after its categories: sessions and profiles, their facts in those categories. */
const sectionSchema = (categories: ReadonlyArray<string>) =>
  z.object({
    sessions: z
      .array(
        z.object({ user: idSchema, session: idSchema, ...sessionFields(categories) }, { error: 'is not an object' }),
        {
          error: 'is not an array',
        },
      )
      .superRefine(
        unique(
          ({ user, session }) => JSON.stringify([user, session]),
          ({ user, session }) => `repeats the session ${JSON.stringify(session)} of ${JSON.stringify(user)}`,
        ),
      ),
    profiles: z
      .array(z.object({ user: idSchema, ...profileFields(categories) }, { error: 'is not an object' }), {
        error: 'is not an array',
      })
      .superRefine(
        unique(
          ({ user }) => user,
          ({ user }) => `repeats the profile of ${JSON.stringify(user)}`,
        ),
      ),
  });

type Section = z.infer<ReturnType<typeof sectionSchema>>;

const parseSection =
  (value: Fields) =>
  (categories: ReadonlyArray<string>): E.Either<string, { categories: ReadonlyArray<string>; section: Section }> => {
    const parsed = sectionSchema(categories).safeParse(value);
    return parsed.success
      ? E.right({ categories, section: parsed.data })
      : E.left(describeIssue(['notes'], parsed.error.issues[0]!));
  };

/** Why a saved section or a stored record cannot be read: the first problem, by its path. */
export type NotesDecodeFailure = Failure<'invalid_notes'>;

const invalid = (message: string): NotesDecodeFailure => failure('invalid_notes', message);

/** The decoded section as a ledger: each user's sessions and profile under their ids. */
const toLedger = ({ categories, section }: { categories: ReadonlyArray<string>; section: Section }): NotesLedger => {
  const users = new Map<string, { sessions: Array<readonly [string, SessionNotes]>; profile?: GlobalFacts }>();
  const notesOf = (user: string) => users.get(user) ?? users.set(user, { sessions: [] }).get(user)!;
  for (const { user, session, updatedAt, consolidated, messagesAt, mergedAt, facts } of section.sessions)
    notesOf(user).sessions.push([session, sessionNotes({ facts, updatedAt, consolidated, messagesAt, mergedAt })]);
  for (const { user, consolidatedAt, sessionCount, facts } of section.profiles)
    notesOf(user).profile = { facts, consolidatedAt, sessionCount };
  const entries = [...users].map(([user, { sessions, profile }]): readonly [string, UserNotes] => [
    user,
    { sessions: PMap.fromEntries(sessions), ...(profile === undefined ? {} : { profile }) },
  ]);
  return deepFreeze({ categories, users: PMap.fromEntries<UserNotes>(entries) });
};

/** Decodes the `notes` section of a saved state into a ledger, or says precisely why it cannot. */
export const decodeNotes = (value: unknown): E.Either<NotesDecodeFailure, NotesLedger> =>
  pipe(
    isRecord(value) ? E.right(value) : E.left('notes is not an object'),
    E.chain((section) =>
      pipe(
        parseCategories(section['categories']),
        E.bimap(({ message }) => `notes.categories: ${message}`, categoryNames),
        E.chain(parseSection(section)),
      ),
    ),
    E.bimap(invalid, toLedger),
  );

/** Decodes one record with `fields`, naming the first problem under `root`. */
const decodeRecord = <T>(schema: z.ZodType<T>, root: string, value: unknown): E.Either<NotesDecodeFailure, T> => {
  const parsed = schema.safeParse(value);
  return parsed.success ? E.right(parsed.data) : E.left(invalid(describeIssue([root], parsed.error.issues[0]!)));
};

/**
 * Session notes as decoded: the optional times only where given, a fact's own among them (a
 * record saved before facts had times holds none: each counts as told at the list's time).
 */
const sessionNotes = (decoded: {
  facts: ReadonlyArray<ProfileFact>;
  updatedAt: number;
  consolidated: boolean;
  messagesAt?: number | undefined;
  mergedAt?: number | undefined;
}): SessionNotes => ({
  facts: decoded.facts.map(notedFact),
  updatedAt: decoded.updatedAt,
  consolidated: decoded.consolidated,
  ...(decoded.messagesAt === undefined ? {} : { messagesAt: decoded.messagesAt }),
  ...(decoded.mergedAt === undefined ? {} : { mergedAt: decoded.mergedAt }),
});

/** One user's notes in one session as a store record (a JSON value). */
export const encodeSessionRecord = (notes: SessionNotes): JsonValue =>
  encodeSessionNotes(notes) as unknown as JsonValue;

/** A store record of one user's notes in one session, its facts checked against `categories` (frozen). */
export const decodeSessionRecord = (
  value: unknown,
  categories: ReadonlyArray<string>,
): E.Either<NotesDecodeFailure, SessionNotes> =>
  E.map((decoded: Parameters<typeof sessionNotes>[0]) => deepFreeze(sessionNotes(decoded)))(
    decodeRecord(z.object(sessionFields(categories), { error: 'is not an object' }), 'session', value),
  );

/** One user's profile as a store record (a JSON value, its time an ISO string). */
export const encodeProfileRecord = (profile: GlobalFacts): JsonValue => encodeProfile(profile) as unknown as JsonValue;

/** A store record of one user's profile, its facts checked against `categories` (frozen). */
export const decodeProfileRecord = (
  value: unknown,
  categories: ReadonlyArray<string>,
): E.Either<NotesDecodeFailure, GlobalFacts> =>
  E.map((profile: GlobalFacts) => deepFreeze(profile))(
    decodeRecord(z.object(profileFields(categories), { error: 'is not an object' }), 'profile', value),
  );

/** A store record as this tracker reads it: what it can use, and one line per fact it left out. */
export interface ReadRecord<T> {
  readonly record: T;
  readonly warnings: ReadonlyArray<string>;
  /**
   * The entries that are facts of a category this tracker does not know (another tracker's), as
   * stored: not used, but written back with the record, so no tracker deletes another's facts.
   */
  readonly foreign: ReadonlyArray<JsonValue>;
}

/** True for an entry that would be a fact if its category were known: another tracker's. */
const isForeignFact = (entry: unknown): boolean =>
  isRecord(entry) &&
  typeof entry['category'] === 'string' &&
  E.isRight(parseCategorizedFact(entry, [entry['category']]));

/**
 * The facts of a stored record, read leniently: a fact of a category not in `categories` is
 * kept aside as stored (`foreign`), and an entry that is no valid fact or repeats one is left
 * out, each with a warning, as the parser drops one from a model's list, instead of losing the
 * list; past `cap`, `trim` chooses what falls off.
 */
const readFacts = (
  entries: ReadonlyArray<unknown>,
  path: string,
  categories: ReadonlyArray<string>,
  cap: number,
  trim: (facts: ReadonlyArray<ProfileFact>, cap: number) => ReadonlyArray<ProfileFact>,
): ReadRecord<ReadonlyArray<ProfileFact>> => {
  const warnings: string[] = [];
  const foreign: JsonValue[] = [];
  const facts: ProfileFact[] = distinctFacts(entries, categories, (index, problem, entry) => {
    if (problem.kind === 'repeat')
      return void warnings.push(`${path}[${index}] left out: it repeats ${path}[${problem.first}]`);
    if (!isForeignFact(entry)) return void warnings.push(`${path}[${index}] left out: ${problem.reason}`);
    foreign.push(entry as JsonValue);
    warnings.push(`${path}[${index}] kept as stored, not used: ${problem.reason}`);
  }).map(({ fact, entry }) => ({ ...fact, ...origin(entry) }));
  const kept = facts.length > cap ? trim(facts, cap) : facts;
  const dropped = facts.filter((fact) => !kept.includes(fact));
  return {
    record: kept,
    warnings: dropped.length > 0 ? [...warnings, `${path}: ${capWarning(dropped, cap)}`] : warnings,
    foreign,
  };
};

/** A session's list past the hard cap: the newest stay, the earliest listed go first (as `capNewest`). */
const trimSession = (facts: ReadonlyArray<ProfileFact>, cap: number): ReadonlyArray<ProfileFact> =>
  capNewest(facts, cap).kept;

/** The indexes of `times` (a fact's `at`, if any) from the least recently confirmed on, the earliest listed first among equals. */
const leastRecentFirst = (times: ReadonlyArray<number | undefined>): ReadonlyArray<number> =>
  times
    .map((at, index) => ({ at: at ?? Number.NEGATIVE_INFINITY, index }))
    .sort((a, b) => a.at - b.at || a.index - b.index)
    .map(({ index }) => index);

/** A profile past its cap: the least recently confirmed fall off, the rest keep their order. */
const trimProfile = (facts: ReadonlyArray<ProfileFact>, cap: number): ReadonlyArray<ProfileFact> => {
  const gone = new Set(leastRecentFirst(facts.map(({ at }) => at)).slice(0, facts.length - cap));
  return facts.filter((_, index) => !gone.has(index));
};

/** Which of a record's lists: a session's facts or a profile's. */
export type RecordFacts = 'session.facts' | 'profile.facts';

/** The entries of other categories a record written back keeps, and the line reporting those it drops. */
export interface ForeignWithin {
  readonly kept: ReadonlyArray<JsonValue>;
  readonly warning: string | undefined;
}

/**
 * The entries of other trackers' categories that fit in a record written back beside `own`
 * facts of this tracker's, so the record never holds more than its cap (25 for a session, 50 for
 * a profile). This tracker's list stays whole, as its ledger holds it; the others fill the room
 * left, dropped as their own tracker trims a list: a session's earliest listed first, a profile's
 * least recently confirmed first.
 */
export const foreignWithin = (foreign: ReadonlyArray<JsonValue>, own: number, path: RecordFacts): ForeignWithin => {
  const cap = path === 'session.facts' ? NOTES_LIMITS.hardCap : NOTES_LIMITS.globalCap;
  const over = foreign.length - Math.max(0, cap - own);
  if (over <= 0) return { kept: foreign, warning: undefined };
  const order =
    path === 'session.facts'
      ? foreign.map((_, index) => index)
      : leastRecentFirst(foreign.map((entry) => origin(entry).at));
  const gone = order.slice(0, over);
  const goneSet = new Set(gone);
  const asFact = (entry: JsonValue): CategorizedFact => ({
    category: isRecord(entry) && typeof entry['category'] === 'string' ? entry['category'] : '',
    fact: isRecord(entry) && typeof entry['fact'] === 'string' ? entry['fact'] : '',
  });
  return {
    kept: foreign.filter((_, index) => !goneSet.has(index)),
    warning: `${path}: ${capWarning(
      gone.map((index) => asFact(foreign[index]!)),
      cap,
      'of other categories',
    )}`,
  };
};

/** The fields of a stored record besides its facts, which must be an array (their entries are read one by one). */
const looseFacts = { facts: z.array(z.unknown(), { error: 'is not an array' }) };

/**
 * A store record of one user's notes in one session, read leniently (frozen): the facts this
 * tracker can use, the others named in `warnings`; a `Left` only for a record it cannot read at all.
 */
export const readSessionRecord = (
  value: unknown,
  categories: ReadonlyArray<string>,
): E.Either<NotesDecodeFailure, ReadRecord<SessionNotes>> => {
  const { facts: _strict, ...fields } = sessionFields(categories);
  return E.map(({ facts, ...rest }: { facts: unknown[] } & Omit<Parameters<typeof sessionNotes>[0], 'facts'>) => {
    const read = readFacts(facts, 'session.facts', categories, NOTES_LIMITS.hardCap, trimSession);
    return { ...read, record: deepFreeze(sessionNotes({ ...rest, facts: read.record })) };
  })(decodeRecord(z.object({ ...fields, ...looseFacts }, { error: 'is not an object' }), 'session', value));
};

/**
 * A store record of one user's profile, read leniently (frozen): the facts this tracker can use,
 * the others named in `warnings`, `sessionCount` as stored; a `Left` only for a record it cannot read at all.
 */
export const readProfileRecord = (
  value: unknown,
  categories: ReadonlyArray<string>,
): E.Either<NotesDecodeFailure, ReadRecord<GlobalFacts>> => {
  const { facts: _strict, ...fields } = profileFields(categories);
  return E.map(
    ({ facts, consolidatedAt, sessionCount }: { facts: unknown[]; consolidatedAt: number; sessionCount: number }) => {
      const read = readFacts(facts, 'profile.facts', categories, NOTES_LIMITS.globalCap, trimProfile);
      return { ...read, record: deepFreeze({ facts: read.record, consolidatedAt, sessionCount }) };
    },
  )(decodeRecord(z.object({ ...fields, ...looseFacts }, { error: 'is not an object' }), 'profile', value));
};
