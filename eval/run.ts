/**
 * `npm run eval`: retrieval quality on the labeled histories in eval/histories/. Each prompt
 * event there carries `expect`, the earlier facts a careful engineer wants that task to see.
 * Every history is replayed through the tracker exactly as an orchestrator would run it, and
 * at each labeled prompt the injected section (default 10 facts / 500 tokens) is compared
 * with the labels: recall, precision and context tokens, for the library's ranking, for the
 * seed design's keyword-overlap baseline (bench/seed.ts) on the same store, and for ablations that switch
 * off one ranking prior or feature at a time.
 *
 * Usage: npm run eval [-- --json]
 */
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import {
  createFactTracker,
  DEFAULT_RANKING,
  estimateTokens,
  formatSessionFacts,
  parseHistory,
  type FactQuery,
  type RankingOverrides,
  selectValidFacts,
} from '../src/index.js';
import { keywordOverlapRetrieve } from '../bench/seed.js';

const MAX_FACTS = 10;
const MAX_TOKENS = 500;

interface Triple {
  readonly subject: string;
  readonly relation: string;
  readonly object: string;
}

interface Tally {
  expected: number;
  hits: number;
  injected: number;
  tokens: number;
  prompts: number;
}

const tripleKey = (t: Triple): string => `${t.subject}\u001f${t.relation}\u001f${t.object}`;

const neutral = (name: keyof typeof DEFAULT_RANKING.priors): RankingOverrides => ({ priors: { [name]: 1 } });

/** The configurations compared: the library, the seed baseline, and one ablation per feature. */
const rankingArgument = process.argv.find((arg) => arg.startsWith('--ranking='));
const chosen: RankingOverrides | undefined =
  rankingArgument === undefined
    ? undefined
    : (JSON.parse(rankingArgument.slice('--ranking='.length)) as RankingOverrides);

const configurations: ReadonlyArray<{ name: string; ranking?: RankingOverrides; baseline?: true }> = [
  { name: 'tracker (defaults)', ...(chosen === undefined ? {} : { ranking: chosen }) },
  { name: 'seed baseline', baseline: true },
  { name: 'no task context', ranking: { contextWeight: 0 } },
  { name: 'no exact-file boost', ranking: { exactFileBoost: 0 } },
  { name: 'no status prior', ranking: neutral('status') },
  { name: 'no test prior', ranking: neutral('test') },
  { name: 'no test-file prior', ranking: neutral('testFile') },
  { name: 'no manifest prior', ranking: neutral('manifest') },
  { name: 'no convention prior', ranking: neutral('convention') },
  { name: 'no summary prior', ranking: neutral('summary') },
  { name: 'no issue prior', ranking: neutral('issue') },
  { name: 'no duplicate prior', ranking: neutral('duplicate') },
  {
    name: 'no priors at all',
    ranking: {
      priors: { status: 1, test: 1, testFile: 1, manifest: 1, convention: 1, summary: 1, issue: 1, duplicate: 1 },
    },
  },
];

const evaluate = (
  text: string,
  ranking: RankingOverrides | undefined,
  baseline: boolean,
): { tally: Tally; missing: string[] } => {
  const lines = text.split('\n');
  let now = 0;
  const tracker = createFactTracker({ clock: () => now, ...(ranking === undefined ? {} : { ranking }) });
  const tally: Tally = { expected: 0, hits: 0, injected: 0, tokens: 0, prompts: 0 };
  const missing: string[] = [];
  for (const event of parseHistory(text).events) {
    now = event.at;
    if (event.type === 'dispatch')
      tracker.ingestOutput({ role: event.role, taskId: event.taskId, output: event.output });
    else if (event.type === 'invalidate') tracker.invalidate(event.subject, event.relation, event.at);
    else if (event.type === 'compact') tracker.compact(event.maxFacts);
    else {
      const raw = JSON.parse(lines[event.line - 1]!) as { expect?: Triple[] };
      const store = tracker.getSnapshot();
      const query: FactQuery = {
        taskDescription: event.taskPrompt,
        taskId: event.taskId,
        maxFacts: MAX_FACTS,
        maxTokens: MAX_TOKENS,
      };
      const compiled = tracker.compilePrompt({
        taskId: event.taskId,
        taskPrompt: event.taskPrompt,
        maxFacts: MAX_FACTS,
        maxTokens: MAX_TOKENS,
      });
      const facts = baseline
        ? keywordOverlapRetrieve(selectValidFacts(store), query, (fact) => fact.validFrom)
        : compiled.facts;
      if (raw.expect === undefined) continue;
      const injected = new Set(facts.map(tripleKey));
      tally.prompts += 1;
      tally.expected += raw.expect.length;
      tally.injected += facts.length;
      tally.tokens += estimateTokens(formatSessionFacts(facts));
      for (const triple of raw.expect) {
        if (injected.has(tripleKey(triple))) tally.hits += 1;
        else
          missing.push(
            `line ${event.line} task ${event.taskId}: ${triple.subject} ${triple.relation} ${triple.object}`,
          );
      }
    }
  }
  return { tally, missing };
};

const ratio = (a: number, b: number): number => (b === 0 ? 0 : a / b);
const fixed = (n: number, digits = 3): string => n.toFixed(digits);

const main = (): void => {
  const json = process.argv.includes('--json');
  const verbose = process.argv.includes('--verbose');
  const dir = join(import.meta.dirname, 'histories');
  const files = readdirSync(dir)
    .filter((file) => file.endsWith('.jsonl'))
    .sort();
  const results: Record<
    string,
    Record<string, { recall: number; precision: number; meanTokens: number; prompts: number; labels: number }>
  > = {};
  for (const config of configurations) {
    const overall: Tally = { expected: 0, hits: 0, injected: 0, tokens: 0, prompts: 0 };
    results[config.name] = {};
    for (const file of files) {
      const { tally, missing } = evaluate(
        readFileSync(join(dir, file), 'utf8'),
        config.ranking,
        config.baseline === true,
      );
      for (const key of Object.keys(overall) as Array<keyof Tally>) overall[key] += tally[key];
      results[config.name]![basename(file, '.jsonl')] = {
        recall: ratio(tally.hits, tally.expected),
        precision: ratio(tally.hits, tally.injected),
        meanTokens: ratio(tally.tokens, tally.prompts),
        prompts: tally.prompts,
        labels: tally.expected,
      };
      if (verbose && config.name === 'tracker (defaults)')
        for (const line of missing) console.error(`missed ${file} ${line}`);
    }
    results[config.name]!['overall'] = {
      recall: ratio(overall.hits, overall.expected),
      precision: ratio(overall.hits, overall.injected),
      meanTokens: ratio(overall.tokens, overall.prompts),
      prompts: overall.prompts,
      labels: overall.expected,
    };
  }
  if (json) {
    console.log(JSON.stringify({ maxFacts: MAX_FACTS, maxTokens: MAX_TOKENS, results }, null, 2));
    return;
  }
  const histories = [...files.map((file) => basename(file, '.jsonl')), 'overall'];
  const tracker = results['tracker (defaults)']!;
  const seed = results['seed baseline']!;
  console.log(`Retrieval quality, ${MAX_FACTS} facts / ${MAX_TOKENS} tokens per prompt`);
  console.log('');
  const row = (cells: ReadonlyArray<string | number>): string => `| ${cells.join(' | ')} |`;
  const header = [
    'history',
    'prompts',
    'labels',
    'recall',
    'precision',
    'tokens',
    'seed recall',
    'seed precision',
    'seed tokens',
    'recall x',
  ];
  console.log(row(header));
  console.log(row(header.map(() => '---')));
  for (const history of histories) {
    const t = tracker[history]!;
    const s = seed[history]!;
    console.log(
      row([
        history,
        t.prompts,
        t.labels,
        fixed(t.recall),
        fixed(t.precision),
        fixed(t.meanTokens, 0),
        fixed(s.recall),
        fixed(s.precision),
        fixed(s.meanTokens, 0),
        s.recall === 0 ? 'inf' : `${fixed(t.recall / s.recall, 2)}x`,
      ]),
    );
  }
  console.log('');
  console.log('Ablations (overall): each ranking feature switched off in turn');
  console.log(row(['configuration', 'recall', 'precision', 'tokens']));
  console.log(row(['---', '---', '---', '---']));
  for (const config of configurations) {
    const o = results[config.name]!['overall']!;
    console.log(row([config.name, fixed(o.recall), fixed(o.precision), fixed(o.meanTokens, 0)]));
  }
};

main();
