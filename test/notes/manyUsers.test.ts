/**
 * A ledger that serves many users: what the tracker holds stays bounded by what is in flight and
 * its cache, and neither a turn nor an idle `settled()` costs more for the sessions and
 * conversations it served before. Costs are counted, never timed: entries a turn copies (the
 * objects and arrays of the machine's state that are new after it, by their entries), records
 * an idle `settled()` lists, sessions and users the tracker still holds.
 */
import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { selectSessions, selectUserIds } from '../../src/notes/ledger.js';
import { initialNotesState, type NotesState } from '../../src/notes/machine.js';
import type { NotesInput } from '../../src/notes/inputs.js';
import { stepMachine } from '../../src/notes/runner.js';
import { memoryNotesStore } from '../../src/notes/store.js';
import { createNotableFactsTracker } from '../../src/notes/tracker.js';
import type { NotableFactsTracker } from '../../src/notes/trackerTypes.js';

const answer = (...facts: string[]): string =>
  JSON.stringify({ notableFacts: facts.map((fact) => ({ category: 'History', fact })) });

/** A model that notes each message it is asked about as a fact. */
const complete = async (prompt: string): Promise<string> =>
  answer(`Said: ${/Latest user message:\nUser: (.*)/u.exec(prompt)?.[1] ?? ''}`);

/** A model that keeps the current facts and adds the latest message's: what it answers depends on nothing else. */
const keepingModel = async (prompt: string): Promise<string> => {
  const current = /Current facts:\n([\s\S]*?)\n\n/u.exec(prompt)?.[1] ?? '';
  // The prompt says "(none yet)" for an empty list: only the lines of facts are JSON.
  const facts = current
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => (JSON.parse(line) as { fact: string }).fact);
  return answer(...facts, `Said ${/Latest user message:\nUser: (.*)/u.exec(prompt)?.[1] ?? ''}`);
};

/** Two trackers on one clock: one that keeps everything, and one with a cache of one on a store of its own. */
const keepingAndReleasing = () => ({
  keeping: createNotableFactsTracker({ complete: keepingModel, now: () => 1_000 }),
  releasing: createNotableFactsTracker({
    complete: keepingModel,
    now: () => 1_000,
    store: memoryNotesStore(),
    cacheSize: 1,
  }),
});

/**
 * The entries of the objects and arrays reachable from `after` that `before` does not share:
 * what a step copied or made. A persistent structure copies a path of small nodes; a record
 * spread copies every entry of the record.
 */
const copiedEntries = (before: unknown, after: unknown): number => {
  const shared = new Set<object>();
  const collect = (value: unknown): void => {
    if (typeof value !== 'object' || value === null || shared.has(value)) return;
    shared.add(value);
    for (const child of Object.values(value)) collect(child);
  };
  collect(before);
  const counted = new Set<object>();
  let entries = 0;
  const count = (value: unknown): void => {
    if (typeof value !== 'object' || value === null || shared.has(value) || counted.has(value)) return;
    counted.add(value);
    const children = Object.values(value);
    entries += children.length;
    for (const child of children) count(child);
  };
  count(after);
  return entries;
};

/** Runs `inputs` through the machine over `store`, as the tracker's runner does. */
const run = (state: NotesState, inputs: ReadonlyArray<NotesInput>, store = memoryNotesStore()): NotesState =>
  inputs.reduce((current, input) => stepMachine(current, input, store, () => undefined).state, state);

/** One turn of `user` in `session` at `at`: a message, and its extraction's answer. */
const turn = (user: string, session: string, at: number): ReadonlyArray<NotesInput> => [
  { type: 'notes/userMessageRecorded', user, session, text: `message ${at}`, at },
  { type: 'notes/extractionSettled', user, session, outcome: E.right(answer(`fact ${at}`)), at: at + 1 },
];

/** A machine that has served `sessions` sessions of one user, each a turn and an end of stage. */
const servedSessions = (sessions: number) => {
  const store = memoryNotesStore();
  let state = initialNotesState();
  for (let i = 0; i < sessions; i += 1)
    state = run(
      state,
      [...turn('maya', `s${i}`, i * 10), { type: 'notes/stageEnded', user: 'maya', session: `s${i}`, at: i * 10 + 2 }],
      store,
    );
  return { state, store };
};

/** The entries one more turn (in a new session) copies, after `sessions` sessions served. */
const turnCost = (sessions: number): number => {
  const { state, store } = servedSessions(sessions);
  const after = run(state, turn('maya', 'new', 1e9), store);
  return copiedEntries(state, after);
};

afterEach(() => {
  vi.restoreAllMocks();
});

describe('a ledger that serves many users', () => {
  it('copies no more for a turn after 500 past sessions of the user than after 10, beyond a persistent path', () => {
    const few = turnCost(10);
    const many = turnCost(500);
    // A record of sessions spread at each step copies every past session: 500 entries and more.
    expect(many).toBeLessThan(few + 300);
  });

  it('holds at most its cache of idle sessions, whatever the number served: 200 sessions through a cache of 50', async () => {
    const tracker = createNotableFactsTracker({ complete, cacheSize: 50 });
    // Four times the cache: each session past the 50th has the tracker let one go, 150 times.
    for (let user = 0; user < 100; user += 1)
      for (const session of ['s1', 's2']) {
        tracker.recordUserMessage(`user ${user}`, session, `hello from ${user} in ${session}`);
        await tracker.settled();
        await tracker.endStage(`user ${user}`, session);
      }
    await tracker.settled();
    const ledger = tracker.getSnapshot();
    expect(selectSessions(ledger).length).toBeLessThanOrEqual(50);
    expect(selectUserIds(ledger).length).toBeLessThanOrEqual(50);
    const retained = tracker.retained();
    expect(retained.sessions).toBeLessThanOrEqual(50);
    expect(retained.users).toBeLessThanOrEqual(50);
  });

  it('keeps every idle session with a cache of Infinity, as asked, instead of the default 1,000', async () => {
    const tracker = createNotableFactsTracker({ complete, cacheSize: Number.POSITIVE_INFINITY });
    for (let user = 0; user < 1_010; user += 1) tracker.recordUserMessage(`user ${user}`, 's1', 'hello');
    await tracker.settled();
    expect(tracker.retained()).toMatchObject({ users: 1_010, sessions: 1_010 });
  });

  it('lets go of a released session once its extraction has settled and saved: nothing held, the store keeps it', async () => {
    const store = memoryNotesStore();
    const tracker = createNotableFactsTracker({ complete, store });
    for (let i = 0; i < 100; i += 1) {
      tracker.recordUserMessage(`user ${i}`, 's1', `message ${i}`);
      // Released while its extraction runs: it goes once that has settled and saved.
      expect(tracker.release(`user ${i}`, 's1')).toEqual(E.right(undefined));
    }
    await tracker.settled();
    expect(selectSessions(tracker.getSnapshot())).toEqual([]);
    expect(selectUserIds(tracker.getSnapshot())).toEqual([]);
    const records = await store.load('user 7', 's1');
    expect(E.isRight(records) && records.right.session.value).toMatchObject({
      facts: [{ category: 'History', fact: 'Said: message 7' }],
    });
    // Served again, it loads what it had.
    tracker.recordUserMessage('user 7', 's1', 'and more');
    expect(E.isRight(tracker.contextFor('user 7', 's1')) && tracker.contextFor('user 7', 's1')).toMatchObject(
      E.right({ session: 'NOTED FACTS FROM THIS SESSION:\n[History]\n- Said: message 7' }),
    );
  });

  it('lists no record of past conversations in an idle settled(): the same work after 1,100 users as after 10', async () => {
    const listed = async (users: number): Promise<number> => {
      const tracker = createNotableFactsTracker({ complete });
      for (let user = 0; user < users; user += 1) tracker.recordUserMessage(`user ${user}`, 's1', 'hello');
      await tracker.settled();
      const spies = [vi.spyOn(Object, 'entries'), vi.spyOn(Object, 'keys'), vi.spyOn(Object, 'values')];
      await tracker.settled();
      const calls = spies.reduce((sum, spy) => sum + spy.mock.calls.length, 0);
      for (const spy of spies) spy.mockRestore();
      return calls;
    };
    const few = await listed(10);
    // Past the default cache of 1,000: a hundred conversations let go of, beside the thousand kept.
    expect(await listed(1_100)).toBe(few);
  });

  it('times a message alike whether the tracker kept the records told before it or let go of them', async () => {
    const { keeping, releasing } = keepingAndReleasing();
    const say = async (tracker: NotableFactsTracker, session: string, text: string): Promise<void> => {
      tracker.recordUserMessage('maya', session, text);
      await tracker.settled();
      await tracker.endStage('maya', session);
    };
    for (const tracker of [keeping, releasing]) {
      await say(tracker, 's1', 'a');
      await say(tracker, 's2', 'x');
    }
    // Let go of everything of Maya's: her next message is recorded before her records are read again.
    releasing.release('maya', 's2');
    await releasing.settled();
    expect(releasing.retained()).toMatchObject({ users: 0, sessions: 0 });
    for (const tracker of [keeping, releasing]) {
      await say(tracker, 's1', 'b');
      await tracker.load('maya', 's3');
    }
    // Told after "x" was merged, though every clock says the same millisecond: last in either profile.
    const profile = 'ABOUT THIS USER (from previous sessions):\n[History]\n- Said a\n- Said x\n- Said b';
    for (const tracker of [keeping, releasing])
      expect(E.map(({ profile: block }: { profile: string }) => block)(tracker.contextFor('maya', 's3'))).toEqual(
        E.right(profile),
      );
  });

  it('changes no fact by releasing: a tracker with a cache of one that releases gives the blocks of one that keeps everything', async () => {
    const slot = { user: fc.constantFrom('maya', 'jordan'), session: fc.constantFrom('s1', 's2', 's3') };
    const command = fc.oneof(
      fc.record({ kind: fc.constant('message' as const), ...slot, text: fc.constantFrom('a', 'b', 'c', 'd') }),
      fc.record({ kind: fc.constant('stage' as const), ...slot }),
      // An end of stage without a session: it merges the sessions let go of too, from the store.
      fc.record({ kind: fc.constant('stageAll' as const), ...slot }),
      fc.record({ kind: fc.constant('release' as const), ...slot }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(command, { maxLength: 25 }), async (commands) => {
        const { keeping, releasing } = keepingAndReleasing();
        for (const [i, { kind, user, session, ...rest }] of commands.entries()) {
          for (const tracker of [keeping, releasing])
            if (kind === 'message' && 'text' in rest) tracker.recordUserMessage(user, session, `${rest.text}${i}`);
            else if (kind === 'stage') await tracker.endStage(user, session);
            else if (kind === 'stageAll') await tracker.endStage(user);
          if (kind === 'release') releasing.release(user, session);
          await Promise.all([keeping.settled(), releasing.settled()]);
          expect(releasing.retained().sessions).toBeLessThanOrEqual(1);
        }
        for (const user of ['maya', 'jordan'])
          for (const session of ['s1', 's2', 's3']) {
            await releasing.load(user, session);
            await keeping.load(user, session);
            // The blocks: the recent messages of a released session are gone with it (the chat backend keeps its messages).
            const blocks = E.map(({ profile, session: current }: { profile: string; session: string }) => [
              profile,
              current,
            ]);
            expect(blocks(releasing.contextFor(user, session))).toEqual(blocks(keeping.contextFor(user, session)));
          }
      }),
      { numRuns: 60 },
    );
  });
});
