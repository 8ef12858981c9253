/**
 * Running `fact-tracker context` in the context tests: through the router in-process (fast,
 * every branch), through the built router in-process on real files, or as the built binary in a
 * real process (what a user runs).
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import * as E from 'fp-ts/lib/Either.js';
import { expect } from 'vitest';
import type { CliIo } from '../../src/cli/io.js';
import { run } from '../../src/cli/run.js';
import { MAIN, runCliHere } from '../cli/runCli.js';

/** What one run did. */
export interface Ran {
  readonly status: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** The environment that turns shared context on. */
export const ON: Readonly<Record<string, string>> = { SHARED_CONTEXT_ENABLED: 'true' };

/** Runs `fact-tracker ...argv` through the router, in `cwd`, capturing the output. */
export const runIn = async (
  cwd: string,
  argv: ReadonlyArray<string>,
  env: Readonly<Record<string, string>> = ON,
): Promise<Ran> => {
  let stdout = '';
  let stderr = '';
  const io: CliIo = {
    readText: async (file) => readFile(file, 'utf8').then(E.right, () => E.left(`cannot read ${file}`)),
    writeText: async () => E.left('no files in this test'),
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    colour: false,
    stderrIsTty: false,
    version: () => E.right('9.9.9'),
    cwd,
    env,
  };
  const status = await run(argv, io);
  return { status, stdout, stderr };
};

/**
 * Runs the built `fact-tracker ...args` in this process from `cwd` (context on, no colour): the
 * code `runBinary` runs, writing real files, without a process's start.
 */
export const runBuiltIn = (cwd: string, args: ReadonlyArray<string>): Promise<Ran> =>
  runCliHere(args, undefined, { cwd, env: ON });

/** How to start the binary: its working directory, extra environment, and the user to run as. */
export interface BinaryOptions {
  readonly cwd: string;
  readonly env?: Readonly<Record<string, string>>;
  readonly uid?: number;
  readonly gid?: number;
  /** Run through `sh -c SCRIPT`, where `"$@"` is `node MAIN ...args` (to start from a deleted directory). */
  readonly shell?: string;
  /** Kill the process after this long (default 60 s): a run that hangs ends with status -1. */
  readonly timeoutMs?: number;
}

/** Runs the built `fact-tracker ...args` as a process (context on, no colour). */
export const runBinary = (args: ReadonlyArray<string>, options: BinaryOptions): Promise<Ran> =>
  new Promise((resolve) => {
    const [file, argv] =
      options.shell === undefined
        ? [process.execPath, [MAIN, ...args]]
        : ['/bin/sh', ['-c', options.shell, 'sh', process.execPath, MAIN, ...args]];
    execFile(
      file,
      argv,
      {
        cwd: options.cwd,
        env: { ...process.env, ...ON, NO_COLOR: '1', ...options.env },
        encoding: 'utf8',
        timeout: options.timeoutMs ?? 60_000,
        ...(options.uid === undefined ? {} : { uid: options.uid, gid: options.gid ?? options.uid }),
      },
      (error, stdout, stderr) =>
        resolve({ status: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr }),
    );
  });

/** A failure as the CLI reports one: exit 1, nothing on stdout, one line on stderr matching `pattern`. */
export const expectOneLineFailure = (ran: Ran, pattern: RegExp): void => {
  expect(ran.status).toBe(1);
  expect(ran.stdout).toBe('');
  expect(ran.stderr).toMatch(/^fact-tracker[^\n]*\n$/u);
  expect(ran.stderr).toMatch(pattern);
};
