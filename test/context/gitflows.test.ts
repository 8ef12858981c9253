/**
 * The shared context through what teams do with git every day (issue 28): a teammate's clone
 * that identified the repository differently, a renamed branch, a rebase stopped on a conflict,
 * a bisect and a detached HEAD, merges over the caps, and a dashboard left out of step. Real git
 * repositories, real files, the CLI; each `it` names the items of the issue it covers. Every
 * scenario ends with one context holding what both sides recorded, or says exactly what a cap
 * pushed out.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { CONTEXT_LIMITS, type ContextFile, type SharedContext } from '../../src/context/model.js';
import { writeContext } from '../../src/context/node/index.js';
import { decodeContextFile, encodeContextFile } from '../../src/context/schema.js';
import { emptySharedContext } from '../../src/context/index.js';
import { expectOneLineFailure, runIn } from './cliRun.js';
import { loadedOf, planningAt } from './results.js';
import { commitAll, git, makeRepo, readJson, tempDir, writeFiles } from './repo.js';

const CONTEXT_JSON = ['data', 'context', 'planning_context.json'];
const DASHBOARD = ['data', 'context', 'planning_context.md'];
/** These tests run git by the dozen; their assertions count outcomes, never time. */
const SLOW = { timeout: 120_000 } as const;

const options = planningAt;

/** The decoded planning file of `repo`. */
const storedFile = (repo: string): ContextFile => {
  const file = decodeContextFile(readJson(join(repo, ...CONTEXT_JSON)), 'planning');
  if (E.isLeft(file)) throw new Error(file.left.message);
  return file.right;
};

const texts = (context: SharedContext | undefined) => ({
  decisions: (context?.openDecisions ?? []).map((decision) => decision.text).sort(),
  claims: (context?.evidenceLedger ?? []).map((claim) => claim.claim).sort(),
});

/** Merges `branch` (of `from`, a path or a remote) into the checkout `repo`, which must stop on conflicts. */
const mergeStops = (repo: string, from: string, branch = 'main'): void => {
  git(repo, 'fetch', '-q', from, branch);
  expect(() => git(repo, 'merge', '-q', '--no-edit', 'FETCH_HEAD')).toThrow();
  expect(readFileSync(join(repo, ...CONTEXT_JSON), 'utf8')).toMatch(/^<<<<<<< /mu);
};

// One suite, so that every test of the file runs concurrently with the others (each waits on git and processes).
describe.concurrent('issue 28: git flows', SLOW, () => {
  describe.concurrent('a teammate’s clone', SLOW, () => {
    it('1: clones that identified the repository differently merge into one context, nothing lost', async () => {
      // A works in the original, without a remote (keyed by its first commit); B cloned it before
      // any context existed and has its origin on GitHub (keyed by the origin).
      const a = makeRepo();
      const b = join(tempDir('clones-'), 'app');
      git(a, 'clone', '-q', a, b);
      git(b, 'remote', 'set-url', 'origin', 'https://github.com/acme/app.git');
      loadedOf(
        await writeContext(options(a, 1_000), {
          status: 'succeeded',
          summary: 'A: lexer first.',
          decisions: ['A: tabs or spaces?'],
          claims: [{ claim: 'A looked at the parser' }],
        }),
      );
      commitAll(a, 'context of A');
      loadedOf(
        await writeContext(options(b, 2_000), {
          status: 'succeeded',
          summary: 'B: parser first.',
          decisions: ['B: which grammar?'],
          claims: [{ claim: 'B looked at the parser' }],
        }),
      );
      commitAll(b, 'context of B');
      mergeStops(b, a);

      const resolved = await runIn(b, ['context', 'resolve']);
      expect(resolved.status).toBe(0);
      expect(resolved.stdout).toMatch(
        /the sides identified the repository differently: the contexts of first-commit:[0-9a-f]{12} are merged into those of github\.com\/acme\/app/u,
      );
      const file = storedFile(b);
      expect(file.repository).toEqual({ id: 'github.com/acme/app', source: 'origin' });
      expect(file.contexts.map((context) => context.key)).toEqual([
        { repo: 'github.com/acme/app', branch: 'main', workstreamId: 'default' },
      ]);
      expect(texts(file.contexts[0])).toEqual({
        decisions: ['A: tabs or spaces?', 'B: which grammar?'],
        claims: ['A looked at the parser', 'B looked at the parser'],
      });
      expect(file.contexts[0]!.workingSummary.text).toBe('B: parser first.');
      commitAll(b, 'merge A');
      // A pulls the merge: it still computes its first commit, and reads the one context under the recorded origin.
      git(a, 'pull', '-q', '--no-rebase', b, 'main');
      const show = await runIn(a, ['context', 'show']);
      expect(show.stdout).toContain('repo github.com/acme/app · branch main');
      expect(show.stdout).toContain('A looked at the parser');
      expect(show.stdout).toContain('B looked at the parser');
      expect(show.stdout).toMatch(/note: using the context recorded for repository "github\.com\/acme\/app"/u);
    });
  });

  describe.concurrent('a renamed branch', SLOW, () => {
    it('2: show and bundle say where the context is; move carries it to the new name and merges', async () => {
      const repo = makeRepo();
      loadedOf(
        await writeContext(options(repo, 1_000), {
          status: 'succeeded',
          summary: 'Lexer done, parser next.',
          decisions: ['Recursive descent?'],
          claims: [{ claim: 'Read the parser' }],
        }),
      );
      commitAll(repo, 'context');
      git(repo, 'branch', '-m', 'main', 'trunk');
      const show = await runIn(repo, ['context', 'show']);
      expect(show.status).toBe(0);
      expect(show.stdout).toContain('nothing stored yet for this workstream');
      expect(show.stdout).toMatch(
        /note: nothing is stored for workstream default on branch trunk, but the file holds it on branch main, which no longer exists \(a renamed branch\?\); fact-tracker context move --from main --remove-source carries it to branch trunk\n/u,
      );
      const bundle = await runIn(repo, ['context', 'bundle']);
      expect(bundle.stdout).toContain(
        "- nothing is stored for branch trunk, but this workstream's context is on branch main (a renamed branch?): do not start from scratch\n- carry it here with fact-tracker context move --from main --remove-source\n",
      );
      expect(bundle.stdout).not.toContain('no summary yet');
      // Someone recorded a claim on the new name before anyone moved the context: the move merges the two.
      expect((await runIn(repo, ['context', 'claim', 'Read the lexer'])).status).toBe(0);
      const moved = await runIn(repo, ['context', 'move', '--from', 'main', '--remove-source']);
      expect(moved).toMatchObject({
        status: 0,
        stdout:
          'merged the planning context of workstream default from branch main into the one on branch trunk, and removed it from branch main\nwrote data/context/planning_context.json and data/context/planning_context.md\n',
      });
      expect(moved.stderr).toMatch(/note: branch trunk held a context of workstream default too: the two are merged/u);
      const file = storedFile(repo);
      expect(file.contexts.map((context) => context.key.branch)).toEqual(['trunk']);
      expect(texts(file.contexts[0])).toEqual({
        decisions: ['Recursive descent?'],
        claims: ['Read the lexer', 'Read the parser'],
      });
      expect(file.contexts[0]!.workingSummary.text).toBe('Lexer done, parser next.');
      const after = await runIn(repo, ['context', 'show']);
      expect(after.stdout).toContain('checkpoint: ');
      expect(after.stdout).toContain('summary verified');
      expectOneLineFailure(
        await runIn(repo, ['context', 'move', '--from', 'main']),
        /^fact-tracker context: nothing is stored for workstream default on branch main\n$/u,
      );
      expectOneLineFailure(await runIn(repo, ['context', 'move']), /move needs --from BRANCH/u);
    });
  });

  describe.concurrent('rebases, bisects and detached checkouts', SLOW, () => {
    it('3: a claim during a stopped rebase is kept under the branch being rebased, and survives --continue', async () => {
      const repo = makeRepo();
      const base = git(repo, 'rev-parse', 'HEAD').trim();
      git(repo, 'checkout', '-q', '-b', 'feature');
      writeFiles(repo, { 'src/parser.ts': 'export const parse = (text: string) => text.trim();\n' });
      expect((await runIn(repo, ['context', 'claim', 'Trimmed the input'])).status).toBe(0);
      commitAll(repo, 'feature: trim, with its context');
      git(repo, 'checkout', '-q', 'main');
      writeFiles(repo, { 'src/parser.ts': 'export const parse = (text: string) => text.toLowerCase();\n' });
      commitAll(repo, 'main: lower case');
      git(repo, 'checkout', '-q', 'feature');
      // Quietly: git's own words about the conflict would only clutter the test output.
      expect(() =>
        execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', 'rebase', '-q', 'main'], {
          cwd: repo,
          stdio: 'pipe',
        }),
      ).toThrow();

      const claim = await runIn(repo, ['context', 'claim', 'Resolving the rebase onto main']);
      expect(claim.status).toBe(0);
      expect(claim.stderr).toBe(
        'fact-tracker context: note: a rebase of feature is in progress: the context is kept under branch feature; git add data/context/ before git rebase --continue\n',
      );
      expect(storedFile(repo).contexts.map((context) => context.key.branch)).toEqual(['feature']);
      writeFiles(repo, { 'src/parser.ts': 'export const parse = (text: string) => text.trim().toLowerCase();\n' });
      git(repo, 'add', 'src/parser.ts', 'data/context/');
      git(repo, '-c', 'core.editor=true', 'rebase', '--continue');
      const show = await runIn(repo, ['context', 'show']);
      expect(show.stdout).toContain('branch feature · workstream default');
      expect(show.stdout).toContain('evidence ledger: 2 claims');
      expect(show.stdout).toContain('Resolving the rebase onto main');

      // A bisect started on feature keys its checkouts under feature too.
      git(repo, 'bisect', 'start', 'feature', base);
      expect(git(repo, 'status', '--porcelain=v2', '--branch')).toContain('# branch.head (detached)');
      const bisecting = await runIn(repo, ['context', 'show']);
      expect(bisecting.stdout).toContain('branch feature · workstream default');
      expect(bisecting.stdout).toContain('note: HEAD is detached by a bisect started on feature');
      git(repo, 'bisect', 'reset');
    });

    it('3: a HEAD detached on its own is warned about, and a branch named "(detached)" keeps a key of its own', async () => {
      const repo = makeRepo();
      git(repo, 'checkout', '-q', '--detach');
      const detached = await runIn(repo, ['context', 'claim', 'On a detached HEAD']);
      expect(detached.status).toBe(0);
      expect(detached.stderr).toMatch(
        /^fact-tracker context: warning: HEAD is detached \(no branch, and no rebase or bisect in progress\): the context is keyed under \(detached\), which every detached checkout shares; give --branch NAME/u,
      );
      git(repo, 'checkout', '-q', '-b', '(detached)');
      const named = await runIn(repo, ['context', 'claim', 'On a branch named (detached)']);
      expect(named).toMatchObject({ status: 0, stderr: '' });
      expect(storedFile(repo).contexts.map((context) => [context.key.branch, context.evidenceLedger.length])).toEqual([
        ['(detached)', 1],
        ['refs/heads/(detached)', 1],
      ]);
    });
  });

  /** `count` decisions of one side, and the rest of a context around them. */
  const decisionsOf = (side: string, count: number): string[] =>
    Array.from({ length: count }, (_, i) => `${side}: question ${String(i + 1).padStart(2, '0')}?`);

  describe.concurrent('caps', SLOW, () => {
    it('8: the 201st claim is refused and the ledger kept; a repeated claim still replaces', async () => {
      const repo = makeRepo();
      const full: SharedContext = {
        ...emptySharedContext({ repo: 'app', branch: 'main', workstreamId: 'default' }),
        evidenceLedger: Array.from({ length: CONTEXT_LIMITS.claims }, (_, i) => ({
          claim: `Looked at module ${i}`,
          files: [],
          symbols: [],
        })),
      };
      writeFiles(repo, {
        'data/context/planning_context.json': `${JSON.stringify(encodeContextFile({ kind: 'planning', repository: { id: 'app', source: 'folder' }, contexts: [full] }), null, 2)}\n`,
      });
      commitAll(repo, 'a full ledger');
      const before = readFileSync(join(repo, ...CONTEXT_JSON), 'utf8');
      expectOneLineFailure(
        await runIn(repo, ['context', 'claim', 'Looked at module 200']),
        /^fact-tracker context: claim refused: the evidence ledger holds 200 claims, the most it may: remove claims/u,
      );
      expect(readFileSync(join(repo, ...CONTEXT_JSON), 'utf8')).toBe(before);
      expect((await runIn(repo, ['context', 'claim', 'Looked at module 0'])).status).toBe(0);
      expect(storedFile(repo).contexts[0]!.evidenceLedger).toHaveLength(CONTEXT_LIMITS.claims);
    });

    it('8: a merge over the decision cap drops settled decisions first and lists every one it dropped', async () => {
      const repo = makeRepo();
      const at = (now: number) => options(repo, now, { branch: 'main' });
      loadedOf(await writeContext(at(1_000), { status: 'succeeded', summary: 'Base.' }));
      commitAll(repo, 'base');
      git(repo, 'checkout', '-q', '-b', 'other');
      loadedOf(await writeContext(at(2_000), { status: 'succeeded', decisions: decisionsOf('other', 60) }));
      commitAll(repo, 'other: 60 decisions');
      git(repo, 'checkout', '-q', 'main');
      loadedOf(await writeContext(at(3_000), { status: 'succeeded', decisions: decisionsOf('main', 60) }));
      const settled = Array.from({ length: 10 }, (_, i) => ({ id: `D${i + 1}`, status: 'decided' as const }));
      loadedOf(await writeContext(at(3_500), { status: 'succeeded', settle: settled }));
      commitAll(repo, 'main: 60 decisions, 10 settled');
      mergeStops(repo, repo, 'other');

      const resolved = await runIn(repo, ['context', 'resolve']);
      expect(resolved.status).toBe(0);
      expect(resolved.stdout).toMatch(/kept but 20 over a cap \(listed above\)/u);
      const dropped = resolved.stderr.split('\n').filter((line) => line.includes('dropped decision'));
      expect(dropped).toHaveLength(20);
      for (const line of dropped)
        expect(line).toMatch(
          /^fact-tracker context: note: dropped decision "D\d+ \[(decided|open)\] .*" of workstream default \(branch main\): a context keeps at most 100 decisions$/u,
        );
      expect(dropped.filter((line) => line.includes('[decided]'))).toHaveLength(10);
      const [context] = storedFile(repo).contexts;
      expect(context!.openDecisions).toHaveLength(CONTEXT_LIMITS.decisions);
      expect(context!.openDecisions.every((decision) => decision.status === 'open')).toBe(true);
      // What is kept and what is listed make up both sides.
      const kept = context!.openDecisions.map((decision) => decision.text);
      const listed = dropped.map((line) => /\] (.*)" of workstream/u.exec(line)![1]!);
      expect([...kept, ...listed].sort()).toEqual([...decisionsOf('main', 60), ...decisionsOf('other', 60)].sort());
    });

    it('8: a failure past the last five says which one it pushed out', async () => {
      const repo = makeRepo();
      for (let i = 1; i <= CONTEXT_LIMITS.recentFailures; i += 1)
        loadedOf(
          await writeContext(options(repo, i * 1_000_000), {
            status: 'failed',
            failedStep: `step ${i}`,
            error: `error ${i}`,
            nextAction: 'retry',
          }),
        );
      const sixth = await runIn(repo, [
        'context',
        'record-failure',
        '--failed-step',
        'step 6',
        '--error',
        'error 6',
        '--next-action',
        'retry',
      ]);
      expect(sixth.status).toBe(0);
      expect(sixth.stderr).toBe(
        'fact-tracker context: note: dropped the failure "step 1: error 1" of workstream default (branch main): a context keeps at most 5 recent failures\n',
      );
    });
  });

  describe.concurrent('the dashboard', SLOW, () => {
    it('9: a dashboard out of step with the JSON is reported by show and regenerated by resolve and by writes', async () => {
      const repo = makeRepo();
      const dashboard = join(repo, ...DASHBOARD);
      loadedOf(await writeContext(options(repo, 1_000), { status: 'succeeded', summary: 'First version.' }));
      const first = readFileSync(dashboard, 'utf8');
      loadedOf(await writeContext(options(repo, 2_000), { status: 'succeeded', summary: 'Second version.' }));
      const second = readFileSync(dashboard, 'utf8');
      // A writer killed between its two renames: the JSON is new, the dashboard old.
      writeFileSync(dashboard, first);
      const show = await runIn(repo, ['context', 'show']);
      expect(show.stdout).toMatch(
        /note: the dashboard data\/context\/planning_context\.md is out of step with the JSON \(a merge, an interrupted write, or a dashboard another version drew\): fact-tracker context resolve regenerates it/u,
      );
      expect(readFileSync(dashboard, 'utf8')).toBe(first);
      const resolved = await runIn(repo, ['context', 'resolve']);
      expect(resolved.stdout).toBe(
        'nothing to resolve in data/context/planning_context.json; the dashboard data/context/planning_context.md was out of step with it and is regenerated: git add it\n',
      );
      expect(readFileSync(dashboard, 'utf8')).toBe(second);
      // Conflict markers left in the dashboard alone (the JSON merged cleanly) go the same way, with any write.
      writeFileSync(dashboard, `<<<<<<< HEAD\n${second}=======\n${first}>>>>>>> other\n`);
      expect((await runIn(repo, ['context', 'checkpoint'])).status).toBe(0);
      expect(readFileSync(dashboard, 'utf8')).not.toMatch(/^<<<<<<< /mu);
      expect(readFileSync(dashboard, 'utf8')).toContain('Second version.');
    });
  });
});
