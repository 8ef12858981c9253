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
