/**
 * A connection the driver cannot start, or whose TLS handshake fails on the client's side: the
 * call answers one line of the right code, `close` settles, and a command exits at once rather
 * than wait on a socket left open (this file's server keeps an unfinished handshake 10 minutes).
 */
import { join } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { writeFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrate, postgresNotesStore, postgresSessionStore, schemaVersion } from '../../src/postgres/index.js';
import { type CliRun, runCli, runCliHere } from '../cli/runCli.js';
import { tempDir } from '../tempDirs.js';
import { PASSWORD, postgresUnavailable, usePostgres } from './server.js';

const codeOf = (either: E.Either<{ readonly code: string }, unknown>): string =>
  E.isLeft(either) ? either.left.code : 'right';

/** A hook's payload: a subagent about to start, in session `session` of project `cwd`. */
const subagentPrompt = (session: string, cwd: string): string =>
  JSON.stringify({
    session_id: session,
    hook_event_name: 'PreToolUse',
    tool_name: 'Agent',
    tool_use_id: 'toolu_1',
    cwd,
    tool_input: { description: 'd', prompt: 'Task ID: 7\nEdit src/a.ts', subagent_type: 'general-purpose' },
  });

/** The `systemMessage` of the hook run on store `url` in project `cwd`, which exits 0 and never shows the password. */
const hookMessage = async (url: string, session: string, cwd: string): Promise<string> => {
  const hooked = await runCli(['hook'], subagentPrompt(session, cwd), {
    cwd,
    env: { FACT_TRACKER_STORE: url, CLAUDE_PROJECT_DIR: cwd },
  });
  expect(hooked.status).toBe(0);
  expect(hooked.stdout).not.toContain(PASSWORD);
  return (JSON.parse(hooked.stdout) as { systemMessage: string }).systemMessage;
};

/** Checks `ran` failed in one line of `code` naming `command`, and never showed the password. */
const expectOneLine = (ran: CliRun, command: string, code: string): void => {
  expect([ran.status, ran.stdout]).toEqual([1, '']);
  expect(ran.stderr).toMatch(new RegExp(`^fact-tracker ${command}: ${code}: [^\\n]*\\n$`, 'u'));
  expect(ran.stderr).not.toContain(PASSWORD);
};

describe('a port the driver cannot connect to (PGPORT out of range, as the URL names none)', () => {
  let saved: string | undefined;
  beforeEach(() => {
    saved = process.env['PGPORT'];
    process.env['PGPORT'] = '99999';
  });
  afterEach(() => {
    if (saved === undefined) delete process.env['PGPORT'];
    else process.env['PGPORT'] = saved;
  });

  it('is answered store_url by every call, and close settles', async () => {
    const url = 'postgres://app:s3cret@127.0.0.1/memory';
    const store = postgresSessionStore(url, { retryMs: 0 });
    const notes = postgresNotesStore(url, { retryMs: 0 });
    expect(codeOf(await store.list())).toBe('store_url');
    // The notes port's codes are its own: the database's code starts its message.
    const loaded = await notes.load('maya', 'chat');
    expect(E.isLeft(loaded) && loaded.left.message).toMatch(/^store_url: /u);
    expect(codeOf(await migrate(url, { retryMs: 0 }))).toBe('store_url');
    expect(codeOf(await schemaVersion(url, { retryMs: 0 }))).toBe('store_url');
    // A connect that threw left its client in the pool, whose end then never settled.
    await store.close();
    await notes.close();
  });
});

describe('a port= parameter out of range', () => {
  it('is refused in one line by the commands, and told by the hook to the user', async () => {
    const cwd = tempDir('pg-port-');
    const urlOf = (port: string) => `postgres://u:${PASSWORD}@127.0.0.1:5432/x?port=${port}`;
    // Each command and the hook, as processes: none waits on a connection.
    const [listed, migrated, served, hooked] = await Promise.all([
      runCli(['sessions', 'list', '--store', urlOf('99999')], '', { cwd }),
      runCli(['db', 'migrate', '--store', urlOf('99999')], '', { cwd }),
      runCli(['mcp', '--store', urlOf('99999')], '', { cwd }),
      hookMessage(urlOf('99999'), 'port-session', cwd),
    ]);
    expectOneLine(listed, 'sessions', 'store_url');
    expectOneLine(migrated, 'db', 'store_url');
    expectOneLine(served, 'mcp', 'store_url');
    expect(hooked).toMatch(
      /^fact-tracker: store_url: session port-session: FACT_TRACKER_STORE: the store URL's port= parameter/u,
    );
    // Every value out of range, read as all of them read a store's URL, through the commands' own code.
    for (const port of ['abc', '-1', '70000']) {
      expectOneLine(
        await runCliHere(['sessions', 'list', '--store', urlOf(port)], '', { cwd }),
        'sessions',
        'store_url',
      );
      expectOneLine(await runCliHere(['db', 'migrate', '--store', urlOf(port)], '', { cwd }), 'db', 'store_url');
    }
  });
});

describe.skipIf(postgresUnavailable !== undefined)('a client key that is not a key (sslkey=)', () => {
  const { server } = usePostgres({ tls: true });

  it('is store_url, and the commands exit at once: the hook 0 with its message, the others 1', async () => {
    const cwd = tempDir('pg-key-');
    const key = join(cwd, 'client.key');
    writeFileSync(key, 'not a key\n');
    const certificate = join(server().folder, 'server.crt');
    const url = `${server().url()}?sslmode=verify-full&sslrootcert=${certificate}&sslcert=${certificate}&sslkey=${key}`;
    const [listed, served, hooked] = await Promise.all([
      runCli(['sessions', 'list', '--store', url], '', { cwd }),
      runCli(['mcp', '--store', url], '', { cwd }),
      hookMessage(url, 'key-session', cwd),
    ]);
    expectOneLine(listed, 'sessions', 'store_url');
    expect(listed.stderr).toContain('names a TLS key or certificate that cannot be used');
    expectOneLine(served, 'mcp', 'store_url');
    expect(hooked).toMatch(/^fact-tracker: store_url: session key-session: /u);
  });

  it('is not what a URL naming no key meets: the same TLS settings reach the server', async () => {
    const certificate = join(server().folder, 'server.crt');
    const url = `${server().url()}?sslmode=verify-full&sslrootcert=${certificate}`;
    expect(codeOf(await schemaVersion(url))).toBe('right');
  });
});
