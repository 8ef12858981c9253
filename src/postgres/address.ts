/**
 * A PostgreSQL address as a user gives it (`--store`, `FACT_TRACKER_STORE`): checked before any
 * connection, and turned into the form every message shows, without its password. The password
 * reaches the driver and nothing else: no message, no location, no log line.
 */
import * as E from 'fp-ts/lib/Either.js';
import { refuseArgument } from '../base/describe.js';
import { type Failure, failure } from '../base/failure.js';

/** The URL schemes a PostgreSQL store is named by. */
export const POSTGRES_SCHEMES = ['postgres:', 'postgresql:'] as const;

/** A checked PostgreSQL URL. */
export interface PostgresAddress {
  /** The URL as given, for the driver only: it may hold a password. */
  readonly url: string;
  /** The URL without its password (neither in the user part nor as a `password` parameter) or `sslpassword`: what messages show. */
  readonly location: string;
  /** The password the URL holds (as written and decoded) and its `sslpassword`, for scrubbing messages; empty when none. */
  readonly secrets: ReadonlyArray<string>;
}

/** True when `text` names a PostgreSQL store (`postgres://` or `postgresql://`) rather than a folder. */
export const isPostgresUrl = (text: string): boolean => {
  // A text that is none (null) is a programmer's mistake, as for the core's text predicates.
  if (typeof text !== 'string') refuseArgument('the text', text, 'a string');
  return /^postgres(?:ql)?:\/\//iu.test(text.trim());
};

const FORM = 'postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE';

/** The parameters of a URL that hold a secret: the password, and the passphrase of the client's TLS key. */
const SECRET_PARAMETERS = ['password', 'sslpassword'] as const;

/** Decodes a percent-encoded part, or keeps it as written when it is not valid encoding. */
const decoded = (part: string): string => {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
};

/** The values of `ssl=` the driver reads; another makes it fail inside its handshake, out of any call's reach. */
const SSL_VALUES = new Set(['true', '1', '0', 'no-verify']);

/** The parameters that set TLS up as an object, whatever `ssl=` says. */
const TLS_FILE_PARAMETERS = ['sslmode', 'sslcert', 'sslkey', 'sslrootcert'] as const;

/**
 * What is wrong with a parameter the driver reads before it connects, or undefined: the port and
 * the TLS settings, which the driver takes as given and fails on in ways a call cannot answer
 * (a port out of range throws as the socket starts, an unknown `ssl=` inside the handshake).
 * Said without the value, which may be a mistyped password.
 */
const wrongParameter = (parameters: URLSearchParams): string | undefined => {
  // An empty port= is none: the driver takes the host part's.
  const isPort = (port: string): boolean =>
    port === '' || (/^[0-9]{1,5}$/u.test(port) && Number(port) >= 1 && Number(port) <= 65_535);
  if (!parameters.getAll('port').every(isPort)) return 'port= parameter is not a port (a whole number from 1 to 65535)';
  const tlsObject = TLS_FILE_PARAMETERS.some((name) => parameters.getAll(name).some((value) => value !== ''));
  // An empty ssl= or sslnegotiation= is none, as the driver reads it (a template's unset variable).
  if (!tlsObject && !parameters.getAll('ssl').every((ssl) => ssl === '' || SSL_VALUES.has(ssl)))
    return 'ssl= parameter is not one of true, 1, 0 or no-verify (or give sslmode=)';
  if (
    !parameters
      .getAll('sslnegotiation')
      .every((negotiation) => negotiation === '' || negotiation === 'postgres' || negotiation === 'direct')
  )
    return 'sslnegotiation= parameter is neither postgres nor direct';
  return undefined;
};

/**
 * Whether `parsed` holds an `@` past its host part where the driver reads no credentials: in a
 * parameter's name, in the fragment, or (with no user before the host) in the database before a
 * `:` or `/`. A `/`, `?` or `#` written as it is in a password ends the host part there
 * (`postgres://app:2024#Summer@db/memory` is host app, port 2024), so the driver would connect
 * elsewhere, and the location every message shows would hold the password as its text.
 */
const credentialsPastHost = (parsed: URL): boolean =>
  [...parsed.searchParams.keys()].some((name) => name.includes('@')) ||
  parsed.hash.includes('@') ||
  (parsed.username === '' && parsed.password === '' && /@.*[:/]/u.test(parsed.pathname));

/** A space or a `%` not followed by two hex digits: the driver percent-encodes the whole URL first when it holds one. */
const REENCODED = / |%[^a-f0-9]|%[a-f0-9][^a-f0-9]/iu;

/**
 * The part of `url` the driver cannot decode, or undefined. The driver (pg-connection-string)
 * decodes the user, the password, the host and the database of the URL (the first three unless a
 * parameter gives them instead), after percent-encoding the whole URL (the `%` of `%XX` kept
 * only where XX are digits) when it holds a space or a stray `%`; a `%XX` sequence that is no
 * UTF-8 there, or a lone `%` in the database, throws "URI malformed" out of every call's connect.
 */
const undecodablePart = (url: string): string | undefined => {
  let read: URL;
  try {
    read = new URL(REENCODED.test(url) ? encodeURI(url).replace(/%25(\d\d)/gu, '%$1') : url);
  } catch {
    return 'text';
  }
  const given = (name: string): boolean => (read.searchParams.get(name) ?? '') !== '';
  const parts: ReadonlyArray<readonly [string, string, boolean]> = [
    ['user', read.username, !given('user')],
    ['password', read.password, !given('password')],
    ['host', read.hostname, !given('host')],
    ['database', read.pathname.slice(1), true],
  ];
  return parts.find(
    ([, part, decoded]) => decoded && E.isLeft(E.tryCatch(() => decodeURIComponent(part), String)),
  )?.[0];
};

/**
 * Checks a PostgreSQL URL: `postgres://` or `postgresql://`, and a URL the WHATWG parser reads
 * (so a port out of range or a user without a host is refused here, in one line, not by the
 * driver), with the parameters the driver reads before it connects checked too, the parts it
 * decodes, and no `@` of credentials past the host part. The message never repeats the text,
 * which may hold a password.
 */
export const parsePostgresUrl = (text: string): E.Either<Failure<'store_url'>, PostgresAddress> => {
  const url = typeof text === 'string' ? text.trim() : '';
  // What is no text is no URL: refused as one that is not of the form.
  if (!isPostgresUrl(url))
    return E.left(failure('store_url', `a PostgreSQL store is named by a URL of the form ${FORM}`));
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return E.left(
      failure(
        'store_url',
        `the store URL is not a valid URL of the form ${FORM} (check the port and any special characters: percent-encode them)`,
      ),
    );
  }
  if (credentialsPastHost(parsed))
    return E.left(
      failure(
        'store_url',
        'the store URL holds an @ past its host part, which a /, ? or # ends: a user or password holding one of them is written with it percent-encoded (%2F, %3F, %23)',
      ),
    );
  const parameter = wrongParameter(parsed.searchParams);
  if (parameter !== undefined) return E.left(failure('store_url', `the store URL's ${parameter}`));
  const undecodable = undecodablePart(url);
  if (undecodable !== undefined)
    return E.left(
      failure(
        'store_url',
        `the store URL's ${undecodable} holds percent-encoding that does not decode to text (a stray %, or %XX bytes of no UTF-8 character): write each special character as the %XX of its UTF-8 bytes`,
      ),
    );
  // The driver reads only password= and sslpassword=, but one named in another case (Password=)
  // holds the user's password all the same: never shown.
  const secretNames = [...new Set(parsed.searchParams.keys())].filter((name) =>
    (SECRET_PARAMETERS as ReadonlyArray<string>).includes(name.toLowerCase()),
  );
  const secrets = [
    parsed.password,
    decoded(parsed.password),
    ...secretNames.flatMap((name) => parsed.searchParams.getAll(name)),
  ].filter((secret) => secret !== '');
  parsed.password = '';
  // Deleting re-encodes every parameter: only when there is one to delete.
  for (const name of secretNames) parsed.searchParams.delete(name);
  return E.right({ url, location: parsed.href, secrets: [...new Set(secrets)] });
};

/**
 * Below this length a secret is hidden only where it stands apart (quoted, after `=`, between
 * spaces): a password of a letter or two is in every other word of a message, and blanking it
 * out of them would both garble the message and show the password.
 */
const SHORT_SECRET = 6;

const escaped = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&');

/** `message` with every secret of `address` replaced by `***`: a driver's message may quote what it was given. */
export const scrubSecrets = (message: string, secrets: ReadonlyArray<string>): string =>
  [...secrets]
    .sort((a, b) => b.length - a.length)
    .reduce(
      (text, secret) =>
        secret.length >= SHORT_SECRET
          ? text.split(secret).join('***')
          : text.replace(new RegExp(`(?<![\\p{L}\\p{N}])${escaped(secret)}(?![\\p{L}\\p{N}])`, 'gu'), '***'),
      message,
    );

/**
 * `scrubSecrets` of a message that names the server by `location`, which holds no password: the
 * location is kept as it is, so a password that is also a user, host, port or database name
 * neither garbles it nor shows where it stands in it.
 */
export const scrubSecretsAround = (message: string, location: string, secrets: ReadonlyArray<string>): string =>
  location === ''
    ? scrubSecrets(message, secrets)
    : message
        .split(location)
        .map((part) => scrubSecrets(part, secrets))
        .join(location);
