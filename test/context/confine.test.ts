/**
 * The check that a context path stays inside its repository, against a folder that comes and
 * goes while it looks (another writer's lock, taken and released): a real folder removed between
 * the check's two looks is absent, never "a symbolic link to a missing target".
 */
import { mkdirSync, rmdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { confineToRoot } from '../../src/context/node/files.js';
import { tempDir } from '../tempDirs.js';

describe('confineToRoot', () => {
  it('takes a folder removed while it looks for absent, and still refuses a link to a missing target', async () => {
    const root = tempDir('confine-');
    const lock = join(root, 'context.json.lock');
    let going = true;
    // Another writer's lock: made and removed again and again, on the thread pool as the check runs.
    const toggling = (async () => {
      while (going) {
        mkdirSync(lock);
        await new Promise((resolve) => setImmediate(resolve));
        rmdirSync(lock);
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const refusals = new Set<string>();
    for (let i = 0; i < 2_000; i += 1) {
      const checked = await confineToRoot(root, ['context.json.lock']);
      if (E.isLeft(checked)) refusals.add(checked.left.message);
    }
    going = false;
    await toggling;
    expect([...refusals]).toEqual([]);
    symlinkSync(join(root, 'nowhere'), lock);
    const dangling = await confineToRoot(root, ['context.json.lock']);
    expect(E.isLeft(dangling) && dangling.left.message).toMatch(/is a symbolic link to a missing target/u);
  });
});
