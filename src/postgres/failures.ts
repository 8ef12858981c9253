/**
 * What the PostgreSQL driver throws, as the tagged one-line failures the stores return, and
 * what each means for trying again: a server that cannot be reached now may be back in a
 * moment (a restart, a failover), while a wrong password, a missing privilege or a server
 * that takes no writes (a hot standby) will not change by waiting. Every message names the
 * store by its location (no password) and has every secret of its URL scrubbed, since a
 * driver's message may quote what it was given.
 */
import { describeError } from '../base/describe.js';
import { type Failure, failure, internalFailureSaying } from '../base/failure.js';
import type { StoreAccessCode } from '../live/session/model.js';
import { scrubSecretsAround } from './address.js';

/** The codes a PostgreSQL store fails with (`conflict`: an append's outcome is unknown, or another writer was first). */
export type PostgresFailureCode = StoreAccessCode | 'conflict' | 'io' | 'internal';

/**
 * A failure of a PostgreSQL store. `unanswered`: a change was sent and its answer never came,
 * so it may have been written all the same; read what is stored before making it again.
 */
export type PostgresFailure = Failure<PostgresFailureCode> & { readonly unanswered?: true };

/** A driver's exception, understood. */
export interface ClassifiedError {
  readonly failure: PostgresFailure;
  /** Waiting may help: the server was unreachable, restarting, busy, or chose this statement as a deadlock's victim. */
  readonly transient: boolean;
  /**
   * The server answered the statement with an error, so it did nothing; false when the
   * connection ended before an answer (a statement sent may then have been committed).
   */
  readonly answered: boolean;
  /** The driver gave the statement up after `query_timeout` without an answer: sending it again would wait as long. */
  readonly timedOut?: true;
  /** The server closed the connection with its answer: the client cannot serve another call. */
  readonly closed?: true;
}

/** Where the failure happened, for messages. */
export interface FailureContext {
  readonly location: string;
  readonly secrets: ReadonlyArray<string>;
}

/** Network errors of Node's sockets and resolver that mean "no server there now". */
const UNREACHABLE: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused (is the server running, and on this port?)',
  ECONNRESET: 'the connection was reset',
  EPIPE: 'the connection was closed',
  ETIMEDOUT: 'the connection timed out',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  EHOSTDOWN: 'the host is down',
  ENOTFOUND: 'the host name is unknown',
  EAI_AGAIN: 'the host name could not be resolved now',
  // Of a socket's connect: a file the URL names is another mistake (classifyError).
  ENOENT: 'there is no server socket at that path',
  EADDRNOTAVAIL: 'the address is not available',
};

/**
 * SQLSTATEs of a server going away or not ready yet (class 08 is the connection's own). One code
 * stands for several causes, which the server's own words tell apart (pg_terminate_backend and a
 * shutdown are both 57P01; the server's max_connections and a role's or a database's CONNECTION
 * LIMIT are all 53300): the message keeps them.
 */
const SERVER_GOING: Readonly<Record<string, string>> = {
  '57P01': 'the server is shutting down, or an administrator ended the connection',
  '57P02': 'the server is restarting after a crash',
  '57P03': 'the server is starting up or shutting down',
  '53300':
    "the server refused a connection past a limit: its max_connections, or the role's or the database's CONNECTION LIMIT",
};

/** SQLSTATEs that mean "run it again": the statement lost a serialization race or a deadlock and did nothing. */
const RETRY_STATEMENT = new Set(['40001', '40P01', '55P03']);

/** The codes of Node's checks of a server's certificate chain (OpenSSL's verify errors). */
const UNTRUSTED_CERTIFICATE = /CERT|ISSUER|SIGNATURE|HOSTNAME_MISMATCH|(^|_)CRL(_|$)/u;

/** The messages of the driver's own connection failures, which carry no code. */
const LOST_CONNECTION = /connection terminated|timeout expired|timeout exceeded when trying to connect|not queryable/iu;

/** The driver's message when a statement stayed unanswered for its `query_timeout`. */
const UNANSWERED_STATEMENT = /query read timeout/iu;

const oneLine = (text: string): string => text.replace(/\s+/gu, ' ').trim();

const field = (error: unknown, name: string): string | undefined => {
  if (typeof error !== 'object' || error === null) return undefined;
  const value: unknown = (error as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : undefined;
};

/** Understands an exception from the driver (a `DatabaseError`, a socket error, or one of its own). Never throws. */
export const classifyError = (error: unknown, context: FailureContext): ClassifiedError => {
  const { location } = context;
  // What the driver says may quote what it was given: its text is cleaned of the URL's secrets,
  // and this code's own words around it are not (a password of one letter must not blank it out
  // of every word, and show itself so).
  const clean = (text: string): string => scrubSecretsAround(oneLine(text), location, context.secrets);
  const made = (
    code: PostgresFailureCode,
    message: string,
    transient: boolean,
    answered: boolean,
  ): ClassifiedError => ({ failure: failure(code, oneLine(message)), transient, answered });
  const code = field(error, 'code');
  const message = clean(describeError(error));
  // A file the URL names (sslrootcert, sslcert, sslkey) that cannot be read: the driver reads it
  // before it connects, and it is a mistake in the URL, not a server away, whatever its code.
  const given = field(error, 'path');
  const path = given === undefined ? undefined : clean(given);
  if (code !== undefined && path !== undefined && field(error, 'syscall') !== 'connect')
    return made(
      'store_url',
      `the URL of PostgreSQL at ${location} names a file that cannot be read: ${path} (${code === 'ENOENT' ? 'there is no such file' : code})`,
      false,
      true,
    );
  // TLS refused (a key or certificate the URL names that is not one, or a server certificate it
  // does not trust): the URL must change, and waiting changes nothing.
  if (code !== undefined && /^ERR_OSSL_/u.test(code))
    return made(
      'store_url',
      `the URL of PostgreSQL at ${location} names a TLS key or certificate that cannot be used: ${message} (check sslcert=, sslkey=, sslrootcert= and sslpassword=)`,
      false,
      true,
    );
  if (code !== undefined && (/^ERR_TLS_/u.test(code) || UNTRUSTED_CERTIFICATE.test(code)))
    return made(
      'store_url',
      `PostgreSQL at ${location} showed a certificate the URL's TLS settings do not accept: ${message} (name the authority that signed it with sslrootcert=, or check the host name)`,
      false,
      true,
    );
  if (code === 'ERR_SOCKET_BAD_PORT')
    return made(
      'store_url',
      `the port of PostgreSQL at ${location} (from the URL, or PGPORT when the URL names none) is out of range: ${message}`,
      false,
      true,
    );
  const unreachable = (reason: string, answered = false): ClassifiedError =>
    made('store_unreachable', `cannot reach PostgreSQL at ${location}: ${reason}`, true, answered);
  if (code !== undefined && UNREACHABLE[code] !== undefined) return unreachable(UNREACHABLE[code]);
  if (code !== undefined && SERVER_GOING[code] !== undefined)
    return unreachable(`${SERVER_GOING[code]} (${message})`, code === '53300');
  if (code !== undefined && code.startsWith('08')) return unreachable(`the connection failed (${message})`);
  // The server ends a session idle outside a transaction past its idle_session_timeout, and so
  // only before it reads a statement: one sent on a pooled connection as it was closed did
  // nothing, and a new connection serves it at once, a change included.
  if (code === '57P05')
    return {
      ...unreachable(`the server closed a connection idle past its idle_session_timeout (${message})`, true),
      closed: true,
    };
  switch (code) {
    case '28P01':
    case '28000':
      return made('store_auth', `PostgreSQL at ${location} refused the credentials: ${message}`, false, true);
    case '42501':
      return made(
        'store_privilege',
        `PostgreSQL at ${location} refused an operation: ${message} (grant the privileges the store needs, or run "fact-tracker db migrate" as the schema's owner)`,
        false,
        true,
      );
    case '25006':
      // A hot standby, or default_transaction_read_only set for the role or the database: the
      // statement was refused whole, and waiting will not make the server take writes.
      return made(
        'store_privilege',
        `PostgreSQL at ${location} is read-only (a hot standby, or default_transaction_read_only is on) and refused a write, so nothing was written: ${message} (point the store at the primary, or turn default_transaction_read_only off for the store's role and database)`,
        false,
        true,
      );
    case '3D000':
      return made('store_url', `PostgreSQL at ${location}: ${message}`, false, true);
    case 'FT001':
      return made('store_schema', `PostgreSQL at ${location}: ${message}`, false, true);
    // The migration script's refusal of a database whose encoding lacks characters (schema.ts).
    case 'FT002':
      return made('store_url', `PostgreSQL at ${location}: ${message}`, false, true);
    case '42P01':
    case '3F000':
    // A column renamed or dropped by hand, which the server names as the statement wrote it (by
    // an alias, or bare): db migrate names it as table.column.
    case '42703':
      return made(
        'store_schema',
        `PostgreSQL at ${location} lacks ${code === '42703' ? 'a column of ' : ''}the store's tables (${message}): run "fact-tracker db migrate"`,
        false,
        true,
      );
    default:
      break;
  }
  // The server's statement_timeout (queryTimeoutMs), or an administrator's cancel: trying again
  // at once would wait as long again, on the same lock most likely.
  if (code === '57014')
    return made(
      'store_unreachable',
      `PostgreSQL at ${location} cancelled a statement, so it did nothing: ${message} (it ran past queryTimeoutMs, waiting on a lock another transaction holds or on an overloaded server, or an administrator cancelled it)`,
      false,
      true,
    );
  if (code !== undefined && RETRY_STATEMENT.has(code))
    return made('io', `PostgreSQL at ${location} gave up a statement: ${message}`, true, true);
  if (code !== undefined && /^[0-9A-Z]{5}$/u.test(code))
    return made('io', `PostgreSQL at ${location} failed (${code}): ${message}`, false, true);
  // The driver's own failures carry no code: a password it needs but was not given, a lost connection.
  if (/password|SASL|SCRAM/iu.test(message))
    return made(
      'store_auth',
      `PostgreSQL at ${location} asks for credentials the URL does not give: ${message}`,
      false,
      true,
    );
  if (/pool after calling end/iu.test(message)) return made('io', `the store at ${location} is closed`, false, true);
  if (/ssl/iu.test(message)) return made('store_url', `PostgreSQL at ${location}: ${message}`, false, true);
  if (LOST_CONNECTION.test(message)) return unreachable(`the connection was lost (${message})`);
  if (UNANSWERED_STATEMENT.test(message))
    return {
      ...made(
        'store_unreachable',
        `PostgreSQL at ${location} left a statement unanswered past queryTimeoutMs, so its connection was given up (${message})`,
        true,
        false,
      ),
      timedOut: true,
    };
  if (error instanceof TypeError || error instanceof RangeError || error instanceof ReferenceError)
    return {
      failure: internalFailureSaying(message),
      transient: false,
      answered: true,
    };
  return made('io', `PostgreSQL at ${location} failed: ${message}`, false, false);
};
