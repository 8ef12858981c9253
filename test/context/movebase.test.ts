/**
 * `move --from BRANCH` between branches that diverged: the two contexts are merged against their
 * common ancestor (the context one took in from the other, at the commit it recorded), so what
 * either side removed since (an unpinned rule, a replaced step) stays removed; without one (the
 * two never took each other in) everything of both is kept, as before. Real git repositories,
 * real files, the CLI.
 */
import { join } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { recordCarriedFrom, unionCarriedFrom } from '../../src/context/carried.js';
import { mergeContexts } from '../../src/context/merge.js';
import type { ContextFile, SharedContext } from '../../src/context/model.js';
import { writeContext } from '../../src/context/node/index.js';
import type { RunOutcome } from '../../src/context/runInput.js';
import { decodeContextFile, encodeContextFile } from '../../src/context/schema.js';
import { emptySharedContext } from '../../src/context/index.js';
import { runIn } from './cliRun.js';
import { loadedOf, planningAt } from './results.js';
import { commitAll, git, makeRepo, readJson } from './repo.js';

const CONTEXT_JSON = ['data', 'context', 'planning_context.json'];
/** Git by the dozen under a shared machine's load: assertions count outcomes, never time. */
const SLOW = { timeout: 120_000 } as const;
const PINNER = 'T <t@t>';

const storedFile = (repo: string): ContextFile => {
  const file = decodeContextFile(readJson(join(repo, ...CONTEXT_JSON)), 'planning');
  if (E.isLeft(file)) throw new Error(file.left.message);
  return file.right;
};

const storedOn = (repo: string, branch: string): SharedContext => {
  const context = storedFile(repo).contexts.find((stored) => stored.key.branch === branch);
  if (context === undefined) throw new Error(`nothing stored on ${branch}`);
  return context;
};

const userRules = (context: SharedContext): string[] =>
  context.pinnedRules.filter((rule) => rule.startsWith('Rule ')).sort();
const steps = (context: SharedContext): string[] => context.checklist.map((step) => step.text).sort();
const decisions = (context: SharedContext): string[] => context.openDecisions.map((decision) => decision.text).sort();

/** Merges `branch` into the checkout; a conflict in the context file is resolved as the docs say, then committed. */
const mergeBranch = async (repo: string, branch: string, ...extra: string[]): Promise<void> => {
  try {
    git(repo, 'merge', '-q', '--no-edit', ...extra, branch);
  } catch {
    expect((await runIn(repo, ['context', 'resolve'])).status).toBe(0);
    commitAll(repo, `merge ${branch}`);
  }
};

/** Main's context with two rules, a step and a decision, committed; then branch feature started from a copy of it. */
const divergedRepo = async (): Promise<string> => {
  const repo = makeRepo();
  loadedOf(
    await writeContext(planningAt(repo, 1_000), {
      status: 'succeeded',
      summary: 'Parser planned.',
      pinRules: ['Rule A: keep the parser pure.', 'Rule B: no new dependencies.'],
      pinnedBy: PINNER,
      checklist: ['Old step'],
      decisions: ['Shared question?'],
    }),
  );
  commitAll(repo, 'main context');
  git(repo, 'checkout', '-q', '-b', 'feature');
  expect((await runIn(repo, ['context', 'move', '--from', 'main'])).status).toBe(0);
  commitAll(repo, 'feature starts from main');
  return repo;
};

/** What a verified run records, besides its status. */
type Recorded = Omit<Extract<RunOutcome, { status: 'succeeded' }>, 'status'>;

/** Records `feature` on branch feature and `main` on main after it, each committed; the checkout ends on main. */
const recordOnBoth = async (repo: string, feature: Recorded, main: Recorded): Promise<void> => {
  loadedOf(await writeContext(planningAt(repo, 2_000), { status: 'succeeded', ...feature }));
  commitAll(repo, 'feature records');
  git(repo, 'checkout', '-q', 'main');
  loadedOf(await writeContext(planningAt(repo, 3_000), { status: 'succeeded', ...main }));
  commitAll(repo, 'main records');
};

describe.concurrent('move --from merges against the common ancestor', SLOW, () => {
  it('a merged branch carried into main: what the branch unpinned and what main replaced stay removed', async () => {
    const repo = await divergedRepo();
    const head = git(repo, 'rev-parse', 'main').trim();
    await recordOnBoth(
      repo,
      { unpinRules: ['Rule A: keep the parser pure.'], decisions: ['Feature question?'] },
      { checklist: ['New step'], decisions: ['Main question?'] },
    );
    await mergeBranch(repo, 'feature');
    const moved = await runIn(repo, ['context', 'move', '--from', 'feature']);
    expect(moved.status).toBe(0);
    const merged = storedOn(repo, 'main');
    expect(userRules(merged)).toEqual(['Rule B: no new dependencies.']);
    expect(steps(merged)).toEqual(['New step']);
    expect(decisions(merged)).toEqual(['Feature question?', 'Main question?', 'Shared question?']);
    expect(moved.stderr).toMatch(
      /the two are merged against their common ancestor \(the context of branch main at commit [0-9a-f]{7}\): what either removed since stays removed/u,
    );
    // The copy recorded where it came from (main's context as committed at main's HEAD then); main
    // now records what it took in, at the merge it was committed in.
    expect(storedOn(repo, 'feature').carriedFrom).toEqual([{ branch: 'main', commit: head }]);
    expect(merged.carriedFrom).toEqual([{ branch: 'feature', commit: git(repo, 'rev-parse', 'HEAD').trim() }]);
  });

  it('main merged into the branch and carried in: what main unpinned stays removed', async () => {
    const repo = await divergedRepo();
    await recordOnBoth(
      repo,
      { decisions: ['Feature question?'], checklist: ['Old step', 'Feature step'] },
      { unpinRules: ['Rule A: keep the parser pure.'], decisions: ['Main question?'] },
    );
    git(repo, 'checkout', '-q', 'feature');
    await mergeBranch(repo, 'main');
    const moved = await runIn(repo, ['context', 'move', '--from', 'main']);
    expect(moved.status).toBe(0);
    const merged = storedOn(repo, 'feature');
    expect(userRules(merged)).toEqual(['Rule B: no new dependencies.']);
    expect(steps(merged)).toEqual(['Feature step', 'Old step']);
    expect(decisions(merged)).toEqual(['Feature question?', 'Main question?', 'Shared question?']);
    // Moving again changes nothing: main's context as now taken in is the ancestor.
    commitAll(repo, 'feature takes main in');
    expect((await runIn(repo, ['context', 'move', '--from', 'main'])).status).toBe(0);
    expect(userRules(storedOn(repo, 'feature'))).toEqual(['Rule B: no new dependencies.']);
    expect(steps(storedOn(repo, 'feature'))).toEqual(['Feature step', 'Old step']);
  });

  it('without a common ancestor (unrelated histories, nothing taken in) everything of both is kept, as before', async () => {
    const repo = makeRepo();
    loadedOf(
      await writeContext(planningAt(repo, 1_000), {
        status: 'succeeded',
        summary: 'Parser planned.',
        pinRules: ['Rule A: keep the parser pure.'],
        pinnedBy: PINNER,
        checklist: ['Main step'],
        decisions: ['Main question?'],
      }),
    );
    commitAll(repo, 'main context');
    git(repo, 'checkout', '-q', '--orphan', 'other');
    git(repo, 'rm', '-q', '-r', '-f', '.');
    loadedOf(
      await writeContext(planningAt(repo, 2_000), {
        status: 'succeeded',
        summary: 'Other planned.',
        pinRules: ['Rule C: document every flag.'],
        pinnedBy: PINNER,
        checklist: ['Other step'],
        decisions: ['Other question?'],
      }),
    );
    commitAll(repo, 'other context');
    expect(() => git(repo, 'merge-base', 'HEAD', 'main')).toThrow();
    await mergeBranch(repo, 'main', '--allow-unrelated-histories');
    const moved = await runIn(repo, ['context', 'move', '--from', 'main']);
    expect(moved.status).toBe(0);
    expect(moved.stderr).toMatch(/the two are merged\n/u);
    const merged = storedOn(repo, 'other');
    expect(userRules(merged)).toEqual(['Rule A: keep the parser pure.', 'Rule C: document every flag.']);
    expect(steps(merged)).toEqual(['Main step', 'Other step']);
    expect(decisions(merged)).toEqual(['Main question?', 'Other question?']);
  });
});

describe('the record of what a context took in', () => {
  const key = { repo: 'r', branch: 'feature', workstreamId: 'default' };
  const commit = (digit: string): string => digit.repeat(40);

  it('is written and read back, and a merge of two sides keeps an entry for each branch', () => {
    const context = recordCarriedFrom(emptySharedContext(key), [{ branch: 'main', commit: commit('a') }], {
      branch: 'release',
      commit: commit('b'),
    });
    const file: ContextFile = { kind: 'planning', contexts: [context] };
    const decoded = decodeContextFile(JSON.parse(JSON.stringify(encodeContextFile(file))), 'planning');
    expect(E.isRight(decoded) && decoded.right.contexts[0]!.carriedFrom).toEqual([
      { branch: 'release', commit: commit('b') },
      { branch: 'main', commit: commit('a') },
    ]);
    const newer = recordCarriedFrom(
      { ...emptySharedContext(key), workingSummary: { text: 'x', updatedAt: 5, stale: false } },
      [{ branch: 'main', commit: commit('c') }],
    );
    expect(unionCarriedFrom(newer, context).carriedFrom).toEqual([
      { branch: 'main', commit: commit('c') },
      { branch: 'release', commit: commit('b') },
    ]);
    expect(mergeContexts(context, newer).carriedFrom).toEqual(unionCarriedFrom(newer, context).carriedFrom);
  });

  it('never names the context’s own branch, and a new entry replaces the one of its branch', () => {
    const context = recordCarriedFrom(
      emptySharedContext(key),
      [
        { branch: 'feature', commit: commit('a') },
        { branch: 'main', commit: commit('b') },
      ],
      { branch: 'main', commit: commit('c') },
    );
    expect(context.carriedFrom).toEqual([{ branch: 'main', commit: commit('c') }]);
    expect(recordCarriedFrom(context, []).carriedFrom).toBeUndefined();
  });
});
