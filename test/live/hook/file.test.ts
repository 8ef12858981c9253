/**
 * The hooks file rewritten whole for compaction: a failure is a value, even when cleaning up
 * after it fails too; what a rewrite killed halfway leaves is removed by the next turn.
 */
import {
  existsSync,
  lstatSync,
  lutimesSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { writeHooksFile } from '../../../src/live/hook/file.js';
import { runHook } from '../../../src/live/hook/hook.js';
import { killedMidWrite, LONG_TEXT_EXPRESSION } from '../../killedMidWrite.js';
import { tempDir } from '../../tempDirs.js';

describe('writeHooksFile', () => {
  it('replaces the file with the text', () => {
    const file = join(tempDir('hooks-file-'), 'hooks.jsonl');
    writeFileSync(file, 'old\n');
    expect(writeHooksFile(file, 'new\n')).toEqual(E.right(undefined));
    expect(readFileSync(file, 'utf8')).toBe('new\n');
  });

  it('reports a failed rewrite as a value, and leaves the file and nothing beside it', () => {
    const directory = tempDir('hooks-file-');
    const file = join(directory, 'hooks.jsonl');
    // A folder holding a file at the file's name: the rename over it fails.
    mkdirSync(file);
    writeFileSync(join(file, 'kept'), 'old\n');
    const rewritten = writeHooksFile(file, 'new\n');
    expect(E.isLeft(rewritten) && rewritten.left).toMatchObject({
      code: 'io',
      message: expect.stringMatching(/^cannot write .*hooks\.jsonl: /u),
    });
    expect(readFileSync(join(file, 'kept'), 'utf8')).toBe('old\n');
    expect(readdirSync(directory)).toEqual(['hooks.jsonl']);
  });
});

const FILE_JS = fileURLToPath(new URL('../../../dist/live/hook/file.js', import.meta.url));

const payload = (cwd: string): Record<string, unknown> => ({
  ...(JSON.parse(
    readFileSync(new URL('./fixtures/claude-code/pre-tool-use-agent.json', import.meta.url), 'utf8'),
  ) as Record<string, unknown>),
  cwd,
});

describe('the temporary file of a rewrite killed halfway', { timeout: 60_000 }, () => {
  it('is removed by the next turn once older than the stale time, never younger, another session’s or a link', async () => {
    const cwd = tempDir('hooks-killed-');
    const event = payload(cwd);
    const file = join(cwd, '.fact-tracker', 'sessions', `${String(event['session_id'])}.jsonl.hooks`);
    expect((await runHook(JSON.stringify(event), { cwd })).messages).toEqual([]);
    const before = readFileSync(file, 'utf8');
    const killed = await killedMidWrite(file, FILE_JS, 'writeHooksFile', `write(file, ${LONG_TEXT_EXPRESSION});`);
    expect(killed).toHaveLength(1);
    // The file is as it was; the temporary file is left.
    expect(readFileSync(file, 'utf8')).toBe(before);
    const stale = (Date.now() - 60_000) / 1000;
    const leftover = join(dirname(file), killed[0]!);
    utimesSync(leftover, stale, stale);
    // One a live rewrite may still be writing (young), an earlier release's, another session's
    // (`{id}.jsonl.hooks.1.x`, whose hooks file starts with this one's name), a link to a file.
    const young = `${file}.999999.${Date.now().toString(36)}0a1b2c3d4e5f.tmp`;
    const earlier = `${file}.999999.compact`;
    const other = `${file}.1.x.jsonl.hooks.999999.k0a1b2c3.tmp`;
    const target = join(cwd, 'target');
    const link = `${file}.999998.k0a1b2c3.tmp`;
    for (const made of [young, earlier, other, target]) writeFileSync(made, 'partial');
    symlinkSync(target, link);
    for (const made of [earlier, other, target]) utimesSync(made, stale, stale);
    lutimesSync(link, stale, stale);
    expect((await runHook(JSON.stringify(event), { cwd })).messages).toEqual([]);
    expect([leftover, young, earlier, other, target, link].map((path) => existsSync(path))).toEqual([
      false,
      true,
      false,
      true,
      true,
      true,
    ]);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
  });
});
