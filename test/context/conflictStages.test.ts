/**
 * A merge conflict in a context file whose markers git joined wrongly (a side that is no context
 * file, or one that keeps a workstream apart): the sides are taken from the index's stages, and a
 * file with markers is never moved aside; sound markers keep what was edited between them. Real
 * repositories, real merges and pulls, the CLI.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { splitConflictMarkers } from '../../src/context/conflictMarkers.js';
import { parseJsonText } from '../../src/context/jsonText.js';
import type { ContextError, ContextFile } from '../../src/context/model.js';
import { moveContext, writeContext } from '../../src/context/node/index.js';
import type { RunOutcome } from '../../src/context/runInput.js';
import { decodeContextFile } from '../../src/context/schema.js';
import { expectOneLineFailure, runBinary, runIn } from './cliRun.js';
import { loadedOf, planningAt } from './results.js';
import { commitAll, copiesOf, git, makeRepo, tempDir } from './repo.js';

const CONTEXT_JSON = ['data', 'context', 'planning_context.json'];
/** Git by the dozen under a shared machine's load: assertions count outcomes, never time. */
const SLOW = { timeout: 120_000 } as const;
const PINNED_BY = 't <t@t>';

const decode = (text: string): E.Either<ContextError, ContextFile> =>
  E.chain((value: unknown) => decodeContextFile(value, 'planning'))(parseJsonText(text));

const branchesOf = (text: string): string[] => {
  const file = decode(text);
  if (E.isLeft(file)) throw new Error(file.left.message);
  return file.right.contexts.map((context) => context.key.branch);
};

/** Runs git in `repo` with `input` on its standard input, and nothing on the test's output. */
const gitWithInput = (repo: string, input: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', ...args], {
    cwd: repo,
    input,
    encoding: 'utf8',
    stdio: 'pipe',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' },
  });

/** Runs git where it may stop on a conflict: whether it did not. */
const gitMayStop = (repo: string, ...args: string[]): boolean => {
  try {
    gitWithInput(repo, '', ...args);
    return true;
  } catch {
    return false;
  }
};

/**
 * A repository on main in the middle of merging `feature`, a long-lived branch squash-merged
 * once before: the context file conflicts, and git joins the markers so that "their" side, read
 * from them, holds main's context twice. The clock of each write is its step.
 */
const conflictAfterSquash = async (): Promise<string> => {
  const repo = makeRepo();
  let at = 1_750_000_000_000;
  const write = async (outcome: Omit<RunOutcome & { status: 'succeeded' }, 'status'>): Promise<void> => {
    at += 1_000;
    loadedOf(await writeContext(planningAt(repo, at), { status: 'succeeded', pinnedBy: PINNED_BY, ...outcome }));
  };
  const move = async (from: string): Promise<void> => {
    at += 1_000;
    loadedOf(await moveContext(planningAt(repo, at), from));
  };
  await write({ summary: 'S main', pinRules: ['Rule A'] });
  commitAll(repo, 'm0');
  git(repo, 'checkout', '-q', '-b', 'feature');
  await move('main');
  await write({ pinRules: ['Rule X'] });
  commitAll(repo, 'f1');
  git(repo, 'checkout', '-q', 'main');
  git(repo, 'merge', '-q', '--no-edit', 'feature');
  await move('feature');
  commitAll(repo, 'm1');
  git(repo, 'checkout', '-q', 'feature');
  await write({ unpinRules: ['Rule X'] });
  commitAll(repo, 'f2');
  git(repo, 'checkout', '-q', 'main');
  await write({ decisions: ['Main question?'] });
  commitAll(repo, 'm1b');
  gitMayStop(repo, 'merge', '-q', '--squash', 'feature');
  await move('feature');
  commitAll(repo, 'squash feature');
  git(repo, 'checkout', '-q', 'feature');
  await write({ pinRules: ['Rule Y'] });
  commitAll(repo, 'f3');
  git(repo, 'checkout', '-q', 'main');
  expect(gitMayStop(repo, 'merge', '-q', '--no-edit', 'feature')).toBe(false);
  // What the case is made of: the index's sides are context files, the one the markers give is not.
  const shown = CONTEXT_JSON.join('/');
  expect(branchesOf(git(repo, 'show', `:2:${shown}`)).sort()).toEqual(['feature', 'main']);
  expect(branchesOf(git(repo, 'show', `:3:${shown}`)).sort()).toEqual(['feature', 'main']);
  const sides = splitConflictMarkers(readFileSync(join(repo, ...CONTEXT_JSON), 'utf8'));
  expect(sides).toBeDefined();
  expect(E.isLeft(decode(sides!.theirs))).toBe(true);
  return repo;
};

/** A copy of one `conflictAfterSquash` repository, made once per test file (two dozen git processes and writes). */
const conflictAfterSquashCopy = copiesOf(conflictAfterSquash);

/** How to run as a user who cannot write a folder made read-only (root can write any): none when not root. */
const unprivileged = (repo: string): { uid?: number; env: Record<string, string> } => {
  if (process.getuid?.() !== 0) return { env: {} };
  for (const dir of [repo, join(repo, 'data'), join(repo, 'src')]) chmodSync(dir, 0o755);
  // git refuses a repository owned by another user unless told it is safe.
  return {
    uid: 65534,
    env: { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'safe.directory', GIT_CONFIG_VALUE_0: '*', HOME: '/tmp' },
  };
};

const corruptFiles = (repo: string): string[] =>
  readdirSync(join(repo, 'data', 'context')).filter((name) => name.endsWith('.corrupt'));

/** How many contexts a context file's text keeps apart; a text that is no context file fails the test. */
const keptApartIn = (text: string): number => {
  const file = decode(text);
  if (E.isLeft(file)) throw new Error(file.left.message);
  return file.right.quarantined?.length ?? 0;
};

describe.sequential('a context file whose conflict markers git joined wrongly', SLOW, () => {
  it('is read from the index during the merge: show reports both sides, resolve merges them', async () => {
    const repo = await conflictAfterSquashCopy();
    expectOneLineFailure(
      await runIn(repo, ['context', 'show']),
      /has merge conflict markers \(from a git pull or merge\): ours holds workstreams default \(branch feature\), default \(branch main\); theirs holds workstreams default \(branch feature\), default \(branch main\); run fact-tracker context resolve/u,
    );
    const resolved = await runIn(repo, ['context', 'resolve']);
    expect(resolved.stderr).toBe('');
    expect(resolved.status).toBe(0);
    expect(resolved.stdout).toMatch(
      /^resolved data\/context\/planning_context\.json: merged ours \(2 workstreams\) and theirs \(2\) against their common ancestor/u,
    );
    expect(corruptFiles(repo)).toEqual([]);
    expect(branchesOf(readFileSync(join(repo, ...CONTEXT_JSON), 'utf8')).sort()).toEqual(['feature', 'main']);
    const show = await runIn(repo, ['context', 'show']);
    expect(show.status).toBe(0);
    expect(show.stdout).toContain('D1 [open] Main question?');
    expect(show.stdout).toContain('Rule A');
  });

  it('with stages that are not context files either, is refused in one line and left as it is', async () => {
    const repo = await conflictAfterSquashCopy();
    const file = join(repo, ...CONTEXT_JSON);
    // The index's sides replaced by ones that do not decode either, as a merge of hand edits could leave them.
    const shown = CONTEXT_JSON.join('/');
    const broken = gitWithInput(repo, '{"kind": "planning"', 'hash-object', '-w', '--stdin').trim();
    const stages = git(repo, 'ls-files', '-s', '--', shown).replace(
      /^(\d+) [0-9a-f]+ ([23])\t/gmu,
      `$1 ${broken} $2\t`,
    );
    gitWithInput(repo, stages, 'update-index', '--index-info');
    expect(git(repo, 'ls-files', '-s', '--', shown).match(new RegExp(broken, 'gu'))).toHaveLength(2);
    const before = readFileSync(file, 'utf8');
    for (const argv of [
      ['context', 'resolve'],
      ['context', 'claim', 'After the merge'],
    ])
      expectOneLineFailure(
        await runIn(repo, argv),
        /^fact-tracker context: data\/context\/planning_context\.json: has merge conflict markers, and (?:ours|theirs)(?: as git holds it \(git show :[23]:data\/context\/planning_context\.json\))? is not a context file: .*; nothing was written and the file was left as it is: set it right by hand \(git checkout --ours -- data\/context\/planning_context\.json, or --theirs, keeps one side; or edit the markers out\), then try again$/mu,
      );
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect(corruptFiles(repo)).toEqual([]);
  });

  it('copied with markers that give no context file, is never said to be moved aside, even where it could not be', async () => {
    const repo = makeRepo();
    const dir = join(repo, 'data', 'context');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'planning_context.json');
    const text = '<<<<<<< HEAD\n{"kind": "planning",\n=======\n{"kind": "planning", "contexts": [\n>>>>>>> feature\n';
    writeFileSync(file, text);
    expectOneLineFailure(
      await runIn(repo, ['context', 'show']),
      /has merge conflict markers, and (?:ours|theirs)(?: as git holds it \(git show :[23]:data\/context\/planning_context\.json\))? is not a context file: .* \(left as it is: set it right by hand \(git checkout --ours/u,
    );
    // In a folder this process cannot write to, the write stops before reading the file: it says why, and no more.
    const as = unprivileged(repo);
    chmodSync(dir, 0o555);
    try {
      const claim = await runBinary(['context', 'claim', 'hello'], {
        cwd: repo,
        env: as.env,
        ...(as.uid === undefined ? {} : { uid: as.uid }),
      });
      expect(claim.status).toBe(1);
      expect(claim.stderr).not.toMatch(/moved aside/u);
    } finally {
      chmodSync(dir, 0o755);
    }
    expect(readFileSync(file, 'utf8')).toBe(text);
    expect(corruptFiles(repo)).toEqual([]);
  });
});

/**
 * A context file's text with workstream `web` added beside main's by hand, breaking its schema
 * (one decision id twice): a context every read keeps apart.
 */
const withBrokenWorkstream = (text: string): string => {
  const file = JSON.parse(text) as { contexts: Array<Record<string, unknown> & { key: object }> };
  const main = file.contexts[0]!;
  const decision = { id: 'D1', text: 'Web question?', status: 'open' };
  file.contexts.push({ ...main, key: { ...main.key, workstream_id: 'web' }, open_decisions: [decision, decision] });
  return `${JSON.stringify(file, null, 2)}\n`;
};

/**
 * A repository on main in the middle of merging `side`, where both changed main's context (a
 * decision each): the context file conflicts; with `keptApart`, a workstream broken by hand
 * before the branches parted is kept apart on both sides.
 */
const conflictOnMain = async (keptApart = false): Promise<string> => {
  const repo = makeRepo();
  const checkpoint = async (...argv: string[]): Promise<void> => {
    const run = await runIn(repo, ['context', 'checkpoint', ...argv]);
    expect(run.status).toBe(0);
    if (keptApart) expect(run.stderr).toMatch(/workstream web \(branch main\) is kept apart/u);
    else expect(run.stderr).toBe('');
  };
  await runIn(repo, ['context', 'checkpoint', '--summary', 'S0', '--decision', 'Base question?', '--pin', 'Rule base']);
  const file = join(repo, ...CONTEXT_JSON);
  if (keptApart) writeFileSync(file, withBrokenWorkstream(readFileSync(file, 'utf8')));
  commitAll(repo, 'c0');
  git(repo, 'checkout', '-q', '-b', 'side');
  await checkpoint('--branch', 'main', '--decision', 'Side question?');
  commitAll(repo, 's1');
  git(repo, 'checkout', '-q', 'main');
  await checkpoint('--decision', 'Main question?');
  commitAll(repo, 'm1');
  expect(gitMayStop(repo, 'merge', '-q', '--no-edit', 'side')).toBe(false);
  return repo;
};

/** A copy of one `conflictOnMain()` repository, made once per test file (a dozen git processes and writes). */
const conflictOnMainCopy = copiesOf(() => conflictOnMain());

describe.sequential('a context file in conflict during a merge', SLOW, () => {
  it('keeps what was edited by hand between its markers: its sides are the markers’ while they give context files', async () => {
    const repo = await conflictOnMainCopy();
    const file = join(repo, ...CONTEXT_JSON);
    writeFileSync(file, readFileSync(file, 'utf8').replace('Side question?', 'Side question, edited by hand?'));
    const resolved = await runIn(repo, ['context', 'resolve']);
    expect(resolved.status).toBe(0);
    const show = await runIn(repo, ['context', 'show']);
    expect(show.stdout).toContain('Side question, edited by hand?');
    expect(show.stdout).toContain('Main question?');
    expect(corruptFiles(repo)).toEqual([]);
  });

  it('keeps what was edited by hand between its markers while a side keeps apart only what its stage keeps apart', async () => {
    const repo = await conflictOnMain(true);
    const file = join(repo, ...CONTEXT_JSON);
    writeFileSync(file, readFileSync(file, 'utf8').replace('Side question?', 'Side question, edited by hand?'));
    const resolved = await runIn(repo, ['context', 'resolve']);
    expect(resolved.status).toBe(0);
    expect(resolved.stderr).toMatch(/workstream web \(branch main\) is kept apart/u);
    const show = await runIn(repo, ['context', 'show']);
    expect(show.stdout).toContain('Side question, edited by hand?');
    expect(show.stdout).toContain('Main question?');
    expect(keptApartIn(readFileSync(file, 'utf8'))).toBe(1);
    expect(corruptFiles(repo)).toEqual([]);
  });

  it('with markers of another length (conflict-marker-size), is read from the index, never moved aside', async () => {
    const repo = await conflictOnMainCopy();
    // The markers git writes for the attribute: the conflict checked out again from the index's stages.
    writeFileSync(join(repo, '.gitattributes'), 'data/context/*.json conflict-marker-size=9\n');
    git(repo, 'checkout', '--conflict=merge', '--', CONTEXT_JSON.join('/'));
    expect(readFileSync(join(repo, ...CONTEXT_JSON), 'utf8')).toMatch(/^<{9} ours$/mu);
    const resolved = await runIn(repo, ['context', 'resolve']);
    expect(resolved.stderr).toBe('');
    expect(resolved.status).toBe(0);
    expect(corruptFiles(repo)).toEqual([]);
    const show = await runIn(repo, ['context', 'show']);
    for (const text of ['Side question?', 'Main question?', 'Rule base']) expect(show.stdout).toContain(text);
  });
});

/** Records a checkpoint in `repo` through the CLI, which says nothing on stderr. */
const checkpointIn = async (repo: string, ...argv: string[]): Promise<void> => {
  const run = await runIn(repo, ['context', 'checkpoint', ...argv]);
  expect(run.stderr).toBe('');
};

/**
 * Bob's clone of Alice's repository, both from one context, stopped in a `git pull`: Alice settles
 * the first decision and records another; Bob records one and a step, commits, and pulls. Git
 * puts both new decisions under one id outside the markers, so each side rebuilt from them keeps
 * main's context apart, while the index's stages are sound.
 */
const conflictOnPull = async (): Promise<string> => {
  const alice = makeRepo();
  await checkpointIn(alice, '--summary', 'Base summary', '--decision', 'Base question?', '--step', 'Base step');
  commitAll(alice, 'base');
  const bob = join(tempDir('clone-'), 'app');
  git(alice, 'clone', '-q', alice, bob);
  await checkpointIn(alice, '--summary', 'Alice summary', '--decision', 'Alice question?', '--decide', 'D1');
  commitAll(alice, 'alice');
  await checkpointIn(bob, '--summary', 'Bob summary', '--decision', 'Bob question?', '--step', 'Bob step');
  commitAll(bob, 'bob');
  expect(gitMayStop(bob, 'pull', '-q', '--no-rebase', '--no-edit', 'origin', 'main')).toBe(false);
  // What the case is made of: both sides the markers give keep a context apart; stages 2 and 3 keep none.
  const sides = splitConflictMarkers(readFileSync(join(bob, ...CONTEXT_JSON), 'utf8'));
  expect(sides).toBeDefined();
  expect([keptApartIn(sides!.ours), keptApartIn(sides!.theirs)]).toEqual([1, 1]);
  const shown = CONTEXT_JSON.join('/');
  expect([keptApartIn(git(bob, 'show', `:2:${shown}`)), keptApartIn(git(bob, 'show', `:3:${shown}`))]).toEqual([0, 0]);
  return bob;
};

describe.sequential('a context file in conflict after an ordinary git pull', SLOW, () => {
  it('whose markers’ sides each hold one decision id twice, is merged from the index’s stages: nothing kept apart, nothing lost', async () => {
    const repo = await conflictOnPull();
    expectOneLineFailure(
      await runIn(repo, ['context', 'show']),
      /has merge conflict markers \(from a git pull or merge\): ours holds workstreams default \(branch main\); theirs holds workstreams default \(branch main\); run fact-tracker context resolve/u,
    );
    const resolved = await runIn(repo, ['context', 'resolve']);
    expect(resolved.stderr).toBe('');
    expect(resolved.status).toBe(0);
    expect(resolved.stdout).toMatch(
      /^resolved data\/context\/planning_context\.json: merged ours \(1 workstream\) and theirs \(1\) against their common ancestor/u,
    );
    expect(keptApartIn(readFileSync(join(repo, ...CONTEXT_JSON), 'utf8'))).toBe(0);
    const show = await runIn(repo, ['context', 'show']);
    expect(show.stderr).toBe('');
    expect(show.status).toBe(0);
    for (const text of [
      'D1 [decided] Base question?',
      'D2 [open] Bob question?',
      'D3 [open] Alice question?',
      '[ ] Bob step',
      'Bob summary',
    ])
      expect(show.stdout).toContain(text);
    // Bob's steps replaced the checklist: stage 1, the ancestor, shows the old step removed on purpose.
    expect(show.stdout).not.toContain('Base step');
    expect(corruptFiles(repo)).toEqual([]);
  });
});

/** The checkpoint of each context of a context file's text; a text that is no context file fails the test. */
const checkpointsIn = (text: string): ReadonlyArray<ContextFile['contexts'][number]['checkpoint']> => {
  const file = decode(text);
  if (E.isLeft(file)) throw new Error(file.left.message);
  return file.right.contexts.map((context) => context.checkpoint);
};

/**
 * Alice's repository stopped in a `git pull` of Bob's clone (`--rebase` with `rebase`), both
 * from one verified summary: Bob changes the code and records a new summary; Alice, later,
 * re-verifies the old one with a decision, changing no code. Git merges the file line by line:
 * the two HEADs and files hashes conflict, and Bob's summary hash, which only he changed, conflicts
 * with them only because nothing both sides left alone stands between it and them, so that each
 * side rebuilt from the markers holds a checkpoint its teammate recorded, never one joined from both.
 */
const checkpointConflictOnPull = async (rebase = false): Promise<string> => {
  const alice = makeRepo();
  await checkpointIn(alice, '--summary', 'Base summary');
  commitAll(alice, 'base');
  const bob = join(tempDir('clone-'), 'app');
  git(alice, 'clone', '-q', alice, bob);
  writeFileSync(join(bob, 'src', 'parser.ts'), 'export const parse = (text: string) => text.trim();\n');
  commitAll(bob, 'trim');
  await checkpointIn(bob, '--summary', 'Bob summary: parse trims');
  commitAll(bob, 'bob');
  await checkpointIn(alice, '--decision', 'Alice question?');
  commitAll(alice, 'alice');
  expect(gitMayStop(alice, 'pull', '-q', rebase ? '--rebase' : '--no-rebase', '--no-edit', bob, 'main')).toBe(false);
  // Each side the markers give holds a checkpoint as one of its stages does, never one git joined from both.
  const shown = CONTEXT_JSON.join('/');
  const sides = splitConflictMarkers(readFileSync(join(alice, ...CONTEXT_JSON), 'utf8'));
  expect(sides).toBeDefined();
  const stages = [git(alice, 'show', `:2:${shown}`), git(alice, 'show', `:3:${shown}`)].map(checkpointsIn);
  expect([sides!.ours, sides!.theirs].map(checkpointsIn)).toEqual(stages);
  return alice;
};

/** A copy of one `checkpointConflictOnPull()` repository, made once per test file for the two tests of a merge. */
const checkpointConflictOnPullCopy = copiesOf(() => checkpointConflictOnPull());

describe.sequential('a context file whose checkpoints both sides changed', SLOW, () => {
  for (const rebase of [false, true])
    it(`after a pull${rebase ? ' --rebase' : ''}, keeps the newer summary with the checkpoint that verified it: summary verified`, async () => {
      const repo = await (rebase ? checkpointConflictOnPull(true) : checkpointConflictOnPullCopy());
      const bobs = checkpointsIn(git(repo, 'show', `:${rebase ? 2 : 3}:${CONTEXT_JSON.join('/')}`));
      const resolved = await runIn(repo, ['context', 'resolve']);
      expect(resolved.status).toBe(0);
      expect(checkpointsIn(readFileSync(join(repo, ...CONTEXT_JSON), 'utf8'))).toEqual(bobs);
      const show = await runIn(repo, ['context', 'show']);
      expect(show.stdout).toContain('Bob summary: parse trims');
      expect(show.stdout).toContain('Alice question?');
      expect(show.stdout).toMatch(/^checkpoint: [0-9a-f]{7} · HEAD [0-9a-f]{7} · summary verified$/mu);
    });

  it('added with its markers during the merge (no stages left), still holds each side’s checkpoint whole: summary verified', async () => {
    const repo = await checkpointConflictOnPullCopy();
    const shown = CONTEXT_JSON.join('/');
    const bobs = checkpointsIn(git(repo, 'show', `:3:${shown}`));
    git(repo, 'checkout', '--conflict=diff3', '--', shown);
    git(repo, 'add', shown);
    expect(git(repo, 'ls-files', '-s', '--', shown)).toMatch(/ 0\t/u);
    const resolved = await runIn(repo, ['context', 'resolve']);
    expect(resolved.status).toBe(0);
    expect(checkpointsIn(readFileSync(join(repo, ...CONTEXT_JSON), 'utf8'))).toEqual(bobs);
    const show = await runIn(repo, ['context', 'show']);
    expect(show.stdout).toContain('Bob summary: parse trims');
    expect(show.stdout).toMatch(/^checkpoint: [0-9a-f]{7} · HEAD [0-9a-f]{7} · summary verified$/mu);
  });
});
