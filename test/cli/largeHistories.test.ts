/**
 * The command line on histories no user should have to trim by hand (issue 14, items 1, 5, 6
 * and 12), run as a real process. Memory bounds are checked by running the command under a
 * small heap (`--max-old-space-size`): a command that held the whole file, or a report of every
 * line of it, would crash there, as the old one did, instead of printing a clean report.
 */
import { execFile, spawn } from 'node:child_process';
import { openSync, closeSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../tempDirs.js';
import { implementer } from '../fixtures/results.js';
import { type CliRun, MAIN, ROOT } from './runCli.js';

const dir = tempDir('large-');

const file = (name: string, text: string): string => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

/** Runs `fact-tracker ...args` with a heap of `heapMb` megabytes (Node's default when absent). */
const runWithHeap = (args: ReadonlyArray<string>, heapMb?: number): Promise<CliRun> =>
  new Promise((resolve) => {
    const flags = heapMb === undefined ? [] : [`--max-old-space-size=${heapMb}`];
    execFile(
      process.execPath,
      [...flags, MAIN, ...args],
      { cwd: ROOT, env: { ...process.env, NO_COLOR: '1' }, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 },
      (error, stdout, stderr) =>
        resolve({ status: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr }),
    );
  });

const line = (event: unknown): string => JSON.stringify(event);

describe('one huge result (issue 14, item 1)', () => {
  // Before: the index copied a task's facts for every fact added; this replay ran 20+ minutes.
  it('replays a 2 MB line with 100,000 files_changed in seconds, capped at 1,000 facts', async () => {
    const files = Array.from({ length: 100_000 }, (_, i) => `src/m${i % 50}/f${i}.ts`);
    const history = file(
      'huge-result.jsonl',
      [
        line({ type: 'dispatch', role: 'implementer', taskId: '1', result: implementer('1', files) }),
        line({ type: 'prompt', taskId: '2', taskPrompt: 'Update src/m3/f3.ts' }),
      ].join('\n'),
    );
    const run = await runWithHeap(['replay', history, '--json']);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const report = JSON.parse(run.stdout) as { summary: { validFacts: number }; prompts: { facts: unknown[] }[] };
    expect(report.summary.validFacts).toBe(1_000);
    expect(report.prompts[0]?.facts.length).toBeGreaterThan(0);
  });
});

describe('one deeply nested line (issue 14, item 5)', () => {
  const good = line({ type: 'dispatch', role: 'implementer', taskId: '1', result: implementer('1', ['src/a.ts']) });
  const nested = good.replace('"result":{', `"result":{"extra":${'['.repeat(5_000)}${']'.repeat(5_000)},`);
  const history = file(
    'deep.jsonl',
    [good, nested, line({ type: 'prompt', taskId: '2', taskPrompt: 'src/a.ts' })].join('\n'),
  );

  // Before: each of the three exited 1 with "Maximum call stack size exceeded", and no report.
  it.each([['replay'], ['facts'], ['explain', '--line', '3']])(
    '%s reports line 2 as rejected, applies the others, and exits 2',
    async (...args) => {
      const run = await runWithHeap([args[0]!, history, ...args.slice(1)]);
      expect(run.status).toBe(2);
      expect(run.stdout).toContain(
        'line 2 · rejected (too_large): the line nests arrays and objects more than 100 deep',
      );
      expect(run.stdout).toContain('src/a.ts');
      expect(run.stderr).toBe(`fact-tracker ${args[0]!}: 1 line was rejected (listed in the report)\n`);
    },
  );
});

describe('huge histories, in a small heap (issue 14, item 6)', () => {
  // 1,000,000 junk lines: the old command split the 2 MB file into an array of a million strings
  // and made a million error objects, and died of heap exhaustion (exit 134, a native stack).
  it('replays 1,000,000 junk lines in a 32 MB heap to a clean report that lists 1,000 of them', async () => {
    const junk = file('junk.jsonl', 'x\n'.repeat(1_000_000));
    const run = await runWithHeap(['replay', junk], 32);
    expect(run.status).toBe(2);
    expect(run.stderr).toBe(
      'fact-tracker replay: 1,000,000 lines were rejected (the first 1,000 listed in the report)\n',
    );
    expect(run.stdout.match(/ · rejected \(invalid_json\): /gu)).toHaveLength(1_000);
    expect(run.stdout).toContain('999,000 more lines were rejected (not listed: the report lists the first 1,000)');
    expect(run.stdout).toMatch(/· 1,000,000 rejected lines\n$/u);
  });

  // The old command split the whole file to look at its first line: 32 s and 3.3 GB for 200 MB.
  it("tells a file of a saved state's first line and 1,500,000 {} lines is a saved state from its first line, in a 32 MB heap", async () => {
    const empties = file('empties.jsonl', `{"format":"session-fact-tracker/state"}\n${'{}\n'.repeat(1_500_000)}`);
    const run = await runWithHeap(['replay', empties], 32);
    expect(run).toEqual({
      status: 1,
      stdout: '',
      stderr: `fact-tracker replay: ${empties} is a saved state, not a dispatch history: read it with fact-tracker facts ${empties}\n`,
    });
    const facts = await runWithHeap(['facts', empties]);
    expect(facts.status).toBe(1);
    expect(facts.stderr).toMatch(
      /^fact-tracker facts: .*empties\.jsonl: not a readable saved state: the JSON is truncated or corrupt \(.*\)\n$/u,
    );
  });

  it('still tells a pretty-printed or cut-short state from its first line', async () => {
    const state = JSON.stringify({ format: 'session-fact-tracker/state', version: 1, pairs: [] }, null, 2);
    const pretty = await runWithHeap(['replay', file('pretty.json', `\n\n${state}`)]);
    expect(pretty.stderr).toMatch(/is a saved state/u);
    const cut = await runWithHeap(['facts', file('cut.json', state.replace(/\n/gu, '').slice(0, 40))]);
    expect(cut.stderr).toMatch(/not a readable saved state: the JSON is truncated or corrupt/u);
  });
});

describe('a first line of millions of spaces, or a second line of a key of millions of characters', () => {
  // One pattern's loop over them, before a character outside Latin-1, overflowed the regexp stack.
  it('reads as a history whose line is rejected, or as a saved state cut short, as its text says', async () => {
    const spaces = ' '.repeat(9_000_000);
    const rejected = await runWithHeap(['replay', file('spaces.jsonl', `{${spaces}設\n`)]);
    expect([rejected.status, rejected.stderr]).toEqual([
      2,
      'fact-tracker replay: 1 line was rejected (listed in the report)\n',
    ]);
    // Spaces around the format's key, as a state cut short after them has.
    const cut = await runWithHeap(['replay', file('cut-state.json', `{ \t"format" \u3000:設\n`)]);
    expect([cut.status, cut.stderr]).toEqual([1, expect.stringMatching(/is a saved state/u)]);
    // A document opening with `{` alone whose next line's key runs for millions of characters.
    const key = await runWithHeap(['replay', file('long-key.json', `{\n"${'a'.repeat(9_000_000)}設": 1\n}\n`)]);
    expect([key.status, key.stderr]).toEqual([1, expect.stringMatching(/is a saved state/u)]);
  });
});

describe('replay - (issue 14, item 12)', () => {
  // Before: Node ends standard input at once for a directory, and the replay printed an empty report with exit 0.
  it('exits 1 with one line when standard input is a directory', async () => {
    const fd = openSync(dir, 'r');
    try {
      const run = await new Promise<CliRun>((resolve) => {
        const child = spawn(process.execPath, [MAIN, 'replay', '-'], { cwd: ROOT, stdio: [fd, 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
        child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        child.on('close', (status) => resolve({ status: status ?? -1, stdout, stderr }));
      });
      expect(run).toEqual({
        status: 1,
        stdout: '',
        stderr: 'fact-tracker replay: cannot read standard input: it is a directory\n',
      });
    } finally {
      closeSync(fd);
    }
  });
});
