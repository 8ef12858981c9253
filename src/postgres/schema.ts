/**
 * The PostgreSQL stores' schema and its versions. Each migration is SQL that runs once, in
 * order, recorded in the schema's `migrations` table; the script that applies them takes a
 * transaction-level advisory lock first, so processes that all start on an empty database at
 * once apply each migration exactly once (the others wait, then find nothing left to do). The
 * same script is what `fact-tracker db migrate --print` shows, and it can be run again safely.
 * A schema newer than this library knows is refused: an older library would misread it; and so is
 * a database whose encoding lacks characters, by the script and by a store's first check alike,
 * a schema holding another tool's tables of the names the migrations make, by the script, and
 * one whose recorded version lacks a table or a column of it (renamed or dropped by hand), by the
 * script and `db migrate`: each is made once, so nothing kept under another name is hidden.
 */
import * as E from 'fp-ts/lib/Either.js';
import type pg from 'pg';
import { failure } from '../base/failure.js';
import { deepFreeze } from '../persistent/freeze.js';
import {
  type Database,
  openDatabase,
  type PostgresOptions,
  DEFAULT_SCHEMA,
  parseSchemaName,
  sqlSchema,
  type UrlOrPool,
} from './database.js';
import type { PostgresFailure } from './failures.js';
import {
  NOTES_DESCRIPTION,
  NOTES_FENCES_DESCRIPTION,
  NOTES_KEYS_DESCRIPTION,
  notesFencesSql,
  notesKeysSql,
  notesTablesSql,
} from './notesSchema.js';

/** One step of the schema. */
export interface Migration {
  readonly version: number;
  readonly description: string;
  /** Its statements, for the schema named `schema` as SQL writes it (quoted: `"fact_tracker"`). */
  readonly sql: (schema: string) => string;
}

/** The schema's steps, oldest first: append a new one, never change one that shipped. */
export const MIGRATIONS: ReadonlyArray<Migration> = deepFreeze([
  {
    version: 1,
    description: 'sessions: their lines and snapshots',
    sql: (s) => `CREATE TABLE ${s}.sessions (
  key bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id text COLLATE "C" NOT NULL UNIQUE,
  lines integer NOT NULL DEFAULT 0 CHECK (lines >= 0),
  bytes bigint NOT NULL DEFAULT 0 CHECK (bytes >= 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE ${s}.sessions IS 'One row per live session: its id, how many lines its log holds and their bytes.';
CREATE TABLE ${s}.lines (
  session_key bigint NOT NULL REFERENCES ${s}.sessions (key) ON DELETE CASCADE,
  line integer NOT NULL CHECK (line > 0),
  text text NOT NULL,
  PRIMARY KEY (session_key, line)
);
COMMENT ON TABLE ${s}.lines IS 'Each session''s log: one dispatch-history event per line, numbered from 1 without gaps.';
CREATE TABLE ${s}.snapshots (
  session_key bigint PRIMARY KEY REFERENCES ${s}.sessions (key) ON DELETE CASCADE,
  position integer NOT NULL CHECK (position > 0),
  bytes bigint NOT NULL CHECK (bytes >= 0),
  library text NOT NULL,
  state text NOT NULL,
  written_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE ${s}.snapshots IS 'A cache per session: its state after line position, as the library version named wrote it.';`,
  },
  { version: 2, description: NOTES_DESCRIPTION, sql: notesTablesSql },
  { version: 3, description: NOTES_KEYS_DESCRIPTION, sql: notesKeysSql },
  { version: 4, description: NOTES_FENCES_DESCRIPTION, sql: notesFencesSql },
  {
    version: 5,
    description: 'sessions: the snapshot the newest replaced, for a prompt sent again',
    // Columns of the snapshot's own row, not a table: the write that replaces a snapshot moves it
    // there in the same statement under the same row lock, it goes with its session as the
    // snapshot does, and the grants of the snapshots table already cover it (no grant to add
    // before the agents can use a migrated schema).
    sql: (s) => `ALTER TABLE ${s}.snapshots
  ADD COLUMN previous_position integer CHECK (previous_position > 0),
  ADD COLUMN previous_library text,
  ADD COLUMN previous_state text,
  ADD CHECK ((previous_position IS NULL) = (previous_library IS NULL)
    AND (previous_position IS NULL) = (previous_state IS NULL));
COMMENT ON COLUMN ${s}.snapshots.previous_position IS 'The snapshot this one replaced: the line it covers (NULL when none is kept).';
COMMENT ON COLUMN ${s}.snapshots.previous_library IS 'The snapshot this one replaced: the library version that wrote it.';
COMMENT ON COLUMN ${s}.snapshots.previous_state IS 'The snapshot this one replaced: its state, for the section of a prompt sent again on a line before this one.';`,
  },
]);

/**
 * The columns each migration makes, by table, which every later version reads: a table is made by
 * the first version that names it. Keep it in step with `MIGRATIONS` when one adds a table or a
 * column (a test renames each table, and drops each column, a migrated schema holds).
 */
const MIGRATION_COLUMNS: ReadonlyArray<
  readonly [version: number, tables: Readonly<Record<string, ReadonlyArray<string>>>]
> = deepFreeze([
  [
    1,
    {
      sessions: ['key', 'id', 'lines', 'bytes', 'created_at', 'updated_at'],
      lines: ['session_key', 'line', 'text'],
      snapshots: ['session_key', 'position', 'bytes', 'library', 'state', 'written_at'],
    },
  ],
  [
    2,
    {
      notes_sessions: ['user_id', 'session_id', 'value', 'version', 'updated_at'],
      notes_profiles: ['user_id', 'value', 'version', 'updated_at'],
      notes_leases: ['user_id', 'session_id', 'holder', 'expires_at'],
      notes_queue: ['seq', 'user_id', 'session_id', 'kind', 'text', 'at', 'origin', 'added_at'],
    },
  ],
  [3, { notes_queue: ['item_key'] }],
  [4, { notes_leases: ['fence'] }],
  [5, { snapshots: ['previous_position', 'previous_library', 'previous_state'] }],
]);

/** The newest schema version this library knows. */
export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

/** The advisory lock's first key: "fact" in ASCII; the second is the schema's hash. */
const LOCK_CLASS = 0x66616374;

/** A 32-bit FNV-1a hash of the schema name, as a signed integer: the advisory lock's second key. */
const lockKey = (schema: string): number => {
  let hash = 0x811c9dc5;
  for (const char of schema) hash = Math.imul(hash ^ char.charCodeAt(0), 0x01000193);
  return hash | 0;
};

/** The statement that takes the schema `s`'s advisory lock until its transaction ends. */
const lockSql = (s: string): string => `SELECT pg_advisory_xact_lock(${LOCK_CLASS}, ${lockKey(s)});`;

/**
 * The server encodings that keep every character the stores are given: UTF-8, and SQL_ASCII,
 * which keeps the bytes as they are sent (UTF-8). Any other (LATIN1, WIN1252, EUC_JP...) lacks
 * characters a prompt or a note holds (an em dash, a kanji), and the server would refuse such a
 * line or record on every try, long after the schema was made there.
 */
const KEPT_ENCODINGS = ['UTF8', 'SQL_ASCII'] as const;

/** Whether a database whose server encoding is `encoding` keeps every character. */
const keepsEveryCharacter = (encoding: string): boolean => (KEPT_ENCODINGS as ReadonlyArray<string>).includes(encoding);

/** Why a database whose server encoding is `encoding` cannot be a store (`%` in the migration script, which fills it in). */
const encodingRefusal = (encoding: string): string =>
  `the database keeps its text in ${encoding}, which lacks characters a session or a note may hold: make the store's database with ENCODING 'UTF8'`;

/** The refusal of the database of `db`, whose server encoding is `encoding`: a mistake in the URL's database, as a missing one is. */
const wrongEncoding = (db: Database, encoding: string): PostgresFailure =>
  failure('store_url', `PostgreSQL at ${db.location}: ${encodingRefusal(encoding)}`);

/**
 * Why the schema `s` cannot be a store's: it holds `what` (`%` in the migration script, which
 * fills in the server's words), made by another tool, where a migration makes its own.
 */
const foreignRefusal = (s: string, what: string): string =>
  `the schema ${s} holds ${what}, which session-fact-tracker did not make: give the stores a schema of their own (the schema option), or move that out of it`;

/**
 * What the migrations made, as rows of SQL's `VALUES` (position, version, table, column): a
 * table's row, its column NULL, at the version that makes it, then a row per column.
 */
const madeRows = (): ReadonlyArray<string> => {
  const made = MIGRATION_COLUMNS.flatMap(([version, tables]) =>
    Object.entries(tables).map(([table, columns]) => ({ version, table, columns })),
  );
  return made
    .flatMap(({ version, table, columns }, at) => [
      ...(made.findIndex((first) => first.table === table) === at ? [[version, table, 'NULL'] as const] : []),
      ...columns.map((column) => [version, table, `'${column}'`] as const),
    ])
    .map(([version, table, column], order) => `(${order}, ${version}, '${table}', ${column})`);
};

/**
 * The statement that refuses the schema `s` when a table or a column of a version its migrations
 * table records is missing (renamed or dropped by other means), naming each, a column as
 * table.column (a missing table's columns not again). The migrations make each once, when its
 * version is applied: making it again, empty, would hide what is kept under the other name (and
 * leave the other tables pointing there), so the user is told which to bring back. A column of
 * another type is no missing one: no migration changes a type, so it is an administrator's
 * choice, and the server casts many (varchar for text) in the store's statements.
 */
const missingCheckSql = (s: string): string => {
  // A row a line: the script db migrate --print shows stays readable.
  const made = madeRows().join(',\n      ');
  return `DO $made$ DECLARE recorded integer; tables text[]; columns text[]; lacking text; them text; BEGIN
  SELECT coalesce(max(version), 0) INTO recorded FROM ${sqlSchema(s)}.migrations;
  SELECT array_agg(made.relation ORDER BY made.position) FILTER (WHERE made.name IS NULL AND present.oid IS NULL),
      array_agg(made.relation || '.' || made.name ORDER BY made.position)
        FILTER (WHERE made.name IS NOT NULL AND present.oid IS NOT NULL AND attname IS NULL)
    INTO tables, columns
    FROM (VALUES ${made}) AS made (position, version, relation, name)
    LEFT JOIN (SELECT pg_class.oid, relname FROM pg_class JOIN pg_namespace ON pg_namespace.oid = relnamespace
      WHERE nspname = '${s}' AND relkind IN ('r', 'p')) AS present ON present.relname = made.relation
    LEFT JOIN pg_attribute ON attrelid = present.oid AND attname = made.name AND NOT attisdropped
    WHERE made.version <= recorded;
  lacking := concat_ws(' and its ', 'table' || CASE WHEN cardinality(tables) > 1 THEN 's ' ELSE ' ' END || array_to_string(tables, ', '),
    'column' || CASE WHEN cardinality(columns) > 1 THEN 's ' ELSE ' ' END || array_to_string(columns, ', '));
  them := CASE WHEN coalesce(cardinality(tables), 0) + coalesce(cardinality(columns), 0) = 1 THEN 'it' ELSE 'them' END;
  IF lacking <> '' THEN
    RAISE EXCEPTION 'the schema ${s} records version % but lacks its %, renamed or dropped by other means: rename % back or restore % from a backup (db migrate makes a table or a column only when it applies its version, so as not to hide what is kept under another name)',
      recorded, lacking, them, them USING ERRCODE = 'FT001';
  END IF;
END $made$;`;
};

/**
 * The statements that bring the schema `s` from version `from` to the newest, for a
 * transaction that holds its lock: each migration applied only when the migrations table lacks
 * it, and refused when the schema is newer than this library.
 */
const stepsSql = (s: string, from: number): ReadonlyArray<string> => {
  const q = sqlSchema(s);
  return [
    `DO $encoding$ BEGIN
  IF current_setting('server_encoding') NOT IN (${KEPT_ENCODINGS.map((name) => `'${name}'`).join(', ')}) THEN
    RAISE EXCEPTION '${encodingRefusal('%').replace(/'/gu, "''")}', current_setting('server_encoding') USING ERRCODE = 'FT002';
  END IF;
END $encoding$;`,
    // Made only when missing: CREATE SCHEMA IF NOT EXISTS asks for CREATE on the database even
    // when the schema is there, which its owner needs no more to migrate it (an administrator may
    // make the schema for a role that may not make schemas).
    `DO $schema$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = '${s}') THEN
    CREATE SCHEMA ${q};
  END IF;
END $schema$;`,
    `CREATE TABLE IF NOT EXISTS ${q}.migrations (
  version integer PRIMARY KEY,
  description text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
);`,
    // Read before its versions are: another tool's table of that name would otherwise be read
    // as this library's, or fail with an error that names neither the table nor the schema.
    `DO $check$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = '${q}.migrations'::regclass
      AND attname = 'version' AND atttypid = 'integer'::regtype AND NOT attisdropped) THEN
    RAISE EXCEPTION '${foreignRefusal(s, 'a table migrations without an integer column version').replace(/'/gu, "''")}' USING ERRCODE = 'FT001';
  END IF;
  IF (SELECT max(version) FROM ${q}.migrations) > ${SCHEMA_VERSION} THEN
    RAISE EXCEPTION 'the schema ${s} is newer than version ${SCHEMA_VERSION}: upgrade session-fact-tracker' USING ERRCODE = 'FT001';
  END IF;
END $check$;`,
    missingCheckSql(s),
    ...MIGRATIONS.filter((migration) => migration.version > from).map(
      (migration) => `-- ${migration.version}: ${migration.description}
DO $migration$ BEGIN
IF NOT EXISTS (SELECT 1 FROM ${q}.migrations WHERE version = ${migration.version}) THEN
${migration.sql(q)}
INSERT INTO ${q}.migrations (version, description) VALUES (${migration.version}, '${migration.description.replace(/'/gu, "''")}');
END IF;
EXCEPTION WHEN duplicate_table OR duplicate_object OR duplicate_function THEN
  RAISE EXCEPTION '${foreignRefusal(s, `an object of a name migration ${migration.version} makes (%)`).replace(/'/gu, "''")}', SQLERRM USING ERRCODE = 'FT001';
END $migration$;`,
    ),
  ];
};

/**
 * The SQL that brings the schema `schema` (default `fact_tracker`) from version `from` (default
 * 0, nothing) to the newest: one transaction, under the advisory lock, each migration applied
 * only when the migrations table lacks it, and refused when the schema is newer than this library.
 * A schema name the stores would refuse is refused with a TypeError naming what is wrong.
 */
export const schemaSql = (given: { readonly schema?: string; readonly from?: number } = {}): string => {
  // Options that are none (null) read as none.
  const options = typeof given === 'object' && given !== null ? given : {};
  const named = parseSchemaName(options.schema ?? DEFAULT_SCHEMA);
  // The name is written into the script as it is (its comment, an exception's text): never one that is not a name.
  if (E.isLeft(named)) throw new TypeError(named.left);
  const s = named.right;
  return [
    `-- session-fact-tracker: the schema ${s}, version ${SCHEMA_VERSION}. Safe to run again.`,
    'BEGIN;',
    lockSql(s),
    ...stepsSql(s, options.from ?? 0),
    'COMMIT;',
    '',
  ].join('\n');
};

/** What a store reads of its database first: the schema's version, and the encoding of the database's text when it was read with it. */
interface Found {
  readonly version: number;
  readonly encoding?: string;
}

/** The schema's version and the database's encoding, read on `client` in one statement: version 0 (encoding unread) when it has no migrations table yet. */
const foundOn = async (client: pg.PoolClient, schema: string): Promise<Found> => {
  try {
    const result = await client.query<{ version: number | null; encoding: string }>(
      `SELECT max(version) AS version, current_setting('server_encoding') AS encoding FROM ${sqlSchema(schema)}.migrations`,
    );
    const row = result.rows[0];
    // Another tool's migrations table, whose version is no integer (text, bigint): none of this
    // library's versions, and the migration script refuses the table in one line.
    return row === undefined
      ? { version: 0 }
      : { version: typeof row.version === 'number' ? row.version : 0, encoding: row.encoding };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    // No schema, or no migrations table in it: nothing was applied yet; or another tool's
    // migrations table, without a version column, which the migration script refuses.
    if (code === '3F000' || code === '42P01' || code === '42703') return { version: 0 };
    throw error;
  }
};

/** The schema's version, read on `client`: 0 when it has no migrations table yet. */
const versionOn = async (client: pg.PoolClient, schema: string): Promise<number> =>
  (await foundOn(client, schema)).version;

/**
 * The schema's version, read on `client` inside a transaction: 0 when it has no migrations
 * table yet, or one without a version column (another tool's), found without an error, which
 * would end the transaction.
 */
const versionInTransaction = async (client: pg.PoolClient, schema: string): Promise<number> => {
  const { rows } = await client.query<{ present: boolean }>({
    text: `SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass($1) AND attname = 'version' AND NOT attisdropped) AS present`,
    values: [`${sqlSchema(schema)}.migrations`],
  });
  return rows[0]?.present === true ? versionOn(client, schema) : 0;
};

const tooNew = (db: Database, version: number): PostgresFailure =>
  failure(
    'store_schema',
    `the schema ${db.schema} at ${db.location} is at version ${version}, newer than the ${SCHEMA_VERSION} this library knows: upgrade session-fact-tracker`,
  );

/**
 * How long a store's first use waits for a lock on a table while it migrates (`lock_timeout`, in
 * ms), once it holds the migration's own lock. An `ALTER TABLE` waiting behind a long transaction
 * (a dump, an open session of an analyst) would queue every other call on that table behind it
 * for as long as the statement may run; so a store gives up after a second, once, and says so;
 * `db migrate`, run by hand, waits as its statements may.
 */
const FIRST_USE_LOCK_TIMEOUT_MS = 1_000;

/** A migration given up on a lock (`lock_timeout`): what it asks of the user. */
const busyFailure = (db: Database): PostgresFailure =>
  failure(
    'io',
    `the schema ${db.schema} at ${db.location} needs an upgrade to version ${SCHEMA_VERSION}, and another transaction holds a lock on its tables: run "fact-tracker db migrate", which waits for it, or try again once that transaction ends`,
  );

/**
 * Brings the schema of `db` to the newest version when it is older, and says which version it
 * was at. A reader of an up-to-date schema pays one query; only a schema to change takes the lock.
 * `firstUse`: a store's own migration, which waits for a lock at most `FIRST_USE_LOCK_TIMEOUT_MS`.
 */
export const ensureSchema = async (
  db: Database,
  firstUse = true,
): Promise<E.Either<PostgresFailure, { readonly from: number }>> => {
  const found = await db.run('repeatable', (client) => foundOn(client, db.schema));
  if (E.isLeft(found)) return found;
  const { version, encoding } = found.right;
  // A schema made before the migration script checked the encoding: refused all the same, in one line at first use.
  if (encoding !== undefined && !keepsEveryCharacter(encoding)) return E.left(wrongEncoding(db, encoding));
  if (version > SCHEMA_VERSION) return E.left(tooNew(db, version));
  // `db migrate` checks an up-to-date schema's tables and columns too: a store's first use pays one query.
  if (version === SCHEMA_VERSION && firstUse) return E.right({ from: version });
  const applied = await db.run(
    'repeatable',
    (client) =>
      db.transaction(client, async () => {
        // The version is read again under the lock: a process that migrated while this one waited
        // for it did the work, and this one has nothing left to do (nor the right to, as an
        // agents' role: even CREATE TABLE IF NOT EXISTS asks for CREATE on the schema).
        await client.query(lockSql(db.schema));
        const from = await versionInTransaction(client, db.schema);
        if (from < SCHEMA_VERSION) {
          if (firstUse) await client.query(`SET LOCAL lock_timeout = ${FIRST_USE_LOCK_TIMEOUT_MS}`);
          try {
            await client.query(stepsSql(db.schema, from).join('\n'));
          } catch (error) {
            // A table lock not had in time (lock_not_available): given up once, not tried again
            // (each try would queue the other calls on the table again). The transaction ends.
            if (firstUse && (error as { code?: unknown } | null)?.code === '55P03') return 'busy' as const;
            throw error;
          }
        } else if (!firstUse) await client.query(missingCheckSql(db.schema));
        return { from, to: await versionOn(client, db.schema) };
      }),
    'transaction',
  );
  if (E.isLeft(applied)) return applied;
  if (applied.right === 'busy') return E.left(busyFailure(db));
  const { from, to } = applied.right;
  return to > SCHEMA_VERSION ? E.left(tooNew(db, to)) : E.right({ from });
};

/** What `migrate` did. */
export interface Migrated {
  /** The version the schema was at. */
  readonly from: number;
  /** The version it is at now (`SCHEMA_VERSION`). */
  readonly to: number;
  /** Where, without the password. */
  readonly location: string;
}

/** Runs `work` on a connection to `urlOrPool` made for it, ended after (a pool of the caller's stays open). */
const withDatabase = async <T>(
  urlOrPool: UrlOrPool,
  options: PostgresOptions,
  work: (db: Database) => Promise<E.Either<PostgresFailure, T>>,
): Promise<E.Either<PostgresFailure, T>> => {
  const db = openDatabase(urlOrPool, options);
  if (E.isLeft(db)) return db;
  try {
    return await work(db.right);
  } finally {
    await db.right.end().catch(() => undefined);
  }
};

/**
 * Creates or upgrades the stores' schema at `urlOrPool` ahead of first use (`fact-tracker db
 * migrate`); a pool of the caller's stays open, one made from a URL is ended. Never throws.
 */
export const migrate = (
  urlOrPool: UrlOrPool,
  options: PostgresOptions = {},
): Promise<E.Either<PostgresFailure, Migrated>> =>
  withDatabase(urlOrPool, options, async (db) =>
    E.map(({ from }: { readonly from: number }) => ({ from, to: SCHEMA_VERSION, location: db.location }))(
      await ensureSchema(db, false),
    ),
  );

/** The version of the schema at `urlOrPool` (0 when there is none yet), changing nothing. Never throws. */
export const schemaVersion = (
  urlOrPool: UrlOrPool,
  options: PostgresOptions = {},
): Promise<E.Either<PostgresFailure, number>> =>
  withDatabase(urlOrPool, options, (db) => db.run('repeatable', (client) => versionOn(client, db.schema)));
