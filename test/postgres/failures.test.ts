/**
 * PostgreSQL addresses and failures without a server: a URL is checked and shown without its
 * password, and each kind of driver exception becomes its tagged one-line failure, with what it
 * means for trying again.
 */
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { isPostgresUrl, parsePostgresUrl } from '../../src/postgres/address.js';
import { classifyError } from '../../src/postgres/failures.js';

const context = { location: 'postgres://app@db.internal:5432/memory', secrets: ['s3cret'] };

/** An exception as the driver throws it: a message and the fields it sets. */
const thrown = (message: string, fields: Record<string, string> = {}): Error =>
  Object.assign(new Error(message), fields);

describe('a PostgreSQL address', () => {
  it('is named by postgres:// or postgresql://, and anything else is a folder', () => {
    expect(['postgres://h/d', 'postgresql://h/d', ' POSTGRES://h/d'].map(isPostgresUrl)).toEqual([true, true, true]);
    expect(['.fact-tracker/sessions', 'postgres:/x', 'C:\\postgres', 'mysql://h/d'].map(isPostgresUrl)).toEqual([
      false,
      false,
      false,
      false,
    ]);
  });

  it('is shown without its password, in the user part or as a parameter, and keeps its other parameters as written', () => {
    const parsed = parsePostgresUrl('postgres://app:p%40ss@db:5432/memory?sslmode=require&password=other');
    expect(E.isRight(parsed) && parsed.right.location).toBe('postgres://app@db:5432/memory?sslmode=require');
    expect(E.isRight(parsed) && [...parsed.right.secrets].sort()).toEqual(['other', 'p%40ss', 'p@ss']);
    // The passphrase of the client's TLS key is a secret too.
    const keyed = parsePostgresUrl('postgres://app@db/memory?sslkey=/k.pem&sslpassword=hunter2&sslmode=verify-full');
    expect(E.isRight(keyed) && keyed.right.location).toBe(
      'postgres://app@db/memory?sslkey=%2Fk.pem&sslmode=verify-full',
    );
    expect(E.isRight(keyed) && keyed.right.secrets).toEqual(['hunter2']);
    const socket = parsePostgresUrl('postgresql:///memory?host=/var/run/postgresql');
    expect(E.isRight(socket) && socket.right.location).toBe('postgresql:///memory?host=/var/run/postgresql');
  });

  it('is shown without a password parameter whose name is written in another case (Password=, SSLPASSWORD=), which holds the password all the same', () => {
    const parsed = parsePostgresUrl(
      'postgres://app@db/memory?Password=pw-S3cret&sslmode=require&SSLPASSWORD=key-S3cret',
    );
    expect(E.isRight(parsed) && parsed.right.location).toBe('postgres://app@db/memory?sslmode=require');
    expect(E.isRight(parsed) && [...parsed.right.secrets].sort()).toEqual(['key-S3cret', 'pw-S3cret']);
  });

  it('is refused in one line that never repeats it', () => {
    for (const url of ['postgres://app:s3cret@db:99999/memory', 'postgres://app:s3cret@/memory', 'redis://db']) {
      const parsed = parsePostgresUrl(url);
      expect(E.isLeft(parsed) && parsed.left.code).toBe('store_url');
      expect(E.isLeft(parsed) && parsed.left.message).not.toContain('s3cret');
    }
  });

  it('has the parameters the driver reads before it connects checked: a port= out of range, an unknown ssl= or sslnegotiation=', () => {
    const base = 'postgres://app:s3cret@db:5432/memory?';
    for (const query of [
      'port=99999',
      'port=abc',
      'port=-1',
      'port=70000',
      'port=0',
      'port=5432&port=1e3',
      'ssl=foo',
      'ssl=false',
      'sslnegotiation=s3cret',
    ]) {
      const parsed = parsePostgresUrl(`${base}${query}`);
      expect(E.isLeft(parsed) && parsed.left.code, query).toBe('store_url');
      expect(E.isLeft(parsed) && parsed.left.message, query).toMatch(
        /^the store URL's (port|ssl|sslnegotiation)= parameter/u,
      );
      expect(E.isLeft(parsed) && parsed.left.message).not.toContain('s3cret');
    }
    for (const query of [
      'port=6432',
      'port=',
      'ssl=true',
      'ssl=no-verify',
      'ssl=x&sslmode=require',
      'sslnegotiation=direct',
      // Empty: none, as the driver reads it (a template's unset variable).
      'ssl=',
      'sslnegotiation=',
    ])
      expect(E.isRight(parsePostgresUrl(`${base}${query}`)), query).toBe(true);
  });

  it('is refused when the driver cannot decode its user, password, host or database (a %XX that is no UTF-8), naming the part, not the text', () => {
    for (const [url, part] of [
      ['postgres://app:s3cret%C3@db/memory', 'password'],
      ['postgres://app%C3:s3cret@db/memory', 'user'],
      ['postgres://app:s3cret@db%C3/memory', 'host'],
      ['postgres://app:s3cret@db/mem%C3ory', 'database'],
      ['postgres://app:s3cret@db/memory%', 'database'],
      // A space makes the driver percent-encode the whole URL first: the %C3 of a valid é then stands alone.
      ['postgres://app:s3cr%C3%80t@db/my memory', 'password'],
    ] as const) {
      const parsed = parsePostgresUrl(url);
      expect(E.isLeft(parsed) && parsed.left.code, url).toBe('store_url');
      expect(E.isLeft(parsed) && parsed.left.message, url).toMatch(new RegExp(`^the store URL's ${part} `, 'u'));
      expect(E.isLeft(parsed) && parsed.left.message, url).not.toMatch(/s3cr|%C3/u);
    }
    for (const url of [
      'postgres://app:s3cr%C3%A9t@db/memory',
      'postgres://app:s3cret%@db/memory',
      // What a parameter names instead is not decoded from the URL's part.
      'postgres://app%C3@db/memory?user=app',
      'postgres://app@db%C3/memory?host=/var/run/postgresql',
      'postgres://app@db/memory?password=%C3',
    ])
      expect(E.isRight(parsePostgresUrl(url)), url).toBe(true);
  });

  it('is refused when a /, ? or # written as it is in a password ends the host part before the @, never showing the password', () => {
    // The parser (the driver's too) reads the user as the host and the password's digits as the
    // port: the rest, password and all, would be the database, a parameter or a fragment.
    for (const url of [
      'postgres://app:2024#Summer@db:5432/memory',
      'postgres://app:2024?Summer@db:5432/memory',
      'postgres://app:2024/Summer@db:5432/memory',
      'postgres://app:#Summer@db/memory',
      'postgres://app:/Summer@db/memory?sslmode=verify-full',
      'postgresql://app:8/kd9+Xz==@db:5432/memory',
    ]) {
      const parsed = parsePostgresUrl(url);
      expect(E.isLeft(parsed) && parsed.left.code, url).toBe('store_url');
      expect(E.isLeft(parsed) && parsed.left.message, url).toMatch(/^the store URL holds an @ past its host part/u);
      expect(E.isLeft(parsed) && parsed.left.message, url).not.toMatch(/Summer|kd9/u);
    }
    // An @ where the driver reads it: a user's or a password's given as a parameter, a file's
    // path, a database's name after credentials, a password percent-encoded.
    for (const url of [
      'postgres://app:2024%23Summer@db:5432/memory',
      'postgres://app:2024%2FSummer@db:5432/memory',
      'postgres://db:5432/memory?user=me@corp&password=a@b',
      'postgres://db/memory?sslrootcert=/home/me@corp/ca.pem',
      'postgres://app:s3cret@db:5432/team@corp',
    ])
      expect(E.isRight(parsePostgresUrl(url)), url).toBe(true);
  });
});

describe('a PostgreSQL failure', () => {
  it.each([
    ['connection refused', thrown('connect ECONNREFUSED', { code: 'ECONNREFUSED' }), 'store_unreachable', true, false],
    ['an unknown host', thrown('getaddrinfo ENOTFOUND db', { code: 'ENOTFOUND' }), 'store_unreachable', true, false],
    [
      'no server socket',
      thrown('connect ENOENT /run/postgresql/.s.PGSQL.5432', {
        code: 'ENOENT',
        syscall: 'connect',
        address: '/run/postgresql/.s.PGSQL.5432',
      }),
      'store_unreachable',
      true,
      false,
    ],
    [
      'a file the URL names that does not exist',
      thrown("ENOENT: no such file or directory, open '/nonexistent'", {
        code: 'ENOENT',
        syscall: 'open',
        path: '/nonexistent',
      }),
      'store_url',
      false,
      true,
    ],
    ['a connect timeout', thrown('timeout exceeded when trying to connect'), 'store_unreachable', true, false],
    ['a connection lost mid-statement', thrown('Connection terminated unexpectedly'), 'store_unreachable', true, false],
    ['a server shutting down', thrown('terminating connection', { code: '57P01' }), 'store_unreachable', true, false],
    [
      'a pooled connection the server closed as idle (idle_session_timeout) as a call took it',
      thrown('terminating connection due to idle-session timeout', { code: '57P05' }),
      'store_unreachable',
      true,
      true,
    ],
    [
      'a server starting up',
      thrown('the database system is starting up', { code: '57P03' }),
      'store_unreachable',
      true,
      false,
    ],
    [
      'a wrong password',
      thrown('password authentication failed for user "app"', { code: '28P01' }),
      'store_auth',
      false,
      true,
    ],
    [
      'no password given',
      thrown('SASL: SCRAM-SERVER-FIRST-MESSAGE: client password must be a string'),
      'store_auth',
      false,
      true,
    ],
    [
      'a missing privilege',
      thrown('permission denied for schema fact_tracker', { code: '42501' }),
      'store_privilege',
      false,
      true,
    ],
    [
      'a read-only server',
      thrown('cannot execute INSERT in a read-only transaction', { code: '25006' }),
      'store_privilege',
      false,
      true,
    ],
    ['a missing database', thrown('database "memory" does not exist', { code: '3D000' }), 'store_url', false, true],
    [
      'missing tables',
      thrown('relation "fact_tracker.sessions" does not exist', { code: '42P01' }),
      'store_schema',
      false,
      true,
    ],
    [
      'a missing column',
      thrown('column n.previous_state does not exist', { code: '42703' }),
      'store_schema',
      false,
      true,
    ],
    [
      'a newer schema',
      thrown('the schema fact_tracker is newer than version 1', { code: 'FT001' }),
      'store_schema',
      false,
      true,
    ],
    [
      'a database whose encoding lacks characters',
      thrown('the database keeps its text in LATIN1, which lacks characters', { code: 'FT002' }),
      'store_url',
      false,
      true,
    ],
    [
      'a statement the server cancelled (statement_timeout)',
      thrown('canceling statement due to statement timeout', { code: '57014' }),
      'store_unreachable',
      false,
      true,
    ],
    ['a statement the driver gave up', thrown('Query read timeout'), 'store_unreachable', true, false],
    ['a deadlock', thrown('deadlock detected', { code: '40P01' }), 'io', true, true],
    ['a full disk', thrown('could not extend file', { code: '53100' }), 'io', false, true],
    ['a closed store', thrown('Cannot use a pool after calling end on the pool'), 'io', false, true],
    [
      'a client key that is no key (sslkey=)',
      thrown('error:1E08010C:DECODER routines::unsupported', { code: 'ERR_OSSL_UNSUPPORTED' }),
      'store_url',
      false,
      true,
    ],
    [
      'a server certificate the URL does not trust',
      thrown('self-signed certificate', { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' }),
      'store_url',
      false,
      true,
    ],
    [
      'a server certificate for another host',
      thrown("Hostname/IP does not match certificate's altnames", { code: 'ERR_TLS_CERT_ALTNAME_INVALID' }),
      'store_url',
      false,
      true,
    ],
    [
      'a port out of range (PGPORT)',
      Object.assign(new RangeError('Port should be >= 0 and < 65536. Received type number (99999).'), {
        code: 'ERR_SOCKET_BAD_PORT',
      }),
      'store_url',
      false,
      true,
    ],
    ['a bug', new TypeError('x is not a function'), 'internal', false, true],
  ])('%s: %s, transient %s, answered %s', (_name, error, code, transient, answered) => {
    const classified = classifyError(error, context);
    expect([classified.failure.code, classified.transient, classified.answered]).toEqual([code, transient, answered]);
  });

  it('names which limit refused a connection, and who ended one, in the server’s own words', () => {
    const said = (message: string, code: string): string =>
      classifyError(thrown(message, { code }), context).failure.message;
    expect(said('too many connections for role "agent"', '53300')).toBe(
      `cannot reach PostgreSQL at postgres://app@db.internal:5432/memory: the server refused a connection past a limit: its max_connections, or the role's or the database's CONNECTION LIMIT (too many connections for role "agent")`,
    );
    expect(said('sorry, too many clients already', '53300')).toContain('(sorry, too many clients already)');
    expect(said('terminating connection due to administrator command', '57P01')).toBe(
      'cannot reach PostgreSQL at postgres://app@db.internal:5432/memory: the server is shutting down, or an administrator ended the connection (terminating connection due to administrator command)',
    );
  });

  it('says a read-only server refused a write and nothing was written, and where to write instead', () => {
    const { failure } = classifyError(
      thrown('cannot execute UPDATE in a read-only transaction', { code: '25006' }),
      context,
    );
    expect(failure.message).toBe(
      "PostgreSQL at postgres://app@db.internal:5432/memory is read-only (a hot standby, or default_transaction_read_only is on) and refused a write, so nothing was written: cannot execute UPDATE in a read-only transaction (point the store at the primary, or turn default_transaction_read_only off for the store's role and database)",
    );
  });

  it('is one line naming the store, with every secret of its URL scrubbed', () => {
    const { failure } = classifyError(
      thrown('password "s3cret"\nfor user "app"\n  rejected', { code: '28P01' }),
      context,
    );
    expect(failure.message).toBe(
      'PostgreSQL at postgres://app@db.internal:5432/memory refused the credentials: password "***" for user "app" rejected',
    );
  });

  it('keeps the store’s location whole when the password is also a part of it (a name, a digit of the host): nothing there shows where the password stands', () => {
    for (const secret of ['memory', '1', 'app']) {
      const { failure } = classifyError(thrown(`password "${secret}" rejected`, { code: '28P01' }), {
        location: 'postgres://app@127.0.0.1:5432/memory',
        secrets: [secret],
      });
      expect(failure.message).toBe(
        'PostgreSQL at postgres://app@127.0.0.1:5432/memory refused the credentials: password "***" rejected',
      );
    }
  });

  it('leaves the words around a short password whole: only where it stands apart is it hidden, so no blanked letter shows it', () => {
    const place = { location: 'postgres://u@127.0.0.1:1/db', secrets: ['a'] };
    expect(
      classifyError(thrown('connect ECONNREFUSED 127.0.0.1:1', { code: 'ECONNREFUSED' }), place).failure.message,
    ).toBe(
      'cannot reach PostgreSQL at postgres://u@127.0.0.1:1/db: connection refused (is the server running, and on this port?)',
    );
    for (const secret of ['a', 'e', 'ss', 'eta'])
      expect(
        classifyError(
          thrown(`password authentication failed for "${secret}": secret=${secret} a${secret}b`, { code: '28P01' }),
          {
            ...place,
            secrets: [secret],
          },
        ).failure.message,
      ).toBe(
        `PostgreSQL at postgres://u@127.0.0.1:1/db refused the credentials: password authentication failed for "***": secret=*** a${secret}b`,
      );
    // From six characters on, a secret is hidden wherever it is, inside a word too.
    expect(
      classifyError(thrown('bad token xs3cr3tx', { code: '28P01' }), { ...place, secrets: ['s3cr3t'] }).failure.message,
    ).toBe('PostgreSQL at postgres://u@127.0.0.1:1/db refused the credentials: bad token x***x');
  });
});
