/**
 * One PostgreSQL session across real processes running the built library: writers at once lose
 * nothing and write nothing twice, every reader sees one order, a writer killed inside a
 * transaction leaves nothing torn and holds no one up, and a server restarted in the middle of
 * a run costs nothing but time.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as E from 'fp-ts/lib/Either.js';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { replayHistory } from '../../src/index.js';
import { openSession } from '../../src/live/session/index.js';
import { postgresSessionStore } from '../../src/postgres/index.js';
import { bundledFixture } from '../fixtures/bundled.js';
import { tempDir } from '../tempDirs.js';
import { postgresUnavailable, usePostgres } from './server.js';

const DIST = fileURLToPath(new URL('../../dist/postgres/index.js', import.meta.url));
const APPENDER = fileURLToPath(new URL('./fixtures/appender.mjs', import.meta.url));
const HOLDER = fileURLToPath(new URL('./fixtures/holder.mjs', import.meta.url));
const SCHEMA = 'processes';

const { server } = usePostgres();
const database: { url?: Promise<string> } = {};
const databaseUrl = (): Promise<string> => (database.url ??= server().createDatabase());

/** What a finished child said and how it ended. */
interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** A child running `script` with `args`, its output gathered, and a promise of its end. */
const child = (script: string, args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  if (!existsSync(DIST)) throw new Error(`${DIST} is missing: run "npm run build" first (npm test does it)`);
  const process_ = spawn(process.execPath, [script, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  const output = { stdout: '', stderr: '' };
  process_.stdout.on('data', (chunk: Buffer) => {
    output.stdout += chunk.toString();
  });
  process_.stderr.on('data', (chunk: Buffer) => {
    output.stderr += chunk.toString();
  });
  const exit = new Promise<Exit>((resolve) =>
    process_.on('close', (code, signal) => resolve({ code, signal, ...output })),
  );
  return { process: process_, exit, said: (word: string) => output.stdout.split(word).length - 1 };
};

/** Resolves once the child has printed `word` `count` times. */
const saying = (running: ChildProcess, word: string, count: number): Promise<void> =>
  new Promise((resolve, reject) => {
    let seen = 0;
    running.stdout?.on('data', (chunk: Buffer) => {
      seen += chunk.toString().split(word).length - 1;
      if (seen >= count) resolve();
    });
    running.on('exit', () => reject(new Error(`the child exited before it said "${word}" ${count} times`)));
  });

const appender = (
  url: string,
  session: string,
  name: string,
  count: number,
  total: number,
  options: { readonly big?: boolean; readonly gate?: string } = {},
) =>
  child(
    bundledFixture(APPENDER),
    [url, SCHEMA, session, name, String(count), String(total), ...(options.big === true ? ['big'] : [])],
    options.gate === undefined ? {} : { GATE: options.gate },
  );

const digest = (value: unknown): string => createHash('sha256').update(JSON.stringify(value)).digest('hex');

/** The session's log as the test reads it through a store of its own. */
const exported = async (url: string, session: string): Promise<string[]> => {
  const store = postgresSessionStore(url, { schema: SCHEMA });
  const read = await store.read(session, 0);
  await store.close();
  if (E.isLeft(read)) throw new Error(read.left.message);
  expect(read.right.lines.map((line) => line.line)).toEqual(read.right.lines.map((_, i) => i + 1));
  expect(read.right.position).toBe(read.right.lines.length);
  return read.right.lines.map((line) => line.text);
};

/** One key per event its writer meant: task and kind, whatever line it landed on. */
const eventKeys = (lines: ReadonlyArray<string>): string[] =>
  lines.map((text) => {
    const event = JSON.parse(text) as Record<string, unknown>;
    return `${String(event['type'])} ${String(event['taskId'] ?? event['subject'])} ${String(event['relation'])}`;
  });

/** Checks the exits, then that every event is there once and every writer ended on the log's replay. */
const expectAllOnce = async (url: string, session: string, exits: ReadonlyArray<Exit>, total: number) => {
  expect(exits.map((exit) => [exit.code, exit.stderr])).toEqual(exits.map(() => [0, '']));
  const lines = await exported(url, session);
  const replayed = replayHistory(lines.join('\n'));
  expect(replayed.report.errors).toEqual([]);
  expect(replayed.report.summary.events).toBe(total);
  expect(new Set(eventKeys(lines)).size).toBe(total);
  const ends = exits.map((exit) => /done (\d+) ([0-9a-f]+) ([0-9a-f]+)/u.exec(exit.stdout)?.slice(1));
  expect(ends).toEqual(exits.map(() => [String(total), digest(replayed.store), digest(lines)]));
};

describe.skipIf(postgresUnavailable !== undefined)('a PostgreSQL session across processes', () => {
  it('loses nothing when 4 processes append 100 events each, all at once, in one order every reader sees, ending on replay of the log', async () => {
    const url = await databaseUrl();
    // Let go together once all have started: a process takes longer to start than many appends take.
    const gate = join(tempDir('gate-'), 'go');
    const runs = ['w0', 'w1', 'w2', 'w3'].map((name) => appender(url, 'shared', name, 100, 400, { gate: `${gate}:0` }));
    await Promise.all(runs.map((run) => saying(run.process, 'waiting', 1)));
    writeFileSync(gate, '');
    await expectAllOnce(url, 'shared', await Promise.all(runs.map((run) => run.exit)), 400);
  }, 180_000);

  it('leaves nothing torn when writers are killed inside a transaction, and the others carry on', async () => {
    const url = await databaseUrl();
    const seed = postgresSessionStore(url, { schema: SCHEMA });
    expect(E.isRight(await seed.append('killed', 0, [JSON.stringify({ type: 'compact', maxFacts: 100, at: 0 })]))).toBe(
      true,
    );
    await seed.close();
    // The holder locks the session's row in a transaction it never ends: the writers wait on it.
    const holder = child(HOLDER, [url, SCHEMA, 'killed']);
    await saying(holder.process, 'holding', 1);
    const steady = appender(url, 'killed', 'a', 40, 41);
    const big = appender(url, 'killed', 'b', 1_000, 1_000, { big: true });
    await saying(steady.process, 'appending ', 1);
    holder.process.kill('SIGKILL');
    expect((await holder.exit).signal).toBe('SIGKILL');
    // The big writer dies at a random moment, often while its statement is on the wire.
    await saying(big.process, 'appending ', 2 + Math.floor(Math.random() * 6));
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 20));
    big.process.kill('SIGKILL');
    const [steadyExit, bigExit] = await Promise.all([steady.exit, big.exit]);
    expect(bigExit.signal).toBe('SIGKILL');
    expect([steadyExit.code, steadyExit.stderr]).toEqual([0, '']);
    const lines = await exported(url, 'killed');
    const replayed = replayHistory(lines.join('\n'));
    expect(replayed.report.errors).toEqual([]);
    const keys = eventKeys(lines);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys.filter((key) => key.includes('task:holder'))).toEqual([]);
    expect(keys.filter((key) => /[ :]a-/u.test(key))).toHaveLength(40);
    // Every append of the killed writer that returned (each announced one but the last) is there.
    expect(keys.filter((key) => /[ :]b-/u.test(key)).length).toBeGreaterThanOrEqual(big.said('appending ') - 1);
    // The session's row agrees with its lines: their count and their bytes.
    const admin = new pg.Pool({ connectionString: url, max: 1 });
    const { rows } = await admin.query(
      `SELECT s.lines, s.bytes::int, count(l.line)::int AS count, sum(octet_length(l.text) + 1)::int AS sum
       FROM ${SCHEMA}.sessions s JOIN ${SCHEMA}.lines l ON l.session_key = s.key WHERE s.id = 'killed' GROUP BY s.key`,
    );
    await admin.end();
    expect(rows).toEqual([{ lines: lines.length, count: lines.length, bytes: rows[0].sum, sum: rows[0].sum }]);
    // And the session opens and takes the next event.
    const store = postgresSessionStore(url, { schema: SCHEMA });
    const session = await openSession('killed', { store });
    const added =
      E.isRight(session) && (await session.right.invalidateFact({ subject: 'task:x', relation: 'summary' }));
    expect(added !== false && E.isRight(added) && added.right.line).toBe(lines.length + 1);
    await store.close();
  }, 120_000);

  it('loses nothing and writes nothing twice when the server restarts in the middle of a run', async () => {
    const url = await databaseUrl();
    // Every writer waits after 15 appends, so that all are in the middle of their runs when the
    // server goes down: they are let go, and the server restarts under them.
    const gate = join(tempDir('gate-'), 'go');
    const runs = ['r0', 'r1', 'r2'].map((name) => appender(url, 'restarted', name, 60, 180, { gate: `${gate}:15` }));
    await Promise.all(runs.map((run) => saying(run.process, 'waiting', 1)));
    writeFileSync(gate, '');
    await server().restart({ downMs: 300 });
    await expectAllOnce(url, 'restarted', await Promise.all(runs.map((run) => run.exit)), 180);
  }, 120_000);
});
