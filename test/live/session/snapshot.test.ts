/**
 * The snapshot beside a session log, with real files and processes: a session opened after a
 * writer saved one starts from it and answers exactly what a replay of the whole log gives; a
 * snapshot that is missing, cut short, corrupt, of another version, or out of step with its log
 * (longer than the log, a log rewritten, replaced or set aside) is never trusted over the log;
 * writers killed at random points never leave one that is (nor do writers at once: see
 * processes.test.ts). Also the limits and resends of a live session.
 */
import { constants } from 'node:buffer';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { replayHistory, selectValidFacts } from '../../../src/index.js';
import {
  bytesToReplay,
  type LiveSession,
  MAX_OUTPUT_LENGTH,
  MAX_PROMPT_LENGTH,
  MAX_TASK_ID_LENGTH,
  openSession,
  SNAPSHOT_EVERY,
  type SessionOptions,
} from '../../../src/live/session/index.js';
import { bundledFixture } from '../../fixtures/bundled.js';
import { tempDir } from '../../tempDirs.js';

const APPENDER = fileURLToPath(new URL('./fixtures/appender.mjs', import.meta.url));

const open = async (id: string, options: SessionOptions): Promise<LiveSession> => {
  const opened = await openSession(id, options);
  if (E.isLeft(opened)) throw new Error(`${opened.left.code}: ${opened.left.message}`);
  return opened.right;
};

const right = <T>(value: E.Either<{ code: string; message: string }, T>): T => {
  if (E.isLeft(value)) throw new Error(`${value.left.code}: ${value.left.message}`);
  return value.right;
};

const AREAS = ['auth', 'billing', 'search', 'orders', 'mail', 'reports', 'admin'];

/** Writes `tasks` tasks (a prompt, an implementer result and a review each) through `session`. */
const work = async (session: LiveSession, tasks: number, first = 1, areas = AREAS): Promise<void> => {
  for (let task = first; task < first + tasks; task += 1) {
    const area = areas[task % areas.length]!;
    const taskId = String(task);
    const at = task * 60_000;
    right(await session.compileContext({ taskId, taskPrompt: `Fix the ${area} retry handling, step ${task}`, at }));
    right(
      await session.ingestResult({
        role: 'implementer',
        taskId,
        at: at + 1_000,
        output: {
          task_id: taskId,
          status: 'completed',
          summary: `Changed the ${area} retry policy (step ${task})`,
          files_changed: [`src/${area}/retry.ts`, `src/${area}/step${task}.ts`],
          tests: [{ command: `npm test -- ${area}`, passed: task % 5 !== 0 }],
        },
      }),
    );
    right(
      await session.ingestResult({
        role: 'reviewer',
        taskId,
        at: at + 2_000,
        output: {
          task_id: taskId,
          assessment: task % 3 === 0 ? 'needs_changes' : 'approved',
          issues:
            task % 3 === 0
              ? [
                  {
                    severity: 'minor',
                    file: `src/${area}/retry.ts`,
                    message: `Retry ${task} unbounded`,
                    fix: 'bound it',
                  },
                ]
              : [],
        },
      }),
    );
  }
};

/**
 * Tasks enough for a snapshot and a tail after it (24: 72 lines, the snapshot over the first 64),
 * for the tests that spoil a log (what they spoil is what the snapshot covers) or need a snapshot.
 */
const TASKS = Math.ceil(SNAPSHOT_EVERY / 3) + 2;

/**
 * A session folder whose log holds `tasks` tasks (three lines each) written through a session:
 * past SNAPSHOT_EVERY lines, so its snapshot was saved.
 */
const writtenSession = async (tasks = TASKS): Promise<{ directory: string; file: string }> => {
  const directory = tempDir('snapshot-');
  const writer = await open('s', { directory });
  await work(writer, tasks);
  expect(existsSync(`${writer.file}.snapshot`)).toBe(true);
  return { directory, file: writer.file };
};

/** One session of TASKS tasks for the tests that read it or spoil copies of it: written once. */
const sharedSession = (() => {
  let made: Promise<{ directory: string; file: string }> | undefined;
  return () => (made ??= writtenSession());
})();

/** A copy of a session folder, to spoil one file of it. */
const copyOf = (directory: string): string => {
  const copy = tempDir('snapshot-copy-');
  for (const name of readdirSync(directory)) copyFileSync(join(directory, name), join(copy, name));
  return copy;
};

/**
 * A copy of a session folder whose snapshot is of the copied log, as the writer's was of the
 * original: a copy is another file, so the header is given its identity (device and inode), the
 * one field a writer of the copy would have written otherwise. Checked usable before it is
 * returned, so a test that spoils it sees the spoiling refuse it, not the copy.
 */
const sessionCopy = async (directory: string): Promise<{ directory: string; file: string }> => {
  const copy = copyOf(directory);
  const file = join(copy, 's.jsonl');
  const { dev, ino } = statSync(file);
  for (const name of readdirSync(copy).filter((entry) => /\.snapshot(\.previous)?$/u.test(entry))) {
    const text = readFileSync(join(copy, name), 'utf8');
    const newline = text.indexOf('\n');
    const header = JSON.parse(text.slice(0, newline)) as { log: Record<string, unknown> };
    const log = { ...header.log, identity: `${dev}:${ino}` };
    writeFileSync(join(copy, name), `${JSON.stringify({ ...header, log })}${text.slice(newline)}`);
  }
  expect(await bytesToReplay('s', { directory: copy })).toBeLessThan(statSync(file).size);
  return { directory: copy, file };
};

/**
 * What a replay of the log text `log` gives, replayed once for each text: the copies of one
 * session that the tests spoil hold the same log, which each is checked against.
 */
const replayOf = (() => {
  const replays = new Map<string, ReturnType<typeof replayHistory>>();
  return (log: string): ReturnType<typeof replayHistory> => {
    const known = replays.get(log);
    if (known !== undefined) return known;
    const replayed = replayHistory(log);
    replays.set(log, replayed);
    return replayed;
  };
})();

/** What a session opened on `directory` knows, next to what a replay of its log gives. */
const reopen = async (directory: string) => {
  const session = await open('s', { directory, create: false, lockStaleMs: 2_000 });
  const log = readFileSync(join(directory, 's.jsonl'), 'utf8');
  const prompt = { taskId: 'next', taskPrompt: 'Bound the billing retry policy in src/billing/retry.ts' };
  const replayed = replayOf(log);
  const store = right(await session.snapshot());
  const explained = right(await session.explainContext(prompt));
  return { session, use: session.snapshotUse(), store, expected: replayed.store, explained, report: session.report() };
};

describe('session snapshots', { timeout: 120_000 }, () => {
  it('starts from the snapshot a writer saved, and answers exactly what a replay of the whole log gives', async () => {
    const { directory, file } = await sharedSession();
    const reader = await open('s', { directory, create: false });
    const use = reader.snapshotUse();
    expect(use.used).toBe(true);
    if (!use.used) return;
    const lines = readFileSync(file, 'utf8').split('\n').length - 1;
    expect(use.position).toBeGreaterThan(0);
    expect(use.position).toBeLessThanOrEqual(lines);
    // The tail after the snapshot is shorter than the interval between snapshots.
    const tail = lines - use.position;
    expect(tail).toBeLessThan(SNAPSHOT_EVERY);
    expect(right(await reader.snapshot())).toEqual(replayOf(readFileSync(file, 'utf8')).store);
    expect(reader.report()).toEqual({ events: 3 * TASKS, errors: [], setAside: [] });
    // The next prompt gets the section a replay of the log prints for it: asked of a reader of a
    // copy, which starts from the copy's snapshot, so that the shared log stays as its writer left it.
    const copy = await sessionCopy(directory);
    const copyReader = await open('s', { directory: copy.directory, create: false });
    const next = TASKS + 1;
    const answer = right(
      await copyReader.compileContext({
        taskId: String(next),
        taskPrompt: 'Bound the billing retry policy',
        at: next * 60_000,
      }),
    );
    const replayed = replayHistory(readFileSync(copy.file, 'utf8'));
    expect(answer.sessionContext).toBe(replayed.report.prompts.at(-1)!.sessionContext);
    expect(answer.sessionContext).not.toBe('');
  });

  it('writes in its header the format and layout number docs/formats.md gives for a snapshot', async () => {
    const { file } = await sharedSession();
    const snapshot = readFileSync(`${file}.snapshot`, 'utf8');
    const header = JSON.parse(snapshot.slice(0, snapshot.indexOf('\n'))) as Record<string, unknown>;
    const formats = readFileSync(new URL('../../../docs/formats.md', import.meta.url), 'utf8');
    const documented = /`"format":"(session-fact-tracker\/session-snapshot)"`, `"version":(\d+)`/u.exec(formats);
    expect({ format: header['format'], version: header['version'] }).toEqual({
      format: documented?.[1],
      version: Number(documented?.[2]),
    });
  });

  it('reads a log without a snapshot in pieces, the event loop turning between them (a lock it holds stays fresh), to what a replay gives', async () => {
    // The shared session's log, without its snapshot: a copy of the log is read as any log is.
    const directory = copyOf((await sharedSession()).directory);
    const file = join(directory, 's.jsonl');
    rmSync(`${file}.snapshot`);
    const lines = readFileSync(file, 'utf8').split('\n').length - 1;
    let turns = 0;
    let counting = true;
    const count = (): void => {
      turns += 1;
      if (counting) setImmediate(count);
    };
    setImmediate(count);
    const reader = await open('s', { directory, create: false });
    const store = right(await reader.snapshot());
    counting = false;
    expect(reader.snapshotUse().used).toBe(false);
    expect(store).toEqual(replayOf(readFileSync(file, 'utf8')).store);
    // 72 lines in pieces of 64: the loop turned between the two.
    expect(lines).toBe(3 * TASKS);
    expect(turns).toBeGreaterThanOrEqual(1);
  });

  it('starts from a snapshot whose facts hold text of several bytes a character (its hash is of the bytes written)', async () => {
    const directory = tempDir('snapshot-');
    const writer = await open('s', { directory });
    await work(writer, TASKS, 1, ['café', '検索', 'ünïcode', 'fusée-🚀', 'naïve']);
    expect(readFileSync(`${writer.file}.snapshot`, 'utf8')).toContain('検索');
    const reader = await open('s', { directory, create: false });
    expect(reader.snapshotUse().used).toBe(true);
    expect(right(await reader.snapshot())).toEqual(replayHistory(readFileSync(writer.file, 'utf8')).store);
  });

  it('rebuilds from the log when the snapshot is missing, cut short, corrupt, too large, of another version or another layout', async () => {
    const { directory, file } = await sharedSession();
    const snapshot = readFileSync(`${file}.snapshot`, 'utf8');
    const newline = snapshot.indexOf('\n');
    const header = JSON.parse(snapshot.slice(0, newline)) as Record<string, unknown>;
    const spoilers: ReadonlyArray<readonly [string, (target: string) => void, RegExp]> = [
      ['missing', (target) => rmSync(target), /no snapshot/u],
      ['cut short', (target) => truncateSync(target, Math.floor(snapshot.length / 2)), /cut short|corrupt/u],
      ['cut in its header', (target) => truncateSync(target, Math.floor(newline / 2)), /not JSON/u],
      [
        'a changed byte in the store',
        (target) => writeFileSync(target, snapshot.replace(/"maxValidFacts":1000/u, '"maxValidFacts":1001')),
        /corrupt/u,
      ],
      [
        'another version',
        (target) =>
          writeFileSync(target, `${JSON.stringify({ ...header, library: '0.0.0-other' })}${snapshot.slice(newline)}`),
        /version 0\.0\.0-other/u,
      ],
      [
        'another layout',
        (target) => writeFileSync(target, `${JSON.stringify({ ...header, version: 99 })}${snapshot.slice(newline)}`),
        /layout/u,
      ],
      ['empty', (target) => writeFileSync(target, ''), /not JSON/u],
      // Sparse: longer than any string the engine makes, so never read (nor held in memory).
      ['too large to read', (target) => truncateSync(target, constants.MAX_STRING_LENGTH + 1), /too large/u],
      ['a directory', (target) => (rmSync(target), mkdirSync(target)), /cannot be read/u],
    ];
    for (const [what, spoil, reason] of spoilers) {
      const copy = copyOf(directory);
      spoil(join(copy, 's.jsonl.snapshot'));
      const { use, store, expected, report } = await reopen(copy);
      expect([what, use.used]).toEqual([what, false]);
      if (!use.used) expect([what, use.reason]).toEqual([what, expect.stringMatching(reason)]);
      expect(store).toEqual(expected);
      expect(report).toEqual({ events: 3 * TASKS, errors: [], setAside: [] });
    }
  });

  it('rebuilds from the log when a snapshot whose hash matches holds a state that is not one (a crafted file, a buggy writer), and answers calls', async () => {
    const { directory, file } = await sharedSession();
    const snapshot = readFileSync(`${file}.snapshot`, 'utf8');
    const newline = snapshot.indexOf('\n');
    const header = JSON.parse(snapshot.slice(0, newline)) as Record<string, unknown>;
    const body = snapshot.slice(newline + 1);
    /**
     * The snapshot with its state edited, for the log `log` (a copy is another file), its
     * header's length and hash made to match: only the state's shape is wrong.
     */
    const resealed = (log: string, edit: (state: string) => string): string => {
      const state = edit(body);
      expect(state).not.toBe(body);
      const { dev, ino } = statSync(log);
      const sha256 = createHash('sha256').update(state).digest('hex');
      const covered = { ...(header['log'] as Record<string, unknown>), identity: `${dev}:${ino}` };
      return `${JSON.stringify({ ...header, log: covered, state: { length: state.length, sha256 } })}\n${state}`;
    };
    const spoilers: ReadonlyArray<readonly [string, (state: string) => string]> = [
      ['pair logs that are no map', (state) => state.replace('"pairs":{"n":', '"pairs":{"n":"x","was":')],
      ['no history pairs', (state) => state.replace('"historyPairs":', '"historyPairs":null,"was":')],
      ['a bound that is not a number', (state) => state.replace('"maxValidFacts":1000', '"maxValidFacts":"1000"')],
      ['a bound of no facts', (state) => state.replace('"maxValidFacts":1000', '"maxValidFacts":0')],
      ['an index without its task ids', (state) => state.replace('"taskIds":', '"taskIdz":')],
      ['an index whose count is text', (state) => state.replace(/"nextDoc":(\d+)/u, '"nextDoc":"$1"')],
      [
        'a store that is an array',
        (state) => state.replace('"store":{"maxValidFacts"', '"store":[],"was":{"maxValidFacts"'),
      ],
    ];
    for (const [what, edit] of spoilers) {
      const copy = copyOf(directory);
      writeFileSync(join(copy, 's.jsonl.snapshot'), resealed(join(copy, 's.jsonl'), edit));
      const { session, use, store, expected, explained, report } = await reopen(copy);
      expect([what, use.used]).toEqual([what, false]);
      if (!use.used) expect([what, use.reason]).toEqual([what, expect.stringMatching(/store/u)]);
      expect(store).toEqual(expected);
      expect(explained.length).toBeGreaterThan(0);
      expect(report).toEqual({ events: 3 * TASKS, errors: [], setAside: [] });
      // A call that records is answered, and writes a snapshot the next open uses.
      const prompt = { taskId: '41', taskPrompt: 'Bound the billing retry policy', at: 41 * 60_000 };
      const answer = right(await session.compileContext(prompt));
      expect(answer.sessionContext).toBe(
        replayOf(readFileSync(join(copy, 's.jsonl'), 'utf8')).report.prompts.at(-1)!.sessionContext,
      );
      expect([what, (await reopen(copy)).use]).toEqual([what, { used: true, position: 3 * TASKS + 1 }]);
    }
  });

  it('never trusts a snapshot over a log that is shorter, rewritten, replaced or set aside', async () => {
    // Each case on a copy of its own, whose snapshot is the copy's.
    const spoilers: ReadonlyArray<readonly [string, (log: string) => void, RegExp]> = [
      [
        'cut to fewer lines than the snapshot covers',
        (log) => writeFileSync(log, readFileSync(log, 'utf8').split('\n').slice(0, 30).join('\n') + '\n'),
        /shorter/u,
      ],
      [
        'rewritten in place, as long or longer',
        (log) => {
          const text = readFileSync(log, 'utf8');
          writeFileSync(log, text.replaceAll('retry', 'RETRY'));
        },
        /rewritten/u,
      ],
      [
        'replaced by another file',
        (log) => {
          writeFileSync(`${log}.new`, readFileSync(log));
          renameSync(`${log}.new`, log);
        },
        /replaced/u,
      ],
    ];
    const { directory: original } = await sharedSession();
    for (const [what, spoil, reason] of spoilers) {
      const { directory } = await sessionCopy(original);
      expect((await reopen(directory)).use.used).toBe(true);
      spoil(join(directory, 's.jsonl'));
      const { use, store, expected, explained } = await reopen(directory);
      expect([what, use.used]).toEqual([what, false]);
      if (!use.used) expect([what, use.reason]).toEqual([what, expect.stringMatching(reason)]);
      expect(store).toEqual(expected);
      expect(explained.length).toBeGreaterThan(0);
    }
    // A log set aside and a new session begun under the same id: the old snapshot is not the new log's.
    const { directory: copy } = await sessionCopy(original);
    renameSync(join(copy, 's.jsonl'), join(copy, 's.jsonl.old'));
    const fresh = await open('s', { directory: copy });
    await work(fresh, 2, 100);
    const { use, store, expected } = await reopen(copy);
    expect(use.used).toBe(false);
    expect(store).toEqual(expected);
    expect(right(await fresh.snapshot())).toEqual(expected);
  });

  it('never trusts a snapshot over a log changed in place anywhere in what it covers, a file name in the middle of 450 KB included', async () => {
    const directory = tempDir('snapshot-');
    const file = join(directory, 's.jsonl');
    // 300 results of about 1.5 KB each (most of it prose before the result), written as a
    // history: a log far longer than its first and last 64 KiB.
    const prose = 'Worked through the step. '.repeat(60);
    const lines = Array.from({ length: 300 }, (_, i) => {
      const taskId = String(i + 1);
      const result = {
        task_id: taskId,
        status: 'completed',
        summary: `Step ${taskId}`,
        files_changed: [`src/m${taskId.padStart(4, '0')}.ts`],
      };
      const output = `${prose}\nBEGIN_DISPATCH_RESULT\n${JSON.stringify(result)}\nEND_DISPATCH_RESULT`;
      return JSON.stringify({ type: 'dispatch', role: 'implementer', taskId, at: (i + 1) * 1_000, output });
    });
    writeFileSync(file, `${lines.join('\n')}\n`);
    // A reader past 256 lines saves a snapshot over the whole log.
    right(await (await open('s', { directory, create: false })).snapshot());
    expect((await open('s', { directory, create: false })).snapshotUse()).toEqual({ used: true, position: 300 });
    // One file name in the line in the middle of the log, changed in place: same file, same length.
    const log = readFileSync(file);
    expect(log.length).toBeGreaterThan(400_000);
    const middle = log.indexOf('src/m0150.ts');
    expect(middle / log.length).toBeGreaterThan(0.45);
    expect(middle / log.length).toBeLessThan(0.55);
    const handle = openSync(file, 'r+');
    writeSync(handle, 'src/M0150.ts', middle);
    closeSync(handle);
    const { use, store, expected } = await reopen(directory);
    expect(use).toEqual({ used: false, reason: expect.stringMatching(/rewritten/u) });
    expect(store).toEqual(expected);
    expect(selectValidFacts(store).some((fact) => fact.subject === 'src/M0150.ts')).toBe(true);
  });

  it('never saves a snapshot certifying a log changed in place after its writer read it: the next process reads the change, as replay does', async () => {
    const directory = tempDir('snapshot-');
    const file = join(directory, 's.jsonl');
    // A result whose role was mistyped: the line is rejected, and its facts are not applied.
    const result = { task_id: '1', status: 'completed', summary: 'Added the cache', files_changed: ['src/cache.ts'] };
    writeFileSync(
      file,
      `${JSON.stringify({ type: 'dispatch', role: 'implementor', taskId: '1', at: 1_000, result })}\n`,
    );
    // A writer that stays open, as an MCP server does, reads the line...
    const writer = await open('s', { directory, create: false });
    expect(writer.report().errors.map(({ line, code }) => [line, code])).toEqual([[1, 'invalid_field']]);
    // ...which is then fixed by hand, in place: same file, same length.
    const log = readFileSync(file);
    const handle = openSync(file, 'r+');
    writeSync(handle, 'implementer', log.indexOf('implementor'));
    closeSync(handle);
    // The writer goes on past SNAPSHOT_EVERY lines, and saves a snapshot of the state it holds.
    for (let i = 0; i < SNAPSHOT_EVERY; i += 1)
      right(await writer.invalidateFact({ subject: `src/gone${i}.ts`, relation: 'modified_by', at: 2_000 + i }));
    expect(existsSync(`${file}.snapshot`)).toBe(true);
    const { use, store, expected, report } = await reopen(directory);
    expect(use).toEqual({ used: false, reason: expect.stringMatching(/rewritten/u) });
    expect(report.errors).toEqual([]);
    expect(store).toEqual(expected);
    expect(selectValidFacts(store).some((fact) => fact.subject === 'src/cache.ts')).toBe(true);
  });

  it('bytesToReplay gives the log an open would replay: what follows a usable snapshot, else the whole log', async () => {
    const { directory, file } = await sharedSession();
    const session = await open('s', { directory, create: false });
    const use = session.snapshotUse();
    expect(use.used).toBe(true);
    const covered = use.used ? readFileSync(file, 'utf8').split('\n').slice(0, use.position).join('\n').length + 1 : 0;
    if (use.used) expect(await bytesToReplay('s', { directory })).toBe(statSync(file).size - covered);
    expect(await bytesToReplay('absent', { directory })).toBeUndefined();
    expect(await bytesToReplay('../s', { directory })).toBeUndefined();
    // A snapshot its header refuses, or a log it no longer fits: the whole log, as the open replays it.
    const spoilers: ReadonlyArray<readonly [string, (log: string) => void]> = [
      ['no snapshot', (log) => rmSync(`${log}.snapshot`)],
      [
        'another version',
        (log) => {
          const text = readFileSync(`${log}.snapshot`, 'utf8');
          const newline = text.indexOf('\n');
          const header = JSON.parse(text.slice(0, newline)) as Record<string, unknown>;
          writeFileSync(
            `${log}.snapshot`,
            `${JSON.stringify({ ...header, library: '0.0.0-other' })}${text.slice(newline)}`,
          );
        },
      ],
      ['a header cut short', (log) => truncateSync(`${log}.snapshot`, 100)],
      ['a log rewritten', (log) => writeFileSync(log, readFileSync(log, 'utf8').replaceAll('retry', 'RETRY'))],
    ];
    for (const [what, spoil] of spoilers) {
      const { directory: spoiled, file: log } = await sessionCopy(directory);
      spoil(log);
      expect([what, await bytesToReplay('s', { directory: spoiled })]).toEqual([what, statSync(log).size]);
      expect([what, (await open('s', { directory: spoiled, create: false })).snapshotUse().used]).toEqual([
        what,
        false,
      ]);
    }
  });

  it('ignores and clears the temporary file of a writer killed while it wrote the snapshot', async () => {
    // A snapshot over the first 64 lines, then 75 more: past the next one, which clears the file.
    const { directory, file } = await sessionCopy((await sharedSession()).directory);
    const leftover = `${file}.snapshot.99999.1.tmp`;
    writeFileSync(leftover, readFileSync(`${file}.snapshot`, 'utf8').slice(0, 1000));
    const session = await open('s', { directory, create: false });
    expect(session.snapshotUse().used).toBe(true);
    await work(session, 25, 200);
    expect(existsSync(leftover)).toBe(false);
    expect(readdirSync(directory).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    expect((await reopen(directory)).use.used).toBe(true);
  });

  it('stays trustworthy when writers are killed at random points (writers at once: processes.test.ts)', async () => {
    const root = tempDir('snapshot-kill-');
    // Three writers, each in a folder of its own, killed at once, each at a random line past its
    // second snapshot: each reopen waits for its killed writer's lock to go stale (2 s), so the
    // waits overlap. A writer's hundreds of appends are most of this file's CPU.
    const killedRun = async (run: number): Promise<void> => {
      const directory = join(root, `run${run}`);
      const child = spawn(process.execPath, [bundledFixture(APPENDER), directory, 's', `k${run}`, '2000', '2000'], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      // Past a few snapshots: each is saved once SNAPSHOT_EVERY lines were written since the last.
      const target = SNAPSHOT_EVERY * 2 + Math.floor(Math.random() * SNAPSHOT_EVERY * 2);
      await new Promise<void>((resolve, reject) => {
        let seen = 0;
        child.stdout.on('data', (chunk: Buffer) => {
          seen += chunk.toString().split('appending ').length - 1;
          if (seen >= target) resolve();
        });
        child.on('exit', () => reject(new Error('the writer exited before it was killed')));
      });
      child.kill('SIGKILL');
      await new Promise((resolve) => child.on('close', resolve));
      const { use, store, expected, report } = await reopen(directory);
      // A snapshot is there (at least two were saved) and used, or, cut in its write, the old one is.
      expect([run, use.used]).toEqual([run, true]);
      expect(store).toEqual(expected);
      expect(report.errors).toEqual([]);
    };
    await Promise.all(Array.from({ length: 3 }, (_, run) => killedRun(run)));
  });
});

describe('a live session’s limits and resends', () => {
  it('refuses a task id over the limit for prompts and results alike, and prompts and outputs over theirs, writing nothing', async () => {
    const directory = tempDir('limits-');
    const session = await open('s', { directory, clock: () => 1_000 });
    const long = 'x'.repeat(MAX_TASK_ID_LENGTH + 1);
    const ok = 'x'.repeat(MAX_TASK_ID_LENGTH);
    const result = { task_id: ok, status: 'completed', summary: 'done' };
    const refused = [
      await session.compileContext({ taskId: long, taskPrompt: 'a prompt' }),
      await session.ingestResult({ role: 'implementer', taskId: long, output: result }),
      await session.explainContext({ taskId: long, taskPrompt: 'a prompt' }),
      await session.compileContext({ taskId: '1', taskPrompt: 'p'.repeat(MAX_PROMPT_LENGTH + 1) }),
      await session.ingestResult({ role: 'implementer', taskId: '1', output: 'o'.repeat(MAX_OUTPUT_LENGTH + 1) }),
      await session.ingestResult({
        role: 'implementer',
        taskId: '1',
        output: { ...result, notes: 'n'.repeat(MAX_OUTPUT_LENGTH) },
      }),
      await session.ingestResult({
        role: 'implementer',
        taskId: '1',
        output: { ...result, deep: JSON.parse(`${'['.repeat(10_000)}${']'.repeat(10_000)}`) as unknown },
      }),
    ];
    expect(refused.map((answer) => (E.isLeft(answer) ? answer.left.code : 'accepted'))).toEqual([
      'invalid_field',
      'invalid_field',
      'invalid_field',
      'prompt_too_large',
      'output_too_large',
      'output_too_large',
      'too_large',
    ]);
    expect(existsSync(session.file)).toBe(false);
    // At the limits themselves, both are taken.
    right(await session.compileContext({ taskId: ok, taskPrompt: 'p'.repeat(MAX_PROMPT_LENGTH) }));
    expect(right(await session.ingestResult({ role: 'implementer', taskId: ok, output: result })).facts.length).toBe(2);
  });

  it('recognizes a result sent again without a time as the last result of its task, and nothing else', async () => {
    const directory = tempDir('resend-');
    let now = 1_000;
    const session = await open('s', { directory, clock: () => (now += 1_000) });
    const first = {
      role: 'implementer',
      taskId: '1',
      output: { task_id: '1', status: 'completed', summary: 'a' },
    } as const;
    const second = { ...first, output: { ...first.output, summary: 'b' } };
    const recorded = right(await session.ingestResult(first));
    const log = readFileSync(session.file, 'utf8');
    expect(right(await session.ingestResult(first))).toEqual({
      line: recorded.line,
      duplicate: true,
      facts: [],
      warnings: [],
    });
    expect(readFileSync(session.file, 'utf8')).toBe(log);
    // Another session object (another process) sees it the same way.
    const other = await open('s', { directory, clock: () => (now += 1_000) });
    expect(right(await other.ingestResult(first)).duplicate).toBe(true);
    // Another role, another output, or the first output again after a second one: recorded.
    expect(
      right(
        await session.ingestResult({ ...first, role: 'reviewer', output: { task_id: '1', assessment: 'approved' } }),
      ).duplicate,
    ).toBe(false);
    expect(right(await session.ingestResult(second)).duplicate).toBe(false);
    expect(right(await session.ingestResult(first)).duplicate).toBe(false);
    expect(
      right(await session.ingestResult({ ...first, taskId: '2', output: { ...first.output, task_id: '2' } })).duplicate,
    ).toBe(false);
    expect(session.report().events).toBe(5);
  });
});
