/**
 * `npm run bench:against -- --base=DIR`: this build against another build of the project (a
 * checkout at DIR with its `dist/` built, e.g. `git worktree add /tmp/base 2a90deb && cd
 * /tmp/base && npm ci && npm run build`), the two commands alternated run by run in one process
 * so that both meet the same machine:
 * - replay: `fact-tracker replay FILE --json` of the generated 10,000-dispatch history;
 * - hook: one `fact-tracker hook` process, PreToolUse and SubagentStop, on a session of 3,000
 *   dispatches (each build its own project folder, since each writes its own snapshot);
 * - mcp: a fresh `fact-tracker mcp` server's first `compile_context` on that session, from the
 *   server's start and at once after the handshake.
 * Prints the medians of each build and their ratio (this build over the base).
 * Usage: npm run bench:against -- --base=DIR [--runs=N] [--only=replay,hook,mcp] [--json]
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { firstServerCall, hookCall, hookPayload, projectWith } from './live.js';
import { median } from './median.js';
import { timeReplay, writeTaskHistory } from './replayCommand.js';

const SECTIONS = ['replay', 'hook', 'mcp'] as const;
type Section = (typeof SECTIONS)[number];
const USAGE = 'Usage: npm run bench:against -- --base=DIR [--runs=N] [--only=replay,hook,mcp] [--json]';

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
        only: { type: 'string', default: SECTIONS.join(',') },
        json: { type: 'boolean', default: false },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    return refuse((error as Error).message);
  }
})();

const THIS_CLI = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const BASE_CLI =
  options.base === undefined ? refuse('--base=DIR is required') : resolve(options.base, 'dist/cli/main.js');
if (!existsSync(BASE_CLI)) refuse(`${BASE_CLI} is missing: build the base first`);
const RUNS = Number(options.runs);
if (!Number.isInteger(RUNS) || RUNS < 1) refuse(`--runs must be a positive integer, not ${options.runs}`);
const only = options.only.split(',');
for (const name of only) if (!(SECTIONS as ReadonlyArray<string>).includes(name)) refuse(`no section ${name}`);
const runs = (section: Section): boolean => only.includes(section);

/** The session length of the live measures. */
const LIVE_DISPATCHES = 3_000;

/** One measure's samples per build, the builds alternated run by run. */
interface Pair {
  readonly name: string;
  readonly unit: 's' | 'ms';
  readonly current: number[];
  readonly base: number[];
}

const pair = (name: string, unit: Pair['unit']): Pair => ({ name, unit, current: [], base: [] });

const builds = [
  { key: 'current', cli: THIS_CLI },
  { key: 'base', cli: BASE_CLI },
] as const;

/** The two builds in run `run`'s order: this one first on even runs, the base first on odd ones. */
const inTurn = (run: number) => (run % 2 === 0 ? builds : [...builds].reverse());

const replayPairs = (): Pair[] => {
  const dir = mkdtempSync(join(tmpdir(), 'fact-tracker-against-'));
  const measure = pair('replay of 10,000 dispatches', 's');
  try {
    const file = writeTaskHistory(dir, 5_000);
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

const pairs: Pair[] = [
  ...(runs('replay') ? replayPairs() : []),
  ...(runs('hook') ? hookPairs() : []),
  ...(runs('mcp') ? await mcpPairs() : []),
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
    unit === 's' ? `${value.toFixed(2)} s` : `${value.toFixed(0)} ms`;
  console.log(`this build against ${options.base}, ${RUNS} runs each, alternated; medians:`);
  for (const row of rows)
    console.log(
      `${row.name}: ${shown(row.current, row.unit)} against ${shown(row.base, row.unit)} (${row.ratio.toFixed(2)}x)`,
    );
}
