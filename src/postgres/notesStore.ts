/**
 * The notes store port over PostgreSQL, for notes ledgers served by several processes: per
 * (user, session) a row of `notes_sessions`, per user a row of `notes_profiles`, each a JSONB
 * value and a version. A save is one transaction that writes each record only at the version
 * it names (an insert for version 0, an update of that version otherwise) and rolls back at the
 * first that is not there, so it lands whole or is a `conflict`. The schema is created or
 * upgraded on first use, as for the session store.
 */
import * as E from 'fp-ts/lib/Either.js';
import { kindOf } from '../base/describe.js';
import type pg from 'pg';
import type { NotesRecords, NotesStore, NotesStoreFailure, NotesWritten, StoredRecord } from '../notes/store.js';
import { jsonOf, parseNotesWrite, storeFailure } from '../notes/store.js';
import type { JsonValue, NotesWrite } from '../notes/store.js';
import {
  type Database,
  openDatabase,
  sqlSchema,
  statementName,
  type PostgresOptions,
  type Scope,
  type UrlOrPool,
} from './database.js';
import type { PostgresFailure } from './failures.js';
import type { NotesLeases } from '../notes/leases.js';
import { postgresLeases } from './notesLeases.js';
import { ensureSchema } from './schema.js';
import { unstorableId, unstorableText } from './keptText.js';

/** A notes store over PostgreSQL: `close()` ends the pool it made from a URL (a pool passed in stays the caller's). */
export interface PostgresNotesStore extends NotesStore {
  /** Its leases, across the processes that share the database. */
  readonly leases: NotesLeases;
  /** The sessions of a user with facts not merged yet (`NotesStore.unmergedSessions`). */
  unmergedSessions(user: string): Promise<E.Either<NotesStoreFailure, ReadonlyArray<string>>>;
  /** Where, without the password. */
  readonly location: string;
  close(): Promise<void>;
}

/** The statements of a store on schema `s`, named so each connection prepares each once. */
const statements = (s: string, q = sqlSchema(s)) => ({
  load: {
    name: statementName('notes_load', s),
    text: `SELECT 'session' AS kind, value, version FROM ${q}.notes_sessions WHERE user_id = $1 AND session_id = $2
UNION ALL SELECT 'profile', value, version FROM ${q}.notes_profiles WHERE user_id = $1`,
  },
  // The sessions whose record holds facts an end of stage has yet to merge (`awaitsMerge`): the
  // user's rows, found by the primary key's first column.
  unmerged: {
    name: statementName('notes_unmerged', s),
    text: `SELECT session_id FROM ${q}.notes_sessions
WHERE user_id = $1 AND jsonb_typeof(value) = 'object' AND (value -> 'consolidated') IS DISTINCT FROM 'true'::jsonb
  AND (CASE WHEN jsonb_typeof(value -> 'facts') = 'array' THEN jsonb_array_length(value -> 'facts') > 0 ELSE false END
    OR value ? 'mergedAt')
ORDER BY session_id`,
  },
  insertSession: {
    name: statementName('notes_insert_session', s),
    text: `INSERT INTO ${q}.notes_sessions (user_id, session_id, value, version) VALUES ($1, $2, $3::jsonb, 1)
ON CONFLICT (user_id, session_id) DO NOTHING`,
  },
  updateSession: {
    name: statementName('notes_update_session', s),
    text: `UPDATE ${q}.notes_sessions SET value = $3::jsonb, version = version + 1, updated_at = now()
WHERE user_id = $1 AND session_id = $2 AND version = $4`,
  },
  insertProfile: {
    name: statementName('notes_insert_profile', s),
    text: `INSERT INTO ${q}.notes_profiles (user_id, value, version) VALUES ($1, $2::jsonb, 1)
ON CONFLICT (user_id) DO NOTHING`,
  },
  updateProfile: {
    name: statementName('notes_update_profile', s),
    text: `UPDATE ${q}.notes_profiles SET value = $2::jsonb, version = version + 1, updated_at = now()
WHERE user_id = $1 AND version = $3`,
  },
  // The leases a save is made under that are still at their fences ($2 sessions, $3 fences), locked
  // until the save ends: a lease call that would hand one over waits for it, or the save sees the new fence.
  fences: {
    name: statementName('notes_fences', s),
    text: `SELECT l.session_id FROM ${q}.notes_leases l
    JOIN unnest($2::text[], $3::bigint[]) AS f(session_id, fence) ON l.session_id = f.session_id AND l.fence = f.fence
  WHERE l.user_id = $1 ORDER BY l.session_id FOR SHARE OF l`,
  },
  // $2 sessions, $3 their versions, $4 their values; $5 the profile's version (null: none), $6 its value.
  written: {
    name: statementName('notes_written', s),
    text: `SELECT (SELECT count(*) FROM ${q}.notes_sessions n
    JOIN unnest($2::text[], $3::integer[], $4::jsonb[]) AS w(session_id, version, value)
      ON n.session_id = w.session_id AND n.version = w.version AND n.value = w.value
    WHERE n.user_id = $1) = cardinality($2::text[])
  AND ($5::integer IS NULL OR EXISTS (SELECT 1 FROM ${q}.notes_profiles p
    WHERE p.user_id = $1 AND p.version = $5::integer AND p.value = $6::jsonb)) AS written`,
  },
});

const NEVER_SAVED: StoredRecord = Object.freeze({ version: 0 });

/** Why one of `ids` cannot be a key of these tables, as the port's failure (bad input), or undefined. */
/**
 * The most bytes (UTF-8) of a user's or session's id: the two fit in one row of their tables'
 * (user, session) index, and every id a tracker takes (200 characters of at most 4 bytes) fits.
 */
const MAX_ID_BYTES = 800;

const unstorableIds = (ids: ReadonlyArray<string>): NotesStoreFailure | undefined => {
  for (const id of ids) {
    // A caller's id of another kind (null from an unset variable) is bad input, as the memory store takes it.
    if (typeof id !== 'string') return storeFailure('invalid_input', `an id is ${kindOf(id)}, not text`);
    const problem = unstorableId(id);
    if (problem !== undefined) return storeFailure('invalid_input', `the id ${JSON.stringify(id)} ${problem}`);
    // A longer id makes a key past what a B-tree index row holds (2,704 bytes), refused on every try.
    if (Buffer.byteLength(id, 'utf8') > MAX_ID_BYTES)
      return storeFailure(
        'invalid_input',
        `an id of ${Buffer.byteLength(id, 'utf8')} bytes is longer than the ${MAX_ID_BYTES} bytes (UTF-8) a key of the notes tables holds`,
      );
  }
  return undefined;
};

/**
 * The write `given` for `user`, read once as data, or why its save can never be carried out, as
 * the port's failure (bad input): a write that is none or cannot be read, an id or a value these
 * tables cannot keep. The memory store refuses the first two kinds alike; PostgreSQL would refuse
 * the text on every try.
 */
const checkedWrite = (user: string, given: unknown): E.Either<NotesStoreFailure, NotesWrite> => {
  const parsed = parseNotesWrite(given);
  if (E.isLeft(parsed)) return E.left(storeFailure('invalid_input', `the save was refused: ${parsed.left}`));
  const write = parsed.right;
  const ids = unstorableIds([user, ...write.sessions.map(({ session }) => session)]);
  if (ids !== undefined) return E.left(ids);
  const records = [
    ...write.sessions.map(
      ({ session, value }) => [`the record of ${JSON.stringify(user)} in ${JSON.stringify(session)}`, value] as const,
    ),
    ...(write.profile === undefined ? [] : [[`the profile of ${JSON.stringify(user)}`, write.profile.value] as const]),
  ];
  for (const [what, value] of records) {
    // Looked at as the server gets it: the JSON text the save sends, read back.
    const problem = E.match(
      (reason: string) => `is no JSON value a store can keep (${reason})`,
      (json: string) => {
        const text = unstorableText(JSON.parse(json));
        return text === undefined ? undefined : `cannot be kept in JSONB: ${text}`;
      },
    )(jsonOf(value));
    if (problem !== undefined) return E.left(storeFailure('invalid_input', `the save was refused: ${what} ${problem}`));
  }
  return E.right(write);
};

/**
 * A failure of the database as the port's: a call whose outcome is unknown is a `conflict` (read
 * again), anything else `unavailable`, its message led by the database's code where that says
 * more than the port's (a conflict's is the port's own: said once, not `conflict: conflict: ...`).
 */
export const notesFailure = (failed: PostgresFailure): NotesStoreFailure =>
  failed.code === 'conflict'
    ? storeFailure('conflict', failed.message)
    : storeFailure('unavailable', `${failed.code}: ${failed.message}`);

/** A store whose every call fails with `error`: what a URL that is not one gives. */
const failingStore = (error: PostgresFailure): PostgresNotesStore => {
  const fail = async () => E.left(notesFailure(error));
  return {
    location: 'PostgreSQL (no valid address)',
    load: fail,
    save: fail,
    unmergedSessions: fail,
    leases: { lease: fail },
    close: async () => undefined,
  };
};

/** Thrown inside a save's transaction when a record is not at the version named: rolls it back. */
class StaleRecord extends Error {}

/** Thrown inside a save's transaction when a lease it is made under is no longer at its fence: rolls it back. */
class LostLease extends Error {}

/**
 * Schema readiness shared by a store's calls: the first call creates or upgrades the schema,
 * the calls made meanwhile wait for it, and a failed check is tried again by the next call.
 */
export const schemaOnce = (db: Database): (() => Promise<E.Either<PostgresFailure, unknown>>) => {
  let ready: Promise<E.Either<PostgresFailure, unknown>> | undefined;
  return async () => {
    const check = (ready ??= ensureSchema(db));
    const done = await check;
    if (E.isLeft(done) && ready === check) ready = undefined;
    return done;
  };
};

/**
 * A notes store over the PostgreSQL database at `urlOrPool` (a `postgres://` or `postgresql://`
 * URL, or a `pg.Pool` of the caller's, which stays open on `close`), with leases (`leases`) so
 * that trackers in several processes never extract one user's session at once. Makes no
 * connection until its first call, which creates or upgrades the schema (`options.schema`,
 * default `fact_tracker`). Calls never throw.
 */
export const postgresNotesStore = (urlOrPool: UrlOrPool, options: PostgresOptions = {}): PostgresNotesStore => {
  const opened = openDatabase(urlOrPool, options);
  if (E.isLeft(opened)) return failingStore(opened.left);
  const db: Database = opened.right;
  const sql = statements(db.schema);
  const prepared = schemaOnce(db);
  const { transaction } = db;

  /** Readies the schema, then runs `work` as `repeat` allows; a failure as the database's. */
  const callDatabase = <T>(
    repeat: 'repeatable' | 'once',
    work: (client: pg.PoolClient) => Promise<T>,
    scope?: Scope,
  ): Promise<E.Either<PostgresFailure, T>> =>
    db.call(async () => {
      const schema = await prepared();
      if (E.isLeft(schema)) return schema;
      return db.run(repeat, work, scope);
    });

  /** Checks the ids, then runs `work` as `callDatabase` does; a failure as the port's. */
  const call = async <T>(
    ids: ReadonlyArray<string>,
    repeat: 'repeatable' | 'once',
    work: (client: pg.PoolClient) => Promise<T>,
  ): Promise<E.Either<NotesStoreFailure, T>> => {
    const problem = unstorableIds(ids);
    if (problem !== undefined) return E.left(problem);
    return E.mapLeft(notesFailure)(await callDatabase(repeat, work));
  };

  const load = (user: string, session: string) =>
    call([user, session], 'repeatable', async (client): Promise<NotesRecords> => {
      const { rows } = await client.query<{ kind: string; value: JsonValue; version: number }>({
        ...sql.load,
        values: [user, session],
      });
      const record = (kind: string): StoredRecord => {
        const row = rows.find((found) => found.kind === kind);
        return row === undefined ? NEVER_SAVED : { value: row.value, version: row.version };
      };
      return { session: record('session'), profile: record('profile') };
    });

  const unmergedSessions = (user: string) =>
    call([user], 'repeatable', async (client): Promise<ReadonlyArray<string>> => {
      const { rows } = await client.query<{ session_id: string }>({ ...sql.unmerged, values: [user] });
      return rows.map((row) => row.session_id);
    });

  /** Writes one record at the version it names, or throws `StaleRecord`. */
  const write = async (client: pg.PoolClient, statement: pg.QueryConfig, what: string): Promise<void> => {
    const { rowCount } = await client.query(statement);
    if (rowCount !== 1) throw new StaleRecord(`${what} changed since it was read`);
  };

  const save = async (user: string, given: NotesWrite): Promise<E.Either<NotesStoreFailure, NotesWritten>> => {
    // The caller's write is read once, as data: every later step reads this copy.
    const checked = checkedWrite(user, given);
    if (E.isLeft(checked)) return checked;
    const notes = checked.right;
    // One order for every writer, so two saves of one user's records never wait on each other in a circle.
    const sessions = [...notes.sessions].sort((a, b) => (a.session < b.session ? -1 : a.session > b.session ? 1 : 0));
    const { profile } = notes;
    const fences = notes.fences ?? [];
    /** Every record at the version it names, in one transaction: undefined once written, else why not (rolled back). */
    const writeRecords = (client: pg.PoolClient): Promise<NotesStoreFailure | undefined> =>
      transaction(client, async () => {
        if (fences.length > 0) {
          const { rows } = await client.query<{ session_id: string }>({
            ...sql.fences,
            values: [user, fences.map(({ session }) => session), fences.map(({ fence }) => fence)],
          });
          const lost = fences.filter(({ session }) => !rows.some((row) => row.session_id === session));
          if (lost.length > 0)
            throw new LostLease(
              `the lease of ${JSON.stringify(user)} in ${lost.map(({ session }) => JSON.stringify(session)).join(' and ')} was taken over since the save's work began`,
            );
        }
        for (const { session, value, expected } of sessions)
          await write(
            client,
            expected === 0
              ? { ...sql.insertSession, values: [user, session, JSON.stringify(value)] }
              : { ...sql.updateSession, values: [user, session, JSON.stringify(value), expected] },
            `the record of ${JSON.stringify(user)} in ${JSON.stringify(session)}`,
          );
        if (profile !== undefined)
          await write(
            client,
            profile.expected === 0
              ? { ...sql.insertProfile, values: [user, JSON.stringify(profile.value)] }
              : { ...sql.updateProfile, values: [user, JSON.stringify(profile.value), profile.expected] },
            `the profile of ${JSON.stringify(user)}`,
          );
      }).then(
        () => undefined,
        // A record at another version, or a lease lost, rolled the transaction back: the save is a conflict or fenced, not a failure.
        (error: unknown) => {
          if (error instanceof StaleRecord) return storeFailure('conflict', error.message);
          if (error instanceof LostLease) return storeFailure('fenced', error.message);
          throw error;
        },
      );
    const saved = await callDatabase('once', writeRecords, 'transaction');
    const written: NotesWritten = {
      sessions: notes.sessions.map(({ session, expected }) => ({ session, version: expected + 1 })),
      ...(profile === undefined ? {} : { profile: profile.expected + 1 }),
    };
    // A connection lost (or given up) before the answer to COMMIT leaves the save's outcome
    // unknown: when every record holds what it wrote, at the version it would have, it landed,
    // and a failure would make the tracker apply its changes again (a merge counted twice in
    // sessionCount).
    if (E.isLeft(saved) && saved.left.unanswered === true) {
      const landed = await call([], 'repeatable', async (client) => {
        const { rows } = await client.query<{ written: boolean }>({
          ...sql.written,
          values: [
            user,
            sessions.map(({ session }) => session),
            sessions.map(({ expected }) => expected + 1),
            sessions.map(({ value }) => JSON.stringify(value)),
            profile === undefined ? null : profile.expected + 1,
            profile === undefined ? null : JSON.stringify(profile.value),
          ],
        });
        return rows[0]?.written === true;
      });
      return E.isRight(landed) && landed.right ? E.right(written) : E.left(notesFailure(saved.left));
    }
    if (E.isLeft(saved)) return E.left(notesFailure(saved.left));
    if (saved.right !== undefined) return E.left(saved.right);
    return E.right(written);
  };

  return {
    location: db.location,
    load,
    save,
    unmergedSessions,
    leases: postgresLeases(db, (ids, work) => call(ids, 'once', work)),
    close: () => db.end(),
  };
};
