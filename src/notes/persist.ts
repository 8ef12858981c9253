/**
 * The ledger's section of the saved-state file (`notes`): sessions and profiles as sorted
 * lists, so the same ledger always writes the same text. Decoding is a zod schema over every
 * field and fact (the facts checked against the section's own categories), and names the
 * first problem by its path; it never yields a half-read ledger.
 */
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import { z } from 'zod';
import { deepFreeze } from '../persistent/freeze.js';
import * as PMap from '../persistent/persistentMap.js';
import { type Fields, isRecord } from '../base/record.js';
import { type Failure, failure } from '../base/failure.js';
import { describeIssue } from '../base/schema.js';
import type { GlobalFacts } from './global.js';
import {
  type NotesLedger,
  selectSessions,
  selectUserIds,
  selectUserNotes,
  type SessionNotes,
  storedKey,
  type UserNotes,
} from './ledger.js';
import {
  categoryNames,
  describeJson,
  factKey,
  isNotesId,
  NOTES_LIMITS,
  parseCategories,
  parseCategorizedFact,
} from './model.js';
import type { JsonValue } from './store.js';

/** One user's facts in one session, as saved. */
export interface SavedSessionNotes extends SessionNotes {
  readonly user: string;
  readonly session: string;
}

/** One user's profile, as saved. */
export interface SavedProfile extends GlobalFacts {
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

/** The ledger as the `notes` section of a saved state (deterministic). */
export const encodeNotes = (ledger: NotesLedger): SavedNotes => ({
  categories: ledger.categories,
  sessions: selectSessions(ledger).map(({ user, session, notes }) => ({ user, session, ...notes })),
  profiles: selectUserIds(ledger).flatMap((user) => {
    const profile = selectUserNotes(ledger, user)?.profile;
    return profile === undefined ? [] : [{ user, ...profile }];
  }),
});

/** A fact list of the section: each entry validated against the ledger's categories, no two alike, at most `cap`. */
const factsSchema = (categories: ReadonlyArray<string>, cap: number) =>
  z
    .array(
      z.unknown().transform((entry, context) =>
        pipe(
          parseCategorizedFact(entry, categories),
          E.getOrElseW((reason) => {
            context.addIssue({ code: 'custom', message: `: ${reason}` });
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
const idSchema = z.custom<string>(isNotesId, {
  error: (issue) =>
    issue.input === undefined ? `is missing: ${ID}` : `must be ${ID}, not ${describeJson(issue.input)}`,
});
const timeSchema = z.number({ error: 'is not a finite time' });

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
  facts: factsSchema(categories, NOTES_LIMITS.hardCap),
});

/** The fields of one user's profile, its facts in `categories`. */
const profileFields = (categories: ReadonlyArray<string>) => ({
  consolidatedAt: timeSchema,
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
  const users = new Map<string, { sessions: Record<string, SessionNotes>; profile?: GlobalFacts }>();
  const notesOf = (user: string) => users.get(user) ?? users.set(user, { sessions: {} }).get(user)!;
  for (const { user, session, updatedAt, consolidated, facts } of section.sessions)
    notesOf(user).sessions[storedKey(session)] = { facts, updatedAt, consolidated };
  for (const { user, consolidatedAt, sessionCount, facts } of section.profiles)
    notesOf(user).profile = { facts, consolidatedAt, sessionCount };
  return deepFreeze({ categories, users: PMap.fromEntries<UserNotes>(users) });
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

/** One user's notes in one session as a store record (a JSON value). */
export const encodeSessionRecord = (notes: SessionNotes): JsonValue => ({
  facts: notes.facts.map(({ category, fact }) => ({ category, fact })),
  updatedAt: notes.updatedAt,
  consolidated: notes.consolidated,
});

/** A store record of one user's notes in one session, its facts checked against `categories`. */
export const decodeSessionRecord = (
  value: unknown,
  categories: ReadonlyArray<string>,
): E.Either<NotesDecodeFailure, SessionNotes> =>
  decodeRecord(z.object(sessionFields(categories), { error: 'is not an object' }), 'session', value);

/** One user's profile as a store record (a JSON value). */
export const encodeProfileRecord = (profile: GlobalFacts): JsonValue => ({
  facts: profile.facts.map(({ category, fact }) => ({ category, fact })),
  consolidatedAt: profile.consolidatedAt,
  sessionCount: profile.sessionCount,
});

/** A store record of one user's profile, its facts checked against `categories`. */
export const decodeProfileRecord = (
  value: unknown,
  categories: ReadonlyArray<string>,
): E.Either<NotesDecodeFailure, GlobalFacts> =>
  decodeRecord(z.object(profileFields(categories), { error: 'is not an object' }), 'profile', value);
