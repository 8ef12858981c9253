/**
 * `npm run bench:against -- --base=DIR`: this build against another build of the project (a
 * checkout at DIR with its `dist/` built, e.g. `git worktree add /tmp/base 2a90deb && cd
 * /tmp/base && npm ci && npm run build`), the two commands alternated run by run in one process
 * so that both meet the same machine:
 * - replay: `fact-tracker replay FILE --json` of the generated 10,000-dispatch history;
 * - long: the same command on the long real session vue-core-3200 of
 *   `../shared/realworld/scale/` (read where it is; skipped when the folder is absent);
 * - huge: the same command on the realistic generated history of `--megabytes` MB (100 by
 *   default), its report to a file and through a pipe into a reader slower than the command (as
 *   `| jq` is): seconds and peak resident memory, `--huge-runs` runs each (1 by default);
 * - hook: one `fact-tracker hook` process, PreToolUse and SubagentStop, on a session of 3,000
 *   dispatches (each build its own project folder, since each writes its own snapshot);
 * - mcp: a fresh `fact-tracker mcp` server's first `compile_context` on that session, from the
 *   server's start and at once after the handshake;
 * - retrieval: `retrieveFacts` on the stores and queries of bench/retrieval.ts (both vocabularies,
 *   at `--retrieval-sizes` valid facts, 1,000 by default), each build in a process of its own
 *   (bench/retrievalChild.ts: the build's own store, 3 rounds of 200 queries a class), `--runs`
 *   processes each: the median of the processes' medians per class.
 * Prints the medians of each build and their ratio (this build over the base).
 * Usage: npm run bench:against -- --base=DIR [--runs=N] [--only=replay,long,huge,hook,mcp,retrieval]
 *   [--megabytes=N] [--huge-runs=N] [--retrieval-sizes=N,...] [--json] [--help]
 * Anything else exits 2 with one line and the usage, before a build runs.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { firstServerCall, hookCall, hookPayload, projectWith } from './live.js';
import { median } from './median.js';
import { timeReplay, timeReplayPeak, writeStreamHistory, writeTaskHistory } from './replayCommand.js';
import { VOCABULARIES } from './retrieval.js';

const SECTIONS = ['replay', 'long', 'huge', 'hook', 'mcp', 'retrieval'] as const;
/** The sections run when `--only` is not given: `huge` takes minutes a run, so it is asked for by name. */
const DEFAULT_SECTIONS = ['replay', 'long', 'hook', 'mcp', 'retrieval'];
type Section = (typeof SECTIONS)[number];
const USAGE =
  'Usage: npm run bench:against -- --base=DIR [--runs=N] [--only=replay,long,huge,hook,mcp,retrieval] [--megabytes=N] [--huge-runs=N] [--retrieval-sizes=N,...] [--json] [--help]';

const refuse = (message: string): never => {
  console.error(`bench:against: ${message}\n${USAGE}`);
  process.exit(2);
};

const options = (() => {
  try {
    return parseArgs({
      options: {
        base: { type: 'string' },
        runs: { type: 'string', default: '7' },
        only: { type: 'string', default: DEFAULT_SECTIONS.join(',') },
        megabytes: { type: 'string', default: '100' },
        'huge-runs': { type: 'string', default: '1' },
        'retrieval-sizes': { type: 'string', default: '1000' },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    return refuse((error as Error).message);
  }
})();

if (options.help) {
  console.log(USAGE);
  process.exit(0);
}

const THIS_CLI = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
// Empty, the base would be the working folder: this build timed against itself.
const BASE_CLI =
  options.base === undefined || options.base === ''
    ? refuse('--base=DIR is required')
    : resolve(options.base, 'dist/cli/main.js');
if (!existsSync(BASE_CLI)) refuse(`${BASE_CLI} is missing: build the base first`);
/** Digits only: \`Number\` alone took \`0x10\`, \`1e3\` and \` 5\` as counts. */
const count = (name: string, value: string): number =>
  /^[1-9][0-9]*$/u.test(value)
    ? Number(value)
    : refuse(`--${name} must be a positive integer, not ${JSON.stringify(value)}`);
const RUNS = count('runs', options.runs);
const MEGABYTES = count('megabytes', options.megabytes);
const HUGE_RUNS = count('huge-runs', options['huge-runs']);
const RETRIEVAL_SIZES = options['retrieval-sizes'].split(',').map((size) => count('retrieval-sizes', size));
const only = options.only.split(',');
for (const name of only)
  if (!(SECTIONS as ReadonlyArray<string>).includes(name)) refuse(`no section ${JSON.stringify(name)}`);
const runs = (section: Section): boolean => only.includes(section);

/** The session length of the live measures. */
const LIVE_DISPATCHES = 3_000;

/** One measure's samples per build, the builds alternated run by run. */
interface Pair {
  readonly name: string;
  readonly unit: 's' | 'ms' | 'MB';
  readonly current: number[];
  readonly base: number[];
}

const pair = (name: string, unit: Pair['unit']): Pair => ({ name, unit, current: [], base: [] });

const builds = [
  { key: 'current', cli: THIS_CLI, library: fileURLToPath(new URL('../dist/index.js', import.meta.url)) },
  { key: 'base', cli: BASE_CLI, library: resolve(options.base ?? '', 'dist/index.js') },
] as const;

/** The two builds in run `run`'s order: this one first on even runs, the base first on odd ones. */
const inTurn = (run: number) => (run % 2 === 0 ? builds : [...builds].reverse());

/** The replay command of each build on the history `history(dir)` writes or names, RUNS runs each. */
const replayPairsOf = (name: string, history: (dir: string) => string): Pair[] => {
  const dir = mkdtempSync(join(tmpdir(), 'fact-tracker-against-'));
  const measure = pair(name, 's');
  try {
    const file = history(dir);
    for (let run = 0; run < RUNS; run += 1)
      for (const { key, cli } of inTurn(run)) {
        const timed = timeReplay(cli, file, dir);
        if ('failed' in timed) throw new Error(`${key}: ${timed.failed}`);
        measure[key].push(timed.seconds);
      }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return [measure];
};

const replayPairs = (): Pair[] => replayPairsOf('replay of 10,000 dispatches', (dir) => writeTaskHistory(dir, 5_000));

/** The long real session the issue of replay speed measures on. */
const LONG_SESSION = fileURLToPath(new URL('../../shared/realworld/scale/vue-core-3200.jsonl', import.meta.url));

const longPairs = (): Pair[] => {
  if (existsSync(LONG_SESSION)) return replayPairsOf('replay of vue-core-3200', () => LONG_SESSION);
  console.error(`bench:against: long skipped, ${LONG_SESSION} is absent`);
  return [];
};

const hugePairs = (): Pair[] => {
  const dir = mkdtempSync(join(tmpdir(), 'fact-tracker-against-'));
  const measures: Pair[] = [];
  try {
    const { file, events } = writeStreamHistory(dir, MEGABYTES);
    for (const into of ['file', 'pipe'] as const) {
      const what = `replay of ${MEGABYTES} MB (${events} events), report ${into === 'file' ? 'to a file' : 'through a slow pipe'}`;
      const seconds = pair(what, 's');
      const peak = pair(`${what}: peak memory`, 'MB');
      for (let run = 0; run < HUGE_RUNS; run += 1)
        for (const { key, cli } of inTurn(run)) {
          const timed = timeReplayPeak(cli, file, dir, into);
          if ('failed' in timed) throw new Error(`${key}: ${timed.failed}`);
          seconds[key].push(timed.seconds);
          peak[key].push(timed.peakMb);
        }
      measures.push(seconds, peak);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return measures;
};

const hookPairs = (): Pair[] => {
  const dirs = { current: projectWith(LIVE_DISPATCHES), base: projectWith(LIVE_DISPATCHES) };
  const measures = {
    PreToolUse: pair(`hook PreToolUse at ${LIVE_DISPATCHES} dispatches`, 'ms'),
    SubagentStop: pair(`hook SubagentStop at ${LIVE_DISPATCHES} dispatches`, 'ms'),
  };
  try {
    let n = 0;
    // A first call each saves the snapshot a session of that length has in use.
    for (const { key, cli } of builds) hookCall(dirs[key], hookPayload(dirs[key], 'PreToolUse', (n += 1)), cli);
    for (let run = 0; run < RUNS; run += 1)
      for (const kind of ['PreToolUse', 'SubagentStop'] as const)
        for (const { key, cli } of inTurn(run))
          measures[kind][key].push(hookCall(dirs[key], hookPayload(dirs[key], kind, (n += 1)), cli));
  } finally {
    for (const dir of Object.values(dirs)) rmSync(dir, { recursive: true, force: true });
  }
  return Object.values(measures);
};

const mcpPairs = async (): Promise<Pair[]> => {
  const dirs = { current: projectWith(LIVE_DISPATCHES), base: projectWith(LIVE_DISPATCHES) };
  const fromStart = pair(`mcp first compile_context from the server's start, ${LIVE_DISPATCHES} dispatches`, 'ms');
  const atOnce = pair(`mcp first compile_context at once after the handshake, ${LIVE_DISPATCHES} dispatches`, 'ms');
  try {
    let n = 0;
    for (const { key, cli } of builds) await firstServerCall(dirs[key], (n += 1), 0, cli);
    for (let run = 0; run < RUNS; run += 1)
      for (const { key, cli } of inTurn(run)) {
        const { firstCallMs, totalMs } = await firstServerCall(dirs[key], (n += 1), 0, cli);
        fromStart[key].push(totalMs);
        atOnce[key].push(firstCallMs);
      }
  } finally {
    for (const dir of Object.values(dirs)) rmSync(dir, { recursive: true, force: true });
  }
  return [fromStart, atOnce];
};

/** The query rounds each retrieval process times per class (3 rounds of 200 queries). */
const RETRIEVAL_ROUNDS = 3;
const RETRIEVAL_CHILD = fileURLToPath(new URL('./retrievalChild.ts', import.meta.url));

/** One build's retrieval medians per class (bench/retrievalChild.ts, in a process of its own). */
const retrievalMedians = (library: string, vocabulary: string, size: number): Record<string, number> => {
  const child = spawnSync(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', RETRIEVAL_CHILD, library, vocabulary, String(size), String(RETRIEVAL_ROUNDS)],
    { encoding: 'utf8' },
  );
  if (child.status !== 0) throw new Error(`retrieval of ${library} failed: ${child.stderr.trim()}`);
  return (JSON.parse(child.stdout) as { medians: Record<string, number> }).medians;
};

const retrievalPairs = (): Pair[] =>
  VOCABULARIES.flatMap(({ name: vocabulary }) =>
    RETRIEVAL_SIZES.flatMap((size) => {
      const measures = new Map<string, Pair>();
      for (let run = 0; run < RUNS; run += 1)
        for (const { key, library } of inTurn(run))
          for (const [kind, value] of Object.entries(retrievalMedians(library, vocabulary, size))) {
            const name = `retrieval median, ${vocabulary} at ${size} facts, ${kind} queries`;
            if (!measures.has(name)) measures.set(name, pair(name, 'ms'));
            measures.get(name)![key].push(value);
          }
      return [...measures.values()];
    }),
  );

const pairs: Pair[] = [
  ...(runs('replay') ? replayPairs() : []),
  ...(runs('long') ? longPairs() : []),
  ...(runs('huge') ? hugePairs() : []),
  ...(runs('hook') ? hookPairs() : []),
  ...(runs('mcp') ? await mcpPairs() : []),
  ...(runs('retrieval') ? retrievalPairs() : []),
];

const rows = pairs.map((measure) => ({
  name: measure.name,
  unit: measure.unit,
  current: median(measure.current),
  base: median(measure.base),
  ratio: median(measure.current) / median(measure.base),
  runs: { current: measure.current, base: measure.base },
}));

if (options.json) console.log(JSON.stringify({ base: options.base, runs: RUNS, rows }, null, 2));
else {
  const shown = (value: number, unit: Pair['unit']) =>
    unit === 's' ? `${value.toFixed(2)} s` : `${value.toFixed(value < 10 ? 3 : 0)} ${unit}`;
  console.log(`this build against ${options.base}, the two alternated run by run; medians:`);
  for (const row of rows)
    console.log(
      `${row.name}: ${shown(row.current, row.unit)} against ${shown(row.base, row.unit)} (${row.ratio.toFixed(2)}x, ${row.runs.current.length} runs each)`,
    );
}
