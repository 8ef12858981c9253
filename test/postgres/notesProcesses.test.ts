/**
 * Two notes trackers of the built library in two processes, on one user of one PostgreSQL
 * database: never two extractions of a (user, session) at once, the messages recorded at either
 * folded into the holder's follow-ups and none lost, each end of stage merged once; and a holder
 * killed in the middle of an extraction hands its queue over once its lease has expired.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as E from 'fp-ts/lib/Either.js';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_SCHEMA, postgresNotesStore } from '../../src/postgres/index.js';
import { bundledFixture } from '../fixtures/bundled.js';
import { postgresUnavailable, usePostgres } from './server.js';

const DIST = fileURLToPath(new URL('../../dist/postgres/index.js', import.meta.url));
const TRACKER = fileURLToPath(new URL('./fixtures/notesTracker.mjs', import.meta.url));
const SESSIONS = ['s1', 's2', 's3'];

const { server } = usePostgres();

/** The tracker processes a test started: any still running after it (a failed test) are stopped. */
const started: ChildProcess[] = [];
afterEach(() => {
  for (const running of started.splice(0)) if (running.exitCode === null && running.signalCode === null) running.kill();
});

interface Plan {
  readonly user: string;
  readonly messages: ReadonlyArray<readonly [string, string, number]>;
  readonly stages: ReadonlyArray<string>;
}

/** What a tracker process printed at its end. */
interface Outcome {
  readonly reports: ReadonlyArray<E.Either<{ message: string }, { sessions: ReadonlyArray<string> }>>;
  readonly merged: ReadonlyArray<string>;
  readonly failures: ReadonlyArray<string>;
}

/** A tracker process named `holder` following `plan` on the database at `url`. */
const trackerProcess = (url: string, holder: string, plan: Plan, env: Record<string, string> = {}) => {
  if (!existsSync(DIST)) throw new Error(`${DIST} is missing: run "npm run build" first (npm test does it)`);
  const running = spawn(process.execPath, [bundledFixture(TRACKER), url, holder, JSON.stringify(plan)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  started.push(running);
  // DEBUG=1 shows what the process says on stderr as it comes (its failures, what it holds when stuck).
  if (process.env['DEBUG'] === '1') running.stderr.pipe(process.stderr);
  let stdout = '';
  let stderr = '';
  running.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  running.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exit = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    running.on('close', (code) => resolve({ code, stdout, stderr })),
  );
  /** Resolves once the process has printed `word`. */
  const saying = (word: string): Promise<void> =>
    new Promise((resolve, reject) => {
      const look = (): void => {
        if (stdout.includes(word)) resolve();
      };
      running.stdout.on('data', look);
      running.on('close', () => reject(new Error(`${holder} ended before it said "${word}": ${stderr}`)));
      look();
    });
  return { process: running, exit, saying };
};

/** The outcome a finished tracker process printed, after checking it ended well. */
const outcomeOf = (exit: { code: number | null; stdout: string; stderr: string }): Outcome => {
  expect({ code: exit.code, stderr: exit.stderr }).toEqual({ code: 0, stderr: '' });
  return JSON.parse(exit.stdout.trim().split('\n').at(-1)!) as Outcome;
};

/** The rows `text` answers on the database at `url`, run on a connection of its own. */
const query = async <Row>(url: string, text: string, values: ReadonlyArray<unknown> = []): Promise<Row[]> => {
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, [...values])).rows as Row[];
  } finally {
    await client.end();
  }
};

/** A fresh database with the probe the tracker processes count their extractions in. */
const freshDatabase = async (): Promise<string> => {
  const url = await server().createDatabase();
  const probe = postgresNotesStore(url);
  // The notes store makes its schema on first use; the probe table is the test's own.
  await probe.load('nobody', 'none');
  await probe.close();
  await query(
    url,
    'CREATE SCHEMA probe; CREATE TABLE probe.running (session text PRIMARY KEY, n integer NOT NULL, most integer NOT NULL, calls integer NOT NULL, last_started timestamptz NOT NULL)',
  );
  return url;
};

/** Per session: the most extractions that ran at once, and how many ran. */
const probed = async (url: string): Promise<Record<string, { most: number; calls: number }>> => {
  const rows = await query<{ session: string; most: number; calls: number }>(
    url,
    'SELECT session, most, calls FROM probe.running ORDER BY session',
  );
  return Object.fromEntries(rows.map(({ session, most, calls }) => [session, { most, calls }]));
};

/** The facts the store holds for `user` in each of `sessions`, and the user's profile. */
const stored = async (url: string, user: string, sessions: ReadonlyArray<string>) => {
  const store = postgresNotesStore(url);
  const facts: Record<string, string[]> = {};
  let profile: { facts: Array<{ fact: string; session?: string }>; sessionCount: number } | undefined;
  for (const session of sessions) {
    const records = await store.load(user, session);
    if (E.isLeft(records)) throw new Error(records.left.message);
    const value = records.right.session.value as { facts: Array<{ fact: string }> } | undefined;
    facts[session] = (value?.facts ?? []).map((fact) => fact.fact).sort();
    profile = records.right.profile.value as typeof profile;
  }
  await store.close();
  return { facts, profile };
};

/** Messages of `holder`: `count` of them, round the sessions, each followed by a pause of 0 to 30 ms. */
const messagesOf = (holder: string, count: number, start: number): Array<readonly [string, string, number]> =>
  Array.from({ length: count }, (_, i) => {
    const session = SESSIONS[(start + i) % SESSIONS.length]!;
    return [session, `${session}-${holder}-${i}`, (i * 7 + start * 13) % 31] as const;
  });

describe.skipIf(postgresUnavailable !== undefined)(
  'two notes trackers in two processes on one user',
  { timeout: 120_000 },
  () => {
    it('never run two extractions of a session at once, lose no message, fold them into follow-ups and merge each end of stage once', async () => {
      const url = await freshDatabase();
      const plans: Record<string, Plan> = {
        a: { user: 'maya', messages: messagesOf('a', 15, 0), stages: ['s1', 's2'] },
        b: { user: 'maya', messages: messagesOf('b', 15, 1), stages: ['s3'] },
      };
      // Leases of 5 s: this test holds the guarantees while every holder keeps its lease (work that
      // outlives its lease may be taken over and done again, the next test's case and a limit that
      // docs/notes.md states); 2 s ran out under a load of 7 on two cores.
      const [a, b] = await Promise.all(
        Object.entries(plans).map(([holder, plan]) =>
          trackerProcess(url, holder, plan, { LEASE_MS: '5000' }).exit.then(outcomeOf),
        ),
      );
      expect([...a!.failures, ...b!.failures]).toEqual([]);

      // Never two extractions of one session at once; fewer extractions than messages: they were folded.
      const runs = await probed(url);
      expect(Object.keys(runs)).toEqual(SESSIONS);
      for (const session of SESSIONS) expect(runs[session]!.most).toBe(1);
      const calls = SESSIONS.reduce((sum, session) => sum + runs[session]!.calls, 0);
      expect(calls).toBeLessThan(30);

      // Every message of both processes is a fact of its session.
      const { facts, profile } = await stored(url, 'maya', SESSIONS);
      for (const session of SESSIONS) {
        const sent = Object.values(plans).flatMap((plan) =>
          plan.messages.filter(([where]) => where === session).map(([, text]) => `Said ${text}`),
        );
        expect(facts[session]).toEqual(sent.sort());
      }

      // Each end of stage answered where it was asked, and merged once, by whichever process held the lease.
      for (const [outcome, plan] of [
        [a!, plans['a']!],
        [b!, plans['b']!],
      ] as const)
        expect(outcome.reports).toEqual(
          plan.stages.map((session) => E.right(expect.objectContaining({ sessions: [session] }))),
        );
      expect([...a!.merged, ...b!.merged].sort()).toEqual(SESSIONS);
      expect(profile?.sessionCount).toBe(3);
      // A session's merge holds at least the messages its process recorded before asking for it.
      for (const [holder, plan] of Object.entries(plans))
        for (const session of plan.stages) {
          const before = plan.messages.filter(([where]) => where === session).map(([, text]) => `Said ${text}`);
          const merged = profile!.facts.filter((fact) => fact.session === session).map((fact) => fact.fact);
          expect({ holder, missing: before.filter((fact) => !merged.includes(fact)) }).toEqual({ holder, missing: [] });
        }
    });

    it('hands the queue of a holder killed in the middle of an extraction to the other once its lease has expired', async () => {
      const url = await freshDatabase();
      const crashed = trackerProcess(
        url,
        'crashed',
        { user: 'maya', messages: [['s1', 's1-crashed-0', 0]], stages: [] },
        { STUCK: '1', LEASE_MS: '1500' },
      );
      await crashed.saying('extracting');
      crashed.process.kill('SIGKILL');
      await crashed.exit;
      // When the lease it left expires, by the database's clock, as the lease call judges it (as
      // text: to the microsecond). Not a time taken here: this process may see "extracting" late.
      const [lease] = await query<{ expires: string }>(
        url,
        `SELECT expires_at::text AS expires FROM ${DEFAULT_SCHEMA}.notes_leases WHERE holder = 'crashed'`,
      );
      expect(lease).toBeDefined();
      const survivor = outcomeOf(
        await trackerProcess(url, 'survivor', { user: 'maya', messages: [['s1', 's1-survivor-0', 0]], stages: ['s1'] })
          .exit,
      );
      expect(survivor.failures).toEqual([]);
      expect(survivor.reports).toEqual([E.right(expect.objectContaining({ sessions: ['s1'] }))]);
      // It waited for the lease: its extraction started once the killed holder's lease had expired.
      expect(
        await query(url, `SELECT last_started >= $1::timestamptz AS waited FROM probe.running WHERE session = 's1'`, [
          lease!.expires,
        ]),
      ).toEqual([{ waited: true }]);
      const { facts, profile } = await stored(url, 'maya', ['s1']);
      expect(facts['s1']).toEqual(['Said s1-crashed-0', 'Said s1-survivor-0']);
      expect(profile?.facts.map((fact) => fact.fact).sort()).toEqual(['Said s1-crashed-0', 'Said s1-survivor-0']);
      // The killed holder's extraction never ended, so the probe still counts it.
      expect((await probed(url))['s1']).toEqual({ most: 2, calls: 2 });
    });
  },
);
