/**
 * Where the commands keep and read live sessions: `--store` (a folder, or a `postgres://` /
 * `postgresql://` URL), else `--sessions-dir` (the folder form of before), else the environment
 * variable `FACT_TRACKER_STORE`, else the project's `.fact-tracker/sessions`. The choice is
 * checked without connecting, and the PostgreSQL store is imported only when a URL names it:
 * a user of the files never loads the driver, and the hook's bundle stays without it.
 */
import * as E from 'fp-ts/lib/Either.js';
import { describeError } from '../base/describe.js';
import { type Failure, failure } from '../base/failure.js';
import type { SessionStore } from '../live/session/store.js';
import { isPostgresUrl, parsePostgresUrl, type PostgresAddress } from '../postgres/address.js';

/** The environment variable that names the store when no option does. */
export const STORE_VARIABLE = 'FACT_TRACKER_STORE';

/** A store as named: a folder (absent: the project's default one), or a PostgreSQL database. */
export type StoreChoice =
  | {
      readonly kind: 'folder';
      /** The folder as given; absent for the default. */
      readonly directory?: string;
      /** Where it was named: on the command line, or by the environment variable (relative to the project). */
      readonly from: 'option' | 'environment' | 'default';
    }
  | { readonly kind: 'postgres'; readonly address: PostgresAddress };

/** What a command line names the store with. */
export interface StoreNaming {
  readonly store?: string;
  readonly sessionsDir?: string;
}

/** A URL of a scheme other than PostgreSQL's: a mistake, never a folder named `mysql:`. */
const OTHER_URL = /^([a-z][a-z0-9+.-]*):\/\//iu;

/** `postgres:` or `postgresql:` without the `//` of a URL: a mistyped URL, never a folder. */
const POSTGRES_WITHOUT_SLASHES = /^postgres(?:ql)?:(?!\/\/)/iu;

/** The keywords of a libpq connection string (`host=H dbname=D ...`), one per word. */
const CONNINFO_WORD =
  /(?:^|\s)(?:host|hostaddr|port|dbname|user|password|passfile|sslmode|sslpassword|service|application_name|connect_timeout|options)\s*=/giu;

/** A connection string's password (`password=`, `sslpassword=`), wherever it is. */
const CONNINFO_PASSWORD = /(?:^|\s)(?:ssl)?password\s*=/iu;

/**
 * A URL's password parameter (`?password=`, `&sslpassword=`) in a text no PostgreSQL scheme makes
 * a URL: the `pg` driver's socket form, `socket:/var/run/postgresql?db=D&password=P`, is such a text.
 */
const QUERY_PASSWORD = /[?&](?:ssl)?password=/iu;

/**
 * `USER:PASSWORD@HOST`, the credentials of a URL, anywhere in a text (after a scheme, a `//`, a
 * mistyped scheme, or none): a `:`, a non-empty password (a `/` or `:` in it too), an `@` and
 * a host's first character.
 */
const CREDENTIALS = /:[^\s@]+@[^\s@/]/u;

/** A folder given as a path (`./`, `../`, `/` but not `//`, or a drive's `C:\` / `C:/`): a folder, whatever its name holds. */
const EXPLICIT_FOLDER = /^(?:\.{1,2}[\\/]|\/(?!\/)|[A-Za-z]:[\\/])/u;

/** `text` without one layer of matching quotes around it (`'...'` or `"..."`). */
const unquoted = (text: string): string => /^(['"])([\s\S]*)\1$/u.exec(text)?.[2] ?? text;

/** How a folder named like a refused address is given all the same (the name itself is never repeated). */
const AS_FOLDER = 'a folder of such a name is given as a path, ./NAME or /PATH, which is always a folder';

/**
 * Why `text`, not a URL, is no folder either but a mistyped PostgreSQL address; undefined for a
 * folder. What holds a password (`USER:PASSWORD@HOST` anywhere, a connection string's
 * `password=`, or a URL's `?password=`) is never taken for a folder unless it is given as a path (`./NAME`, `/PATH`): a
 * folder named after it would copy the password into the settings and every message naming the store.
 */
export const mistypedAddress = (text: string): string | undefined => {
  const trimmed = text.trim();
  if (EXPLICIT_FOLDER.test(trimmed)) return undefined;
  const inner = unquoted(trimmed).trim();
  if (inner !== trimmed && (isPostgresUrl(inner) || OTHER_URL.test(inner) || CREDENTIALS.test(inner)))
    return 'is an address inside quote characters, which are part of the text: give it without them';
  if (POSTGRES_WITHOUT_SLASHES.test(inner)) return 'is a PostgreSQL URL without the // after its scheme';
  if (OTHER_URL.test(inner)) return undefined; // named as another scheme's URL by the caller
  if (CREDENTIALS.test(inner))
    return `is an address with USER:PASSWORD@HOST credentials, without its postgres:// scheme (${AS_FOLDER}, for example ./team:dev@2024)`;
  if (CONNINFO_PASSWORD.test(inner) || (inner.match(CONNINFO_WORD)?.length ?? 0) >= 2)
    return `is a connection string of key=value words, which a store is not named by (${AS_FOLDER})`;
  // A folder named after it would copy the password into the settings, as credentials would.
  if (QUERY_PASSWORD.test(inner))
    return `is an address with a password parameter (?password=...), which a store is not named by (${AS_FOLDER})`;
  return undefined;
};

/** True when `text`, as a store, holds a password: a PostgreSQL URL's, or one of a mistyped address. */
export const holdsPassword = (text: string): boolean => {
  if (EXPLICIT_FOLDER.test(text.trim())) return false;
  if (isPostgresUrl(text)) {
    const parsed = parsePostgresUrl(text);
    return E.isLeft(parsed) ? CREDENTIALS.test(text) || /[?&]password=/iu.test(text) : parsed.right.secrets.length > 0;
  }
  const inner = unquoted(text.trim()).trim();
  return isPostgresUrl(inner)
    ? holdsPassword(inner)
    : CREDENTIALS.test(inner) || CONNINFO_PASSWORD.test(inner) || QUERY_PASSWORD.test(inner);
};

/** Reads one naming of a store (`what` says where it came from); the text is never repeated, as it may hold a password. */
const parseStore = (
  text: string,
  what: string,
  from: 'option' | 'environment',
): E.Either<Failure<'store_url'>, StoreChoice> => {
  if (isPostgresUrl(text))
    return E.bimap(
      (error: Failure<'store_url'>) => failure('store_url', `${what}: ${error.message}`),
      (address: PostgresAddress): StoreChoice => ({ kind: 'postgres', address }),
    )(parsePostgresUrl(text));
  const mistyped = mistypedAddress(text);
  if (mistyped !== undefined)
    return E.left(
      failure(
        'store_url',
        `${what} ${mistyped}; a store is a folder, or a URL of the form postgres://USER@HOST[:PORT]/DATABASE (the password in PGPASSWORD or ~/.pgpass)`,
      ),
    );
  const other = OTHER_URL.exec(text.trim());
  if (other !== null)
    return E.left(
      failure(
        'store_url',
        `${what} is a ${other[1]!.toLowerCase()}: URL; a store is a folder, or a postgres:// or postgresql:// URL`,
      ),
    );
  return E.right({ kind: 'folder', directory: text, from });
};

/**
 * Reads `--sessions-dir`, a folder: a PostgreSQL URL is refused (it names a store with `--store`),
 * and so is what `--store` refuses as a mistyped address, which would put its password into a
 * folder's name and every message naming it.
 */
const parseSessionsDir = (text: string): E.Either<Failure<'store_url'>, StoreChoice> =>
  isPostgresUrl(text)
    ? E.left(
        failure(
          'store_url',
          '--sessions-dir names a folder, and this is a PostgreSQL URL: give it with --store (its password in PGPASSWORD or ~/.pgpass)',
        ),
      )
    : parseStore(text, '--sessions-dir', 'option');

/**
 * The store `named` and `env` name, in that order of precedence, checked without connecting.
 * An empty environment variable counts as unset.
 */
export const chooseStore = (
  named: StoreNaming,
  env: Readonly<Record<string, string | undefined>> | undefined,
): E.Either<Failure<'store_url'>, StoreChoice> => {
  if (named.store !== undefined) return parseStore(named.store, '--store', 'option');
  if (named.sessionsDir !== undefined) return parseSessionsDir(named.sessionsDir);
  const variable = env?.[STORE_VARIABLE];
  if (variable !== undefined && variable.trim() !== '') return parseStore(variable, STORE_VARIABLE, 'environment');
  return E.right({ kind: 'folder', from: 'default' });
};

/**
 * The PostgreSQL session store at `address`, its module (and the driver) loaded now. A driver
 * that cannot be loaded (an installation without its dependencies) is one line.
 */
export const openPostgresStore = async (address: PostgresAddress): Promise<E.Either<Failure<'io'>, SessionStore>> => {
  try {
    const { postgresSessionStore } = await import('../postgres/sessionStore.js');
    return E.right(postgresSessionStore(address.url));
  } catch (error) {
    return E.left(
      failure(
        'io',
        `cannot load the PostgreSQL driver (pg): ${describeError(error)}; install the package's dependencies`,
      ),
    );
  }
};
