/**
 * A PostgreSQL store's connection: a pool it made from a URL (and ends on `close`) or one the
 * caller passed in (which stays the caller's), and the one way every call reaches the server:
 * a client checked out for one piece of work, failures turned into tagged values, and a server
 * that cannot be reached retried with a short backoff. A call is retried only when that cannot
 * do anything twice: a read, a write that is the same however often it runs, or a statement the
 * server answered with an error (so it did nothing). An append whose connection ended before
 * the server's answer may have been committed: the caller is told so, and reads the log again.
 * Every statement is bounded by `queryTimeoutMs`: on a pool the store made, by each connection's
 * `statement_timeout`; on a caller's pool, inside a transaction of the store's that sets it locally.
 */
import * as E from 'fp-ts/lib/Either.js';
import pg from 'pg';
import { isPromiseLike, kindOf } from '../base/describe.js';
import { failure } from '../base/failure.js';
import { sha256HexPrefix } from '../base/hash.js';
import { parsePostgresUrl } from './address.js';
import { EndingClient } from './endingClient.js';
import { classifyError, type ClassifiedError, type PostgresFailure } from './failures.js';

/** The schema the stores' tables live in unless told otherwise. */
export const DEFAULT_SCHEMA = 'fact_tracker';
/** How long a call that may be repeated keeps trying a server it cannot reach, by default. */
export const DEFAULT_RETRY_MS = 5_000;
/** How long making a connection may take in a pool a store makes. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
/**
 * How long a statement may run in a pool a store makes: the server cancels one that ran longer
 * (its `statement_timeout`), such as one waiting on a row another transaction keeps locked, and
 * the call answers `store_unreachable`; a server that froze, or a network that dropped the
 * connection without a word, is given up by the driver a moment later. Either would otherwise
 * hold the call (and the hook or the MCP call waiting on it) for hours. A statement of the
 * stores takes milliseconds.
 */
export const DEFAULT_QUERY_TIMEOUT_MS = 30_000;
/** The longest `statement_timeout` PostgreSQL takes, in milliseconds (a 32-bit integer). */
const LONGEST_STATEMENT_TIMEOUT_MS = 2_147_483_647;
/**
 * How much longer than `queryTimeoutMs` the driver waits before it gives the connection up: the
 * server's own cancel comes first and says the statement did nothing, where a connection given
 * up leaves it unknown (and the backend of a dropped socket waiting on, until it notices).
 */
const SERVER_CANCEL_GRACE_MS = 1_000;

/**
 * No limit, as the pool's settings give it to the driver: the driver sends a timeout only when its
 * value is truthy, so the number 0 would send none, and a limit set on the role or the database
 * (`ALTER ROLE ... SET statement_timeout`) would still cut the store's statements. The text `'0'`
 * is sent, and the server reads it as no limit, whatever the role's.
 */
const NO_LIMIT = '0' as unknown as number;

/** What a PostgreSQL store is given: a URL (`postgres://...`) or a pool of the caller's. */
export type UrlOrPool = string | pg.Pool;

/** Options of the PostgreSQL stores and of `migrate`. */
export interface PostgresOptions {
  /** The schema of the tables (default `fact_tracker`): a lower-case letter or `_`, then lower-case letters, digits and `_`, at most 63 characters, not starting with `pg_`. */
  readonly schema?: string;
  /** How long a call that may be repeated keeps trying a server it cannot reach (default 5,000 ms; 0: once). */
  readonly retryMs?: number;
  /** With a URL: how long making a connection may take (default 5,000 ms). */
  readonly connectTimeoutMs?: number;
  /** With a URL: the most connections the store's pool opens (default 10). */
  readonly maxConnections?: number;
  /** How long a statement of the store may run before the server cancels it, a lock wait included (default 30,000 ms; 0 or less: no limit, with a URL whatever `statement_timeout` the role or the database sets; at most 2^31 - 1 ms, what PostgreSQL takes); with a URL, a server that does not answer even then has its connection given up a second later; with a pool of the caller's, only the store's own transactions are bounded, and never looser than the pool's own `statement_timeout`. */
  readonly queryTimeoutMs?: number;
}

/** Whether a call may be sent again after its connection ended before the server's answer. */
export type Repeat = 'repeatable' | 'once';

/**
 * What a piece of work does with transactions: `statements`, none of its own (on a caller's
 * pool `run` puts them in one, to bound them); `transaction`, it opens one with `Database.transaction`.
 */
export type Scope = 'statements' | 'transaction';

/** A store's way to the server. */
export interface Database {
  /** The URL without its password (or `a pool of the caller's`), for messages. */
  readonly location: string;
  /** The schema of the tables, checked. */
  readonly schema: string;
  /**
   * Runs `work` on a client of the pool, retrying as `repeat` allows, its statements bounded by
   * `queryTimeoutMs` whoever made the pool; a failure comes back as a value.
   */
  run<T>(
    repeat: Repeat,
    work: (client: pg.PoolClient) => Promise<T>,
    scope?: Scope,
  ): Promise<E.Either<PostgresFailure, T>>;
  /**
   * Runs `work` in a transaction on `client` (work of scope `transaction`), its statements
   * bounded as `run`'s are: committed when it resolves, rolled back when it throws.
   */
  transaction<T>(client: pg.PoolClient, work: () => Promise<T>): Promise<T>;
  /**
   * Runs one call of a store, its schema check and its work, so that `end` waits for it; once
   * `end` was called, answers that the store is closed without running it.
   */
  call<L, T>(work: () => Promise<E.Either<L, T>>): Promise<E.Either<L | PostgresFailure, T>>;
  /** Refuses new calls, waits for the calls made before, then ends the pool when the store made it. */
  end(): Promise<void>;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/u;

/**
 * `schema` as the name of the stores' schema, or what is wrong with it: the name goes into SQL as
 * written (quoted, and in the migration script's comment and messages).
 */
export const parseSchemaName = (schema: unknown): E.Either<string, string> => {
  if (typeof schema !== 'string') return E.left(`the schema name is ${kindOf(schema)}, not a string`);
  if (!SCHEMA_NAME.test(schema))
    return E.left(
      `the schema name ${JSON.stringify(schema.slice(0, 70))} is not a lower-case letter or "_", then lower-case letters, digits and "_", at most 63 characters`,
    );
  // PostgreSQL keeps names that start with pg_ for its own schemas and refuses to create one.
  if (schema.startsWith('pg_'))
    return E.left(`the schema name ${JSON.stringify(schema)} starts with "pg_", which PostgreSQL keeps for its own`);
  return E.right(schema);
};

/** Bytes of the schema name's SHA-256 a statement's name holds: 64 bits, no two schemas alike in practice. */
const SCHEMA_HASH_BYTES = 8;

/**
 * The name of a store's prepared statement `kind` on schema `schema`. A connection keeps one
 * statement per name, and stores on several schemas may share a caller's pool, so each schema
 * needs names of its own; but PostgreSQL keys a statement by the first 63 bytes of its name, so
 * two long schema names that begin alike would share one (the second store failing every call
 * with "prepared statement already exists"). The schema is named by a hash of fixed length
 * instead: at most 50 bytes with the longest kind, whatever the schema, and a name ends with
 * the hash, so `read` on one schema and `read_snapshot` on another are two names.
 */
export const statementName = (kind: string, schema: string): string =>
  `fact_tracker.${kind}.${sha256HexPrefix(schema, SCHEMA_HASH_BYTES)}`;

/**
 * The schema's name as SQL writes it: quoted, so a name that is also a key word (`user`,
 * `order`, `all`) is still a name. Checked names hold no `"`; one is doubled all the same.
 */
export const sqlSchema = (schema: string): string => `"${schema.replaceAll('"', '""')}"`;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Ignores an error event: the call that met it reports it; unheard, Node would end the process. */
const ignore = (): void => undefined;

/** A pool and what messages may say of it. */
interface Connection {
  readonly pool: pg.Pool;
  /** True when the store made the pool, and so ends it. */
  readonly owned: boolean;
  readonly location: string;
  readonly secrets: ReadonlyArray<string>;
}

/**
 * An option's number: one that is none or no number (NaN, a string, a BigInt: a setting read
 * from the environment as text) reads as the default, so a mistyped one neither removes a bound
 * nor makes a wait that never ends.
 */
const numberOption = (value: unknown, fallback: number): number =>
  typeof value === 'number' && !Number.isNaN(value) ? value : fallback;

/** A pool of our own for the URL `url`, checked first. */
const poolFor = (url: string, options: PostgresOptions): E.Either<PostgresFailure, Connection> => {
  const address = parsePostgresUrl(url);
  if (E.isLeft(address)) return address;
  const bound = queryBound(options);
  const pool = new pg.Pool({
    connectionString: address.right.url,
    connectionTimeoutMillis: numberOption(options.connectTimeoutMs, DEFAULT_CONNECT_TIMEOUT_MS),
    // The server cancels a statement past the limit and frees its backend: a socket the driver
    // drops leaves a backend waiting on a lock as long as the lock is held, one more per retry.
    statement_timeout: bound ?? NO_LIMIT,
    // A client stopped inside a transaction of the store's (a process paused, a machine asleep)
    // holds its row locks until the server ends its session: every other tracker of that session
    // and user would wait on them, whatever their leases say.
    idle_in_transaction_session_timeout: bound ?? NO_LIMIT,
    // The connection of a statement given up is closed (attempt), so no late answer is read as another's.
    // (A timer past 2^31 - 1 ms fires at once: the driver's is kept within it.)
    query_timeout: bound === undefined ? 0 : Math.min(LONGEST_STATEMENT_TIMEOUT_MS, bound + SERVER_CANCEL_GRACE_MS),
    max: numberOption(options.maxConnections, 10),
    keepAlive: true,
    // A process that forgets `close` still exits once its calls are done.
    allowExitOnIdle: true,
    application_name: 'session-fact-tracker',
    // A connect that fails always ends, its socket with it, so `close` settles and the process can exit.
    Client: EndingClient,
  });
  pool.on('error', ignore);
  return E.right({ pool, owned: true, location: address.right.location, secrets: address.right.secrets });
};

/**
 * The statement that bounds each statement of the rest of its transaction to `ms` on a caller's
 * pool, and the time the transaction may wait idle on its client, unless the pool's own setting
 * is shorter: set LOCAL, the bounds end with the transaction, so the caller's other queries on
 * that session keep its settings (and behind PgBouncer's transaction pooling none leaks to
 * another client's session, as a SET would).
 */
const boundSql = (ms: number): string =>
  `SELECT set_config(name, '${ms}', true) FROM pg_settings
  WHERE name IN ('statement_timeout', 'idle_in_transaction_session_timeout') AND (setting::bigint = 0 OR setting::bigint > ${ms})`;

/**
 * The option's `queryTimeoutMs` as a whole number of milliseconds PostgreSQL takes (1 to 2^31 - 1),
 * or undefined for no limit (0 or less); NaN or no number reads as the default. The same for a URL's pool and
 * a caller's, where the server refused a value past its range on every call.
 */
const queryBound = (options: PostgresOptions): number | undefined => {
  const queryTimeoutMs = numberOption(options.queryTimeoutMs, DEFAULT_QUERY_TIMEOUT_MS);
  return queryTimeoutMs > 0
    ? Math.min(LONGEST_STATEMENT_TIMEOUT_MS, Math.max(1, Math.round(queryTimeoutMs)))
    : undefined;
};

/** The caller's pool, named in messages by its settings (never its password). */
const callersPool = (pool: pg.Pool): Connection => {
  const settings: pg.PoolConfig = (pool as { options?: pg.PoolConfig }).options ?? {};
  const address =
    typeof settings.connectionString === 'string' ? parsePostgresUrl(settings.connectionString) : undefined;
  if (address !== undefined && E.isRight(address))
    return { pool, owned: false, location: address.right.location, secrets: address.right.secrets };
  const host = settings.host ?? 'localhost';
  const user = settings.user === undefined ? '' : `${encodeURIComponent(settings.user)}@`;
  const port = settings.port === undefined ? '' : `:${settings.port}`;
  const secrets = typeof settings.password === 'string' && settings.password !== '' ? [settings.password] : [];
  const database = settings.database ?? '';
  // A socket folder goes in the `host` parameter, as libpq writes it.
  const location = host.startsWith('/')
    ? `postgres://${user}${port === '' ? '' : `localhost${port}`}/${database}?host=${host}`
    : `postgres://${user}${host}${port}/${database}`;
  return { pool, owned: false, location, secrets };
};

/**
 * The connection `urlOrPool` describes, or why it cannot be one (a URL that is not one, a
 * schema name that is not one). Makes no connection: the pool connects on first use.
 */
export const openDatabase = (
  urlOrPool: UrlOrPool,
  given: PostgresOptions = {},
): E.Either<PostgresFailure, Database> => {
  // A store given neither a URL nor a pool (null from an unset variable) has no address: said as one.
  if (
    typeof urlOrPool !== 'string' &&
    (typeof urlOrPool !== 'object' || urlOrPool === null || typeof urlOrPool.connect !== 'function')
  )
    return E.left(
      failure(
        'store_url',
        `a PostgreSQL store is given a URL (postgres://...) or a pg.Pool, not ${typeof urlOrPool === 'object' && urlOrPool !== null ? 'an object without connect' : kindOf(urlOrPool)}`,
      ),
    );
  // Options that are none (null) read as none.
  const options: PostgresOptions = typeof given === 'object' && given !== null ? given : {};
  const named = parseSchemaName(options.schema ?? DEFAULT_SCHEMA);
  if (E.isLeft(named)) return E.left(failure('store_url', named.left));
  const schema = named.right;
  // A number that is none (NaN) or no number reads as the default, as an absent one does.
  const retryMs = Math.max(0, numberOption(options.retryMs, DEFAULT_RETRY_MS));
  const connection = typeof urlOrPool === 'string' ? poolFor(urlOrPool, options) : E.right(callersPool(urlOrPool));
  if (E.isLeft(connection)) return connection;
  const { pool, owned, location, secrets } = connection.right;
  const context = { location, secrets };
  // A pool the store made has the bound on every connection (poolFor); a caller's pool has it
  // inside the store's own transactions alone. A number that is none (NaN) reads as the default.
  const bound = owned ? undefined : queryBound(options);
  const begin = bound === undefined ? 'BEGIN' : `BEGIN;\n${boundSql(bound)}`;

  const transaction = async <T>(client: pg.PoolClient, work: () => Promise<T>): Promise<T> => {
    await client.query(begin);
    try {
      const result = await work();
      await client.query('COMMIT');
      return result;
    } catch (error) {
      // A connection that failed is closed by `attempt`, and its transaction with it.
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  };

  const run = async <T>(
    repeat: Repeat,
    work: (client: pg.PoolClient) => Promise<T>,
    scope: Scope = 'statements',
  ): Promise<E.Either<PostgresFailure, T>> => {
    const deadline = Date.now() + retryMs;
    // Two round trips more per call (BEGIN with the bound, COMMIT), on a caller's pool only.
    const bounded =
      bound === undefined || scope === 'transaction'
        ? work
        : (client: pg.PoolClient) => transaction(client, () => work(client));
    for (let delay = 25; ; delay = Math.min(delay * 2, 500)) {
      const tried = await attempt(bounded);
      if (E.isRight(tried)) return tried;
      const { failure: failed, transient, answered, timedOut } = tried.left;
      // A connection lost is a conflict, which its caller meets by reading and trying again; a
      // statement left unanswered past the timeout is not (each try would wait as long again).
      if (!answered && repeat === 'once' && tried.left.sent)
        return E.left(
          timedOut === true
            ? { ...failed, message: `${failed.message}: the change may have been written`, unanswered: true }
            : {
                ...failure(
                  'conflict',
                  `the connection to ${location} ended before the server answered (${failed.message}): the change may have been written: read what the store holds again`,
                ),
                unanswered: true,
              },
        );
      if (!transient || Date.now() + delay > deadline) return E.left(failed);
      await sleep(delay);
    }
  };

  /**
   * The pool's own timeout while every connection it may open was in use: the server answers, the
   * calls are waiting on each other (or on a lock), so saying it cannot be reached would mislead.
   */
  const poolBusy = (error: unknown): ClassifiedError | undefined => {
    const max = (pool as { options?: pg.PoolConfig }).options?.max;
    if (!(error instanceof Error) || !/timeout exceeded when trying to connect/iu.test(error.message)) return undefined;
    if (max === undefined || pool.totalCount < max) return undefined;
    return {
      failure: failure(
        'io',
        `all ${max} connections of the pool to ${location} stayed in use while this call waited for one (too many calls at once, or statements waiting on a lock): raise maxConnections or make fewer calls at once`,
      ),
      transient: true,
      answered: true,
    };
  };

  /**
   * A client of the pool, listened to from the moment the pool hands it over: the server may end
   * a connection just made in the very chunk that says it is ready (a restart, an administrator
   * ending the role's connections), and the driver reads that end at once, before an `await`
   * would resume; unheard, its error would end the process. The client then fails its first
   * statement without sending it. A pool of the caller's that answers with a promise alone (a
   * wrapper of `connect`) is taken at its word.
   */
  const checkOut = (): Promise<E.Either<unknown, pg.PoolClient>> =>
    new Promise((resolve) => {
      let answered = false;
      const answer = (either: E.Either<unknown, pg.PoolClient>): void => {
        if (answered) return;
        answered = true;
        if (E.isRight(either)) either.right.on('error', ignore);
        resolve(either);
      };
      try {
        const returned: unknown = pool.connect((error: Error | undefined, client: pg.PoolClient | undefined) =>
          answer(client === undefined || (error !== undefined && error !== null) ? E.left(error) : E.right(client)),
        );
        if (isPromiseLike(returned))
          returned.then(
            (client) => answer(E.right(client as pg.PoolClient)),
            (error: unknown) => answer(E.left(error)),
          );
      } catch (error) {
        answer(E.left(error));
      }
    });

  /** One try: a client, the work, the client back (closed when its connection failed). */
  const attempt = async <T>(
    work: (client: pg.PoolClient) => Promise<T>,
  ): Promise<E.Either<ClassifiedError & { readonly sent: boolean }, T>> => {
    const connected = await checkOut();
    if (E.isLeft(connected))
      return E.left({ ...(poolBusy(connected.left) ?? classifyError(connected.left, context)), sent: false });
    const client = connected.right;
    try {
      const result = await work(client);
      client.off('error', ignore);
      client.release();
      return E.right(result);
    } catch (error) {
      const classified = classifyError(error, context);
      client.off('error', ignore);
      // A client whose connection failed is closed, not given to the next call.
      client.release(classified.answered && classified.closed !== true ? undefined : true);
      return E.left({ ...classified, sent: true });
    }
  };

  /** The calls made and not yet answered: ending the pool under them would fail calls made before `close`. */
  const inFlight = new Set<Promise<unknown>>();
  let ending = false;

  const call = async <L, T>(work: () => Promise<E.Either<L, T>>): Promise<E.Either<L | PostgresFailure, T>> => {
    if (ending) return E.left(failure('io', `the store at ${location} is closed`));
    const running = work();
    inFlight.add(running);
    try {
      return await running;
    } finally {
      inFlight.delete(running);
    }
  };

  return E.right({
    location,
    schema,
    run,
    transaction,
    call,
    end: async () => {
      ending = true;
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
      if (owned && !pool.ended) await pool.end();
    },
  });
};
