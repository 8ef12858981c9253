/**
 * The ledger: per user, one fact list per session and the cross-session profile. Each user's
 * notes sit under their own key, so a selector for one user can never reach another user's
 * facts: two partners in one session share nothing but the session id. Users live in a
 * persistent map (sharded, as the fact store's pairs are), so changing one user's notes costs
 * the same whether the ledger holds ten users or a hundred thousand.
 */
import * as E from 'fp-ts/lib/Either.js';
import { refuseArgument } from '../base/describe.js';
import { deepFreeze, frozenCopy } from '../persistent/freeze.js';
import * as PMap from '../persistent/persistentMap.js';
import {
  type CategorizedFact,
  type GlobalFacts,
  categoryNames,
  DEFAULT_CATEGORIES,
  type NoteCategory,
  parseCategories,
  type SessionNotes,
} from './model.js';

export type { SessionNotes } from './model.js';

/** Everything the ledger holds about one user. */
export interface UserNotes {
  /**
   * Session notes by session id, in a persistent map (read them through the selectors): a user
   * with thousands of sessions costs an extraction no more than one with ten.
   */
  readonly sessions: PMap.PersistentMap<SessionNotes>;
  /** The cross-session profile, once a stage has ended. */
  readonly profile?: GlobalFacts;
}

/** The notable-facts ledger: plain, JSON-serializable, deeply frozen data. Read it through the selectors. */
export interface NotesLedger {
  /** The accepted category names, in rendering order. */
  readonly categories: ReadonlyArray<string>;
  /** Users by id, in a persistent map (`persistent/persistentMap.ts`): read them through the selectors. */
  readonly users: PMap.PersistentMap<UserNotes>;
}

/** Options of `emptyNotesLedger`. */
export interface NotesLedgerOptions {
  /** The categories (names or `{ name, description }`); invalid sets fall back to the five defaults. */
  readonly categories?: ReadonlyArray<string | NoteCategory>;
}

/** A session of a user, as the selectors list it. */
export interface SessionEntry {
  readonly user: string;
  readonly session: string;
  readonly notes: SessionNotes;
}

const ESCAPE = '~';

/**
 * Where a session id is used as an object key (the machine's lists of sessions it loads and
 * saves), one that an empty object already answers (`constructor`, `__proto__`) would read as
 * an entry, so those, and ids starting with `~`, are escaped. (Users and the ledger's sessions
 * are keys of persistent maps, which never use them as property names.)
 */
const needsEscape = (id: string): boolean => id.startsWith(ESCAPE) || id in Object.prototype || id === '__proto__';

/** The object key under which `id` is stored. */
export const storedKey = (id: string): string => (needsEscape(id) ? ESCAPE + id : id);

/** The id stored under `key`. */
export const idOfKey = (key: string): string => (key.startsWith(ESCAPE) ? key.slice(1) : key);

/** The ledger's categories for `input`, or the five defaults when `input` is absent or invalid. */
export const ledgerCategories = (input: unknown): ReadonlyArray<string> =>
  categoryNames(E.getOrElse(() => DEFAULT_CATEGORIES)(parseCategories(input)));

/** An empty ledger (default categories: People, Logistics, Conflict, Emotional, History). */
export const emptyNotesLedger = (options: NotesLedgerOptions = {}): NotesLedger =>
  deepFreeze({ categories: ledgerCategories(options?.categories), users: PMap.empty });

/** True for a value of a ledger's shape: its categories and its users (made by `emptyNotesLedger`, or parsed). */
export const isLedger = (value: unknown): value is NotesLedger =>
  typeof value === 'object' &&
  value !== null &&
  Array.isArray((value as NotesLedger).categories) &&
  typeof (value as NotesLedger).users === 'object' &&
  (value as NotesLedger).users !== null;

/**
 * `ledger`, refused with a TypeError when it is not one (null from an unset variable, a
 * `NotesState`): a programmer's mistake, said plainly rather than as a failure deep inside.
 */
export const checkedLedger = (ledger: NotesLedger): NotesLedger =>
  isLedger(ledger) ? ledger : refuseArgument('the ledger', ledger, 'a notes ledger (emptyNotesLedger makes one)');

/**
 * `ledger` if the library made it (it is frozen), else a frozen copy: a ledger the caller
 * built or parsed (`JSON.parse`) stays theirs, never frozen in place by a reducer that shares
 * its parts.
 */
export const ownLedger = (ledger: NotesLedger): NotesLedger => frozenCopy(ledger);

/**
 * The ledger with the notes of `user` replaced by `notes`: one path of the users map is
 * copied, every other user's notes are shared. `notes` is frozen on the way in.
 */
export const withUserNotes = (ledger: NotesLedger, user: string, notes: UserNotes): NotesLedger => {
  const owned = ownLedger(ledger);
  return Object.freeze({ categories: owned.categories, users: PMap.set(owned.users, user, deepFreeze(notes)) });
};

/** One user's notes with the session `session` set to `notes` (the other sessions shared). */
export const withSessionNotes = (user: UserNotes | undefined, session: string, notes: SessionNotes): UserNotes => ({
  sessions: PMap.set(user?.sessions ?? PMap.empty, session, notes),
  ...(user?.profile === undefined ? {} : { profile: user.profile }),
});

/** The notes of `user`, if the ledger holds any (a user that is no string: none). */
export const selectUserNotes = (ledger: NotesLedger, user: string): UserNotes | undefined => {
  const { users } = checkedLedger(ledger);
  return typeof user === 'string' ? PMap.get(users, user) : undefined;
};

/** The notes of `user` in `session`, if any. */
export const selectSessionNotes = (ledger: NotesLedger, user: string, session: string): SessionNotes | undefined => {
  const notes = selectUserNotes(ledger, user);
  return notes === undefined || typeof session !== 'string' ? undefined : PMap.get(notes.sessions, session);
};

/** The facts of `user` in `session`: empty until an extraction has succeeded (N+1 timing). */
export const selectSessionFacts = (
  ledger: NotesLedger,
  user: string,
  session: string,
): ReadonlyArray<CategorizedFact> => selectSessionNotes(ledger, user, session)?.facts ?? [];

/** The cross-session profile of `user`, if a stage has ended for them. */
export const selectGlobalFacts = (ledger: NotesLedger, user: string): GlobalFacts | undefined =>
  selectUserNotes(ledger, user)?.profile;

const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The ids of the users the ledger holds, sorted. */
export const selectUserIds = (ledger: NotesLedger): ReadonlyArray<string> =>
  PMap.keys(checkedLedger(ledger).users).sort(byText);

/** Every (user, session) the ledger holds, sorted by user, then session. */
export const selectSessions = (ledger: NotesLedger): ReadonlyArray<SessionEntry> =>
  selectUserIds(ledger).flatMap((user) => {
    const sessions = selectUserNotes(ledger, user)?.sessions ?? PMap.empty;
    return PMap.keys(sessions)
      .sort(byText)
      .map((session) => ({ user, session, notes: PMap.get(sessions, session)! }));
  });

/**
 * True when an end of stage has something of these notes to merge: facts changed since the
 * last merge (a list that was never merged and holds no fact has nothing to give). Read
 * loosely, so a store can ask it of a record it keeps as JSON.
 */
export const awaitsMerge = (notes: {
  readonly consolidated?: unknown;
  readonly facts?: unknown;
  readonly mergedAt?: unknown;
}): boolean =>
  notes.consolidated !== true &&
  ((Array.isArray(notes.facts) && notes.facts.length > 0) || notes.mergedAt !== undefined);

/**
 * The sessions of `user` whose facts have changed since they were last merged into the
 * profile, in the order of the latest message their facts cover (else of their update): the
 * order an end of stage consolidates them in.
 */
export const selectUnconsolidatedSessions = (ledger: NotesLedger, user: string): ReadonlyArray<string> => {
  const found: Array<{ session: string; notes: SessionNotes }> = [];
  PMap.forEach(selectUserNotes(ledger, user)?.sessions ?? PMap.empty, (notes, session) =>
    found.push({ session, notes }),
  );
  return found
    .filter(({ notes }) => awaitsMerge(notes))
    .sort(
      (a, b) =>
        (a.notes.messagesAt ?? a.notes.updatedAt) - (b.notes.messagesAt ?? b.notes.updatedAt) ||
        byText(a.session, b.session),
    )
    .map(({ session }) => session);
};
