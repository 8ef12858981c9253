/**
 * Runs the built binary as a user would: `node dist/cli/main.js ...` in a child process, with
 * stdout and stderr captured (so neither is a terminal: no colour, no progress).
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import * as E from 'fp-ts/lib/Either.js';
import { number } from '../../src/base/count.js';
import type { CliIo } from '../../src/cli/io.js';
import { tempDir } from '../tempDirs.js';

/** The repository root. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The built entry point the `fact-tracker` bin points to. */
export const MAIN = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

/** What one run of the binary did. */
export interface CliRun {
  readonly status: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Where a run happens: its working directory, and its environment (then exactly these variables and PATH). */
export interface RunPlace {
  readonly cwd?: string;
  readonly env?: Readonly<Record<string, string>>;
  /** The user the command runs as (root may run it as another, whom file modes bind). */
  readonly uid?: number;
}

/** Runs `fact-tracker ...args` from the repository root (or `place.cwd`), feeding `input` on stdin. */
export const runCli = (args: ReadonlyArray<string>, input?: string, place: RunPlace = {}): Promise<CliRun> => {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run "npm run build" first (npm test does it)`);
  return new Promise((resolve) => {
    const env: NodeJS.ProcessEnv =
      place.env === undefined
        ? { ...process.env, NO_COLOR: '1' }
        : { PATH: process.env['PATH'] ?? '', NO_COLOR: '1', ...place.env };
    const child = execFile(
      process.execPath,
      [MAIN, ...args],
      {
        cwd: place.cwd ?? ROOT,
        env,
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
        ...(place.uid === undefined ? {} : { uid: place.uid }),
      },
      (error, stdout, stderr) => {
        const status = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        resolve({ status, stdout, stderr });
      },
    );
    child.stdin?.end(input ?? '');
  });
};

type Router = typeof import('../../src/cli/run.js');
type NodeIo = typeof import('../../src/cli/nodeIo.js');

/**
 * Runs `fact-tracker ...args` as `runCli` does, but through the built router in this process:
 * the same compiled code and real files, with `input` as standard input and the output
 * captured, without a process's start-up. For the many cases of one behaviour, beside runs of
 * the binary itself where the process matters (its streams, signals, concurrent writers).
 */
export const runCliHere = async (
  args: ReadonlyArray<string>,
  input?: string,
  place: RunPlace = {},
): Promise<CliRun> => {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run "npm run build" first (npm test does it)`);
  const [{ run }, { createNodeIo }] = (await Promise.all([
    import(new URL('../../dist/cli/run.js', import.meta.url).href),
    import(new URL('../../dist/cli/nodeIo.js', import.meta.url).href),
  ])) as [Router, NodeIo];
  let stdout = '';
  let stderr = '';
  const { stdio: _stdio, outliveReader: _outlive, statusIfCut: _cut, ...files } = createNodeIo();
  const stdin = Buffer.from(input ?? '');
  const io: CliIo = {
    ...files,
    readText: (file, maxBytes) =>
      file !== '-'
        ? files.readText(file, maxBytes)
        : Promise.resolve(
            maxBytes !== undefined && stdin.length > maxBytes
              ? E.left(`cannot read standard input: it is larger than the ${number(maxBytes)} bytes it may have`)
              : E.right(stdin.toString('utf8')),
          ),
    openStream: (file, options) =>
      file !== '-' || files.openStream === undefined
        ? (files.openStream?.(file, options) ?? Promise.resolve(E.left('no streams')))
        : Promise.resolve(
            E.right({
              chunks: (async function* () {
                yield new Uint8Array(stdin);
              })(),
            }),
          ),
    stdout: (text) => (stdout += text),
    stdoutBytes: (bytes) => (stdout += Buffer.from(bytes).toString('utf8')),
    // The streams a protocol is spoken over (`fact-tracker mcp`): `input`, then its end.
    stdio: {
      input: Readable.from(stdin.length === 0 ? [] : [stdin], { objectMode: false }),
      output: new Writable({
        write: (chunk: Buffer, _encoding, done) => {
          stdout += chunk.toString('utf8');
          done();
        },
      }),
    },
    stderr: (text) => (stderr += text),
    drain: async () => undefined,
    colour: false,
    stderrIsTty: false,
    stdinIsTty: false,
    stdinIsFolder: false,
    cwd: place.cwd ?? ROOT,
    env:
      place.env === undefined
        ? { ...process.env, NO_COLOR: '1' }
        : { PATH: process.env['PATH'] ?? '', NO_COLOR: '1', ...place.env },
  };
  const status = await run(args, io);
  return { status, stdout, stderr };
};

/**
 * The events of the history `file`, `rounds` times over, each round's tasks renamed (`0-1`,
 * `1-1`, ...) and without times: a longer history of the same kind, as JSON Lines.
 */
export const historyRounds = (file: string, rounds: number): string[] => {
  const events = readFileSync(file, 'utf8').trim().split('\n');
  return Array.from({ length: rounds }, (_, round) =>
    events.map((line) => {
      const { at: _at, ...event } = JSON.parse(line) as Record<string, unknown>;
      return JSON.stringify({ ...event, taskId: `${round}-${String(event['taskId'])}` });
    }),
  ).flat();
};

/**
 * Runs `fact-tracker ...args` from the repository root with a reader of its standard output that
 * takes the first piece and goes, as `| head` does; resolves to its exit status and standard error.
 */
export const runCliCut = (args: ReadonlyArray<string>): Promise<{ status: number | null; stderr: string }> => {
  const child = spawn(process.execPath, [MAIN, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout.once('data', () => child.stdout.destroy());
  return new Promise((resolve) => child.on('close', (status) => resolve({ status, stderr })));
};

/** How `runCliUnder` runs the binary. */
export interface ShellPlace {
  /** A line of `sh` run first, which the process inherits: `umask 022`, `ulimit -f 64`. */
  readonly setup: string;
  /** Killed (SIGKILL: a process blocked in a read ends no other way) past this; its status then -1. */
  readonly timeoutMs: number;
}

/**
 * Runs `fact-tracker ...args` from the repository root as `runCli` does, after `place.setup`
 * (which may give it another standard input), with its standard input left open.
 */
export const runCliUnder = (args: ReadonlyArray<string>, place: ShellPlace): Promise<CliRun> => {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run "npm run build" first (npm test does it)`);
  const child = spawn('sh', ['-c', `${place.setup}; exec "$0" "$@"`, process.execPath, MAIN, ...args], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: '1' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), place.timeoutMs);
  return new Promise((resolve) =>
    child.on('close', (status) => {
      clearTimeout(timer);
      child.stdin.destroy();
      resolve({ status: status ?? -1, stdout, stderr });
    }),
  );
};

/** A project (a git work tree) with its sessions folder made and empty. */
export const projectWithSessions = (prefix: string): { project: string; sessions: string } => {
  const project = tempDir(prefix);
  mkdirSync(join(project, '.git'));
  const sessions = join(project, '.fact-tracker', 'sessions');
  mkdirSync(sessions, { recursive: true });
  return { project, sessions };
};
