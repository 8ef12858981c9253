/** `writeTogether`: the files of one run written first, then renamed; what a failure leaves, and says. */
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { type FileToWrite, writeTogether } from '../../../src/cli/init/writeTogether.js';
import { tempDir } from '../../tempDirs.js';

/** A file of `project` to write at `path`. */
const fileIn = (project: string, path: string, text: string): FileToWrite => ({
  path,
  absolute: join(project, path),
  text,
});

/** A `stillSafe` that answers Right `times` times, then Left `lost`. */
const safeFor = (times: number) => {
  let asked = 0;
  return (): E.Either<string, true> => (asked++ < times ? E.right(true) : E.left('lost the lock'));
};

describe('writeTogether', () => {
  it('writes every file, making the folders they need', () => {
    const project = tempDir('write-together-');
    const files = [
      fileIn(project, join('.codex', 'hooks.json'), 'a'),
      fileIn(project, join('.codex', 'config.toml'), 'b'),
    ];
    expect(writeTogether(files, safeFor(2))).toEqual(E.right(undefined));
    expect(readdirSync(join(project, '.codex')).sort()).toEqual(['config.toml', 'hooks.json']);
    expect(readFileSync(join(project, '.codex', 'config.toml'), 'utf8')).toBe('b');
  });

  it('renames none when one cannot be written, removing its temporary files and the folders it made', () => {
    const project = tempDir('write-together-');
    writeFileSync(join(project, 'plain'), 'mine');
    const files = [
      fileIn(project, join('.claude', 'settings.json'), 'new'),
      fileIn(project, join('plain', 'x.json'), 'new'),
    ];
    expect(writeTogether(files, safeFor(2))).toEqual(
      E.left('cannot write plain/x.json: a part of the path is not a directory (nothing was written)'),
    );
    expect(readdirSync(project)).toEqual(['plain']);
  });

  it('stops before a rename once it is not safe, naming the files written before', () => {
    const project = tempDir('write-together-');
    writeFileSync(join(project, 'b.json'), 'old');
    const files = [fileIn(project, 'a.json', 'new a'), fileIn(project, 'b.json', 'new b')];
    expect(writeTogether(files, safeFor(0))).toEqual(E.left('lost the lock'));
    expect(readdirSync(project)).toEqual(['b.json']);
    expect(writeTogether(files, safeFor(1))).toEqual(
      E.left('lost the lock (a.json was written already, the rest not: run init again once this is fixed)'),
    );
    expect(readdirSync(project).sort()).toEqual(['a.json', 'b.json']);
    expect(readFileSync(join(project, 'b.json'), 'utf8')).toBe('old');
  });

  it('names the files written before a rename that fails, and leaves no temporary file', () => {
    const project = tempDir('write-together-');
    // A folder holding a file where the second file goes: a rename cannot replace it.
    mkdirSync(join(project, 'b.json'));
    writeFileSync(join(project, 'b.json', 'kept'), '');
    const files = [fileIn(project, 'a.json', 'new a'), fileIn(project, 'b.json', 'new b')];
    expect(writeTogether(files, safeFor(2))).toEqual(
      E.left(
        'cannot write b.json: it is a directory (a.json was written already, the rest not: run init again once this is fixed)',
      ),
    );
    expect(readdirSync(project).sort()).toEqual(['a.json', 'b.json']);
  });
});
