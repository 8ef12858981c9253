/**
 * The PostgreSQL notes store against a real server: the notes store and lease conformance
 * suites, its tables in the versioned schema, a pool passed in left open, and one-line failures.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import * as E from 'fp-ts/lib/Either.js';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeNotes } from '../../src/notes/persist.js';
import type { CompleteFn } from '../../src/notes/port.js';
import { type JsonValue, memoryNotesStore } from '../../src/notes/store.js';
import { createNotableFactsTracker } from '../../src/notes/tracker.js';
import type { NotesTrackerFailure } from '../../src/notes/trackerTypes.js';
import {
  migrate,
  MIGRATIONS,
  postgresNotesStore,
  type PostgresNotesStore,
  schemaSql,
} from '../../src/postgres/index.js';
import { expectCorrectionSupersedes } from '../notes/clockSkew.js';
import { describeNotesLeaseConformance } from '../notes/leaseConformance.js';
import { unstorableSection } from '../notes/fixtures/unstorableSection.js';
import { describeNotesStoreConformance } from '../notes/storeConformance.js';
import { untilRight, withRowsLocked } from './rowLock.js';
import { onOnePoolOfLongSchemas } from './longSchemas.js';
import { postgresUnavailable, usePostgres } from './server.js';

const { server } = usePostgres();

/** The project's folder, where a child process finds the driver. */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Stores opened by a test, closed after it. */
const opened: PostgresNotesStore[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()));
});

const database: { url?: Promise<string> } = {};
const databaseUrl = (): Promise<string> => (database.url ??= server().createDatabase());

let schemas = 0;
/** A store on a schema of its own, so each test starts empty. */
const freshStore = async (): Promise<PostgresNotesStore> => {
  schemas += 1;
  const store = postgresNotesStore(await databaseUrl(), { schema: `n${schemas}` });
  opened.push(store);
  return store;
};

/** A model that notes what the latest message said. */
const saying: CompleteFn = async (prompt) =>
  JSON.stringify({
    notableFacts: [{ category: 'History', fact: `Said ${/Latest user message:\nUser: (.*)/u.exec(prompt)?.[1]}` }],
  });

/** The profile of `maya` as the store holds it. */
const profileOf = async (
  store: PostgresNotesStore,
): Promise<{ facts: Array<{ fact: string }>; sessionCount: number } | undefined> => {
  const records = await store.load('maya', 's1');
  return E.isRight(records)
    ? (records.right.profile.value as { facts: Array<{ fact: string }>; sessionCount: number })
    : undefined;
};

const right = <T>(result: E.Either<NotesTrackerFailure, T>): T => {
  if (E.isLeft(result)) throw new Error(`expected a value, got ${result.left.code}: ${result.left.message}`);
  return result.right;
};

/** Where a statement's connection is lost: before it is sent, once the server answered it, or not at all. */
type Cut = 'before' | 'after' | undefined;

/**
 * A pool of one connection to `url` whose clients lose it as a killed connection does, where the
 * cut each client is given (`cutFor()`, which sees each statement) says.
 */
const cuttingPool = (url: string, cutFor: () => (statement: unknown) => Cut): pg.Pool => {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  pool.on('error', () => undefined);
  const connect = pool.connect.bind(pool);
  pool.connect = (async () => {
    const client = await connect();
    const query = client.query.bind(client) as (statement: unknown) => Promise<unknown>;
    const cut = cutFor();
    client.query = (async (statement: unknown) => {
      const where = cut(statement);
      if (where === undefined) return query(statement);
      if (where === 'after') await query(statement);
      (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
      throw new Error('Connection terminated unexpectedly');
    }) as typeof client.query;
    return client;
  }) as typeof pool.connect;
  return pool;
};

/** The name of a prepared statement, if `statement` is one. */
const nameOf = (statement: unknown): unknown => (statement as { name?: unknown } | undefined)?.name;

describe.skipIf(postgresUnavailable !== undefined)('the PostgreSQL notes store', () => {
  describeNotesStoreConformance('postgresNotesStore', freshStore);
  describeNotesLeaseConformance(
    'postgresNotesStore',
    freshStore,
    (_store, ttlMs) => new Promise((resolve) => setTimeout(resolve, ttlMs + 50)),
  );

  it('lets trackers end a stage without a session for every unmerged session of a user, those let go of included, each once', async () => {
    const store = await freshStore();
    const errors: string[] = [];
    const onError = (failure: NotesTrackerFailure) => errors.push(`${failure.code}: ${failure.message}`);
    const a = createNotableFactsTracker({ complete: saying, store, cacheSize: 1, holder: 'a', onError });
    const b = createNotableFactsTracker({ complete: saying, store, cacheSize: 1, holder: 'b', onError });
    for (const session of ['s1', 's2', 's3', 's4']) a.recordUserMessage('maya', session, `in ${session}`);
    await a.settled();
    expect(a.retained().sessions).toBe(1);
    const merged = right(await a.endStage('maya'));
    expect([...merged.sessions].sort()).toEqual(['s1', 's2', 's3', 's4']);
    expect(merged.profile?.sessionCount).toBe(4);
    await a.settled();
    expect(await store.unmergedSessions('maya')).toEqual(E.right([]));
    // Another tracker (another process) finds nothing left; a session it serves and lets go of, a merges.
    expect(right(await b.endStage('maya')).sessions).toEqual([]);
    b.recordUserMessage('maya', 's5', 'in s5');
    await b.settled();
    expect(b.release('maya', 's5')).toEqual(E.right(undefined));
    await b.settled();
    expect(await store.unmergedSessions('maya')).toEqual(E.right(['s5']));
    expect(right(await a.endStage('maya')).sessions).toEqual(['s5']);
    await a.settled();
    // Both at once, each holding none of the sessions it merges: every session's facts reach the profile once.
    for (const session of ['s6', 's7']) b.recordUserMessage('maya', session, `in ${session}`);
    await b.settled();
    const reports = (await Promise.all([a.endStage('maya'), b.endStage('maya')])).map(right);
    expect(reports.flatMap((report) => report.sessions).sort()).toContain('s6');
    await Promise.all([a.settled(), b.settled()]);
    const records = await store.load('maya', 's1');
    const profile = E.isRight(records)
      ? (records.right.profile.value as { facts: Array<{ fact: string }> })
      : undefined;
    expect(profile?.facts.map(({ fact }) => fact).sort()).toEqual(
      ['s1', 's2', 's3', 's4', 's5', 's6', 's7'].map((session) => `Said in ${session}`),
    );
    expect(await store.unmergedSessions('maya')).toEqual(E.right([]));
    await Promise.all([a.close(), b.close()]);
    expect(errors).toEqual([]);
  });

  it('counts each session once in sessionCount when two trackers end the stage on the same sessions at once', async () => {
    const store = await freshStore();
    const errors: string[] = [];
    const onError = (failure: NotesTrackerFailure) => errors.push(`${failure.code}: ${failure.message}`);
    // Each tracker holds none of the three sessions: both load all three and merge them.
    const a = createNotableFactsTracker({ complete: saying, store, cacheSize: 0, holder: 'a', onError });
    const b = createNotableFactsTracker({ complete: saying, store, cacheSize: 0, holder: 'b', onError });
    for (const session of ['s1', 's2', 's3']) a.recordUserMessage('maya', session, `in ${session}`);
    await a.settled();
    const reports = (await Promise.all([a.endStage('maya'), b.endStage('maya')])).map(right);
    await Promise.all([a.settled(), b.settled()]);
    expect(reports.flatMap((report) => report.sessions)).toContain('s3');
    const profile = await profileOf(store);
    expect(profile?.facts.map(({ fact }) => fact).sort()).toEqual(['Said in s1', 'Said in s2', 'Said in s3']);
    expect(profile?.sessionCount).toBe(3);
    await Promise.all([a.close(), b.close()]);
    expect(errors).toEqual([]);
  });

  it('counts a named session once when two trackers merge it in the same millisecond', async () => {
    const store = await freshStore();
    const errors: string[] = [];
    const onError = (failure: NotesTrackerFailure) => errors.push(`${failure.code}: ${failure.message}`);
    // The store's records alone, without its leases (which would queue both ends of stage to one holder).
    const records = { load: store.load.bind(store), save: store.save.bind(store) };
    const a = createNotableFactsTracker({ complete: saying, store: records, now: () => 50, onError });
    const b = createNotableFactsTracker({ complete: saying, store: records, now: () => 50, onError });
    a.recordUserMessage('maya', 's1', 'in s1');
    await a.settled();
    right(await b.load('maya', 's1'));
    const reports = (await Promise.all([a.endStage('maya', 's1'), b.endStage('maya', 's1')])).map(right);
    await Promise.all([a.settled(), b.settled()]);
    expect(reports.map((report) => report.sessions)).toEqual([['s1'], ['s1']]);
    expect(await profileOf(store)).toMatchObject({ facts: [{ fact: 'Said in s1' }], sessionCount: 1 });
    await Promise.all([a.close(), b.close()]);
    expect(errors).toEqual([]);
  });

  it('lets a correction told through a server whose clock is an hour behind replace the fact another server merged', async () => {
    const store = await freshStore();
    // The second server's store: another pool on the same tables.
    const other = postgresNotesStore(await databaseUrl(), { schema: `n${schemas}` });
    opened.push(other);
    await expectCorrectionSupersedes(store, other);
  });

  it("answers a tracker's load once it has read what another process's holder saved, so the context after it holds that", async () => {
    const store = await freshStore();
    const other = postgresNotesStore(await databaseUrl(), { schema: `n${schemas}` });
    opened.push(other);
    const [a, b] = [store, other].map((on, i) =>
      createNotableFactsTracker({ complete: saying, store: on, holder: `server-${i}`, leasePollMs: 20 }),
    );
    a!.recordUserMessage('maya', 's1', 'one');
    right(await a!.settled());
    b!.recordUserMessage('maya', 's1', 'two');
    right(await b!.settled());
    // b's extraction, of its own message, replaced a's list (the model notes the latest message only).
    right(await a!.load('maya', 's1'));
    expect(right(a!.contextFor('maya', 's1')).session).toBe('NOTED FACTS FROM THIS SESSION:\n[History]\n- Said two');
    await Promise.all([a!.close(), b!.close()]);
  });

  it('keeps its tables in the versioned schema, records as JSONB with a version column', async () => {
    const store = await freshStore();
    const saved = await store.save('maya', {
      sessions: [{ session: 's1', value: { facts: [] }, expected: 0 }],
      profile: { value: { facts: [], sessionCount: 0 }, expected: 0 },
    });
    expect(E.isRight(saved)).toBe(true);
    const admin = new pg.Pool({ connectionString: await databaseUrl(), max: 1 });
    const schema = `n${schemas}`;
    const { rows: versions } = await admin.query(`SELECT version FROM ${schema}.migrations ORDER BY version`);
    const { rows: columns } = await admin.query(
      `SELECT table_name, column_name, data_type FROM information_schema.columns
       WHERE table_schema = $1 AND table_name IN ('notes_sessions', 'notes_profiles') AND column_name IN ('value', 'version')
       ORDER BY table_name, column_name`,
      [schema],
    );
    const { rows: stored } = await admin.query(
      `SELECT user_id, session_id, value, version FROM ${schema}.notes_sessions`,
    );
    await admin.end();
    expect(versions).toEqual(MIGRATIONS.map(({ version }) => ({ version })));
    expect(columns).toEqual([
      { table_name: 'notes_profiles', column_name: 'value', data_type: 'jsonb' },
      { table_name: 'notes_profiles', column_name: 'version', data_type: 'integer' },
      { table_name: 'notes_sessions', column_name: 'value', data_type: 'jsonb' },
      { table_name: 'notes_sessions', column_name: 'version', data_type: 'integer' },
    ]);
    expect(stored).toEqual([{ user_id: 'maya', session_id: 's1', value: { facts: [] }, version: 1 }]);
  });

  it('migrates a queue of version 2 to the keyed one: what waited stays, and an item sent again under its key is added once', async () => {
    const url = await databaseUrl();
    const schema = 'keys_from_v2';
    // The schema as version 2 left it, with a message waiting in the queue.
    const sql = schemaSql({ schema });
    const admin = new pg.Pool({ connectionString: url, max: 1 });
    await admin.query(`${sql.slice(0, sql.indexOf('-- 3: '))}COMMIT;`);
    await admin.query(
      `SELECT held FROM ${schema}.notes_lease('maya', 's1', 'old', 60000, NULL, ARRAY['message'], ARRAY['waiting'], ARRAY[1.0::double precision])`,
    );
    expect(await migrate(url, { schema })).toMatchObject(
      E.right({ from: 2, to: MIGRATIONS[MIGRATIONS.length - 1]!.version }),
    );
    const store = postgresNotesStore(url, { schema });
    opened.push(store);
    const call = {
      holder: 'new',
      ttlMs: 60_000,
      add: [{ kind: 'message' as const, text: 'keyed', at: 2, key: 'new-instance:0' }],
    };
    const first = await store.leases.lease('maya', 's1', call);
    const again = await store.leases.lease('maya', 's1', call);
    expect(E.isRight(first) && first.right.added).toHaveLength(1);
    expect(again).toMatchObject(E.right({ added: E.isRight(first) ? first.right.added : [] }));
    const { rows } = await admin.query(`SELECT text, item_key FROM ${schema}.notes_queue ORDER BY seq`);
    const { rows: versions } = await admin.query(`SELECT version FROM ${schema}.migrations ORDER BY version`);
    await admin.end();
    expect(rows).toEqual([
      { text: 'waiting', item_key: null },
      { text: 'keyed', item_key: 'new-instance:0' },
    ]);
    expect(versions).toEqual(MIGRATIONS.map(({ version }) => ({ version })));
  });

  it('answers a save and a lease blocked by a row lock past queryTimeoutMs as unavailable, once, leaving no backend waiting', async () => {
    const url = await databaseUrl();
    const schema = 'locked_notes';
    // The rows are written through a store of the default bound; the short one serves the locked calls.
    const setup = postgresNotesStore(url, { schema });
    const store = postgresNotesStore(url, { schema, queryTimeoutMs: 300 });
    opened.push(setup, store);
    const value = { facts: [{ category: 'food', fact: 'likes tea' }] };
    expect(E.isRight(await setup.save('maya', { sessions: [{ session: 'chat', value, expected: 0 }] }))).toBe(true);
    const call = { holder: 'a', ttlMs: 60_000, add: [{ kind: 'message' as const, text: 'hi', at: 1, key: 'a:0' }] };
    expect(E.isRight(await setup.leases.lease('maya', 'chat', call))).toBe(true);
    expect(E.isRight(await untilRight(() => store.load('maya', 'chat')))).toBe(true);
    // An administrator's open transaction keeps both rows locked.
    const rows = [
      `SELECT 1 FROM ${schema}.notes_sessions WHERE user_id = 'maya'`,
      `SELECT 1 FROM ${schema}.notes_leases WHERE user_id = 'maya'`,
    ];
    await withRowsLocked(url, rows, async (locked) => {
      const saved = await store.save('maya', { sessions: [{ session: 'chat', value: {}, expected: 1 }] });
      const leased = await store.leases.lease('maya', 'chat', { ...call, holder: 'b', add: [] });
      for (const answer of [saved, leased])
        expect(E.isLeft(answer) && answer.left).toEqual({
          code: 'unavailable',
          message: expect.stringMatching(
            /^store_unreachable: PostgreSQL at \S+ cancelled a statement, so it did nothing/u,
          ),
        });
      expect(await locked.waitingBackends()).toBe(0);
    });
    const loaded = await setup.load('maya', 'chat');
    expect(E.isRight(loaded) && loaded.right.session).toEqual({ value, version: 1 });
  });

  it('has the server end a transaction of the store whose client stopped inside it past queryTimeoutMs, so no other client waits on its row locks', async () => {
    const url = await databaseUrl();
    const schema = 'stopped_notes';
    const store = postgresNotesStore(url, { schema, queryTimeoutMs: 3_000 });
    opened.push(store);
    expect(E.isRight(await store.save('maya', { sessions: [{ session: 'chat', value: {}, expected: 0 }] }))).toBe(true);
    // The save's update waits on a row another client keeps locked.
    const locker = new pg.Client({ connectionString: url });
    locker.on('error', () => undefined);
    await locker.connect();
    await locker.query('BEGIN');
    await locker.query(`SELECT 1 FROM ${schema}.notes_sessions WHERE user_id = 'maya' FOR UPDATE`);
    const lockerPid = (await locker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    const saved = store.save('maya', { sessions: [{ session: 'chat', value: { a: 1 }, expected: 1 }] });
    for (;;) {
      const { rows } = await locker.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'session-fact-tracker' AND wait_event_type = 'Lock'`,
      );
      if (rows[0]!.n > 0) break;
    }
    // This process stops (as one paused would) before the save's update gets the row: another
    // process ends the locker's session, waits until the update has the row in a transaction
    // whose client does not answer, then updates the row itself, waiting at most 8 s for it.
    const other = spawnSync(
      process.execPath,
      [
        '-e',
        `const pg = require('pg'); const c = new pg.Client({ connectionString: process.argv[1] });
        const idle = "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'session-fact-tracker' AND state = 'idle in transaction'";
        const held = async () => { for (let i = 0; i < 500; i += 1) { if ((await c.query(idle)).rows[0].n > 0) return; await new Promise((r) => setTimeout(r, 5)); } throw new Error('never idle in transaction'); };
        c.connect().then(() => c.query('SELECT pg_terminate_backend(${lockerPid})')).then(held).then(() => c.query("SET lock_timeout = '8s'"))
          .then(() => c.query("UPDATE ${schema}.notes_sessions SET updated_at = now() WHERE user_id = 'maya'"))
          .then(() => console.log('updated'), (error) => console.log(error.message)).finally(() => c.end());`,
        url,
      ],
      { cwd: ROOT, encoding: 'utf8' },
    );
    expect(other.stdout.trim()).toBe('updated');
    await locker.end().catch(() => undefined);
    // The stopped save did nothing: its connection was ended before its COMMIT.
    expect(E.isLeft(await saved)).toBe(true);
    const loaded = await store.load('maya', 'chat');
    expect(E.isRight(loaded) && loaded.right.session).toEqual({ value: {}, version: 1 });
  });

  it("bounds a save's transaction and a lease on a caller's pool by queryTimeoutMs, and leaves the pool's own statement_timeout as it was", async () => {
    const url = await databaseUrl();
    const schema = 'callers_locked_notes';
    const pool = new pg.Pool({ connectionString: url, max: 1, application_name: 'callers' });
    pool.on('error', () => undefined);
    const setup = postgresNotesStore(url, { schema });
    const store = postgresNotesStore(pool, { schema, queryTimeoutMs: 300 });
    opened.push(setup, store);
    const value = { facts: [{ category: 'food', fact: 'likes tea' }] };
    expect(E.isRight(await setup.save('maya', { sessions: [{ session: 'chat', value, expected: 0 }] }))).toBe(true);
    const call = { holder: 'a', ttlMs: 60_000, add: [{ kind: 'message' as const, text: 'hi', at: 1, key: 'a:0' }] };
    expect(E.isRight(await setup.leases.lease('maya', 'chat', call))).toBe(true);
    expect(E.isRight(await untilRight(() => store.load('maya', 'chat')))).toBe(true);
    const rows = [
      `SELECT 1 FROM ${schema}.notes_sessions WHERE user_id = 'maya'`,
      `SELECT 1 FROM ${schema}.notes_leases WHERE user_id = 'maya'`,
    ];
    await withRowsLocked(url, rows, async (locked) => {
      const hung = new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 5_000).unref());
      const saved = await Promise.race([
        store.save('maya', { sessions: [{ session: 'chat', value: {}, expected: 1 }] }),
        hung,
      ]);
      const leased = await Promise.race([store.leases.lease('maya', 'chat', { ...call, holder: 'b', add: [] }), hung]);
      for (const answer of [saved, leased])
        expect(answer !== 'hung' && E.isLeft(answer) && answer.left).toEqual({
          code: 'unavailable',
          message: expect.stringMatching(
            /^store_unreachable: PostgreSQL at \S+ cancelled a statement, so it did nothing/u,
          ),
        });
      expect(await locked.waitingBackends('callers')).toBe(0);
    });
    // The pool set no statement_timeout, and its session still has none.
    expect((await pool.query('SHOW statement_timeout')).rows).toEqual([{ statement_timeout: '0' }]);
    const loaded = await untilRight(() => store.load('maya', 'chat'));
    expect(E.isRight(loaded) && loaded.right.session).toEqual({ value, version: 1 });
    await store.close();
    await pool.end();
  });

  it('serves two schemas of 60 characters that begin alike through one pool of the caller, with names PostgreSQL keeps whole', async () => {
    await onOnePoolOfLongSchemas(
      await databaseUrl(),
      (pool, schema) => postgresNotesStore(pool, { schema }),
      async (stores) => {
        for (const [i, store] of stores.entries()) {
          const value = { facts: [{ category: 'store', fact: `store ${i}` }] };
          expect(await store.save('maya', { sessions: [{ session: 'chat', value, expected: 0 }] })).toMatchObject(
            E.right({}),
          );
          const call = {
            holder: `h${i}`,
            ttlMs: 60_000,
            add: [{ kind: 'message' as const, text: 'hi', at: 1, key: 'a:0' }],
          };
          expect(E.isRight(await store.leases.lease('maya', 'chat', call))).toBe(true);
        }
        // On the pool's one connection, each store ran its own statements, on its own schema.
        for (const [i, store] of stores.entries()) {
          const loaded = await store.load('maya', 'chat');
          expect(E.isRight(loaded) && loaded.right.session).toEqual({
            value: { facts: [{ category: 'store', fact: `store ${i}` }] },
            version: 1,
          });
        }
      },
    );
  });

  it('leaves a pool passed in open on close, and ends the one it made', async () => {
    const url = await databaseUrl();
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    pool.on('error', () => undefined);
    const passed = postgresNotesStore(pool, { schema: 'pooled_notes' });
    expect(E.isRight(await passed.load('maya', 's1'))).toBe(true);
    await passed.close();
    expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    await pool.end();
    const own = postgresNotesStore(url, { schema: 'pooled_notes' });
    expect(E.isRight(await own.load('maya', 's1'))).toBe(true);
    await own.close();
    const closed = await own.load('maya', 's1');
    expect(E.isLeft(closed) && closed.left.code).toBe('unavailable');
  });

  it('refuses a value or an id holding U+0000 or an unpaired surrogate as invalid_input, writing nothing, as the memory store refuses a value it cannot keep', async () => {
    const store = await freshStore();
    const unkeepable: ReadonlyArray<readonly [JsonValue, string]> = [
      [{ facts: [{ category: 'People', fact: 'Jordan\u0000' }] }, 'facts[0].fact holds U+0000'],
      [{ note: 'heart \ud83d' }, 'note holds an unpaired surrogate'],
      [{ ['key\u0000']: 1 }, 'a key holds U+0000'],
      [['ok', { nested: ['\udc00 low'] }], '[1].nested[0] holds an unpaired surrogate'],
    ];
    for (const [value, where] of unkeepable) {
      for (const write of [
        { sessions: [{ session: 's1', value, expected: 0 }] },
        { sessions: [{ session: 's1', value: { facts: [] }, expected: 0 }], profile: { value, expected: 0 } },
      ]) {
        const refused = await store.save('maya', write);
        expect(E.isLeft(refused) && refused.left).toEqual({
          code: 'invalid_input',
          message: expect.stringContaining(where),
        });
      }
    }
    // Nothing was written, and a value it can keep (a paired surrogate included) is saved.
    expect(await store.load('maya', 's1')).toEqual(E.right({ session: { version: 0 }, profile: { version: 0 } }));
    const fine = { facts: [{ category: 'People', fact: 'Loves 🐈 and Jordan' }] };
    expect(await store.save('maya', { sessions: [{ session: 's1', value: fine, expected: 0 }] })).toEqual(
      E.right({ sessions: [{ session: 's1', version: 1 }] }),
    );
    expect(await store.load('maya', 's1')).toEqual(
      E.right({ session: { value: fine, version: 1 }, profile: { version: 0 } }),
    );
    for (const [answer, why] of [
      [await store.load('ma\u0000ya', 's1'), /NUL character/u],
      [await store.save('maya', { sessions: [{ session: 's\ud83d', value: {}, expected: 0 }] }), /lone surrogate/u],
      [await store.unmergedSessions('\udc00'), /lone surrogate/u],
    ] as const)
      expect(E.isLeft(answer) && answer.left).toEqual({ code: 'invalid_input', message: expect.stringMatching(why) });
    // A write that is none, or a value that is no JSON, is answered as the memory store answers it, never rejected.
    const cycle: Record<string, unknown> = {};
    cycle['self'] = cycle;
    for (const write of [null, { sessions: [{ session: 's1', value: cycle, expected: 0 }] }]) {
      const answer = await store.save('maya', write as never);
      expect(E.isLeft(answer) && answer.left).toEqual({
        code: 'invalid_input',
        message: expect.stringMatching(/^the save was refused: /u),
      });
    }
    // The memory store answers such a value with the same code.
    const memory = await memoryNotesStore().save('maya', {
      sessions: [{ session: 's1', value: cycle as JsonValue, expected: 0 }],
    });
    expect(E.isLeft(memory) && memory.left.code).toBe('invalid_input');
  });

  it("answers a caller's call of the wrong kind as invalid_input, writing nothing: ids that are none, a version given as text, lease items of another kind", async () => {
    const store = await freshStore();
    const refused = async (answer: unknown): Promise<string> => {
      const settled = await answer;
      return E.isLeft(settled as E.Either<{ code: string }, unknown>)
        ? (settled as E.Left<{ code: string }>).left.code
        : 'accepted';
    };
    const calls: ReadonlyArray<() => unknown> = [
      () => store.load(null as never, 's'),
      () => store.load('u', 5 as never),
      () => store.unmergedSessions!(null as never),
      () => store.save(null as never, { sessions: [] }),
      // '1' + 1 would be the text '11': a version past every save.
      () => store.save('u', { sessions: [{ session: 's', value: { a: 1 }, expected: '1' as never }] }),
      () => store.leases!.lease('u', 's', null as never),
      () => store.leases!.lease('u', 's', { holder: 5 as never, ttlMs: 1000 }),
      () => store.leases!.lease('u', 's', { holder: 'h', ttlMs: 1000, add: [null as never] }),
      () => store.leases!.lease('u', 's', { holder: 'h', ttlMs: 1000, add: [{ kind: 'message', text: 5 as never }] }),
      () => store.leases!.lease('u', 's', { holder: 'h', ttlMs: 1000, add: [{ kind: 'note' as never }] }),
      () => store.leases!.lease('u', 's', { holder: 'h', ttlMs: 1000, add: [{ kind: 'stage', key: 'a\u0000' }] }),
      () => store.leases!.lease('u', 's', { holder: 'h', ttlMs: Number.NaN }),
      // PostgreSQL's interval overflows: refused on every try, were it sent.
      () => store.leases!.lease('u', 's', { holder: 'h', ttlMs: 1e16 }),
      // Past what a row of the (user, session) index holds: refused on every try, were it sent.
      () => store.load('u'.repeat(4_000), 's'),
      () => store.save('u', { sessions: [{ session: 'é'.repeat(401), value: { a: 1 }, expected: 0 }] }),
      () => store.leases!.lease('u'.repeat(4_000), 's', { holder: 'h', ttlMs: 1000 }),
    ];
    for (const call of calls) expect(await refused(call())).toBe('invalid_input');
    expect(right(await store.load('u', 's')).session.version).toBe(0);
    await store.close();
  });

  it('takes a tracker resumed from an earlier version’s file whose profile names a session no store can keep: nothing of it blocks the saves, with leases either', async () => {
    const store = await freshStore();
    // Keeps the facts its prompt shows, so the session's list gathers both trackers' messages.
    const keeping: CompleteFn = async (prompt) =>
      JSON.stringify({
        notableFacts: [
          ...[...prompt.matchAll(/"fact":"(Said [^"]*)"/gu)].map((match) => match[1]!),
          `Said ${/Latest user message:\nUser: (.*)/u.exec(prompt)?.[1]}`,
        ].map((fact) => ({ category: 'History', fact })),
      });
    const heard: NotesTrackerFailure[] = [];
    const a = createNotableFactsTracker({
      complete: keeping,
      store,
      holder: 'a',
      leasePollMs: 20,
      initial: right(decodeNotes(unstorableSection)),
      onError: (failure) => heard.push(failure),
    });
    const b = createNotableFactsTracker({ complete: keeping, store, holder: 'b', leasePollMs: 20 });
    right(a.recordUserMessage('maya', 's1', 'in s1'));
    await a.settled();
    right(await a.endStage('maya', 's1'));
    right(a.recordUserMessage('maya', 's2', 'from a'));
    await a.settled();
    right(b.recordUserMessage('maya', 's2', 'from b'));
    const stored = async (): Promise<string[]> => {
      const records = await store.load('maya', 's2');
      const value = E.isRight(records) ? (records.right.session.value as { facts?: Array<{ fact: string }> }) : {};
      return (value?.facts ?? []).map(({ fact }) => fact).sort();
    };
    // Each message is extracted by whoever holds the lease then, and saved.
    while ((await stored()).length < 2) {
      await Promise.all([a.settled(), b.settled()]);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(await stored()).toEqual(['Said from a', 'Said from b'].sort());
    await Promise.all([a.close(), b.close()]);
    expect((await profileOf(store))?.facts.map(({ fact }) => fact)).toEqual(['Partner is Jordan', 'Said in s1']);
    expect(heard.map(({ code }) => code)).toEqual(['invalid_notes']);
  });

  it('fails in one line, as unavailable, without the password: no server, a wrong URL', async () => {
    const nowhere = postgresNotesStore('postgres://me:hunter2-secret@127.0.0.1:1/db', { retryMs: 0 });
    const unreachable = await nowhere.load('maya', 's1');
    await nowhere.close();
    expect(E.isLeft(unreachable) && unreachable.left).toEqual({
      code: 'unavailable',
      message: expect.stringMatching(
        /^store_unreachable: cannot reach PostgreSQL at postgres:\/\/me@127\.0\.0\.1:1\/db: /u,
      ),
    });
    expect(JSON.stringify(unreachable)).not.toContain('hunter2');
    const wrong = postgresNotesStore('mysql://localhost/db');
    const refused = await wrong.save('maya', { sessions: [] });
    expect(E.isLeft(refused) && refused.left.message).toMatch(/^store_url: /u);
  });

  it('answers a lease call whose connection was killed before the answer as a conflict, its code said once', async () => {
    const url = await databaseUrl();
    // A pool whose clients lose their connection as the lease call is sent.
    const pool = cuttingPool(url, () => (statement) => {
      const name = nameOf(statement);
      return typeof name === 'string' && /\.notes_lease/u.test(name) ? 'before' : undefined;
    });
    const store = postgresNotesStore(pool, { schema: 'killed_lease', retryMs: 0 });
    const leased = await store.leases.lease('maya', 's1', { holder: 'a', ttlMs: 1_000, add: [{ kind: 'message' }] });
    await store.close();
    await pool.end();
    expect(E.isLeft(leased) && leased.left).toEqual({
      code: 'conflict',
      message: expect.stringMatching(
        /^the connection to \S+ ended before the server answered \(.*Connection terminated unexpectedly.*\): the change may have been written/u,
      ),
    });
  });

  it('answers a save whose commit landed but whose answer was lost as saved, and one whose commit never came as a conflict', async () => {
    const url = await databaseUrl();
    /**
     * A pool whose clients lose their connection at the COMMIT of a transaction that wrote a
     * record: after the server committed it, or before it was sent. (On a caller's pool every
     * call of the store is a transaction, which the other COMMITs end.)
     */
    const losing = (committed: boolean): pg.Pool =>
      cuttingPool(url, () => {
        let wrote = false;
        return (statement) => {
          const name = nameOf(statement);
          if (typeof name === 'string' && /\.notes_(insert|update)_/u.test(name)) wrote = true;
          if (statement !== 'COMMIT' || !wrote) return undefined;
          return committed ? 'after' : 'before';
        };
      });
    const value = { facts: [{ category: 'food', fact: 'likes tea' }] };
    const write = { sessions: [{ session: 'chat', value, expected: 0 }], profile: { value, expected: 0 } };
    const landed = losing(true);
    const store = postgresNotesStore(landed, { schema: 'lost_answer', retryMs: 0 });
    expect(await store.save('maya', write)).toEqual(
      E.right({ sessions: [{ session: 'chat', version: 1 }], profile: 1 }),
    );
    await store.close();
    await landed.end();
    const never = losing(false);
    const other = postgresNotesStore(never, { schema: 'lost_answer', retryMs: 0 });
    const lost = await other.save('maya', { sessions: [{ session: 'chat', value: {}, expected: 1 }] });
    expect(E.isLeft(lost) && lost.left).toEqual({
      code: 'conflict',
      message: expect.stringMatching(/^the connection to \S+ ended before the server answered \(/u),
    });
    await other.close();
    await never.end();
    const reader = postgresNotesStore(url, { schema: 'lost_answer' });
    opened.push(reader);
    const loaded = await reader.load('maya', 'chat');
    expect(E.isRight(loaded) && loaded.right.session).toEqual({ value, version: 1 });
  });
});
