/**
 * The shared context through a team's merges and branches (issue 53): both sides of a
 * conflicted merge kept, a side's deliberate deletion kept too, a new branch told apart from a
 * renamed one, and a merged branch's context not left behind. Real clones, real merges, the
 * CLI; each `it` names its item.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import type { ContextFile, SharedContext } from '../../src/context/model.js';
import { writeContext } from '../../src/context/node/index.js';
import { decodeContextFile } from '../../src/context/schema.js';
import { expectOneLineFailure, runIn } from './cliRun.js';
import { loadedOf, planningAt } from './results.js';
import { commitAll, git, makeRepo, readJson, tempDir, writeFiles } from './repo.js';

const CONTEXT_JSON = ['data', 'context', 'planning_context.json'];
/** Git by the dozen under a shared machine's load: assertions count outcomes, never time. */
const SLOW = { timeout: 120_000 } as const;

const options = planningAt;

const storedFile = (repo: string): ContextFile => {
  const file = decodeContextFile(readJson(join(repo, ...CONTEXT_JSON)), 'planning');
  if (E.isLeft(file)) throw new Error(file.left.message);
  return file.right;
};

const onBranch = (repo: string, branch: string): SharedContext | undefined =>
  storedFile(repo).contexts.find((context) => context.key.branch === branch);

/** A clone of `repo` beside it, sharing its history. */
const cloneOf = (repo: string): string => {
  const clone = join(tempDir('clone-'), 'app');
  git(repo, 'clone', '-q', repo, clone);
  return clone;
};

/** Pulls `from`'s main into `repo`, which must stop on a conflict in the context file. */
const pullStops = (repo: string, from: string): void => {
  git(repo, 'fetch', '-q', from, 'main');
  expect(() => git(repo, 'merge', '-q', '--no-edit', 'FETCH_HEAD')).toThrow();
  expect(readFileSync(join(repo, ...CONTEXT_JSON), 'utf8')).toMatch(/^<<<<<<< /mu);
};

describe.concurrent('issue 53: merges and branches', SLOW, () => {
  it('5: resolve keeps the pinned rules and the steps of both sides', async () => {
    const a = makeRepo();
    loadedOf(await writeContext(options(a, 1_000), { status: 'succeeded', summary: 'Start.', checklist: ['Read it'] }));
    commitAll(a, 'context');
    const b = cloneOf(a);
    git(a, 'config', 'user.name', 'Ann');
    git(b, 'config', 'user.name', 'Bob');
    loadedOf(
      await writeContext(options(a, 2_000), {
        status: 'succeeded',
        summary: 'A: lexer.',
        pinRules: ['A: tabs.'],
        checklist: ['Read it', 'A: lex'],
      }),
    );
    commitAll(a, 'A');
    loadedOf(
      await writeContext(options(b, 3_000), {
        status: 'succeeded',
        summary: 'B: parser.',
        pinRules: ['B: semis.'],
        checklist: ['Read it', 'B: parse'],
      }),
    );
    commitAll(b, 'B');
    pullStops(b, a);
    const resolved = await runIn(b, ['context', 'resolve']);
    expect(resolved.status).toBe(0);
    const merged = onBranch(b, 'main')!;
    expect(merged.workingSummary.text).toBe('B: parser.');
    expect(merged.pinnedRules).toEqual(expect.arrayContaining(['A: tabs.', 'B: semis.']));
    expect(merged.checklist.map((step) => step.text)).toEqual(['Read it', 'B: parse', 'A: lex']);
  });

  it('9: resolve merges with the common ancestor: a reverted claim and a decision pruned by hand stay gone', async () => {
    const a = makeRepo();
    loadedOf(
      await writeContext(options(a, 1_000), {
        status: 'succeeded',
        summary: 'Start.',
        decisions: ['Keep or drop the cache?'],
        claims: [{ claim: 'Read the parser' }],
      }),
    );
    commitAll(a, 'context');
    loadedOf(
      await writeContext(options(a, 2_000), { status: 'succeeded', claims: [{ claim: 'Wrong: read the lexer' }] }),
    );
    commitAll(a, 'a claim recorded by mistake');
    // A teammate pulled that, and records a claim of their own.
    const b = cloneOf(a);
    loadedOf(await writeContext(options(b, 3_000), { status: 'succeeded', claims: [{ claim: 'B: read the tests' }] }));
    commitAll(b, 'B works on');
    // A reverts the mistake and prunes the decision by hand, then pulls B.
    git(a, 'revert', '--no-edit', 'HEAD');
    const raw = readJson(join(a, ...CONTEXT_JSON)) as { contexts: Array<{ open_decisions: unknown[] }> };
    raw.contexts[0]!.open_decisions = [];
    writeFiles(a, { 'data/context/planning_context.json': `${JSON.stringify(raw, null, 2)}\n` });
    commitAll(a, 'prune the decision');
    pullStops(a, b);
    const resolved = await runIn(a, ['context', 'resolve']);
    expect(resolved.status).toBe(0);
    const main = onBranch(a, 'main');
    expect((main?.evidenceLedger ?? []).map((claim) => claim.claim).sort()).toEqual([
      'B: read the tests',
      'Read the parser',
    ]);
    expect(main?.openDecisions).toEqual([]);
    expect(resolved.stdout).not.toMatch(/over a cap/u);
  });

  it('6: a new branch is told it was made from main, and move leaves main its context', async () => {
    const repo = makeRepo();
    loadedOf(await writeContext(options(repo, 1_000), { status: 'succeeded', summary: 'Main: lexer done.' }));
    commitAll(repo, 'context');
    git(repo, 'checkout', '-q', '-b', 'feature');
    const bundle = await runIn(repo, ['context', 'bundle']);
    expect(bundle.stdout).not.toContain('renamed');
    expect(bundle.stdout).toMatch(/branch feature is new: this workstream's context is on branch main/u);
    const show = await runIn(repo, ['context', 'show']);
    expect(show.stdout).toMatch(
      /fact-tracker context move --from main starts branch feature from it \(main keeps its own\)/u,
    );
    const copied = await runIn(repo, ['context', 'move', '--from', 'main']);
    expect(copied.status).toBe(0);
    expect(copied.stdout).toMatch(
      /^copied the planning context of workstream default from branch main to branch feature/u,
    );
    expect(onBranch(repo, 'main')?.workingSummary.text).toBe('Main: lexer done.');
    expect(onBranch(repo, 'feature')?.workingSummary.text).toBe('Main: lexer done.');
    // A renamed branch is still told it was renamed, and may take the context with it.
    git(repo, 'checkout', '-q', 'main');
    git(repo, 'branch', '-q', '-m', 'main', 'trunk');
    const renamed = await runIn(repo, ['context', 'bundle']);
    expect(renamed.stdout).toContain('(a renamed branch?)');
    expect(renamed.stdout).toContain('fact-tracker context move --from main --remove-source');
    expect((await runIn(repo, ['context', 'move', '--from', 'main', '--remove-source'])).status).toBe(0);
    expect(onBranch(repo, 'main')).toBeUndefined();
  });

  it('6: a new branch is told it was made from main though the file also holds a merged branch since deleted', async () => {
    const repo = makeRepo();
    loadedOf(await writeContext(options(repo, 1_000), { status: 'succeeded', summary: 'Main: lexer done.' }));
    commitAll(repo, 'context');
    git(repo, 'checkout', '-q', '-b', 'feature');
    loadedOf(await writeContext(options(repo, 2_000), { status: 'succeeded', summary: 'Feature: parser done.' }));
    commitAll(repo, 'feature context');
    git(repo, 'checkout', '-q', 'main');
    git(repo, 'merge', '-q', '--no-ff', '--no-edit', 'feature');
    git(repo, 'branch', '-q', '-d', 'feature');
    git(repo, 'checkout', '-q', '-b', 'next');
    const show = await runIn(repo, ['context', 'show']);
    expect(show.stdout).toContain(
      'note: nothing is stored for workstream default on branch next yet; branch main holds it: fact-tracker context move --from main starts branch next from it (main keeps its own)\n',
    );
    const bundle = await runIn(repo, ['context', 'bundle']);
    expect(bundle.stdout).not.toContain('renamed');
    expect(bundle.stdout).toMatch(/branch next is new: this workstream's context is on branch main/u);
    // Renamed, the branch that held it is the one git's reflog names, though another branch holding it still exists.
    git(repo, 'checkout', '-q', '-b', 'feature', 'main');
    loadedOf(await writeContext(options(repo, 3_000), { status: 'succeeded', summary: 'Feature again.' }));
    commitAll(repo, 'feature again');
    git(repo, 'checkout', '-q', 'main');
    git(repo, 'branch', '-q', '-m', 'main', 'trunk');
    const renamed = await runIn(repo, ['context', 'show']);
    expect(renamed.stdout).toContain(
      'on branch main, which no longer exists (a renamed branch?); fact-tracker context move --from main --remove-source carries it to branch trunk\n',
    );
  });

  it('7: after a merge, a squash or a cherry-pick of a branch, main names the branch’s decisions and claims', async () => {
    const repo = makeRepo();
    loadedOf(
      await writeContext(options(repo, 1_000), {
        status: 'succeeded',
        summary: 'Main.',
        decisions: ['Main: which parser?'],
      }),
    );
    commitAll(repo, 'main context');
    for (const [branch, land] of [
      ['merged', ['merge', '-q', '--no-ff', '--no-edit']],
      ['squashed', ['merge', '-q', '--squash']],
      ['picked', ['cherry-pick']],
    ] as const) {
      git(repo, 'checkout', '-q', '-b', branch);
      loadedOf(
        await writeContext(options(repo, 2_000), {
          status: 'succeeded',
          summary: `${branch} work.`,
          decisions: [`${branch}: which grammar?`],
          claims: [{ claim: `${branch}: read the grammar` }],
        }),
      );
      commitAll(repo, `${branch} context`);
      git(repo, 'checkout', '-q', 'main');
      git(repo, ...land, branch);
      if (branch === 'squashed') git(repo, 'commit', '-q', '-m', 'squashed');
      const show = await runIn(repo, ['context', 'show']);
      expect(show.stdout).toMatch(new RegExp(`also on branch ${branch}: .*${branch}: which grammar\\?`, 'u'));
      expect(show.stdout).toMatch(new RegExp(`${branch}: read the grammar`, 'u'));
      const bundle = await runIn(repo, ['context', 'bundle']);
      expect(bundle.stdout).toMatch(
        new RegExp(`branch ${branch} holds this workstream too \\(1 decision, 1 claim\\).*move --from ${branch}`, 'u'),
      );
    }
    // move carries a merged branch's decisions and claims into main's context, and says it merged them.
    const moved = await runIn(repo, ['context', 'move', '--from', 'merged']);
    expect(moved.status).toBe(0);
    expect(moved.stdout).toMatch(
      /^merged the planning context of workstream default from branch merged into the one on branch main \(branch merged keeps its own; --remove-source takes it away\)\n/u,
    );
    const main = onBranch(repo, 'main')!;
    expect(main.openDecisions.map((decision) => decision.text)).toEqual([
      'Main: which parser?',
      'merged: which grammar?',
    ]);
  });

  it('a new branch whose first write is a failure is still told it is new, never that nothing is stored', async () => {
    const repo = makeRepo();
    loadedOf(
      await writeContext(options(repo, 1_000), { status: 'succeeded', summary: 'Main.', decisions: ['Which?'] }),
    );
    commitAll(repo, 'main context');
    git(repo, 'checkout', '-q', '-b', 'feature');
    expect(
      (
        await runIn(repo, [
          'context',
          'record-failure',
          '--failed-step',
          'npm test',
          '--error',
          'boom',
          '--next-action',
          'fix it',
        ])
      ).status,
    ).toBe(0);
    const bundle = await runIn(repo, ['context', 'bundle']);
    expect(bundle.stdout).toContain(
      "- branch feature is new: this workstream's context is on branch main, which it was most likely made from",
    );
    expect(bundle.stdout).not.toMatch(/nothing is stored|renamed branch/u);
    // Renamed instead (the old name gone): what the branch holds is not called nothing.
    git(repo, 'branch', '-q', '-D', 'main');
    const renamed = await runIn(repo, ['context', 'bundle']);
    expect(renamed.stdout).toContain(
      '- no summary is stored for branch feature yet (what it holds is listed here), but',
    );
    expect(renamed.stdout).not.toContain('nothing is stored');
  });

  it('a move that would pass a cap is refused in one line, naming the cap and how much to prune, and writes nothing', async () => {
    const repo = makeRepo();
    const decisions = (side: string) => Array.from({ length: 60 }, (_, i) => `${side} decision ${i + 1}`);
    loadedOf(await writeContext(options(repo, 1_000), { status: 'succeeded', decisions: decisions('Main') }));
    git(repo, 'checkout', '-q', '-b', 'feature');
    loadedOf(await writeContext(options(repo, 2_000), { status: 'succeeded', decisions: decisions('Feature') }));
    git(repo, 'checkout', '-q', 'main');
    const file = join(repo, ...CONTEXT_JSON);
    const before = readFileSync(file, 'utf8');
    expectOneLineFailure(
      await runIn(repo, ['context', 'move', '--from', 'feature']),
      /^fact-tracker context: move refused: .* would hold 120 decisions, over the 100 a context holds: prune 20 on either branch, then try again; nothing was moved\n$/u,
    );
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it('a move keeps the pinned rules of both sides, or refuses past their cap, never dropping one', async () => {
    const repo = makeRepo();
    const mainRule = 'Main rule: always run the linter before committing any code';
    const featureRule = 'Feature rule: never touch the generated parser files by hand';
    loadedOf(await writeContext(options(repo, 1_000), { status: 'succeeded', summary: 'Main.', pinRules: [mainRule] }));
    git(repo, 'checkout', '-q', '-b', 'feature');
    expect((await runIn(repo, ['context', 'move', '--from', 'main'])).status).toBe(0);
    loadedOf(
      await writeContext(options(repo, 2_000), {
        status: 'succeeded',
        unpinRules: [mainRule],
        pinRules: [featureRule],
      }),
    );
    git(repo, 'checkout', '-q', 'main');
    const file = join(repo, ...CONTEXT_JSON);
    const before = readFileSync(file, 'utf8');
    expectOneLineFailure(
      await runIn(repo, ['context', 'move', '--from', 'feature', '--remove-source']),
      /^fact-tracker context: move refused: .* would hold pinned rules of \d+ characters as rendered, over the \d+ every bundle reserves for them: unpin or shorten rules by \d+ characters on either branch, then try again; nothing was moved\n$/u,
    );
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect(onBranch(repo, 'main')?.pinnedRules).toContain(mainRule);
  });

  it('move --from a branch whose context is kept apart says so, and why, and moves nothing', async () => {
    const repo = makeRepo();
    loadedOf(await writeContext(options(repo, 1_000), { status: 'succeeded', summary: 'Main.' }));
    commitAll(repo, 'main context');
    git(repo, 'checkout', '-q', '-b', 'feature');
    loadedOf(await writeContext(options(repo, 2_000), { status: 'succeeded', decisions: ['Feature: which grammar?'] }));
    // A hand edit breaks feature's context; main's still holds, and the edit travels back to main uncommitted.
    const file = join(repo, ...CONTEXT_JSON);
    const raw = readJson(file) as { contexts: Array<{ key: { branch: string }; open_decisions: Array<object> }> };
    const feature = raw.contexts.find((context) => context.key.branch === 'feature')!;
    feature.open_decisions = [{ ...feature.open_decisions[0], status: 'bogus' }];
    writeFiles(repo, { [CONTEXT_JSON.join('/')]: `${JSON.stringify(raw, null, 2)}\n` });
    git(repo, 'checkout', '-q', 'main');
    const before = readFileSync(file, 'utf8');
    expectOneLineFailure(
      await runIn(repo, ['context', 'move', '--from', 'feature']),
      /^fact-tracker context: the context of workstream default on branch feature is kept apart \(contexts\[\d\]\.open_decisions\[0\]\.status: [^\n]*\): nothing was moved and it is left untouched; fix it by hand, then try again\n$/u,
    );
    expect(readFileSync(file, 'utf8')).toBe(before);
  });
});
