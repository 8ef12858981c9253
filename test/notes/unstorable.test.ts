/**
 * What no store can keep never blocks a user's saves: a ledger a tracker starts from is made
 * storable where it enters (and what was left out or repaired is reported), and a save the store
 * refuses as `invalid_input` is reported once and dropped, never tried again, so the user's other
 * changes are saved, and with leases no lease is held on it.
 */
import * as E from 'fp-ts/lib/Either.js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { decodeNotes } from '../../src/notes/persist.js';
import { memoryNotesStore, type NotesStore, type NotesWrite, storeFailure } from '../../src/notes/store.js';
import { createNotableFactsTracker } from '../../src/notes/tracker.js';
import { noting } from './noting.js';
import type { NotesTrackerFailure } from '../../src/notes/trackerTypes.js';
import { unstorableText } from '../../src/postgres/keptText.js';
import { unstorableSection } from './fixtures/unstorableSection.js';

/** `memory` refusing, as `invalid_input`, each save `refuses` names a reason for (as PostgreSQL's adapter does), counting saves. */
const refusing = (
  memory: ReturnType<typeof memoryNotesStore>,
  refuses: (write: NotesWrite) => string | undefined,
): { store: NotesStore; saves: () => number } => {
  let saves = 0;
  const store = {
    ...memory,
    save: (user: string, write: NotesWrite) => {
      saves += 1;
      const reason = refuses(write);
      return reason === undefined
        ? memory.save(user, write)
        : E.left(storeFailure('invalid_input', `the save was refused: ${reason}`));
    },
  } as NotesStore;
  return { store, saves: () => saves };
};

/** What PostgreSQL's JSONB cannot keep, anywhere in the write. */
const unkept = (write: NotesWrite): string | undefined =>
  unstorableText({ sessions: write.sessions, profile: write.profile ?? null });

/** A profile fact text of a write's profile holding "poison". */
const poisonedProfile = (write: NotesWrite): string | undefined =>
  JSON.stringify(write.profile?.value ?? null).includes('poison') ? 'the profile holds poison' : undefined;

const storedFacts = async (store: NotesStore, user: string, session: string): Promise<string[]> => {
  const records = await store.load(user, session);
  const value = E.isRight(records) ? (records.right.session.value as { facts?: Array<{ fact: string }> }) : {};
  return (value?.facts ?? []).map(({ fact }) => fact).sort();
};

const storedProfile = async (store: NotesStore, user: string): Promise<unknown> => {
  const records = await store.load(user, 'any');
  return E.isRight(records) ? records.right.profile.value : undefined;
};

describe('what no store can keep', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('is left out of the ledger a tracker starts from, reported, and every storable fact is saved', async () => {
    const decoded = decodeNotes(unstorableSection);
    if (E.isLeft(decoded)) throw new Error(decoded.left.message);
    const { store } = refusing(memoryNotesStore(), unkept);
    const errors: NotesTrackerFailure[] = [];
    const tracker = createNotableFactsTracker({
      complete: noting,
      store,
      initial: decoded.right,
      onError: (problem) => errors.push(problem),
    });
    tracker.recordUserMessage('maya', 's1', 'first');
    await tracker.settled();
    const stage = await tracker.endStage('maya', 's1');
    expect(E.isRight(stage)).toBe(true);
    tracker.recordUserMessage('maya', 's2', 'second');
    await tracker.settled();
    const closing = tracker.close();
    await vi.runAllTimersAsync();
    await closing;

    const profile = (await storedProfile(store, 'maya')) as { facts: Array<{ fact: string; session?: string }> };
    expect(profile.facts.map(({ fact }) => fact)).toEqual(['Partner is Jordan', 'Said first']);
    expect(profile.facts[0]!.session).toBeUndefined();
    expect(await storedFacts(store, 'maya', 's2')).toEqual(['Said second']);
    expect(errors.map(({ code }) => code)).toEqual(['invalid_notes']);
    expect(errors[0]!.message).toContain('kept without it');
  });

  it('refused by the store is reported once and dropped, never tried again, and the user’s other changes are saved', async () => {
    const { store, saves } = refusing(memoryNotesStore(), (write) =>
      JSON.stringify(write.sessions).includes('poison') ? 'a record holds poison' : undefined,
    );
    const errors: NotesTrackerFailure[] = [];
    const tracker = createNotableFactsTracker({
      complete: noting,
      store,
      onError: (problem) => errors.push(problem),
    });
    tracker.recordUserMessage('maya', 's1', 'poison');
    await tracker.settled();
    tracker.recordUserMessage('maya', 's2', 'hello');
    await tracker.settled();
    expect(await storedFacts(store, 'maya', 's2')).toEqual(['Said hello']);
    const before = saves();
    const closing = tracker.close();
    await vi.runAllTimersAsync();
    await closing;
    // close tries nothing again: the same save would be refused again.
    expect(saves()).toBe(before);
    expect(errors.map(({ code }) => code)).toEqual(['invalid_input']);
    expect(errors[0]!.message).toContain('dropped, of session "s1"');
  });

  it('with leases, a refused save holds no lease: the changes of the session made at both trackers are saved', async () => {
    const memory = memoryNotesStore();
    const { store } = refusing(memory, poisonedProfile);
    const errors: NotesTrackerFailure[] = [];
    const a = createNotableFactsTracker({
      complete: noting,
      store,
      holder: 'a',
      onError: (problem) => errors.push(problem),
    });
    const b = createNotableFactsTracker({ complete: noting, store: memory, holder: 'b' });
    a.recordUserMessage('maya', 's1', 'poison');
    await a.settled();
    // The merge's save writes the profile, which the store refuses.
    expect(E.isRight(await a.endStage('maya', 's1'))).toBe(true);
    a.recordUserMessage('maya', 's2', 'from a');
    await a.settled();
    b.recordUserMessage('maya', 's2', 'from b');
    for (let step = 0; step < 200; step += 1) {
      if ((await storedFacts(memory, 'maya', 's2')).length === 2) break;
      await vi.advanceTimersByTimeAsync(100);
    }
    expect(await storedFacts(memory, 'maya', 's2')).toEqual(['Said from a', 'Said from b']);
    const closing = Promise.all([a.close(), b.close()]);
    await vi.runAllTimersAsync();
    await closing;
    expect(errors.filter(({ code }) => code === 'invalid_input')).toHaveLength(1);
  });
});
