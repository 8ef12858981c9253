/**
 * Trackers on one memory store whose clocks disagree (`clockSkew.ts`), with the store's leases
 * and without: a user's later correction replaces the fact it corrects whichever clock stamped it.
 */
import { describe, it } from 'vitest';
import { memoryNotesStore, type NotesStore } from '../../src/notes/store.js';
import { expectCorrectionSupersedes } from './clockSkew.js';

/** The memory store without its leases: a store of one's own that offers none. */
const withoutLeases = (store: NotesStore): NotesStore => ({
  load: (user, session) => store.load(user, session),
  save: (user, write) => store.save(user, write),
  unmergedSessions: (user) => store.unmergedSessions!(user),
});

describe('trackers whose clocks disagree, on one store', () => {
  it('let a correction told through the one behind replace the fact the other merged, with leases', async () => {
    const store = memoryNotesStore();
    await expectCorrectionSupersedes(store, store);
  });

  it('let a correction told through the one behind replace the fact the other merged, without leases', async () => {
    const store = withoutLeases(memoryNotesStore());
    await expectCorrectionSupersedes(store, store);
  });
});
