/**
 * The time a session stamps an event with when its caller gives none: its default clock keeps
 * calls made within one millisecond apart, as the tracker's does, and an event is stamped after
 * the last one of its log whatever the clock of the process that records it says.
 */
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { selectValidFacts } from '../../../src/index.js';
import { memorySessionStore, openSession, type SessionOptions } from '../../../src/live/session/index.js';
import type { SessionStore } from '../../../src/live/session/store.js';
import { tempDir } from '../../tempDirs.js';
import { expectLaterResultSupersedes } from './clockSkew.js';

const implementer = (status: string, summary: string) => ({ task_id: '9', status, summary });

describe('a session with its default clock', () => {
  it('with its default clock, a result sent within the same millisecond as the one before still supersedes it', async () => {
    // Back-to-back calls (a server's pipelined calls) mostly share a millisecond of Date.now.
    for (let run = 0; run < 20; run += 1) {
      const store = memorySessionStore();
      const opened = await openSession('same-millisecond', { store });
      if (E.isLeft(opened)) throw new Error(opened.left.message);
      const session = opened.right;
      const [first, second] = await Promise.all([
        session.ingestResult({
          role: 'implementer',
          taskId: '9',
          output: implementer('blocked', 'waiting on the schema'),
        }),
        session.ingestResult({ role: 'implementer', taskId: '9', output: implementer('completed', 'schema added') }),
      ]);
      expect([E.isRight(first), E.isRight(second)]).toEqual([true, true]);
      const snapshot = await session.snapshot();
      if (E.isLeft(snapshot)) throw new Error(snapshot.left.message);
      // Each pair the two results assert holds the later one's object alone.
      const valid = selectValidFacts(snapshot.right)
        .filter(({ relation }) => relation === 'completed_with' || relation === 'summary')
        .map(({ relation, object }) => `${relation} ${object}`);
      expect(valid.sort()).toEqual(['completed_with completed', 'summary schema added']);
      // The log holds the times the session answered with, in the order it wrote them.
      const read = await store.read('same-millisecond', 0);
      if (E.isLeft(read)) throw new Error(read.left.message);
      const [at1, at2] = read.right.lines.map(({ text }) => (JSON.parse(text) as { at: number }).at);
      expect(at2).toBeGreaterThan(at1!);
    }
  });
});

const right = <T>(either: E.Either<{ readonly message: string }, T>): T => {
  if (E.isLeft(either)) throw new Error(either.left.message);
  return either.right;
};

const changed = (task: string) => ({ task_id: task, status: 'completed', summary: 'x', files_changed: ['src/x.ts'] });

/** The times of the log's lines, in the order they were written. */
const timesOf = async (store: SessionStore, id: string): Promise<ReadonlyArray<number>> =>
  right(await store.read(id, 0)).lines.map(({ text }) => (JSON.parse(text) as { at: number }).at);

const TEN = Date.parse('2026-12-07T10:00:00Z');
const NINE = Date.parse('2026-12-07T09:00:00Z');

describe('sessions whose clocks disagree', () => {
  /** Two processes on one log: the second one's clock an hour behind the first's. */
  const twoProcesses = async (options: SessionOptions) => {
    const first = right(await openSession('skew', { ...options, clock: () => TEN }));
    const second = right(await openSession('skew', { ...options, clock: () => NINE }));
    return { first, second };
  };

  it('a later result from a process whose clock is behind supersedes the earlier one (the files)', async () => {
    const cwd = tempDir('clock-');
    await expectLaterResultSupersedes({ cwd }, { cwd });
  });

  it('stamps every kind of event the clock times just after the last one of the log, and keeps a time the caller gave', async () => {
    const store = memorySessionStore();
    const { first, second } = await twoProcesses({ store });
    right(await first.compileContext({ taskId: '1', taskPrompt: 'Change src/x.ts' }));
    right(await second.ingestResult({ role: 'implementer', taskId: '1', output: changed('1') }));
    right(await second.compileContext({ taskId: '2', taskPrompt: 'Change src/x.ts again' }));
    right(await second.invalidateFact({ subject: 'src/x.ts', relation: 'modified_by' }));
    right(await second.compact({ maxFacts: 100 }));
    // A time the caller gives is its own, however far behind the log it is.
    right(await second.ingestResult({ role: 'implementer', taskId: '3', output: changed('3'), at: NINE }));
    expect(await timesOf(store, 'skew')).toEqual([TEN, TEN + 1, TEN + 2, TEN + 3, TEN + 4, NINE]);
    // After that line, the clock's time is taken again once it is past the log's last.
    right(await second.ingestResult({ role: 'implementer', taskId: '4', output: changed('4') }));
    expect((await timesOf(store, 'skew')).at(-1)).toBe(NINE + 1);
  });

  it('holds the time at the last millisecond of the year 9999 after an event there', async () => {
    const store = memorySessionStore();
    const last = Date.parse('9999-12-31T23:59:59.999Z');
    const session = right(await openSession('end', { store, clock: () => TEN }));
    right(await session.ingestResult({ role: 'implementer', taskId: '1', output: changed('1'), at: last }));
    right(await session.ingestResult({ role: 'implementer', taskId: '2', output: changed('2') }));
    expect(await timesOf(store, 'end')).toEqual([last, last]);
  });

  it('still knows a result sent again as the line it holds once its time was moved past the log', async () => {
    const store = memorySessionStore();
    const { first, second } = await twoProcesses({ store });
    right(await first.ingestResult({ role: 'implementer', taskId: '1', output: changed('1') }));
    const input = { role: 'implementer' as const, taskId: '2', output: changed('2') };
    expect(right(await second.ingestResult(input))).toMatchObject({ line: 2, duplicate: false });
    expect(right(await second.ingestResult(input))).toMatchObject({ line: 2, duplicate: true });
    expect(await timesOf(store, 'skew')).toEqual([TEN, TEN + 1]);
  });
});
