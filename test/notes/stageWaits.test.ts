/**
 * How long an end of stage waits for the save of its merge, and what it answers: a store that
 * takes the save and never answers holds it for `timeoutMs` at most (then the profile merged in
 * memory, marked `unconfirmed`), and `close` says the outcome of a save it sent and never heard
 * back from is unknown; a second end of stage with nothing to merge waits for the save of the
 * first; and past the bound of unsaved changes, a merge is still saved once the store takes
 * saves again.
 */
import * as E from 'fp-ts/lib/Either.js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { CompleteFn } from '../../src/notes/port.js';
import { memoryNotesStore, type NotesStore, type NotesWrite, storeFailure } from '../../src/notes/store.js';
import { createNotableFactsTracker } from '../../src/notes/tracker.js';
import type { NotesTrackerFailure, StageReport } from '../../src/notes/trackerTypes.js';

/** A model that notes the latest user message as the one fact of the session. */
const noting: CompleteFn = async (prompt) => {
  const latest = /Latest user message:\nUser: (.*)/u.exec(prompt)?.[1] ?? '';
  return JSON.stringify({ notableFacts: [{ category: 'History', fact: `Said ${latest}` }] });
};

const right = <T>(result: E.Either<NotesTrackerFailure, T>): T => {
  if (E.isLeft(result)) throw new Error(`expected a value, got ${result.left.code}: ${result.left.message}`);
  return result.right;
};

const profileFacts = (report: StageReport): string[] => (report.profile?.facts ?? []).map(({ fact }) => fact);

const storedProfileFacts = (memory: ReturnType<typeof memoryNotesStore>): string[] | null => {
  const records = memory.load('maya', 'any') as E.Either<unknown, { profile: { value?: unknown } }>;
  if (E.isLeft(records)) return null;
  const value = records.right.profile.value as { facts?: Array<{ fact: string }> } | undefined;
  return value?.facts?.map(({ fact }) => fact) ?? null;
};

/**
 * A tracker over a store on a fresh memory store whose saves are written at once and answered as
 * `answer` says (the store's answer, at once, where it says nothing), and what `onError` heard.
 */
const overSaves = (
  timeoutMs: number,
  answer: (written: ReturnType<NotesStore['save']>) => ReturnType<NotesStore['save']> | undefined,
) => {
  const memory = memoryNotesStore();
  const store: NotesStore = {
    load: (user, session) => memory.load(user, session),
    save: (user, write) => {
      const written = memory.save(user, write);
      return answer(written) ?? written;
    },
    unmergedSessions: (user) => memory.unmergedSessions(user),
  };
  const heard: string[] = [];
  const tracker = createNotableFactsTracker({
    complete: noting,
    store,
    timeoutMs,
    onError: (failure) => heard.push(`${failure.code}: ${failure.message}`),
  });
  return { memory, tracker, heard };
};

describe('an end of stage', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('whose save the store takes and never answers is answered once the save has waited timeoutMs, unconfirmed, and close says the outcome is unknown', async () => {
    let hang = false;
    // Written, but its answer never comes (a connection lost after COMMIT).
    const { memory, tracker, heard } = overSaves(2_000, () => (hang ? new Promise(() => undefined) : undefined));
    tracker.recordUserMessage('maya', 's1', 'hi');
    await tracker.settled();
    hang = true;
    let answer: E.Either<NotesTrackerFailure, StageReport> | undefined;
    void tracker.endStage('maya', 's1').then((result) => (answer = result));
    // Merged at once: seen at 2 s, answered at the next look, the save having had timeoutMs.
    await vi.advanceTimersByTimeAsync(3_999);
    expect(answer).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    const report = right(answer!);
    expect(report.unconfirmed).toBe(true);
    expect(profileFacts(report)).toEqual(['Said hi']);
    expect(storedProfileFacts(memory)).toEqual(['Said hi']);
    const closing = tracker.close();
    await vi.runAllTimersAsync();
    await closing;
    const closed = heard.filter((line) => line.startsWith('closed: the tracker closed with'));
    expect(closed).toHaveLength(1);
    expect(closed[0]).toContain('whose save the store never answered: whether it holds them is unknown');
  });

  it('with nothing to merge waits for the save of the merge before it, and is answered once that save has settled', async () => {
    const memory = memoryNotesStore();
    const pending: Array<() => void> = [];
    let slow = false;
    const store: NotesStore = {
      load: (user, session) => memory.load(user, session),
      save: (user, write: NotesWrite) =>
        slow
          ? new Promise((resolve) => pending.push(() => resolve(E.left(storeFailure('unavailable', 'down')))))
          : memory.save(user, write),
    };
    const tracker = createNotableFactsTracker({ complete: noting, store, timeoutMs: 60_000 });
    tracker.recordUserMessage('maya', 's1', 'hi');
    await tracker.settled();
    slow = true;
    const answers: Array<E.Either<NotesTrackerFailure, StageReport>> = [];
    void tracker.endStage('maya', 's1').then((result) => answers.push(result));
    void tracker.endStage('maya', 's1').then((result) => answers.push(result));
    await vi.advanceTimersByTimeAsync(10);
    // The first merge's save runs: neither is answered with facts the store has not taken.
    expect(answers).toHaveLength(0);
    expect(pending).toHaveLength(1);
    pending.shift()!();
    await vi.advanceTimersByTimeAsync(10);
    expect(answers).toHaveLength(2);
    slow = false;
    const closing = tracker.close();
    await vi.runAllTimersAsync();
    await closing;
  });

  /**
   * A tracker that merged maya's s1 while its store was down, then made more changes in s2 than
   * the 256 kept for applying again after a conflict; `meanwhile` runs before the store is back.
   */
  const throughOutage = async (meanwhile: (memory: ReturnType<typeof memoryNotesStore>) => void) => {
    const memory = memoryNotesStore();
    let down = false;
    const heard: string[] = [];
    const store: NotesStore = {
      load: (user, session) => memory.load(user, session),
      save: (user, write) => (down ? E.left(storeFailure('unavailable', 'outage')) : memory.save(user, write)),
    };
    const tracker = createNotableFactsTracker({
      complete: noting,
      store,
      onError: (failure) => heard.push(`${failure.code}: ${failure.message}`),
    });
    tracker.recordUserMessage('maya', 's1', 'one');
    await tracker.settled();
    down = true;
    const merged = right(await tracker.endStage('maya', 's1'));
    for (let index = 0; index < 260; index += 1) {
      tracker.recordUserMessage('maya', 's2', `m${index}`);
      await tracker.settled();
    }
    meanwhile(memory);
    down = false;
    tracker.recordUserMessage('maya', 's2', 'after the outage');
    await tracker.settled();
    const closing = tracker.close();
    await vi.runAllTimersAsync();
    await closing;
    return { memory, heard, merged };
  };

  it('merged while the store is down is saved once it takes saves again, however many changes waited meanwhile', async () => {
    const { memory, heard, merged } = await throughOutage(() => undefined);
    expect(profileFacts(merged)).toEqual(['Said one']);
    expect(storedProfileFacts(memory)).toEqual(['Said one']);
    expect(heard.filter((line) => !line.startsWith('unavailable:'))).toEqual([]);
  });

  it('merged while the store is down and lost to another writer’s newer profile past the bound is reported, never silently gone', async () => {
    // Another process merges into the profile meanwhile.
    const other = {
      facts: [{ category: 'People', fact: 'Partner is Jordan' }],
      consolidatedAt: '2026-01-01T00:00:00.000Z',
      sessionCount: 1,
    };
    const { memory, heard } = await throughOutage((memory) =>
      expect(
        E.isRight(
          memory.save('maya', { sessions: [], profile: { value: other, expected: 0 } }) as E.Either<unknown, unknown>,
        ),
      ).toBe(true),
    );
    expect(storedProfileFacts(memory)).toContain('Partner is Jordan');
    const lost = heard.filter((line) => line.includes('could not be applied to the newer record again'));
    expect(lost).toHaveLength(1);
    expect(lost[0]).toMatch(/^conflict: another writer changed the profile of "maya"/u);
  });

  it('whose save a load answers before the save’s own answer leaves the messages noted after it to the next end of stage, which merges them into the stored profile', async () => {
    const held: Array<() => void> = [];
    let holding = false;
    // Written at once, answered only when the test says so (a reply slower than the next load's).
    const { memory, tracker, heard } = overSaves(60_000, (written) =>
      holding ? new Promise((resolve) => held.push(() => resolve(written))) : undefined,
    );
    tracker.recordUserMessage('maya', 's1', 'one');
    await tracker.settled();
    holding = true;
    const first = tracker.endStage('maya', 's1');
    await vi.advanceTimersByTimeAsync(1);
    expect(held).toHaveLength(1);
    // Noted after the end of stage, while its save runs: the next end of stage's to merge.
    tracker.recordUserMessage('maya', 's1', 'two');
    await vi.advanceTimersByTimeAsync(1);
    // The load of another session brings the profile the running save wrote, before that save's answer.
    const loading = tracker.load('maya', 's2');
    await vi.advanceTimersByTimeAsync(1);
    holding = false;
    held.shift()!();
    expect(profileFacts(right(await first))).toEqual(['Said one']);
    expect(right(await loading)).toBeUndefined();
    await tracker.settled();
    tracker.release('maya', 's1');
    const last = right(await tracker.endStage('maya'));
    // The model notes the latest message alone: s1's list is 'Said two' now, and its merge replaces its earlier one.
    expect(last.sessions).toEqual(['s1']);
    expect(profileFacts(last)).toEqual(['Said two']);
    expect(storedProfileFacts(memory)).toEqual(['Said two']);
    const closing = tracker.close();
    await vi.runAllTimersAsync();
    await closing;
    expect(heard).toEqual([]);
  });
});
