/**
 * The shared context where git and the file system do what teams do every day (issue 28):
 * hand-edited and teammate-written files, symbolic links and devices, non-UTF-8 names, sparse
 * checkouts, unresolved merges, lock leftovers and commands run outside git. Real files, real
 * git repositories and real processes; each `it` names the item of the issue it covers.
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import {
  closeSync,
  constants,
  existsSync,
  chmodSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import lockfile from 'proper-lockfile';
import { describe, expect, it } from 'vitest';
import { writeContext } from '../../src/context/node/index.js';
import { LOCK_STALE_MS } from '../../src/context/node/files.js';
import { withFileLock } from '../../src/node/lock.js';
import { MAIN } from '../cli/runCli.js';
import { expectOneLineFailure, type Ran, runBinary, runBuiltIn, runIn } from './cliRun.js';
import { commitAll, copiesOf, git, makeRepo, readJson, tempDir, writeFiles } from './repo.js';
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

/** A copy of one repository with a checkpoint of its committed work, made once per test file. */
const checkpointedCopy = copiesOf(async () => {
  const repo = makeRepo();
  expect((await runIn(repo, ['context', 'checkpoint', '--summary', 'Parser.'])).status).toBe(0);
  return repo;
});

// One suite, so that every test of the file runs concurrently with the others (each waits on git and processes).
describe.concurrent('issue 28: guards', SLOW, () => {
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
          await runIn(repo, ['context', 'claim', claim]),
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
    it('4: a FIFO in place of a tracked file counts as a change, and nothing waits on it', async () => {
      const repo = await checkpointedCopy();
      unlinkSync(join(repo, 'src', 'parser.ts'));
      execFileSync('mkfifo', [join(repo, 'src', 'parser.ts')]);
      const shown = await runBuiltIn(repo, ['context', 'show']);
      expect(shown.status).toBe(0);
      expect(shown.stdout).toContain('STALE: tracked files changed');
      expect(shown.stdout).toMatch(/^ {2}M src\/parser\.ts$/mu);
      const saved = await runBuiltIn(repo, ['context', 'checkpoint', '--summary', 'Over a pipe.']);
      expect(saved.status).toBe(0);
      expect(saved.stderr).toContain('uncommitted edits of src/parser.ts');
    });

    it('4: a FIFO named .gitignore on the way to data/context/ is named in a warning; nothing waits on it', async () => {
      const repo = await checkpointedCopy();
      for (const fifo of ['.gitignore', 'data/context/.gitignore']) {
        const file = join(repo, ...fifo.split('/'));
        rmSync(file, { force: true });
        execFileSync('mkfifo', [file]);
        const warning = `${fifo} is a FIFO (named pipe), not a regular file: git would wait on it for its ignore rules; remove it`;
        for (const argv of [
          ['context', 'show'],
          ['context', 'bundle'],
          ['context', 'claim', `Beside ${fifo}`],
        ]) {
          const ran = await runBuiltIn(repo, argv);
          expect(ran.status).toBe(0);
          if (argv[1] === 'claim') expect(ran.stderr).toContain(warning);
        }
        unlinkSync(file);
      }
    });

    it('4: a FIFO at .git/info/exclude (also as a linked worktree shares it) is named in one line; nothing waits on it', async () => {
      const repo = await checkpointedCopy();
      const worktree = join(tempDir('worktree-'), 'linked');
      git(repo, 'worktree', 'add', '-q', '-b', 'linked', worktree);
      const exclude = join(repo, '.git', 'info', 'exclude');
      rmSync(exclude, { force: true });
      execFileSync('mkfifo', [exclude]);
      const runs = [
        ...[
          ['context', 'show'],
          ['context', 'bundle'],
          ['context', 'claim', 'Beside the FIFO'],
        ].map((argv) => ({
          argv,
          cwd: repo,
          shown: '.git/info/exclude',
        })),
        { argv: ['context', 'show'], cwd: worktree, shown: exclude },
      ];
      // The linked worktree's run as a process; the others in this one, on the same files.
      const ran = await Promise.all(
        runs.map(({ argv, cwd }) =>
          cwd === repo ? runBuiltIn(cwd, argv) : runBinary(argv, { cwd, timeoutMs: 20_000 }),
        ),
      );
      // A git that did open it (and waits still) is given its end before the FIFO goes.
      try {
        closeSync(openSync(exclude, constants.O_WRONLY | constants.O_NONBLOCK));
      } catch {
        // No reader waits on it (ENXIO): nothing to end.
      }
      unlinkSync(exclude);
      for (const [index, { shown }] of runs.entries())
        expect(ran[index]).toEqual({
          status: 1,
          stdout: '',
          stderr: `fact-tracker context: ${shown} is a FIFO (named pipe), not a regular file: git would wait on it for its ignore rules; remove it\n`,
        });
      expect((await runIn(repo, ['context', 'show'])).stdout).toContain('summary verified');
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
          await runIn(repo, ['context', 'claim', 'hello']),
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

    it('14: a writer stopped past the stale time while holding the lock writes nothing over the writer that took it over', async () => {
      const repo = await checkpointedCopy();
      const file = join(repo, ...CONTEXT_JSON);
      // A file of some MiB: a writer stopped as it starts reading it has not written yet.
      const stored = readJson(file) as { contexts: Array<{ key: { workstream_id: string } }> };
      const [first] = stored.contexts;
      stored.contexts = Array.from({ length: 600 }, (_, i) => ({
        ...structuredClone(first!),
        key: { ...first!.key, workstream_id: `w${i}` },
        working_summary: { text: 'word '.repeat(800).trim(), updated_at: null, stale: true },
      }));
      stored.contexts.push(first!);
      writeFileSync(file, `${JSON.stringify(stored, null, 2)}\n`);
      const lock = `${file}.lock`;
      const stopped = spawn(process.execPath, [MAIN, 'context', 'claim', 'Stopped writer'], {
        cwd: repo,
        env: { ...process.env, SHARED_CONTEXT_ENABLED: 'true' },
        stdio: 'ignore',
      });
      let running = true;
      const exited = new Promise<number | null>((resolve) =>
        stopped.on('exit', (code) => {
          running = false;
          resolve(code);
        }),
      );
      while (running && !existsSync(lock)) await new Promise((resolve) => setTimeout(resolve, 2));
      // Stopped holding what it read: under the lock a writer reads the file twice (its head for the
      // key it recorded, then all of it to change it), and is stopped at each read (a read moves the
      // access time, set back here before each) and let go after the first. Where the file system
      // keeps no access times, it is stopped once it has ended.
      const { mtime } = statSync(file);
      for (const read of [1, 2]) {
        utimesSync(file, new Date(0), mtime);
        if (read > 1) stopped.kill('SIGCONT');
        while (running && statSync(file).atimeMs === 0) await new Promise((resolve) => setTimeout(resolve, 1));
        stopped.kill('SIGSTOP');
      }
      // The lock as its holder leaves it when it stops a refresh interval (half the stale time) after
      // its last refresh: the other writer waits for it to turn stale, half the stale time, and
      // takes it over; the stopped writer is held for longer than that (until the other is done).
      // A writer that has released the lock (it read and wrote before it was stopped, its exit not
      // yet seen here) has nothing left to write over: the other writer then finds no lock.
      const lastRefresh = new Date(Date.now() - LOCK_STALE_MS / 2);
      if (running) {
        try {
          utimesSync(lock, lastRefresh, lastRefresh);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        }
      }
      const other = await runBinary(['context', 'claim', 'Writer that took over'], { cwd: repo });
      stopped.kill('SIGCONT');
      const stoppedStatus = await exited;
      const after = readJson(file) as {
        contexts: Array<{ key: { workstream_id: string }; evidence_ledger: Array<{ claim: string }> }>;
      };
      const claims = after.contexts
        .filter((context) => context.key.workstream_id === 'default')
        .flatMap((context) => context.evidence_ledger.map((entry) => entry.claim));
      // Whoever said it recorded its claim did: nothing reported as stored is lost.
      expect(other.status).toBe(0);
      expect(claims).toContain('Writer that took over');
      if (stoppedStatus === 0) expect(claims).toContain('Stopped writer');
    });

    it('14: a writer waits for a held lock as long as it is told to, not less', async () => {
      const repo = makeRepo();
      const file = join(repo, ...CONTEXT_JSON);
      mkdirSync(join(repo, 'data', 'context'), { recursive: true });
      // Another holder keeps the lock fresh until it is released: a lock is a folder on disk, so the
      // waiter finds it held just as it finds another process's.
      const release = await lockfile.lock(file, { realpath: false, stale: 10_000, update: 1_000 });
      try {
        const waitMs = 3_000;
        const started = Date.now();
        const result = await withFileLock(file, { staleMs: 10_000, waitMs }, async () => E.right('took it'));
        const waited = Date.now() - started;
        expect(errorOf(result).message).toMatch(
          /another writer held it for the whole wait \(3 s\); try again once it is done$/u,
        );
        expect(waited).toBeGreaterThanOrEqual(waitMs);
      } finally {
        await release();
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
          await runIn(dir, argv),
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
      expect((await runBuiltIn(repo, ['facts', notes])).status).toBe(2);
      // Its name is the user's, whatever it holds: the line stays one, with no escape in it.
      const named = join(tempDir('facts-'), 'bad\u001b[31m\ndir.txt');
      writeFileSync(named, 'second line\n');
      const hostile = await runIn(repo, ['context', 'bundle', '--facts', named]);
      expect(hostile.status).toBe(2);
      expect(hostile.stderr).toMatch(
        /^fact-tracker context: --facts .*bad \[31m dir\.txt: 1 line was rejected, [^\n\u001b]*\n$/u,
      );
    });

    it('15: the count of rejected lines is grouped in thousands, as facts and replay group theirs', async () => {
      const repo = makeRepo();
      const notes = join(tempDir('facts-'), 'notes.txt');
      writeFileSync(notes, Array.from({ length: 1_005 }, (_, i) => `line ${i}\n`).join(''));
      const ran = await runIn(repo, ['context', 'bundle', '--facts', notes]);
      expect(ran.status).toBe(2);
      expect(ran.stderr).toMatch(/: 1,005 lines were rejected, the first at line 1 /u);
    });
  });

  const AWS_KEY_ID = 'AKIAIOSFODNN7EXAMPLE';
  const GITHUB_TOKEN = `ghp_${'a1B2c3D4e5'.repeat(4).slice(0, 36)}`;

  describe.concurrent('what teammates committed', SLOW, () => {
    it('5: a secret already in the file is redacted from every read, said on stderr, and blocks every write, named', async () => {
      const repo = makeRepo();
      writeFiles(repo, {
        'data/context/planning_context.json': contextFile(
          storedContext('a', {
            working_summary: { text: `Deploy with ${AWS_KEY_ID}.`, updated_at: null, stale: true },
            evidence_ledger: [{ claim: `Pushed with ${GITHUB_TOKEN}`, files: [], symbols: [] }],
          }),
          storedContext('b'),
        ),
      });
      commitAll(repo, 'a teammate’s context');
      const file = join(repo, ...CONTEXT_JSON);
      const before = readFileSync(file, 'utf8');
      for (const argv of [
        ['context', 'bundle', '--workstream', 'a'],
        ['context', 'show', '--workstream', 'a'],
        ['context', 'show', '--workstream', 'a', '--json'],
      ]) {
        const ran = await runIn(repo, argv);
        expect(ran.status).toBe(0);
        expect(ran.stdout).not.toContain(AWS_KEY_ID);
        expect(ran.stdout).not.toContain(GITHUB_TOKEN);
        expect(ran.stdout).toContain('[redacted: an AWS access key id]');
        expect(ran.stderr).toMatch(
          /^fact-tracker context: warning: data\/context\/planning_context\.json holds what looks like an AWS access key id in contexts\[0\]\.working_summary\.text: it is redacted here; remove it from the file/mu,
        );
        expect(ran.stderr).not.toContain(AWS_KEY_ID);
      }
      const claim = await runIn(repo, ['context', 'claim', 'Looked at b', '--workstream', 'b']);
      expectOneLineFailure(
        claim,
        /^fact-tracker context: data\/context\/planning_context\.json: contexts\[0\] \(workstream a, branch main\) holds what looks like an AWS access key id in working_summary\.text: nothing is written while the file holds a secret; remove it from the file and try again\n$/u,
      );
      expect(claim.stderr).not.toContain(AWS_KEY_ID);
      expect(readFileSync(file, 'utf8')).toBe(before);
      expect(existsSync(join(repo, 'data', 'context', 'planning_context.md'))).toBe(false);
    });
  });

  /** The absolute path of `parts` under `repo`, as bytes (a name need not be UTF-8). */
  const bytePath = (repo: string, ...parts: ReadonlyArray<string | Buffer>): Buffer =>
    Buffer.concat([
      Buffer.from(`${repo}/`),
      ...parts.map((part) => (typeof part === 'string' ? Buffer.from(part) : part)),
    ]);

  describe.concurrent('repository state', SLOW, () => {
    it('7: edits to files whose names are not UTF-8, or hold a line break, make the summary stale', async () => {
      const repo = makeRepo();
      const odd = bytePath(repo, 'src/bad', Buffer.of(0xff), 'name.js');
      const broken = bytePath(repo, 'src/new\nline.js');
      writeFileSync(odd, 'one\n');
      writeFileSync(broken, 'two\n');
      commitAll(repo, 'odd names');
      expect((await runIn(repo, ['context', 'checkpoint', '--summary', 'Odd names in.'])).status).toBe(0);
      commitAll(repo, 'context');
      const verified = (await runIn(repo, ['context', 'show'])).stdout;
      expect(verified).toContain('summary verified');
      writeFileSync(odd, 'one, edited\n');
      const stale = (await runIn(repo, ['context', 'show'])).stdout;
      expect(stale).toMatch(/STALE: (HEAD moved, )?tracked files changed/u);
      expect(stale).toContain('  M src/bad\\xFFname.js');
      // A checkpoint over the uncommitted edit records it, and a further edit is a change again.
      expect((await runIn(repo, ['context', 'checkpoint', '--summary', 'Odd name edited.'])).status).toBe(0);
      expect((await runIn(repo, ['context', 'show'])).stdout).toContain('summary verified');
      writeFileSync(odd, 'one, edited twice\n');
      expect((await runIn(repo, ['context', 'show'])).stdout).toMatch(/STALE: (HEAD moved, )?tracked files changed/u);
      writeFileSync(odd, 'one\n');
      writeFileSync(broken, 'two, edited\n');
      expect((await runIn(repo, ['context', 'show'])).stdout).toMatch(/STALE: (HEAD moved, )?tracked files changed/u);
    });

    it('7: a changed file whose name holds a line break, a tab, a run of spaces or a backslash is shown escaped, apart from its look-alikes and on its own line (as a process)', async () => {
      const repo = makeRepo();
      // Each name beside the one it looked the same as, or would look the same as once escaped.
      const names = [
        'src/a b.ts',
        'src/a\nb.ts',
        'src/a\\u{A}b.ts',
        'src/a\tb.ts',
        'src/a  b.ts',
        ' src.ts',
        'src/x\n## Heading',
      ];
      writeFiles(repo, Object.fromEntries(names.map((name) => [name, 'one\n'])));
      commitAll(repo, 'look-alike names');
      const checkpoint = ['context', 'checkpoint', '--kind', 'implementation', '--summary', 'Look-alikes.'];
      expect((await runIn(repo, checkpoint)).status).toBe(0);
      writeFiles(repo, Object.fromEntries(names.map((name) => [name, 'two\n'])));
      // show as a process, writing to a real stdout; the bundle through the same build in this one.
      const [show, bundle] = await Promise.all([
        runBinary(['context', 'show', '--kind', 'implementation'], { cwd: repo }),
        runBuiltIn(repo, ['context', 'bundle', '--kind', 'implementation']),
      ]);
      const shown = [
        'src/a b.ts',
        'src/a\\u{A}b.ts',
        'src/a\\\\u{A}b.ts',
        'src/a\\u{9}b.ts',
        'src/a \\u{20}b.ts',
        '\\u{20}src.ts',
        'src/x\\u{A}## Heading',
      ];
      const listed = (output: string, prefix: string): string[] =>
        output
          .split('\n')
          .filter((line) => line.startsWith(prefix))
          .map((line) => line.slice(prefix.length))
          .sort();
      expect(listed(show.stdout, '  M ')).toEqual([...shown].sort());
      expect(listed(bundle.stdout, '- M ')).toEqual([...shown].sort());
      for (const output of [show.stdout, bundle.stdout]) expect(output).not.toMatch(/^## Heading/mu);
    });

    it('17: an uncommitted chmod +x is a change, and no checkpoint is recorded over unresolved conflicts', async () => {
      const repo = await checkpointedCopy();
      commitAll(repo, 'context');
      chmodSync(join(repo, 'src', 'parser.ts'), 0o755);
      expect((await runIn(repo, ['context', 'show'])).stdout).toMatch(/STALE: (HEAD moved, )?tracked files changed/u);
      chmodSync(join(repo, 'src', 'parser.ts'), 0o644);
      expect((await runIn(repo, ['context', 'show'])).stdout).toContain('summary verified');
      await mergeStoppedOn(repo, async (side) => {
        writeFiles(repo, { 'src/parser.ts': `export const parse = '${side}';\n` });
      });
      const refused = await runIn(repo, ['context', 'checkpoint', '--summary', 'Merged.']);
      expectOneLineFailure(
        refused,
        /^fact-tracker context: 1 file has unresolved merge conflicts \(src\/parser\.ts\): a checkpoint records verified work; resolve them and git add them first\n$/u,
      );
      expect((await runIn(repo, ['context', 'show'])).stdout).toMatch(/STALE: HEAD moved, tracked files changed/u);
      expect((await runIn(repo, ['context', 'claim', 'Looking at the conflict'])).status).toBe(0);
    });
  });

  describe.concurrent('evidence', SLOW, () => {
    it('12: evidence must be a file git tracks, within its lines; a file removed from the index is flagged', async () => {
      const repo = makeRepo();
      writeFiles(repo, { 'src/big.ts': 'x\n'.repeat(1005) });
      commitAll(repo, 'a long file');
      writeFiles(repo, { 'src/untracked.ts': 'export {};\n' });
      for (const [file, problem] of [
        ['src/untracked.ts:L1', 'src/untracked.ts is not tracked by git \\(git add it first\\)'],
        ['.git/config:L1', ".git/config is inside the repository's .git directory"],
        ['src:L1', 'src is a directory'],
        ['src/nowhere.ts:L1', 'src/nowhere.ts is not in the repository'],
        ['src/parser.ts:L1-L40', 'src/parser.ts has 1 line: L1-L40 ends past them'],
        ['src/big.ts:L2000-L2010', 'src/big.ts has 1,005 lines: L2000-L2010 ends past them'],
      ] as const)
        expectOneLineFailure(
          await runIn(repo, ['context', 'claim', 'Fixed the parser', '--file', file]),
          new RegExp(`^fact-tracker context: claim refused: "Fixed the parser": ${problem}`, 'u'),
        );
      expect(existsSync(join(repo, ...CONTEXT_JSON))).toBe(false);
      expect((await runIn(repo, ['context', 'claim', 'Fixed the parser', '--file', 'src/parser.ts:L1'])).status).toBe(
        0,
      );
      commitAll(repo, 'context');
      expect((await runIn(repo, ['context', 'show'])).stdout).not.toContain('MISSING');
      git(repo, 'rm', '-q', '--cached', 'src/parser.ts');
      expect((await runIn(repo, ['context', 'show'])).stdout).toContain(
        '  MISSING src/parser.ts (cited by: Fixed the parser)',
      );
    });

    it('12c: evidence that became a symbolic link or a submodule, committed or only on disk, is flagged MISSING, never a pointer', async () => {
      const repo = makeRepo();
      expect((await runIn(repo, ['context', 'claim', 'Fixed the parser', '--file', 'src/parser.ts:L1'])).status).toBe(
        0,
      );
      commitAll(repo, 'context');
      const expectMissing = async (): Promise<void> => {
        const show = await runIn(repo, ['context', 'show']);
        expect(show.stdout).toContain('  MISSING src/parser.ts (cited by: Fixed the parser)');
        const bundle = await runIn(repo, ['context', 'bundle']);
        expect(bundle.stdout).toContain('- MISSING evidence src/parser.ts');
        expect(bundle.stdout).not.toContain('- evidence src/parser.ts:L1');
      };
      // A link on disk only: the index still holds a regular file.
      rmSync(join(repo, 'src', 'parser.ts'));
      symlinkSync('/etc/passwd', join(repo, 'src', 'parser.ts'));
      await expectMissing();
      // The link committed: mode 120000 in the index.
      commitAll(repo, 'parser.ts is a link now');
      expect(git(repo, 'ls-files', '-s', 'src/parser.ts')).toMatch(/^120000 /u);
      await expectMissing();
      // A submodule entry in its place: mode 160000.
      git(repo, 'rm', '-q', '--cached', 'src/parser.ts');
      rmSync(join(repo, 'src', 'parser.ts'));
      git(
        repo,
        'update-index',
        '--add',
        '--cacheinfo',
        `160000,${git(repo, 'rev-parse', 'HEAD').trim()},src/parser.ts`,
      );
      await expectMissing();
    });

    it("12b: no evidence is read outside the repository: through a submodule's link, by .. or an absolute path, or outside git", async () => {
      const outside = tempDir('outside-');
      writeFiles(outside, { 'secret.txt': 'a\nb\nc\nd\ne\nf\ng\n' });
      const sub = makeRepo();
      symlinkSync(outside, join(sub, 'outlink'));
      commitAll(sub, 'a link out');
      const repo = makeRepo();
      git(repo, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', sub, 'sub');
      commitAll(repo, 'submodule');
      expectOneLineFailure(
        await runIn(repo, ['context', 'claim', 'Fixed it', '--file', 'sub/outlink/secret.txt:L1-L3']),
        /^fact-tracker context: claim refused: "Fixed it": sub\/outlink\/secret\.txt goes through the symbolic link sub\/outlink: point at a file the repository holds\n$/u,
      );
      expect(existsSync(join(repo, 'data'))).toBe(false);
      const claim = (path: string) => ({ claim: 'Implemented it', files: [{ path, lines: 'L100000' }], symbols: [] });
      // Committed by a hostile teammate: a path through the link is not followed, only flagged.
      writeFiles(repo, {
        'data/context/planning_context.json': contextFile(
          storedContext('default', { evidence_ledger: [claim('sub/outlink/secret.txt')] }),
        ),
      });
      commitAll(repo, 'context');
      const show = await runIn(repo, ['context', 'show']);
      expect(show.status).toBe(0);
      expect(show.stdout).toContain('  MISSING sub/outlink/secret.txt (cited by: Implemented it)');
      expect(show.stdout).not.toMatch(/PAST END|7 lines/u);
      // A path no claim could record is refused with the workstream, never followed.
      for (const [dir, path] of [
        [repo, 'sub/../../../../../../../..' + outside + '/secret.txt'],
        [repo, outside + '/secret.txt'],
        [tempDir('not-a-repo-'), '../../../../../../../..' + outside + '/secret.txt'],
        [tempDir('not-a-repo-'), outside + '/secret.txt'],
      ] as const) {
        writeFiles(dir, {
          'data/context/planning_context.json': contextFile(
            storedContext('default', { evidence_ledger: [claim(path)] }),
            storedContext('web', { evidence_ledger: [claim('src/parser.ts')] }),
          ),
        });
        const ran = await runIn(dir, ['context', 'show']);
        expect(ran.stdout + ran.stderr).toMatch(
          /contexts\[0\]\.evidence_ledger\[0\]\.files\[0\]\.path: (goes above the repository root|is absolute)/u,
        );
        expect(ran.stdout + ran.stderr).not.toMatch(/PAST END|7 lines|MISSING \//u);
        expect(ran.stdout + ran.stderr).not.toContain(outside);
      }
      // Outside git, a path through a link is not followed either.
      const plain = tempDir('not-a-repo-');
      symlinkSync(outside, join(plain, 'outlink'));
      writeFiles(plain, {
        'data/context/planning_context.json': contextFile(
          storedContext('default', {
            key: { repo: 'app', branch: '(no branch)', workstream_id: 'default' },
            evidence_ledger: [claim('outlink/secret.txt')],
          }),
        ),
      });
      const outsideGit = await runIn(plain, ['context', 'show']);
      expect(outsideGit.stdout).toContain('  MISSING outlink/secret.txt (cited by: Implemented it)');
      expect(outsideGit.stdout).not.toMatch(/PAST END|7 lines/u);
    });

    it('11: with data/ outside a sparse checkout the committed context is read from the index and writes say how to get it back', async () => {
      const repo = makeRepo();
      writeFiles(repo, { 'docs/guide.md': 'one\ntwo\nthree\n' });
      commitAll(repo, 'docs');
      expect(
        (await runIn(repo, ['context', 'claim', 'Documented the parser', '--file', 'docs/guide.md:L2-L3'])).status,
      ).toBe(0);
      expect((await runIn(repo, ['context', 'checkpoint', '--summary', 'Docs written.'])).status).toBe(0);
      commitAll(repo, 'context');
      git(repo, 'sparse-checkout', 'set', 'src');
      expect(existsSync(join(repo, 'data'))).toBe(false);
      expect(existsSync(join(repo, 'docs'))).toBe(false);
      const show = await runIn(repo, ['context', 'show']);
      expect(show.status).toBe(0);
      expect(show.stdout).toContain('Docs written.');
      expect(show.stdout).toContain('summary verified');
      expect(show.stdout).not.toContain('MISSING');
      expect(show.stdout).toContain(
        'note: data/context/ is outside this sparse checkout: the context was read from the index',
      );
      expectOneLineFailure(
        await runIn(repo, ['context', 'claim', 'Looked again']),
        /^fact-tracker context: data\/context\/ is outside this sparse checkout: .*run git sparse-checkout add data\/context, then try again\n$/u,
      );
      expect(existsSync(join(repo, 'data'))).toBe(false);
      git(repo, 'sparse-checkout', 'add', 'data/context');
      // Evidence in a file the sparse checkout leaves out is read from the index.
      expect((await runIn(repo, ['context', 'claim', 'Read the guide', '--file', 'docs/guide.md:L3'])).status).toBe(0);
      expectOneLineFailure(
        await runIn(repo, ['context', 'claim', 'Read the guide', '--file', 'docs/guide.md:L4']),
        /docs\/guide\.md has 3 lines: L4 ends past them/u,
      );
    });
  });

  /** A `git` on PATH that logs each subcommand it runs before running the real one. */
  const loggingGit = (): { readonly path: string; readonly log: string } => {
    const dir = tempDir('git-log-');
    const log = join(dir, 'calls.log');
    const real = execFileSync('/bin/sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    writeFileSync(join(dir, 'git'), `#!/bin/sh\necho "$1 $2" >> '${log}'\nexec '${real}' "$@"\n`, { mode: 0o755 });
    return { path: `${dir}:${process.env['PATH'] ?? ''}`, log };
  };

  describe.concurrent('the repository identity', SLOW, () => {
    it('19: a recorded first commit is checked against the repository, and the history is walked only until a file records it', async () => {
      const repo = makeRepo();
      const { path, log } = loggingGit();
      const walks = (): number =>
        (existsSync(log) ? readFileSync(log, 'utf8') : '').split('\n').filter((line) => line.startsWith('rev-list '))
          .length;
      expect(
        (await runBinary(['context', 'checkpoint', '--summary', 'Planned.'], { cwd: repo, env: { PATH: path } }))
          .status,
      ).toBe(0);
      const afterFirstWrite = walks();
      for (const argv of [
        ['context', 'show'],
        ['context', 'bundle', '--kind', 'implementation'],
        ['context', 'claim', 'Implementation started', '--kind', 'implementation'],
      ])
        expect((await runBinary(argv, { cwd: repo, env: { PATH: path } })).status).toBe(0);
      expect(walks()).toBe(afterFirstWrite);
      // A file that records another repository's first commit is not taken at its word.
      const file = join(repo, ...CONTEXT_JSON);
      const own = /first-commit:([0-9a-f]{12})/u.exec(readFileSync(file, 'utf8'))![1]!;
      writeFileSync(file, readFileSync(file, 'utf8').replaceAll(own, '0123456789ab'));
      const show = await runIn(repo, ['context', 'show']);
      expect(show.stdout).toContain('Planned.');
      expect(show.stdout).toContain(
        `note: using the context recorded for repository "first-commit:0123456789ab" (first commit); this checkout computes "first-commit:${own}" (first commit)`,
      );
    });
  });
});
