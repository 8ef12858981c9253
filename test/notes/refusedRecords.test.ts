/**
 * A save of several records that the store refuses as `invalid_input` (a store of one's own with
 * a content policy) drops only the record it refuses: the records are saved one at a time until
 * the refused one is named, its changes are dropped and its copy read again from the store, and
 * every other record's changes, an end of stage's merge included, are stored.
 */
import * as E from 'fp-ts/lib/Either.js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { memoryNotesStore, type NotesStore, type NotesWrite, storeFailure } from '../../src/notes/store.js';
import { emptyNotesLedger, selectGlobalFacts } from '../../src/notes/ledger.js';
import { replayNotes } from '../../src/notes/events.js';
import { closeUnderFakeTimers, notingTracker } from './noting.js';

/**
 * `memory` refusing, as `invalid_input`, any write `poisoned` finds a poisoned record in, each save
 * held while `hold` is set and listed by the records it writes.
 */
const policed = (memory: NotesStore, poisoned: (write: NotesWrite) => boolean) => {
  const saves: string[] = [];
  let gate: Promise<void> | undefined;
  let open = (): void => {};
  const store: NotesStore = {
    load: (user, session) => memory.load(user, session),
    save: async (user, write) => {
      const refused = poisoned(write);
      saves.push(
        [...write.sessions.map(({ session }) => session), ...(write.profile ? ['profile'] : [])].join('+') +
          (refused ? ' refused' : ''),
      );
      if (gate !== undefined) await gate;
      return refused
        ? E.left(storeFailure('invalid_input', 'the save was refused: a record breaks the policy'))
        : memory.save(user, write);
    },
  };
  return {
    store,
    saves,
    hold: () => {
      gate = new Promise((resolve) => {
        open = resolve;
      });
    },
    release: () => {
      gate = undefined;
      open();
    },
  };
};

const inSessions = (write: NotesWrite): boolean => JSON.stringify(write.sessions).includes('poison');
const inProfile = (write: NotesWrite): boolean => JSON.stringify(write.profile ?? null).includes('poison');

const factsOf = (value: unknown): string[] =>
  ((value as { facts?: Array<{ fact: string }> } | undefined)?.facts ?? []).map(({ fact }) => fact).sort();

const stored = async (store: NotesStore, user: string, session: string) => {
  const records = await store.load(user, session);
  if (E.isLeft(records)) throw new Error(records.left.message);
  return { session: factsOf(records.right.session.value), profile: factsOf(records.right.profile.value) };
};

describe('a save the store refuses in part', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('drops only the refused session: the other sessions and an end of stage batched with it are stored', async () => {
    const memory = memoryNotesStore();
    const policy = policed(memory, inSessions);
    const { tracker, errors } = notingTracker(policy.store, { consolidateWithModel: false });
    tracker.recordUserMessage('maya', 's1', 'first');
    await tracker.settled();
    // A save held: what follows waits, and is written in one save.
    policy.hold();
    tracker.recordUserMessage('maya', 's0', 'held');
    await vi.advanceTimersByTimeAsync(10);
    tracker.recordUserMessage('maya', 's1', 'sister Ana');
    await vi.advanceTimersByTimeAsync(10);
    const stage = tracker.endStage('maya', 's1');
    await vi.advanceTimersByTimeAsync(10);
    tracker.recordUserMessage('maya', 's2', 'poison');
    await vi.advanceTimersByTimeAsync(10);
    policy.release();
    const merged = await stage;
    await tracker.settled();

    expect(policy.saves).toContain('s1+s2+profile refused');
    expect((await stored(memory, 'maya', 's1')).session).toEqual(['Said first', 'Said sister Ana']);
    expect((await stored(memory, 'maya', 's1')).profile).toEqual(['Said first', 'Said sister Ana']);
    expect((await stored(memory, 'maya', 's2')).session).toEqual([]);
    // The merge was stored, and is answered so.
    expect(E.isRight(merged) && merged.right.unconfirmed).toBeUndefined();
    expect(E.isRight(merged) && factsOf(merged.right.profile)).toEqual(['Said first', 'Said sister Ana']);
    expect(errors.map(({ code }) => code)).toEqual(['invalid_input']);
    expect(errors[0]!.message).toContain('1 change it wrote was dropped, of session "s2"');

    // The refused record is not kept: s2's next change is stored, without what was refused.
    tracker.recordUserMessage('maya', 's2', 'brother Ben');
    await tracker.settled();
    expect((await stored(memory, 'maya', 's2')).session).toEqual(['Said brother Ben']);
    expect(errors).toHaveLength(1);
    await closeUnderFakeTimers(tracker);
  });

  it('drops a refused profile alone: the sessions batched with it are stored, the merge answered unconfirmed', async () => {
    const memory = memoryNotesStore();
    const policy = policed(memory, inProfile);
    const { tracker, errors } = notingTracker(policy.store, { consolidateWithModel: false });
    tracker.recordUserMessage('maya', 's1', 'poison');
    await tracker.settled();
    policy.hold();
    tracker.recordUserMessage('maya', 's0', 'held');
    await vi.advanceTimersByTimeAsync(10);
    const stage = tracker.endStage('maya', 's1');
    await vi.advanceTimersByTimeAsync(10);
    tracker.recordUserMessage('maya', 's2', 'hello');
    await vi.advanceTimersByTimeAsync(10);
    policy.release();
    const merged = await stage;
    await tracker.settled();

    expect(policy.saves).toContain('s1+s2+profile refused');
    expect(E.isRight(merged) && merged.right.unconfirmed).toBe(true);
    expect(await stored(memory, 'maya', 's2')).toEqual({ session: ['Said hello'], profile: [] });
    expect((await stored(memory, 'maya', 's1')).session).toEqual(['Said poison']);
    expect(errors.map(({ code }) => code)).toEqual(['invalid_input']);
    expect(errors[0]!.message).toContain('of the profile');
    // Neither the refused profile is kept, nor s1 marked merged: a later end of stage merges it again.
    expect(tracker.contextFor('maya', 's3')).toMatchObject({ right: { profile: '' } });
    await closeUnderFakeTimers(tracker);
  });

  it('reads a refused record the store never held again: none is kept, so its next change is stored', async () => {
    const memory = memoryNotesStore();
    const policy = policed(memory, inSessions);
    const { tracker, errors } = notingTracker(policy.store);
    tracker.recordUserMessage('maya', 's2', 'poison');
    await tracker.settled();
    expect(tracker.contextFor('maya', 's2')).toMatchObject({ right: { session: '' } });
    tracker.recordUserMessage('maya', 's1', 'good');
    tracker.recordUserMessage('maya', 's2', 'sister Ana');
    await tracker.settled();
    expect((await stored(memory, 'maya', 's1')).session).toEqual(['Said good']);
    expect((await stored(memory, 'maya', 's2')).session).toEqual(['Said sister Ana']);
    expect(policy.saves.filter((save) => save.endsWith('refused'))).toEqual(['s2 refused']);
    expect(errors.map(({ code }) => code)).toEqual(['invalid_input']);
    await closeUnderFakeTimers(tracker);
  });
});

describe('a conflict while records are saved one at a time', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /**
   * `policy`'s store over `memory` answering `conflict`, once, to the first save of `record` (the
   * profile or a session) alone after a refused save: another writer saved that record, as it stood, meanwhile.
   */
  const conflictingAlone = (memory: NotesStore, policy: ReturnType<typeof policed>, record: string): NotesStore => {
    let answered = false;
    return {
      load: (user, session) => policy.store.load(user, session),
      save: async (user, write) => {
        const alone = write.sessions.length + (write.profile === undefined ? 0 : 1) === 1;
        const name = write.profile === undefined ? write.sessions[0]?.session : 'profile';
        const isolating = policy.saves.some((save) => save.endsWith('refused'));
        if (!alone || !isolating || answered || name !== record) return policy.store.save(user, write);
        answered = true;
        policy.saves.push(`${record} conflict`);
        const records = await memory.load(user, 's1');
        if (E.isLeft(records)) throw new Error(records.left.message);
        const { value, version } = record === 'profile' ? records.right.profile : records.right.session;
        if (value === undefined) throw new Error(`no ${record} record to save over`);
        const other = await memory.save(
          user,
          record === 'profile'
            ? { sessions: [], profile: { value, expected: version } }
            : { sessions: [{ session: record, value, expected: version }] },
        );
        if (E.isLeft(other)) throw new Error(other.left.message);
        return E.left(storeFailure('conflict', `the ${record} record changed`));
      },
    };
  };

  it.each([
    ['the session saved before its profile', 's1'],
    ['the profile saved after its session', 'profile'],
  ])('counts the merge once in sessionCount when %s meets a conflict', async (_what, record) => {
    const memory = memoryNotesStore();
    const policy = policed(memory, inSessions);
    const { tracker, errors } = notingTracker(conflictingAlone(memory, policy, record), {
      consolidateWithModel: false,
    });
    // A profile in the store, from an earlier session.
    tracker.recordUserMessage('maya', 's9', 'before');
    await tracker.settled();
    await tracker.endStage('maya', 's9');
    tracker.recordUserMessage('maya', 's1', 'first');
    await tracker.settled();
    policy.hold();
    tracker.recordUserMessage('maya', 's0', 'held');
    await vi.advanceTimersByTimeAsync(10);
    tracker.recordUserMessage('maya', 's1', 'sister Ana');
    await vi.advanceTimersByTimeAsync(10);
    const stage = tracker.endStage('maya', 's1');
    await vi.advanceTimersByTimeAsync(10);
    tracker.recordUserMessage('maya', 's2', 'poison');
    await vi.advanceTimersByTimeAsync(10);
    policy.release();
    const merged = await stage;
    await vi.advanceTimersByTimeAsync(10_000);
    await tracker.settled();

    // The records were saved alone, the sessions first; one met a conflict and was saved again.
    expect(policy.saves.slice(4)).toEqual([
      's1+s2+profile refused',
      ...(record === 'profile'
        ? ['s1', 's2 refused', 'profile conflict', 'profile']
        : ['s1 conflict', 's1', 's2 refused', 'profile']),
    ]);
    const records = await memory.load('maya', 's1');
    if (E.isLeft(records)) throw new Error(records.left.message);
    expect((records.right.profile.value as { sessionCount: number }).sessionCount).toBe(2);
    expect((records.right.session.value as { consolidated?: boolean }).consolidated).toBe(true);
    expect(E.isRight(merged) && merged.right.profile?.sessionCount).toBe(2);
    // In memory too: the next end of stage of another session counts it as the third.
    expect(selectGlobalFacts(tracker.getSnapshot(), 'maya')?.sessionCount).toBe(2);
    tracker.recordUserMessage('maya', 's3', 'brother Ben');
    await tracker.settled();
    const next = await tracker.endStage('maya', 's3');
    expect(E.isRight(next) && next.right.profile?.sessionCount).toBe(3);
    expect(errors.map(({ code }) => code)).toEqual(['invalid_input']);
    await closeUnderFakeTimers(tracker);
  });
});

describe('a merge saved one record at a time', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** `promise`'s value, the fake clock stepped 100 ms at a time while it waits (at most a minute). */
  const stepped = async <T>(promise: Promise<T>): Promise<T> => {
    let outcome: { value: T } | undefined;
    void promise.then((value) => {
      outcome = { value };
    });
    for (let step = 0; step < 600 && outcome === undefined; step += 1) await vi.advanceTimersByTimeAsync(100);
    if (outcome === undefined) throw new Error('still waiting after a minute');
    return outcome.value;
  };

  const profileOf = async (memory: NotesStore) => {
    const records = await memory.load('maya', 's1');
    if (E.isLeft(records)) throw new Error(records.left.message);
    const profile = records.right.profile.value as { sessionCount: number; facts: Array<{ fact: string }> };
    return { count: profile.sessionCount, facts: profile.facts.map(({ fact }) => fact).sort() };
  };

  /**
   * A profile in the store from s9; then s0, s1 (merged) and s2 written in one save, which the
   * store refuses for s2's content: the records are saved alone. `mergeS2` merges s2 too before
   * the save. `store` wraps the policy's store.
   */
  const refusedBatch = async (
    memory: NotesStore,
    policy: ReturnType<typeof policed>,
    store: NotesStore,
    mergeS2: boolean,
  ) => {
    const { tracker, errors } = notingTracker(store, { consolidateWithModel: false });
    tracker.recordUserMessage('maya', 's9', 'before');
    await tracker.settled();
    await tracker.endStage('maya', 's9');
    tracker.recordUserMessage('maya', 's1', 'first');
    await tracker.settled();
    policy.hold();
    tracker.recordUserMessage('maya', 's0', 'held');
    await vi.advanceTimersByTimeAsync(10);
    tracker.recordUserMessage('maya', 's1', 'sister Ana');
    await vi.advanceTimersByTimeAsync(10);
    const stage = tracker.endStage('maya', 's1');
    await vi.advanceTimersByTimeAsync(10);
    tracker.recordUserMessage('maya', 's2', 'poison');
    await vi.advanceTimersByTimeAsync(10);
    const second = mergeS2 ? tracker.endStage('maya', 's2') : undefined;
    await vi.advanceTimersByTimeAsync(10);
    policy.release();
    const merged = await stepped(stage);
    const mergedS2 = second === undefined ? undefined : await stepped(second);
    await stepped(tracker.settled());
    return { tracker, merged, mergedS2, errors };
  };

  it('never counts a session twice nor loses its facts when its record, saved alone, fails while another tracker ends the stage', async () => {
    const memory = memoryNotesStore();
    const policy = policed(memory, inSessions);
    const { tracker: other } = notingTracker(memory, { consolidateWithModel: false });
    let failed = false;
    // The first save of s1 alone fails; meanwhile another tracker merges every unmerged session of maya.
    const store: NotesStore = {
      load: (user, session) => policy.store.load(user, session),
      unmergedSessions: (user) => memory.unmergedSessions!(user),
      save: async (user, write) => {
        const isolating = policy.saves.some((save) => save.endsWith('refused'));
        const alone = write.profile === undefined && write.sessions.length === 1 && write.sessions[0]!.session === 's1';
        if (failed || !isolating || !alone) return policy.store.save(user, write);
        failed = true;
        policy.saves.push('s1 unavailable');
        await stepped(other.endStage('maya'));
        return E.left(storeFailure('unavailable', 'the connection dropped'));
      },
    };
    const { tracker, merged } = await refusedBatch(memory, policy, store, false);

    expect(policy.saves).toContain('s1 unavailable');
    // s9, s0 (by the other tracker) and s1 (by both): three sessions, s1's newest facts kept.
    expect(await profileOf(memory)).toEqual({
      count: 3,
      facts: ['Said before', 'Said first', 'Said held', 'Said sister Ana'],
    });
    expect(E.isRight(merged) && merged.right.unconfirmed).toBeUndefined();
    // An end of stage later, by either tracker, counts no session again.
    const again = await stepped(other.endStage('maya'));
    expect(E.isRight(again) && again.right.sessions).toEqual([]);
    expect((await profileOf(memory)).count).toBe(3);
    await closeUnderFakeTimers(tracker);
  });

  it('tries a record saved alone again after it failed, with no further change to save it', async () => {
    const memory = memoryNotesStore();
    const policy = policed(memory, inSessions);
    let failures = 0;
    const store: NotesStore = {
      load: (user, session) => policy.store.load(user, session),
      save: async (user, write) => {
        const isolating = policy.saves.some((save) => save.endsWith('refused'));
        if (!isolating || write.profile === undefined || failures >= 2) return policy.store.save(user, write);
        failures += 1;
        policy.saves.push('profile unavailable');
        return E.left(storeFailure('unavailable', 'the connection dropped'));
      },
    };
    const { tracker, merged, errors } = await refusedBatch(memory, policy, store, false);

    expect(policy.saves.slice(4)).toEqual([
      's1+s2+profile refused',
      's1',
      's2 refused',
      'profile unavailable',
      'profile unavailable',
      'profile',
    ]);
    expect(await profileOf(memory)).toEqual({ count: 2, facts: ['Said before', 'Said first', 'Said sister Ana'] });
    expect(E.isRight(merged) && merged.right.profile?.sessionCount).toBe(2);
    expect(errors.map(({ code }) => code).sort()).toEqual(['invalid_input', 'unavailable', 'unavailable']);
    await closeUnderFakeTimers(tracker);
  });

  it('drops the merge of a refused session from the profile too: its content never reaches the store', async () => {
    const memory = memoryNotesStore();
    const policy = policed(memory, inSessions);
    const { tracker, mergedS2, errors } = await refusedBatch(memory, policy, policy.store, true);
    // The merge of s2 is answered as made in memory only: the store never took it.
    expect(mergedS2).toMatchObject({ _tag: 'Right', right: { sessions: ['s2'], unconfirmed: true } });

    expect(policy.saves).toContain('s2 refused');
    expect(await profileOf(memory)).toEqual({ count: 2, facts: ['Said before', 'Said first', 'Said sister Ana'] });
    expect(tracker.contextFor('maya', 's3')).toMatchObject({
      right: { profile: expect.not.stringContaining('poison') },
    });
    expect(errors.map(({ code }) => code)).toEqual(['invalid_input']);
    // A later end of stage of every session merges s0 and nothing of what was refused.
    const next = await stepped(tracker.endStage('maya'));
    await stepped(tracker.settled());
    expect(E.isRight(next) && next.right.sessions).toEqual(['s0']);
    expect(await profileOf(memory)).toEqual({
      count: 3,
      facts: ['Said before', 'Said first', 'Said held', 'Said sister Ana'],
    });
    await closeUnderFakeTimers(tracker);
  });
});

describe('a refused save in the event log', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** The tracker's events and event log replay to its ledger. */
  const expectReplayed = (tracker: ReturnType<typeof notingTracker>['tracker']): void => {
    expect(replayNotes(tracker.events(), emptyNotesLedger())).toEqual(tracker.getSnapshot());
    const { snapshot, events } = tracker.eventLog();
    expect(replayNotes(events, snapshot)).toEqual(tracker.getSnapshot());
  };

  it('replays to the ledger after a refused save of a session', async () => {
    const policy = policed(memoryNotesStore(), inSessions);
    const { tracker, errors } = notingTracker(policy.store);
    tracker.recordUserMessage('maya', 's2', 'poison');
    await tracker.settled();
    expect(errors.map(({ code }) => code)).toEqual(['invalid_input']);
    expectReplayed(tracker);
    tracker.recordUserMessage('maya', 's2', 'sister Ana');
    await tracker.settled();
    expectReplayed(tracker);
    await closeUnderFakeTimers(tracker);
  });

  it('replays to the ledger after a refused save of a profile', async () => {
    const policy = policed(memoryNotesStore(), inProfile);
    const { tracker, errors } = notingTracker(policy.store, { consolidateWithModel: false });
    tracker.recordUserMessage('maya', 's1', 'poison');
    await tracker.settled();
    const merged = await tracker.endStage('maya', 's1');
    await tracker.settled();
    expect(E.isRight(merged) && merged.right.unconfirmed).toBe(true);
    expect(errors.map(({ code }) => code)).toEqual(['invalid_input']);
    const types = tracker.events().map(({ type }) => type);
    expect(types).toContain('notes/profileRefused');
    expect(types).not.toContain('notes/released');
    expectReplayed(tracker);
    await closeUnderFakeTimers(tracker);
  });
});
