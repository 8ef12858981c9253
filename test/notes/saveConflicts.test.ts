/**
 * Saves that meet a conflict: a store that answers conflict every time gets a bounded number of
 * calls, spaced out longer each time, and the changes stay in memory for the next save; an
 * end of stage whose save met a conflict answers with the profile as the store took it, the
 * other writer's facts included; and a merge applied again after messages were extracted since
 * its end of stage keeps the stored profile and the session's merged mark in step.
 */
import * as E from 'fp-ts/lib/Either.js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { replayNotes } from '../../src/notes/events.js';
import { emptyNotesLedger, selectSessionFacts } from '../../src/notes/ledger.js';
import type { CompleteFn } from '../../src/notes/port.js';
import { memoryNotesStore, type NotesStore, storeFailure } from '../../src/notes/store.js';
import { createNotableFactsTracker } from '../../src/notes/tracker.js';
import { COLOR, duplicates, extract } from './leaseOrders.js';
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

/**
 * A store over `memory` whose saves, while held, are made only once let go (so a save another
 * writer got in before meets it as a conflict) and answered then.
 */
const heldSaves = (memory: NotesStore): { store: NotesStore; hold: () => void; letGo: () => void } => {
  let holding = false;
  const held: Array<() => void> = [];
  return {
    hold: () => {
      holding = true;
    },
    letGo: () => {
      holding = false;
      for (const go of held.splice(0)) go();
    },
    store: {
      load: (user, session) => memory.load(user, session),
      save: (user, write) =>
        holding
          ? new Promise((resolve) => held.push(() => resolve(memory.save(user, write))))
          : memory.save(user, write),
      unmergedSessions: (user) => memory.unmergedSessions!(user),
    },
  };
};

interface StoredNotes {
  readonly facts: ReadonlyArray<{ readonly fact: string; readonly session?: string }>;
  readonly consolidated?: boolean;
}

/** The records of maya's sessions s1 and s2 and her profile, as `memory` holds them. */
const storedNotes = async (
  memory: NotesStore,
): Promise<{ sessions: Record<'s1' | 's2', StoredNotes | undefined>; profile: StoredNotes | undefined }> => {
  const [s1, s2] = await Promise.all([memory.load('maya', 's1'), memory.load('maya', 's2')]);
  if (E.isLeft(s1) || E.isLeft(s2)) throw new Error('the memory store failed a load');
  return {
    sessions: {
      s1: s1.right.session.value as StoredNotes | undefined,
      s2: s2.right.session.value as StoredNotes | undefined,
    },
    profile: s1.right.profile.value as StoredNotes | undefined,
  };
};

/**
 * What the store holds out of step: a fact twice in the profile, a session marked merged whose
 * facts the profile lacks or whose profile facts its list no longer holds, a message its list
 * lost, or a color other than the one told last.
 */
const outOfStep = async (memory: NotesStore, told: Record<'s1' | 's2', ReadonlyArray<string>>): Promise<string[]> => {
  const { sessions, profile } = await storedNotes(memory);
  const inProfile = profile?.facts ?? [];
  const problems = duplicates(inProfile.map(({ fact }) => fact)).map((fact) => `the profile holds ${fact} twice`);
  for (const session of ['s1', 's2'] as const) {
    const facts = (sessions[session]?.facts ?? []).map(({ fact }) => fact);
    const own = inProfile.filter((fact) => fact.session === session).map(({ fact }) => fact);
    if (sessions[session]?.consolidated === true) {
      problems.push(
        ...facts.filter((fact) => !own.includes(fact)).map((fact) => `${session} merged, the profile lacks ${fact}`),
      );
      problems.push(
        ...own.filter((fact) => !facts.includes(fact)).map((fact) => `${session} merged, its list lacks ${fact}`),
      );
    }
    const said = told[session].filter((text) => !text.startsWith('color '));
    problems.push(...said.filter((text) => !facts.includes(`Said ${text}`)).map((text) => `${session} lost ${text}`));
    const color = told[session].filter((text) => text.startsWith('color ')).at(-1);
    const colors = facts.filter((fact) => COLOR.test(fact));
    if (color !== undefined && colors.join() !== `Favorite color is ${color.slice(6)}`)
      problems.push(`${session} holds the colors ${colors.join()}, not the one told last (${color})`);
  }
  return problems;
};

describe('a merge applied again after a conflict, its session extracted since the end of stage', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const complete: CompleteFn = async (prompt) =>
    prompt.includes('Latest user message:') ? extract(prompt) : JSON.stringify({ notableFacts: [] });

  it.each([
    {
      other: 'merges its own session',
      session: 's2' as const,
      // Applied again over the tracker's own list, the merge takes in what was extracted since, marked merged with it.
      answered: ['Said m1', 'Said m3', 'Favorite color is c4', 'Said m5'],
      merged: true,
    },
    {
      other: 'merges every session, the first among them',
      session: undefined,
      // Applied again over the other writer's record of s1, the merge is of that list, and what was extracted since is not merged yet.
      answered: ['Said m1', 'Favorite color is c2', 'Said m3'],
      merged: false,
    },
  ])(
    'keeps the profile and the merged mark in step, and the correction told last, when the other writer $other',
    async ({ session, answered, merged }) => {
      const memory = memoryNotesStore();
      const { store, hold, letGo } = heldSaves(memory);
      const a = createNotableFactsTracker({ complete, store });
      const b = createNotableFactsTracker({ complete, store: memory });
      const told = { s1: ['m1', 'color c2', 'color c4', 'm5'], s2: ['m3'] };
      a.recordUserMessage('maya', 's1', 'm1');
      await vi.advanceTimersByTimeAsync(5);
      a.recordUserMessage('maya', 's1', 'color c2');
      b.recordUserMessage('maya', 's2', 'm3');
      await vi.advanceTimersByTimeAsync(5);
      right(await a.settled());
      right(await b.settled());
      // The merge's save reaches the store only after the other writer's, and meets it as a conflict.
      hold();
      const stage = a.endStage('maya', 's1');
      await vi.advanceTimersByTimeAsync(5);
      // Told after the end of stage, extracted while its save waits: a correction and a new fact.
      a.recordUserMessage('maya', 's1', 'color c4');
      await vi.advanceTimersByTimeAsync(5);
      a.recordUserMessage('maya', 's1', 'm5');
      await vi.advanceTimersByTimeAsync(5);
      expect(selectSessionFacts(a.getSnapshot(), 'maya', 's1').map(({ fact }) => fact)).toEqual([
        'Said m1',
        'Favorite color is c4',
        'Said m5',
      ]);
      right(await b.endStage('maya', session));
      letGo();
      await vi.advanceTimersByTimeAsync(5);
      const report = right(await stage);
      expect(report.sessions).toEqual(['s1']);
      expect(report.profile?.facts.map(({ fact }) => fact)).toEqual(answered);
      right(await a.settled());
      expect(await outOfStep(memory, told)).toEqual([]);
      const { sessions, profile } = await storedNotes(memory);
      expect(sessions.s1?.consolidated).toBe(merged);
      expect(profile?.facts.map(({ fact }) => fact)).toEqual(answered);
      // The next end of stage merges what is left, once: every message, the color told last.
      right(await a.endStage('maya'));
      right(await a.settled());
      expect(await outOfStep(memory, told)).toEqual([]);
      const last = await storedNotes(memory);
      expect(last.sessions.s1?.consolidated).toBe(true);
      expect(last.profile?.facts.map(({ fact }) => fact)).toEqual([
        'Said m1',
        'Said m3',
        'Favorite color is c4',
        'Said m5',
      ]);
      expect(replayNotes(a.events(), emptyNotesLedger())).toEqual(a.getSnapshot());
      await Promise.all([a.close(), b.close()]);
    },
  );
});
