/**
 * The notes tracker's turn, by what it served before: a turn is a user message recorded, its
 * extraction (a model that answers at once) and its save settled, then `contextFor`, on a new
 * session of the user. Measured (1) after 10 and after 10,000 past sessions of one user, each
 * ended (merged into the profile) through the tracker on `memoryNotesStore()`, and on PostgreSQL
 * (the store holding that many sessions of the user: one served through the tracker, the others
 * copies of it, written by SQL; leases on) when a server can be had; (2) over 100,000 users, one
 * turn each, through one tracker with the default cache of 1,000 idle sessions, on a store that
 * keeps nothing (so the heap is the tracker's): the turns of the users 1,001 to 2,000 against
 * those of the last 1,000, and the heap and what the tracker holds after 10,000 and after 100,000.
 */
import * as E from 'fp-ts/lib/Either.js';
import pg from 'pg';
import {
  createNotableFactsTracker,
  memoryNotesStore,
  type NotableFactsTracker,
  type NotesRetained,
  type NotesStore,
} from '../dist/notes/index.js';
import { postgresNotesStore } from '../dist/postgres/index.js';
import { postgresUnavailable, startPostgresServer, type TestServer } from '../test/postgres/localServer.js';

const USER = 'maya';

/** A model that notes the latest message as a fact, at once. */
const complete = async (prompt: string): Promise<string> =>
  JSON.stringify({
    notableFacts: [
      { category: 'History', fact: `Said ${/Latest user message:\nUser: (.*)/u.exec(prompt)?.[1] ?? ''}` },
    ],
  });

/** A store that keeps nothing: every load finds nothing saved, every save succeeds. */
const forgettingStore = (): NotesStore => ({
  load: () => E.right({ session: { version: 0 }, profile: { version: 0 } }),
  save: (_user, write) =>
    E.right({
      sessions: write.sessions.map(({ session, expected }) => ({ session, version: expected + 1 })),
      ...(write.profile === undefined ? {} : { profile: write.profile.expected + 1 }),
    }),
});

const quantile = (values: ReadonlyArray<number>, q: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
};

/** One turn of `user` in `session`: its milliseconds. */
const turn = async (tracker: NotableFactsTracker, user: string, session: string, text: string): Promise<number> => {
  const started = performance.now();
  const recorded = tracker.recordUserMessage(user, session, text);
  await tracker.settled();
  const context = tracker.contextFor(user, session);
  const took = performance.now() - started;
  if (E.isLeft(recorded) || E.isLeft(context)) throw new Error(`a turn failed for ${user} in ${session}`);
  return took;
};

/** A past session of the user: a turn, then its end of stage. */
const pastSession = async (tracker: NotableFactsTracker, session: string): Promise<void> => {
  await turn(tracker, USER, session, `remember ${session}`);
  const ended = await tracker.endStage(USER, session);
  if (E.isLeft(ended)) throw new Error(ended.left.message);
  await tracker.settled();
};

/** The figures of a turn after some past sessions of one user. */
export interface NotesTurnRow {
  readonly store: 'memory' | 'postgres';
  readonly pastSessions: number;
  readonly p50Ms: number;
  readonly p95Ms: number;
}

/** `rounds` timed turns of the user on each tracker, each on a new session, the trackers taking turns (so all see the same machine). */
const timedTurns = async (trackers: ReadonlyArray<NotableFactsTracker>, rounds: number): Promise<number[][]> => {
  const times: number[][] = trackers.map(() => []);
  for (let round = -20; round < rounds; round += 1)
    for (const [i, tracker] of trackers.entries()) {
      const took = await turn(tracker, USER, `now-${round + 20}`, `today ${round}`);
      if (round >= 0) times[i]!.push(took);
    }
  return times;
};

const rowOf = (store: NotesTurnRow['store'], pastSessions: number, times: ReadonlyArray<number>): NotesTurnRow => ({
  store,
  pastSessions,
  p50Ms: quantile(times, 0.5),
  p95Ms: quantile(times, 0.95),
});

/** A tracker on memory that served `past` sessions of one user. */
const memoryTracker = async (past: number): Promise<NotableFactsTracker> => {
  const tracker = createNotableFactsTracker({ complete, store: memoryNotesStore() });
  for (let i = 0; i < past; i += 1) await pastSession(tracker, `past-${i}`);
  return tracker;
};

/** A store on PostgreSQL at `url`, schema `schema`, holding `past` sessions of one user. */
const postgresStore = async (
  url: string,
  schema: string,
  past: number,
): Promise<NotesStore & { close(): Promise<void> }> => {
  const seeding = postgresNotesStore(url, { schema });
  await pastSession(createNotableFactsTracker({ complete, store: seeding }), 'past-0');
  await seeding.close();
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  await pool.query(
    `INSERT INTO ${schema}.notes_sessions (user_id, session_id, value, version)
     SELECT $1, 'past-' || i, (SELECT value FROM ${schema}.notes_sessions WHERE user_id = $1 AND session_id = 'past-0'), 1
     FROM generate_series(1, $2::integer - 1) AS i`,
    [USER, past],
  );
  await pool.end();
  return postgresNotesStore(url, { schema });
};

/** What one tracker serving many users held and cost, at a count of users served. */
export interface NotesUsersPoint {
  readonly users: number;
  /** Turns of the 1,000 users served last before this point. */
  readonly p50Ms: number;
  readonly p95Ms: number;
  /** Heap in use after a full collection (MB). */
  readonly heapMb: number;
  readonly retained: NotesRetained;
}

const heapMb = (): number => {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed / 1024 / 1024;
};

/** One turn each for `users` users through one tracker: the points after 2,000, 10,000 and `users`. */
const usersServed = async (users: number): Promise<NotesUsersPoint[]> => {
  const tracker = createNotableFactsTracker({ complete, store: forgettingStore() });
  const window: number[] = [];
  const points: NotesUsersPoint[] = [];
  const marks = new Set([2_000, 10_000, users]);
  for (let user = 1; user <= users; user += 1) {
    window.push(await turn(tracker, `user-${user}`, 's1', `hello from ${user}`));
    if (window.length > 1_000) window.shift();
    if (marks.has(user))
      points.push({
        users: user,
        p50Ms: quantile(window, 0.5),
        p95Ms: quantile(window, 0.95),
        heapMb: heapMb(),
        retained: tracker.retained(),
      });
  }
  return points;
};

/** The notes tracker's turn after many past sessions and many users; `quick` serves fewer users. */
export const measureNotesTurns = async (quick: boolean) => {
  const rounds = quick ? 50 : 200;
  const sizes = [10, 10_000];
  const rows: NotesTurnRow[] = [];
  const memory = await Promise.all(sizes.map(memoryTracker));
  (await timedTurns(memory, rounds)).forEach((times, i) => rows.push(rowOf('memory', sizes[i]!, times)));
  // Their stores hold every past session: let them go before the heap is measured below.
  memory.splice(0);
  const given = process.env['FACT_TRACKER_BENCH_POSTGRES'];
  const server: TestServer | undefined =
    given === undefined && postgresUnavailable === undefined ? await startPostgresServer() : undefined;
  const url = given ?? server?.url();
  const schema = `bench_notes_${process.pid}`;
  try {
    if (url !== undefined) {
      const stores = await Promise.all(sizes.map((past) => postgresStore(url, `${schema}_${past}`, past)));
      const trackers = stores.map((store) => createNotableFactsTracker({ complete, store }));
      (await timedTurns(trackers, rounds)).forEach((times, i) => rows.push(rowOf('postgres', sizes[i]!, times)));
      await Promise.all(stores.map((store) => store.close()));
    }
  } finally {
    if (given !== undefined) {
      const pool = new pg.Pool({ connectionString: given, max: 1 });
      for (const past of sizes) await pool.query(`DROP SCHEMA IF EXISTS ${schema}_${past} CASCADE`);
      await pool.end();
    }
    server?.stop();
  }
  const users = await usersServed(quick ? 20_000 : 100_000);
  return { rounds, rows, users, ...(url === undefined ? { postgresSkipped: postgresUnavailable ?? 'no server' } : {}) };
};

/** Prints what `measureNotesTurns` found. */
export const printNotesTurns = (found: Awaited<ReturnType<typeof measureNotesTurns>>): void => {
  console.log('');
  console.log(`notes tracker: a turn (message, extraction, save, contextFor), ${found.rounds} rounds, p50 / p95:`);
  for (const row of found.rows)
    console.log(
      `  ${row.store.padEnd(8)} after ${String(row.pastSessions).padStart(6)} past sessions of the user: ${row.p50Ms.toFixed(2)} / ${row.p95Ms.toFixed(2)} ms`,
    );
  for (const store of ['memory', 'postgres'] as const) {
    const [small, large] = [10, 10_000].map((past) =>
      found.rows.find((row) => row.store === store && row.pastSessions === past),
    );
    if (small !== undefined && large !== undefined)
      console.log(`  ${store} ratio 10,000 / 10 past sessions: ${(large.p50Ms / small.p50Ms).toFixed(2)}x`);
  }
  if (found.postgresSkipped !== undefined) console.log(`  postgres: skipped (${found.postgresSkipped})`);
  for (const point of found.users)
    console.log(
      `  after ${String(point.users).padStart(7)} users served: the last 1,000 turns ${point.p50Ms.toFixed(2)} / ${point.p95Ms.toFixed(2)} ms, heap ${point.heapMb.toFixed(1)} MB, holding ${point.retained.sessions} sessions of ${point.retained.users} users (${point.retained.inFlight} in flight)`,
    );
};
