/**
 * The targets table of `npm run eval` on data that lacks a kind of label: a target with no label
 * to count is left out, not reported as missed with a recall of 0.
 */
import { describe, expect, it } from 'vitest';
import type { Compared } from '../../eval/compare.js';
import type { History, PromptOutcome, Tally } from '../../eval/lib.js';
import { issueTargets, type TargetInput } from '../../eval/targets.js';

/** A history of `labelFiles.length` prompts, each with labels pointing to commits of that many files. */
const historyOf = (name: string, group: History['group'], labelFiles: ReadonlyArray<ReadonlyArray<number>>): History =>
  ({
    name,
    group,
    commits: new Map(),
    prompts: labelFiles.map((files) => ({ expect: files.map(() => ({})), labelFiles: files })),
  }) as unknown as History;

/** Outcomes finding every label of each prompt (`found`) or none. */
const outcomesOf = (history: History, found: boolean): PromptOutcome[] =>
  history.prompts.map((prompt) => ({
    hits: found ? prompt.expect.length : 0,
    found: prompt.expect.map(() => found),
    injected: 10,
    tokens: 100,
  }));

const comparedOf = (history: History): Compared =>
  ({
    library: outcomesOf(history, true),
    recency: outcomesOf(history, false),
    curve: [{ budget: 250, library: outcomesOf(history, true) }],
  }) as unknown as Compared;

const tally = (expected: number, hits: number): Tally => ({ prompts: 1, expected, hits, injected: 10, tokens: 100 });

const inputOf = (
  real: ReadonlyArray<History>,
  long: ReadonlyArray<History> = [],
  window: TargetInput['window'] = () => undefined,
): TargetInput => ({ hand: [], real, long, leaveOneOut: comparedOf, longAtDefaults: comparedOf, window });

const SWEEP = 'real, leave-one-out: labels of commits of more than 10 files';

describe('the targets of npm run eval', () => {
  it('leaves out the target of sweeping commits when no label points to a commit of more than 10 files', () => {
    const targets = issueTargets(inputOf([historyOf('small', 'real', [[1, 2], [3]])]));
    expect(targets.map((t) => t.what)).not.toContain(SWEEP);
    expect(targets.find((t) => t.what === 'real, leave-one-out: recall at 500 tokens')).toMatchObject({ met: true });
  });

  it('measures the target of sweeping commits when such labels exist', () => {
    const targets = issueTargets(inputOf([historyOf('sweeping', 'real', [[1, 12], [30]])]));
    expect(targets.find((t) => t.what === SWEEP)).toEqual({
      what: SWEEP,
      target: '>= 0.70',
      value: '1.000 (2 of 2)',
      met: true,
    });
  });

  it('a window with no label has no figure, and one no fresh store finds anything in cannot score below it', () => {
    const session = historyOf('tiny-40', 'long', [[1]]);
    const without = issueTargets(inputOf([], [session], () => ({ inSession: tally(0, 0), fresh: tally(0, 0) })));
    expect(without.map((t) => t.what)).not.toContain('tiny-40: window in session');
    const unfound = issueTargets(inputOf([], [session], () => ({ inSession: tally(4, 0), fresh: tally(4, 0) })));
    expect(unfound.find((t) => t.what === 'tiny-40: window in session')).toMatchObject({
      met: true,
      value: 'no label found from a fresh store',
    });
    const half = issueTargets(inputOf([], [session], () => ({ inSession: tally(4, 2), fresh: tally(4, 4) })));
    expect(half.find((t) => t.what === 'tiny-40: window in session')).toMatchObject({ met: false, value: '0.500' });
  });
});
