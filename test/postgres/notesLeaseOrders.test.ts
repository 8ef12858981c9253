/**
 * The lease state machine by orderings on PostgreSQL: the generated interleavings and invariants
 * of test/notes/leaseOrders.ts, with each app server's tracker on a store of its own (its own
 * pool) over one database, so the leases, their queue and the fences of the saves are the SQL's.
 * The server's clock expires the leases, so time passes for real: the orderings run at the memory
 * store's times (a 400 ms lease, each wait of the harness given up after 20 leases), since a lease
 * must outlast a store call by far (docs/notes.md): at half those times, under a load average of
 * 5, the orderings once ended with an end of stage that had merged one message of four, which its
 * seed did not repeat. 15 runs of about half a second each (60 in memory) keep the file near 10 s. Messages count as told in the order the store queued them. The ordering it
 * found broken is kept as an example first.
 */
import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { CompleteFn } from '../../src/notes/port.js';
import { postgresNotesStore, type PostgresNotesStore } from '../../src/postgres/index.js';
import { behaviour, command, extract, type Fact, LEASE, runOrdering, server as tracker } from '../notes/leaseOrders.js';
import { postgresUnavailable, usePostgres } from './server.js';

const { server } = usePostgres();

/** Stores opened by a test, closed after it. */
const opened: PostgresNotesStore[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()));
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The value of `promise` once it settles, or undefined when `ms` pass first. */
const until = <T>(promise: Promise<T>, ms: number): Promise<T | undefined> =>
  Promise.race([promise, sleep(ms).then(() => undefined)]);

describe.skipIf(postgresUnavailable !== undefined)(
  'two trackers on one PostgreSQL database with leases, by orderings',
  () => {
    it('queues a message recorded while the lease call ran once the holder starts its extraction, not when that ends', async () => {
      // Server a records m0 and m1 at once: m1 waits for the answer of the call that adds m0 and
      // takes the lease. a's model never answers, and a is closed meanwhile; b, where a stage
      // ends, takes the queue over once a's lease has expired, and must find m1 there.
      const url = await server().createDatabase();
      const store = (): PostgresNotesStore => {
        const opening = postgresNotesStore(url, { schema: 'hung' });
        opened.push(opening);
        return opening;
      };
      const prompts: string[] = [];
      const hang: CompleteFn = (prompt) => {
        prompts.push(prompt);
        return new Promise<string>(() => undefined);
      };
      const a = tracker(hang, store(), 'a', 0.5);
      a.recordUserMessage('maya', 's1', 'm0');
      a.recordUserMessage('maya', 's1', 'm1');
      for (let waited = 0; prompts.length === 0 && waited < 5_000; waited += 5) await sleep(5);
      expect(prompts[0]).toMatch(/Latest user message:\nUser: m0\n/u);
      await a.close();
      const b = tracker(async (prompt) => extract(prompt), store(), 'b', 0.5);
      const stage = await until(b.endStage('maya', 's1'), 20 * LEASE);
      expect(stage !== undefined && E.isRight(stage), 'the end of stage at b').toBe(true);
      await b.close();
      const records = await store().load('maya', 's1');
      const facts = E.isRight(records) ? (records.right.session.value as unknown as { facts: Fact[] }).facts : [];
      expect(facts.map((fact) => fact.fact)).toEqual(['Said m0', 'Said m1']);
    });

    it('lose no message, never go back to an older list, say no fact twice and keep the correction told last', async () => {
      const url = await server().createDatabase();
      let runs = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.array(command, { minLength: 1, maxLength: 24 }),
          fc.array(behaviour, { maxLength: 12 }),
          async (commands, plan) => {
            // A schema of its own per run, so each starts from an empty store.
            const schema = `orders_${(runs += 1)}`;
            const store = (): PostgresNotesStore => {
              const opening = postgresNotesStore(url, { schema, maxConnections: 4 });
              opened.push(opening);
              return opening;
            };
            try {
              await runOrdering({ store, pass: sleep, until, scale: 1, order: 'queued' }, commands, plan);
            } finally {
              await Promise.all(opened.splice(0).map((done) => done.close()));
            }
          },
        ),
        // 15 runs a suite (real time: leases expire by the database's clock); about 1,000 were run when it was written.
        { numRuns: 15 },
      );
    });
  },
);
