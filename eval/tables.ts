/**
 * The evaluation's tables, as data and as Markdown: comparisons per history and per group, the
 * recall-by-budget curve, recall per kind of label, the spread of leave-one-out recall between
 * histories.
 */
import { type Column, COLUMNS, type Compared } from './compare.js';
import {
  addClassTallies,
  addTally,
  ageOfLabel,
  emptyClassTallies,
  emptyTally,
  type History,
  kindOfLabel,
  type KindTally,
  LABEL_AGES,
  LABEL_KINDS,
  type LabelAge,
  type LabeledPrompt,
  type LabelKind,
  rates,
  type Tally,
  tallyOf,
} from './lib.js';

export const fixed = (n: number, digits = 3): string => n.toFixed(digits);
const row = (cells: ReadonlyArray<string | number>): string => `| ${cells.join(' | ')} |`;

/** A Markdown table, then a blank line. */
export const printTable = (
  header: ReadonlyArray<string>,
  rows: ReadonlyArray<ReadonlyArray<string | number>>,
): void => {
  console.log(row(header));
  console.log(row(header.map(() => '---')));
  for (const cells of rows) console.log(row(cells));
  console.log('');
};

/** Recall / precision / mean tokens. */
export const triple = (t: Tally): string => {
  const r = rates(t);
  return `${fixed(r.recall)} / ${fixed(r.precision)} / ${fixed(r.tokens, 0)}`;
};

/** Sums per group of histories (hand, real, long), in the order groups first appear. */
const byGroup = <T>(
  histories: ReadonlyArray<History>,
  empty: () => T,
  add: (into: T, history: History) => void,
): Map<string, T> => {
  const groups = new Map<string, T>();
  for (const history of histories) {
    let sum = groups.get(history.group);
    if (sum === undefined) {
      sum = empty();
      groups.set(history.group, sum);
    }
    add(sum, history);
  }
  return groups;
};

const emptyColumns = (): Record<Column, Tally> =>
  Object.fromEntries(COLUMNS.map((column) => [column, emptyTally()])) as Record<Column, Tally>;

/** Each history's tallies per column, and their sums per group. */
const comparisonTallies = (
  histories: ReadonlyArray<History>,
  of: (history: History) => Compared,
): {
  rows: Array<{ history: History; tallies: Record<Column, Tally> }>;
  groups: Map<string, Record<Column, Tally>>;
} => {
  const rows = histories.map((history) => {
    const compared = of(history);
    const tallies = Object.fromEntries(COLUMNS.map((column) => [column, tallyOf(history, compared[column])])) as Record<
      Column,
      Tally
    >;
    return { history, tallies };
  });
  const tallyOfHistory = new Map(rows.map(({ history, tallies }) => [history, tallies]));
  const groups = byGroup(histories, emptyColumns, (into, history) => {
    for (const column of COLUMNS) addTally(into[column], tallyOfHistory.get(history)![column]);
  });
  return { rows, groups };
};

const labelsOf = (history: History): number => history.prompts.reduce((n, p) => n + p.expect.length, 0);

/** The comparison table: per history and per group, each column as recall / precision / mean tokens. */
export const comparisonTable = (
  histories: ReadonlyArray<History>,
  of: (history: History) => Compared,
  title: string,
): void => {
  const { rows, groups } = comparisonTallies(histories, of);
  const lines: Array<Array<string | number>> = rows.map(({ history, tallies }) => [
    history.name,
    history.prompts.length,
    labelsOf(history),
    ...COLUMNS.map((c) => triple(tallies[c])),
  ]);
  for (const [group, tallies] of groups)
    lines.push([
      `**${group}**`,
      tallies.library.prompts,
      tallies.library.expected,
      ...COLUMNS.map((c) => triple(tallies[c])),
    ]);
  console.log(`${title} (recall / precision / mean tokens)\n`);
  printTable(
    [
      'history',
      'prompts',
      'labels',
      'library',
      'seed',
      'recency at equal tokens',
      "library at the seed's tokens",
      'oracle',
    ],
    lines,
  );
};

/** The comparisons as data: recall, precision and mean tokens per column, per history and per group. */
export const comparisonJson = (histories: ReadonlyArray<History>, of: (history: History) => Compared) => {
  const { rows, groups } = comparisonTallies(histories, of);
  const asRates = (tallies: Record<Column, Tally>) => Object.fromEntries(COLUMNS.map((c) => [c, rates(tallies[c])]));
  return {
    histories: rows.map(({ history, tallies }) => ({ name: history.name, group: history.group, ...asRates(tallies) })),
    groups: Object.fromEntries([...groups].map(([group, tallies]) => [group, asRates(tallies)])),
  };
};

/** Per budget of the curve, the library's and recency's tallies on one history. */
const curveTallies = (
  history: History,
  compared: Compared,
): Array<{ budget: number; library: Tally; recency: Tally }> =>
  compared.curve.map(({ budget, library, recency }) => ({
    budget,
    library: tallyOf(history, library),
    recency: tallyOf(history, recency),
  }));

/** The curve as data: per history and per group, the library and recency at each budget. */
export const curveJson = (histories: ReadonlyArray<History>, of: (history: History) => Compared) => {
  const perHistory = histories.map((history) => ({ history, points: curveTallies(history, of(history)) }));
  const groups = byGroup(
    histories,
    () => new Map<number, { library: Tally; recency: Tally }>(),
    (into, history) => {
      for (const { budget, library, recency } of perHistory.find((h) => h.history === history)!.points) {
        const sum = into.get(budget) ?? { library: emptyTally(), recency: emptyTally() };
        addTally(sum.library, library);
        addTally(sum.recency, recency);
        into.set(budget, sum);
      }
    },
  );
  const asRates = (budget: number, library: Tally, recency: Tally) => ({
    budget,
    library: rates(library),
    recency: rates(recency),
  });
  return {
    histories: perHistory.map(({ history, points }) => ({
      name: history.name,
      group: history.group,
      points: points.map(({ budget, library, recency }) => asRates(budget, library, recency)),
    })),
    groups: Object.fromEntries(
      [...groups].map(([group, points]) => [
        group,
        [...points].map(([budget, { library, recency }]) => asRates(budget, library, recency)),
      ]),
    ),
  };
};

/** The recall-by-budget curve: per history the library's recall at each budget, per group also recency's. */
export const curveTable = (
  histories: ReadonlyArray<History>,
  of: (history: History) => Compared,
  title: string,
): void => {
  const data = curveJson(histories, of);
  const budgets = data.histories[0]?.points.map((p) => p.budget) ?? [];
  if (budgets.length === 0) return;
  const cell = (r: ReturnType<typeof rates>): string =>
    `${fixed(r.recall)} / ${fixed(r.precision)} / ${fixed(r.tokens, 0)}`;
  const lines: Array<Array<string | number>> = data.histories.map(({ name, points }) => [
    name,
    ...points.map((p) => cell(p.library)),
  ]);
  for (const [group, points] of Object.entries(data.groups)) {
    lines.push([`**${group}**`, ...points.map((p) => cell(p.library))]);
    lines.push([`${group}: recency at equal tokens`, ...points.map((p) => cell(p.recency))]);
  }
  console.log(`${title} (recall / precision / mean tokens at each budget)\n`);
  printTable(['history', ...budgets.map((b) => `${b.toLocaleString('en-US')} tokens`)], lines);
};

/** Labels and hits per class of label (`classOf`), per history and per group, of the library's outcomes. */
const classJson = <K extends string>(
  histories: ReadonlyArray<History>,
  of: (history: History) => Compared,
  classes: ReadonlyArray<K>,
  classOf: (prompt: LabeledPrompt, l: number) => K | undefined,
) => {
  const perHistory = histories.map((history) => ({
    history,
    kinds: addClassTallies(emptyClassTallies(classes), history, of(history).library, classOf),
  }));
  const groups = byGroup(
    histories,
    () => emptyClassTallies(classes),
    (into, history) => {
      const kinds = perHistory.find((h) => h.history === history)!.kinds;
      for (const kind of classes) {
        into[kind].expected += kinds[kind].expected;
        into[kind].hits += kinds[kind].hits;
      }
    },
  );
  return {
    histories: perHistory.map(({ history, kinds }) => ({ name: history.name, group: history.group, kinds })),
    groups: Object.fromEntries(groups) as Record<string, Record<K, KindTally>>,
  };
};

/** Labels and hits per kind (the size of the commit a label points to), per history and per group, of the library's outcomes. */
export const kindJson = (histories: ReadonlyArray<History>, of: (history: History) => Compared) =>
  classJson(histories, of, LABEL_KINDS, kindOfLabel);

/** Labels and hits per age (how many tasks before the prompt the change a label points to was made), per history and per group. */
export const ageJson = (histories: ReadonlyArray<History>, of: (history: History) => Compared) =>
  classJson(histories, of, LABEL_AGES, ageOfLabel);

/** Recall per age of label, per history and per group, of the library's outcomes under `of`. */
export const ageTable = (
  histories: ReadonlyArray<History>,
  of: (history: History) => Compared,
  title: string,
): void => {
  const data = ageJson(histories, of);
  const cells = (kinds: Record<LabelAge, KindTally>) => LABEL_AGES.map((age) => kindCell(kinds[age]));
  const lines: Array<Array<string | number>> = data.histories.map(({ name, kinds }) => [name, ...cells(kinds)]);
  for (const [group, kinds] of Object.entries(data.groups)) lines.push([`**${group}**`, ...cells(kinds)]);
  console.log(`${title} (recall (hits of labels))\n`);
  printTable(['history', ...LABEL_AGES], lines);
};

const kindCell = ({ expected, hits }: KindTally): string =>
  expected === 0 ? '' : `${fixed(hits / expected)} (${hits} of ${expected})`;

/**
 * Recall per kind of label (the size of the commit a label points to), per history and per group,
 * under each setting named (columns: kind x setting).
 */
export const kindTable = (
  histories: ReadonlyArray<History>,
  settings: ReadonlyArray<{ name: string; of: (history: History) => Compared }>,
  title: string,
): void => {
  const data = settings.map(({ of }) => kindJson(histories, of));
  const cells = (kinds: (d: (typeof data)[number]) => Record<LabelKind, KindTally> | undefined) =>
    LABEL_KINDS.flatMap((kind) => data.map((d) => kindCell(kinds(d)?.[kind] ?? { expected: 0, hits: 0 })));
  const lines: Array<Array<string | number>> = histories.map((history, h) => [
    history.name,
    ...cells((d) => d.histories[h]!.kinds),
  ]);
  for (const group of Object.keys(data[0]?.groups ?? {}))
    lines.push([`**${group}**`, ...cells((d) => d.groups[group])]);
  console.log(`${title} (recall (hits of labels))\n`);
  printTable(['history', ...LABEL_KINDS.flatMap((kind) => settings.map(({ name }) => `${kind}, ${name}`))], lines);
};

/** The spread of per-history recall within a group: mean, lowest, highest, standard deviation. */
export interface Spread {
  readonly group: string;
  readonly histories: number;
  readonly mean: number;
  readonly lowest: { readonly name: string; readonly recall: number };
  readonly highest: { readonly name: string; readonly recall: number };
  readonly deviation: number;
}

/** Per group, how far apart the histories' library recalls are. */
export const spreads = (histories: ReadonlyArray<History>, of: (history: History) => Compared): Spread[] => {
  const recalls = byGroup(
    histories,
    () => [] as Array<{ name: string; recall: number }>,
    (into, history) => {
      into.push({ name: history.name, recall: rates(tallyOf(history, of(history).library)).recall });
    },
  );
  return [...recalls].map(([group, list]) => {
    const mean = list.reduce((sum, { recall }) => sum + recall, 0) / list.length;
    const sorted = [...list].sort((a, b) => a.recall - b.recall);
    return {
      group,
      histories: list.length,
      mean,
      lowest: sorted[0]!,
      highest: sorted[sorted.length - 1]!,
      deviation: Math.sqrt(list.reduce((sum, { recall }) => sum + (recall - mean) ** 2, 0) / list.length),
    };
  });
};

/** The spread table. */
export const spreadTable = (list: ReadonlyArray<Spread>, title: string): void => {
  console.log(`${title}\n`);
  printTable(
    ['group', 'histories', 'mean of histories', 'lowest', 'highest', 'standard deviation'],
    list.map((s) => [
      s.group,
      s.histories,
      fixed(s.mean),
      `${fixed(s.lowest.recall)} (${s.lowest.name})`,
      `${fixed(s.highest.recall)} (${s.highest.name})`,
      fixed(s.deviation),
    ]),
  );
};
