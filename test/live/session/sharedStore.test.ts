/**
 * Two sessions opened on one file store instance for the same id, over real files: each follows
 * the log on its own. A log deleted and made anew by another process is read again from its
 * first line by each of them, whichever reads first, and their appends in turn are each seen
 * once by the other: both hold what a fresh open of the log holds.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { replayHistory, selectValidFacts } from '../../../src/index.js';
import { fileSessionStore, type LiveSession, openSession } from '../../../src/live/session/index.js';
import { implementer } from '../../fixtures/results.js';
import { tempDir } from '../../tempDirs.js';

const right = <T>(either: E.Either<{ message: string }, T>): T => {
  if (E.isLeft(either)) throw new Error(either.left.message);
  return either.right;
};

/** A result of task `taskId` that changed `src/{name}.ts`. */
const ingest = async (session: LiveSession, taskId: string, name: string, at: number): Promise<number> =>
  right(
    await session.ingestResult({ role: 'implementer', taskId, output: implementer(taskId, [`src/${name}.ts`]), at }),
  ).line;

/** The files the session's valid facts are about. */
const subjectsOf = async (session: LiveSession): Promise<string[]> =>
  selectValidFacts(right(await session.snapshot()))
    .map((fact) => fact.subject)
    .filter((subject) => subject.startsWith('src/'))
    .sort();

/** What a fresh process opening the log holds: its store, its lines and events. */
const freshOpen = async (directory: string, id: string) => {
  const fresh = right(await openSession(id, { store: fileSessionStore({ directory }) }));
  const { lines, events } = fresh.state();
  return { store: right(await fresh.snapshot()), lines, events };
};

const heldBy = async (session: LiveSession) => {
  const store = right(await session.snapshot());
  const { lines, events } = session.state();
  return { store, lines, events };
};

describe('two sessions on one file store instance, for the same id', () => {
  it.each([
    ['the writer', 'first'],
    ['the other', 'second'],
  ])(
    'each reads a log deleted and made anew by another process from its first line, %s reading it first',
    async (_name, firstReader) => {
      const directory = join(tempDir('shared-store-'), 'sessions');
      const store = fileSessionStore({ directory });
      const writer = right(await openSession('s', { store }));
      const other = right(await openSession('s', { store }));
      for (let task = 1; task <= 3; task += 1) await ingest(writer, `old${task}`, `old${task}`, task);
      // The other session has read the old log to its end; the writer appends one line more.
      expect(await subjectsOf(other)).toEqual(['src/old1.ts', 'src/old2.ts', 'src/old3.ts']);
      expect(await ingest(writer, 'old4', 'old4', 4)).toBe(4);
      expect(other.state().lines).toBe(3);
      expect(await subjectsOf(other)).toContain('src/old4.ts');

      // Another process deletes the log and makes a new one, as long, of other events.
      rmSync(join(directory, 's.jsonl'), { force: true });
      const elsewhere = right(await openSession('s', { store: fileSessionStore({ directory }) }));
      for (let task = 1; task <= 4; task += 1) await ingest(elsewhere, `new${task}`, `new${task}`, 100 + task);
      const expected = await freshOpen(directory, 's');
      expect(expected.lines).toBe(4);
      const newSubjects = ['src/new1.ts', 'src/new2.ts', 'src/new3.ts', 'src/new4.ts'];

      const order = firstReader === 'first' ? [writer, other] : [other, writer];
      for (const session of order) {
        expect(await subjectsOf(session)).toEqual(newSubjects);
        expect(await heldBy(session)).toEqual(expected);
      }
      // Each goes on writing after the new log's last line, never over it.
      expect(await ingest(other, 'new5', 'new5', 105)).toBe(5);
      expect(await ingest(writer, 'new6', 'new6', 106)).toBe(6);
      const log = readFileSync(join(directory, 's.jsonl'), 'utf8');
      expect(log).not.toContain('old');
      const replayed = replayHistory(log);
      expect(replayed.report.errors).toEqual([]);
      for (const session of [writer, other]) expect(right(await session.snapshot())).toEqual(replayed.store);
    },
  );

  it('each sees every line the other appends exactly once, in turn and at once, and holds what a fresh open holds', async () => {
    const directory = join(tempDir('shared-store-'), 'sessions');
    const store = fileSessionStore({ directory });
    const first = right(await openSession('s', { store }));
    const second = right(await openSession('s', { store }));
    let at = 0;
    for (let round = 1; round <= 8; round += 1) {
      const writer = round % 2 === 0 ? first : second;
      at += 1;
      right(await writer.compileContext({ taskId: `p${round}`, taskPrompt: `Use src/f${round - 1}.ts`, at }));
      at += 1;
      await ingest(writer, `t${round}`, `f${round}`, at);
    }
    // Both at once: their appends take turns on the log, and each reads the other's.
    const together = await Promise.all(
      Array.from({ length: 12 }, (_, i) => ingest(i % 2 === 0 ? first : second, `c${i}`, `c${i}`, 100 + i)),
    );
    expect([...together].sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => 17 + i));
    const expected = await freshOpen(directory, 's');
    expect(expected).toMatchObject({ lines: 28, events: 28 });
    for (const session of [first, second]) {
      expect(await heldBy(session)).toEqual(expected);
      expect(session.report().errors).toEqual([]);
    }
    const replayed = replayHistory(readFileSync(join(directory, 's.jsonl'), 'utf8'));
    expect(replayed.report.errors).toEqual([]);
    expect(expected.store).toEqual(replayed.store);
  });
});
