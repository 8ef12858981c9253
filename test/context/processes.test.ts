/**
 * Durability across processes, with real child processes running the built library: writers
 * at once lose nothing, and a writer killed at any moment leaves a whole file.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as E from 'fp-ts/lib/Either.js';
import * as O from 'fp-ts/lib/Option.js';
import { describe, expect, it } from 'vitest';
import { loadContext, writeContext } from '../../src/context/node/index.js';
import { decodeContextFile } from '../../src/context/schema.js';
import { bundledFixture } from '../fixtures/bundled.js';
import { runBinary } from './cliRun.js';
import { makeRepo } from './repo.js';

const DIST = fileURLToPath(new URL('../../dist/index.js', import.meta.url));
const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

const start = (script: string, ...args: string[]): ChildProcess => {
  if (!existsSync(DIST)) throw new Error(`${DIST} is missing: run "npm run build" first (npm test does it)`);
  return spawn(process.execPath, [bundledFixture(fixture(script)), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
};

/** Resolves with the exit code (or the signal) and what the child wrote on stderr. */
const exited = (child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> =>
  new Promise((resolve) => {
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    // On close, not exit: a child's streams may still hold its last words when it exits.
    child.on('close', (code, signal) => resolve({ code, signal, stderr }));
  });

/** Resolves when the child announces its `count`-th write (it writes right after saying so). */
const writing = (child: ChildProcess, count: number): Promise<void> =>
  new Promise((resolve, reject) => {
    let seen = 0;
    child.stdout?.on('data', (chunk: Buffer) => {
      seen += chunk.toString().split('writing ').length - 1;
      if (seen >= count) resolve();
    });
    child.on('exit', () => reject(new Error('the writer exited on its own')));
  });

/** Resolves when the child has said `word` on stdout. */
const saying = (child: ChildProcess, word: string): Promise<void> =>
  new Promise((resolve, reject) => {
    let said = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      said += chunk.toString();
      if (said.includes(word)) resolve();
    });
    child.on('exit', () => reject(new Error(`the child exited without saying ${word}`)));
  });

/** The claims stored in the planning context of `repo`. */
const storedClaims = async (repo: string): Promise<string[]> => {
  const loaded = await loadContext({ kind: 'planning', cwd: repo, enabled: true });
  return E.isRight(loaded) && O.isSome(loaded.right)
    ? loaded.right.value.context.evidenceLedger.map((entry) => entry.claim).sort()
    : [];
};

describe.concurrent('context files across processes', () => {
  it('loses no update when two processes write at once', async () => {
    const repo = makeRepo();
    const writers = ['alpha', 'beta'].map((name) => start('writer.mjs', repo, name, '3'));
    const results = await Promise.all(writers.map(exited));
    expect(results.map((result) => [result.code, result.stderr])).toEqual(results.map(() => [0, '']));
    expect(await storedClaims(repo)).toEqual(
      ['alpha', 'beta'].flatMap((name) => [0, 1, 2].map((i) => `${name} looked at step ${i}`)).sort(),
    );
  });

  it.for(['always', 'locked'])(
    'a first write refused (%s) while others wait for its lock leaves them the folder: every valid writer succeeds',
    async (mode) => {
      // No data/context/ yet. The refused writer holds the lock (mode locked), or is refused
      // before making the folder (mode always), while two valid writers start: one to take the
      // lock after it, one to wait behind that one.
      const repo = makeRepo();
      const refuser = start('refuser.mjs', repo, mode, '3000');
      const refused = exited(refuser);
      await saying(refuser, 'refusing');
      const valid = await Promise.all([1, 2].map((i) => runBinary(['context', 'claim', `note ${i}`], { cwd: repo })));
      expect(valid.map((ran) => [ran.status, ran.stderr])).toEqual(valid.map(() => [0, '']));
      expect(await refused).toMatchObject({ code: 1, stderr: 'refused on purpose\n' });
      expect(await storedClaims(repo)).toEqual(['note 1', 'note 2']);
    },
  );

  it('a first write refused before any folder is made leaves no trace', async () => {
    const repo = makeRepo();
    const refused = await exited(start('refuser.mjs', repo, 'always', '0'));
    expect(refused).toMatchObject({ code: 1, stderr: 'refused on purpose\n' });
    expect(existsSync(join(repo, 'data'))).toBe(false);
  });

  it('leaves the old file or the new one, never a broken one, when a writer is killed mid-write', async () => {
    const repo = makeRepo();
    // A first write makes the folder, so the change below runs once a write, under the lock.
    expect(
      E.isRight(
        await writeContext(
          { kind: 'planning', cwd: repo, enabled: true },
          { status: 'failed', failedStep: 's', error: 'e', nextAction: 'n' },
        ),
      ),
    ).toBe(true);
    const child = start('rewriter.mjs', repo);
    const done = exited(child);
    // Killed a few milliseconds into its second write (iteration 1): in the middle of writing files.
    await writing(child, 2);
    await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 6)));
    child.kill('SIGKILL');
    expect((await done).signal).toBe('SIGKILL');
    const file = decodeContextFile(
      JSON.parse(readFileSync(join(repo, 'data', 'context', 'planning_context.json'), 'utf8')),
      'planning',
    );
    if (E.isLeft(file)) throw new Error(file.left.message);
    const [context] = file.right.contexts;
    const mark = context!.featureRequest;
    // The write it was killed in landed whole, or not at all: one iteration throughout. Which one
    // depends on how far the writer got before the signal landed (on a loaded machine, past the
    // second write).
    expect(mark).toMatch(/^iteration \d+$/u);
    expect(context!.workingSummary.text.startsWith(`${mark} `)).toBe(true);
    expect(context!.evidenceLedger.every((entry) => entry.claim.startsWith(`${mark} claim `))).toBe(true);
    expect(E.isRight(await loadContext({ kind: 'planning', cwd: repo, enabled: true }))).toBe(true);
  });
});
