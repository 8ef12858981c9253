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
 * otherwise; when it, or one of its two folders, is absent or holds no history, what it would give
 * is skipped with a note (on stderr at once, and in the report). The data is read where it is,
 * never copied into the project.
 *
 * The report, per history and overall:
 * 1. the library at its defaults (`fact-tracker replay`), the seed design's retriever, the recency
 *    baseline (the most recently changed files' facts, as many as fit in the tokens the library
 *    used for that prompt), the library at the seed's tokens, and the oracle (the labels' own
 *    facts: the fewest tokens that reach every label, what a perfect ranking would spend);
 * 2. leave-one-history-out over the hand-written and real histories: the ranking is fitted (fit.ts)
 *    on all the others and scored, through the library, on the one left out; the spread of its
 *    recall between histories;
 * 3. the recall-by-budget curve (150, 250, 500, 1,000 tokens), leave-one-out and at the defaults;
 * 4. recall per kind of label: labels pointing to a commit that changed 1, 2 to 10 or more than 10
 *    files (the task a label points to, and the files it changed, read from the history itself);
 * 5. the long sessions at the defaults, the labels compaction had removed when asked for, and
 *    their last 150 commits against the same commits replayed from a fresh store;
 * 6. the issue's targets against these figures; ablations: each signal switched off in turn.
 *
 * Usage: see USAGE below (`npm run eval -- --help`). A bad option exits 2, a history that cannot
 * be read exits 1, each with one line on stderr.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import {
  DEFAULT_MAX_FACTS,
  DEFAULT_MAX_TOKENS,
  DEFAULT_RANKING,
  explainRetrieval,
  type RankingOverrides,
} from '../src/index.js';
import { type Compared, compare, layoutOf, windowInSession } from './compare.js';
import { fitRanking, largestSection, prepareHistories, START } from './fit.js';
import { chooseOldContext, OLD_SHARES, type OldContextChoice } from './oldContext.js';
import {
  addTally,
  emptyTally,
  type History,
  historyFiles,
  isFolder,
  libraryRetriever,
  loadHistories,
  queryOf,
  rates,
  recencyLists,
  scorePrompts,
  type Setting,
  type Tally,
  tallyOf,
  tripleKey,
} from './lib.js';
import { historyCandidates, type Ranking } from './model.js';
import {
  ageJson,
  ageTable,
  comparisonJson,
  comparisonTable,
  curveJson,
  curveTable,
  fixed,
  kindJson,
  kindTable,
  printTable,
  spreads,
  spreadTable,
  triple,
} from './tables.js';
import { issueTargets, targetTable } from './targets.js';

const USAGE = `Usage: npm run eval [-- --fit] [-- --json] [-- --json-file FILE] [-- --misses] [-- --no-ablations] [-- --realworld DIR] [-- --layout grouped]
  --fit            also fit on every history, print the ranking to ship and check it against
                   DEFAULT_RANKING and the count cap (exit status 1 when they differ)
  --json           print the tables (and the fitted ranking, with --fit, and the labels
                   missed, with --misses) as JSON
  --json-file FILE also write that JSON to FILE, whatever is printed: a run's tables to read
                   and its figures to keep, from one run (a full one takes minutes); its
                   folder must exist
  --misses         list every label the defaults miss, with its rank and why it was left out
  --no-ablations   skip the ablations (each signal switched off in turn), the slowest table
  --realworld DIR  the labeled real histories (DIR/histories) and long sessions (DIR/scale);
                   default ../shared/realworld beside the project; each skipped with a note
                   when absent or empty (a DIR given must hold one of them)
  --layout LAYOUT  the section's layout, lines (the default) or grouped, for every table of the
                   library's sections (the fits are the same: they simulate one line per fact)
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
        'json-file': { type: 'string' },
        misses: { type: 'boolean', default: false },
        'no-ablations': { type: 'boolean', default: false },
        realworld: { type: 'string' },
        layout: { type: 'string', default: 'lines' },
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

if (options.layout !== 'lines' && options.layout !== 'grouped')
  fail(`--layout is lines or grouped, not ${JSON.stringify(options.layout)}\n${USAGE}`, 2);
/** The layout of the library's sections in every table (the ablations' own grouped row aside). */
const layout = options.layout === 'grouped' ? ({ layout: 'grouped' } as const) : {};

const root = resolve(import.meta.dirname, '..');
const realworld = resolve(options.realworld ?? join(root, '..', 'shared', 'realworld'));
// The default folder may be absent (the run then says so); a folder named is meant to be there.
if (options.realworld !== undefined && !existsSync(realworld)) fail(`--realworld ${realworld} is absent\n${USAGE}`, 2);
// A folder one level off (its histories/ itself) or a file would give no real history, unsaid.
if (options.realworld !== undefined && !['histories', 'scale'].some((group) => isFolder(join(realworld, group))))
  fail(`--realworld ${realworld} holds neither histories/ nor scale/\n${USAGE}`, 2);
/** Why `--json-file` cannot be written, known before the run rather than after its minutes. */
const unwritable = (file: string): string | undefined => {
  // Its folder is there, yet writing to an empty name or one ending in a separator fails, after the run.
  if (file === '' || file.endsWith('/') || file.endsWith(sep)) return 'it names no file';
  if (isFolder(file)) return 'it is a folder';
  const folder = dirname(resolve(file));
  return isFolder(folder) ? undefined : `there is no folder ${folder}`;
};
const jsonFileProblem = options['json-file'] === undefined ? undefined : unwritable(options['json-file']);
if (jsonFileProblem !== undefined)
  fail(`cannot write --json-file ${options['json-file']}: ${jsonFileProblem}\n${USAGE}`, 2);
const notes: string[] = [];
/** The histories of `dir`, or the end of the run when one cannot be read or replayed. */
const load = (dir: string, group: Parameters<typeof loadHistories>[1]): History[] => {
  try {
    return loadHistories(dir, group);
  } catch (error) {
    return fail(`cannot read the histories in ${dir}: ${error instanceof Error ? error.message : String(error)}`, 1);
  }
};
const started = performance.now();
/** Where a long run is, on standard error, with the seconds since it started. */
const progress = (what: string): void => {
  process.stderr.write(`${((performance.now() - started) / 1000).toFixed(0)} s: ${what}\n`);
};

/** A note for the report (before the tables, and in the JSON document), said on stderr at once too. */
const note = (text: string): void => {
  notes.push(text);
  process.stderr.write(`Note: ${text}\n`);
};
const hand = load(join(root, 'eval', 'histories'), 'hand');
const present = existsSync(realworld);
if (!present) note(`${realworld} is absent: the real and long histories are skipped.`);
/** One group of the real-world folder, with a note when it has none (a copy with one group was read as both, unsaid). */
const loadGroup = (folder: 'histories' | 'scale', group: 'real' | 'long', what: string): History[] => {
  const dir = join(realworld, folder);
  const empty = isFolder(dir) && historyFiles(dir).length === 0;
  if (present && (empty || !existsSync(dir)))
    note(`${dir} ${empty ? 'holds no .jsonl file' : 'is absent'}: the ${what} are skipped.`);
  return present ? load(dir, group) : [];
};
const real = loadGroup('histories', 'real', 'real histories');
progress(`read ${hand.length} hand-written and ${real.length} real histories`);
const long = loadGroup('scale', 'long', 'long sessions');
progress(`read ${long.length} long sessions`);
const core = [...hand, ...real];

const defaults: Setting = { maxFacts: DEFAULT_MAX_FACTS, maxTokens: DEFAULT_MAX_TOKENS, ...layout };

// ---- Leave-one-history-out ----

const maxTokens = DEFAULT_MAX_TOKENS;

/** The library's setting with a fitted ranking (the count cap is the defaults': a safety limit, not fitted). */
const settingOf = (ranking: Ranking): Setting => ({
  maxFacts: DEFAULT_MAX_FACTS,
  maxTokens,
  ranking: ranking as RankingOverrides,
  ...layout,
});

/**
 * The count cap to ship: a round number half as much again as the largest section the ranking
 * fills. The cap is also the pool the fill order takes from (`RankingOptions.fill`), and the fill
 * takes facts from past the section's own size: a pool a quarter above the largest section (50
 * at 40 facts) took leave-one-out recall on the hand-written histories from 0.873 to 0.868 (see
 * docs/retrieval.md).
 */
const safetyCap = (largest: number): number => 10 * Math.ceil((1.5 * largest) / 10);

interface Results {
  readonly leaveOneOut: ReadonlyMap<History, { fitted: Ranking; compared: Compared }>;
  readonly inSample: Ranking | undefined;
  /** The most facts a section holds under the ranking fitted on every history (with --fit). */
  readonly largest: number | undefined;
  readonly atDefaults: ReadonlyMap<History, Compared>;
  readonly longAtDefaults: ReadonlyMap<History, Compared>;
  /** Per long session, its window's commits asked inside it and from a fresh store. */
  readonly windows: ReadonlyMap<History, { window: History; inSession: Tally; fresh: Tally } | undefined>;
  /** The share of context an old task lends, chosen leave-one-session-out on the long sessions. */
  readonly oldContext: OldContextChoice;
  readonly ablations: ReadonlyArray<{ name: string; hand: Tally; real: Tally }>;
  /** With --misses: every label the defaults miss. */
  readonly misses: ReadonlyArray<Miss> | undefined;
}

const evaluate = (): Results => {
  progress('reading the signals under the starting weights');
  const atStart = historyCandidates(core, START);
  const recency = core.map(recencyLists);
  // Each history's prompts are prepared for the fit once; every fold picks the others' (see fit.ts).
  const prepared = prepareHistories(atStart, START.recency.tasks);
  const others = <T>(list: ReadonlyArray<T>, h: number): T[] => list.filter((_, i) => i !== h);
  const leaveOneOut = new Map(
    core.map((held, h) => {
      progress(`leave-one-out: ${held.name}`);
      const fitted = fitRanking(others(atStart, h), others(recency, h), maxTokens, others(prepared, h));
      return [held, { fitted, compared: compare(held, settingOf(fitted), true) }] as const;
    }),
  );
  const inSample = options.fit ? fitRanking(atStart, recency, maxTokens, prepared) : undefined;
  const largest =
    inSample === undefined ? undefined : largestSection(historyCandidates(core, inSample), inSample, maxTokens);

  progress('the defaults and the baselines');
  const atDefaults = new Map(core.map((history) => [history, compare(history, defaults, true)]));
  const longAtDefaults = new Map(
    long.map((history) => {
      progress(`long session: ${history.name}`);
      return [history, compare(history, defaults)];
    }),
  );
  progress('the windows inside the long sessions');
  const windows = new Map(
    long.map((session) => {
      // A long session `<name>-<commits>` ends where the 150-commit window `<name>` ends.
      const window = real.find((w) => w.name === session.name.replace(/-\d+$/u, ''));
      const inSession = window === undefined ? undefined : windowInSession(window, session, defaults);
      return [
        session,
        window === undefined || inSession === undefined
          ? undefined
          : { window, inSession, fresh: tallyOf(window, atDefaults.get(window)!.library) },
      ];
    }),
  );
  if (long.length > 0) progress('the share of context an old task lends, on the long sessions');
  const oldContext = chooseOldContext(long, defaults, (session) => windows.get(session));
  if (!options['no-ablations']) progress('ablations');
  return {
    leaveOneOut,
    inSample,
    largest,
    atDefaults,
    longAtDefaults,
    windows,
    oldContext,
    ablations: options['no-ablations'] ? [] : ablations(),
    misses: options.misses ? missedLabels() : undefined,
  };
};

// ---- Ablations ----

/** Each signal switched off in turn, at the defaults otherwise, summed per group of histories. */
const ablations = (): Array<{ name: string; hand: Tally; real: Tally }> => {
  const off = (name: string, ranking: RankingOverrides): { name: string; setting: Setting } => ({
    name,
    setting: { ...defaults, ranking },
  });
  const neutral = (prior: keyof typeof DEFAULT_RANKING.priors) => off(`no ${prior} prior`, { priors: { [prior]: 1 } });
  return [
    { name: 'defaults', setting: defaults },
    off('no task context', { contextWeight: 0 }),
    off('no feedback', { feedback: { weight: 0 } }),
    off('no recency', { recency: { weight: 0, shared: 0 } }),
    off('no shared recency', { recency: { shared: 0 } }),
    off('context shared evenly (contextShare 1)', { contextShare: 1 }),
    off('no co-change', { coChange: { weight: 0 } }),
    off('no convention base', { conventionBase: 0 }),
    off('no relevance floor', { floor: 0 }),
    off('no exact-file boost', { exactFileBoost: 0 }),
    ...(Object.keys(DEFAULT_RANKING.priors) as Array<keyof typeof DEFAULT_RANKING.priors>).map(neutral),
    { name: 'grouped layout', setting: { ...defaults, layout: 'grouped' as const } },
  ].map(({ name, setting }) => {
    const sumOf = (group: 'hand' | 'real'): Tally => {
      const sum = emptyTally();
      for (const history of core.filter((h) => h.group === group))
        addTally(sum, tallyOf(history, scorePrompts(history, libraryRetriever(setting), layoutOf(setting))));
      return sum;
    };
    return { name, hand: sumOf('hand'), real: sumOf('real') };
  });
};

// ---- Report ----

/** The issue's targets against these results. */
const targets = ({ leaveOneOut, longAtDefaults, windows }: Results) =>
  issueTargets({
    hand,
    real,
    long,
    leaveOneOut: (history) => leaveOneOut.get(history)!.compared,
    longAtDefaults: (history) => longAtDefaults.get(history)!,
    window: (session) => windows.get(session),
  });

/** `--json` and `--json-file`: every table (and the fitted ranking, with --fit, the missed labels, with --misses) as one JSON document. */
const jsonDocument = (results: Results, seconds: number): string => {
  const { leaveOneOut, inSample, largest, atDefaults, longAtDefaults, windows } = results;
  const looOf = (history: History): Compared => leaveOneOut.get(history)!.compared;
  const defaultsOf = (history: History): Compared => atDefaults.get(history)!;
  const longOf = (history: History): Compared => longAtDefaults.get(history)!;
  return JSON.stringify(
    {
      notes,
      defaults: { maxFacts: DEFAULT_MAX_FACTS, maxTokens: DEFAULT_MAX_TOKENS, ranking: DEFAULT_RANKING },
      atDefaults: comparisonJson(core, defaultsOf),
      leaveOneOut: comparisonJson(core, looOf),
      folds: core.map((history) => ({ heldOut: history.name, ranking: leaveOneOut.get(history)!.fitted })),
      spread: spreads(core, looOf),
      curve: { leaveOneOut: curveJson(core, looOf), atDefaults: curveJson(core, defaultsOf) },
      labelKinds: {
        leaveOneOut: kindJson(core, looOf),
        atDefaults: kindJson(core, defaultsOf),
        long: kindJson(long, longOf),
      },
      labelAges: { atDefaults: ageJson(core, defaultsOf), long: ageJson(long, longOf) },
      long: comparisonJson(long, longOf),
      windows: long.map((session) => {
        const w = windows.get(session);
        return {
          session: session.name,
          lost: session.prompts.reduce((n, p) => n + p.lost, 0),
          ...(w === undefined
            ? {}
            : {
                window: w.window.name,
                inSession: rates(w.inSession),
                fresh: rates(w.fresh),
                ratio: rates(w.inSession).recall / rates(w.fresh).recall,
              }),
        };
      }),
      oldContext: {
        shares: OLD_SHARES.map((share, s) => ({
          contextOld: share,
          sessions: long.map((session, i) => ({
            session: session.name,
            ...rates(results.oldContext.byShare[s]![i]!.tally),
            window: results.oldContext.byShare[s]![i]!.window,
          })),
        })),
        heldOut: long.map((session, i) => ({
          session: session.name,
          contextOld: results.oldContext.heldOut[i]!.share,
          ...rates(results.oldContext.heldOut[i]!.at.tally),
          window: results.oldContext.heldOut[i]!.at.window,
        })),
      },
      ablations: results.ablations.map(({ name, hand: h, real: r }) => ({ name, hand: rates(h), real: rates(r) })),
      targets: targets(results),
      ...(results.misses === undefined ? {} : { misses: results.misses }),
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
  );
};

/** Writes the JSON document to `file`, or ends the run with one line saying why it cannot. */
const writeJsonFile = (file: string, json: string): void => {
  try {
    writeFileSync(file, `${json}\n`);
  } catch (error) {
    fail(`cannot write ${file}: ${error instanceof Error ? error.message : String(error)}`, 1);
  }
};

/** The tables as JSON (`--json`) or as text, and the JSON written to `--json-file` too. */
const report = (results: Results, seconds: number): void => {
  const file = options['json-file'];
  const json = options.json || file !== undefined ? jsonDocument(results, seconds) : undefined;
  if (json !== undefined && options.json) console.log(json);
  else tablesReport(results, seconds);
  if (json !== undefined && file !== undefined) writeJsonFile(file, json);
};

const tablesReport = (results: Results, seconds: number): void => {
  const { leaveOneOut, inSample, largest, atDefaults } = results;
  const looOf = (history: History): Compared => leaveOneOut.get(history)!.compared;
  const defaultsOf = (history: History): Compared => atDefaults.get(history)!;
  for (const note of notes) console.log(`Note: ${note}\n`);
  comparisonTable(core, defaultsOf, `The defaults (${DEFAULT_MAX_TOKENS} tokens, estimate)`);
  comparisonTable(core, looOf, 'Leave-one-history-out: fitted on the other histories, scored on the one left out');
  spreadTable(
    spreads(core, looOf),
    'Leave-one-out recall, how far apart the histories are (each history counting the same)',
  );
  curveTable(core, looOf, 'Recall by budget, leave-one-out (the count cap scaled with the budget above 500 tokens)');
  curveTable(core, defaultsOf, 'Recall by budget, at the defaults');
  kindTable(
    core,
    [
      { name: 'leave-one-out', of: looOf },
      { name: 'defaults', of: defaultsOf },
    ],
    'Recall by the number of files the commit a label points to changed',
  );
  if (long.length > 0) longReport(results);
  targetTable(targets(results), 'The targets of issue 55');
  if (results.ablations.length > 0) ablationReport(results.ablations);
  if (results.misses !== undefined) missesReport(results.misses);
  if (inSample !== undefined && largest !== undefined) fitReport(inSample, largest);
  console.log(`(${seconds.toFixed(0)} s)`);
};

const longReport = ({ longAtDefaults, windows, atDefaults }: Results): void => {
  const longOf = (history: History): Compared => longAtDefaults.get(history)!;
  const defaultsOf = (history: History): Compared => atDefaults.get(history)!;
  comparisonTable(long, longOf, 'Long sessions at the defaults');
  kindTable(
    long,
    [{ name: 'defaults', of: longOf }],
    'Long sessions: recall by the number of files the commit a label points to changed',
  );
  ageTable(
    long,
    longOf,
    'Long sessions: recall by how many tasks before the prompt the change a label points to was made',
  );
  ageTable(core, defaultsOf, 'The same on the hand-written and real histories, at the defaults');
  const rows = long.map((session) => {
    const lost = session.prompts.reduce((n, p) => n + p.lost, 0);
    const labels = session.prompts.reduce((n, p) => n + p.expect.length, 0);
    const w = windows.get(session);
    const count = (t: Tally): string => `${t.hits} of ${t.expected} (${fixed(rates(t).recall)})`;
    return [
      session.name,
      `${lost} of ${labels}`,
      w?.window.name ?? '',
      w === undefined ? '' : count(w.inSession),
      w === undefined ? '' : count(w.fresh),
      w === undefined ? '' : fixed(rates(w.inSession).recall / rates(w.fresh).recall),
    ];
  });
  console.log(
    "Long sessions: labels compaction had removed when asked for, and the commits of a window asked inside the session against the same commits from a fresh store (the window's labels)\n",
  );
  printTable(
    ['session', 'labels lost to compaction', 'window', 'its commits in the session', 'from a fresh store', 'ratio'],
    rows,
  );
  oldContextReport(results.oldContext);
};

/** Each long session's recall (and its window's ratio) by the share of context an old task lends, and held out. */
const oldContextReport = ({ byShare, heldOut }: OldContextChoice): void => {
  const cell = ({ tally, window }: { tally: Tally; window: number | undefined }): string =>
    `${fixed(rates(tally).recall)}${window === undefined ? '' : ` (${fixed(window)})`}`;
  const together = (tallies: ReadonlyArray<Tally>): string =>
    fixed(rates(tallies.reduce((sum, t) => addTally(sum, t), emptyTally())).recall);
  console.log(
    'Long sessions: recall (window in session) by the share of its context an old task lends (`contextOld`: 150 tasks prompted since), and each session held out with the share the others score best with\n',
  );
  printTable(
    ['contextOld', ...long.map((session) => session.name), 'together'],
    [
      ...OLD_SHARES.map((share, s) => [
        String(share),
        ...byShare[s]!.map(cell),
        together(byShare[s]!.map(({ tally }) => tally)),
      ]),
      [
        'leave-one-session-out',
        ...heldOut.map(({ share, at }) => `${cell(at)} at ${share}`),
        together(heldOut.map(({ at }) => at.tally)),
      ],
    ],
  );
};

const ablationReport = (rows: ReadonlyArray<{ name: string; hand: Tally; real: Tally }>): void => {
  console.log('Ablations: each signal switched off in turn (recall / precision / mean tokens)\n');
  printTable(
    ['configuration', 'hand-written', 'real'],
    rows.map(({ name, hand: h, real: r }) => [name, triple(h), triple(r)]),
  );
};

/** A label the defaults miss: its prompt, the rank `explainRetrieval` gives its fact and why it was left out. */
interface Miss {
  readonly history: string;
  readonly line: number;
  readonly taskId: string;
  readonly label: string;
  /** Its fact's place among the valid facts (1 is the best), or undefined when no valid fact holds it. */
  readonly rank: number | undefined;
  readonly score: number | undefined;
  readonly leftOutAs: string | undefined;
}

/** Every label the defaults miss (`--misses`), for the table and the JSON document alike. */
const missedLabels = (): Miss[] => {
  const misses: Miss[] = [];
  for (const history of core)
    scorePrompts(history, libraryRetriever(defaults), layoutOf(defaults), (prompt, missed) => {
      const decisions = explainRetrieval(prompt.store, queryOf(prompt, defaults)).filter(
        (d) => d.reason !== 'invalidated',
      );
      const at = decisions.findIndex(({ fact }) => tripleKey(fact) === tripleKey(missed));
      const found = decisions[at];
      misses.push({
        history: history.name,
        line: prompt.line,
        taskId: prompt.taskId,
        label: `${missed.subject} ${missed.relation} ${missed.object}`.slice(0, 100),
        rank: found === undefined ? undefined : at + 1,
        score: found?.score,
        leftOutAs: found?.reason,
      });
    });
  return misses;
};

const missesReport = (misses: ReadonlyArray<Miss>): void => {
  console.log('Labels the defaults miss\n');
  printTable(
    ['history', 'prompt line', 'label', 'rank', 'score', 'left out as'],
    misses.map((miss) => [
      miss.history,
      `${miss.line} (task ${miss.taskId})`,
      miss.label,
      miss.rank === undefined ? 'no valid fact' : String(miss.rank),
      miss.score === undefined ? '' : fixed(miss.score),
      miss.leftOutAs ?? '',
    ]),
  );
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
    `Fitted on every history (DEFAULT_RANKING), with the count cap (DEFAULT_MAX_FACTS) ${cap}, half as much again as the largest section it fills (${largest} facts):\n`,
  );
  console.log(JSON.stringify(ranking, null, 2));
  const same = isShipped(ranking, largest);
  console.log(
    same
      ? '\nDEFAULT_RANKING and DEFAULT_MAX_FACTS are these.'
      : '\nDEFAULT_RANKING or DEFAULT_MAX_FACTS differ from these.',
  );
};

const results = evaluate();
report(results, (performance.now() - started) / 1000);
