import { existsSync, readFileSync, readdirSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { createNodeIo } from '../../src/cli/nodeIo.js';
import { killedMidWrite, LONG_TEXT_EXPRESSION } from '../killedMidWrite.js';
import { tempDir } from '../tempDirs.js';

const NODE_IO_JS = fileURLToPath(new URL('../../dist/cli/nodeIo.js', import.meta.url));

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

  it('updateText removes what an update killed mid-write left beside the file once older than the lock’s stale time, never younger', async () => {
    const folder = tempDir('io-killed-');
    const file = join(folder, 'state.json');
    writeFileSync(file, '{"a":1}\n');
    const killed = await killedMidWrite(
      file,
      NODE_IO_JS,
      'createNodeIo',
      `await write().updateText(file, () => ({ _tag: 'Right', right: ${LONG_TEXT_EXPRESSION} }));`,
    );
    expect(killed).toHaveLength(1);
    expect(readFileSync(file, 'utf8')).toBe('{"a":1}\n');
    // Time passes: the lock the killed update held turns stale, and so does what it left.
    const stale = (Date.now() - 60_000) / 1000;
    const leftover = join(folder, killed[0]!);
    utimesSync(`${file}.lock`, stale, stale);
    utimesSync(leftover, stale, stale);
    // An earlier release's (random bits alone), one a live update may be writing (young), a link.
    const earlier = `${file}.0123456789abcdef.tmp`;
    const young = `${file}.999999.${Date.now().toString(36)}0a1b2c3d4e5f.tmp`;
    const target = join(folder, 'target');
    const link = `${file}.999998.k0a1b2c3.tmp`;
    for (const made of [earlier, young, target]) writeFileSync(made, 'partial');
    symlinkSync(target, link);
    utimesSync(earlier, stale, stale);
    expect(await io.updateText!(file, () => E.right('{"a":2}\n'))).toEqual(E.right(undefined));
    expect(readFileSync(file, 'utf8')).toBe('{"a":2}\n');
    expect([leftover, earlier, young, target, link].map((path) => existsSync(path))).toEqual([
      false,
      false,
      true,
      true,
      true,
    ]);
    expect(readdirSync(folder).sort()).toEqual(
      ['state.json', 'state.json.999998.k0a1b2c3.tmp', young.slice(folder.length + 1), 'target'].sort(),
    );
  });
});
