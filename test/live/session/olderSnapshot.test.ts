/**
 * A snapshot an older build of the same package version wrote: its store was built by that
 * build's reducer, so it is used only where this build would build the very same store from the
 * lines it covers. The fixture (see fixtures/snapshot-8cdd487/README.md) was written at commit
 * 8cdd487, whose snapshots have the layout number 13 and whose stores keep a `[Session Context]`
 * section a prompt carries in the task's recorded prompt, which this build leaves out.
 */
import { copyFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { replayHistory } from '../../../src/index.js';
import { openSession } from '../../../src/live/session/index.js';
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
