/**
 * How many git processes each `fact-tracker context` subcommand starts in a plain repository,
 * counted with git's own trace (`GIT_TRACE` to a file: one `built-in` line per git process)
 * while the command runs through the router in-process. Each costs 10 to 15 ms when started
 * from a large process (an app server, a test worker): a query asked twice in one command, or
 * one more per command, fails here.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Ran, runBinary, runIn } from './cliRun.js';
import { makeRepo, tempDir } from './repo.js';

/** Runs `fact-tracker context ...argv` in `repo` and returns what it did with the git command lines it started. */
const traced = async (repo: string, argv: ReadonlyArray<string>): Promise<Ran & { readonly git: string[] }> => {
  const trace = join(tempDir('git-trace-'), 'trace');
  const before = process.env['GIT_TRACE'];
  // runGit passes the process's environment on to git; the tests of this file run one at a time.
  process.env['GIT_TRACE'] = trace;
  try {
    const ran = await runIn(repo, ['context', ...argv]);
    const lines = readFileSync(trace, 'utf8').split('\n');
    return { ...ran, git: lines.flatMap((line) => /trace: built-in: (git .*)$/u.exec(line)?.[1] ?? []) };
  } finally {
    if (before === undefined) delete process.env['GIT_TRACE'];
    else process.env['GIT_TRACE'] = before;
    rmSync(trace, { force: true });
  }
};

/** The command lines of `git` that appear more than once. */
const repeated = (git: ReadonlyArray<string>): string[] =>
  [...new Set(git.filter((line, i) => git.indexOf(line) !== i))].sort();

describe('git processes per context subcommand', () => {
  it('starts at most 7 git processes per subcommand, 10 for a first checkpoint, and asks no query twice', async () => {
    const repo = makeRepo();
    // Each step runs on the state the one before left: a first read, a first write, then writes and reads of a stored context.
    const steps: ReadonlyArray<readonly [string, ReadonlyArray<string>, number]> = [
      ['show', ['show'], 7],
      ['bundle', ['bundle'], 7],
      ['first checkpoint', ['checkpoint', '--summary', 'first'], 10],
      ['second checkpoint', ['checkpoint', '--summary', 'second'], 7],
      ['claim', ['claim', 'Implemented the parser', '--file', 'src/parser.ts:L1'], 7],
      ['record-failure', ['record-failure', '--failed-step', 'tests', '--error', 'e', '--next-action', 'n'], 7],
      ['show of a stored context', ['show'], 7],
      ['bundle of a stored context', ['bundle'], 7],
    ];
    for (const [name, argv, bound] of steps) {
      const ran = await traced(repo, argv);
      expect({ name, status: ran.status, stderr: ran.stderr }).toEqual({ name, status: 0, stderr: '' });
      const said = `${name} ran:\n${ran.git.join('\n')}`;
      expect(ran.git.length, said).toBeGreaterThan(0);
      expect(ran.git.length, said).toBeLessThanOrEqual(bound);
      // A first checkpoint reads the working tree again under the lock: what it records is the state as it is then.
      const rereads =
        name === 'first checkpoint'
          ? [
              "git ls-files --others --exclude-standard -z -- . ':(exclude,literal)data/context'",
              'git ls-files -s -t -z',
              'git status --porcelain=v2 --branch -z --untracked-files=no --ignore-submodules=untracked',
            ]
          : [];
      expect(
        repeated(ran.git).filter((line) => !rereads.includes(line)),
        said,
      ).toEqual([]);
    }
  });
});

describe('git asked by the shared context', () => {
  it('never prompts at a terminal: every git process runs with GIT_TERMINAL_PROMPT=0, whatever the caller set', async () => {
    const repo = makeRepo();
    // A git on PATH that logs the variable each call gets, then runs the real one.
    const dir = tempDir('git-prompt-');
    const log = join(dir, 'prompt.log');
    const real = execFileSync('/bin/sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    writeFileSync(
      join(dir, 'git'),
      `#!/bin/sh\necho "$1 \${GIT_TERMINAL_PROMPT-unset}" >> '${log}'\nexec '${real}' "$@"\n`,
      { mode: 0o755 },
    );
    const env = { PATH: `${dir}:${process.env['PATH'] ?? ''}`, GIT_TERMINAL_PROMPT: '1' };
    expect(
      (await runBinary(['context', 'checkpoint', '--summary', 'Parser checked.'], { cwd: repo, env })).status,
    ).toBe(0);
    expect((await runBinary(['context', 'show'], { cwd: repo, env })).status).toBe(0);
    const calls = readFileSync(log, 'utf8').trim().split('\n');
    expect(calls.length).toBeGreaterThan(5);
    expect(calls.filter((call) => !call.endsWith(' 0'))).toEqual([]);
  });
});
