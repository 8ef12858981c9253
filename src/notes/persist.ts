/**
 * The ledger's section of the saved-state file (`notes`): sessions and profiles as sorted
 * lists, so the same ledger always writes the same text. Decoding validates every field and
 * fact, and names the first problem precisely; it never yields a half-read ledger.
 */
import * as E from 'fp-ts/lib/Either.js';
import { deepFreeze } from '../base/immer.js';
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
  type CategorizedFact,
  categoryNames,
  factKey,
  isNotesId,
  NOTES_LIMITS,
  parseCategories,
  parseCategorizedFact,
} from './model.js';

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

type Fields = Readonly<Record<string, unknown>>;

const isRecord = (value: unknown): value is Fields =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isTime = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

const decodeFacts = (
  value: unknown,
  where: string,
  categories: ReadonlyArray<string>,
  cap: number,
): E.Either<string, CategorizedFact[]> => {
  if (!Array.isArray(value)) return E.left(`${where}.facts is not an array`);
  if (value.length > cap) return E.left(`${where}.facts holds ${value.length} facts, more than the cap of ${cap}`);
  const facts: CategorizedFact[] = [];
  const seen = new Set<string>();
  for (const [index, entry] of value.entries()) {
    const fact = parseCategorizedFact(entry, categories);
    if (E.isLeft(fact)) return E.left(`${where}.facts[${index}]: ${fact.left}`);
    if (seen.has(factKey(fact.right))) return E.left(`${where}.facts[${index}] repeats an earlier fact`);
    seen.add(factKey(fact.right));
    facts.push(fact.right);
  }
  return E.right(facts);
};

/** Adds to `users` what one saved entry holds, or says what is wrong with it. */
type Decoder = (
  users: Record<string, { sessions: Record<string, SessionNotes>; profile?: GlobalFacts }>,
  entry: unknown,
  where: string,
) => string | undefined;

const decodeSession =
  (categories: ReadonlyArray<string>): Decoder =>
  (users, entry, where) => {
    if (!isRecord(entry)) return `${where} is not an object`;
    const { user, session, updatedAt, consolidated } = entry;
    if (!isNotesId(user) || !isNotesId(session))
      return `${where} needs a user and a session id (1 to ${NOTES_LIMITS.idLength} characters)`;
    if (!isTime(updatedAt)) return `${where}.updatedAt is not a finite time`;
    if (typeof consolidated !== 'boolean') return `${where}.consolidated is not true or false`;
    const facts = decodeFacts(entry['facts'], where, categories, NOTES_LIMITS.hardCap);
    if (E.isLeft(facts)) return facts.left;
    const notes = (users[storedKey(user)] ??= { sessions: {} });
    if (Object.hasOwn(notes.sessions, storedKey(session)))
      return `${where} repeats the session ${JSON.stringify(session)} of ${JSON.stringify(user)}`;
    notes.sessions[storedKey(session)] = { facts: facts.right, updatedAt, consolidated };
    return undefined;
  };

const decodeProfile =
  (categories: ReadonlyArray<string>): Decoder =>
  (users, entry, where) => {
    if (!isRecord(entry)) return `${where} is not an object`;
    const { user, consolidatedAt, sessionCount } = entry;
    if (!isNotesId(user)) return `${where} needs a user id (1 to ${NOTES_LIMITS.idLength} characters)`;
    if (!isTime(consolidatedAt)) return `${where}.consolidatedAt is not a finite time`;
    if (typeof sessionCount !== 'number' || !Number.isSafeInteger(sessionCount) || sessionCount < 0)
      return `${where}.sessionCount is not a whole number 0 or more`;
    const facts = decodeFacts(entry['facts'], where, categories, NOTES_LIMITS.globalCap);
    if (E.isLeft(facts)) return facts.left;
    const notes = (users[storedKey(user)] ??= { sessions: {} });
    if (notes.profile !== undefined) return `${where} repeats the profile of ${JSON.stringify(user)}`;
    notes.profile = { facts: facts.right, consolidatedAt, sessionCount };
    return undefined;
  };

/** Decodes the `notes` section of a saved state into a ledger, or says precisely why it cannot. */
export const decodeNotes = (value: unknown): E.Either<string, NotesLedger> => {
  if (!isRecord(value)) return E.left('notes is not an object');
  const categories = parseCategories(value['categories']);
  if (E.isLeft(categories)) return E.left(`notes.categories: ${categories.left}`);
  const names = categoryNames(categories.right);
  const users: Record<string, { sessions: Record<string, SessionNotes>; profile?: GlobalFacts }> = {};
  const sections: ReadonlyArray<readonly [string, Decoder]> = [
    ['sessions', decodeSession(names)],
    ['profiles', decodeProfile(names)],
  ];
  for (const [name, decode] of sections) {
    const entries = value[name];
    if (!Array.isArray(entries)) return E.left(`notes.${name} is not an array`);
    for (const [index, entry] of entries.entries()) {
      const problem = decode(users, entry, `notes.${name}[${index}]`);
      if (problem !== undefined) return E.left(problem);
    }
  }
  return E.right(deepFreeze({ categories: names, users: users as Record<string, UserNotes> }));
};
