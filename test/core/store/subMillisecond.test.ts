/**
 * Times users really pass include fractions of a millisecond (`time.time() * 1000` in a script
 * writing a history, `performance.timeOrigin + performance.now()` as a clock). Every front door
 * shows a time and takes one to ask about in whole milliseconds, so a time is whole milliseconds
 * wherever it enters: a fraction is dropped, as an ISO-8601 time's digits past the millisecond are.
 */
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { createFactTracker, replayHistory, selectAllFacts, selectFactsValidAt } from '../../../src/index.js';
import { memorySessionStore, openSession } from '../../../src/live/session/index.js';

const TEN = Date.parse('2026-03-01T10:00:00Z');

const changed = (task: string) => ({ task_id: task, status: 'completed', summary: task, files_changed: ['src/a.ts'] });

const dispatch = (task: string, at: number | string): string =>
  JSON.stringify({ type: 'dispatch', role: 'implementer', taskId: task, at, result: changed(task) });

/** The (object, validFrom, validTo) of each record of the pair `src/a.ts modified_by`. */
const fileRecords = (facts: ReadonlyArray<{ subject: string; object: string; validFrom: number; validTo?: number }>) =>
  facts
    .filter(({ subject }) => subject === 'src/a.ts')
    .map(({ object, validFrom, validTo }) => [object, validFrom, validTo])
    .sort();

describe('a time with a fraction of a millisecond', () => {
  it('in a history is the time its ISO-8601 form gives: two results within one millisecond are asserted at that millisecond', () => {
    const { store } = replayHistory([dispatch('1', TEN + 0.2), dispatch('2', TEN + 0.6)].join('\n'));
    const iso = replayHistory(
      [dispatch('1', '2026-03-01T10:00:00.0002Z'), dispatch('2', '2026-03-01T10:00:00.0006Z')].join('\n'),
    );
    expect(store).toEqual(iso.store);
    // Both valid from the millisecond every front door shows and takes: asked at it, both are there.
    expect(fileRecords(selectAllFacts(store))).toEqual([
      ['task:1', TEN, undefined],
      ['task:2', TEN, undefined],
    ]);
    expect(fileRecords(selectFactsValidAt(store, TEN))).toEqual([
      ['task:1', TEN, undefined],
      ['task:2', TEN, undefined],
    ]);
  });

  it("from a tracker's clock or its caller is whole milliseconds", () => {
    const tracker = createFactTracker({ clock: () => TEN + 0.6 });
    tracker.ingestOutput({ role: 'implementer', taskId: '1', output: changed('1') });
    tracker.invalidate('src/a.ts', 'modified_by', TEN + 1000.5);
    expect(fileRecords(selectAllFacts(tracker.getSnapshot()))).toEqual([['task:1', TEN, TEN + 1000]]);
    expect(fileRecords(selectFactsValidAt(tracker.getSnapshot(), TEN))).toEqual([['task:1', TEN, TEN + 1000]]);
  });

  it('given to a live session is written and read as whole milliseconds', async () => {
    const store = memorySessionStore();
    const opened = await openSession('fractions', { store });
    if (E.isLeft(opened)) throw new Error(opened.left.message);
    const session = opened.right;
    expect(
      E.isRight(await session.ingestResult({ role: 'implementer', taskId: '1', output: changed('1'), at: TEN + 0.2 })),
    ).toBe(true);
    expect(
      E.isRight(await session.ingestResult({ role: 'implementer', taskId: '2', output: changed('2'), at: TEN + 0.6 })),
    ).toBe(true);
    const read = await store.read('fractions', 0);
    if (E.isLeft(read)) throw new Error(read.left.message);
    expect(read.right.lines.map(({ text }) => (JSON.parse(text) as { at: number }).at)).toEqual([TEN, TEN]);
    const snapshot = await session.snapshot();
    if (E.isLeft(snapshot)) throw new Error(snapshot.left.message);
    expect(fileRecords(selectFactsValidAt(snapshot.right, TEN))).toEqual([
      ['task:1', TEN, undefined],
      ['task:2', TEN, undefined],
    ]);
  });
});
