/**
 * The shared context where git and the file system do what teams do every day (issue 28):
 * hand-edited and teammate-written files, symbolic links and devices, non-UTF-8 names, sparse
 * checkouts, unresolved merges, lock leftovers and commands run outside git. Real files, real
 * git repositories and real processes; each `it` names the item of the issue it covers.
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { withFileLock } from '../../src/context/node/files.js';
import { writeContext } from '../../src/context/node/store.js';
import { MAIN } from '../cli/runCli.js';
import { expectOneLineFailure, type Ran, runBinary, runIn } from './cliRun.js';
import { commitAll, git, makeRepo, readJson, tempDir, writeFiles } from './repo.js';
import { errorOf, loadedOf } from './results.js';

const CONTEXT_JSON = ['data', 'context', 'planning_context.json'];
/** These tests run git and node processes; their assertions count outcomes, never time. */
const SLOW = { timeout: 120_000 } as const;

/** A context of schema version 1 as a teammate's tool or a hand edit may leave it. */
const storedContext = (workstream: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  key: { repo: 'app', branch: 'main', workstream_id: workstream },
  feature_request: `Feature ${workstream}`,
  checkpoint: null,
  pinned_rules: ['Repository state beats memory: if the summary is stale, read the changed files first.'],
  working_summary: { text: `Summary of ${workstream}.`, updated_at: null, stale: true },
  open_decisions: [],
  checklist: [],
  evidence_ledger: [],
  last_run: null,
  recent_failures: [],
  ...extra,
});

const contextFile = (...contexts: ReadonlyArray<Record<string, unknown>>): string =>
  `${JSON.stringify({ schema_version: 1, kind: 'planning', repository: { id: 'app', source: 'folder' }, contexts }, null, 2)}\n`;

describe.concurrent('hand-edited and teammate-written files', SLOW, () => {
  it('18: a time with an offset is read, and a write to another workstream keeps both', async () => {
    const repo = makeRepo();
    writeFiles(repo, {
      'data/context/planning_context.json': contextFile(
        storedContext('a', {
          working_summary: { text: 'Edited by hand.', updated_at: '2026-01-01T10:00:00+00:00', stale: true },
          last_run: { status: 'succeeded', at: '2026-01-01T12:30:00.5-02:00' },
        }),
        storedContext('b'),
      ),
    });
    const show = await runIn(repo, ['context', 'show', '--workstream', 'a', '--branch', 'main']);
    expect(show.status).toBe(0);
    expect(show.stdout).toContain('summary (updated 2026-01-01T10:00:00.000Z)');
    expect(show.stdout).toContain('last run: succeeded at 2026-01-01T14:30:00.500Z');
    const claim = await runIn(repo, ['context', 'claim', 'Looked at b', '--workstream', 'b', '--branch', 'main']);
    expect(claim.status).toBe(0);
    expect(claim.stderr).not.toMatch(/corrupt|moved aside|warning/u);
    const file = readJson(join(repo, ...CONTEXT_JSON)) as { contexts: Array<{ key: { workstream_id: string } }> };
    expect(file.contexts.map((context) => context.key.workstream_id)).toEqual(['a', 'b']);
  });
});

/** `repo` after `git merge other` stopped on conflicts: `other` and `main` each ran `change` after a common base. */
const mergeStoppedOn = async (repo: string, change: (side: 'main' | 'other') => Promise<void>): Promise<void> => {
  git(repo, 'checkout', '-q', '-b', 'other');
  await change('other');
  commitAll(repo, 'other side');
  git(repo, 'checkout', '-q', 'main');
  await change('main');
  commitAll(repo, 'main side');
  expect(() => git(repo, 'merge', '-q', 'other')).toThrow();
};

describe.concurrent('merge conflicts', SLOW, () => {
  it('6, 10: a side written by a newer schema is refused and left as it is; the hint names the kind', async () => {
    const repo = makeRepo();
    const IMPLEMENTATION_JSON = join(repo, 'data', 'context', 'implementation_context.json');
    const options = (kind: 'planning' | 'implementation', now: number) => ({
      kind,
      cwd: repo,
      branch: 'main',
      enabled: true,
      now: () => now,
    });
    for (const kind of ['planning', 'implementation'] as const)
      loadedOf(await writeContext(options(kind, 1_000), { status: 'succeeded', summary: 'Base.' }));
    commitAll(repo, 'base context');
    await mergeStoppedOn(repo, async (side) => {
      const now = side === 'main' ? 3_000 : 2_000;
      for (const kind of ['planning', 'implementation'] as const)
        loadedOf(await writeContext(options(kind, now), { status: 'succeeded', summary: `From ${side}.` }));
      if (side === 'other') {
        const file = join(repo, ...CONTEXT_JSON);
        writeFileSync(file, readFileSync(file, 'utf8').replace('"schema_version": 1', '"schema_version": 2'));
      }
    });
    const file = join(repo, ...CONTEXT_JSON);
    const before = readFileSync(file, 'utf8');
    expect(before).toMatch(/^<<<<<<< /mu);
    for (const argv of [
      ['context', 'show'],
      ['context', 'resolve'],
      ['context', 'claim', 'Looked at the parser'],
    ])
      expectOneLineFailure(
        await runIn(repo, argv),
        /^fact-tracker context: data\/context\/planning_context\.json: has merge conflict markers, and (our|their) side was written with schema version 2, newer than the 1 .*upgrade it and run fact-tracker context resolve \(the file was left as it is\)\n$/u,
      );
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect(readdirSync(join(repo, 'data', 'context')).filter((name) => name.endsWith('.corrupt'))).toEqual([]);
    expectOneLineFailure(
      await runIn(repo, ['context', 'bundle', '--kind', 'implementation']),
      /ours holds workstreams default \(branch main\); theirs holds .*; run fact-tracker context resolve --kind implementation \(or any write\)/u,
    );
    expect((await runIn(repo, ['context', 'resolve', '--kind', 'implementation'])).status).toBe(0);
    expect(readFileSync(IMPLEMENTATION_JSON, 'utf8')).not.toMatch(/^<<<<<<< /mu);
  });
});

describe.concurrent('claims and their evidence', SLOW, () => {
  it('13: "No regressions, fixed ..." and "Fixes ..." need evidence; a negated claim does not', async () => {
    const repo = makeRepo();
    for (const claim of ['No regressions, fixed the parser', 'Fixes the parser'])
      expectOneLineFailure(
        await runBinary(['context', 'claim', claim], { cwd: repo }),
        /^fact-tracker context: claim refused: ".*" says the work is done but gives no evidence/u,
      );
    for (const claim of ["The parser isn't fixed yet", 'Looked at how to fix the parser'])
      expect((await runIn(repo, ['context', 'claim', claim])).status).toBe(0);
  });
});

/** Runs the built `fact-tracker ...args` in `cwd` with `input` on its standard input (the flag left to the config file). */
const runWithInput = (args: ReadonlyArray<string>, cwd: string, input: string): Promise<Ran> =>
  new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [MAIN, ...args],
      { cwd, env: { ...process.env, SHARED_CONTEXT_ENABLED: '', NO_COLOR: '1' }, encoding: 'utf8', timeout: 60_000 },
      (error, stdout, stderr) =>
        resolve({ status: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr }),
    );
    child.stdin?.end(input);
  });

describe.concurrent('the config file', SLOW, () => {
  it('4: a link to a FIFO, to /dev/stdin or out of the repository is refused in one line; nothing hangs or turns on', async () => {
    const repo = makeRepo();
    const config = join(repo, 'fact-tracker.config.json');
    const unset = { SHARED_CONTEXT_ENABLED: '' };
    execFileSync('mkfifo', [join(repo, 'pipe')]);
    symlinkSync(join(repo, 'pipe'), config);
    expectOneLineFailure(
      await runBinary(['context', 'show'], { cwd: repo, env: unset }),
      /^fact-tracker context: fact-tracker\.config\.json is a FIFO \(named pipe\), not a regular file: refusing to read it\n$/u,
    );
    unlinkSync(config);
    symlinkSync('/dev/stdin', config);
    const fromStdin = await runWithInput(
      ['context', 'claim', 'From stdin'],
      repo,
      '{"sharedContext": {"enabled": true}}',
    );
    expectOneLineFailure(
      fromStdin,
      /^fact-tracker context: fact-tracker\.config\.json is a symbolic link to .*: refusing/u,
    );
    unlinkSync(config);
    const outside = join(tempDir('outside-'), 'config.json');
    writeFileSync(outside, '{"sharedContext": {"enabled": true}}');
    symlinkSync(outside, config);
    expectOneLineFailure(
      await runIn(repo, ['context', 'claim', 'From outside'], {}),
      /^fact-tracker context: fact-tracker\.config\.json is a symbolic link to .*, outside the repository: refusing/u,
    );
    expect(existsSync(join(repo, 'data'))).toBe(false);
  });

  it('4: a context file that is a FIFO is refused, not waited on', async () => {
    const repo = makeRepo();
    mkdirSync(join(repo, 'data', 'context'), { recursive: true });
    execFileSync('mkfifo', [join(repo, ...CONTEXT_JSON)]);
    for (const argv of [
      ['context', 'show'],
      ['context', 'claim', 'hello'],
    ])
      expectOneLineFailure(
        await runIn(repo, argv),
        /^fact-tracker context: data\/context\/planning_context\.json: is a FIFO \(named pipe\), not a regular file/u,
      );
  });
});

describe.concurrent('locks', SLOW, () => {
  it('14: a file where the lock belongs, and a lock dated in the future, are named at once, not waited on', async () => {
    const repo = makeRepo();
    const lock = join(repo, 'data', 'context', 'planning_context.json.lock');
    mkdirSync(join(repo, 'data', 'context'), { recursive: true });
    writeFileSync(lock, '');
    const longAgo = new Date(Date.now() - 3_600_000);
    for (const when of [new Date(), longAgo]) {
      utimesSync(lock, when, when);
      expectOneLineFailure(
        await runBinary(['context', 'claim', 'hello'], { cwd: repo }),
        /^fact-tracker context: data\/context\/planning_context\.json\.lock is a file, not a lock .*: remove it and try again\n$/u,
      );
    }
    unlinkSync(lock);
    mkdirSync(lock);
    const ahead = new Date(Date.now() + 3_600_000);
    utimesSync(lock, ahead, ahead);
    expectOneLineFailure(
      await runIn(repo, ['context', 'claim', 'hello']),
      /^fact-tracker context: data\/context\/planning_context\.json\.lock is dated .*, 3[56]\d\d s in the future: no writer on this machine holds it .*remove the folder and try again\n$/u,
    );
    expect(existsSync(join(repo, ...CONTEXT_JSON))).toBe(false);
  });

  it('14: a writer waits for a held lock as long as it is told to, not less', async () => {
    const repo = makeRepo();
    const file = join(repo, ...CONTEXT_JSON);
    mkdirSync(join(repo, 'data', 'context'), { recursive: true });
    // Another process holds the lock (and keeps it fresh) until it is killed.
    const holder = spawn(
      process.execPath,
      [
        '-e',
        `require('proper-lockfile').lockSync(${JSON.stringify(file)}, { realpath: false, stale: 10000, update: 1000 }); console.log('held'); setInterval(() => {}, 1000);`,
      ],
      { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise((resolve) => holder.stdout.once('data', resolve));
    try {
      const waitMs = 3_000;
      const started = Date.now();
      const result = await withFileLock(file, waitMs, async () => E.right('took it'));
      const waited = Date.now() - started;
      expect(errorOf(result).message).toMatch(/another writer held it for the whole wait \(3 s\)/u);
      expect(waited).toBeGreaterThanOrEqual(waitMs);
    } finally {
      holder.kill('SIGKILL');
    }
  });
});

describe.concurrent('outside git', SLOW, () => {
  it('16: claim and record-failure are refused like checkpoint, and create nothing in the folder', async () => {
    const dir = tempDir('not-a-repo-');
    for (const argv of [
      ['context', 'claim', 'Looked at the parser'],
      ['context', 'record-failure', '--failed-step', 'tests', '--error', '2 failing', '--next-action', 'fix them'],
      ['context', 'checkpoint', '--summary', 'Parser read.'],
    ])
      expectOneLineFailure(
        await runBinary(argv, { cwd: dir }),
        /^fact-tracker context: .* is not in a git repository: .*nothing was written/u,
      );
    expect(readdirSync(dir)).toEqual([]);
    expect((await runIn(dir, ['context', 'show'])).stdout).toMatch(/not a git repository/u);
  });
});

describe.concurrent('bundle --facts', SLOW, () => {
  it('15: a file that is not a history is said on stderr with exit 2, as facts says it; nothing quoted', async () => {
    const repo = makeRepo();
    const notes = join(tempDir('facts-'), 'notes.txt');
    writeFileSync(notes, 'hunter2 is the password\nsecond line\n');
    const ran = await runBinary(['context', 'bundle', '--facts', notes], { cwd: repo });
    expect(ran.status).toBe(2);
    expect(ran.stdout).toMatch(/^\[Context Bundle\] planning/u);
    expect(ran.stderr).toMatch(
      /^fact-tracker context: --facts .*notes\.txt: 2 lines were rejected, the first at line 1 \(is it a dispatch history\? fact-tracker facts .*notes\.txt lists them\); the bundle holds the facts of the other lines\n$/u,
    );
    expect(ran.stderr).not.toContain('hunter2');
    expect((await runBinary(['facts', notes], { cwd: repo })).status).toBe(2);
  });
});
