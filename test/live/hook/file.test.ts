/** The hooks file rewritten whole for compaction: a failure is a value, even when cleaning up after it fails too. */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { writeHooksFile } from '../../../src/live/hook/file.js';
import { tempDir } from '../../tempDirs.js';

describe('writeHooksFile', () => {
  it('replaces the file with the text', () => {
    const file = join(tempDir('hooks-file-'), 'hooks.jsonl');
    writeFileSync(file, 'old\n');
    expect(writeHooksFile(file, 'new\n')).toEqual(E.right(undefined));
    expect(readFileSync(file, 'utf8')).toBe('new\n');
  });

  it('reports the failed rewrite, not the failed clean-up, when removing its temporary fails too, and leaves the file', () => {
    const file = join(tempDir('hooks-file-'), 'hooks.jsonl');
    writeFileSync(file, 'old\n');
    // A folder at the temporary's name: it cannot be created, and removing what is there fails (it is a folder).
    mkdirSync(`${file}.${process.pid}.compact`);
    const rewritten = writeHooksFile(file, 'new\n');
    expect(E.isLeft(rewritten) && rewritten.left).toMatchObject({
      code: 'io',
      message: expect.stringMatching(/^cannot rewrite .*hooks\.jsonl: EEXIST/u),
    });
    expect(readFileSync(file, 'utf8')).toBe('old\n');
  });
});
