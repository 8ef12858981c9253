/**
 * `move --from BRANCH` merges against a recorded common ancestor only while the contexts there
 * now descend from it: a record left over from a context since removed (a merged branch taken
 * in with --remove-source, then a fresh context on that branch) is no ancestor, and the merge
 * keeps everything of both. In a criss-cross (each branch took the other in at once) what either
 * removed relative to either ancestor stays removed. What a merge leaves out as removed is named.
 * Real git repositories, real files, the CLI.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runIn } from './cliRun.js';
import { commitAll, git, makeRepo } from './repo.js';

const CONTEXT_JSON = ['data', 'context', 'planning_context.json'];
/** Git by the dozen under a shared machine's load: assertions count outcomes, never time. */
const SLOW = { timeout: 120_000 } as const;

interface Stored {
  readonly key: { readonly branch: string };
  readonly pinned_rules: string[];
  readonly checklist: Array<{ text: string }>;
  readonly open_decisions: Array<{ text: string }>;
  carried_from?: Array<{ branch: string; commit: string }>;
  [field: string]: unknown;
}

const readStored = (repo: string): { contexts: Stored[] } =>
  JSON.parse(readFileSync(join(repo, ...CONTEXT_JSON), 'utf8')) as { contexts: Stored[] };

/** What branch `branch`'s context holds: the users' rules, steps and decisions, each sorted. */
const heldOn = (repo: string, branch: string) => {
  const context = readStored(repo).contexts.find((stored) => stored.key.branch === branch);
  if (context === undefined) throw new Error(`nothing stored on ${branch}`);
  return {
    rules: context.pinned_rules.filter((rule) => rule.startsWith('Rule ')).sort(),
    steps: context.checklist.map((step) => step.text).sort(),
    decisions: context.open_decisions.map((decision) => decision.text).sort(),
    carried: context.carried_from ?? [],
  };
};

/** Runs `fact-tracker context ...args` in `repo` and expects it to succeed; its standard error. */
const context = async (repo: string, ...args: string[]): Promise<string> => {
  const ran = await runIn(repo, ['context', ...args]);
  if (ran.status !== 0) throw new Error(`context ${args.join(' ')}: ${ran.stderr}`);
  return ran.stderr;
};

/** Merges `branch` into the checkout; a conflict in the context file is resolved as the docs say, then committed. */
const mergeBranch = async (repo: string, branch: string): Promise<void> => {
  try {
    git(repo, 'merge', '-q', '--no-edit', branch);
  } catch {
    await context(repo, 'resolve');
    commitAll(repo, `merge ${branch}`);
  }
};

describe.concurrent('move --from and the ancestor it merges against', SLOW, () => {
  it('a record left from a context since removed is no ancestor: a long-lived branch taken in twice keeps all of main', async () => {
    const repo = makeRepo();
    await context(
      repo,
      'checkpoint',
      '--summary',
      'S',
      '--pin',
      'Rule A',
      '--step',
      'Main step',
      '--decision',
      'Main question?',
    );
    commitAll(repo, 'main context');
    git(repo, 'checkout', '-q', '-b', 'develop');
    await context(repo, 'move', '--from', 'main');
    await context(repo, 'checkpoint', '--decision', 'Develop question?');
    commitAll(repo, 'develop work');
    git(repo, 'checkout', '-q', 'main');
    await mergeBranch(repo, 'develop');
    await context(repo, 'move', '--from', 'develop', '--remove-source');
    commitAll(repo, 'main takes develop in');
    // develop's context is gone from main, so nothing records it.
    expect(heldOn(repo, 'main').carried).toEqual([]);
    // develop merges main (which removed develop's context) and starts a fresh one.
    git(repo, 'checkout', '-q', 'develop');
    await mergeBranch(repo, 'main');
    expect(readStored(repo).contexts.map((stored) => stored.key.branch)).toEqual(['main']);
    await context(repo, 'checkpoint', '--summary', 'Next iteration', '--decision', 'Next question?');
    commitAll(repo, 'develop next');
    git(repo, 'checkout', '-q', 'main');
    await mergeBranch(repo, 'develop');
    const note = await context(repo, 'move', '--from', 'develop');
    expect(note).not.toMatch(/common ancestor/u);
    expect(heldOn(repo, 'main')).toMatchObject({
      rules: ['Rule A'],
      steps: ['Main step'],
      decisions: ['Develop question?', 'Main question?', 'Next question?'],
    });
  });

  it('a record whose branch context was removed and made anew since (an outdated record in the file) is no ancestor', async () => {
    const repo = makeRepo();
    await context(
      repo,
      'checkpoint',
      '--summary',
      'S',
      '--pin',
      'Rule A',
      '--step',
      'Main step',
      '--decision',
      'Main question?',
    );
    commitAll(repo, 'main context');
    git(repo, 'checkout', '-q', '-b', 'feature');
    await context(repo, 'move', '--from', 'main');
    await context(repo, 'checkpoint', '--decision', 'Old feature question?');
    commitAll(repo, 'old feature');
    git(repo, 'checkout', '-q', 'main');
    await mergeBranch(repo, 'feature');
    await context(repo, 'move', '--from', 'feature', '--remove-source');
    // A record as an older version wrote it with --remove-source: main's context still names feature.
    const taken = git(repo, 'rev-parse', 'HEAD').trim();
    const stored = readStored(repo);
    const main = stored.contexts.find((entry) => entry.key.branch === 'main')!;
    main.carried_from = [{ branch: 'feature', commit: taken }];
    writeFileSync(join(repo, ...CONTEXT_JSON), `${JSON.stringify(stored, null, 2)}\n`);
    await context(repo, 'resolve');
    commitAll(repo, 'main takes the old feature in');
    git(repo, 'branch', '-q', '-D', 'feature');
    git(repo, 'checkout', '-q', '-b', 'feature');
    await context(repo, 'checkpoint', '--summary', 'New feature', '--decision', 'New question?');
    commitAll(repo, 'new feature');
    git(repo, 'checkout', '-q', 'main');
    await mergeBranch(repo, 'feature');
    expect(heldOn(repo, 'main').carried).toEqual([{ branch: 'feature', commit: taken }]);
    const note = await context(repo, 'move', '--from', 'feature');
    expect(note).not.toMatch(/common ancestor/u);
    expect(heldOn(repo, 'main')).toMatchObject({
      rules: ['Rule A'],
      steps: ['Main step'],
      decisions: ['Main question?', 'New question?', 'Old feature question?'],
    });
  });

  it('a criss-cross: what one side removed after each took the other in stays removed, and the note names it', async () => {
    const repo = makeRepo();
    await context(repo, 'checkpoint', '--summary', 'S');
    commitAll(repo, 'c1');
    git(repo, 'checkout', '-q', '-b', 'feature');
    await context(repo, 'move', '--from', 'main');
    commitAll(repo, 'f1');
    git(repo, 'checkout', '-q', 'main');
    await context(repo, 'checkpoint', '--pin', 'Rule Z');
    commitAll(repo, 'main adds Z');
    git(repo, 'checkout', '-q', 'feature');
    await context(repo, 'checkpoint', '--pin', 'Rule F');
    commitAll(repo, 'feature adds F');
    const [mainTip, featureTip] = [git(repo, 'rev-parse', 'main').trim(), git(repo, 'rev-parse', 'feature').trim()];
    git(repo, 'checkout', '-q', 'main');
    await mergeBranch(repo, featureTip);
    await context(repo, 'move', '--from', 'feature');
    commitAll(repo, 'main takes feature in');
    git(repo, 'checkout', '-q', 'feature');
    await mergeBranch(repo, mainTip);
    await context(repo, 'move', '--from', 'main');
    commitAll(repo, 'feature takes main in');
    expect(heldOn(repo, 'feature').rules).toEqual(['Rule F', 'Rule Z']);
    await context(repo, 'checkpoint', '--unpin', 'Rule Z');
    commitAll(repo, 'feature removes Z');
    git(repo, 'checkout', '-q', 'main');
    await mergeBranch(repo, 'feature');
    const note = await context(repo, 'move', '--from', 'feature');
    expect(heldOn(repo, 'main').rules).toEqual(['Rule F']);
    expect(note).toMatch(/against their common ancestors \(.+ and .+\).*left out as removed since: rule "Rule Z"/u);
  });

  it('a recorded commit must be a full commit id of this repository: a tag named like one is not read', async () => {
    const repo = makeRepo();
    await context(repo, 'checkpoint', '--summary', 'S', '--pin', 'Rule A', '--decision', 'Main question?');
    commitAll(repo, 'main context');
    const lookalike = 'a'.repeat(64);
    git(repo, 'tag', lookalike, 'HEAD');
    git(repo, 'checkout', '-q', '-b', 'feature');
    await context(repo, 'move', '--from', 'main');
    const stored = readStored(repo);
    const feature = stored.contexts.find((entry) => entry.key.branch === 'feature')!;
    Object.assign(feature, { carried_from: [{ branch: 'main', commit: lookalike }], open_decisions: [] });
    feature.pinned_rules.splice(3);
    writeFileSync(join(repo, ...CONTEXT_JSON), `${JSON.stringify(stored, null, 2)}\n`);
    await context(repo, 'resolve');
    commitAll(repo, 'feature edited by hand');
    git(repo, 'checkout', '-q', 'main');
    await mergeBranch(repo, 'feature');
    const note = await context(repo, 'move', '--from', 'feature');
    expect(note).not.toMatch(/common ancestor/u);
    expect(heldOn(repo, 'main')).toMatchObject({ rules: ['Rule A'], decisions: ['Main question?'] });
  });

  it('moving from a branch whose context is kept apart says why, not that nothing is stored', async () => {
    const repo = makeRepo();
    await context(repo, 'checkpoint', '--summary', 'S');
    commitAll(repo, 'main context');
    git(repo, 'checkout', '-q', '-b', 'feature');
    await context(repo, 'move', '--from', 'main');
    const stored = readStored(repo);
    const feature = stored.contexts.find((entry) => entry.key.branch === 'feature')!;
    Object.assign(feature, { open_decisions: [{ id: 'D1', text: 'x', status: 'bogus' }] });
    writeFileSync(join(repo, ...CONTEXT_JSON), `${JSON.stringify(stored, null, 2)}\n`);
    commitAll(repo, 'broken by hand');
    git(repo, 'checkout', '-q', 'main');
    await mergeBranch(repo, 'feature');
    const moved = await runIn(repo, ['context', 'move', '--from', 'feature']);
    expect(moved.status).not.toBe(0);
    expect(moved.stderr).toMatch(/branch feature breaks a cap or its schema \(.*open_decisions.*\): it is kept apart/u);
    expect(moved.stderr).not.toMatch(/nothing is stored/u);
  });
});
