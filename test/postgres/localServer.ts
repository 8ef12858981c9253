/**
 * A real PostgreSQL server of our own, for the tests and the storage benchmark: `initdb` into a
 * temporary folder, started with `pg_ctl` on a free loopback port (and a socket in that folder),
 * stopped and removed after. Run as the `postgres` user when we run as root (the server refuses
 * root), as our own user otherwise. Password authentication over TCP, so the tests can check
 * what a wrong password gives. Where there are no binaries, `postgresUnavailable` says why.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import {
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { delimiter, join } from 'node:path';
import pg from 'pg';

/** The superuser's password on the test server. */
export const PASSWORD = 'test-secret-Pw9';

/** The folder of `initdb` and `pg_ctl`: on PATH, else where Debian installs them. */
const findBinaries = (): string | undefined => {
  const onPath = (process.env['PATH'] ?? '')
    .split(delimiter)
    .find((folder) => folder !== '' && existsSync(join(folder, 'initdb')) && existsSync(join(folder, 'pg_ctl')));
  if (onPath !== undefined) return onPath;
  const debian = '/usr/lib/postgresql';
  const versions = existsSync(debian) ? readdirSync(debian).sort((a, b) => Number(b) - Number(a)) : [];
  return versions.map((version) => join(debian, version, 'bin')).find((folder) => existsSync(join(folder, 'initdb')));
};

/** The user the server runs as: `postgres` when the tests run as root. */
const serverUser = (): { readonly name: string; readonly uid: number; readonly gid: number } | undefined => {
  if (process.getuid?.() !== 0) return { name: userInfo().username, uid: -1, gid: -1 };
  const found = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const group = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  if (found.status !== 0 || group.status !== 0) return undefined;
  return { name: 'postgres', uid: Number(found.stdout.trim()), gid: Number(group.stdout.trim()) };
};

const binaries = findBinaries();
const user = serverUser();

/** Why this machine cannot run the Postgres tests, or undefined when it can. */
export const postgresUnavailable: string | undefined =
  binaries === undefined
    ? 'no PostgreSQL server binaries (initdb, pg_ctl) on PATH or under /usr/lib/postgresql'
    : user === undefined
      ? 'running as root, and there is no postgres user to run the server as'
      : undefined;

/** Runs `file` as the server's user. */
const asServerUser = (file: string, args: ReadonlyArray<string>): string => {
  const [command, argv] =
    process.getuid?.() === 0 ? ['runuser', ['-u', user!.name, '--', file, ...args]] : [file, [...args]];
  return execFileSync(command, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], cwd: tmpdir() });
};

/** Runs a server binary as the server's user. */
const runAs = (command: string, args: ReadonlyArray<string>): string => asServerUser(join(binaries!, command), args);

/** A new folder the server's user owns. */
const serverFolder = (prefix: string): string => {
  const folder = mkdtempSync(prefix);
  if (user!.uid >= 0) chownSync(folder, user!.uid, user!.gid);
  return folder;
};

/** The variable naming the folder where the servers of one test run share their first data folder (test/globalSetup.ts). */
export const TEMPLATE_FOLDER_VARIABLE = 'FACT_TRACKER_TEST_PG_TEMPLATE';

/** A new data folder, with the superuser's password, made by `initdb` in `folder`. */
const initdb = (folder: string): string => {
  const passwordFile = join(folder, 'password');
  writeFileSync(passwordFile, `${PASSWORD}\n`);
  if (user!.uid >= 0) chownSync(passwordFile, user!.uid, user!.gid);
  const data = join(folder, 'data');
  runAs('initdb', [
    '-D',
    data,
    '-U',
    'postgres',
    `--pwfile=${passwordFile}`,
    '--auth-local=trust',
    '--auth-host=scram-sha-256',
    '-E',
    'UTF8',
    '--locale=C',
    '--no-sync',
    '--no-instructions',
  ]);
  return data;
};

/**
 * The data folder every server of this test run starts from, as a copy: `initdb` takes
 * seconds, a copy a fraction of one, and the suite starts a server per test file. The first
 * process to ask makes it, under a lock (a directory made once), in the run's shared folder;
 * the others wait for its name. Outside a test run (the bench), the process's own.
 */
let template: Promise<string> | undefined;

const sharedTemplate = async (shared: string): Promise<string> => {
  const ready = join(shared, 'ready');
  try {
    mkdirSync(join(shared, 'lock'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    for (let waited = 0; !existsSync(ready); waited += 50) {
      if (waited > 120_000) throw new Error(`no PostgreSQL data folder to copy in ${shared} after 2 minutes`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return readFileSync(ready, 'utf8');
  }
  const data = initdb(serverFolder(join(shared, 'data-')));
  writeFileSync(`${ready}.tmp`, data);
  renameSync(`${ready}.tmp`, ready);
  return data;
};

const ownTemplate = (): string => {
  const folder = serverFolder(join(tmpdir(), 'fact-tracker-pg-template-'));
  process.on('exit', () => rmSync(folder, { recursive: true, force: true }));
  return initdb(folder);
};

const newDataFolder = async (data: string): Promise<void> => {
  const shared = process.env[TEMPLATE_FOLDER_VARIABLE];
  template ??= shared === undefined ? Promise.resolve(ownTemplate()) : sharedTemplate(shared);
  asServerUser('cp', ['-a', await template, data]);
};

/** A free TCP port on the loopback address, as the system hands one out. */
const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject()));
    });
  });

/** A running test server. */
export interface TestServer {
  /** The superuser's URL, password included, to the database `database`. */
  url(database?: string, user?: string, password?: string): string;
  readonly port: number;
  /** The folder of the server's data, its socket, and with `tls` its certificate (`server.crt`). */
  readonly folder: string;
  /** Runs SQL as the superuser on the database `postgres`. */
  admin(sql: string, values?: ReadonlyArray<unknown>): Promise<pg.QueryResult>;
  /** A new empty database, and its URL. */
  createDatabase(): Promise<string>;
  /** Stops the server fast (open connections are ended) and starts it again. */
  restart(options?: { readonly downMs?: number }): Promise<void>;
  stop(): void;
}

/** How a test server is started. */
export interface ServerOptions {
  /**
   * TLS on, with a self-signed certificate for 127.0.0.1 (`server.crt` in the server's `folder`), and
   * a handshake left unfinished kept for 10 minutes (`authentication_timeout`), not one.
   */
  readonly tls?: boolean;
}

/** The settings that turn TLS on, with a new self-signed certificate in `folder` (made with `openssl`). */
const tlsSettings = (folder: string): string[] => {
  const certificate = join(folder, 'server.crt');
  const key = join(folder, 'server.key');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=127.0.0.1'].concat([
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      key,
      '-out',
      certificate,
    ]),
    { stdio: 'ignore' },
  );
  if (user!.uid >= 0) for (const file of [certificate, key]) chownSync(file, user!.uid, user!.gid);
  return ['-c ssl=on', `-c ssl_cert_file=${certificate}`, `-c ssl_key_file=${key}`, '-c authentication_timeout=600'];
};

/** Starts a server in a new temporary folder (call only when `postgresUnavailable` is undefined). */
export const startPostgresServer = async (options: ServerOptions = {}): Promise<TestServer> => {
  const folder = serverFolder(join(tmpdir(), 'fact-tracker-pg-'));
  const data = join(folder, 'data');
  await newDataFolder(data);
  const port = await freePort();
  // Loopback only; durability off, as a test server needs none and a shared machine is slow.
  const settings = [
    `-p ${port}`,
    `-c listen_addresses=127.0.0.1`,
    `-c unix_socket_directories=${folder}`,
    '-c fsync=off',
    '-c synchronous_commit=off',
    '-c full_page_writes=off',
    '-c max_connections=60',
    '-c shared_buffers=32MB',
    ...(options.tls === true ? tlsSettings(folder) : []),
  ].join(' ');
  const start = (): void => {
    runAs('pg_ctl', ['-D', data, '-l', join(folder, 'log'), '-w', '-t', '60', '-o', settings, 'start']);
  };
  start();
  const url = (database = 'postgres', name = 'postgres', password = PASSWORD): string =>
    `postgres://${encodeURIComponent(name)}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
  const pool = new pg.Pool({ connectionString: url(), max: 2 });
  pool.on('error', () => undefined);
  let databases = 0;
  let stopped = false;
  return {
    url,
    port,
    folder,
    admin: (sql, values) => pool.query(sql, values as unknown[]),
    createDatabase: async () => {
      databases += 1;
      const name = `test_${databases}`;
      await pool.query(`CREATE DATABASE ${name}`);
      return url(name);
    },
    restart: async ({ downMs = 0 } = {}) => {
      runAs('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
      await new Promise((resolve) => setTimeout(resolve, downMs));
      start();
    },
    stop: () => {
      if (stopped) return;
      stopped = true;
      void pool.end().catch(() => undefined);
      try {
        runAs('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(folder, { recursive: true, force: true });
      }
    },
  };
};
