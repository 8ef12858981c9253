/**
 * A prompt sent again to a process that did not keep its section, on a log whose newest snapshot
 * is already past the prompt's line: the section is the one replay gives on that line, computed
 * from the snapshot the newest replaced, never from the log's first line.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { replayHistory } from '../../../src/index.js';
import { fileSessionStore, memorySessionStore, openSession } from '../../../src/live/session/index.js';
import type { SessionStore } from '../../../src/live/session/store.js';
import { implementer } from '../../fixtures/results.js';
import { tempDir } from '../../tempDirs.js';

const right = <T>(either: E.Either<{ message: string }, T>): T => {
  if (E.isLeft(either)) throw new Error(either.left.message);
  return either.right;
};

/** `store`, noting the line after which each read of the log starts. */
const noting = (store: SessionStore, reads: number[]): SessionStore => ({
  ...store,
  read: (id, after, follower) => {
    reads.push(after);
    return store.read(id, after, follower);
  },
  readSnapshot: (id, follower, atMost) => store.readSnapshot(id, follower, atMost),
});

/** Task `task`'s prompt, at a time of its own. */
const prompt = (task: number) => ({ taskId: String(task), taskPrompt: `Change src/mod${task}.ts`, at: task * 1_000 });

describe.each([
  ['files', (directory: string) => fileSessionStore({ directory }), true],
  [
    'memory',
    (() => {
      const store = memorySessionStore();
      return () => store;
    })(),
    false,
  ],
])('a prompt sent again on the %s store', (_name, storeIn, files) => {
  it('answers the section of its line from the snapshot the newest one replaced, reading the log from there', async () => {
    const directory = join(tempDir('resent-'), 'sessions');
    const writer = right(await openSession('r', { store: storeIn(directory) }));
    // A result on line 1, then per task a prompt (line 2t) and a result: the writer saves a
    // snapshot after lines 64 and 128, both prompts' lines.
    right(await writer.ingestResult({ role: 'implementer', taskId: '0', output: implementer('0', ['src/mod0.ts']) }));
    const sections = new Map<number, string>();
    for (let task = 1; task <= 65; task += 1) {
      const compiled = right(await writer.compileContext(prompt(task)));
      sections.set(task, compiled.sessionContext);
      const output = implementer(String(task), [`src/mod${task}.ts`, `src/mod${task - 1}.ts`]);
      right(await writer.ingestResult({ role: 'implementer', taskId: String(task), output, at: task * 1_000 + 1 }));
    }
    const reads: number[] = [];
    const reader = right(await openSession('r', { store: noting(storeIn(directory), reads) }));
    expect(reader.snapshotUse()).toEqual({ used: true, position: 128 });
    const log = files
      ? readFileSync(join(directory, 'r.jsonl'), 'utf8')
      : (right(await storeIn(directory).read('r', 0))
          .lines.map((line) => line.text)
          .join('\n') as string);
    const replayed = new Map(replayHistory(log).report.prompts.map((entry) => [entry.line, entry.sessionContext]));
    // Task 64's prompt is on line 128, the newest snapshot's; task 50's on line 100, before it.
    for (const task of [64, 50]) {
      reads.length = 0;
      const again = right(await reader.compileContext(prompt(task)));
      expect([again.line, again.duplicate]).toEqual([2 * task, true]);
      expect(again.sessionContext).toBe(sections.get(task));
      expect(again.sessionContext).toBe(replayed.get(2 * task));
      // The log is read from the snapshot of line 64 on (and from the reader's own place), never from its first line.
      expect(reads).toContain(64);
      expect(reads).not.toContain(0);
    }
  });
});
