/**
 * Saves that meet a conflict: a store that answers conflict every time gets a bounded number of
 * calls, spaced out longer each time, and the changes stay in memory for the next save; and an
 * end of stage whose save met a conflict answers with the profile as the store took it, the
 * other writer's facts included.
 */
import * as E from 'fp-ts/lib/Either.js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { selectSessionFacts } from '../../src/notes/ledger.js';
import { memoryNotesStore, type NotesStore, storeFailure } from '../../src/notes/store.js';
import { createNotableFactsTracker } from '../../src/notes/tracker.js';
import { noting } from './noting.js';
import type { NotesTrackerFailure } from '../../src/notes/trackerTypes.js';

/** The conflicts in a row after which a save is given up for now (`MAX_SAVE_CONFLICTS`). */
const MAX_SAVE_CONFLICTS = 6;

const right = <T>(result: E.Either<NotesTrackerFailure, T>): T => {
  if (E.isLeft(result)) throw new Error(`expected a value, got ${result.left.code}: ${result.left.message}`);
  return result.right;
};

/**
 * A store over `memory` whose saves answer conflict while `conflicting()` holds, counting its
 * calls and the time of each save. Past 1,000 saves it answers unavailable, which ends any loop
 * (so a tracker that calls it without bound fails the counts, rather than hang the test).
 */
const conflictingStore = (
  memory: NotesStore,
  conflicting: () => boolean,
  answers: 'at once' | 'later',
): { store: NotesStore; saves: number[]; loads: () => number } => {
  const saves: number[] = [];
  let loads = 0;
  const later = <T>(value: T): T | Promise<T> => (answers === 'at once' ? value : Promise.resolve(value));
  return {
    saves,
    loads: () => loads,
    store: {
      load: (user, session) => {
        loads += 1;
        return later(memory.load(user, session) as E.Either<never, never>);
      },
      save: (user, write) => {
        saves.push(Date.now());
        if (saves.length > 1_000) return later(E.left(storeFailure('unavailable', 'called without bound')));
        return conflicting()
          ? later(E.left(storeFailure('conflict', 'another writer saved first')))
          : later(memory.save(user, write) as E.Either<never, never>);
      },
    },
  };
};

/** The gaps between consecutive times. */
const gaps = (times: ReadonlyArray<number>): number[] => times.slice(1).map((time, index) => time - times[index]!);

describe('a save that meets a conflict every time', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it.each(['at once', 'later'] as const)(
    'is tried a bounded number of times, backing off, then reported; its changes are saved at the next save (store answering %s)',
    async (answers) => {
      const memory = memoryNotesStore();
      let conflicting = true;
      const { store, saves, loads } = conflictingStore(memory, () => conflicting, answers);
      const heard: NotesTrackerFailure[] = [];
      const tracker = createNotableFactsTracker({ complete: noting, store, onError: (failure) => heard.push(failure) });
      right(tracker.recordUserMessage('maya', 's1', 'one'));
      await vi.advanceTimersByTimeAsync(60_000);
      // The first conflict loads again at once, each later one after 250, 500, 1,000, 2,000 ms.
      expect(saves).toHaveLength(MAX_SAVE_CONFLICTS);
      expect(gaps(saves)).toEqual([0, 250, 500, 1_000, 2_000]);
      expect(loads()).toBe(MAX_SAVE_CONFLICTS);
      expect(heard).toEqual([
        {
          code: 'conflict',
          message: `the save of the notes of "maya" met a conflict ${MAX_SAVE_CONFLICTS} times in a row (another writer keeps saving them): given up for now, its 1 change wait in this tracker's memory for the next save`,
        },
      ]);
      expect(tracker.retained().inFlight).toBe(0);
      // Bounded whatever the time: no call more an hour later.
      await vi.advanceTimersByTimeAsync(3_600_000);
      expect([saves.length, loads()]).toEqual([MAX_SAVE_CONFLICTS, MAX_SAVE_CONFLICTS]);
      expect(selectSessionFacts(tracker.getSnapshot(), 'maya', 's1').map(({ fact }) => fact)).toEqual(['Said one']);
      // The store takes saves again: the next change saves the one kept in memory with it.
      conflicting = false;
      right(tracker.recordUserMessage('maya', 's1', 'two'));
      await vi.advanceTimersByTimeAsync(0);
      await tracker.settled();
      const stored = await memory.load('maya', 's1');
      expect(E.isRight(stored) && stored.right.session).toMatchObject({
        value: { facts: [{ fact: 'Said one' }, { fact: 'Said two' }] },
        version: 1,
      });
      expect(heard).toHaveLength(1);
      await tracker.close();
    },
  );

  it('waits at most a third of timeoutMs between tries, and answers an end of stage given up with the profile merged in memory', async () => {
    const memory = memoryNotesStore();
    let conflicting = false;
    const { store, saves } = conflictingStore(memory, () => conflicting, 'later');
    const heard: string[] = [];
    const tracker = createNotableFactsTracker({
      complete: noting,
      store,
      timeoutMs: 6_000,
      leasePollMs: 1_000,
      onError: (failure) => heard.push(failure.code),
    });
    tracker.recordUserMessage('maya', 's1', 'one');
    await vi.advanceTimersByTimeAsync(0);
    await tracker.settled();
    expect(saves).toHaveLength(1);
    conflicting = true;
    const stage = tracker.endStage('maya', 's1');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(gaps(saves.slice(1))).toEqual([0, 1_000, 2_000, 2_000, 2_000]);
    expect(heard).toEqual(['conflict']);
    // The store never took the merge: the answer comes once the save is given up, from memory.
    const report = right(await stage);
    expect(report.sessions).toEqual(['s1']);
    expect(report.profile?.facts.map(({ fact }) => fact)).toEqual(['Said one']);
    const stored = await memory.load('maya', 's1');
    expect(E.isRight(stored) && stored.right.profile).toEqual({ version: 0 });
    // `close` tries the kept changes again (a bounded attempt of its own), then tells what is lost.
    const closing = tracker.close();
    await vi.advanceTimersByTimeAsync(60_000);
    await closing;
    // One attempt of its own, as bounded and spaced out as the first: then the changes are reported lost.
    expect(saves).toHaveLength(1 + 2 * MAX_SAVE_CONFLICTS);
    expect(gaps(saves.slice(-MAX_SAVE_CONFLICTS))).toEqual([0, 1_000, 2_000, 2_000, 2_000]);
    expect(heard).toEqual(['conflict', 'conflict', 'closed']);
  });
});

describe('an end of stage whose save met a conflict', () => {
  it('answers with the profile as the store took it: the merge applied again to the other writer’s profile', async () => {
    for (const answers of ['at once', 'later'] as const) {
      const memory = memoryNotesStore();
      const { store } = conflictingStore(memory, () => false, answers);
      const a = createNotableFactsTracker({ complete: noting, store });
      const b = createNotableFactsTracker({ complete: noting, store });
      a.recordUserMessage('maya', 's1', 'one');
      b.recordUserMessage('maya', 's2', 'two');
      await Promise.all([a.settled(), b.settled()]);
      // Both read the profile when there was none; a merges first, so b's save meets a conflict.
      const first = right(await a.endStage('maya', 's1'));
      expect(first.profile?.facts.map(({ fact }) => fact)).toEqual(['Said one']);
      const second = right(await b.endStage('maya', 's2'));
      const stored = await memory.load('maya', 's2');
      if (E.isLeft(stored)) throw new Error(stored.left.message);
      expect(stored.right.profile).toMatchObject({
        value: { facts: [{ fact: 'Said one' }, { fact: 'Said two' }], sessionCount: 2 },
        version: 2,
      });
      expect(second.sessions).toEqual(['s2']);
      expect(second.profile?.facts.map(({ fact }) => fact)).toEqual(['Said one', 'Said two']);
      expect(second.profile?.sessionCount).toBe(2);
      await Promise.all([a.close(), b.close()]);
    }
  });
});
