/**
 * The time a session stamps an event with when its caller gives none: its default clock keeps
 * calls made within one millisecond apart, as the tracker's does.
 */
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { selectValidFacts } from '../../../src/index.js';
import { memorySessionStore, openSession } from '../../../src/live/session/index.js';

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
