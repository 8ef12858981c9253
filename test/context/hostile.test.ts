/**
 * The shared context against a hostile or unlucky repository (issue 13), with real files, real
 * git repositories and real processes: symbolic links out of the repository, clones and
 * worktrees, derived files that cannot be written, secrets, failing git, merge conflicts,
 * submodules, bare repositories, large files, killed writers and odd branch names.
 */
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as E from 'fp-ts/lib/Either.js';
import lockfile from 'proper-lockfile';
import { describe, expect, it } from 'vitest';
import type { ContextFile, SharedContext } from '../../src/context/model.js';
import { type ContextOptions, loadContext, updateContext, writeContext } from '../../src/context/node/index.js';
import { decodeContextFile, encodeContextFile } from '../../src/context/schema.js';
import { emptySharedContext, recordContextClaim } from '../../src/context/index.js';
import { bundledFixture } from '../fixtures/bundled.js';
import { expectOneLineFailure, type Ran, runBinary, runBuiltIn, runIn } from './cliRun.js';
import { errorOf, loadedOf } from './results.js';
import { commitAll, copiesOf, git, listing, makeRepo, readJson, tempDir, writeFiles } from './repo.js';

const NOW = 1_750_000_000_000;
const PLANNING = (cwd: string, extra: Partial<ContextOptions> = {}): ContextOptions => ({
  kind: 'planning',
  cwd,
  enabled: true,
  now: () => NOW,
  ...extra,
});
const CONTEXT_JSON = ['data', 'context', 'planning_context.json'];
/**
 * These tests run git and node processes by the dozen; on a shared machine under load a test
 * can take a minute of wall time without anything being wrong, so they get longer than the
 * default 30 s (their assertions count outcomes, never time).
 */
const SLOW = { timeout: 120_000 } as const;
const FAILURE = { status: 'failed', failedStep: 'tests', error: '2 failing', nextAction: 'fix them' } as const;

/** The decoded planning file of `repo`. */
const storedFile = (repo: string): ContextFile => {
  const file = decodeContextFile(readJson(join(repo, ...CONTEXT_JSON)), 'planning');
  if (E.isLeft(file)) throw new Error(file.left.message);
  return file.right;
};

const bytesOf = (file: string): string => readFileSync(file, 'latin1');

/** A `git` on PATH that logs each subcommand it runs (`start X`, `done X`) before and after the real one. */
const loggingGit = (): { readonly path: string; readonly log: string } => {
  const dir = tempDir('git-log-');
  const log = join(dir, 'calls.log');
  const real = execFileSync('/bin/sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
  writeFileSync(
    join(dir, 'git'),
    `#!/bin/sh\necho "start $1" >> '${log}'\n'${real}' "$@"\nstatus=$?\necho "done $1" >> '${log}'\nexit $status\n`,
    { mode: 0o755 },
  );
  return { path: `${dir}:${process.env['PATH'] ?? ''}`, log };
};

const logOf = (log: string): string => (existsSync(log) ? readFileSync(log, 'utf8') : '');

const waitUntil = async (done: () => boolean, maxMs: number): Promise<void> => {
  for (const start = Date.now(); !done() && Date.now() - start < maxMs;)
    await new Promise((resolve) => setTimeout(resolve, 25));
};

/** How to run the binary as a user who cannot write where root could (root ignores file modes). */
const unprivileged = (dirs: ReadonlyArray<string>): { uid?: number; env: Record<string, string> } => {
  if (process.getuid?.() !== 0) return { env: {} };
  for (const dir of dirs) chmodSync(dir, 0o755);
  // git refuses a repository owned by another user unless told it is safe.
  return {
    uid: 65534,
    env: { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'safe.directory', GIT_CONFIG_VALUE_0: '*', HOME: '/tmp' },
  };
};

describe.concurrent('1. writes never leave the repository through a symbolic link', SLOW, () => {
  it.each([['data'], ['data/context']])(
    'refuses a committed %s link to a folder outside, naming it, and writes nothing there',
    async (link) => {
      const repo = makeRepo();
      const outside = tempDir('outside-');
      writeFileSync(join(outside, 'planning_context.json'), 'not json{');
      if (link === 'data/context') mkdirSync(join(repo, 'data'));
      symlinkSync(outside, join(repo, ...link.split('/')));
      commitAll(repo, 'a link');
      const before = listing(outside);
      for (const argv of [
        ['context', 'claim', 'hello'],
        ['context', 'show'],
        ['context', 'resolve'],
      ])
        expectOneLineFailure(
          await runIn(repo, argv),
          new RegExp(`^fact-tracker context: ${link} is a symbolic link to .+, outside the repository: refusing`, 'u'),
        );
      expect(listing(outside)).toEqual(before);
      expect(readFileSync(join(outside, 'planning_context.json'), 'utf8')).toBe('not json{');
    },
  );

  it('refuses a context file that is itself a link out, and a link into .git', async () => {
    const repo = makeRepo();
    const outside = tempDir('outside-');
    mkdirSync(join(repo, 'data', 'context'), { recursive: true });
    symlinkSync(join(outside, 'target.json'), join(repo, ...CONTEXT_JSON));
    expect(errorOf(await writeContext(PLANNING(repo), FAILURE))).toMatchObject({
      code: 'unsafe_path',
      message: expect.stringMatching(/^data\/context\/planning_context\.json is a symbolic link to a missing target/u),
    });
    unlinkSync(join(repo, ...CONTEXT_JSON));
    rmSync(join(repo, 'data'), { recursive: true });
    symlinkSync(join(repo, '.git'), join(repo, 'data'));
    expect(errorOf(await writeContext(PLANNING(repo), FAILURE)).message).toMatch(
      /^data is a symbolic link to the repository's \.git directory/u,
    );
    expect(existsSync(join(repo, '.git', 'context'))).toBe(false);
    expect(readdirSync(outside)).toEqual([]);
  });

  it.each([['a space'], ['a line break']])(
    'writes into the repository whose folder name ends in %s, never into the sibling without it',
    async (ending) => {
      const parent = tempDir('siblings-');
      const other = join(parent, 'proj');
      const own = join(parent, ending === 'a space' ? 'proj ' : 'proj\n');
      // Two repositories side by side, each moved from a copy of the template into its name.
      for (const repo of [other, own]) renameSync(makeRepo(), repo);
      const ran = await runIn(join(own, 'src'), ['context', 'checkpoint', '--summary', 'work in proj']);
      expect(ran.stderr).toBe('');
      expect(ran.status).toBe(0);
      expect(existsSync(join(own, ...CONTEXT_JSON))).toBe(true);
      expect(existsSync(join(other, 'data'))).toBe(false);
    },
  );

  it('with data/context a committed link to a folder inside, committing the context keeps the summary verified', async () => {
    const repo = makeRepo();
    writeFiles(repo, { 'ctx/.keep': '' });
    mkdirSync(join(repo, 'data'));
    symlinkSync('../ctx', join(repo, 'data', 'context'));
    commitAll(repo, 'the context folder');
    const checkpoint = await runIn(repo, ['context', 'checkpoint', '--summary', 'first summary']);
    expect(checkpoint.status).toBe(0);
    // Git is asked about the folder the link leads to: it refuses a path beyond a link.
    expect(checkpoint.stderr).toBe('');
    expect(existsSync(join(repo, 'ctx', 'planning_context.json'))).toBe(true);
    commitAll(repo, 'the context');
    const show = await runIn(repo, ['context', 'show']);
    expect(show.status).toBe(0);
    expect(show.stdout).toContain('summary verified');
    expect(show.stdout).not.toContain('STALE');
    expect(show.stdout).toContain('git ignores it: ctx/.gitignore:');
  });

  it('with data/context a committed link to the repository root, every command refuses it in one line and writes nothing', async () => {
    const repo = makeRepo();
    mkdirSync(join(repo, 'data'));
    symlinkSync('..', join(repo, 'data', 'context'));
    commitAll(repo, 'a link to the root');
    // Nothing new, nothing changed: git sees the working tree as committed.
    for (const args of [['checkpoint', '--summary', 'S'], ['show'], ['bundle']]) {
      const ran = await runIn(repo, ['context', ...args]);
      expect(ran.status).toBe(1);
      expect(ran.stderr).toMatch(
        /data\/context is a symbolic link to the repository root: the context needs a folder of its own/u,
      );
      expect(ran.stderr.trim().split('\n')).toHaveLength(1);
    }
    expect(git(repo, 'status', '--porcelain', '--ignored')).toBe('');
  });

  it('with data/context a committed link to src, changes under src still make the summary stale', async () => {
    const repo = makeRepo();
    mkdirSync(join(repo, 'data'));
    symlinkSync('../src', join(repo, 'data', 'context'));
    commitAll(repo, 'a link that would hide src');
    expect((await runIn(repo, ['context', 'checkpoint', '--summary', 'Parser read.'])).status).toBe(0);
    expect(existsSync(join(repo, 'src', 'planning_context.json'))).toBe(true);
    // Committing the context files, wherever the link put them, keeps the summary verified.
    commitAll(repo, 'the context');
    expect((await runIn(repo, ['context', 'show'])).stdout).toContain('summary verified');
    // The rest of src/ counts as any folder does: an edit there, committed or not, is seen.
    writeFiles(repo, { 'src/parser.ts': 'export const parse = (text: string) => text.trim();\n' });
    const edited = await runIn(repo, ['context', 'show']);
    expect(edited.stdout).toContain('STALE');
    expect(edited.stdout).toContain('  M src/parser.ts\n');
    commitAll(repo, 'the parser trims');
    const committed = await runIn(repo, ['context', 'show']);
    expect(committed.stdout).toContain('STALE');
    expect(committed.stdout).toContain('  M src/parser.ts\n');
    // A new file there too.
    expect((await runIn(repo, ['context', 'checkpoint', '--summary', 'Parser trims.'])).status).toBe(0);
    writeFiles(repo, { 'src/lexer.ts': 'export {};\n' });
    const added = await runIn(repo, ['context', 'show']);
    expect(added.stdout).toContain('STALE');
    expect(added.stdout).toContain('  ? src/lexer.ts\n');
  });

  it('follows a link that stays inside the repository', async () => {
    const repo = makeRepo();
    mkdirSync(join(repo, 'shared'));
    symlinkSync(join(repo, 'shared'), join(repo, 'data'));
    loadedOf(await writeContext(PLANNING(repo), FAILURE));
    expect(existsSync(join(repo, 'shared', 'context', 'planning_context.json'))).toBe(true);
  });
});

describe.concurrent('2. the repository key is stable across clones and worktrees', SLOW, () => {
  it('a clone under another name and a git worktree find the committed context', async () => {
    const repo = makeRepo();
    loadedOf(await writeContext(PLANNING(repo), { status: 'succeeded', summary: 'Parser skeleton.' }));
    commitAll(repo, 'context');
    const clone = join(tempDir('clones-'), 'another-name');
    git(repo, 'clone', '-q', repo, clone);
    const cloned = loadedOf(await loadContext(PLANNING(clone)));
    expect(cloned.stored).toBe(true);
    expect(cloned.context.workingSummary.text).toBe('Parser skeleton.');
    expect(cloned.notes).toEqual([]);
    const worktree = join(tempDir('worktrees-'), 'wt');
    git(repo, 'worktree', 'add', '-q', '-b', 'feature', worktree);
    const fromWorktree = loadedOf(await loadContext(PLANNING(worktree, { branch: 'main' })));
    expect(fromWorktree.stored).toBe(true);
    expect(fromWorktree.key.repo).toBe(cloned.key.repo);
    // The CLI in the clone sees it too.
    const show = await runIn(clone, ['context', 'show']);
    expect(show.stdout).toContain('Parser skeleton.');
    expect(show.stdout).not.toContain('nothing stored yet');
  });

  it('migrates a file keyed by folder name, and records the identity it is keyed by', async () => {
    const repo = makeRepo();
    const folder = repo.split(/[\\/]/u).pop()!;
    const legacy = {
      ...emptySharedContext({ repo: folder, branch: 'main', workstreamId: 'default' }),
      featureRequest: 'Keyed by folder',
    };
    writeFiles(repo, {
      'data/context/planning_context.json': JSON.stringify(encodeContextFile({ kind: 'planning', contexts: [legacy] })),
    });
    commitAll(repo, 'legacy context');
    const clone = join(tempDir('clones-'), 'renamed');
    git(repo, 'clone', '-q', repo, clone);
    const seen = loadedOf(await loadContext(PLANNING(clone)));
    expect(seen.stored).toBe(true);
    expect(seen.context.featureRequest).toBe('Keyed by folder');
    expect(seen.notes).toEqual([expect.stringMatching(/a folder name.*re-keyed in the file at the next write/u)]);
    loadedOf(await writeContext(PLANNING(clone), FAILURE));
    const file = readJson(join(clone, ...CONTEXT_JSON)) as {
      repository: { id: string; source: string };
      contexts: Array<{ key: { repo: string } }>;
    };
    expect(file.repository).toEqual({ id: seen.key.repo, source: 'first_commit' });
    expect(file.contexts.map((context) => context.key.repo)).toEqual([seen.key.repo]);
  });

  it('keys by the origin without its credentials, and a checkout that computes another key uses the recorded one, saying so', async () => {
    const repo = makeRepo();
    git(repo, 'remote', 'add', 'origin', 'https://ci:s3cretPassw0rd@GitHub.com/Org/App.git');
    const written = loadedOf(await writeContext(PLANNING(repo), { status: 'succeeded', summary: 'From origin.' }));
    expect(written.key.repo).toBe('github.com/Org/App');
    expect(readFileSync(join(repo, ...CONTEXT_JSON), 'utf8')).not.toContain('s3cret');
    git(repo, 'remote', 'set-url', 'origin', 'git@github.com:me/app-fork.git');
    const fork = await runIn(repo, ['context', 'show']);
    expect(fork.stdout).toContain('From origin.');
    expect(fork.stdout).toMatch(
      /note: using the context recorded for repository "github\.com\/Org\/App" \(origin\); this checkout computes "github\.com\/me\/app-fork" \(origin\)/u,
    );
  });
});

describe.concurrent(
  '3. the JSON is the truth: a derived file that cannot be written is a warning, and a retry adds nothing',
  SLOW,
  () => {
    it('a folder in place of the dashboard: exit 0, one warning, the change saved once however often it is retried', async () => {
      const repo = makeRepo();
      mkdirSync(join(repo, 'data', 'context', 'planning_context.md'), { recursive: true });
      const commands = [
        ['context', 'claim', 'Looked at the parser'],
        ['context', 'checkpoint', '--summary', 'Parser read.', '--decision', 'Hand-written or PEG?'],
        ['context', 'record-failure', '--failed-step', 'tests', '--error', '2 failing', '--next-action', 'fix'],
      ];
      const warning =
        /^fact-tracker context: warning: the dashboard data\/context\/planning_context\.md was not updated \(.*it is a directory\); the context itself was saved\n$/u;
      for (const argv of commands) {
        const ran = await runIn(repo, argv);
        expect(ran.status).toBe(0);
        expect(ran.stderr).toMatch(warning);
      }
      // Retried, as by a caller that saw no outcome: still a success, and nothing is recorded twice.
      for (const argv of commands) {
        const ran = await runIn(repo, argv);
        expect(ran.status).toBe(0);
        expect(ran.stderr === '' || warning.test(ran.stderr)).toBe(true);
      }
      const [context] = storedFile(repo).contexts;
      expect(context!.evidenceLedger.map((claim) => claim.claim)).toEqual(['Looked at the parser']);
      expect(context!.openDecisions.map((decision) => decision.text)).toEqual(['Hand-written or PEG?']);
      expect(context!.recentFailures).toHaveLength(1);
      // The retried checkpoint succeeded again, but the retried failure came after it.
      expect(context!.lastRun?.status).toBe('failed');
    });

    it('a folder in place of the sessions file: the context is saved, the sessions are a warning', async () => {
      const repo = makeRepo();
      mkdirSync(join(repo, 'data', 'context', 'planning_sessions.local.json'), { recursive: true });
      const written = loadedOf(
        await writeContext(PLANNING(repo), {
          status: 'succeeded',
          summary: 'Saved.',
          sessions: { codex: { id: 's1' } },
        }),
      );
      expect(written.warnings).toEqual([
        expect.stringMatching(/^tool sessions not saved: .*the context itself was saved$/u),
      ]);
      expect(storedFile(repo).contexts[0]!.workingSummary.text).toBe('Saved.');
    });

    it('a committed .gitignore in the context folder that links to a source file: that file is never written, the sessions are a warning', async () => {
      const repo = makeRepo();
      writeFiles(repo, { 'src/app.js': 'export const x = 1;\n' });
      mkdirSync(join(repo, 'data', 'context'), { recursive: true });
      symlinkSync('../../src/app.js', join(repo, 'data', 'context', '.gitignore'));
      commitAll(repo, 'a linked .gitignore');
      const written = loadedOf(
        await writeContext(PLANNING(repo), { ...FAILURE, sessions: { codex: { id: 'sess-1' } } }),
      );
      expect(readFileSync(join(repo, 'src', 'app.js'), 'utf8')).toBe('export const x = 1;\n');
      expect(written.warnings).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^cannot add \*\.local\.json to data\/context\/\.gitignore: it is a symbolic link/u),
        ]),
      );
      expect(existsSync(join(repo, 'data', 'context', 'planning_sessions.local.json'))).toBe(false);
      expect(git(repo, 'status', '--porcelain', '--', 'src')).toBe('');
      expect(storedFile(repo).contexts[0]!.lastRun?.status).toBe('failed');
    });

    it('a .gitignore in the context folder that is a hard link to a file outside: that file is never written', async () => {
      const repo = makeRepo();
      const outside = join(tempDir('outside-'), 'victim');
      writeFileSync(outside, 'outside\n');
      utimesSync(outside, new Date(NOW - 60_000), new Date(NOW - 60_000));
      mkdirSync(join(repo, 'data', 'context'), { recursive: true });
      linkSync(outside, join(repo, 'data', 'context', '.gitignore'));
      const written = loadedOf(
        await writeContext(PLANNING(repo), { ...FAILURE, sessions: { codex: { id: 'sess-1' } } }),
      );
      expect(readFileSync(outside, 'utf8')).toBe('outside\n');
      expect(statSync(outside).mtimeMs).toBe(NOW - 60_000);
      expect(written.warnings).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^cannot add \*\.local\.json to data\/context\/\.gitignore: it is a hard link/u),
        ]),
      );
      expect(existsSync(join(repo, 'data', 'context', 'planning_sessions.local.json'))).toBe(false);
    });
  },
);

describe.concurrent('4. secrets are refused before anything is written', SLOW, () => {
  it('the CLI refuses a secret in any field with one line naming it; nothing is created', async () => {
    const repo = makeRepo();
    const token = `ghp_${'a1B2c3D4e5'.repeat(4).slice(0, 36)}`;
    const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
      // One case per command: every field is covered by the pure tests in secrets.test.ts.
      [['context', 'checkpoint', '--step', `curl -H "Authorization: Bearer ${'abcDEF123456'.repeat(2)}"`], 'step 1'],
      [['context', 'claim', 'Checked', '--symbol', token], 'symbols\\[0\\]'],
      [
        ['context', 'record-failure', '--failed-step', 's', '--error', `401 for ${token}`, '--next-action', 'n'],
        'the error',
      ],
    ];
    for (const [argv, field] of cases) {
      const ran = await runIn(repo, argv);
      expectOneLineFailure(
        ran,
        new RegExp(`(^fact-tracker context: |claim refused: )${field} holds what looks like`, 'u'),
      );
      expect(ran.stderr).not.toContain(token);
    }
    expect(existsSync(join(repo, 'data'))).toBe(false);
  });

  it("a secret in another context's key (a branch named like a token) is redacted from every read and never quoted", async () => {
    const repo = makeRepo();
    const token = `ghp_${'a1'.repeat(18)}`;
    expect((await runIn(repo, ['context', 'checkpoint', '--summary', 'real summary'])).status).toBe(0);
    const file = join(repo, ...CONTEXT_JSON);
    const document = readJson(file) as { contexts: Array<Record<string, unknown> & { key: { branch: string } }> };
    const copy = structuredClone(document.contexts[0]!);
    copy.key.branch = token;
    copy['open_decisions'] = [{ id: 'D1', text: 'x', status: 'open' }];
    document.contexts.unshift(copy);
    writeFileSync(file, JSON.stringify(document, null, 2));
    commitAll(repo, 'a teammate context');
    const warning = /holds what looks like a GitHub token in contexts\[\d\]\.key\.branch: it is redacted here/u;
    const reads = async (): Promise<void> => {
      for (const argv of [
        ['context', 'show'],
        ['context', 'bundle'],
        ['context', 'show', '--json'],
        ['context', 'bundle', '--json'],
      ]) {
        const ran = await runIn(repo, argv);
        expect(ran.status).toBe(0);
        expect(ran.stdout + ran.stderr).not.toContain(token);
        expect(ran.stdout).toContain('[redacted: a GitHub token]');
        if (!argv.includes('--json')) expect(ran.stderr).toMatch(warning);
      }
    };
    await reads();
    // With main gone too, a new branch is pointed at the first branch of the file holding the workstream: the token's.
    git(repo, 'checkout', '-q', '-b', 'newbranch');
    git(repo, 'branch', '-q', '-D', 'main');
    await reads();
    const refused = await runIn(repo, ['context', 'claim', 'c']);
    expectOneLineFailure(refused, /holds what looks like a GitHub token in key\.branch: nothing is written/u);
    expect(refused.stderr).not.toContain(token);
  });

  it('a secret edited into the JSON by hand is never copied into the dashboard: resolve refuses to regenerate it until it is gone', async () => {
    const repo = makeRepo();
    const token = `ghp_${'a1B2c3D4e5'.repeat(4).slice(0, 36)}`;
    expect((await runIn(repo, ['context', 'checkpoint', '--summary', 'clean summary'])).status).toBe(0);
    const file = join(repo, ...CONTEXT_JSON);
    const dashboard = join(repo, 'data', 'context', 'planning_context.md');
    const clean = readFileSync(file, 'utf8');
    const before = readFileSync(dashboard, 'utf8');
    writeFileSync(file, clean.replace('clean summary', `deploy with ${token}`));
    const show = await runIn(repo, ['context', 'show']);
    expect(show.stdout).toContain('resolve regenerates it once the secret is gone from the JSON');
    const refused = await runIn(repo, ['context', 'resolve']);
    expectOneLineFailure(refused, /holds what looks like a GitHub token in working_summary\.text: nothing is written/u);
    expect(refused.stderr).not.toContain(token);
    expect(readFileSync(dashboard, 'utf8')).toBe(before);
    expect(readFileSync(dashboard, 'utf8').replaceAll('\\', '')).not.toContain(token.slice(-12));
    // Once the secret is gone, resolve regenerates the dashboard as before.
    writeFileSync(file, clean.replace('clean summary', 'edited summary'));
    const resolved = await runIn(repo, ['context', 'resolve']);
    expect(resolved.status).toBe(0);
    expect(resolved.stdout).toContain('was out of step with it and is regenerated');
    expect(readFileSync(dashboard, 'utf8')).toContain('edited summary');
  });

  it('a secret split by a zero-width space, which the bundle and the dashboard remove, is refused too', async () => {
    const repo = makeRepo();
    const token = `ghp_${'a1B2c3D4e5'.repeat(4).slice(0, 18)}\u200b${'a1B2c3D4e5'.repeat(4).slice(18, 36)}`;
    const ran = await runIn(repo, ['context', 'checkpoint', '--summary', `Deploy with ${token}`]);
    expectOneLineFailure(ran, /^fact-tracker context: the summary holds what looks like a GitHub token/u);
    expect(existsSync(join(repo, 'data'))).toBe(false);
  });

  it('a secret in a session fact is redacted from the bundle and its JSON, which go into prompts', async () => {
    const repo = makeRepo();
    const token = `ghp_${'a1B2c3D4e5'.repeat(4).slice(0, 36)}`;
    const result = {
      task_id: '1',
      status: 'completed',
      summary: 'Parser release',
      files_changed: ['src/parser.ts'],
      tests: [{ command: `npm test -- --token=${token} parser`, passed: true }],
      follow_up_actions: [],
    };
    writeFiles(repo, {
      'history.jsonl': `${JSON.stringify({ type: 'dispatch', role: 'implementer', taskId: '1', at: 1, result })}\n`,
    });
    for (const json of [[], ['--json']]) {
      const argv = [
        'context',
        'bundle',
        '--facts',
        join(repo, 'history.jsonl'),
        '--query',
        'npm test parser passed',
        ...json,
      ];
      const ran = await runIn(repo, argv);
      expect(ran.status).toBe(0);
      expect(ran.stdout).toContain('npm test -- --token=[redacted: a GitHub token] parser passed');
      expect(ran.stdout).not.toContain(token);
    }
  });

  it('a secret in a tool session of this machine is redacted from show, the bundle and their JSON', async () => {
    const repo = makeRepo();
    const token = `ghp_${'a1B2c3D4e5'.repeat(4).slice(0, 36)}`;
    const written = loadedOf(
      await writeContext(PLANNING(repo), { status: 'succeeded', sessions: { codex: { id: token } } }),
    );
    expect(written.sessions).toEqual({ codex: { id: '[redacted: a GitHub token]' } });
    for (const argv of [
      ['context', 'show'],
      ['context', 'show', '--json'],
      ['context', 'bundle'],
    ]) {
      const ran = await runIn(repo, argv);
      expect(ran.status).toBe(0);
      expect(ran.stdout).toContain('codex');
      expect(ran.stdout).toContain('[redacted: a GitHub token]');
      expect(ran.stdout).not.toContain(token);
    }
  });

  it('a tool sessions file the repository committed is never read as this machine’s sessions to resume', async () => {
    const repo = makeRepo();
    loadedOf(await writeContext(PLANNING(repo), { status: 'succeeded', sessions: { codex: { id: 'planted-7f3a' } } }));
    git(repo, 'add', '-f', 'data/context/planning_sessions.local.json');
    commitAll(repo, 'a committed sessions file');
    for (const argv of [
      ['context', 'show'],
      ['context', 'bundle'],
    ]) {
      const ran = await runIn(repo, argv);
      expect(ran.status).toBe(0);
      expect(ran.stdout).not.toContain('planted-7f3a');
      expect(ran.stderr).toContain(
        "tool sessions ignored: data/context/planning_sessions.local.json: is committed to git, but tool sessions are this machine's own",
      );
    }
    expect(loadedOf(await loadContext(PLANNING(repo))).sessions).toEqual({});
    // Once git no longer tracks it, it is this machine's file again.
    git(repo, 'rm', '-q', '--cached', 'data/context/planning_sessions.local.json');
    expect(loadedOf(await loadContext(PLANNING(repo))).sessions).toEqual({ codex: { id: 'planted-7f3a' } });
  });

  it('the library refuses a change that puts a secret anywhere, naming the field', async () => {
    const repo = makeRepo();
    const jwt = `${'eyJhbGciOiJIUzI1NiJ9'}.${'eyJzdWIiOiIxMjM0In0'}.dozjgNryP4J3jVmNHl0w5N`;
    const error = errorOf(
      await updateContext(PLANNING(repo), (context) => E.right({ ...context, featureRequest: `Call with ${jwt}` })),
    );
    expect(error).toEqual({
      code: 'secret',
      message: expect.stringMatching(/^feature_request holds what looks like a JSON Web Token/u),
    });
    expect(existsSync(join(repo, ...CONTEXT_JSON))).toBe(false);
  });
});

describe.concurrent('5. a failing git is reported as such and never switches the key', SLOW, () => {
  it('a file deleted during a merge conflict, and a tracked link left dangling, still give a verified view of the branch', async () => {
    const repo = makeRepo();
    symlinkSync('src/parser.ts', join(repo, 'link'));
    commitAll(repo, 'link');
    loadedOf(await writeContext(PLANNING(repo), { status: 'succeeded', summary: 'Base.' }));
    git(repo, 'checkout', '-q', '-b', 'other');
    writeFiles(repo, { 'src/parser.ts': 'export const parse = 1;\n' });
    commitAll(repo, 'other side');
    git(repo, 'checkout', '-q', 'main');
    writeFiles(repo, { 'src/parser.ts': 'export const parse = 2;\n' });
    commitAll(repo, 'main side');
    expect(() => git(repo, 'merge', '-q', 'other')).toThrow();
    unlinkSync(join(repo, 'src', 'parser.ts'));
    unlinkSync(join(repo, 'link'));
    symlinkSync('no/such/target', join(repo, 'link'));
    const loaded = loadedOf(await loadContext(PLANNING(repo)));
    expect(loaded.key.branch).toBe('main');
    expect(loaded.status).toMatchObject({ repository: 'git', stale: true });
    expect(loaded.status.reasons).toContain('files_changed');
    expect(loaded.stored).toBe(true);
    const claim = await runIn(repo, ['context', 'claim', 'Resolving the parser conflict']);
    expect(claim.status).toBe(0);
    expect(storedFile(repo).contexts.map((context) => context.key.branch)).toEqual(['main']);
  });

  it('git failing inside a repository stops show and every write with its own first line', async () => {
    const repo = makeRepo();
    loadedOf(await writeContext(PLANNING(repo), { status: 'succeeded', summary: 'Base.' }));
    const file = join(repo, ...CONTEXT_JSON);
    const before = bytesOf(file);
    writeFileSync(join(repo, '.git', 'index'), 'this is not an index');
    for (const argv of [
      ['context', 'show'],
      ['context', 'claim', 'hello'],
      ['context', 'checkpoint', '--summary', 's'],
    ])
      expectOneLineFailure(await runIn(repo, argv), /^fact-tracker context: git failed: (error|fatal): .*index/u);
    expect(bytesOf(file)).toBe(before);
  });

  it('a git that is not on PATH is said in plain words, in one line, and nothing is written', async () => {
    const repo = makeRepo();
    loadedOf(await writeContext(PLANNING(repo), { status: 'succeeded', summary: 'Base.' }));
    const file = join(repo, ...CONTEXT_JSON);
    const before = bytesOf(file);
    for (const argv of [
      ['context', 'show'],
      ['context', 'claim', 'hello'],
    ])
      expectOneLineFailure(
        await runBinary(argv, { cwd: repo, env: { PATH: tempDir('no-git-') } }),
        /^fact-tracker context: git failed: git was not found: install it, or put it on PATH, and try again\n$/u,
      );
    expect(bytesOf(file)).toBe(before);
  });
});

/** A repository whose planning context conflicts after `git merge other`: both sides changed the same context. */
const conflictedRepo = async (): Promise<string> => {
  const repo = makeRepo();
  const at = (now: number) => PLANNING(repo, { now: () => now, branch: 'main' });
  loadedOf(await writeContext(at(1_000), { status: 'succeeded', summary: 'Base.', decisions: ['Q base?'] }));
  commitAll(repo, 'base context');
  git(repo, 'checkout', '-q', '-b', 'other');
  const other = { claims: [{ claim: 'Read other' }], decisions: ['Q other?'] };
  loadedOf(await writeContext(at(2_000), { status: 'succeeded', summary: 'Other side.', ...other }));
  loadedOf(await writeContext(at(2_500), FAILURE));
  commitAll(repo, 'other context');
  git(repo, 'checkout', '-q', 'main');
  const main = { claims: [{ claim: 'Read main' }], decisions: ['Q main?'] };
  loadedOf(await writeContext(at(3_000), { status: 'succeeded', summary: 'Main, newer.', ...main }));
  commitAll(repo, 'main context');
  expect(() => git(repo, 'merge', '-q', 'other')).toThrow();
  expect(readFileSync(join(repo, ...CONTEXT_JSON), 'utf8')).toMatch(/^<<<<<<< /mu);
  return repo;
};

/** A copy of one conflicted repository, made once per test file (it takes a dozen git processes). */
const conflictedCopy = copiesOf(conflictedRepo);

const expectMerged = (context: SharedContext): void => {
  expect(context.workingSummary.text).toBe('Main, newer.');
  expect(context.openDecisions.map((decision) => `${decision.id} ${decision.text}`)).toEqual([
    'D1 Q base?',
    'D2 Q main?',
    'D3 Q other?',
  ]);
  expect(context.evidenceLedger.map((claim) => claim.claim)).toEqual(
    expect.arrayContaining(['Read other', 'Read main']),
  );
  expect(context.recentFailures.map((failure) => failure.failedStep)).toEqual(['tests']);
};

// One test at a time: a write holds the file's lock while a sibling's synchronous work (the
// repository's copy, its git processes) could keep this process's event loop from refreshing it,
// and a write that finds its lock gone stale refuses to write (see node/lock.ts).
describe.sequential(
  '6. a file with conflict markers is reported by reads and merged by writes, never moved aside',
  SLOW,
  () => {
    it('show reports both sides and moves nothing; resolve merges them', async () => {
      const repo = await conflictedCopy();
      const file = join(repo, ...CONTEXT_JSON);
      const before = bytesOf(file);
      for (const argv of [
        ['context', 'show'],
        ['context', 'bundle'],
      ])
        expectOneLineFailure(
          await runIn(repo, argv),
          /^fact-tracker context: data\/context\/planning_context\.json: has merge conflict markers \(from a git pull or merge\): ours holds workstreams default \(branch main\); theirs holds workstreams default \(branch main\); run fact-tracker context resolve/u,
        );
      expect(bytesOf(file)).toBe(before);
      expect(readdirSync(join(repo, 'data', 'context')).filter((name) => name.endsWith('.corrupt'))).toEqual([]);
      const resolved = await runIn(repo, ['context', 'resolve']);
      expect(resolved.status).toBe(0);
      expect(resolved.stdout).toMatch(
        /^resolved data\/context\/planning_context\.json: merged ours \(1 workstream\) and theirs \(1\)/u,
      );
      expect(readFileSync(file, 'utf8')).not.toMatch(/^(<<<<<<<|=======|>>>>>>>)/mu);
      expect(readFileSync(join(repo, 'data', 'context', 'planning_context.md'), 'utf8')).not.toMatch(/^<<<<<<</mu);
      expectMerged(storedFile(repo).contexts[0]!);
      expect((await runIn(repo, ['context', 'resolve'])).stdout).toMatch(/^nothing to resolve/u);
    });

    it('the next write merges both sides too', async () => {
      const repo = await conflictedCopy();
      const claim = await runIn(repo, ['context', 'claim', 'After the merge']);
      expect(claim.status, claim.stderr).toBe(0);
      const [context] = storedFile(repo).contexts;
      expectMerged(context!);
      expect(context!.evidenceLedger.map((entry) => entry.claim)).toContain('After the merge');
    });
  },
);

describe.concurrent('8. nothing is written that the reader would refuse', SLOW, () => {
  it('a time past year 9999, an empty session id and an invalid decision id are refused and nothing is written', async () => {
    const repo = makeRepo();
    const tenThousand = Date.UTC(10_000, 0, 1);
    expect(errorOf(await writeContext(PLANNING(repo, { now: () => tenThousand }), FAILURE)).code).toBe('invalid');
    expect(
      errorOf(await writeContext(PLANNING(repo), { status: 'succeeded', sessions: { codex: { id: '' } } })),
    ).toMatchObject({
      code: 'invalid',
      message: expect.stringMatching(
        /^refused to write a file the reader would reject: sessions\[0\]\.cli_sessions\.codex\.id/u,
      ),
    });
    expect(
      errorOf(
        await updateContext(PLANNING(repo), (context) =>
          E.right({ ...context, openDecisions: [{ id: 'X1', text: 'Which?', status: 'open' }] }),
        ),
      ).message,
    ).toMatch(/^refused to write a file the reader would reject: contexts\[0\]\.open_decisions\[0\]\.id/u);
    expect(
      errorOf(
        await updateContext(PLANNING(repo), (context) =>
          E.right({ ...context, lastRun: { status: 'succeeded', at: tenThousand } }),
        ),
      ).message,
    ).toMatch(/^refused to write a file the reader would reject: contexts\[0\]\.last_run\.at/u);
    expect(existsSync(join(repo, 'data', 'context', 'planning_context.json'))).toBe(false);
    expect(existsSync(join(repo, 'data', 'context', 'planning_sessions.local.json'))).toBe(false);
  });
});

describe.concurrent('9. submodule changes count', SLOW, () => {
  it('an edit and a commit inside a submodule make the summary stale; committing the verified state does not', async () => {
    const sub = makeRepo();
    const repo = makeRepo();
    git(repo, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', sub, 'vendor/sub');
    commitAll(repo, 'submodule');
    const inner = join(repo, 'vendor', 'sub');
    loadedOf(await writeContext(PLANNING(repo), { status: 'succeeded', summary: 'With the submodule.' }));
    expect(loadedOf(await loadContext(PLANNING(repo))).status.stale).toBe(false);
    writeFiles(inner, { 'src/parser.ts': 'export const parse = () => 42;\n' });
    expect(loadedOf(await loadContext(PLANNING(repo))).status.reasons).toEqual(['files_changed']);
    commitAll(inner, 'inside the submodule');
    expect(loadedOf(await loadContext(PLANNING(repo))).status.reasons).toEqual(['files_changed']);
    loadedOf(await writeContext(PLANNING(repo), { status: 'succeeded', summary: 'Submodule moved on.' }));
    commitAll(repo, 'bump the submodule');
    expect(loadedOf(await loadContext(PLANNING(repo))).status.stale).toBe(false);
  });
});

describe.concurrent('10. no context inside a bare repository or a .git directory', SLOW, () => {
  it('refuses both with one line and creates nothing', async () => {
    const bare = join(tempDir('bare-'), 'app.git');
    git(tempDir('bare-parent-'), 'init', '-q', '--bare', bare);
    expectOneLineFailure(
      await runIn(bare, ['context', 'claim', 'hello']),
      /is a bare repository: it has no working tree/u,
    );
    expect(existsSync(join(bare, 'data'))).toBe(false);
    const repo = makeRepo();
    for (const dir of [join(repo, '.git'), join(repo, '.git', 'refs')]) {
      expectOneLineFailure(
        await runIn(dir, ['context', 'claim', 'hello']),
        /is inside a repository's \.git directory/u,
      );
      expect(existsSync(join(dir, 'data'))).toBe(false);
    }
  });
});

/**
 * A valid planning context file of exactly `bytes` (at least 64 KiB): workstreams with a
 * summary each, the last summary cut to land on the size. A summary is the cheapest text to
 * decode per byte, which keeps the test's own work small.
 */
const contextFileText = (bytes: number): string => {
  const context = (ws: number, summary: number): SharedContext => ({
    ...emptySharedContext({ repo: 'r', branch: 'main', workstreamId: `ws-${String(ws).padStart(5, '0')}` }),
    workingSummary: { text: 's'.repeat(summary), stale: true },
  });
  const build = (count: number, last: number): string =>
    `${JSON.stringify(encodeContextFile({ kind: 'planning', contexts: Array.from({ length: count }, (_, ws) => context(ws, ws === count - 1 ? last : 4_000)) }), null, 2)}\n`;
  const one = build(1, 4_000).length;
  const each = build(2, 4_000).length - one;
  const count = Math.ceil((bytes - one) / each) + 1;
  // Each workstream after the first adds `each` characters (its id is padded to one width): the
  // size of `count` of them is known without building it.
  const text = build(count, 4_000 - (one + (count - 1) * each - bytes));
  expect(text.length).toBe(bytes);
  return text;
};

describe.concurrent('11. context files have a size cap, and the lock wait follows the work', SLOW, () => {
  const MAX = 5 * 1024 * 1024;

  it('a file over 5 MiB is refused without being read whole or rewritten, saying how to prune', async () => {
    const repo = makeRepo();
    // Valid JSON and a valid (empty) context file, only too large.
    writeFiles(repo, {
      'data/context/planning_context.json': `{"schema_version": 1, "kind": "planning", "contexts": []}${' '.repeat(6 * 1024 * 1024)}`,
    });
    const before = bytesOf(join(repo, ...CONTEXT_JSON));
    for (const result of [await loadContext(PLANNING(repo)), await writeContext(PLANNING(repo), FAILURE)])
      expect(errorOf(result)).toEqual({
        code: 'too_large',
        message: expect.stringMatching(
          /^data\/context\/planning_context\.json: is larger than 5 MiB, the most it may hold: prune it: remove the workstreams you no longer need/u,
        ),
      });
    expect(bytesOf(join(repo, ...CONTEXT_JSON))).toBe(before);
  });

  it('a write that would grow a file past 5 MiB is refused; one that fits goes through', async () => {
    const repo = makeRepo();
    writeFiles(repo, { 'data/context/planning_context.json': contextFileText(MAX - 300) });
    const options = PLANNING(repo, { workstreamId: 'ws-00000', repo: 'r' });
    const before = bytesOf(join(repo, ...CONTEXT_JSON));
    expect(
      errorOf(
        await writeContext(options, { status: 'failed', failedStep: 's'.repeat(1000), error: 'e', nextAction: 'n' }),
      ),
    ).toEqual({
      code: 'too_large',
      message: expect.stringMatching(
        /^data\/context\/planning_context\.json: would grow to 5 MiB, over the 5 MiB a context file may hold: prune it/u,
      ),
    });
    expect(bytesOf(join(repo, ...CONTEXT_JSON))).toBe(before);
    loadedOf(await updateContext(options, (context, at) => recordContextClaim(context, { claim: 'short', at })));
  });

  it('four processes claiming at once on a 1 MiB file all get their turn', async () => {
    const repo = makeRepo();
    // Four writers already queue three behind the holder of the lock, each waiting on reads and
    // rewrites of the whole file: the queue a lost turn or a too-short wait would show in.
    const writers = 4;
    writeFiles(repo, { 'data/context/planning_context.json': contextFileText(1024 * 1024) });
    const { spawn } = await import('node:child_process');
    const writer = bundledFixture(fileURLToPath(new URL('./fixtures/writer.mjs', import.meta.url)));
    const runs = await Promise.all(
      Array.from(
        { length: writers },
        (_, i) =>
          new Promise<number | null>((resolve) =>
            spawn(process.execPath, [writer, repo, `claimer-${i}`, '1'], { stdio: 'ignore' }).on('exit', resolve),
          ),
      ),
    );
    expect(runs).toEqual(runs.map(() => 0));
    const claims = storedFile(repo).contexts.flatMap((context) => context.evidenceLedger.map((entry) => entry.claim));
    for (let i = 0; i < writers; i += 1) expect(claims).toContain(`claimer-${i} looked at step 0`);
  });
});

describe.concurrent('12. the smaller ones', SLOW, () => {
  it('a: temporary files of killed writers are removed once older than a stale lock', async () => {
    const repo = makeRepo();
    const dir = join(repo, 'data', 'context');
    mkdirSync(dir, { recursive: true });
    const old = join(dir, 'planning_context.json.4242.m1abc1.tmp');
    const fresh = join(dir, 'planning_context.md.4343.m1abc2.tmp');
    const unrelated = join(dir, 'notes.tmp');
    for (const file of [old, fresh, unrelated]) writeFileSync(file, 'partial');
    const longAgo = new Date(Date.now() - 60_000);
    utimesSync(old, longAgo, longAgo);
    utimesSync(unrelated, longAgo, longAgo);
    // Fresh for a minute to come: on a loaded machine the claim may start more than the 10 s of a stale lock later.
    const soon = new Date(Date.now() + 60_000);
    utimesSync(fresh, soon, soon);
    expect((await runIn(repo, ['context', 'claim', 'hello'])).status).toBe(0);
    expect([existsSync(old), existsSync(fresh), existsSync(unrelated)]).toEqual([false, true, true]);
  });

  it('b: a corrupt file in a folder that cannot be written to is reported as corrupt', async () => {
    const repo = makeRepo();
    const dir = join(repo, 'data', 'context');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'planning_context.json'), '{"schema_version": 1, "kind": "planning", "contexts": [');
    const as = unprivileged([repo, join(repo, 'data'), join(repo, 'src')]);
    chmodSync(dir, 0o555);
    const options = { cwd: repo, env: as.env, ...(as.uid === undefined ? {} : { uid: as.uid }) };
    expectOneLineFailure(
      await runBinary(['context', 'show'], options),
      /: not valid JSON, the file is truncated or corrupt \(it ends too early\) \(left as it is/u,
    );
    expectOneLineFailure(
      await runBinary(['context', 'claim', 'hello'], options),
      /: not valid JSON, the file is truncated or corrupt \(it ends too early\); it could not be moved aside \(.*permission denied\)/u,
    );
    chmodSync(dir, 0o755);
  });

  it('b2: a new file this process cannot read counts by its size: show and checkpoint still work', async () => {
    const repo = makeRepo();
    writeFileSync(join(repo, 'private.log'), 'secret-ish\n');
    const as = unprivileged([repo, join(repo, 'src')]);
    // The process may write the context folder, and not read the new file.
    mkdirSync(join(repo, 'data', 'context'), { recursive: true });
    chmodSync(join(repo, 'data'), 0o777);
    chmodSync(join(repo, 'data', 'context'), 0o777);
    chmodSync(join(repo, 'private.log'), 0o000);
    const options = { cwd: repo, env: as.env, ...(as.uid === undefined ? {} : { uid: as.uid }) };
    const checkpoint = await runBinary(['context', 'checkpoint', '--summary', 'Parser read.'], options);
    expect(checkpoint.status).toBe(0);
    const shown = await runBinary(['context', 'show'], options);
    expect(shown.status).toBe(0);
    expect(shown.stdout).toContain('summary verified');
    chmodSync(join(repo, 'private.log'), 0o644);
  });

  it('c: a branch named with U+202E or over 200 characters works, shown safely; --branch picks another', async () => {
    const repo = makeRepo();
    loadedOf(await writeContext(PLANNING(repo), { status: 'succeeded', summary: 'On main.' }));
    git(repo, 'checkout', '-q', '-b', 'fix-\u202Egnp.exe');
    const claim = await runIn(repo, ['context', 'claim', 'Bidi branch']);
    expect(claim).toMatchObject({ status: 0, stderr: '' });
    const show = await runIn(repo, ['context', 'show']);
    expect(show.stdout).not.toMatch(/[\u202A-\u202E\u2066-\u2069]/u);
    expect(show.stdout).toContain('branch fix-\\u{202E}gnp.exe');
    expect((await runIn(repo, ['context', 'show', '--branch', 'main'])).stdout).toContain('On main.');
    const long = `feature/${'long-'.repeat(46)}`;
    git(repo, 'checkout', '-q', '-b', long);
    expect((await runIn(repo, ['context', 'claim', 'Long branch'])).status).toBe(0);
    const key = loadedOf(await loadContext(PLANNING(repo))).key;
    expect(key.branch.length).toBeLessThanOrEqual(200);
    expect(key.branch.startsWith('feature/long-long-')).toBe(true);
  });

  it('d: a deleted current directory is one line, not a stack trace', async () => {
    const parent = tempDir('gone-');
    const ran = await runBinary(['context', 'show'], {
      cwd: parent,
      env: { GONE: join(parent, 'gone') },
      shell: 'mkdir "$GONE" && cd "$GONE" && rmdir "$GONE" && exec "$@"',
    });
    expectOneLineFailure(ran, /^fact-tracker context: the current directory no longer exists/u);
  });

  it('d2: a current directory this user may not enter is one line naming it, not a failing git', async () => {
    const repo = makeRepo();
    const root = process.getuid?.() === 0;
    // Root enters any folder: the command runs as another user, started in the folder before the switch.
    if (root) chmodSync(repo, 0o000);
    const ran = await runBinary(
      ['context', 'show'],
      root ? { cwd: repo, uid: 65534 } : { cwd: repo, shell: 'chmod 000 . && exec "$@"' },
    );
    chmodSync(repo, 0o700);
    expectOneLineFailure(
      ran,
      /^fact-tracker context: cannot use the working directory \/\S+: permission denied \(it cannot be entered, so git cannot run there\)\n$/u,
    );
  });

  it('e: with the flag unset and no config file, the only git run is the one that finds the root', async () => {
    const repo = makeRepo();
    const { path, log } = loggingGit();
    const ran = await runBinary(['context', 'show'], {
      cwd: join(repo, 'src'),
      env: { PATH: path, SHARED_CONTEXT_ENABLED: '' },
    });
    expect(ran.stdout).toMatch(/^shared context is off/u);
    expect(
      logOf(log)
        .split('\n')
        .filter((line) => line.startsWith('start ')),
    ).toEqual(['start rev-parse']);
  });

  it('f2: a --summary-file of emoji is counted in UTF-16 units, and the refusal says so', async () => {
    const repo = makeRepo();
    const file = join(tempDir('summary-'), 'summary.txt');
    writeFileSync(file, '\u{1F600}'.repeat(4000));
    const refused = await runIn(repo, ['context', 'checkpoint', '--summary-file', file]);
    expectOneLineFailure(
      refused,
      /the summary is 8,000 characters, over the limit of 4,000 \(counted in UTF-16 units, as every limit is: a character beyond U\+FFFF, such as an emoji, counts as two; it holds 4,000 characters\)/u,
    );
    writeFileSync(file, '\u{1F600}'.repeat(2000));
    expect((await runIn(repo, ['context', 'checkpoint', '--summary-file', file])).status).toBe(0);
  });

  it('f: --summary-file /dev/zero is refused after a bounded read', async () => {
    const repo = makeRepo();
    expectOneLineFailure(
      await runBuiltIn(repo, ['context', 'checkpoint', '--summary-file', '/dev/zero']),
      /^fact-tracker context: cannot read \/dev\/zero: it is larger than the 17,024 bytes it may have \(a summary holds at most 4,000 characters\)/u,
    );
    // A named pipe nobody writes is refused, never waited on.
    const fifo = join(tempDir('summary-fifo-'), 'summary');
    execFileSync('mkfifo', [fifo]);
    expectOneLineFailure(
      await runBuiltIn(repo, ['context', 'checkpoint', '--summary-file', fifo]),
      /^fact-tracker context: --summary-file .*summary is a FIFO \(named pipe\), not a regular file/u,
    );
  });

  it('g: zero-width and tag characters never reach the bundle or show', async () => {
    const repo = makeRepo();
    const hidden = 'Sum\u200Bmary \u{E0041}\u{E0042}hidden \u2060joined\uFEFF';
    loadedOf(
      await writeContext(PLANNING(repo), {
        status: 'succeeded',
        summary: hidden,
        featureRequest: hidden,
        decisions: [hidden],
        checklist: [hidden],
      }),
    );
    for (const argv of [
      ['context', 'bundle'],
      ['context', 'show'],
    ]) {
      const out = (await runIn(repo, argv)).stdout;
      expect(out).toContain('Summary hidden joined');
      expect(out).not.toMatch(/[\u200B-\u200F\u2060\uFEFF]|[\u{E0000}-\u{E007F}]/u);
    }
  });

  it('h: a parse error never quotes the file', async () => {
    const repo = makeRepo();
    for (const text of [
      'hunter2-super-secret-value',
      '{"schema_version": "hunter2-super-secret-value", "kind": "planning", "contexts": []}',
      '{"kind": "planning", hunter2-super-secret-value}',
    ]) {
      writeFiles(repo, { 'data/context/planning_context.json': text });
      expect(errorOf(await loadContext(PLANNING(repo))).message).not.toContain('hunter2');
    }
  });

  it('i: a checkpoint reads the repository under the lock, so it records the state it was written in', async () => {
    const repo = makeRepo();
    mkdirSync(join(repo, 'data', 'context'), { recursive: true });
    const { path, log } = loggingGit();
    const release = await lockfile.lock(join(repo, ...CONTEXT_JSON), { realpath: false, stale: 10_000 });
    // A waiter looks into the lock folder when it first finds it, which moves the folder's access time.
    const lockFolder = `${join(repo, ...CONTEXT_JSON)}.lock`;
    utimesSync(lockFolder, new Date(0), statSync(lockFolder).mtime);
    const checkpoint: Promise<Ran> = runBinary(['context', 'checkpoint', '--summary', 'Parser checked.'], {
      cwd: repo,
      env: { PATH: path },
    });
    // A checkpoint that reads the repository before the lock has run `git status` by the time it
    // reaches the lock; one that reads it under the lock runs no git before it. So wait for either,
    // or a few seconds (the test passes either way for a correct checkpoint: it records the state
    // after the edit).
    await waitUntil(() => /^done status$/mu.test(logOf(log)) || statSync(lockFolder).atimeMs !== 0, 4_000);
    writeFiles(repo, { 'src/parser.ts': 'export const parse = (text: string) => text.trim();\n' });
    await release();
    expect((await checkpoint).status).toBe(0);
    expect(loadedOf(await loadContext(PLANNING(repo))).status).toMatchObject({ stale: false, reasons: [] });
  });
});
