/**
 * Two processes on one session log whose clocks disagree by an hour, run on a store of each kind
 * (the files, PostgreSQL): the later result, recorded by the process whose clock is behind, is
 * stamped after the earlier one and supersedes it.
 */
import * as E from 'fp-ts/lib/Either.js';
import { expect } from 'vitest';
import { selectValidFacts } from '../../../src/index.js';
import { openSession, type SessionOptions } from '../../../src/live/session/index.js';
import { implementer } from '../../fixtures/results.js';

const right = <T>(either: E.Either<{ readonly message: string }, T>): T => {
  if (E.isLeft(either)) throw new Error(either.left.message);
  return either.right;
};

/** Records a result of task 1 through `ahead`'s store, then one of task 2 through `behind`'s, both changing src/x.ts. */
export const expectLaterResultSupersedes = async (ahead: SessionOptions, behind: SessionOptions): Promise<void> => {
  const first = right(await openSession('skew', { ...ahead, clock: () => Date.parse('2026-12-07T10:00:00Z') }));
  const second = right(await openSession('skew', { ...behind, clock: () => Date.parse('2026-12-07T09:00:00Z') }));
  right(await first.ingestResult({ role: 'implementer', taskId: '1', output: implementer('1', ['src/x.ts']) }));
  right(await second.ingestResult({ role: 'implementer', taskId: '2', output: implementer('2', ['src/x.ts']) }));
  for (const session of [first, second]) {
    const modifiers = selectValidFacts(right(await session.snapshot()))
      .filter(({ subject, relation }) => subject === 'src/x.ts' && relation === 'modified_by')
      .map(({ object }) => object);
    expect(modifiers).toEqual(['task:2']);
  }
};
