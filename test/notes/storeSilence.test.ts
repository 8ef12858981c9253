/**
 * A store that never answers holds no caller forever: `load` and `settled` are answered
 * `unavailable` once a store call they wait on has had no answer for `timeoutMs` (seen so at two
 * looks `timeoutMs` apart), as `endStage` is answered `unconfirmed`; a load or a list of unmerged
 * sessions is taken as failed then, so the session recovers and an end of stage goes on; a late
 * answer of a load is taken only where it is newer than what the tracker holds.
 */
import * as E from 'fp-ts/lib/Either.js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  memoryNotesStore,
  type NotesRecords,
  type NotesStore,
  type StoreAnswer,
  storeFailure,
} from '../../src/notes/store.js';
import { createNotableFactsTracker } from '../../src/notes/tracker.js';
import { noting } from './noting.js';

const TIMEOUT = 1_000;

/** A promise that never settles: a store call nobody answers. */
const never = <T>(): Promise<T> => new Promise<T>(() => undefined);

/** `promise`, with a way to ask whether it has settled yet. */
const watched = <T>(promise: Promise<T>) => {
  let outcome: { value: T } | undefined;
  void promise.then((value) => {
    outcome = { value };
  });
  return { settled: () => outcome !== undefined, value: () => outcome?.value };
};

/**
 * `memory`, without leases, as a store whose first load is answered only when the test says so (`answerFirst`),
 * the later ones by `later` (default: `memory`); `loads()` counts them.
 */
const firstLoadHeld = (
  memory: ReturnType<typeof memoryNotesStore>,
  later: NotesStore['load'] = (user, session) => memory.load(user, session),
) => {
  let loads = 0;
  let answerFirst: (answer: Awaited<StoreAnswer<NotesRecords>>) => void = () => undefined;
  // Without the memory store's leases: these trackers run without them.
  const store: NotesStore = {
    save: (user, write) => memory.save(user, write),
    unmergedSessions: (user) => memory.unmergedSessions(user),
    load: (user, session) => {
      loads += 1;
      if (loads > 1) return later(user, session);
      return new Promise((resolve) => {
        answerFirst = resolve;
      });
    },
  };
  return {
    store,
    answerFirst: (answer: Awaited<StoreAnswer<NotesRecords>>) => answerFirst(answer),
    loads: () => loads,
  };
};

// Every test here runs on fake timers: the store's silence is measured in timeoutMs, never waited out.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('a store that never answers', () => {
  it('answers load unavailable after timeoutMs, naming the call, and the tracker carries on', async () => {
    const heard: string[] = [];
    const store: NotesStore = { load: () => never(), save: () => never() };
    const tracker = createNotableFactsTracker({
      complete: noting,
      store,
      timeoutMs: TIMEOUT,
      onError: (problem) => heard.push(problem.code),
    });
    const load = watched(tracker.load('maya', 's1'));
    await vi.advanceTimersByTimeAsync(TIMEOUT - 1);
    expect(load.settled()).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(load.settled()).toBe(true);
    const answer = load.value()!;
    expect(E.isLeft(answer) && answer.left.code).toBe('unavailable');
    expect(E.isLeft(answer) && answer.left.message).toContain(
      `the notes store left the load of the notes of "maya" in "s1" unanswered for ${TIMEOUT} ms or more`,
    );
    // Not an empty answer passed off as success, and the tracker still answers from memory.
    expect(tracker.contextFor('maya', 's1')).toEqual(E.right({ profile: '', session: '', text: '', history: [] }));
    // The load is taken as failed, as onError hears.
    expect(heard).toEqual(['unavailable']);
  });

  it('ends settled() unavailable between timeoutMs and twice it when a save is never answered', async () => {
    const memory = memoryNotesStore();
    const store: NotesStore = { load: (user, session) => memory.load(user, session), save: () => never() };
    const tracker = createNotableFactsTracker({ complete: noting, store, timeoutMs: TIMEOUT });
    tracker.recordUserMessage('maya', 's1', 'sister Ana');
    // The extraction runs, then its save is sent and never answered.
    await vi.advanceTimersByTimeAsync(0);
    const settled = watched(tracker.settled());
    await vi.advanceTimersByTimeAsync(TIMEOUT - 1);
    expect(settled.settled()).toBe(false);
    await vi.advanceTimersByTimeAsync(TIMEOUT);
    expect(settled.settled()).toBe(true);
    const answer = settled.value()!;
    expect(E.isLeft(answer) && answer.left.code).toBe('unavailable');
    expect(E.isLeft(answer) && answer.left.message).toContain('a save of the notes of "maya"');
    // The facts were noted in memory all the same.
    expect(tracker.contextFor('maya', 's1')).toMatchObject({ right: { session: expect.stringContaining('Ana') } });
  });

  it('ends settled() unavailable when the save of the extraction running at the call is never answered', async () => {
    const memory = memoryNotesStore();
    const store: NotesStore = { load: (user, session) => memory.load(user, session), save: () => never() };
    const tracker = createNotableFactsTracker({ complete: noting, store, timeoutMs: TIMEOUT });
    tracker.recordUserMessage('maya', 's1', 'sister Ana');
    // Called while the extraction runs: its save is sent after the call, and waited for. The look at
    // the call saw no save yet, so the wait ends at the second look after it: twice timeoutMs.
    const settled = watched(tracker.settled());
    await vi.advanceTimersByTimeAsync(2 * TIMEOUT - 1);
    expect(settled.settled()).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(settled.value()).toMatchObject({ _tag: 'Left', left: { code: 'unavailable' } });
    expect(settled.value()).toMatchObject({
      left: { message: expect.stringContaining('a save of the notes of "maya"') },
    });
  });

  it('takes a load answered after the bound all the same', async () => {
    const memory = memoryNotesStore();
    const seeding = createNotableFactsTracker({ complete: noting, store: memory });
    seeding.recordUserMessage('maya', 's1', 'sister Ana');
    await seeding.settled();
    let answerLoad: (answer: Awaited<StoreAnswer<NotesRecords>>) => void = () => undefined;
    const store: NotesStore = {
      load: () =>
        new Promise((resolve) => {
          answerLoad = resolve;
        }),
      save: (user, write) => memory.save(user, write),
    };
    const tracker = createNotableFactsTracker({ complete: noting, store, timeoutMs: TIMEOUT });
    const load = watched(tracker.load('maya', 's1'));
    const settled = watched(tracker.settled());
    await vi.advanceTimersByTimeAsync(TIMEOUT);
    expect(load.value()).toMatchObject({ _tag: 'Left', left: { code: 'unavailable' } });
    expect(settled.value()).toMatchObject({ _tag: 'Left', left: { code: 'unavailable' } });
    answerLoad(await memory.load('maya', 's1'));
    await vi.advanceTimersByTimeAsync(0);
    expect(tracker.contextFor('maya', 's1')).toMatchObject({ right: { session: expect.stringContaining('Ana') } });
    expect(await tracker.settled()).toEqual(E.right(undefined));
  });

  it('cuts no wait short while the store answers, however slowly within the bound', async () => {
    const memory = memoryNotesStore();
    const slowly =
      <T>(answer: () => T) =>
      (): Promise<T> =>
        new Promise((resolve) => setTimeout(() => resolve(answer()), TIMEOUT / 2));
    const store: NotesStore = {
      load: (user, session) => slowly(() => memory.load(user, session))() as never,
      save: (user, write) => slowly(() => memory.save(user, write))() as never,
    };
    const tracker = createNotableFactsTracker({ complete: noting, store, timeoutMs: TIMEOUT });
    const load = watched(tracker.load('maya', 's1'));
    tracker.recordUserMessage('maya', 's1', 'sister Ana');
    const settled = watched(tracker.settled());
    await vi.advanceTimersByTimeAsync(5 * TIMEOUT);
    expect(load.value()).toEqual(E.right(undefined));
    expect(settled.value()).toEqual(E.right(undefined));
  });

  it('answers settled() closed once close has given up on the store', async () => {
    const heard: string[] = [];
    const store: NotesStore = { load: () => never(), save: () => never() };
    const tracker = createNotableFactsTracker({
      complete: noting,
      store,
      timeoutMs: TIMEOUT,
      onError: (problem) => heard.push(problem.code),
    });
    tracker.recordUserMessage('maya', 's1', 'hello');
    const closing = watched(tracker.close());
    await vi.advanceTimersByTimeAsync(2 * TIMEOUT);
    expect(closing.settled()).toBe(true);
    expect(heard).toContain('closed');
    expect(await tracker.settled()).toMatchObject({ _tag: 'Left', left: { code: 'closed' } });
  });
});

describe('one load the store never answers', () => {
  it('is taken as failed after timeoutMs: the next load asks the store again, and the session recovers', async () => {
    const memory = memoryNotesStore();
    let loads = 0;
    const store: NotesStore = {
      load: (user, session) => {
        loads += 1;
        return loads === 1 ? never() : memory.load(user, session);
      },
      save: (user, write) => memory.save(user, write),
    };
    const tracker = createNotableFactsTracker({ complete: noting, store, timeoutMs: TIMEOUT });
    const first = watched(tracker.load('bob', 's1'));
    await vi.advanceTimersByTimeAsync(TIMEOUT);
    expect(first.value()).toMatchObject({ _tag: 'Left', left: { code: 'unavailable' } });
    const second = watched(tracker.load('bob', 's1'));
    await vi.advanceTimersByTimeAsync(0);
    expect(second.value()).toEqual(E.right(undefined));
    expect(loads).toBe(2);
    tracker.recordUserMessage('bob', 's1', 'sister Ana');
    await vi.advanceTimersByTimeAsync(10);
    expect(tracker.contextFor('bob', 's1')).toMatchObject({ right: { session: expect.stringContaining('Ana') } });
    const records = await memory.load('bob', 's1');
    expect(E.isRight(records) && records.right.session.version).toBe(1);
    const settled = watched(tracker.settled());
    const stage = watched(tracker.endStage('bob', 's1'));
    await vi.advanceTimersByTimeAsync(10);
    expect(settled.value()).toEqual(E.right(undefined));
    expect(stage.value()).toMatchObject({ _tag: 'Right', right: { sessions: ['s1'] } });
  });

  it('takes a late answer of a load given up on only where it is newer than what the tracker saved since', async () => {
    const memory = memoryNotesStore();
    const seeding = createNotableFactsTracker({ complete: noting, store: memory });
    seeding.recordUserMessage('bob', 's1', 'brother Ben');
    await seeding.settled();
    const { store, answerFirst } = firstLoadHeld(memory);
    const tracker = createNotableFactsTracker({ complete: noting, store, timeoutMs: TIMEOUT });
    // The store's answer as it stood when the first load was sent.
    const stale = await memory.load('bob', 's1');
    void tracker.load('bob', 's1');
    await vi.advanceTimersByTimeAsync(TIMEOUT);
    await tracker.load('bob', 's1');
    tracker.recordUserMessage('bob', 's1', 'sister Ana');
    await vi.advanceTimersByTimeAsync(10);
    const saved = await memory.load('bob', 's1');
    expect(E.isRight(saved) && saved.right.session.version).toBe(2);
    answerFirst(stale);
    await vi.advanceTimersByTimeAsync(10);
    expect(tracker.contextFor('bob', 's1')).toMatchObject({
      right: { session: expect.stringContaining('Said sister Ana') },
    });
    tracker.recordUserMessage('bob', 's1', 'cousin Cy');
    await vi.advanceTimersByTimeAsync(10);
    const after = await memory.load('bob', 's1');
    const facts = E.isRight(after) ? (after.right.session.value as { facts: Array<{ fact: string }> }).facts : [];
    expect(facts.map(({ fact }) => fact)).toEqual(['Said brother Ben', 'Said sister Ana', 'Said cousin Cy']);
  });
});

describe('a late answer of a load given up on', () => {
  it('is not taken for a session let go of since: a later load reads the store, and an end of stage merges it', async () => {
    const memory = memoryNotesStore();
    const { store, answerFirst } = firstLoadHeld(memory);
    const tracker = createNotableFactsTracker({ complete: noting, store, timeoutMs: TIMEOUT });
    // The store's answer as it stood when the load was sent: nothing yet.
    const stale = await memory.load('bob', 's1');
    tracker.recordUserMessage('bob', 's1', 'sister Ana');
    // The load is given up on, the extraction saved without it, and the session let go of.
    await vi.advanceTimersByTimeAsync(TIMEOUT + 10);
    const saved = await memory.load('bob', 's1');
    expect(E.isRight(saved) && saved.right.session.version).toBe(1);
    tracker.release('bob', 's1');
    expect(tracker.retained().sessions).toBe(0);
    answerFirst(stale);
    await vi.advanceTimersByTimeAsync(10);
    // The stale answer does not pass for the store's record: the session is read again when asked for.
    expect(await tracker.load('bob', 's1')).toEqual(E.right(undefined));
    expect(tracker.contextFor('bob', 's1')).toMatchObject({
      right: { session: expect.stringContaining('Said sister Ana') },
    });
    tracker.release('bob', 's1');
    const stage = watched(tracker.endStage('bob'));
    await vi.advanceTimersByTimeAsync(10);
    expect(stage.value()).toMatchObject({ _tag: 'Right', right: { sessions: ['s1'] } });
  });

  it('is not taken for a session let go of and whose load failed since: the next load reads the store', async () => {
    const memory = memoryNotesStore();
    let failed = false;
    const { store, answerFirst, loads } = firstLoadHeld(memory, (user, session) => {
      if (failed) return memory.load(user, session);
      failed = true;
      return E.left(storeFailure('unavailable', 'the store is down'));
    });
    const tracker = createNotableFactsTracker({ complete: noting, store, timeoutMs: TIMEOUT });
    const stale = await memory.load('bob', 's1');
    tracker.recordUserMessage('bob', 's1', 'sister Ana');
    await vi.advanceTimersByTimeAsync(TIMEOUT + 10);
    tracker.release('bob', 's1');
    expect(await tracker.load('bob', 's1')).toMatchObject({ _tag: 'Left', left: { code: 'unavailable' } });
    // The first load's answer comes now, older than the record saved since: the session is still unread.
    answerFirst(stale);
    await vi.advanceTimersByTimeAsync(10);
    expect(await tracker.load('bob', 's1')).toEqual(E.right(undefined));
    expect(loads()).toBe(3);
    expect(tracker.contextFor('bob', 's1')).toMatchObject({
      right: { session: expect.stringContaining('Said sister Ana') },
    });
  });

  it('answers no load() waiting for the load running now', async () => {
    const memory = memoryNotesStore();
    let loads = 0;
    let answerFirst: (answer: Awaited<StoreAnswer<NotesRecords>>) => void = () => undefined;
    const store: NotesStore = {
      load: (user, session) => {
        loads += 1;
        if (loads > 1)
          return new Promise((resolve) => setTimeout(() => resolve(memory.load(user, session) as never), TIMEOUT / 2));
        return new Promise((resolve) => {
          answerFirst = resolve;
        });
      },
      save: (user, write) => memory.save(user, write),
    };
    const tracker = createNotableFactsTracker({ complete: noting, store, timeoutMs: TIMEOUT });
    void tracker.load('bob', 's1');
    await vi.advanceTimersByTimeAsync(TIMEOUT);
    const second = watched(tracker.load('bob', 's1'));
    answerFirst(await memory.load('bob', 's1'));
    await vi.advanceTimersByTimeAsync(TIMEOUT / 4);
    expect(second.settled()).toBe(false);
    await vi.advanceTimersByTimeAsync(TIMEOUT / 4);
    expect(second.value()).toEqual(E.right(undefined));
    expect(loads).toBe(2);
  });
});

describe('an end of stage over a store that never answers', () => {
  it('merges the sessions it holds once the list of unmerged sessions has gone unanswered for timeoutMs', async () => {
    const memory = memoryNotesStore();
    const heard: string[] = [];
    const store: NotesStore = {
      load: (user, session) => memory.load(user, session),
      save: (user, write) => memory.save(user, write),
      unmergedSessions: () => never(),
    };
    const tracker = createNotableFactsTracker({
      complete: noting,
      store,
      timeoutMs: TIMEOUT,
      onError: (problem) => heard.push(`${problem.code}: ${problem.message}`),
    });
    tracker.recordUserMessage('maya', 's1', 'sister Ana');
    await vi.advanceTimersByTimeAsync(10);
    const stage = watched(tracker.endStage('maya'));
    await vi.advanceTimersByTimeAsync(TIMEOUT - 1);
    expect(stage.settled()).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(stage.value()).toMatchObject({ _tag: 'Right', right: { sessions: ['s1'] } });
    expect(heard).toEqual([
      expect.stringContaining(
        'unavailable: the notes store left the list of the unmerged sessions of "maya" unanswered for 1000 ms (timeoutMs): taken as failed',
      ),
    ]);
  });

  it.each([
    ['with no message before it', false],
    ['after a message', true],
  ])('is answered %s once the load of its session has gone unanswered for timeoutMs', async (_when, message) => {
    const memory = memoryNotesStore();
    const store: NotesStore = { load: () => never(), save: (user, write) => memory.save(user, write) };
    const tracker = createNotableFactsTracker({ complete: noting, store, timeoutMs: TIMEOUT });
    if (message) tracker.recordUserMessage('maya', 's1', 'sister Ana');
    const stage = watched(tracker.endStage('maya', 's1'));
    await vi.advanceTimersByTimeAsync(TIMEOUT + 10);
    expect(stage.value()).toMatchObject({ _tag: 'Right', right: { sessions: message ? ['s1'] : [] } });
  });
});

describe('an answer that comes after close', () => {
  it('is not taken once close() has resolved: no model or store call follows it', async () => {
    const memory = memoryNotesStore();
    let closed = false;
    const afterClose: string[] = [];
    let saves = 0;
    const store: NotesStore = {
      load: (user, session) => {
        if (closed) afterClose.push(`load ${session}`);
        return memory.load(user, session);
      },
      save: (user, write) => {
        if (closed) afterClose.push('save');
        saves += 1;
        // The first save is answered long after close() gave up on it; the changes made meanwhile wait for it.
        if (saves > 1) return memory.save(user, write);
        return new Promise((resolve) => setTimeout(() => resolve(memory.save(user, write) as never), 5 * TIMEOUT));
      },
    };
    const tracker = createNotableFactsTracker({ complete: noting, store, timeoutMs: TIMEOUT });
    tracker.recordUserMessage('bob', 's1', 'sister Ana');
    await vi.advanceTimersByTimeAsync(10);
    tracker.recordUserMessage('bob', 's2', 'brother Ben');
    await vi.advanceTimersByTimeAsync(10);
    const closing = watched(tracker.close());
    await vi.advanceTimersByTimeAsync(3 * TIMEOUT);
    expect(closing.settled()).toBe(true);
    closed = true;
    await vi.advanceTimersByTimeAsync(10 * TIMEOUT);
    expect(afterClose).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });
});
