/**
 * `npm run eval -- --json-file FILE` on the hand-written histories and a tiny generated commit
 * history (a 40-commit long session and its last 15 commits as a window, labeled as the shared
 * real histories are): the tables it prints, and the same written as JSON, are there and have
 * their shape. Figures are not checked, only that each table holds every history found, every
 * budget, every kind of label and the targets, and that its counts agree with the data.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../cli/runCli.js';
import { bundledFixture } from '../fixtures/bundled.js';
import { tempDir } from '../tempDirs.js';

interface Commit {
  readonly sha: string;
  readonly message: string;
  readonly files: ReadonlyArray<string>;
}

/** Commits over a small Go service: most change one to three files, every tenth a sweep of twelve. */
const commits: Commit[] = Array.from({ length: 40 }, (_, k) => {
  const area = ['server', 'client', 'config', 'auth'][k % 4]!;
  const files =
    k % 10 === 5
      ? Array.from({ length: 12 }, (_, j) => `pkg/mod${j}/mod${j}.go`)
      : [`${area}/${area}.go`, ...(k % 3 === 0 ? [`${area}/${area}_test.go`, 'go.mod'] : [])];
  return { sha: `c${String(k).padStart(39, '0')}`, message: `${area}: change ${k} to the ${area} handling`, files };
});

/** A history of commits as `build.mjs` writes it: each prompt labeled with who last changed its files in the window. */
const historyOf = (window: ReadonlyArray<Commit>): string => {
  const lastChange = new Map<string, number>();
  const lines: string[] = [];
  window.forEach((commit, k) => {
    const taskId = String(k + 1);
    const at = new Date(Date.UTC(2026, 0, 1) + k * 3_600_000).toISOString();
    const expect = commit.files.flatMap((file) => {
      const m = lastChange.get(file);
      return m === undefined ? [] : [{ subject: file, relation: 'modified_by', object: `task:${m}` }];
    });
    lines.push(
      JSON.stringify({
        type: 'prompt',
        taskId,
        at,
        commit: commit.sha,
        taskPrompt: commit.message,
        ...(expect.length > 0 ? { expect } : {}),
      }),
      JSON.stringify({
        type: 'dispatch',
        role: 'implementer',
        taskId,
        at,
        result: {
          task_id: taskId,
          status: 'completed',
          summary: commit.message,
          files_changed: commit.files,
          tests: [],
          follow_up_actions: [],
        },
      }),
    );
    for (const file of commit.files) lastChange.set(file, k + 1);
  });
  return `${lines.join('\n')}\n`;
};

interface Rates {
  readonly recall: number;
  readonly precision: number;
  readonly tokens: number;
}
interface KindTally {
  readonly expected: number;
  readonly hits: number;
}
interface Report {
  readonly atDefaults: { histories: Array<{ name: string; group: string; oracle: Rates }> };
  readonly leaveOneOut: { groups: Record<string, Record<string, Rates>> };
  readonly spread: Array<{ group: string; histories: number; lowest: { recall: number }; highest: { recall: number } }>;
  readonly curve: Record<
    'leaveOneOut' | 'atDefaults',
    { groups: Record<string, Array<{ budget: number; library: Rates; recency: Rates }>> }
  >;
  readonly labelKinds: Record<
    'leaveOneOut' | 'atDefaults' | 'long',
    { histories: Array<{ name: string; kinds: Record<string, KindTally> }> }
  >;
  readonly long: { histories: Array<{ name: string }> };
  readonly misses?: ReadonlyArray<{ readonly label: string }>;
  readonly windows: Array<{ session: string; window?: string; ratio?: number }>;
  readonly ablations: unknown[];
  readonly targets: Array<{ what: string; met: boolean }>;
}

describe('npm run eval -- --json-file FILE, on the hand-written histories and a tiny commit history', () => {
  let report: Report;
  let text: string;

  beforeAll(() => {
    const realworld = tempDir('eval-tables-');
    mkdirSync(join(realworld, 'histories'));
    mkdirSync(join(realworld, 'scale'));
    writeFileSync(join(realworld, 'histories', 'tiny.jsonl'), historyOf(commits.slice(-15)));
    writeFileSync(join(realworld, 'scale', 'tiny-40.jsonl'), historyOf(commits));
    // One run: the tables printed, and the same as JSON in a file (the fits are most of a run's time).
    const file = join(realworld, 'report.json');
    const run = spawnSync(
      process.execPath,
      [
        // Bundled as tsx would compile it, without its loader's start (see cli.test.ts).
        bundledFixture(join(ROOT, 'eval', 'run.ts')),
        '--realworld',
        realworld,
        '--no-ablations',
        '--misses',
        '--json-file',
        file,
      ],
      { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
    );
    expect(run.status, run.stderr).toBe(0);
    report = JSON.parse(readFileSync(file, 'utf8')) as Report;
    text = run.stdout;
  }, 240_000);

  it('with --misses, lists the labels the defaults miss in the JSON document as in the text', () => {
    expect(report.misses?.length).toBeGreaterThan(0);
    expect(Object.keys(report.misses![0]!)).toEqual([
      'history',
      'line',
      'taskId',
      'label',
      'rank',
      'score',
      'leftOutAs',
    ]);
    expect(text).toContain('Labels the defaults miss');
    for (const miss of report.misses!.slice(0, 5)) expect(text).toContain(miss.label);
  });

  it('finds the window and the long session by their files, beside the seven hand-written histories', () => {
    const names = report.atDefaults.histories.map((h) => `${h.group}:${h.name}`);
    expect(names.filter((n) => n.startsWith('hand:'))).toHaveLength(7);
    expect(names).toContain('real:tiny');
    expect(report.long.histories.map((h) => h.name)).toEqual(['tiny-40']);
    expect(report.windows).toEqual([expect.objectContaining({ session: 'tiny-40', window: 'tiny' })]);
  });

  it('the oracle reaches every label (none is lost in so short a history) with precision 1', () => {
    for (const { oracle } of report.atDefaults.histories) {
      expect(oracle.recall).toBe(1);
      expect(oracle.precision).toBe(1);
      expect(oracle.tokens).toBeGreaterThan(0);
    }
  });

  it('the curve has the four budgets, leave-one-out and at the defaults, for each group, with recency at equal tokens', () => {
    for (const setting of ['leaveOneOut', 'atDefaults'] as const)
      for (const group of ['hand', 'real']) {
        const points = report.curve[setting].groups[group]!;
        expect(points.map((p) => p.budget)).toEqual([150, 250, 500, 1000]);
        for (const p of points) expect(p.library.tokens).toBeLessThanOrEqual(p.budget);
      }
    expect(report.curve.leaveOneOut.groups['real']![2]!.library).toEqual(report.leaveOneOut.groups['real']!['library']);
  });

  it('labels are counted by the size of the commit they point to: 1, 2 to 10 and more than 10 files', () => {
    const tiny = report.labelKinds.atDefaults.histories.find((h) => h.name === 'tiny')!.kinds;
    expect(Object.keys(tiny)).toEqual(['1 file', '2-10 files', '>10 files']);
    // The window is commits 25 to 39: the sweep of commit 35 changes the twelve files the sweep of
    // commit 25 changed, so twelve labels point to a commit of twelve files; every other label to
    // a commit of one or three.
    expect(tiny['>10 files']!.expected).toBe(12);
    expect(tiny['1 file']!.expected + tiny['2-10 files']!.expected).toBeGreaterThan(0);
    // In the long session, the sweeps of commits 15, 25 and 35 each relabel the previous one's twelve files.
    const long = report.labelKinds.long.histories[0]!.kinds;
    expect(long['>10 files']!.expected).toBe(36);
    for (const kind of Object.values(long)) expect(kind.hits).toBeLessThanOrEqual(kind.expected);
  });

  it('the spread gives each group its lowest and highest history, and the targets are listed', () => {
    const hand = report.spread.find((s) => s.group === 'hand')!;
    expect(hand.histories).toBe(7);
    expect(hand.lowest.recall).toBeLessThanOrEqual(hand.highest.recall);
    expect(report.targets.map((t) => t.what)).toEqual(
      expect.arrayContaining([
        'real, leave-one-out: recall at 500 tokens',
        'real, leave-one-out: recall at 250 tokens',
        'long sessions together: recall',
        'tiny-40: window in session',
        'hand-written, leave-one-out: recall',
      ]),
    );
    expect(report.ablations).toEqual([]);
  });

  it('prints the same tables as Markdown', () => {
    for (const title of [
      'The defaults (500 tokens, estimate)',
      'Leave-one-history-out',
      'Leave-one-out recall, how far apart the histories are',
      'Recall by budget, leave-one-out',
      'Recall by budget, at the defaults',
      'Recall by the number of files the commit a label points to changed',
      'Long sessions at the defaults',
      'The targets of issue 55',
    ])
      expect(text).toContain(title);
    expect(text).toContain('| history | 150 tokens | 250 tokens | 500 tokens | 1,000 tokens |');
    expect(text).toContain('| tiny-40 |');
    expect(text).not.toContain('Ablations');
  });
});
