/**
 * `npm run eval`: retrieval quality on every labeled history there is.
 *
 * - `eval/histories/`: seven hand-written sessions, whose prompts from the third task on carry
 *   `expect`, the earlier facts a careful engineer wants that task to see;
 * - `<realworld>/histories/`: public commit histories turned into dispatch histories (each commit a
 *   task: its message the prompt, its files the result), each prompt labeled with the
 *   `modified_by` facts of the files the commit goes on to change;
 * - `<realworld>/scale/`: long sessions labeled the same way.
 *
 * `<realworld>` is `../shared/realworld` beside the project unless `--realworld DIR` says
 * otherwise; when it is absent those histories are skipped with a note. The data is read where it
 * is, never copied into the project.
 *
 * The report, per history and overall:
 * 1. the library at its defaults (`fact-tracker replay`), the seed design's retriever, the recency
 *    baseline (the most recently changed files' facts, as many as fit in the tokens the library
 *    used for that prompt), and the library at the seed's tokens;
 * 2. leave-one-history-out over the hand-written and real histories: the ranking is fitted (fit.ts)
 *    on all the others and scored, through the library, on the one left out;
 * 3. the long sessions at the defaults, the labels compaction had removed when asked for, and
 *    their last 150 commits against the same commits replayed from a fresh store;
 * 4. ablations: each signal switched off in turn.
 *
 * Usage: see USAGE below (`npm run eval -- --help`). A bad option exits 2, a history that cannot
 * be read exits 1, each with one line on stderr.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import {
  DEFAULT_MAX_FACTS,
  DEFAULT_MAX_TOKENS,
  DEFAULT_RANKING,
  explainRetrieval,
  formatFactLine,
  type RankingOverrides,
  selectValidFacts,
} from '../src/index.js';
import { fitRanking, largestSection, type RecencyList, START } from './fit.js';
import {
  addTally,
  emptyTally,
  type History,
  libraryAtTokens,
  libraryRetriever,
  loadHistories,
  type PromptOutcome,
  queryOf,
  rates,
  recencyRetriever,
  scorePrompts,
  seedRetriever,
  type Setting,
  type Tally,
  tallyOf,
  tripleKey,
} from './lib.js';
import { historyCandidates, type PromptCandidates, type Ranking } from './model.js';

const USAGE = `Usage: npm run eval [-- --fit] [-- --json] [-- --misses] [-- --realworld DIR]
  --fit            also fit on every history, print the ranking to ship and check it against
                   DEFAULT_RANKING and the count cap (exit status 1 when they differ)
  --json           print the comparison tables (and the fitted ranking, with --fit) as JSON
  --misses         list every label the defaults miss, with its rank and why it was left out
  --realworld DIR  the labeled real histories (DIR/histories) and long sessions (DIR/scale);
                   default ../shared/realworld beside the project, skipped with a note when absent
  --help           print this`;

/** Ends the run with one line on stderr (no stack trace: a wrong option or a bad file is the user's to fix). */
const fail = (message: string, status: number): never => {
  process.stderr.write(`npm run eval: ${message}\n`);
  process.exit(status);
};

const parsed = (() => {
  try {
    return parseArgs({
      options: {
        fit: { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
        misses: { type: 'boolean', default: false },
        realworld: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (error) {
    return fail(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`, 2);
  }
})();
const options = parsed.values;
if (options.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}

/** The seed design's count cap: ten facts, whatever the budget. */
const SEED_MAX_FACTS = 10;

const root = resolve(import.meta.dirname, '..');
const realworld = resolve(options.realworld ?? join(root, '..', 'shared', 'realworld'));
const notes: string[] = [];
/** The histories of `dir`, or the end of the run when one cannot be read or replayed. */
const load = (dir: string, group: Parameters<typeof loadHistories>[1]): History[] => {
  try {
    return loadHistories(dir, group);
  } catch (error) {
    return fail(`cannot read the histories in ${dir}: ${error instanceof Error ? error.message : String(error)}`, 1);
  }
};
const hand = load(join(root, 'eval', 'histories'), 'hand');
const present = existsSync(realworld);
if (!present) notes.push(`${realworld} is absent: the real and long histories are skipped.`);
const real = present ? load(join(realworld, 'histories'), 'real') : [];
const long = present ? load(join(realworld, 'scale'), 'long') : [];
const core = [...hand, ...real];

const defaults: Setting = { maxFacts: DEFAULT_MAX_FACTS, maxTokens: DEFAULT_MAX_TOKENS };

// ---- Baselines ----

/** A history's outcomes under the library, the seed, recency at the library's tokens, the library at the seed's tokens. */
interface Compared {
  readonly library: PromptOutcome[];
  readonly seed: PromptOutcome[];
  readonly recency: PromptOutcome[];
  readonly atSeedTokens: PromptOutcome[];
}

const compare = (history: History, setting: Setting): Compared => {
  const library = scorePrompts(history, libraryRetriever(setting));
  const seed = scorePrompts(history, seedRetriever(SEED_MAX_FACTS, setting.maxTokens));
  return {
    library,
    seed,
    recency: scorePrompts(
      history,
      recencyRetriever((i) => library[i]!.tokens),
    ),
    atSeedTokens: scorePrompts(
      history,
      libraryAtTokens(setting, (i) => seed[i]!.tokens),
    ),
  };
};

// ---- Leave-one-history-out ----

const maxTokens = DEFAULT_MAX_TOKENS;

const recencyLists = (history: History): RecencyList[] =>
  history.prompts.map((prompt) => {
    const labels = new Set(prompt.expect.map(tripleKey));
    const files = selectValidFacts(prompt.store)
      .filter((fact) => fact.tags.includes('file_change') && fact.sourceTaskId !== prompt.taskId)
      .sort((a, b) => b.validFrom - a.validFrom || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return {
      costs: files.map((fact) => formatFactLine(fact).length + 1),
      labels: files.map((f) => labels.has(tripleKey(f))),
    };
  });

const fitOn = (
  atStart: ReadonlyArray<ReadonlyArray<PromptCandidates>>,
  recency: ReadonlyArray<ReadonlyArray<RecencyList>>,
): Ranking => fitRanking(atStart, recency, maxTokens);

/** The library's setting with a fitted ranking (the count cap is the defaults': a safety limit, not fitted). */
const settingOf = (ranking: Ranking): Setting => ({
  maxFacts: DEFAULT_MAX_FACTS,
  maxTokens,
  ranking: ranking as RankingOverrides,
});

/** The count cap to ship: a round number a quarter above the largest section the ranking fills. */
const safetyCap = (largest: number): number => 10 * Math.ceil((1.25 * largest) / 10);

/** Where a long run is, on standard error. */
const progress = (what: string): void => {
  process.stderr.write(`${what}\n`);
};

const main = (): void => {
  const started = performance.now();
  progress('reading the signals under the starting weights');
  const atStart = historyCandidates(core, START);
  const recency = core.map(recencyLists);
  const leaveOneOut = core.map((held, h) => {
    progress(`leave-one-out: ${held.name}`);
    const keep = (i: number): boolean => i !== h;
    const fitted = fitOn(
      atStart.filter((_, i) => keep(i)),
      recency.filter((_, i) => keep(i)),
    );
    return { name: held.name, fitted, compared: compare(held, settingOf(fitted)) };
  });
  const inSample = options.fit ? fitOn(atStart, recency) : undefined;
  const largest =
    inSample === undefined ? undefined : largestSection(historyCandidates(core, inSample), inSample, maxTokens);

  progress('the defaults and the baselines');
  const atDefaults = new Map(core.map((history) => [history.name, compare(history, defaults)]));
  const longAtDefaults = new Map(
    long.map((history) => {
      progress(`long session: ${history.name}`);
      return [history.name, compare(history, defaults)];
    }),
  );
  report({ leaveOneOut, inSample, largest, atDefaults, longAtDefaults, seconds: (performance.now() - started) / 1000 });
};

// ---- Report ----

const fixed = (n: number, digits = 3): string => n.toFixed(digits);
const row = (cells: ReadonlyArray<string | number>): string => `| ${cells.join(' | ')} |`;
const printTable = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string | number>>): void => {
  console.log(row(header));
  console.log(row(header.map(() => '---')));
  for (const cells of rows) console.log(row(cells));
  console.log('');
};

const triple = (t: Tally): string => {
  const r = rates(t);
  return `${fixed(r.recall)} / ${fixed(r.precision)} / ${fixed(r.tokens, 0)}`;
};

interface Report {
  readonly leaveOneOut: ReadonlyArray<{ name: string; fitted: Ranking; compared: Compared }>;
  readonly inSample: Ranking | undefined;
  /** The most facts a section holds under the ranking fitted on every history (with --fit). */
  readonly largest: number | undefined;
  readonly atDefaults: ReadonlyMap<string, Compared>;
  readonly longAtDefaults: ReadonlyMap<string, Compared>;
  readonly seconds: number;
}

type Column = keyof Compared;
const COLUMNS: ReadonlyArray<Column> = ['library', 'seed', 'recency', 'atSeedTokens'];

/** Each history's tallies per column, and their sums per group (hand, real, long). */
const comparisonTallies = (
  histories: ReadonlyArray<History>,
  of: (name: string) => Compared,
): {
  rows: Array<{ history: History; tallies: Record<Column, Tally> }>;
  groups: Map<string, Record<Column, Tally>>;
} => {
  const groups = new Map<string, Record<Column, Tally>>();
  const sum = (group: string): Record<Column, Tally> => {
    let tallies = groups.get(group);
    if (tallies === undefined) {
      tallies = { library: emptyTally(), seed: emptyTally(), recency: emptyTally(), atSeedTokens: emptyTally() };
      groups.set(group, tallies);
    }
    return tallies;
  };
  const rows = histories.map((history) => {
    const compared = of(history.name);
    const tallies = Object.fromEntries(
      COLUMNS.map((column) => {
        const tally = tallyOf(history, compared[column]);
        addTally(sum(history.group)[column], tally);
        return [column, tally];
      }),
    ) as Record<Column, Tally>;
    return { history, tallies };
  });
  return { rows, groups };
};

const comparisonTable = (histories: ReadonlyArray<History>, of: (name: string) => Compared, title: string): void => {
  const { rows, groups } = comparisonTallies(histories, of);
  const lines: Array<Array<string | number>> = rows.map(({ history, tallies }) => [
    history.name,
    history.prompts.length,
    history.prompts.reduce((n, p) => n + p.expect.length, 0),
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
    ['history', 'prompts', 'labels', 'library', 'seed', 'recency at equal tokens', "library at the seed's tokens"],
    lines,
  );
};

/** The comparisons as data: recall, precision and mean tokens per column, per history and per group. */
const comparisonJson = (histories: ReadonlyArray<History>, of: (name: string) => Compared) => {
  const { rows, groups } = comparisonTallies(histories, of);
  const asRates = (tallies: Record<Column, Tally>) => Object.fromEntries(COLUMNS.map((c) => [c, rates(tallies[c])]));
  return {
    histories: rows.map(({ history, tallies }) => ({ name: history.name, group: history.group, ...asRates(tallies) })),
    groups: Object.fromEntries([...groups].map(([group, tallies]) => [group, asRates(tallies)])),
  };
};

/** `--json`: the comparison tables and the fitted ranking (with --fit) as one JSON document. */
const jsonReport = ({ leaveOneOut, inSample, largest, atDefaults, longAtDefaults, seconds }: Report): void => {
  const looOf = new Map(leaveOneOut.map(({ name, compared }) => [name, compared]));
  console.log(
    JSON.stringify(
      {
        notes,
        defaults: { maxFacts: DEFAULT_MAX_FACTS, maxTokens: DEFAULT_MAX_TOKENS, ranking: DEFAULT_RANKING },
        atDefaults: comparisonJson(core, (name) => atDefaults.get(name)!),
        leaveOneOut: comparisonJson(core, (name) => looOf.get(name)!),
        long: comparisonJson(long, (name) => longAtDefaults.get(name)!),
        ...(inSample === undefined || largest === undefined
          ? {}
          : {
              fitted: {
                ranking: inSample,
                maxFacts: safetyCap(largest),
                largestSection: largest,
                shipped: isShipped(inSample, largest),
              },
            }),
        seconds,
      },
      null,
      2,
    ),
  );
};

const report = (data: Report): void => {
  if (options.json) {
    jsonReport(data);
    return;
  }
  const { leaveOneOut, inSample, largest, atDefaults, longAtDefaults, seconds } = data;
  for (const note of notes) console.log(`Note: ${note}\n`);
  comparisonTable(core, (name) => atDefaults.get(name)!, `The defaults (${DEFAULT_MAX_TOKENS} tokens, estimate)`);
  const looOf = new Map(leaveOneOut.map(({ name, compared }) => [name, compared]));
  comparisonTable(
    core,
    (name) => looOf.get(name)!,
    'Leave-one-history-out: fitted on the other histories, scored on the one left out',
  );
  if (long.length > 0) longReport(longAtDefaults, atDefaults);
  ablationReport();
  if (options.misses) missesReport();
  if (inSample !== undefined && largest !== undefined) fitReport(inSample, largest);
  console.log(`(${seconds.toFixed(0)} s)`);
};

/**
 * A window's prompts asked again inside a long session that ends with the same commits: each
 * window prompt's labels, their task ids turned into the session's (by commit), against what the
 * session's section at the same commit holds. Undefined when the session lacks a commit of it.
 */
const windowInSession = (window: History, session: History): Tally | undefined => {
  const taskOfCommit = new Map([...session.commits].map(([taskId, commit]) => [commit, taskId]));
  const promptOfCommit = new Map(session.prompts.map((prompt, i) => [prompt.commit, i]));
  const tally = emptyTally();
  for (const prompt of window.prompts) {
    const at = promptOfCommit.get(prompt.commit);
    if (prompt.commit === undefined || at === undefined) return undefined;
    const section = new Set(libraryRetriever(defaults)(session.prompts[at]!, at).map(tripleKey));
    tally.prompts += 1;
    for (const label of prompt.expect) {
      const task = /^task:(.+)$/u.exec(label.object)?.[1];
      const commit = task === undefined ? undefined : window.commits.get(task);
      const sessionTask = commit === undefined ? undefined : taskOfCommit.get(commit);
      if (sessionTask === undefined) return undefined;
      tally.expected += 1;
      if (section.has(tripleKey({ ...label, object: `task:${sessionTask}` }))) tally.hits += 1;
    }
  }
  return tally;
};

const longReport = (longAtDefaults: ReadonlyMap<string, Compared>, atDefaults: ReadonlyMap<string, Compared>): void => {
  comparisonTable(long, (name) => longAtDefaults.get(name)!, 'Long sessions at the defaults');
  const rows = long.map((history) => {
    const lost = history.prompts.reduce((n, p) => n + p.lost, 0);
    const labels = history.prompts.reduce((n, p) => n + p.expect.length, 0);
    const window = real.find((w) => history.name.startsWith(`${w.name}-`));
    const inSession = window === undefined ? undefined : windowInSession(window, history);
    const fresh = window === undefined ? undefined : tallyOf(window, atDefaults.get(window.name)!.library);
    const ratio =
      inSession === undefined || fresh === undefined ? '' : fixed(rates(inSession).recall / rates(fresh).recall);
    return [
      history.name,
      `${lost} of ${labels}`,
      window?.name ?? '',
      inSession === undefined ? '' : `${inSession.hits} of ${inSession.expected} (${fixed(rates(inSession).recall)})`,
      fresh === undefined ? '' : `${fresh.hits} of ${fresh.expected} (${fixed(rates(fresh).recall)})`,
      ratio,
    ];
  });
  console.log(
    "Long sessions: labels compaction had removed when asked for, and the commits of a window asked inside the session against the same commits from a fresh store (the window's labels)\n",
  );
  printTable(
    ['session', 'labels lost to compaction', 'window', 'its commits in the session', 'from a fresh store', 'ratio'],
    rows,
  );
};

/** Each signal switched off in turn, at the defaults otherwise, per group of histories. */
const ablationReport = (): void => {
  const off = (name: string, ranking: RankingOverrides): { name: string; setting: Setting } => ({
    name,
    setting: { ...defaults, ranking },
  });
  const neutral = (prior: keyof typeof DEFAULT_RANKING.priors) => off(`no ${prior} prior`, { priors: { [prior]: 1 } });
  const rows = [
    { name: 'defaults', setting: defaults },
    off('no task context', { contextWeight: 0 }),
    off('no feedback', { feedback: { weight: 0 } }),
    off('no recency', { recency: { weight: 0 } }),
    off('no co-change', { coChange: { weight: 0 } }),
    off('no convention base', { conventionBase: 0 }),
    off('no relevance floor', { floor: 0 }),
    off('no exact-file boost', { exactFileBoost: 0 }),
    ...(Object.keys(DEFAULT_RANKING.priors) as Array<keyof typeof DEFAULT_RANKING.priors>).map(neutral),
    { name: 'grouped layout', setting: { ...defaults, layout: 'grouped' as const } },
  ].map(({ name, setting }) => {
    const cells = (['hand', 'real'] as const).map((group) => {
      const sum = emptyTally();
      for (const history of core.filter((h) => h.group === group))
        addTally(
          sum,
          tallyOf(
            history,
            scorePrompts(
              history,
              libraryRetriever(setting),
              setting.layout === undefined ? {} : { layout: setting.layout },
            ),
          ),
        );
      return triple(sum);
    });
    return [name, ...cells];
  });
  console.log('Ablations: each signal switched off in turn (recall / precision / mean tokens)\n');
  printTable(['configuration', 'hand-written', 'real'], rows);
};

/** Every label the defaults miss, with the rank `explainRetrieval` gives its fact and why it was left out. */
const missesReport = (): void => {
  console.log('Labels the defaults miss\n');
  const rows: string[][] = [];
  for (const history of core)
    scorePrompts(history, libraryRetriever(defaults), {}, (prompt, missed) => {
      const decisions = explainRetrieval(prompt.store, queryOf(prompt, defaults)).filter(
        (d) => d.reason !== 'invalidated',
      );
      const at = decisions.findIndex(({ fact }) => tripleKey(fact) === tripleKey(missed));
      const found = decisions[at];
      rows.push([
        history.name,
        `${prompt.line} (task ${prompt.taskId})`,
        `${missed.subject} ${missed.relation} ${missed.object}`.slice(0, 100),
        found === undefined ? 'no valid fact' : String(at + 1),
        found === undefined ? '' : fixed(found.score),
        found?.reason ?? '',
      ]);
    });
  printTable(['history', 'prompt line', 'label', 'rank', 'score', 'left out as'], rows);
};

/** True when the fitted ranking and its count cap are what the library ships (else the eval exits 1). */
const isShipped = (ranking: Ranking, largest: number): boolean => {
  const same = isDeepStrictEqual(ranking, DEFAULT_RANKING) && safetyCap(largest) === DEFAULT_MAX_FACTS;
  if (!same) process.exitCode = 1;
  return same;
};

const fitReport = (ranking: Ranking, largest: number): void => {
  const cap = safetyCap(largest);
  console.log(
    `Fitted on every history (DEFAULT_RANKING), with the count cap (DEFAULT_MAX_FACTS) ${cap}, a quarter above the largest section it fills (${largest} facts):\n`,
  );
  console.log(JSON.stringify(ranking, null, 2));
  const same = isShipped(ranking, largest);
  console.log(
    same
      ? '\nDEFAULT_RANKING and DEFAULT_MAX_FACTS are these.'
      : '\nDEFAULT_RANKING or DEFAULT_MAX_FACTS differ from these.',
  );
};

main();
