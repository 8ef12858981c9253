/**
 * The PostgreSQL session store against a real server: the port's conformance suite, a live
 * session over it, its schema and migrations, and the one-line failures of a store that cannot
 * be used (a wrong URL, no server, a wrong password, a missing privilege, a newer schema).
 */
import * as E from 'fp-ts/lib/Either.js';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { replayHistory } from '../../src/index.js';
import { openSession } from '../../src/live/session/index.js';
import type { SessionStore } from '../../src/live/session/store.js';
import {
  migrate,
  MIGRATIONS,
  type PostgresOptions,
  postgresNotesStore,
  postgresSessionStore,
  SCHEMA_VERSION,
  schemaSql,
  schemaVersion,
} from '../../src/postgres/index.js';
import { runCli } from '../cli/runCli.js';
import { implementer } from '../fixtures/results.js';
import { expectLaterResultSupersedes } from '../live/session/clockSkew.js';
import { describeSessionStore } from '../live/session/storeConformance.js';
import { startEndingProxy } from './endingProxy.js';
import { untilRight, withRowsLocked } from './rowLock.js';
import { onOnePoolOfLongSchemas } from './longSchemas.js';
import { tempDir } from '../tempDirs.js';
import { PASSWORD, postgresUnavailable, usePostgres } from './server.js';

const { server } = usePostgres();

/** Stores opened by a test, closed after it (the suite leaves the second handles it reopens open). */
const opened: SessionStore[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()));
});

/** The URL of this file's database, made on first use. */
const database: { url?: Promise<string> } = {};
const databaseUrl = (): Promise<string> => (database.url ??= server().createDatabase());

let schemas = 0;
/** A store on a schema of its own, so each test starts empty. */
const freshStore = async (options: PostgresOptions = {}) => {
  schemas += 1;
  const url = await databaseUrl();
  const settings = { schema: `t${schemas}`, ...options };
  const make = (): SessionStore => {
    const store = postgresSessionStore(url, settings);
    opened.push(store);
    return store;
  };
  return { url, settings, store: make(), reopen: make };
};

const right = <L extends { message: string } | string, T>(either: E.Either<L, T>): T => {
  if (E.isLeft(either)) throw new Error(typeof either.left === 'string' ? either.left : either.left.message);
  return either.right;
};

const codeOf = <T>(either: E.Either<{ code: string }, T>): string | undefined =>
  E.isLeft(either) ? either.left.code : undefined;

describe.skipIf(postgresUnavailable !== undefined)('PostgreSQL', () => {
  describeSessionStore('PostgreSQL', () => freshStore());

  it('serves a live session whose sections equal replay of its log, shared by two sessions', async () => {
    const { store, reopen } = await freshStore();
    let now = 1_000;
    const clock = () => (now += 1_000);
    const first = right(await openSession('shared', { store, clock }));
    const second = right(await openSession('shared', { store: reopen(), clock }));
    const sections: string[] = [];
    for (let task = 1; task <= 6; task += 1) {
      const writer = task % 2 === 0 ? first : second;
      const compiled = right(
        await writer.compileContext({ taskId: String(task), taskPrompt: `Change src/mod${task - 1}.ts` }),
      );
      sections.push(compiled.sessionContext);
      right(
        await writer.ingestResult({
          role: 'implementer',
          taskId: String(task),
          output: implementer(String(task), [`src/mod${task}.ts`]),
        }),
      );
    }
    const log = right(await store.read('shared', 0))
      .lines.map((line) => line.text)
      .join('\n');
    const replayed = replayHistory(log);
    expect(replayed.report.prompts.map((prompt) => prompt.sessionContext)).toEqual(sections);
    expect(right(await first.snapshot())).toEqual(replayed.store);
    expect(right(await second.snapshot())).toEqual(replayed.store);
  });

  it("records a later result of a machine whose clock is an hour behind after the other's, so that it supersedes it", async () => {
    const { store, reopen } = await freshStore();
    await expectLaterResultSupersedes({ store }, { store: reopen() });
  });

  it('a read from the start leaves the log the reader follows: a log deleted and made again is still said restarted', async () => {
    const { store, reopen } = await freshStore();
    const followed = right(await store.append('swapped', 0, ['{"n":1}', '{"n":2}']));
    right(await store.read('swapped', 0));
    // Another process deletes the log and makes it again, longer.
    const other = reopen();
    right(await other.delete('swapped'));
    right(await other.append('swapped', 0, ['{"m":1}', '{"m":2}', '{"m":3}']));
    right(await other.writeSnapshot('swapped', { position: 3, state: '{}' }));
    // Side reads (a resent prompt's snapshot, an explanation's read from the start), then the reader's own.
    expect(right(await store.readSnapshot('swapped'))?.position).toBe(3);
    expect(right(await store.read('swapped', 0)).lines).toHaveLength(3);
    const next = right(await store.read('swapped', followed.position));
    expect(next.restarted).toBe(true);
    expect(next.lines.map(({ text }) => text)).toEqual(['{"m":1}', '{"m":2}', '{"m":3}']);
  });

  it('lets two sessions on one store instance each read a log deleted and made anew by another process from its first line', async () => {
    const { store, reopen } = await freshStore();
    const result = (task: string) => ({
      role: 'implementer' as const,
      taskId: task,
      output: implementer(task, [`src/${task}.ts`]),
    });
    const writer = right(await openSession('remade', { store, clock: () => 1_000 }));
    const other = right(await openSession('remade', { store, clock: () => 1_000 }));
    for (const task of ['old1', 'old2', 'old3']) right(await writer.ingestResult(result(task)));
    right(await other.snapshot());
    right(await writer.ingestResult(result('old4')));
    right(await other.snapshot());
    // Another process deletes the log and makes a new one, as long, of other events.
    const elsewhere = reopen();
    expect(right(await elsewhere.delete('remade'))).toBe(true);
    const made = right(await openSession('remade', { store: elsewhere, clock: () => 2_000 }));
    for (const task of ['new1', 'new2', 'new3', 'new4']) right(await made.ingestResult(result(task)));
    const expected = right(await right(await openSession('remade', { store: reopen() })).snapshot());
    for (const session of [writer, other]) {
      expect(right(await session.snapshot())).toEqual(expected);
      expect(session.state().lines).toBe(4);
    }
    expect(right(await other.ingestResult(result('new5'))).line).toBe(5);
    expect(right(await writer.ingestResult(result('new6'))).line).toBe(6);
    const log = right(await store.read('remade', 0))
      .lines.map((line) => line.text)
      .join('\n');
    expect(log).not.toContain('old');
    for (const session of [writer, other]) expect(right(await session.snapshot())).toEqual(replayHistory(log).store);
  });

  it('starts a reopened session from the snapshot it wrote, and ignores one written by another library version', async () => {
    const { url, settings, store, reopen } = await freshStore();
    const session = right(await openSession('snap', { store, clock: () => 1_000 }));
    for (let i = 0; i < 70; i += 1)
      right(await session.invalidateFact({ subject: `task:${i}`, relation: 'summary', at: i }));
    const again = right(await openSession('snap', { store: reopen() }));
    expect(again.snapshotUse()).toEqual({ used: true, position: 64 });
    expect(right(await again.snapshot())).toEqual(right(await session.snapshot()));
    const admin = new pg.Pool({ connectionString: url });
    await admin.query(`UPDATE ${settings.schema}.snapshots SET library = 'session-fact-tracker 0.0.1'`);
    await admin.end();
    const other = right(await openSession('snap', { store: reopen() }));
    expect(other.snapshotUse()).toEqual({
      used: false,
      reason: 'the snapshot was written by session-fact-tracker 0.0.1',
    });
    expect(right(await other.snapshot())).toEqual(right(await session.snapshot()));
  });

  it('keeps the snapshot the newest replaced: with atMost it answers the newest of the two, and an older write replaces neither', async () => {
    const { url, settings, store, reopen } = await freshStore();
    right(
      await store.append(
        's',
        0,
        Array.from({ length: 9 }, (_, i) => `{"n":${i + 1}}`),
      ),
    );
    right(await store.read('s', 0));
    const at = (position: number) => ({ position, state: `{"at":${position}}` });
    right(await store.writeSnapshot('s', at(3)));
    right(await store.writeSnapshot('s', at(5)));
    const other = reopen();
    const answers = async (...bounds: Array<number | undefined>) =>
      Promise.all(bounds.map(async (atMost) => right(await other.readSnapshot('s', undefined, atMost))?.position));
    expect(await answers(undefined, 9, 5, 4, 3, 2)).toEqual([5, 5, 5, 3, 3, undefined]);
    // Any number the port takes, as the other stores compare it.
    expect(await answers(4.5, Infinity, NaN, -1)).toEqual([3, 5, undefined, undefined]);
    // A write older than the newest (a slower writer) loses the race, and leaves the previous as it was.
    right(await store.writeSnapshot('s', at(4)));
    // The same line written again keeps the previous there was: it is not one of fewer lines.
    right(await store.writeSnapshot('s', { position: 5, state: '{"again":5}' }));
    expect(right(await other.readSnapshot('s'))).toEqual({ position: 5, state: '{"again":5}' });
    expect(right(await other.readSnapshot('s', undefined, 4))).toEqual(at(3));
    right(await store.writeSnapshot('s', at(7)));
    expect(await answers(undefined, 6, 4)).toEqual([7, 5, undefined]);
    expect(right(await other.readSnapshot('s', undefined, 6))).toEqual({ position: 5, state: '{"again":5}' });
    // One of another library version is replaced, and not kept as the previous: it would not be used.
    const admin = new pg.Pool({ connectionString: url });
    await admin.query(`UPDATE ${settings.schema}.snapshots SET library = 'session-fact-tracker 0.0.1'`);
    right(await store.writeSnapshot('s', at(8)));
    expect(await answers(undefined, 7, 6)).toEqual([8, 5, 5]);
    // A previous of another library version is not used, and says why.
    await admin.query(`UPDATE ${settings.schema}.snapshots SET previous_library = 'session-fact-tracker 0.0.1'`);
    await admin.end();
    expect(await other.readSnapshot('s', undefined, 7)).toEqual(
      E.left({ code: 'invalid_snapshot', message: 'the snapshot was written by session-fact-tracker 0.0.1' }),
    );
    expect(right(await other.readSnapshot('s', undefined, 8))).toEqual(at(8));
  });

  it('answers an append to a log at 2^31 - 1 lines, which its integer columns cannot lengthen, as a failure that writes nothing, not a conflict', async () => {
    const { url, settings, store } = await freshStore();
    right(await store.append('s', 0, ['{"at":1}']));
    const admin = new pg.Pool({ connectionString: url });
    await admin.query(`UPDATE ${settings.schema}.sessions SET lines = 2147483647`);
    const full = await store.append('s', 2 ** 31 - 1, ['{"at":2}']);
    expect(codeOf(full)).toBe('io');
    expect(E.isLeft(full) && full.left.message).toContain('out of range');
    const { rows } = await admin.query(
      `SELECT lines, (SELECT count(*) FROM ${settings.schema}.lines)::int AS kept FROM ${settings.schema}.sessions`,
    );
    await admin.end();
    expect(rows).toEqual([{ lines: 2 ** 31 - 1, kept: 1 }]);
    // Another end is a conflict, as ever.
    expect(codeOf(await store.append('s', 2 ** 31 - 2, ['{"at":2}']))).toBe('conflict');
  });

  it('answers a prompt sent again from the snapshot the newest replaced, as replay gives it, reading the log from there', async () => {
    const { url, settings, store, reopen } = await freshStore();
    const prompt = (task: number) => ({
      taskId: String(task),
      taskPrompt: `Change src/mod${task}.ts`,
      at: task * 1_000,
    });
    const writer = right(await openSession('r', { store }));
    // A result on line 1, then per task a prompt (line 2t) and a result: the writer saves a
    // snapshot after lines 64 and 128, both prompts' lines.
    right(await writer.ingestResult({ role: 'implementer', taskId: '0', output: implementer('0', ['src/mod0.ts']) }));
    const sections = new Map<number, string>();
    for (let task = 1; task <= 65; task += 1) {
      sections.set(task, right(await writer.compileContext(prompt(task))).sessionContext);
      const output = implementer(String(task), [`src/mod${task}.ts`, `src/mod${task - 1}.ts`]);
      right(await writer.ingestResult({ role: 'implementer', taskId: String(task), output, at: task * 1_000 + 1 }));
    }
    const log = right(await store.read('r', 0))
      .lines.map((line) => line.text)
      .join('\n');
    const replayed = new Map(replayHistory(log).report.prompts.map((entry) => [entry.line, entry.sessionContext]));
    /** A reader in a process of its own, noting the line after which each of its reads of the log starts. */
    const readerNoting = async (reads: number[]) => {
      const own = reopen();
      const noting: SessionStore = {
        ...own,
        read: (id, after, follower) => {
          reads.push(after);
          return own.read(id, after, follower);
        },
      };
      const reader = right(await openSession('r', { store: noting }));
      expect(reader.snapshotUse()).toEqual({ used: true, position: 128 });
      return reader;
    };
    const reads: number[] = [];
    const reader = await readerNoting(reads);
    // Task 64's prompt is on line 128, the newest snapshot's; task 50's on line 100, before it.
    for (const task of [64, 50]) {
      reads.length = 0;
      const again = right(await reader.compileContext(prompt(task)));
      expect([again.line, again.duplicate]).toEqual([2 * task, true]);
      expect(again.sessionContext).toBe(sections.get(task));
      expect(again.sessionContext).toBe(replayed.get(2 * task));
      // The log is read after the snapshot of line 64 (and after the reader's own place), never from its first line.
      expect(reads).toContain(64);
      expect(reads).not.toContain(0);
    }
    // A prompt before the previous snapshot's line, and any prompt once the previous is another
    // library version's, is replayed from the log's first line, to the same section.
    const admin = new pg.Pool({ connectionString: url });
    await admin.query(`UPDATE ${settings.schema}.snapshots SET previous_library = 'session-fact-tracker 0.0.1'`);
    await admin.end();
    const fromStart: number[] = [];
    const another = await readerNoting(fromStart);
    for (const task of [20, 40]) {
      fromStart.length = 0;
      const again = right(await another.compileContext(prompt(task)));
      expect([again.line, again.duplicate, again.sessionContext]).toEqual([2 * task, true, sections.get(task)]);
      expect(again.sessionContext).toBe(replayed.get(2 * task));
      expect(fromStart).toContain(0);
      expect(fromStart).not.toContain(64);
    }
  });

  it("migrates a schema of version 4 with its snapshots kept: until then the agents' role says to run db migrate, after it needs no new grant", async () => {
    const { url, store } = await freshStore();
    // The name this library gives the snapshots it writes, as a store of the newest schema keeps it.
    right(await store.append('s', 0, ['{"n":1}']));
    right(await store.read('s', 0));
    right(await store.writeSnapshot('s', { position: 1, state: '{}' }));
    const admin = new pg.Pool({ connectionString: url });
    const { rows } = await admin.query<{ library: string }>(`SELECT library FROM t${schemas}.snapshots`);
    const library = rows[0]!.library;
    // The schema as version 4 left it, a session with a snapshot in it, and the agents' role of docs/team.md.
    const schema = 'sessions_from_v4';
    const sql = schemaSql({ schema });
    await admin.query(`${sql.slice(0, sql.indexOf('-- 5: '))}COMMIT;`);
    await admin.query(`INSERT INTO ${schema}.sessions (id, lines, bytes) VALUES ('old', 3, 24)`);
    await admin.query(
      `INSERT INTO ${schema}.lines (session_key, line, text) SELECT key, n, '{"n":' || n || '}' FROM ${schema}.sessions, generate_series(1, 3) n`,
    );
    await admin.query(
      `INSERT INTO ${schema}.snapshots (session_key, position, bytes, library, state) SELECT key, 2, 16, $1, '{"at":2}' FROM ${schema}.sessions`,
      [library],
    );
    const agent = `agent_v4_${schemas}`;
    await admin.query(`CREATE ROLE ${agent} LOGIN PASSWORD '${PASSWORD}'`);
    await admin.query(`GRANT CONNECT ON DATABASE ${new URL(url).pathname.slice(1)} TO ${agent}`);
    await admin.query(`GRANT USAGE ON SCHEMA ${schema} TO ${agent}`);
    await admin.query(`GRANT SELECT ON ${schema}.migrations TO ${agent}`);
    await admin.query(
      `GRANT SELECT, INSERT, UPDATE, DELETE ON ${schema}.sessions, ${schema}.lines, ${schema}.snapshots TO ${agent}`,
    );
    const agentUrl = new URL(url);
    agentUrl.username = agent;
    const asAgent = postgresSessionStore(agentUrl.href, { schema });
    opened.push(asAgent);
    // Until the owner migrates, the agents' store says so, answering no snapshot (nor a wrong one).
    const refused = await asAgent.readSnapshot('old', undefined, 2);
    expect(E.isLeft(refused) && refused.left).toMatchObject({
      code: 'store_privilege',
      message: expect.stringMatching(/run "fact-tracker db migrate" as the schema's owner/u),
    });
    expect(right(await migrate(url, { schema }))).toMatchObject({ from: 4, to: SCHEMA_VERSION });
    const { rows: kept } = await admin.query(`SELECT position, state, previous_position FROM ${schema}.snapshots`);
    await admin.end();
    expect(kept).toEqual([{ position: 2, state: '{"at":2}', previous_position: null }]);
    // The agents' grants cover the new columns: the snapshot is read, and replaced by a newer one it becomes the previous.
    expect(right(await asAgent.readSnapshot('old'))).toEqual({ position: 2, state: '{"at":2}' });
    right(await asAgent.read('old', 0));
    right(await asAgent.writeSnapshot('old', { position: 3, state: '{"at":3}' }));
    expect(right(await asAgent.readSnapshot('old'))).toEqual({ position: 3, state: '{"at":3}' });
    expect(right(await asAgent.readSnapshot('old', undefined, 2))).toEqual({ position: 2, state: '{"at":2}' });
  });

  it('serves a role granted SELECT only: the live session answers from the log, asks once to save the snapshot it may not write, and refuses a write in one line', async () => {
    const { url, settings, store } = await freshStore();
    const writer = right(await openSession('readonly', { store, clock: () => 1_000 }));
    for (let i = 0; i < 300; i += 1)
      right(await writer.invalidateFact({ subject: `task:${i}`, relation: 'summary', at: i }));
    const role = `reader_${settings.schema}`;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD '${PASSWORD}'`);
    await admin.query(`GRANT CONNECT ON DATABASE ${new URL(url).pathname.slice(1)} TO ${role}`);
    await admin.query(`GRANT USAGE ON SCHEMA ${settings.schema} TO ${role}`);
    await admin.query(`GRANT SELECT ON ALL TABLES IN SCHEMA ${settings.schema} TO ${role}`);
    // No snapshot: the reader replays the whole log, past the 256 lines after which a reader saves one.
    await admin.query(`DELETE FROM ${settings.schema}.snapshots`);
    await admin.end();
    const readerUrl = new URL(url);
    readerUrl.username = role;
    const own = postgresSessionStore(readerUrl.href, settings);
    opened.push(own);
    const refused: Array<string> = [];
    const counted: SessionStore = {
      ...own,
      writeSnapshot: async (id, snapshot) => {
        const written = await own.writeSnapshot(id, snapshot);
        refused.push(E.isLeft(written) ? written.left.code : 'written');
        return written;
      },
    };
    const reader = right(await openSession('readonly', { store: counted }));
    expect(reader.snapshotUse()).toEqual({ used: false, reason: 'there is no snapshot' });
    const facts = right(await writer.snapshot());
    const prompt = { taskId: '301', taskPrompt: 'Change src/task.ts' };
    const preview = right(await writer.previewContext(prompt));
    for (let call = 0; call < 3; call += 1) {
      expect(right(await reader.snapshot())).toEqual(facts);
      expect(right(await reader.previewContext(prompt))).toEqual(preview);
    }
    // Asked once: a role that may not write it would be refused on every call, the whole state sent each time.
    expect(refused).toEqual(['store_privilege']);
    expect(right(await own.list())).toEqual(['readonly']);
    expect(right(await own.read('readonly', 0)).lines).toHaveLength(300);
    const write = await reader.invalidateFact({ subject: 'task:1', relation: 'summary' });
    expect(codeOf(write)).toBe('store_privilege');
    expect(E.isLeft(write) && write.left.message).toMatch(/permission denied for table sessions/u);
  });

  it('creates the schema once when many stores start on an empty database at once, and records its version', async () => {
    const { reopen, url, settings } = await freshStore();
    const stores = Array.from({ length: 8 }, reopen);
    const appended = await Promise.all(stores.map((store, i) => store.append(`s${i}`, 0, ['{}'])));
    expect(appended.map(codeOf)).toEqual(stores.map(() => undefined));
    expect(right(await schemaVersion(url, settings))).toBe(SCHEMA_VERSION);
    expect(right(await migrate(url, settings))).toMatchObject({ from: SCHEMA_VERSION, to: SCHEMA_VERSION });
    const admin = new pg.Pool({ connectionString: url });
    const { rows } = await admin.query(`SELECT version FROM ${settings.schema}.migrations ORDER BY version`);
    await admin.end();
    expect(rows).toEqual(MIGRATIONS.map(({ version }) => ({ version })));
  });

  it('says it created the schema in one of many migrations run at once; the others found nothing to do', async () => {
    const url = await databaseUrl();
    const migrated = await Promise.all(Array.from({ length: 8 }, () => migrate(url, { schema: 'raced' })));
    const from = migrated.map((result) => right(result).from).sort((a, b) => a - b);
    expect(from).toEqual([0, ...Array.from({ length: 7 }, () => SCHEMA_VERSION)]);
  });

  it('migrates ahead of use, and its printed SQL builds the same schema when run twice', async () => {
    const url = await databaseUrl();
    const admin = new pg.Pool({ connectionString: url });
    const printed = schemaSql({ schema: 'printed' });
    await admin.query(printed);
    await admin.query(printed);
    await admin.end();
    expect(right(await schemaVersion(url, { schema: 'printed' }))).toBe(SCHEMA_VERSION);
    expect(right(await schemaVersion(url, { schema: 'nothing_yet' }))).toBe(0);
    expect(right(await migrate(url, { schema: 'ahead' }))).toMatchObject({ from: 0, to: SCHEMA_VERSION });
    const store = postgresSessionStore(url, { schema: 'printed' });
    opened.push(store);
    expect(right(await store.append('s', 0, ['{}'])).position).toBe(1);
  });

  it('gives up a first-use migration that waits on a lock another transaction holds, saying to run db migrate, and migrates once it ends', async () => {
    const { url } = await freshStore();
    const admin = new pg.Pool({ connectionString: url });
    const schema = 'locked_v4';
    const sql = schemaSql({ schema });
    await admin.query(`${sql.slice(0, sql.indexOf('-- 5: '))}COMMIT;`);
    await admin.query(`INSERT INTO ${schema}.sessions (id, lines, bytes) VALUES ('old', 0, 0)`);
    // A long transaction that read the snapshots (a dump, an analyst's open session) holds a lock the migration needs.
    const reader = await admin.connect();
    await reader.query('BEGIN');
    await reader.query(`SELECT count(*) FROM ${schema}.snapshots`);
    const store = postgresSessionStore(url, { schema });
    opened.push(store);
    const refused = await store.read('old', 0);
    expect(codeOf(refused)).toBe('io');
    expect(E.isLeft(refused) && refused.left.message).toMatch(
      new RegExp(
        `the schema ${schema} at .* needs an upgrade to version ${SCHEMA_VERSION}, and another transaction holds a lock on its tables: run "fact-tracker db migrate"`,
        'u',
      ),
    );
    // Nothing was changed, and the next call, once the lock is gone, migrates.
    expect((await admin.query(`SELECT max(version) AS v FROM ${schema}.migrations`)).rows[0]).toEqual({ v: 4 });
    await reader.query('COMMIT');
    reader.release();
    expect(right(await store.read('old', 0)).lines).toEqual([]);
    expect((await admin.query(`SELECT max(version) AS v FROM ${schema}.migrations`)).rows[0]).toEqual({
      v: SCHEMA_VERSION,
    });
    await admin.end();
  });

  it('refuses a schema newer than this library knows, in one line', async () => {
    const { store, url, settings } = await freshStore();
    right(await store.append('s', 0, ['{}']));
    const admin = new pg.Pool({ connectionString: url });
    await admin.query(
      `INSERT INTO ${settings.schema}.migrations (version, description) VALUES (99, 'from the future')`,
    );
    await admin.end();
    const newer = postgresSessionStore(url, settings);
    opened.push(newer);
    const read = await newer.read('s', 0);
    expect(codeOf(read)).toBe('store_schema');
    expect(E.isLeft(read) && read.left.message).toMatch(
      new RegExp(`version 99, newer than the ${SCHEMA_VERSION} this library knows`, 'u'),
    );
    expect(codeOf(await migrate(url, settings))).toBe('store_schema');
  });

  it('retries an append whose connection was ended while it waited, and writes it once', async () => {
    const { url, settings, store, reopen } = await freshStore();
    right(await store.append('s', 0, [JSON.stringify({ type: 'compact', maxFacts: 9, at: 1 })]));
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query('BEGIN');
    await admin.query(`SELECT lines FROM ${settings.schema}.sessions WHERE id = 's' FOR UPDATE`);
    const session = right(await openSession('s', { store: reopen() }));
    const pending = session.invalidateFact({ subject: 'task:1', relation: 'summary', at: 2 });
    // The append waits on the row; its connection is ended under it, before any answer.
    const waiting = async (): Promise<number> => {
      for (;;) {
        const { rows } = await server().admin(
          `SELECT pid FROM pg_stat_activity WHERE application_name = 'session-fact-tracker' AND wait_event_type = 'Lock'`,
        );
        if (rows.length > 0) return (rows[0] as { pid: number }).pid;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    await server().admin('SELECT pg_terminate_backend($1)', [await waiting()]);
    await admin.query('COMMIT');
    await admin.end();
    expect(right(await pending)).toMatchObject({ line: 2, duplicate: false });
    expect(right(await store.read('s', 0)).lines.map((line) => line.line)).toEqual([1, 2]);
  });

  it('serves a session when the server ends a new connection as it is made, its ReadyForQuery and its end read at once: no exception, the event recorded once', async () => {
    const proxy = await startEndingProxy(server());
    schemas += 1;
    const store = postgresSessionStore(proxy.through(await databaseUrl()), { schema: `t${schemas}` });
    // An error event of the driver nobody listens to is thrown where it is emitted, and ends the process.
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown): void => void uncaught.push(error);
    process.on('uncaughtException', onUncaught);
    try {
      const session = right(await openSession('s', { store }));
      right(await session.invalidateFact({ subject: 'task:1', relation: 'summary', at: 1 }));
      // The pooled connection serves the read; the append's new one is ended as soon as it is ready.
      proxy.endNext();
      const [read, added] = await Promise.all([
        store.read('s', 0),
        session.invalidateFact({ subject: 'task:2', relation: 'summary', at: 2 }),
      ]);
      expect(right(read).position).toBe(1);
      expect(right(added)).toMatchObject({ line: 2, duplicate: false });
      expect(right(await store.read('s', 0)).lines.map((line) => line.line)).toEqual([1, 2]);
      expect(proxy.ended()).toEqual([proxy.pids()[1]]);
      expect(uncaught).toEqual([]);
    } finally {
      process.off('uncaughtException', onUncaught);
      await store.close();
      await proxy.close();
    }
  });

  it('serves a read and an append on a new connection when the pooled one was closed by idle_session_timeout as the call took it', async () => {
    const url = await databaseUrl();
    const pool = new pg.Pool({ connectionString: url, max: 1, options: '-c idle_session_timeout=100' });
    pool.on('error', () => undefined);
    schemas += 1;
    const store = postgresSessionStore(pool, { schema: `t${schemas}` });
    try {
      right(await store.append('s', 0, [JSON.stringify({ type: 'compact', maxFacts: 9, at: 1 })]));
      /** The pool's one client, closed by the server while its socket is not read: the call then sent on it meets the closing. */
      const closedUnder = async <T>(call: () => Promise<T>): Promise<T> => {
        const client = await pool.connect();
        const socket = (client as unknown as { connection: { stream: { pause(): void; resume(): void } } }).connection
          .stream;
        socket.pause();
        client.release();
        await new Promise((resolve) => setTimeout(resolve, 400));
        const answer = call();
        setTimeout(() => socket.resume(), 100);
        return answer;
      };
      expect(right(await closedUnder(() => store.read('s', 0))).position).toBe(1);
      // The server read none of the statement: the append is sent again, and written once.
      expect(
        right(await closedUnder(() => store.append('s', 1, [JSON.stringify({ type: 'compact', maxFacts: 8, at: 2 })]))),
      ).toMatchObject({ position: 2 });
      expect(right(await store.read('s', 0)).lines.map((line) => line.line)).toEqual([1, 2]);
    } finally {
      await store.close();
      await pool.end();
    }
  });

  it('records an event once when an append landed but its answer was lost: the session finds it on reading again', async () => {
    const { store } = await freshStore();
    // A store whose first append lands and then reports what a connection lost before the answer gives.
    let appends = 0;
    const lossy: SessionStore = {
      ...store,
      append: async (id, expected, lines) => {
        const landed = await store.append(id, expected, lines);
        appends += 1;
        return appends === 1 && E.isRight(landed)
          ? E.left({ code: 'conflict', message: 'the connection ended before the server answered', unanswered: true })
          : landed;
      },
    };
    const session = right(await openSession('s', { store: lossy }));
    const input = { role: 'implementer' as const, taskId: '1', output: implementer('1', ['src/a.ts']), at: 1_000 };
    // The call's own event, written once: answered with its facts, not as a resend.
    const ingested = right(await session.ingestResult(input));
    expect(ingested).toMatchObject({ line: 1, duplicate: false });
    expect(ingested.facts.map((fact) => fact.subject)).toContain('src/a.ts');
    expect(right(await store.read('s', 0)).lines).toHaveLength(1);
    expect(right(await session.ingestResult(input))).toMatchObject({ line: 1, duplicate: true });
  });

  it('refuses an append after the last line of a log deleted and made anew since it was read, even of the same length', async () => {
    const { store, reopen } = await freshStore();
    const other = reopen();
    right(await store.append('s', 0, ['{"old": 1}']));
    expect(right(await other.read('s', 0)).position).toBe(1);
    right(await store.delete('s'));
    right(await store.append('s', 0, ['{"new": 1}']));
    // The new log holds one line, as the old one did: a writer that read the old one must not append to it.
    expect(codeOf(await other.append('s', 1, ['{"planned on the old log": 2}']))).toBe('conflict');
    expect(right(await other.read('s', 1))).toMatchObject({
      restarted: true,
      lines: [{ line: 1, text: '{"new": 1}' }],
    });
    right(await other.append('s', 1, ['{"new": 2}']));
    expect(right(await store.read('s', 0)).lines.map((entry) => entry.text)).toEqual(['{"new": 1}', '{"new": 2}']);
    // Nor is a snapshot of the old log kept for the new one.
    const stale = reopen();
    right(await stale.read('s', 0));
    right(await store.delete('s'));
    right(await store.append('s', 0, ['{"newer": 1}', '{"newer": 2}']));
    right(await stale.writeSnapshot('s', { position: 2, state: '{"of": "the old log"}' }));
    expect(right(await store.readSnapshot('s'))).toBeUndefined();
  });

  it('answers the calls made before close, sessions and notes alike, and refuses those made after', async () => {
    const { url, settings, store } = await freshStore();
    const calls: Promise<E.Either<{ message: string }, unknown>>[] = [
      store.append('s', 0, ['{"a":1}']),
      store.read('s', 0),
      store.list(),
      store.read('t', 0),
    ];
    const notes = postgresNotesStore(url, settings);
    const saved = notes.save('maya', { sessions: [{ session: 'chat', value: { facts: [] }, expected: 0 }] });
    await Promise.all([store.close(), notes.close()]);
    for (const answered of await Promise.all(calls)) right(answered);
    right(await saved);
    expect(codeOf(await store.read('s', 0))).toBe('io');
    const after = await notes.load('maya', 'chat');
    expect(E.isLeft(after) && after.left.message).toMatch(/is closed/u);
    const reopened = postgresSessionStore(url, settings);
    opened.push(reopened);
    expect(right(await reopened.read('s', 0)).lines).toEqual([{ line: 1, text: '{"a":1}' }]);
  });

  it('gives up a statement its server never answers (a frozen backend) after queryTimeoutMs, and answers on a new connection', async () => {
    const url = await server().createDatabase();
    const setup = postgresSessionStore(url, { schema: 'frozen' });
    right(await setup.append('s', 0, ['{"a":1}']));
    await setup.close();
    const store = postgresSessionStore(url, { schema: 'frozen', maxConnections: 1, queryTimeoutMs: 300 });
    opened.push(store);
    right(await untilRight(() => store.read('s', 0)));
    const { rows } = await server().admin(
      `SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name = 'session-fact-tracker'`,
      [new URL(url).pathname.slice(1)],
    );
    const pid = (rows[0] as { pid: number }).pid;
    // The backend of the pool's one connection stops: a statement sent there is never answered.
    process.kill(pid, 'SIGSTOP');
    try {
      const hung = new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 5_000).unref());
      const read = await Promise.race([store.read('s', 0), hung]);
      expect(read === 'hung' ? read : right(read).lines).toEqual([{ line: 1, text: '{"a":1}' }]);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
  });

  it('answers store_unreachable after one try when a row lock outlasts queryTimeoutMs, and leaves no backend waiting on it', async () => {
    // The session is written through a store of the default bound; the short one serves the locked call.
    const { url, settings, store: setup } = await freshStore();
    right(
      await right(await openSession('locked', { store: setup, clock: () => 1_000 })).invalidateFact({
        subject: 'task:1',
        relation: 'summary',
      }),
    );
    const store = postgresSessionStore(url, { ...settings, queryTimeoutMs: 300 });
    opened.push(store);
    let appends = 0;
    const counted: SessionStore = {
      ...store,
      append: (...args) => {
        appends += 1;
        return store.append(...args);
      },
    };
    const session = right(await untilRight(() => openSession('locked', { store: counted, clock: () => 1_000 })));
    // An administrator's open transaction keeps the session's row locked.
    await withRowsLocked(url, [`SELECT lines FROM ${settings.schema}.sessions WHERE id = 'locked'`], async (locked) => {
      appends = 0;
      const blocked = await session.invalidateFact({ subject: 'task:2', relation: 'summary' });
      expect(codeOf(blocked)).toBe('store_unreachable');
      expect(E.isLeft(blocked) && blocked.left.message).toMatch(/cancelled a statement, so it did nothing/u);
      expect(appends).toBe(1);
      // The server cancelled the statement itself: no backend of ours is left waiting on the lock.
      expect(await locked.waitingBackends()).toBe(0);
    });
    // Once the lock is gone, the same call lands.
    right(await untilRight(() => session.invalidateFact({ subject: 'task:2', relation: 'summary' })));
    expect(right(await setup.read('locked', 0)).lines).toHaveLength(2);
  });

  it("bounds its statements on a caller's pool too: a row lock past queryTimeoutMs answers store_unreachable, and the pool's sessions keep their statement_timeout", async () => {
    const url = await databaseUrl();
    schemas += 1;
    const schema = `t${schemas}`;
    // One connection, so the caller's queries run on the very session the store's statements ran on.
    const pool = new pg.Pool({ connectionString: url, max: 1, statement_timeout: 60_000, application_name: 'callers' });
    pool.on('error', () => undefined);
    const setup = postgresSessionStore(url, { schema });
    const store = postgresSessionStore(pool, { schema, queryTimeoutMs: 300 });
    opened.push(setup, store);
    right(await setup.append('locked', 0, ['{"a":1}']));
    right(await untilRight(() => store.read('locked', 0)));
    await withRowsLocked(url, [`SELECT lines FROM ${schema}.sessions WHERE id = 'locked'`], async (locked) => {
      const hung = new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 5_000).unref());
      const blocked = await Promise.race([store.append('locked', 1, ['{"a":2}']), hung]);
      expect(blocked === 'hung' ? blocked : codeOf(blocked)).toBe('store_unreachable');
      expect(blocked !== 'hung' && E.isLeft(blocked) && blocked.left.message).toMatch(
        /cancelled a statement, so it did nothing/u,
      );
      expect(await locked.waitingBackends('callers')).toBe(0);
      // A pool whose own statement_timeout is the shorter keeps it for the store's statements too.
      const strict = new pg.Pool({ connectionString: url, max: 1, statement_timeout: 200 });
      strict.on('error', () => undefined);
      const bounded = postgresSessionStore(strict, { schema });
      const refused = await Promise.race([bounded.append('locked', 1, ['{"a":2}']), hung]);
      expect(refused === 'hung' ? refused : codeOf(refused)).toBe('store_unreachable');
      await bounded.close();
      await strict.end();
    });
    // The bound was the store's transaction's alone: the pool's session has its own setting back.
    expect((await pool.query('SHOW statement_timeout')).rows).toEqual([{ statement_timeout: '1min' }]);
    right(await untilRight(() => store.append('locked', 1, ['{"a":2}'])));
    expect(right(await setup.read('locked', 0)).lines).toHaveLength(2);
    await store.close();
    await pool.end();
  });

  it('takes a queryTimeoutMs past what statement_timeout holds (Infinity, 2^31, 1e12) or below 0 with a URL as it does with a pool, not failing every call', async () => {
    for (const queryTimeoutMs of [Infinity, 2 ** 31, 1e12, -1]) {
      const { store } = await freshStore({ queryTimeoutMs });
      right(await store.append('s', 0, ['{"a":1}']));
      expect(right(await store.read('s', 0)).lines).toHaveLength(1);
    }
  });

  it("lifts the bound with queryTimeoutMs 0, the role's statement_timeout included, and keeps a bound given over the role's", async () => {
    const url = await server().createDatabase();
    const role = 'agent_with_statement_timeout';
    await server().admin(`CREATE ROLE ${role} LOGIN PASSWORD '${PASSWORD}'`);
    await server().admin(`GRANT CONNECT, CREATE ON DATABASE ${new URL(url).pathname.slice(1)} TO ${role}`);
    // What an administrator sets for the agents' role (docs/team.md, behind PgBouncer).
    await server().admin(`ALTER ROLE ${role} SET statement_timeout = '100ms'`);
    const roleUrl = new URL(url);
    roleUrl.username = role;
    const schema = 'role_timeout';
    const stores = [0, undefined, 300].map((queryTimeoutMs) =>
      postgresSessionStore(roleUrl.href, queryTimeoutMs === undefined ? { schema } : { schema, queryTimeoutMs }),
    );
    opened.push(...stores);
    const [unbounded, byDefault, bounded] = stores as [SessionStore, SessionStore, SessionStore];
    right(await untilRight(() => unbounded.append('s', 0, ['{"a":0}'])));
    for (const store of stores) right(await untilRight(() => store.read('s', 0)));
    // Each append waits on the row longer than the role's 100 ms; no limit, and the default's 30 s, outlast the lock.
    const waitOn = (store: SessionStore, expected: number) =>
      withRowsLocked(url, [`SELECT lines FROM ${schema}.sessions WHERE id = 's'`], async (locked) => {
        const append = store.append('s', expected, [`{"a":${expected}}`]);
        await new Promise((resolve) => setTimeout(resolve, 600));
        return { append, waiting: await locked.waitingBackends() };
      });
    for (const [store, expected] of [
      [unbounded, 1],
      [byDefault, 2],
    ] as const) {
      const { append, waiting } = await waitOn(store, expected);
      expect([codeOf(await append), waiting]).toEqual([undefined, 1]);
    }
    // A bound given is the store's, not the role's: 300 ms cuts the wait, the role's 100 ms did not.
    const { append, waiting } = await waitOn(bounded, 3);
    expect([codeOf(await append), waiting]).toEqual(['store_unreachable', 0]);
    expect(right(await unbounded.read('s', 0)).lines).toHaveLength(3);
  });

  it('serves two schemas through one pool of the caller, whichever their names (foo and snapshot_foo)', async () => {
    const url = await databaseUrl();
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    pool.on('error', () => undefined);
    const outer = postgresSessionStore(pool, { schema: 'snapshot_foo' });
    const inner = postgresSessionStore(pool, { schema: 'foo' });
    for (const store of [outer, inner]) {
      right(await store.append('s', 0, ['{"a":1}']));
      right(await store.writeSnapshot('s', { position: 1, state: '{}' }));
    }
    // On the pool's one connection, each store's statements are its own: a read of one is not a snapshot read of the other.
    expect(right(await outer.read('s', 0)).lines).toHaveLength(1);
    expect(right(await inner.readSnapshot('s'))).toEqual({ position: 1, state: '{}' });
    await Promise.all([outer.close(), inner.close()]);
    await pool.end();
  });

  it('serves two schemas of 60 characters that begin alike through one pool of the caller, with names PostgreSQL keeps whole', async () => {
    await onOnePoolOfLongSchemas(
      await databaseUrl(),
      (pool, schema) => postgresSessionStore(pool, { schema }),
      async (stores) => {
        for (const [i, store] of stores.entries()) {
          right(await store.append('s', 0, [`{"store":${i}}`]));
          right(await store.writeSnapshot('s', { position: 1, state: `{"store":${i}}` }));
        }
        // On the pool's one connection, each store ran its own statements, on its own schema.
        for (const [i, store] of stores.entries()) {
          expect(right(await store.read('s', 0)).lines).toEqual([{ line: 1, text: `{"store":${i}}` }]);
          expect(right(await store.readSnapshot('s'))).toEqual({ position: 1, state: `{"store":${i}}` });
        }
      },
    );
  });

  it('says its pool was busy, not that the server cannot be reached, when every connection stays in use', async () => {
    const { url, settings, store } = await freshStore({ maxConnections: 1, connectTimeoutMs: 200, retryMs: 0 });
    right(await store.append('s', 0, ['{"a":1}']));
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query('BEGIN');
    await admin.query(`SELECT lines FROM ${settings.schema}.sessions WHERE id = 's' FOR UPDATE`);
    // The pool's one connection waits on the row.
    const waiting = store.append('s', 1, ['{"b":2}']);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const busy = await store.read('s', 0);
    await admin.query('COMMIT');
    await admin.end();
    right(await waiting);
    expect(codeOf(busy)).toBe('io');
    expect(E.isLeft(busy) && busy.left.message).toMatch(
      /^all 1 connections of the pool to postgres:\/\/\S+ stayed in use/u,
    );
  });

  it('lists only the ids a session may have, as the folder store does: a row written by other means forges no line', async () => {
    const { url, settings, store } = await freshStore();
    right(await store.append('ok', 0, ['{"a":1}']));
    const admin = new pg.Pool({ connectionString: url });
    for (const id of ['two\nforged', '../up', ''])
      await admin.query(`INSERT INTO ${settings.schema}.sessions (id, lines) VALUES ($1, 0)`, [id]);
    await admin.end();
    expect(right(await store.list())).toEqual(['ok']);
  });

  it('refuses at append a line it could not keep as given (a lone surrogate, which UTF-8 cannot hold), writing nothing', async () => {
    const { store } = await freshStore();
    right(await store.append('s', 0, ['{"a":1}']));
    const refused = await store.append('s', 1, ['{"a":2}', '{"text":"caf\uD800"}']);
    expect(E.isLeft(refused) && refused.left).toEqual({
      code: 'io',
      message: 'a line to append holds a lone surrogate, which PostgreSQL would keep as U+FFFD',
    });
    expect(right(await store.read('s', 0)).lines.map((line) => line.text)).toEqual(['{"a":1}']);
    // A pair of surrogates is a character like any other.
    right(await store.append('s', 1, ['{"text":"\uD83D\uDE00"}']));
    expect(right(await store.read('s', 1)).lines.map((line) => line.text)).toEqual(['{"text":"\uD83D\uDE00"}']);
  });

  it("refuses a caller's call of the wrong kind (a position given as text, lines that are none) without writing, and keeps counting its lines", async () => {
    const { store } = await freshStore();
    right(await store.append('s', 0, ['{"a":1}']));
    // '1' + 1 would be the text '11': the count would pass the lines, and the next line leave a gap.
    const asText = await store.append('s', '1' as never, ['{"b":1}']);
    expect(E.isLeft(asText) && asText.left.code).toBe('conflict');
    for (const lines of [null, [123], 'x']) expect(E.isLeft(await store.append('s', 1, lines as never))).toBe(true);
    expect(E.isLeft(await store.writeSnapshot('s', null as never))).toBe(true);
    const read = right(await store.read('s', 0));
    expect([read.position, read.lines.map((line) => line.text)]).toEqual([1, ['{"a":1}']]);
    right(await store.append('s', 1, ['{"b":1}']));
    expect(right(await store.read('s', 0)).lines.map((line) => line.line)).toEqual([1, 2]);
  });

  it('reads an option of the wrong kind as its default: a retryMs or queryTimeoutMs given as text neither waits for ever nor lifts the bound', async () => {
    const unreachable = postgresSessionStore('postgres://a:b@127.0.0.1:1/m', {
      retryMs: 'x' as never,
      connectTimeoutMs: 'y' as never,
    });
    expect(E.isLeft(await unreachable.list()) && 'answered').toBe('answered');
    await unreachable.close();
  });

  it('reads a line written by other means with line breaks in it (JSON pretty-printed by hand) as one line of the same JSON', async () => {
    const { url, settings, store } = await freshStore();
    right(await store.append('s', 0, ['{"a":1}']));
    const admin = new pg.Pool({ connectionString: url });
    await admin.query(`UPDATE ${settings.schema}.lines SET text = $1 WHERE line = 1`, [
      '{\r\n  "a": 1,\n  "b": [2],\n  "c": "x\ny \\"z\\"\n"\n}',
    ]);
    await admin.end();
    const { lines } = right(await store.read('s', 0));
    expect(lines.map((line) => line.text.split(/[\r\n]/u).length)).toEqual([1]);
    // A break inside a string (no JSON, as written) reads as its escape.
    expect(JSON.parse(lines[0]!.text)).toEqual({ a: 1, b: [2], c: 'x\ny "z"\n' });
  });

  it('leaves a pool passed in open on close, and ends the one it made', async () => {
    const url = await databaseUrl();
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    pool.on('error', () => undefined);
    const store = postgresSessionStore(pool, { schema: 'pooled' });
    right(await store.append('s', 0, ['{}']));
    expect(store.location).toBe(url.replace(`:${PASSWORD}@`, '@'));
    const bySettings = postgresSessionStore(
      new pg.Pool({ host: '127.0.0.1', port: 5, user: 'app', password: PASSWORD }),
    );
    expect(bySettings.location).toBe('postgres://app@127.0.0.1:5/');
    await store.close();
    expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    await pool.end();
    const own = postgresSessionStore(url, { schema: 'pooled' });
    right(await own.read('s', 0));
    await own.close();
    expect(codeOf(await own.read('s', 0))).toBe('io');
  });
});

/** What a test of a schema changed by hand works with: a session `s` of one line stored there, a connection of its owner. */
interface AlteredByHand {
  readonly url: string;
  readonly cwd: string;
  readonly store: SessionStore;
  readonly admin: pg.Client;
}

/**
 * Runs `work` on a database migrated to the newest version, which changes its schema by hand and
 * puts it back as it was: then `db migrate` finds nothing to do, and the store reads its line.
 */
const alteredByHand = async (work: (altered: AlteredByHand) => Promise<void>): Promise<void> => {
  const url = await server().createDatabase();
  const cwd = tempDir('pg-missing-');
  expect(right(await migrate(url))).toMatchObject({ from: 0, to: SCHEMA_VERSION });
  const store = postgresSessionStore(url);
  opened.push(store);
  right(await store.append('s', 0, ['{"a":1}']));
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await work({ url, cwd, store, admin });
  } finally {
    await admin.end();
  }
  const migrated = await runCli(['db', 'migrate', '--store', url], '', { cwd });
  expect([migrated.status, migrated.stderr, migrated.stdout]).toEqual([
    0,
    '',
    expect.stringMatching(/nothing to do\n$/u),
  ]);
  expect(right(await store.read('s', 0)).lines).toEqual([{ line: 1, text: '{"a":1}' }]);
};

describe.skipIf(postgresUnavailable !== undefined)('a PostgreSQL store that cannot be used', () => {
  /** Each failure is one line, names the store without its password, and never holds the password. */
  const expectOneLine = (either: E.Either<{ code: string; message: string }, unknown>, code: string): string => {
    expect(codeOf(either)).toBe(code);
    const message = E.isLeft(either) ? either.left.message : '';
    expect(message).not.toMatch(/\n/u);
    expect(message).not.toContain(PASSWORD);
    expect(message).not.toContain('wrong-Pw');
    return message;
  };

  it('refuses a URL that is not one, before any connection', async () => {
    for (const url of [
      'mysql://x@localhost/db',
      'postgres://u:wrong-Pw@localhost:99999/db',
      'postgres://u:wrong-Pw@/db',
    ]) {
      const store = postgresSessionStore(url);
      expectOneLine(await store.read('s', 0), 'store_url');
      expect(store.location).not.toContain('wrong-Pw');
      expectOneLine(await migrate(url), 'store_url');
    }
  });

  it('says a file the URL names that does not exist (sslrootcert) is a mistake in the URL, naming the file, not an unreachable server', async () => {
    const url = `${await databaseUrl()}?sslmode=verify-full&sslrootcert=/nonexistent/root.crt`;
    const store = postgresSessionStore(url);
    opened.push(store);
    for (const failed of [await store.list(), await migrate(url)]) {
      const message = expectOneLine(failed, 'store_url');
      expect(message).toContain('names a file that cannot be read: /nonexistent/root.crt (there is no such file)');
    }
  });

  it('keeps its tables in a schema whose name is an SQL key word, for sessions and notes alike, and refuses pg_ in one line', async () => {
    const url = await databaseUrl();
    for (const schema of ['user', 'order', 'all']) {
      const store = postgresSessionStore(url, { schema });
      opened.push(store);
      right(await store.append('s', 0, ['{"a":1}']));
      expect(right(await store.read('s', 0)).lines).toEqual([{ line: 1, text: '{"a":1}' }]);
      right(await store.writeSnapshot('s', { position: 1, state: '{}' }));
      expect(right(await store.readSnapshot('s'))).toEqual({ position: 1, state: '{}' });
      expect(right(await schemaVersion(url, { schema }))).toBe(SCHEMA_VERSION);
      const notes = postgresNotesStore(url, { schema });
      right(await notes.save('maya', { sessions: [{ session: 'chat', value: { facts: [] }, expected: 0 }] }));
      expect(right(await notes.load('maya', 'chat')).session.version).toBe(1);
      expect(right(await notes.leases.lease('maya', 'chat', { holder: 'h', ttlMs: 1_000 })).held).toBe(false);
      await notes.close();
    }
    const reserved = postgresSessionStore(url, { schema: 'pg_sessions' });
    expect(expectOneLine(await reserved.list(), 'store_url')).toMatch(/starts with "pg_"/u);
    expectOneLine(await migrate(url, { schema: 'pg_sessions' }), 'store_url');
  });

  it('refuses a database whose encoding lacks characters (LATIN1) in one line, at migration, in its script and at first use, a schema made there before included; UTF8 and SQL_ASCII keep every line', async () => {
    const made = async (name: string, encoding: string): Promise<string> => {
      await server().admin(
        `CREATE DATABASE ${name} ENCODING '${encoding}' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0`,
      );
      return server().url(name);
    };
    const refused = (name: string) =>
      new RegExp(
        `^PostgreSQL at postgres://postgres@127\\.0\\.0\\.1:\\d+/${name}: the database keeps its text in LATIN1, which lacks characters a session or a note may hold: make the store's database with ENCODING 'UTF8'$`,
        'u',
      );
    const latin1 = await made('latin1_store', 'LATIN1');
    expect(expectOneLine(await migrate(latin1), 'store_url')).toMatch(refused('latin1_store'));
    const store = postgresSessionStore(latin1);
    opened.push(store);
    expect(expectOneLine(await store.append('s', 0, ['{"taskPrompt":"a — b"}']), 'store_url')).toMatch(
      refused('latin1_store'),
    );
    const notes = postgresNotesStore(latin1);
    const saved = await notes.save('maya', { sessions: [{ session: 'chat', value: { facts: [] }, expected: 0 }] });
    expect(E.isLeft(saved) && saved.left.message).toMatch(/^store_url: PostgreSQL at .* keeps its text in LATIN1/u);
    await notes.close();
    // The script db migrate --print shows refuses it too, and creates nothing.
    const admin = new pg.Client({ connectionString: latin1 });
    await admin.connect();
    await expect(admin.query(schemaSql())).rejects.toMatchObject({ code: 'FT002' });
    await admin.query('ROLLBACK');
    expect((await admin.query(`SELECT to_regnamespace('fact_tracker') AS schema`)).rows).toEqual([{ schema: null }]);
    // A schema made there by an earlier version, which did not look: refused at first use all the same.
    await admin.query(`CREATE SCHEMA fact_tracker; CREATE TABLE fact_tracker.migrations (version integer PRIMARY KEY,
      description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    for (const migration of MIGRATIONS) {
      await admin.query(migration.sql('"fact_tracker"'));
      await admin.query('INSERT INTO fact_tracker.migrations (version, description) VALUES ($1, $2)', [
        migration.version,
        migration.description,
      ]);
    }
    await admin.end();
    const earlier = postgresSessionStore(latin1);
    opened.push(earlier);
    expect(expectOneLine(await earlier.read('s', 0), 'store_url')).toMatch(refused('latin1_store'));
    // SQL_ASCII keeps the bytes sent, UTF-8: every line comes back as it was given.
    const line = '{"taskPrompt":"a — b 日本 😀"}';
    for (const url of [await made('ascii_store', 'SQL_ASCII'), await databaseUrl()]) {
      const kept = postgresSessionStore(url, { schema: 'encoded' });
      opened.push(kept);
      right(await kept.append('s', 0, [line]));
      expect(right(await kept.read('s', 0)).lines).toEqual([{ line: 1, text: line }]);
    }
  });

  it('says a server cannot be reached when nothing listens there', async () => {
    const store = postgresSessionStore(`postgres://postgres:wrong-Pw@127.0.0.1:1/postgres`, { retryMs: 100 });
    expect(expectOneLine(await store.read('s', 0), 'store_unreachable')).toMatch(
      /^cannot reach PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1:1\/postgres: connection refused/u,
    );
    expect(store.location).toBe('postgres://postgres@127.0.0.1:1/postgres');
    await store.close();
  });

  it('says the credentials were refused for a wrong password, and a database that is not there', async () => {
    const wrong = postgresSessionStore(server().url('postgres', 'postgres', 'wrong-Pw'));
    expect(expectOneLine(await wrong.list(), 'store_auth')).toMatch(
      /password authentication failed for user "postgres"/u,
    );
    await wrong.close();
    const absent = postgresSessionStore(server().url('no_such_database'));
    expect(expectOneLine(await absent.list(), 'store_url')).toMatch(/database "no_such_database" does not exist/u);
    await absent.close();
  });

  it('says a connection was refused at the role’s CONNECTION LIMIT, in the server’s words, not that the server is full', async () => {
    const url = await databaseUrl();
    const name = `limited${Date.now() % 100_000}`;
    await server().admin(`CREATE ROLE ${name} LOGIN PASSWORD 'limited-Pw' CONNECTION LIMIT 1`);
    const asLimited = server().url(new URL(url).pathname.slice(1), name, 'limited-Pw');
    const holder = new pg.Client({ connectionString: asLimited });
    await holder.connect();
    try {
      const store = postgresSessionStore(asLimited, { retryMs: 0 });
      expect(expectOneLine(await store.list(), 'store_unreachable')).toMatch(
        /CONNECTION LIMIT \(too many connections for role "limited\d+"\)$/u,
      );
      await store.close();
    } finally {
      await holder.end();
    }
  });

  it('refuses in one line to migrate a schema whose recorded version lacks a table renamed or dropped by hand, naming it, rather than find nothing to do; renamed back, the store works', () =>
    alteredByHand(async ({ url, cwd, admin }) => {
      await admin.query('ALTER TABLE fact_tracker.lines RENAME TO lines_kept');
      const missing =
        /^fact-tracker db: store_schema: PostgreSQL at \S+: the schema fact_tracker records version \d+ but lacks its table lines, renamed or dropped by other means: /u;
      // The store's first call says to run db migrate, which must then say what is wrong.
      const fresh = postgresSessionStore(url);
      opened.push(fresh);
      expect(codeOf(await fresh.read('s', 0))).toBe('store_schema');
      const refused = await runCli(['db', 'migrate', '--store', url], '', { cwd });
      expect([refused.status, refused.stdout, refused.stderr.split('\n').length]).toEqual([1, '', 2]);
      expect(refused.stderr).toMatch(missing);
      // Nothing was made in its place; the printed script refuses the same.
      await expect(admin.query(schemaSql())).rejects.toThrow(/lacks its table lines, renamed or dropped/u);
      await admin.query('ROLLBACK');
      const { rows } = await admin.query(`SELECT to_regclass('fact_tracker.lines') AS lines`);
      expect(rows).toEqual([{ lines: null }]);
      // A schema of an older version lacking a table is refused the same, before any step runs.
      const sql = schemaSql({ schema: 'missing_v4' });
      await admin.query(`${sql.slice(0, sql.indexOf('-- 5: '))}COMMIT;`);
      await admin.query('ALTER TABLE missing_v4.snapshots RENAME TO snapshots_kept; DROP TABLE missing_v4.notes_queue');
      const older = await migrate(url, { schema: 'missing_v4' });
      expect(E.isLeft(older) && older.left).toMatchObject({
        code: 'store_schema',
        message: expect.stringMatching(/records version 4 but lacks its tables snapshots, notes_queue, renamed/u),
      });
      expect(right(await schemaVersion(url, { schema: 'missing_v4' }))).toBe(4);
      await admin.query('ALTER TABLE fact_tracker.lines_kept RENAME TO lines');
      // Every table a migrated schema holds is one whose absence is told.
      right(await migrate(url, { schema: 'every_table' }));
      const { rows: tables } = await admin.query<{ name: string }>(
        `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'every_table' AND table_name <> 'migrations'`,
      );
      expect(tables).toHaveLength(7);
      for (const { name } of tables) {
        await admin.query(`ALTER TABLE every_table.${name} RENAME TO kept`);
        const without = await migrate(url, { schema: 'every_table' });
        await admin.query(`ALTER TABLE every_table.kept RENAME TO ${name}`);
        expect(E.isLeft(without) && without.left.message).toMatch(new RegExp(`lacks its table ${name}, renamed`, 'u'));
      }
    }));

  it('refuses in one line to migrate a schema whose recorded version lacks a column dropped or renamed by hand, naming each as table.column, rather than find nothing to do; renamed back, the store works', () =>
    alteredByHand(async ({ url, cwd, store, admin }) => {
      right(await store.writeSnapshot('s', { position: 1, state: 'kept' }));
      await admin.query('ALTER TABLE fact_tracker.snapshots RENAME COLUMN previous_state TO previous_kept');
      await admin.query('ALTER TABLE fact_tracker.sessions RENAME COLUMN bytes TO bytes_kept');
      // The store's first call that reads the column says to run db migrate, which must then say which.
      const fresh = postgresSessionStore(url);
      opened.push(fresh);
      const read = await fresh.readSnapshot('s');
      expect(E.isLeft(read) && read.left).toMatchObject({
        code: 'store_schema',
        message: expect.stringMatching(/previous_state does not exist\): run "fact-tracker db migrate"$/u),
      });
      const refused = await runCli(['db', 'migrate', '--store', url], '', { cwd });
      expect([refused.status, refused.stdout, refused.stderr.split('\n').length]).toEqual([1, '', 2]);
      expect(refused.stderr).toMatch(
        /^fact-tracker db: store_schema: PostgreSQL at \S+: the schema fact_tracker records version \d+ but lacks its columns sessions\.bytes, snapshots\.previous_state, renamed or dropped by other means: rename them back /u,
      );
      // Nothing was made in their place; the printed script refuses the same.
      await expect(admin.query(schemaSql())).rejects.toThrow(
        /lacks its columns sessions\.bytes, snapshots\.previous_state, renamed/u,
      );
      await admin.query('ROLLBACK');
      const { rows } = await admin.query(
        `SELECT column_name AS name FROM information_schema.columns WHERE table_schema = 'fact_tracker' AND column_name IN ('bytes', 'previous_state') ORDER BY table_name`,
      );
      expect(rows).toEqual([{ name: 'bytes' }]);
      // A column of another type is no missing one: the server casts it where it can.
      await admin.query('ALTER TABLE fact_tracker.lines ALTER COLUMN text TYPE varchar');
      // A schema of an older version is refused the same, before any step runs, by a store's first use
      // too; a missing table is named once, not with its columns.
      const sql = schemaSql({ schema: 'missing_v4' });
      await admin.query(`${sql.slice(0, sql.indexOf('-- 5: '))}COMMIT;`);
      await admin.query(
        'ALTER TABLE missing_v4.notes_queue DROP COLUMN item_key; ALTER TABLE missing_v4.lines RENAME COLUMN text TO kept; DROP TABLE missing_v4.notes_profiles',
      );
      const lacking =
        /records version 4 but lacks its table notes_profiles and its columns lines\.text, notes_queue\.item_key, renamed or dropped by other means: rename them back /u;
      const older = await migrate(url, { schema: 'missing_v4' });
      expect(E.isLeft(older) && older.left).toMatchObject({
        code: 'store_schema',
        message: expect.stringMatching(lacking),
      });
      const olderStore = postgresSessionStore(url, { schema: 'missing_v4' });
      opened.push(olderStore);
      const first = await olderStore.read('s', 0);
      expect(E.isLeft(first) && first.left).toMatchObject({
        code: 'store_schema',
        message: expect.stringMatching(lacking),
      });
      expect(right(await schemaVersion(url, { schema: 'missing_v4' }))).toBe(4);
      await admin.query('ALTER TABLE fact_tracker.snapshots RENAME COLUMN previous_kept TO previous_state');
      await admin.query('ALTER TABLE fact_tracker.sessions RENAME COLUMN bytes_kept TO bytes');
      expect(right(await fresh.readSnapshot('s'))).toEqual({ position: 1, state: 'kept' });
      // Every column of every table a migrated schema holds is one whose absence is told.
      const { rows: tables } = await admin.query<{ name: string; columns: string[] }>(
        `SELECT table_name AS name, array_agg(column_name::text ORDER BY ordinal_position) AS columns FROM information_schema.columns
          WHERE table_schema = 'fact_tracker' AND table_name <> 'migrations' GROUP BY table_name`,
      );
      expect(tables).toHaveLength(7);
      for (const { name, columns } of tables) {
        const schema = `dropped_${name}`;
        right(await migrate(url, { schema }));
        await admin.query(
          `ALTER TABLE ${schema}.${name} ${columns.map((column) => `DROP COLUMN ${column} CASCADE`).join(', ')}`,
        );
        const without = await migrate(url, { schema });
        const named = columns.map((column) => `${name}.${column}`).join(', ');
        expect(E.isLeft(without) && without.left.message).toContain(
          `lacks its column${columns.length === 1 ? '' : 's'} ${named}, renamed`,
        );
      }
    }));

  it('refuses a schema holding another tool’s tables (a sessions table, a migrations table without an integer version) in one line, store_schema, at migration and first use, changing nothing', async () => {
    const url = await databaseUrl();
    const admin = new pg.Pool({ connectionString: url, max: 1 });
    try {
      await admin.query(`CREATE SCHEMA app_sessions; CREATE TABLE app_sessions.sessions (sid text PRIMARY KEY)`);
      await admin.query(`CREATE SCHEMA app_text; CREATE TABLE app_text.migrations (version text PRIMARY KEY)`);
      await admin.query(`INSERT INTO app_text.migrations VALUES ('2024_01_01_create_users')`);
      await admin.query(`CREATE SCHEMA app_named; CREATE TABLE app_named.migrations (id serial, migration text)`);
      for (const [schema, said] of [
        ['app_sessions', /holds an object of a name migration 1 makes \(relation "sessions" already exists\)/u],
        ['app_text', /holds a table migrations without an integer column version/u],
        ['app_named', /holds a table migrations without an integer column version/u],
      ] as const) {
        const migrated = await migrate(url, { schema });
        expect(expectOneLine(migrated, 'store_schema'), schema).toMatch(said);
        const store = postgresSessionStore(url, { schema });
        expect(expectOneLine(await store.list(), 'store_schema'), schema).toMatch(said);
        await store.close();
        const { rows } = await admin.query<{ name: string }>(
          `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1`,
          [schema],
        );
        expect(rows.map((row) => row.name)).toEqual([schema === 'app_sessions' ? 'sessions' : 'migrations']);
      }
    } finally {
      await admin.end();
    }
  });

  it('says which privilege is missing: creating the schema, or writing its tables', async () => {
    const url = await databaseUrl();
    const name = `reader${Date.now() % 100_000}`;
    await server().admin(`CREATE ROLE ${name} LOGIN PASSWORD 'wrong-Pw'`);
    const asReader = server().url(new URL(url).pathname.slice(1), name, 'wrong-Pw');
    const cannotCreate = postgresSessionStore(asReader, { schema: 'not_created' });
    expect(expectOneLine(await cannotCreate.append('s', 0, ['{}']), 'store_privilege')).toMatch(/permission denied/u);
    await cannotCreate.close();
    right(await migrate(url, { schema: 'read_only' }));
    const admin = new pg.Pool({ connectionString: url });
    await admin.query(`GRANT USAGE ON SCHEMA read_only TO ${name}`);
    await admin.query(`GRANT SELECT ON ALL TABLES IN SCHEMA read_only TO ${name}`);
    await admin.end();
    const readOnly = postgresSessionStore(asReader, { schema: 'read_only' });
    expect(right(await readOnly.list())).toEqual([]);
    expectOneLine(await readOnly.append('s', 0, ['{}']), 'store_privilege');
    await readOnly.close();
  });

  it('migrates a schema an administrator made for its owner, who may not create schemas in the database: by migrate, first use and the printed SQL', async () => {
    const url = await databaseUrl();
    const name = `owner${Date.now() % 100_000}`;
    await server().admin(`CREATE ROLE ${name} LOGIN PASSWORD 'owner-Pw'`);
    const admin = new pg.Pool({ connectionString: url, max: 1 });
    // CONNECT only on the database (PUBLIC's), each schema made for the owner by the administrator.
    for (const schema of ['owned_migrated', 'owned_first_use', 'owned_printed'])
      await admin.query(`CREATE SCHEMA ${schema} AUTHORIZATION ${name}`);
    await admin.end();
    const asOwner = server().url(new URL(url).pathname.slice(1), name, 'owner-Pw');
    expect(right(await migrate(asOwner, { schema: 'owned_migrated' }))).toMatchObject({ from: 0, to: SCHEMA_VERSION });
    const store = postgresSessionStore(asOwner, { schema: 'owned_first_use' });
    opened.push(store);
    expect(right(await store.append('s', 0, ['{}'])).position).toBe(1);
    const owner = new pg.Client({ connectionString: asOwner });
    await owner.connect();
    try {
      await owner.query(schemaSql({ schema: 'owned_printed' }));
      await owner.query(schemaSql({ schema: 'owned_printed' }));
    } finally {
      await owner.end();
    }
    expect(right(await schemaVersion(asOwner, { schema: 'owned_printed' }))).toBe(SCHEMA_VERSION);
  });

  it('lets a role that may not create the schema go on once the owner’s migration it waited for is committed', async () => {
    const url = await databaseUrl();
    const name = `agent${Date.now() % 100_000}`;
    const schema = 'owner_first';
    await server().admin(`CREATE ROLE ${name} LOGIN PASSWORD 'agent-Pw'`);
    const owner = new pg.Client({ connectionString: url });
    await owner.connect();
    try {
      // The owner migrates in one transaction, holding the migration lock, and grants the agents their rows.
      await owner.query(schemaSql({ schema }).replace(/COMMIT;\s*$/u, ''));
      await owner.query(`GRANT USAGE ON SCHEMA ${schema} TO ${name}`);
      await owner.query(`GRANT SELECT ON ${schema}.migrations TO ${name}`);
      await owner.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ${schema}.sessions, ${schema}.lines TO ${name}`);
      const agent = postgresSessionStore(server().url(new URL(url).pathname.slice(1), name, 'agent-Pw'), { schema });
      opened.push(agent);
      // The agent sees no schema yet, so it waits for the migration lock; the owner then commits.
      const listed = agent.list();
      const waiting = async (): Promise<boolean> => {
        const { rows } = await owner.query<{ n: string }>(
          "SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted",
        );
        return Number(rows[0]!.n) > 0;
      };
      let answered: unknown;
      void listed.then((answer) => {
        answered = answer;
      });
      for (let tries = 0; tries < 3_000 && answered === undefined && !(await waiting()); tries += 1)
        await new Promise((resolve) => setTimeout(resolve, 10));
      expect(answered ?? (await waiting())).toBe(true);
      await owner.query('COMMIT');
      expect(right(await listed)).toEqual([]);
    } finally {
      await owner.end();
    }
  });

  it('says a read-only server (a standby, default_transaction_read_only) refused a write, at once, and still reads', async () => {
    // A database of its own: the setting is the database's, and this file's other tests write.
    const url = await server().createDatabase();
    const settings = { schema: 'standby' };
    const writer = postgresSessionStore(url, settings);
    opened.push(writer);
    const written = right(await openSession('s', { store: writer, clock: () => 1_000 }));
    right(await written.invalidateFact({ subject: 'task:1', relation: 'summary', at: 1 }));
    const writerNotes = postgresNotesStore(url, settings);
    right(await writerNotes.save('maya', { sessions: [{ session: 'chat', value: { facts: [] }, expected: 0 }] }));
    await writerNotes.close();
    await server().admin(`ALTER DATABASE ${new URL(url).pathname.slice(1)} SET default_transaction_read_only = on`);

    // A refusal is no transient failure: it is answered at once. Were it retried, the call would
    // keep trying for an hour, far past the test's own timeout (no clock is read here).
    const readOnly = { ...settings, retryMs: 3_600_000 };
    const store = postgresSessionStore(url, readOnly);
    opened.push(store);
    const readOnlyMessage =
      /is read-only \(a hot standby, or default_transaction_read_only is on\).*nothing was written/u;
    expect(expectOneLine(await store.append('s', 1, ['{}']), 'store_privilege')).toMatch(readOnlyMessage);
    const session = right(await openSession('s', { store, clock: () => 2_000 }));
    expect(right(await session.snapshot())).toEqual(right(await written.snapshot()));
    expect(
      expectOneLine(await session.invalidateFact({ subject: 'task:2', relation: 'summary', at: 2 }), 'store_privilege'),
    ).toMatch(readOnlyMessage);
    expect(right(await session.snapshot())).toEqual(right(await written.snapshot()));
    expect(right(await store.list())).toEqual(['s']);
    expect(right(await store.read('s', 0)).position).toBe(1);

    const notes = postgresNotesStore(url, readOnly);
    expect(right(await notes.load('maya', 'chat')).session.version).toBe(1);
    const saved = await notes.save('maya', { sessions: [{ session: 'chat', value: { facts: [] }, expected: 1 }] });
    expect(expectOneLine(saved, 'unavailable')).toMatch(/^store_privilege: /u);
    expect(expectOneLine(saved, 'unavailable')).toMatch(readOnlyMessage);
    expect(right(await notes.load('maya', 'chat')).session.version).toBe(1);
    await notes.close();
    // A schema that is not there yet cannot be created there either.
    const unmade = postgresSessionStore(url, { schema: 'not_made', retryMs: 30_000 });
    opened.push(unmade);
    expect(expectOneLine(await unmade.list(), 'store_privilege')).toMatch(readOnlyMessage);
  });
});
