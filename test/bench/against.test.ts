/**
 * `npm run bench:against` as a user meets it: a base that is missing, empty or not built ends
 * the run before a build runs, with one line and exit status 2.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../cli/runCli.js';
import { bundledFixture } from '../fixtures/bundled.js';
import { tempDir } from '../tempDirs.js';

/**
 * `npm run bench:against -- ...args`, bounded: a run that goes on times both builds for minutes.
 * Bundled as tsx would compile it and run by node, without the loader's start (see eval/cli.test.ts).
 */
const against = (...args: string[]) =>
  spawnSync(process.execPath, [bundledFixture(join(ROOT, 'bench', 'against.ts')), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 30_000,
  });

describe('npm run bench:against, on a bad base', () => {
  it('a --base that is missing or empty exits 2 before a build runs', () => {
    // Empty, the base was the working folder: this build timed against itself, unsaid.
    for (const args of [[], ['--base='], ['--base', '']]) {
      const run = against(...args, '--only=retrieval', '--runs=1');
      expect(run.status).toBe(2);
      expect(run.stderr.split('\n')[0]).toBe('bench:against: --base=DIR is required');
      expect(run.stdout).toBe('');
    }
  });

  it('a --base without a build exits 2 naming what is missing', () => {
    const base = tempDir('against-base-');
    const run = against(`--base=${base}`, '--only=retrieval', '--runs=1');
    expect(run.status).toBe(2);
    expect(run.stderr.split('\n')[0]).toBe(
      `bench:against: ${join(base, 'dist', 'cli', 'main.js')} is missing: build the base first`,
    );
  });
});
