/**
 * The session store port over PostgreSQL, for sessions shared by processes on several
 * machines. A session is a row of `sessions` (its id, how many lines its log holds) and its
 * lines in `lines`, numbered from 1 and unique per session; an append is one statement that
 * moves the session's count from the line the writer expects to the new end and inserts the
 * lines numbered from there, so it either lands whole right after the last line or not at all:
 * a writer that lost the race gets `conflict`, and no gap or torn line can exist. A read is one
 * statement too, so it sees the count and the lines of one moment. The snapshot beside a log
 * is kept in `snapshots` with the library version that wrote it (another version's is not
 * used), and so is the one it replaced, for the section of a prompt sent again on a line the
 * newest covers. The schema is created or upgraded on first use.
 */
import { Buffer } from 'node:buffer';
import * as E from 'fp-ts/lib/Either.js';
import type pg from 'pg';
import { failure } from '../base/failure.js';
import { quoteValue } from '../base/schema.js';
import { followerMemory } from '../live/session/follower.js';
import { parseSessionId } from '../live/session/id.js';
import { libraryVersion, SNAPSHOT_VERSION } from '../live/session/snapshot.js';
import {
  type AppendResult,
  guardedCall,
  invalidSnapshot,
  parseLinesToAppend,
  parseStoredSnapshot,
  type SessionStore,
  type SessionStoreError,
  type SnapshotFailure,
  type StoredLine,
  type StoredSnapshot,
  type TailRead,
} from '../live/session/store.js';
import { unusableSessionStore } from '../live/session/unusableStore.js';
import {
  type Database,
  openDatabase,
  sqlSchema,
  statementName,
  type PostgresOptions,
  type UrlOrPool,
} from './database.js';
import type { PostgresFailure } from './failures.js';
import { ensureSchema } from './schema.js';
import { unstorableId } from './keptText.js';

/** A session store over PostgreSQL, with `close()` ending the pool it made from a URL. */
export type PostgresSessionStore = SessionStore;

/** The snapshots this library writes and reads: another version's rules may give other facts. */
const snapshotLibrary = (): string => `session-fact-tracker ${libraryVersion()} (snapshot layout ${SNAPSHOT_VERSION})`;

/** The statements of a store on schema `s`, named so each connection prepares each once. */
const statements = (s: string, q = sqlSchema(s)) => ({
  read: {
    name: statementName('read', s),
    text: `SELECT s.key, s.lines, l.line, l.text FROM ${q}.sessions s
  LEFT JOIN ${q}.lines l ON l.session_key = s.key AND l.line > $2
  WHERE s.id = $1 ORDER BY l.line`,
  },
  // $1 id, $2 expected, $3 new end, $4 bytes, $5 texts. The first writer of a session makes its row.
  appendFirst: {
    name: statementName('append_first', s),
    text: `WITH session AS (
  INSERT INTO ${q}.sessions AS s (id, lines, bytes) VALUES ($1, $3, $4)
  ON CONFLICT (id) DO UPDATE SET lines = excluded.lines, bytes = s.bytes + excluded.bytes, updated_at = now()
  WHERE s.lines = $2
  RETURNING s.key
), appended AS (
  INSERT INTO ${q}.lines (session_key, line, text)
  SELECT session.key, $2 + u.n, u.text FROM session, unnest($5::text[]) WITH ORDINALITY AS u(text, n)
)
SELECT key FROM session`,
  },
  // $6 the key of the log the writer read ($2 is a line of that log), or null when it read none.
  // The positions are bigint: one past the integer columns' range (2^31 - 1) matches no log, a
  // conflict as in the other stores, where as an integer it would fail every try. The new end is
  // reckoned from the row (a constant would be cast when planned, failing whatever the row), so
  // only a log that ends at $2 and cannot take the lines past that range fails (out of range).
  appendNext: {
    name: statementName('append_next', s),
    text: `WITH session AS (
  UPDATE ${q}.sessions SET lines = lines + ($3::bigint - $2::bigint), bytes = bytes + $4, updated_at = now()
  WHERE id = $1 AND lines = $2::bigint AND ($6::bigint IS NULL OR key = $6::bigint)
  RETURNING key
), appended AS (
  INSERT INTO ${q}.lines (session_key, line, text)
  SELECT session.key, $2::bigint + u.n, u.text FROM session, unnest($5::text[]) WITH ORDINALITY AS u(text, n)
)
SELECT key FROM session`,
  },
  list: { name: statementName('list', s), text: `SELECT id FROM ${q}.sessions ORDER BY id` },
  // Its lines and snapshot go with it (ON DELETE CASCADE).
  delete: { name: statementName('delete', s), text: `DELETE FROM ${q}.sessions WHERE id = $1` },
  // $2 at most that many lines, or null for the newest snapshot whatever it covers; $3 this
  // library's name. Of the snapshot and the one it replaced, the newest of at most $2 lines, one
  // of this library first: only the state of the one answered is sent.
  readSnapshot: {
    name: statementName('read_snapshot', s),
    text: `SELECT s.key, s.lines, k.position, k.library, k.state FROM ${q}.sessions s
  JOIN ${q}.snapshots n ON n.session_key = s.key
  CROSS JOIN LATERAL (VALUES (n.position, n.library, n.state, true),
    (n.previous_position, n.previous_library, n.previous_state, false)) AS k (position, library, state, newest)
  WHERE s.id = $1 AND CASE WHEN $2::integer IS NULL THEN k.newest ELSE k.position <= $2::integer END
  ORDER BY k.library = $3 DESC, k.position DESC LIMIT 1`,
  },
  // The newest snapshot wins; one of another library version is replaced whatever its position.
  // The one replaced is kept as the previous when it is of the same library and covers fewer
  // lines (a rewrite of the same line keeps the previous there was). $5 the key of the log the
  // state was read from, or null when not known.
  writeSnapshot: {
    name: statementName('write_snapshot', s),
    text: `INSERT INTO ${q}.snapshots AS n (session_key, position, bytes, library, state)
  SELECT s.key, $2, s.bytes - coalesce((SELECT sum(octet_length(l.text) + 1) FROM ${q}.lines l
    WHERE l.session_key = s.key AND l.line > $2), 0), $3, $4
  FROM ${q}.sessions s WHERE s.id = $1 AND s.lines >= $2 AND ($5::bigint IS NULL OR s.key = $5::bigint)
  ON CONFLICT (session_key) DO UPDATE SET position = excluded.position, bytes = excluded.bytes,
    library = excluded.library, state = excluded.state, written_at = now(),
    previous_position = CASE WHEN n.library = excluded.library AND n.position < excluded.position
      THEN n.position ELSE n.previous_position END,
    previous_library = CASE WHEN n.library = excluded.library AND n.position < excluded.position
      THEN n.library ELSE n.previous_library END,
    previous_state = CASE WHEN n.library = excluded.library AND n.position < excluded.position
      THEN n.state ELSE n.previous_state END
  WHERE n.position <= excluded.position OR n.library <> excluded.library`,
  },
  backlog: {
    name: statementName('backlog', s),
    text: `SELECT s.bytes - coalesce(n.bytes, 0) AS backlog FROM ${q}.sessions s
  LEFT JOIN ${q}.snapshots n ON n.session_key = s.key AND n.library = $2 WHERE s.id = $1`,
  },
});

/** The largest line number the schema's `integer` columns hold. */
const MAX_LINE = 2_147_483_647;

/**
 * `atMost` as the snapshot read's bound, null for none: the port takes any number, and one the
 * column cannot take as it is (past its range, a fraction, NaN) bounds as it does in the other stores.
 */
const linesAtMost = (atMost: number | undefined): number | null =>
  atMost === undefined ? null : Number.isNaN(atMost) ? 0 : Math.max(0, Math.min(MAX_LINE, Math.floor(atMost)));

interface ReadRow {
  readonly key: string;
  readonly lines: number;
  readonly line: number | null;
  readonly text: string | null;
}

const LINE_BREAK = /[\r\n]/u;

/**
 * A line written by other means (JSON pretty-printed by hand into `lines`) as one line: a line
 * break between tokens becomes a space, one inside a string its escape, so the JSON means what
 * it meant and no reader of the log (an export, a replay) takes it for two lines.
 */
const oneLine = (text: string): string => {
  if (!LINE_BREAK.test(text)) return text;
  let inString = false;
  let escaped = false;
  let out = '';
  for (const char of text) {
    if (char === '\r' || char === '\n') out += inString ? (char === '\r' ? '\\r' : '\\n') : ' ';
    else out += char;
    if (escaped) escaped = false;
    else if (char === '\\') escaped = inString;
    else if (char === '"') inString = !inString;
  }
  return out;
};

/**
 * A session store over the PostgreSQL database at `urlOrPool` (a `postgres://` or
 * `postgresql://` URL, or a `pg.Pool` of the caller's, which stays open on `close` and should
 * have an `error` listener of its own). Makes no connection until its first call, which creates
 * or upgrades the schema (`options.schema`, default `fact_tracker`). Calls never throw.
 */
export const postgresSessionStore = (urlOrPool: UrlOrPool, options: PostgresOptions = {}): PostgresSessionStore => {
  const opened = openDatabase(urlOrPool, options);
  if (E.isLeft(opened)) return unusableSessionStore(opened.left, 'PostgreSQL (no valid address)');
  const db: Database = opened.right;
  const sql = statements(db.schema);
  /** Per session, the key of the row each follower last read: another key under the same id is a log made anew. */
  const memory = followerMemory<string>();
  const keysOf = memory.of;
  /** The schema check of the first call, shared by the calls made meanwhile; forgotten when it fails. */
  let ready: Promise<E.Either<PostgresFailure, unknown>> | undefined;

  const prepared = async (): Promise<E.Either<PostgresFailure, unknown>> => {
    const check = (ready ??= ensureSchema(db));
    const done = await check;
    if (E.isLeft(done) && ready === check) ready = undefined;
    return done;
  };

  /** Checks `id`, readies the schema, then runs `work` as `repeat` allows. */
  const call = async <T>(
    id: string | undefined,
    repeat: 'repeatable' | 'once',
    work: (client: pg.PoolClient) => Promise<T>,
  ): Promise<E.Either<SessionStoreError, T>> => {
    if (id !== undefined) {
      const checked = parseSessionId(id);
      if (E.isLeft(checked)) return checked;
    }
    return db.call(async () => {
      const schema = await prepared();
      if (E.isLeft(schema)) return schema;
      return db.run(repeat, work);
    });
  };

  const readTail = async (
    client: pg.PoolClient,
    id: string,
    after: number,
    keys: Map<string, string>,
    restart = false,
  ): Promise<TailRead> => {
    // No log holds a line past MAX_LINE: a reader past it reads none there and starts over below.
    const { rows } = await client.query<ReadRow>({ ...sql.read, values: [id, Math.min(after, MAX_LINE)] });
    const first = rows[0];
    const known = keys.get(id);
    // A read from the start while the store follows a log (a resent prompt's, an explanation's)
    // leaves the incarnation the catch-up follows, and with it what tells that it was replaced.
    const follow = restart || after > 0 || known === undefined;
    if (first === undefined) {
      if (follow) keys.delete(id);
      return { exists: false, restarted: after > 0, lines: [], position: 0, torn: false };
    }
    if (follow) keys.set(id, first.key);
    // A reader past the end, or one that read another incarnation of this id, starts over.
    if (after > 0 && (after > first.lines || (known !== undefined && known !== first.key)))
      return { ...(await readTail(client, id, 0, keys, true)), restarted: true };
    const lines: StoredLine[] = [];
    for (const row of rows)
      if (row.line !== null && row.text !== null && row.line <= first.lines && row.text.trim() !== '')
        lines.push({ line: row.line, text: oneLine(row.text) });
    return { exists: true, restarted: false, lines, position: first.lines, torn: false };
  };

  return {
    location: db.location,
    list: () =>
      call(undefined, 'repeatable', async (client) => {
        const { rows } = await client.query<{ id: string }>(sql.list);
        // A row written by other means (a script, SQL by hand) may hold any text: only a session's
        // id is listed, as the folder store lists only files named by one, so none forges a line.
        return rows.map((row) => row.id).filter((id) => E.isRight(parseSessionId(id)));
      }),
    read: (id, after, follower) => call(id, 'repeatable', (client) => readTail(client, id, after, keysOf(follower))),
    // The caller's values are read inside a guard: a getter that throws is `internal`, never a rejected promise.
    append: (id, expected, texts, follower) =>
      guardedCall<SessionStoreError, AppendResult>(async () => {
        const keys = keysOf(follower);
        // A caller's arguments of another kind: a position that is text would be joined to, not
        // added to, and leave the log's count past its lines.
        if (!Number.isSafeInteger(expected) || expected < 0)
          return E.left(
            failure(
              'conflict',
              `session ${id} cannot end at line ${quoteValue(expected)}: a position is a whole number of lines`,
            ),
          );
        const lines = parseLinesToAppend(texts);
        if (E.isLeft(lines)) return lines;
        // Refused before anything is written: the log is exported as it is kept, so it must keep the line as given.
        const unstorable = lines.right.map(unstorableId).find((problem) => problem !== undefined);
        if (unstorable !== undefined) return E.left(failure('io', `a line to append ${unstorable}`));
        const position = expected + lines.right.length;
        const bytes = lines.right.reduce((sum, text) => sum + Buffer.byteLength(text) + 1, 0);
        const written = await call(id, 'once', async (client) => {
          // After a line of a log deleted and made anew since it was read, there is nothing to append to.
          const values = [id, expected, position, bytes, lines.right];
          const { rows } = await client.query<{ key: string }>(
            expected === 0
              ? { ...sql.appendFirst, values }
              : { ...sql.appendNext, values: [...values, keys.get(id) ?? null] },
          );
          return rows[0]?.key;
        });
        if (E.isLeft(written)) return written;
        if (written.right === undefined)
          return E.left(
            failure('conflict', `session ${id} does not end at line ${expected}: another writer appended first`),
          );
        keys.set(id, written.right);
        return E.right({ position, setAside: [] });
      }),
    // Lines land whole or not at all: there is never a torn line to set aside.
    repair: (id) => call(id, 'repeatable', async () => []),
    // Guarded as the writes are: a follower that is no object (null) is `internal`, never a rejected promise.
    readSnapshot: (id, follower, atMost) =>
      guardedCall<SessionStoreError | SnapshotFailure, StoredSnapshot | undefined>(async () => {
        const read = await call(id, 'repeatable', async (client) => {
          const { rows } = await client.query<{
            key: string;
            lines: number;
            position: number;
            library: string;
            state: string;
          }>({ ...sql.readSnapshot, values: [id, linesAtMost(atMost), snapshotLibrary()] });
          return rows[0];
        });
        if (E.isLeft(read)) return read;
        const row = read.right;
        if (row === undefined) return E.right(undefined);
        if (row.library !== snapshotLibrary())
          return E.left(invalidSnapshot(`the snapshot was written by ${row.library}`));
        if (row.position > row.lines)
          return E.left(invalidSnapshot('the snapshot covers more lines than the log holds'));
        // One read while the store follows the log (a resent prompt's) leaves the incarnation it follows.
        const keys = keysOf(follower);
        if (!keys.has(id)) keys.set(id, row.key);
        return E.right({ position: row.position, state: row.state });
      }),
    writeSnapshot: (id, snapshot, follower) =>
      guardedCall<SessionStoreError, void>(async () => {
        const given = parseStoredSnapshot(snapshot);
        if (E.isLeft(given)) return given;
        const { position, state } = given.right;
        // Past MAX_LINE: no log holds that line, so none is kept, as in the other stores (the column would refuse it).
        if (position <= 0 || position > MAX_LINE) return E.right(undefined);
        const written = await call(id, 'repeatable', (client) =>
          // Only over the log the state was read from: one made anew since holds other lines.
          client.query({
            ...sql.writeSnapshot,
            values: [id, position, snapshotLibrary(), state, keysOf(follower).get(id) ?? null],
          }),
        );
        return E.map(() => undefined)(written);
      }),
    delete: (id) =>
      call(id, 'repeatable', async (client) => {
        const { rowCount } = await client.query({ ...sql.delete, values: [id] });
        // A follower's row deleted is found gone, or another, by its next read.
        memory.of(undefined).delete(id);
        return (rowCount ?? 0) > 0;
      }),
    backlog: async (id) => {
      const read = await call(id, 'repeatable', async (client) => {
        const { rows } = await client.query<{ backlog: string }>({ ...sql.backlog, values: [id, snapshotLibrary()] });
        return rows[0]?.backlog;
      });
      return E.isRight(read) && read.right !== undefined ? Number(read.right) : undefined;
    },
    close: async () => {
      memory.clear();
      await db.end();
    },
  };
};
