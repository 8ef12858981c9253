import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { createNodeIo } from '../../src/cli/nodeIo.js';
import { tempDir } from '../tempDirs.js';

describe('createNodeIo', () => {
  const io = createNodeIo();
  const dir = tempDir('io-');

  it('says in words why a file cannot be read', async () => {
    expect(await io.readText(join(dir, 'missing.jsonl'))).toEqual(
      E.left(`cannot read ${join(dir, 'missing.jsonl')}: no such file`),
    );
    expect(await io.readText(dir)).toEqual(E.left(`cannot read ${dir}: it is a directory`));
  });

  it('writes a file whole and reads it back', async () => {
    const file = join(dir, 'state.json');
    expect(await io.writeText(file, '{"a":1}\n')).toEqual(E.right(undefined));
    expect(await io.readText(file)).toEqual(E.right('{"a":1}\n'));
    expect(E.isLeft(await io.writeText(join(dir, 'no', 'such', 'dir.json'), 'x'))).toBe(true);
  });

  it('reads the version from package.json', () => {
    const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(io.version()).toEqual(E.right(manifest.version));
  });
});
