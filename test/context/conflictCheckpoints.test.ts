/** Each side of a conflict takes its checkpoints whole from that side as git holds it. Pure: no file, clock or process. */
import { describe, expect, it } from 'vitest';
import { withCheckpointsOf } from '../../src/context/conflictCheckpoints.js';
import type { Checkpoint, ContextFile, SharedContext } from '../../src/context/model.js';
import { emptySharedContext } from '../../src/context/update.js';

const context = (workstreamId: string, checkpoint?: Checkpoint): SharedContext => ({
  ...emptySharedContext({ repo: 'github.com/acme/app', branch: 'main', workstreamId }),
  ...(checkpoint === undefined ? {} : { checkpoint }),
});

const file = (...contexts: SharedContext[]): ContextFile => ({ kind: 'planning', contexts });

const checkpoint = (head: string, files: string, summary: string): Checkpoint => ({
  gitHead: head.repeat(40),
  trackedFilesHash: files.repeat(32),
  summaryHash: summary.repeat(32),
});

describe('withCheckpointsOf', () => {
  it('replaces a checkpoint git joined from both sides by the one the side recorded, context by context', () => {
    const joined = file(context('api', checkpoint('a', 'a', 'b')), context('web', checkpoint('c', 'c', 'c')));
    const whole = file(context('api', checkpoint('a', 'a', 'a')), context('web', checkpoint('c', 'c', 'c')));
    const taken = withCheckpointsOf(joined, whole);
    expect(taken.contexts.map((one) => one.checkpoint)).toEqual([checkpoint('a', 'a', 'a'), checkpoint('c', 'c', 'c')]);
    expect(taken.contexts[1]).toBe(joined.contexts[1]);
  });

  it('drops a checkpoint the side did not record, and leaves a context the side does not hold as it is', () => {
    const side = file(context('api', checkpoint('a', 'a', 'b')), context('added', checkpoint('d', 'd', 'd')));
    const taken = withCheckpointsOf(side, file(context('api')));
    expect(taken.contexts[0]).not.toHaveProperty('checkpoint');
    expect(taken.contexts[1]).toBe(side.contexts[1]);
  });

  it('returns the very same side when every checkpoint is already the recorded one', () => {
    const side = file(context('api', checkpoint('a', 'a', 'a')), context('web'));
    expect(withCheckpointsOf(side, file(context('api', checkpoint('a', 'a', 'a')), context('web')))).toBe(side);
  });
});
