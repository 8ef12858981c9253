/**
 * The notes store port: where a tracker keeps each user's facts per session and their profile
 * between messages, processes and machines. Records are JSON values with a version, as a SQL
 * table with a JSON column and a version column holds them: a save names the version it read
 * and gets a `conflict` back when another writer saved first, so nothing is overwritten
 * unseen. `memoryNotesStore()` is the embedded default; any adapter passes the conformance
 * suite (`test/notes/storeConformance.ts`).
 *
 * An adapter may answer at once (the memory store does, so a tracker over it behaves exactly
 * as one with no store at all) or with a promise (a database).
 */
import * as E from 'fp-ts/lib/Either.js';
import { describeError, kindOf } from '../base/describe.js';
import { isRecord, readOnce } from '../base/record.js';
import { memoryLeases, type NotesLeases } from './leases.js';
import { awaitsMerge } from './ledger.js';
import type { StoreAnswer } from './storeAnswer.js';
import { storeFailure } from './storeAnswer.js';

/** A JSON value, as a store keeps it. */
export type JsonValue =
  null | boolean | number | string | ReadonlyArray<JsonValue> | { readonly [key: string]: JsonValue };

/** A record and its version: version 0 and no value for a record never saved. */
export interface StoredRecord {
  readonly value?: JsonValue;
  readonly version: number;
}

/** What `load` reads: one user's record in one session and the user's profile record. */
export interface NotesRecords {
  readonly session: StoredRecord;
  readonly profile: StoredRecord;
}

/** One record a save writes, if its stored version is still `expected` (0: it must not exist yet). */
export interface RecordWrite {
  readonly value: JsonValue;
  readonly expected: number;
}

/** A lease a save is made under: the (user, session)'s lease at the fence its holder was given (`LeaseAnswer.fence`). */
export interface SaveFence {
  readonly session: string;
  readonly fence: number;
}

/** What one save writes for one user, all of it or none: records of some sessions, and maybe the profile. */
export interface NotesWrite {
  readonly sessions: ReadonlyArray<RecordWrite & { readonly session: string }>;
  readonly profile?: RecordWrite;
  /**
   * The leases the save is made under (a store with leases checks them): when one of them is no
   * longer at its fence (another tracker took it over, or it was freed), nothing is written and
   * the answer is `fenced`, checked at the same moment as the versions.
   */
  readonly fences?: ReadonlyArray<SaveFence>;
}

/** The versions a save left: each written record's `expected + 1`. */
export interface NotesWritten {
  readonly sessions: ReadonlyArray<{ readonly session: string; readonly version: number }>;
  readonly profile?: number;
}

export type { NotesStoreFailure, NotesStoreFailureCode, StoreAnswer } from './storeAnswer.js';

/** Where a notes tracker keeps users' notes: one (user, session) record and one profile record per user, each versioned. */
export interface NotesStore {
  /** The record of `user` in `session` and the user's profile record (each version 0 when never saved). */
  load(user: string, session: string): StoreAnswer<NotesRecords>;
  /**
   * Writes the records of `write` for `user`, all or none: when a lease it names is no longer at
   * its fence, nothing is written and the answer is `fenced`; when the stored version of any of
   * the records is not the one it names, nothing is written and the answer is a `conflict`.
   */
  save(user: string, write: NotesWrite): StoreAnswer<NotesWritten>;
  /**
   * The sessions of `user` whose record holds facts an end of stage has yet to merge (its
   * `consolidated` is not true, and it holds a fact or has a `mergedAt`: `awaitsMerge` in
   * `ledger.ts`), in any order. With it, an end of stage without a session reaches the sessions a tracker let
   * go of; without it, such an end of stage merges only what the tracker holds.
   */
  unmergedSessions?(user: string): StoreAnswer<ReadonlyArray<string>>;
  /**
   * Leases, for a store that trackers in several processes share: with them, two trackers never
   * extract one user's session at once (`leases.ts`). Without them, a tracker takes turns only
   * with itself.
   */
  readonly leases?: NotesLeases;
}

export { storeFailure } from './storeAnswer.js';

interface MemoryRecord {
  /** The value as JSON text: what is saved cannot change behind the store's back, and reads back as a fresh copy. */
  readonly json: string;
  readonly version: number;
  /** A session record with facts an end of stage has yet to merge, judged when it was saved. */
  readonly unmerged?: boolean;
}

interface MemoryUser {
  readonly sessions: Map<string, MemoryRecord>;
  profile: MemoryRecord | undefined;
}

const NEVER_SAVED: StoredRecord = Object.freeze({ version: 0 });

const read = (record: MemoryRecord | undefined): StoredRecord =>
  record === undefined ? NEVER_SAVED : { value: JSON.parse(record.json) as JsonValue, version: record.version };

const stale = (record: MemoryRecord | undefined, expected: number): boolean => (record?.version ?? 0) !== expected;

/** `value` as JSON text, or why no store could keep it (a cycle, a BigInt, no JSON value at all). Never throws. */
export const jsonOf = (value: unknown): E.Either<string, string> => {
  try {
    const json = JSON.stringify(value);
    return typeof json === 'string' ? E.right(json) : E.left(`it is ${kindOf(value)}, not a JSON value`);
  } catch (error) {
    return E.left(`it cannot be written as JSON: ${describeError(error)}`);
  }
};

/** `value` read once as plain data (`readOnce`), or why it cannot be: a getter or a Proxy trap of the caller's that throws. */
const readData = (value: unknown): E.Either<string, unknown> => {
  try {
    return E.right(readOnce(value));
  } catch (error) {
    return E.left(`the write could not be read: ${describeError(error)}`);
  }
};

const isVersion = (value: unknown): boolean => Number.isSafeInteger(value) && (value as number) >= 0;

/** Why `write` is no `NotesWrite` a save can carry out, or undefined. */
const malformedWrite = (write: unknown): string | undefined => {
  if (!isRecord(write)) return `the write is ${kindOf(write)}, not an object with the records to save`;
  const { sessions, profile, fences } = write;
  if (!Array.isArray(sessions)) return `the write's sessions are ${kindOf(sessions)}, not a list`;
  // Every index, a hole's too (every() would skip it).
  if (!Array.from(sessions as unknown[]).every((entry) => isRecord(entry) && typeof entry['session'] === 'string'))
    return "each of the write's sessions must be an object naming its session";
  if (profile !== undefined && !isRecord(profile)) return `the write's profile is ${kindOf(profile)}, not an object`;
  // The version a record is expected at is a count: text would be joined to, not added to.
  const unversioned = [...sessions, ...(profile === undefined ? [] : [profile])].find(
    (record) => !isVersion((record as Record<string, unknown>)['expected']),
  );
  if (unversioned !== undefined)
    return `each record's expected version must be a whole number 0 or more, not ${kindOf((unversioned as Record<string, unknown>)['expected'])}`;
  if (fences !== undefined && !(Array.isArray(fences) && Array.from(fences as unknown[]).every(isRecord)))
    return "the write's fences must be a list of objects";
  return undefined;
};

/**
 * The write a caller gives `save`, read once as plain data (a getter or a Proxy trap that throws
 * is such a write) and checked, or why a save cannot carry it out: every store refuses it alike,
 * as bad input, never thrown.
 */
export const parseNotesWrite = (given: unknown): E.Either<string, NotesWrite> => {
  const read = readData(given);
  if (E.isLeft(read)) return read;
  const malformed = malformedWrite(read.right);
  return malformed === undefined ? E.right(read.right as NotesWrite) : E.left(malformed);
};

/** True when the value is a session's notes with facts an end of stage has yet to merge. */
const isUnmerged = (value: JsonValue): boolean => isRecord(value) && awaitsMerge(value);

/** Options of `memoryNotesStore`. */
export interface MemoryNotesStoreOptions {
  /** The clock its leases expire by (default `Date.now`). */
  readonly now?: () => number;
}

/**
 * A store in this process's memory, the default of `createNotableFactsTracker`: answers at
 * once, keeps JSON copies of what it is given, and checks versions and keeps leases as a
 * database would, so trackers sharing it take turns as processes sharing a database do.
 */
export const memoryNotesStore = (
  options: MemoryNotesStoreOptions = {},
): NotesStore & {
  readonly leases: NotesLeases;
  unmergedSessions(user: string): StoreAnswer<ReadonlyArray<string>>;
} => {
  const users = new Map<string, MemoryUser>();
  const userOf = (user: string): MemoryUser => {
    const found = users.get(user);
    if (found !== undefined) return found;
    const created: MemoryUser = { sessions: new Map(), profile: undefined };
    users.set(user, created);
    return created;
  };
  const leases = memoryLeases(options?.now);
  return {
    leases: { lease: leases.lease },
    load: (user, session) => {
      const found = users.get(user);
      return E.right({ session: read(found?.sessions.get(session)), profile: read(found?.profile) });
    },
    unmergedSessions: (user) =>
      E.right(
        [...(users.get(user)?.sessions ?? [])].flatMap(([session, record]) =>
          record.unmerged === true ? [session] : [],
        ),
      ),
    save: (user, given) => {
      const parsed = parseNotesWrite(given);
      if (E.isLeft(parsed)) return E.left(storeFailure('invalid_input', `the save was refused: ${parsed.left}`));
      const write = parsed.right;
      // Every value as JSON before anything is written (all or nothing), and before the leases and
      // versions are looked at: a value no store can keep is refused whatever they hold, as PostgreSQL
      // refuses it, never answered in a way that asks for the same save again.
      const encoded = [...write.sessions, ...(write.profile === undefined ? [] : [write.profile])].map(({ value }) =>
        jsonOf(value),
      );
      const unwritable = encoded.findIndex(E.isLeft);
      if (unwritable >= 0) {
        const entry = write.sessions[unwritable];
        const what =
          entry === undefined
            ? `the profile of ${JSON.stringify(user)}`
            : `the record of ${JSON.stringify(user)} in ${JSON.stringify(entry.session)}`;
        return E.left(
          storeFailure(
            'invalid_input',
            `the save was refused: ${what} is no JSON value a store can keep (${(encoded[unwritable] as E.Left<string>).left})`,
          ),
        );
      }
      const lost = (write.fences ?? []).filter(({ session, fence }) => !leases.isAt(user, session, fence));
      if (lost.length > 0)
        return E.left(
          storeFailure(
            'fenced',
            `the lease of ${JSON.stringify(user)} in ${lost.map(({ session }) => JSON.stringify(session)).join(' and ')} was taken over since the save's work began`,
          ),
        );
      const found = users.get(user);
      const conflicted = [
        ...write.sessions
          .filter(({ session, expected }) => stale(found?.sessions.get(session), expected))
          .map(({ session }) => `the record of ${JSON.stringify(user)} in ${JSON.stringify(session)}`),
        ...(write.profile !== undefined && stale(found?.profile, write.profile.expected)
          ? [`the profile of ${JSON.stringify(user)}`]
          : []),
      ];
      // A session named twice: its second write meets the record its first would leave, as in a database.
      const twice = write.sessions.find(({ session }, index) =>
        write.sessions.slice(0, index).some((earlier) => earlier.session === session),
      );
      if (twice !== undefined)
        return E.left(
          storeFailure(
            'conflict',
            `the save writes the record of ${JSON.stringify(user)} in ${JSON.stringify(twice.session)} twice: its second write meets the record the first would leave`,
          ),
        );
      if (conflicted.length > 0)
        return E.left(storeFailure('conflict', `${conflicted.join(' and ')} changed since it was read`));
      const json = encoded.map((text) => (text as E.Right<string>).right);
      const target = userOf(user);
      const sessions = write.sessions.map(({ session, expected }, index) => {
        // Judged on the JSON it keeps, as a database judges the JSON it stored.
        target.sessions.set(session, {
          json: json[index]!,
          version: expected + 1,
          unmerged: isUnmerged(JSON.parse(json[index]!) as JsonValue),
        });
        return { session, version: expected + 1 };
      });
      if (write.profile === undefined) return E.right({ sessions });
      target.profile = { json: json[write.sessions.length]!, version: write.profile.expected + 1 };
      return E.right({ sessions, profile: write.profile.expected + 1 });
    },
  };
};
