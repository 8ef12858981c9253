/**
 * Runs the built binary as a user would: `node dist/cli/main.js ...` in a child process, with
 * stdout and stderr captured (so neither is a terminal: no colour, no progress).
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
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

/** A project (a git work tree) with its sessions folder made and empty. */
export const projectWithSessions = (prefix: string): { project: string; sessions: string } => {
  const project = tempDir(prefix);
  mkdirSync(join(project, '.git'));
  const sessions = join(project, '.fact-tracker', 'sessions');
  mkdirSync(sessions, { recursive: true });
  return { project, sessions };
};
