/**
 * A snapshot an older build of the same package version wrote: its store was built by that
 * build's reducer, so it is used only where this build would build the very same store from the
 * lines it covers. The fixture (see fixtures/snapshot-8cdd487/README.md) was written at commit
 * 8cdd487, whose snapshots have the layout number 13 and whose stores keep a `[Session Context]`
 * section a prompt carries in the task's recorded prompt, which this build leaves out.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { emptyFactStore, replayHistory } from '../../../src/index.js';
import { openSession } from '../../../src/live/session/index.js';
import { applyLogLines, encodeSessionState, initialSessionState } from '../../../src/live/session/sessionState.js';
import { SNAPSHOT_VERSION } from '../../../src/live/session/snapshot.js';
import { SECRETS } from '../../fixtures/secrets.js';
import { tempDir } from '../../tempDirs.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/snapshot-8cdd487/', import.meta.url));

/** The fixture in a session folder of its own, its snapshot naming the copied log as its own. */
const copiedSession = (): string => {
  const directory = tempDir('older-snapshot-');
  for (const name of ['s.jsonl', 's.jsonl.snapshot']) copyFileSync(join(FIXTURE, name), join(directory, name));
  const log = join(directory, 's.jsonl');
  const snapshot = readFileSync(`${log}.snapshot`, 'utf8');
  const newline = snapshot.indexOf('\n');
  const header = JSON.parse(snapshot.slice(0, newline)) as { log: Record<string, unknown> };
  const { dev, ino } = statSync(log);
  const own = { ...header, log: { ...header.log, identity: `${dev}:${ino}` } };
  writeFileSync(`${log}.snapshot`, `${JSON.stringify(own)}${snapshot.slice(newline)}`);
  return directory;
};

describe('a snapshot an older build wrote', () => {
  it('is not used when that build read its lines into another store: the section is the one replay gives', async () => {
    const directory = copiedSession();
    const opened = await openSession('s', { directory, create: false });
    if (E.isLeft(opened)) throw new Error(opened.left.message);
    const session = opened.right;
    const compiled = await session.compileContext({ taskId: 'next', taskPrompt: 'Fix the mail sender', at: 600_000 });
    if (E.isLeft(compiled)) throw new Error(compiled.left.message);
    const replayed = replayHistory(readFileSync(join(directory, 's.jsonl'), 'utf8'));
    expect(compiled.right.sessionContext).toBe(replayed.report.prompts.at(-1)!.sessionContext);
    expect(session.snapshotUse()).toEqual({ used: false, reason: expect.stringMatching(/layout/u) });
    expect(await session.snapshot()).toEqual(E.right(replayed.store));
  });
});

/**
 * The digest of the state this build writes into a snapshot for the example log, compacting
 * under a small bound, with a prompt that carries a section and a result that quotes a token, by
 * snapshot layout. A change to what a log reads into (the reducers, the index, what a snapshot
 * keeps) changes the digest: it then needs a new layout number, so that snapshots an earlier
 * build wrote are read from their logs again, and a new entry here. Never change an entry.
 */
const STATE_DIGESTS: Readonly<Record<number, string>> = {
  14: '3ae0fd25a63a8e956037a9ffc8fdf437fcddbd42ca01bbb6f1cfd499a5e7e685',
  // The example names every file in one spelling already: what changed is how other spellings read.
  15: '3ae0fd25a63a8e956037a9ffc8fdf437fcddbd42ca01bbb6f1cfd499a5e7e685',
  // The example is English: what changed is the terms of Chinese, Japanese and Korean text.
  16: '3ae0fd25a63a8e956037a9ffc8fdf437fcddbd42ca01bbb6f1cfd499a5e7e685',
  // The shipped ranking, which the session's settings hold, fitted again.
  17: '7a7f9075fa46c2e553c26c9e23f6bdf6cf2d997add05b11cb2ac472345047b97',
  // The example is English: what changed is that Chinese, Japanese and Korean words give terms.
  18: '7a7f9075fa46c2e553c26c9e23f6bdf6cf2d997add05b11cb2ac472345047b97',
  // The index keeps the tasks with the latest prompts, and the ranking the share an old task's context counts for.
  19: '682910ee819f7a275f5ec6b86884170e3c28a299b0a45d9f9eab9133bf06a824',
  // That list holds the tasks' numbers, not their ids.
  20: 'd464c3d7d60e84025e34788b4277b557493838906b452b0fe0bd3c4ea0b5996d',
  // The example's times are whole milliseconds: what changed is that a fraction of one is dropped.
  21: 'd464c3d7d60e84025e34788b4277b557493838906b452b0fe0bd3c4ea0b5996d',
  // The example's times all have a time of day: what changed is that an offset after a date alone is refused.
  22: 'd464c3d7d60e84025e34788b4277b557493838906b452b0fe0bd3c4ea0b5996d',
  // The example's times are in 2026: what changed is that February 29 of the year 0000 is a date.
  23: 'd464c3d7d60e84025e34788b4277b557493838906b452b0fe0bd3c4ea0b5996d',
  // The example's times are in UTC: what changed is that an offset's minutes past 59 are refused.
  24: 'd464c3d7d60e84025e34788b4277b557493838906b452b0fe0bd3c4ea0b5996d',
};

describe('the snapshot layout', () => {
  it('names the state every log reads into: the digest of the example log’s state is the one recorded for this layout', () => {
    const example = readFileSync(new URL('../../../examples/web-api-session.jsonl', import.meta.url), 'utf8');
    const lines = example.split('\n').filter((text) => text.trim() !== '');
    const carried = JSON.stringify({
      type: 'prompt',
      taskId: '11',
      at: '2026-03-03T09:00:00Z',
      taskPrompt: `${replayHistory(example).report.prompts.at(-1)!.sessionContext}\n\nAdd rate limiting to src/routes/login.ts`,
    });
    const quoting = JSON.stringify({
      type: 'dispatch',
      role: 'implementer',
      taskId: '11',
      at: '2026-03-03T09:10:00Z',
      output: {
        task_id: '11',
        status: 'completed',
        summary: `rotated ${SECRETS[4]![1]}`,
        files_changed: ['src/routes/login.ts'],
      },
    });
    const log = [...lines, carried, quoting].map((text, index) => ({ line: index + 1, text }));
    const state = applyLogLines(initialSessionState(emptyFactStore({ maxValidFacts: 12 })), log, log.length);
    const digest = createHash('sha256').update(encodeSessionState(state)).digest('hex');
    expect({ layout: SNAPSHOT_VERSION, digest }).toEqual({
      layout: SNAPSHOT_VERSION,
      digest: STATE_DIGESTS[SNAPSHOT_VERSION],
    });
  });
});
