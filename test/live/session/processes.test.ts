/**
 * The session log across real processes running the built library: writers at once lose
 * nothing, all end on the same store and leave snapshots that are trusted, and a writer killed at any moment never leaves a log
 * that cannot be opened; a call whose flush failed after its line was written (a disk error
 * injected into the real system call, or where strace cannot into the call that makes it), sent
 * again, is its one event.
 */
import { execFile, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { replayHistory } from '../../../src/index.js';
import { openSession } from '../../../src/live/session/index.js';
import { bundledFixture } from '../../fixtures/bundled.js';
import { tempDir } from '../../tempDirs.js';

const DIST = fileURLToPath(new URL('../../../dist/live/session/index.js', import.meta.url));
const APPENDER = fileURLToPath(new URL('./fixtures/appender.mjs', import.meta.url));

/** What a finished child said and how it ended. */
interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Starts an appender: NAME appends COUNT events to SESSION in DIRECTORY, then waits for TOTAL;
 * with `gate` ("path:k"), it waits after k appends until path exists.
 */
const appender = (
  directory: string,
  session: string,
  name: string,
  count: number,
  total: number,
  options: { readonly big?: boolean; readonly gate?: string } = {},
) => {
  if (!existsSync(DIST)) throw new Error(`${DIST} is missing: run "npm run build" first (npm test does it)`);
  const child = spawn(
    process.execPath,
    [
      bundledFixture(APPENDER),
      directory,
      session,
      name,
      String(count),
      String(total),
      ...(options.big === true ? ['big'] : []),
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(options.gate === undefined ? {} : { env: { ...process.env, GATE: options.gate } }),
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exit = new Promise<Exit>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, exit, announced: () => stdout.split('appending ').length - 1 };
};

/**
 * Resolves once the child has printed `word` `count` times: "appending " before each append, or
 * "waiting" at its gate.
 */
const saying = (writer: ReturnType<typeof appender>, word: string, count: number): Promise<void> =>
  new Promise((resolve, reject) => {
    let seen = 0;
    writer.child.stdout?.on('data', (chunk: Buffer) => {
      seen += chunk.toString().split(word).length - 1;
      if (seen >= count) resolve();
    });
    // With what it said on stderr: why it stopped is the failure to read.
    void writer.exit.then(({ code, signal, stderr }) =>
      reject(new Error(`the writer exited (${code ?? signal}) before it said "${word}" ${count} times: ${stderr}`)),
    );
  });

const digest = (value: unknown): string => createHash('sha256').update(JSON.stringify(value)).digest('hex');

/** Runs `work` over `items`, at most `width` at a time (the next starts as soon as one ends); the results in their order. */
const atMostAtOnce = async <T, R>(
  items: ReadonlyArray<T>,
  width: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> => {
  const results: R[] = [];
  let next = 0;
  const lane = async (): Promise<void> => {
    for (let i = next++; i < items.length; i = next++) results[i] = await work(items[i]!);
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, lane));
  return results;
};

/** True when `strace` can run here and make a system call of a process fail (it needs ptrace). */
const canInject =
  spawnSync('strace', ['-f', '-qq', '-o', '/dev/null', '-e', 'inject=fdatasync:error=EIO', 'true']).status === 0;

/**
 * Where strace cannot inject (not installed, as on a clean Debian machine, or no ptrace in a
 * container), the same failure one level up: a module loaded before the script makes the calls
 * `failing` numbers (`N` or `N..M`, as strace's `when=`) of `fs.fdatasyncSync`, the one call
 * the library flushes file data with, throw EIO, as the failed system call makes it throw.
 */
const failingFlushesModule = (failing: string): string => {
  const [first, last = first] = failing.split('..').map(Number);
  const code = `import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
const flush = fs.fdatasyncSync;
let calls = 0;
fs.fdatasyncSync = (fd) => {
  calls += 1;
  if (calls >= ${first} && calls <= ${last})
    throw Object.assign(new Error('EIO: i/o error, fdatasync'), { errno: -5, code: 'EIO', syscall: 'fdatasync' });
  return flush(fd);
};
syncBuiltinESMExports();`;
  return `data:text/javascript,${encodeURIComponent(code)}`;
};

/**
 * Runs `script` (a module body with `lib`, the built session entry, and `directory` in scope)
 * in a process whose flushes of file data (fdatasync) number `failing` fail with EIO, as a
 * failing disk makes them fail (in the system call with strace, else in `fs.fdatasyncSync`);
 * resolves to what it printed on stdout, parsed.
 */
const withFailingFlushes = (directory: string, failing: string, script: string): Promise<unknown> =>
  new Promise((resolve, reject) => {
    const body = `const lib = await import(${JSON.stringify(bundledFixture(DIST))}); const directory = ${JSON.stringify(directory)};\n${script}`;
    const node = ['--input-type=module', '-e', body];
    const [command, args] = canInject
      ? [
          'strace',
          ['-f', '-qq', '-o', '/dev/null', '-e', 'trace=fdatasync', '-e', `inject=fdatasync:error=EIO:when=${failing}`]
            .concat(process.execPath)
            .concat(node),
        ]
      : [process.execPath, ['--import', failingFlushesModule(failing), ...node]];
    execFile(command, args, { encoding: 'utf8' }, (error, stdout, stderr) =>
      error === null ? resolve(JSON.parse(stdout)) : reject(new Error(`${error.message}${stderr}`)),
    );
  });

describe('a session whose flush fails after the write (EIO injected into fdatasync)', () => {
  it('answers the same call sent again as its one event, durable first, never writing it twice', async () => {
    if (!existsSync(DIST)) throw new Error(`${DIST} is missing: run "npm run build" first (npm test does it)`);
    const [prompts, results] = await Promise.all([
      // A prompt without a time (the clock's): sent again, it is recorded again unless it is this retry.
      withFailingFlushes(
        tempDir('flush-'),
        '1..2',
        `const session = (await lib.openSession('s', { directory })).right;
        const prompt = { taskId: '1', taskPrompt: 'Add rate limiting to src/login.ts' };
        const answers = [];
        for (let i = 0; i < 4; i += 1) {
          const answer = await session.compileContext(prompt);
          answers.push(answer._tag === 'Left' ? answer.left.code : [answer.right.line, answer.right.duplicate]);
        }
        const { readFileSync } = await import('node:fs');
        console.log(JSON.stringify({ answers, log: readFileSync(session.file, 'utf8').split('\\n').filter(Boolean).map((line) => JSON.parse(line).type) }));`,
      ),
      // A result with its time: sent again, it is this call's own event and its facts, not a resend.
      withFailingFlushes(
        tempDir('flush-'),
        '1',
        `const session = (await lib.openSession('s', { directory })).right;
        const result = { role: 'implementer', taskId: '1', at: 1000, output: { task_id: '1', status: 'completed', summary: 'Limited logins', files_changed: ['src/login.ts'] } };
        const first = await session.ingestResult(result);
        const again = await session.ingestResult(result);
        const { readFileSync } = await import('node:fs');
        console.log(JSON.stringify({
          first: first._tag === 'Left' ? first.left.code : 'recorded',
          again: again._tag === 'Left' ? again.left : { line: again.right.line, duplicate: again.right.duplicate, facts: again.right.facts.length },
          lines: readFileSync(session.file, 'utf8').split('\\n').filter(Boolean).length,
        }));`,
      ),
    ]);
    // The first flush fails (io), so does the flush that checks the retry (io, nothing written),
    // the next retry is the event on line 1, and only a prompt sent after that is a new event.
    expect(prompts).toEqual({ answers: ['io', 'io', [1, false], [2, false]], log: ['prompt', 'prompt'] });
    expect(results).toEqual({ first: 'io', again: { line: 1, duplicate: false, facts: 3 }, lines: 1 });
  });
});

describe('session logs across processes', () => {
  it('loses nothing when 4 processes append 60 events each, all at once; every process ends on the same store, and the snapshots they saved are trusted', async () => {
    const directory = tempDir('sessions-');
    // Let go together once all have started: a process takes longer to start than its appends take.
    const gate = join(tempDir('gate-'), 'go');
    const [writers, each] = [4, 60];
    const total = writers * each;
    const runs = Array.from({ length: writers }, (_, i) =>
      appender(directory, 'shared', `w${i}`, each, total, { gate: `${gate}:0` }),
    );
    await Promise.all(runs.map((run) => saying(run, 'waiting', 1)));
    writeFileSync(gate, '');
    const exits = await Promise.all(runs.map((run) => run.exit));
    expect(exits.map((exit) => [exit.code, exit.stderr])).toEqual(exits.map(() => [0, '']));

    const log = readFileSync(join(directory, 'shared.jsonl'), 'utf8');
    const { report, store } = replayHistory(log);
    expect(report.errors).toEqual([]);
    expect(report.summary.events).toBe(total);
    // Every event of every writer is there once: its task and kind appear exactly once.
    const events = log
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const keys = new Set(
      events.map(
        (event) =>
          `${String(event['type'])} ${String(event['taskId'] ?? event['subject'])} ${String(event['relation'])}`,
      ),
    );
    expect(keys.size).toBe(total);
    // Every process ends on the store the log replays to.
    const digests = exits.map((exit) => /done (\d+) ([0-9a-f]+)/u.exec(exit.stdout)?.slice(1));
    expect(digests).toEqual(exits.map(() => [String(total), digest(store)]));
    // The snapshots they saved as they went (the log passed SNAPSHOT_EVERY lines three times) are
    // trusted: a session opened now starts from one, on that same store.
    const opened = await openSession('shared', { directory, create: false });
    if (E.isLeft(opened)) throw new Error(opened.left.message);
    expect(opened.right.snapshotUse().used).toBe(true);
    const snapshot = await opened.right.snapshot();
    expect(E.isRight(snapshot) && snapshot.right).toEqual(store);
    expect(opened.right.report()).toEqual({ events: total, errors: [], setAside: [] });
  }, 180_000);

  it('never leaves a log that cannot be opened when a writer is killed at random points (12 runs)', async () => {
    const root = tempDir('killed-');
    // Twelve runs hold each kind of run three times or more: six writers of 256 KB lines (a kill
    // inside a write), three logs that also lose the end of their last line, three plain ones,
    // each killed after 1 to 12 appends and a random delay. A writer's start is most of a run's CPU.
    const runs = Array.from({ length: 12 }, (_, i) => i);
    // All at once: a run waits mostly on its killed writer's lock going stale (2 s), so the waits
    // overlap, with each other and with the other runs' starts.
    const outcomes = await atMostAtOnce(runs, 12, async (run) => {
      const directory = join(root, `run${run}`);
      // Half the writers append 256 KB results, so a kill often lands inside a write.
      const writer = appender(directory, 'killed', `k${run}`, 1_000, 1_000, { big: run % 2 === 0 });
      await saying(writer, 'appending ', 1 + Math.floor(Math.random() * 12));
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 15));
      writer.child.kill('SIGKILL');
      const exit = await writer.exit;
      expect(exit.signal).toBe('SIGKILL');
      // Every append that returned (each announced one but the last) is in the log.
      const returned = writer.announced() - 1;
      const file = join(directory, 'killed.jsonl');
      // Every fourth run also loses the end of its last line, as a crash of the machine would.
      if (run % 4 === 1 && existsSync(file)) {
        const size = readFileSync(file).length;
        if (size > 2) truncateSync(file, size - 1 - Math.floor(Math.random() * Math.min(size - 1, 200)));
      }
      const opened = await openSession('killed', { directory, create: true, lockStaleMs: 2_000 });
      if (E.isLeft(opened)) throw new Error(opened.left.message);
      const session = opened.right;
      const report = session.report();
      const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
      const replayed = replayHistory(text);
      // Opened: every complete line applied, no line corrupt, at most the one torn line set aside.
      expect(report.errors).toEqual([]);
      expect(replayed.report.errors).toEqual([]);
      expect(report.setAside.length).toBeLessThanOrEqual(1);
      expect(text === '' || text.endsWith('\n')).toBe(true);
      expect(report.events).toBe(replayed.report.summary.events);
      if (run % 4 !== 1) expect(report.events).toBeGreaterThanOrEqual(returned);
      const snapshot = await session.snapshot();
      expect(E.isRight(snapshot) && snapshot.right).toEqual(replayed.store);
      return { session, torn: report.setAside.length };
    });
    // The killed writers may have held the lock: a new append waits until it counts as abandoned, then goes on.
    await Promise.all(
      outcomes.map(async ({ session }) => {
        const added = await session.invalidateFact({ subject: 'task:x', relation: 'summary' });
        expect(E.isRight(added)).toBe(true);
        expect(replayHistory(readFileSync(session.file, 'utf8')).report.errors).toEqual([]);
      }),
    );
    expect(outcomes.length).toBe(12);
  }, 180_000);
});
