/**
 * The memory notes store passes the conformance suite, answering at once; so does the same store
 * answering every call with a promise, as a database adapter would. Its leases pass the lease
 * conformance suite, by a clock the test moves.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { NotesLeases } from '../../src/notes/leases.js';
import { memoryNotesStore, type NotesStore } from '../../src/notes/store.js';
import { describeNotesLeaseConformance } from './leaseConformance.js';
import { answeringLater, describeNotesStoreConformance } from './storeConformance.js';

describeNotesStoreConformance('memoryNotesStore', () => memoryNotesStore());
describeNotesStoreConformance('memoryNotesStore answering with promises', () => answeringLater(memoryNotesStore()));

const clocks = new WeakMap<NotesStore, { now: number }>();
describeNotesLeaseConformance(
  'memoryNotesStore',
  () => {
    const clock = { now: 1_000_000 };
    const store = memoryNotesStore({ now: () => clock.now });
    clocks.set(store, clock);
    return store;
  },
  async (store, ttlMs) => {
    clocks.get(store)!.now += ttlMs;
  },
);

describe('the memory store type', () => {
  it('says it has leases, as it always does: no check of `leases` before a call', () => {
    expectTypeOf(memoryNotesStore().leases).toEqualTypeOf<NotesLeases>();
    expect(typeof memoryNotesStore().leases.lease).toBe('function');
  });

  it('takes null options as none, as a JavaScript caller may pass them', () => {
    const store = memoryNotesStore(null as never);
    expect(store.load('maya', 's1')).toEqual({
      _tag: 'Right',
      right: { session: { version: 0 }, profile: { version: 0 } },
    });
  });
});

describe('the memory store refusing a save it cannot carry out', () => {
  const failureOf = (answer: unknown): { code: string; message: string } => {
    const either = answer as { _tag: string; left?: { code: string; message: string } };
    expect(either._tag).toBe('Left');
    return either.left!;
  };

  it('answers a value no store could keep as JSON (a cycle, a BigInt, none at all) as bad input (invalid_input), never throwing, and writes nothing', () => {
    const store = memoryNotesStore();
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    const values: unknown[] = [cyclic, { count: 1n }, undefined, () => undefined];
    for (const value of values) {
      // The first record would do: the save is all or nothing.
      const write = {
        sessions: [
          { session: 's1', value: { facts: [] }, expected: 0 },
          { session: 's2', value, expected: 0 },
        ],
      } as never;
      let answer: unknown;
      expect(() => (answer = store.save('maya', write))).not.toThrow();
      const failure = failureOf(answer);
      expect(failure.code).toBe('invalid_input');
      expect(failure.message).toContain('the record of "maya" in "s2" is no JSON value a store can keep');
    }
    const profile = failureOf(
      store.save('maya', { sessions: [], profile: { value: { n: 2n } as never, expected: 0 } }),
    );
    expect(profile.message).toContain('the profile of "maya" is no JSON value a store can keep');
    expect(store.load('maya', 's1')).toEqual({
      _tag: 'Right',
      right: { session: { version: 0 }, profile: { version: 0 } },
    });
  });

  it('refuses a value no store could keep as bad input whatever versions the write names: trying it again cannot help, so it is never answered conflict', () => {
    const store = memoryNotesStore();
    store.save('maya', { sessions: [{ session: 's1', value: { facts: [] }, expected: 0 }] });
    const writes = [
      // At a version the store no longer holds.
      { sessions: [{ session: 's1', value: { count: 1n }, expected: 0 }] },
      // Naming a session twice.
      {
        sessions: [
          { session: 's2', value: { facts: [] }, expected: 0 },
          { session: 's2', value: { count: 1n }, expected: 0 },
        ],
      },
    ] as never[];
    for (const write of writes) {
      const failure = failureOf(store.save('maya', write));
      expect(failure.code).toBe('invalid_input');
      expect(failure.message).toContain('is no JSON value a store can keep');
    }
  });

  it('answers a write that is none (null, no list of sessions, a hole, a getter that throws) as bad input (invalid_input), never throwing', () => {
    const store = memoryNotesStore();
    for (const write of [
      null,
      undefined,
      5,
      {},
      { sessions: 'x' },
      { sessions: [null] },
      { sessions: [], fences: 1 },
      // A hole among the sessions, and a write whose reading throws.
      { sessions: [, { session: 's', value: 1, expected: 0 }] },
      {
        get sessions() {
          throw new Error('getter');
        },
      },
      new Proxy(
        {},
        {
          ownKeys: () => {
            throw new Error('trap');
          },
        },
      ),
    ]) {
      let answer: unknown;
      expect(() => (answer = store.save('maya', write as never))).not.toThrow();
      expect(failureOf(answer).code).toBe('invalid_input');
      expect(failureOf(answer).message).toMatch(/^the save was refused: /u);
    }
  });

  it('answers a save naming one session twice as a conflict, writing neither', () => {
    const store = memoryNotesStore();
    const answer = store.save('maya', {
      sessions: [
        { session: 'd', value: { a: 1 }, expected: 0 },
        { session: 'd', value: { a: 2 }, expected: 0 },
      ],
    });
    expect(failureOf(answer)).toEqual({
      code: 'conflict',
      message:
        'the save writes the record of "maya" in "d" twice: its second write meets the record the first would leave',
    });
    expect(store.load('maya', 'd')).toEqual({
      _tag: 'Right',
      right: { session: { version: 0 }, profile: { version: 0 } },
    });
  });
});
