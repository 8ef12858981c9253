/**
 * Storage: what recording an event costs on each session store, on a session of 10 dispatches and
 * on one of 3,000 (the generated history, bench/generate.ts), through `openSession` and through a
 * `fact-tracker mcp --store` server process per session (bench/storageMcp.ts). Each timed round
 * records a dispatch result (`ingestResult` / `ingest_result`, an append) and then a prompt
 * (`compileContext` / `compile_context`, an append that also reads the section back); the eight
 * sessions (two ways in, files and PostgreSQL, two sizes) take their rounds in turn, so all see
 * the same machine. Also timed: a fresh `openSession` of each library session (its snapshot and
 * the lines after it). PostgreSQL is the server at
 * FACT_TRACKER_BENCH_POSTGRES when set, else one started for the run (as the tests start
 * theirs), else the section says why it measured the files alone.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import pg from 'pg';
import { fileSessionStore, openSession, type SessionStore } from '../dist/live/session/index.js';
import { postgresSessionStore } from '../dist/postgres/index.js';
import { postgresUnavailable, startPostgresServer, type TestServer } from '../test/postgres/localServer.js';
import { historyOfDispatches, randomImplementerResult, randomPrompt, seeded } from './generate.js';
import { mcpRecorder, type Recorder } from './storageMcp.js';

const SESSION = 'bench-storage';

/** The figures of one store at one size. */
export interface StorageRow {
  /** The library session in this process, or a server process reached over stdio. */
  readonly via: 'openSession' | 'mcp';
  readonly store: 'files' | 'postgres';
  readonly dispatches: number;
  readonly ingestP50Ms: number;
  readonly ingestP95Ms: number;
  readonly compileP50Ms: number;
  readonly compileP95Ms: number;
  /** Events recorded per second over the timed rounds (two per round). */
  readonly eventsPerSecond: number;
  /** Median milliseconds of a fresh `openSession` (another store handle, as another process would); absent through MCP. */
  readonly openMs?: number;
}

const quantile = (values: ReadonlyArray<number>, q: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
};

/** A session under test, its timings, and for a library session a way to open another handle on its store. */
interface Subject {
  readonly via: 'openSession' | 'mcp';
  readonly store: 'files' | 'postgres';
  readonly dispatches: number;
  readonly recorder: Recorder;
  readonly handle?: () => SessionStore;
  readonly ingest: number[];
  readonly compile: number[];
  readonly opens: number[];
}

const open = async (store: SessionStore) => {
  const opened = await openSession(SESSION, { store });
  if (E.isLeft(opened)) throw new Error(`${opened.left.code}: ${opened.left.message}`);
  return opened.right;
};

/** The library session's calls as a round makes them. */
const sessionRecorder = async (store: SessionStore): Promise<Recorder> => {
  const session = await open(store);
  const checked = (what: string, result: E.Either<{ code: string; message: string }, unknown>) => {
    if (E.isLeft(result)) throw new Error(`${what} failed: ${result.left.code}: ${result.left.message}`);
  };
  return {
    ingest: async (taskId, output) =>
      checked('ingestResult', await session.ingestResult({ role: 'implementer', taskId, output })),
    compile: async (taskId, taskPrompt) =>
      checked('compileContext', await session.compileContext({ taskId, taskPrompt })),
  };
};

/** Writes a history into a store's session `id`, 500 lines an append. */
const load = async (store: SessionStore, id: string, lines: ReadonlyArray<string>): Promise<void> => {
  for (let at = 0; at < lines.length; at += 500) {
    const loaded = await store.append(id, at, lines.slice(at, at + 500));
    if (E.isLeft(loaded)) throw new Error(`${loaded.left.code}: ${loaded.left.message}`);
  }
};

/** Writes a history as session file `id` in a new folder `directory`. */
const writeSessionFile = (directory: string, id: string, lines: ReadonlyArray<string>): void => {
  mkdirSync(directory, { recursive: true });
  writeFileSync(join(directory, `${id}.jsonl`), `${lines.join('\n')}\n`);
};

/** Removes the schemas the run made on a server it was given. */
const dropSchemas = async (url: string, schemas: ReadonlyArray<string>): Promise<void> => {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  try {
    for (const schema of schemas) await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await pool.end();
  }
};

/** Measures every store this machine has at each size, `rounds` timed rounds each. */
export const measureStorage = async (sizes: ReadonlyArray<number>, rounds: number) => {
  const folder = mkdtempSync(join(tmpdir(), 'fact-tracker-storage-'));
  const given = process.env['FACT_TRACKER_BENCH_POSTGRES'];
  const server: TestServer | undefined =
    given === undefined && postgresUnavailable === undefined ? await startPostgresServer() : undefined;
  const url = given ?? server?.url();
  const schema = `bench_${process.pid}`;
  const handles: SessionStore[] = [];
  const handle = (make: () => SessionStore) => () => {
    const store = make();
    handles.push(store);
    return store;
  };
  // The servers run on PostgreSQL's default schema, so their sessions have names of this run.
  const mcpSession = (dispatches: number) => `${SESSION}-${process.pid}-${dispatches}`;
  const servers: Array<{ close: () => Promise<void> }> = [];
  const subject = (via: Subject['via'], store: Subject['store'], dispatches: number, recorder: Recorder) => ({
    via,
    store,
    dispatches,
    recorder,
    ingest: [] as number[],
    compile: [] as number[],
    opens: [] as number[],
  });
  const served = async (store: Subject['store'], dispatches: number, where: string): Promise<Subject> => {
    const recorder = await mcpRecorder(where, mcpSession(dispatches));
    servers.push(recorder);
    return subject('mcp', store, dispatches, recorder);
  };
  try {
    const subjects: Subject[] = [];
    for (const dispatches of sizes) {
      const lines = historyOfDispatches(11, dispatches);
      const directory = join(folder, String(dispatches));
      writeSessionFile(directory, SESSION, lines);
      const files = handle(() => fileSessionStore({ directory }));
      subjects.push({ ...subject('openSession', 'files', dispatches, await sessionRecorder(files())), handle: files });
      const servedDirectory = join(folder, `mcp-${dispatches}`);
      writeSessionFile(servedDirectory, mcpSession(dispatches), lines);
      subjects.push(await served('files', dispatches, servedDirectory));
      if (url === undefined) continue;
      const make = handle(() => postgresSessionStore(url, { schema: `${schema}_${dispatches}` }));
      await load(make(), SESSION, lines);
      subjects.push({ ...subject('openSession', 'postgres', dispatches, await sessionRecorder(make())), handle: make });
      await load(handle(() => postgresSessionStore(url))(), mcpSession(dispatches), lines);
      subjects.push(await served('postgres', dispatches, url));
    }
    const random = seeded(7);
    // One untimed round first: it writes the snapshot a session of that length gets in use.
    for (let round = -1; round < rounds; round += 1)
      for (const [i, subject] of subjects.entries()) {
        const taskId = `storage-${round}-${i}`;
        const started = performance.now();
        await subject.recorder.ingest(taskId, randomImplementerResult(random, taskId));
        const appended = performance.now();
        await subject.recorder.compile(`${taskId}-next`, randomPrompt(random));
        const ended = performance.now();
        if (round < 0) continue;
        subject.ingest.push(appended - started);
        subject.compile.push(ended - appended);
        if (subject.handle !== undefined && round % 10 === 0) {
          const before = performance.now();
          await open(subject.handle());
          subject.opens.push(performance.now() - before);
        }
      }
    const rows: StorageRow[] = subjects.map((subject) => ({
      via: subject.via,
      store: subject.store,
      dispatches: subject.dispatches,
      ingestP50Ms: quantile(subject.ingest, 0.5),
      ingestP95Ms: quantile(subject.ingest, 0.95),
      compileP50Ms: quantile(subject.compile, 0.5),
      compileP95Ms: quantile(subject.compile, 0.95),
      eventsPerSecond: (2 * rounds * 1000) / [...subject.ingest, ...subject.compile].reduce((a, b) => a + b, 0),
      ...(subject.opens.length > 0 ? { openMs: quantile(subject.opens, 0.5) } : {}),
    }));
    return { rounds, rows, ...(url === undefined ? { postgresSkipped: postgresUnavailable ?? 'no server' } : {}) };
  } finally {
    await Promise.all(servers.map((server) => server.close()));
    if (url !== undefined) {
      const cleaner = postgresSessionStore(url);
      for (const dispatches of sizes) await cleaner.delete(mcpSession(dispatches));
      await cleaner.close();
    }
    await Promise.all(handles.map((store) => store.close()));
    if (given !== undefined)
      await dropSchemas(
        given,
        sizes.map((dispatches) => `${schema}_${dispatches}`),
      );
    server?.stop();
    rmSync(folder, { recursive: true, force: true });
  }
};
