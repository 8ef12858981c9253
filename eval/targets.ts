/**
 * The targets of issue 55 ("retrieval that carries over to repositories nobody fitted on") against
 * the evaluation's figures: leave-one-out recall, precision and the curve on the real histories,
 * the labels of sweeping commits, the long sessions and their windows, the hand-written histories.
 */
import type { Compared } from './compare.js';
import {
  addKindTallies,
  addTally,
  emptyKindTallies,
  emptyTally,
  type History,
  type PromptOutcome,
  rates,
  type Tally,
  tallyOf,
} from './lib.js';
import { fixed, printTable } from './tables.js';

/** One target of the issue against its figure. */
export interface Target {
  readonly what: string;
  readonly target: string;
  readonly value: string;
  readonly met: boolean;
}

/** What the targets are measured on. */
export interface TargetInput {
  readonly hand: ReadonlyArray<History>;
  readonly real: ReadonlyArray<History>;
  readonly long: ReadonlyArray<History>;
  readonly leaveOneOut: (history: History) => Compared;
  readonly longAtDefaults: (history: History) => Compared;
  /** A long session's window asked inside it and from a fresh store, when it has one. */
  readonly window: (session: History) => { readonly inSession: Tally; readonly fresh: Tally } | undefined;
}

const sum = (histories: ReadonlyArray<History>, of: (h: History) => ReadonlyArray<PromptOutcome>): Tally =>
  histories.reduce((into, h) => addTally(into, tallyOf(h, of(h))), emptyTally());

/** A figure that must reach `threshold` (shown with `digits` decimals), described by `detail` when given. */
const atLeast = (what: string, value: number, threshold: number, detail?: string, digits = 2): Target => ({
  what,
  target: `>= ${threshold.toFixed(digits)}`,
  value: detail ?? fixed(value),
  met: value >= threshold,
});

/** The targets against the figures (those whose data is absent, or that have no label, are left out). */
export const issueTargets = ({ hand, real, long, leaveOneOut, longAtDefaults, window }: TargetInput): Target[] => {
  const list: Target[] = [];
  if (real.length > 0) {
    const library = rates(sum(real, (h) => leaveOneOut(h).library));
    const recency = rates(sum(real, (h) => leaveOneOut(h).recency));
    const at250 = rates(sum(real, (h) => leaveOneOut(h).curve.find((p) => p.budget === 250)?.library ?? []));
    const many = real.reduce((into, h) => addKindTallies(into, h, leaveOneOut(h).library), emptyKindTallies())[
      '>10 files'
    ];
    const above = library.recall - recency.recall;
    list.push(
      atLeast('real, leave-one-out: recall at 500 tokens', library.recall, 0.88),
      atLeast(
        'real, leave-one-out: recall above recency at equal tokens',
        above,
        0.25,
        `${fixed(above)} (${fixed(library.recall)} against ${fixed(recency.recall)})`,
      ),
      {
        what: "real, leave-one-out: precision above recency's",
        target: `> ${fixed(recency.precision)}`,
        value: fixed(library.precision),
        met: library.precision > recency.precision,
      },
      atLeast('real, leave-one-out: recall at 250 tokens', at250.recall, 0.75),
    );
    // Histories whose commits never change more than 10 files have no such labels: no figure to meet.
    if (many.expected > 0) {
      const manyRecall = many.hits / many.expected;
      list.push(
        atLeast(
          'real, leave-one-out: labels of commits of more than 10 files',
          manyRecall,
          0.7,
          `${fixed(manyRecall)} (${many.hits} of ${many.expected})`,
        ),
      );
    }
  }
  if (long.length > 0) {
    list.push(
      atLeast('long sessions together: recall', rates(sum(long, (h) => longAtDefaults(h).library)).recall, 0.82),
    );
    for (const session of long) {
      const compared = longAtDefaults(session);
      const library = rates(tallyOf(session, compared.library));
      const recency = rates(tallyOf(session, compared.recency));
      list.push({
        what: `${session.name}: recall, above recency`,
        target: `> 0.70 and > ${fixed(recency.recall)}`,
        value: fixed(library.recall),
        met: library.recall > 0.7 && library.recall > recency.recall,
      });
      const asked = window(session);
      // A window with no label has no figure; one whose fresh store finds none cannot score below it.
      if (asked !== undefined && asked.fresh.expected > 0)
        list.push(
          asked.fresh.hits === 0
            ? {
                what: `${session.name}: window in session`,
                target: '>= 0.95',
                value: 'no label found from a fresh store',
                met: true,
              }
            : atLeast(
                `${session.name}: window in session`,
                rates(asked.inSession).recall / rates(asked.fresh).recall,
                0.95,
              ),
        );
    }
  }
  if (hand.length > 0)
    list.push(
      atLeast(
        'hand-written, leave-one-out: recall',
        rates(sum(hand, (h) => leaveOneOut(h).library)).recall,
        0.87,
        undefined,
        3,
      ),
    );
  return list;
};

/** The targets table. */
export const targetTable = (targets: ReadonlyArray<Target>, title: string): void => {
  console.log(`${title}\n`);
  printTable(
    ['target', 'wanted', 'measured', 'met'],
    targets.map((t) => [t.what, t.target, t.value, t.met ? 'yes' : 'no']),
  );
};
