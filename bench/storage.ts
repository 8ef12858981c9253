/**
 * Storage: what recording an event costs through `openSession` on each session store, on a
 * session of 10 dispatches and on one of 3,000 (the generated history, bench/generate.ts). Each
 * timed round records a dispatch result (`ingestResult`, an append) and then a prompt
 * (`compileContext`, an append that also reads the section back); the four sessions (files and
 * PostgreSQL, two sizes) take their rounds in turn, so all see the same machine. Also timed: a
 * fresh `openSession` of each (its snapshot and the lines after it). PostgreSQL is the server at
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

const SESSION = 'bench-storage';

/** The figures of one store at one size. */
export interface StorageRow {
  readonly store: 'files' | 'postgres';
  readonly dispatches: number;
  readonly ingestP50Ms: number;
  readonly ingestP95Ms: number;
  readonly compileP50Ms: number;
  readonly compileP95Ms: number;
  /** Events recorded per second over the timed rounds (two per round). */
  readonly eventsPerSecond: number;
  /** Median milliseconds of a fresh `openSession` (another store handle, as another process would). */
  readonly openMs: number;
}

const quantile = (values: ReadonlyArray<number>, q: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
};

/** A session under test: a way to open another handle on its store, and the open session. */
interface Subject {
  readonly store: 'files' | 'postgres';
  readonly dispatches: number;
  readonly handle: () => SessionStore;
  readonly ingest: number[];
  readonly compile: number[];
  readonly opens: number[];
}

const open = async (store: SessionStore) => {
  const opened = await openSession(SESSION, { store });
  if (E.isLeft(opened)) throw new Error(`${opened.left.code}: ${opened.left.message}`);
  return opened.right;
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
  try {
    const subjects: Subject[] = [];
    for (const dispatches of sizes) {
      const lines = historyOfDispatches(11, dispatches);
      const directory = join(folder, String(dispatches));
      mkdirSync(directory, { recursive: true });
      writeFileSync(join(directory, `${SESSION}.jsonl`), `${lines.join('\n')}\n`);
      subjects.push({
        store: 'files',
        dispatches,
        handle: handle(() => fileSessionStore({ directory })),
        ingest: [],
        compile: [],
        opens: [],
      });
      if (url === undefined) continue;
      const make = handle(() => postgresSessionStore(url, { schema: `${schema}_${dispatches}` }));
      const loader = make();
      for (let at = 0; at < lines.length; at += 500) {
        const loaded = await loader.append(SESSION, at, lines.slice(at, at + 500));
        if (E.isLeft(loaded)) throw new Error(`${loaded.left.code}: ${loaded.left.message}`);
      }
      subjects.push({ store: 'postgres', dispatches, handle: make, ingest: [], compile: [], opens: [] });
    }
    const sessions = await Promise.all(subjects.map((subject) => open(subject.handle())));
    const random = seeded(7);
    // One untimed round first: it writes the snapshot a session of that length gets in use.
    for (let round = -1; round < rounds; round += 1)
      for (const [i, subject] of subjects.entries()) {
        const session = sessions[i]!;
        const taskId = `storage-${round}-${i}`;
        const started = performance.now();
        const ingested = await session.ingestResult({
          role: 'implementer',
          taskId,
          output: randomImplementerResult(random, taskId),
        });
        const appended = performance.now();
        const compiled = await session.compileContext({ taskId: `${taskId}-next`, taskPrompt: randomPrompt(random) });
        const ended = performance.now();
        if (E.isLeft(ingested) || E.isLeft(compiled)) throw new Error(`recording failed on ${subject.store}`);
        if (round < 0) continue;
        subject.ingest.push(appended - started);
        subject.compile.push(ended - appended);
        if (round % 10 === 0) {
          const before = performance.now();
          await open(subject.handle());
          subject.opens.push(performance.now() - before);
        }
      }
    const rows: StorageRow[] = subjects.map((subject) => ({
      store: subject.store,
      dispatches: subject.dispatches,
      ingestP50Ms: quantile(subject.ingest, 0.5),
      ingestP95Ms: quantile(subject.ingest, 0.95),
      compileP50Ms: quantile(subject.compile, 0.5),
      compileP95Ms: quantile(subject.compile, 0.95),
      eventsPerSecond: (2 * rounds * 1000) / [...subject.ingest, ...subject.compile].reduce((a, b) => a + b, 0),
      openMs: quantile(subject.opens, 0.5),
    }));
    return { rounds, rows, ...(url === undefined ? { postgresSkipped: postgresUnavailable ?? 'no server' } : {}) };
  } finally {
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
