/**
 * The evaluation's machinery: labeled histories replayed once into the stores their prompts see,
 * then any retrieval setting scored against the labels. A store does not depend on the ranking
 * (ranking is a query-time choice), so a history is replayed once and every setting is a pure
 * function call per prompt: a grid of settings costs retrievals, not replays.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import {
  createFactTracker,
  estimateTokens,
  type FactQuery,
  type FactStore,
  type FactTag,
  formatSessionFacts,
  parseHistory,
  type RankingOverrides,
  retrieveFacts,
  type SectionLayout,
  selectValidFacts,
  type SessionFact,
  type TokenCounter,
} from '../src/index.js';
import { keywordOverlapRetrieve } from '../bench/seed.js';

/** A fact as a label names it. */
export interface Triple {
  readonly subject: string;
  readonly relation: string;
  readonly object: string;
}

/** One labeled prompt: the store it sees, its query, and the facts a careful engineer wants it to see. */
export interface LabeledPrompt {
  readonly line: number;
  readonly taskId: string;
  readonly taskPrompt: string;
  readonly tags?: ReadonlyArray<FactTag>;
  readonly store: FactStore;
  readonly expect: ReadonlyArray<Triple>;
}

/** A labeled history, replayed. */
export interface History {
  readonly name: string;
  readonly prompts: ReadonlyArray<LabeledPrompt>;
}

/** A retrieval setting: what `compilePrompt` would be given. */
export interface Setting {
  readonly ranking?: RankingOverrides;
  readonly maxFacts: number;
  readonly maxTokens: number;
  readonly countTokens?: TokenCounter;
  readonly layout?: SectionLayout;
}

/** Sums over labeled prompts. */
export interface Tally {
  prompts: number;
  expected: number;
  hits: number;
  injected: number;
  tokens: number;
}

export const emptyTally = (): Tally => ({ prompts: 0, expected: 0, hits: 0, injected: 0, tokens: 0 });

export const addTally = (into: Tally, from: Tally): Tally => {
  into.prompts += from.prompts;
  into.expected += from.expected;
  into.hits += from.hits;
  into.injected += from.injected;
  into.tokens += from.tokens;
  return into;
};

const ratio = (a: number, b: number): number => (b === 0 ? 0 : a / b);

/** Recall, precision and mean tokens of a tally. */
export const rates = (tally: Tally): { recall: number; precision: number; tokens: number } => ({
  recall: ratio(tally.hits, tally.expected),
  precision: ratio(tally.hits, tally.injected),
  tokens: ratio(tally.tokens, tally.prompts),
});

export const tripleKey = (t: Triple): string => `${t.subject}\u001f${t.relation}\u001f${t.object}`;

/** Replays a history through the tracker and keeps, at each labeled prompt, the store it sees. */
export const replayLabeled = (name: string, text: string): History => {
  const lines = text.split('\n');
  let now = 0;
  const tracker = createFactTracker({ clock: () => now });
  const prompts: LabeledPrompt[] = [];
  const parsed = parseHistory(text);
  if (parsed.errors.length > 0)
    throw new Error(`${name}: line ${parsed.errors[0]!.line}: ${parsed.errors[0]!.message}`);
  for (const event of parsed.events) {
    now = event.at;
    if (event.type === 'dispatch')
      tracker.ingestOutput({ role: event.role, taskId: event.taskId, output: event.output });
    else if (event.type === 'invalidate') tracker.invalidate(event.subject, event.relation, event.at);
    else if (event.type === 'compact') tracker.compact(event.maxFacts);
    else {
      const raw = JSON.parse(lines[event.line - 1]!) as { expect?: Triple[] };
      if (raw.expect !== undefined)
        prompts.push({
          line: event.line,
          taskId: event.taskId,
          taskPrompt: event.taskPrompt,
          ...(event.tags === undefined ? {} : { tags: event.tags }),
          store: tracker.getSnapshot(),
          expect: raw.expect,
        });
      // As an orchestrator does: the prompt is compiled (and recorded) before the task runs.
      tracker.compilePrompt({ taskId: event.taskId, taskPrompt: event.taskPrompt });
    }
  }
  return { name, prompts };
};

/** Every history of `dir`, replayed, in name order. */
export const loadHistories = (dir: string): History[] =>
  readdirSync(dir)
    .filter((file) => file.endsWith('.jsonl'))
    .sort()
    .map((file) => replayLabeled(basename(file, '.jsonl'), readFileSync(join(dir, file), 'utf8')));

/** The query a labeled prompt makes under a setting. */
export const queryOf = (prompt: LabeledPrompt, setting: Setting): FactQuery => ({
  taskDescription: prompt.taskPrompt,
  taskId: prompt.taskId,
  ...(prompt.tags === undefined ? {} : { tags: prompt.tags }),
  maxFacts: setting.maxFacts,
  maxTokens: setting.maxTokens,
  ...(setting.countTokens === undefined ? {} : { countTokens: setting.countTokens }),
  ...(setting.ranking === undefined ? {} : { ranking: setting.ranking }),
  ...(setting.layout === undefined ? {} : { layout: setting.layout }),
});

/** How a retriever chooses facts for a prompt. */
export type Retriever = (prompt: LabeledPrompt) => ReadonlyArray<SessionFact>;

/** The library's retrieval under a setting. */
export const libraryRetriever =
  (setting: Setting): Retriever =>
  (prompt) =>
    retrieveFacts(prompt.store, queryOf(prompt, setting));

/** The seed design's keyword-overlap retriever (bench/seed.ts) on the same store. */
export const seedRetriever =
  (maxFacts: number, maxTokens: number): Retriever =>
  (prompt) =>
    keywordOverlapRetrieve(
      selectValidFacts(prompt.store),
      {
        taskDescription: prompt.taskPrompt,
        taskId: prompt.taskId,
        ...(prompt.tags === undefined ? {} : { tags: prompt.tags }),
        maxFacts,
        maxTokens,
      },
      (fact) => fact.validFrom,
    );

/** Scores a retriever on a history: hits against the labels, facts injected, tokens of the section. */
export const score = (
  history: History,
  retrieve: Retriever,
  options: { countTokens?: TokenCounter; layout?: SectionLayout } = {},
  onMiss?: (prompt: LabeledPrompt, triple: Triple) => void,
): Tally => {
  const count = options.countTokens ?? estimateTokens;
  const render = (facts: ReadonlyArray<SessionFact>): string =>
    formatSessionFacts(facts, options.layout === undefined ? {} : { layout: options.layout });
  const tally = emptyTally();
  for (const prompt of history.prompts) {
    const facts = retrieve(prompt);
    const injected = new Set(facts.map(tripleKey));
    tally.prompts += 1;
    tally.expected += prompt.expect.length;
    tally.injected += facts.length;
    tally.tokens += count(render(facts));
    for (const triple of prompt.expect)
      if (injected.has(tripleKey(triple))) tally.hits += 1;
      else onMiss?.(prompt, triple);
  }
  return tally;
};

/** The rank of each label in a ranking of `depth` (Infinity when not in it), for top-k recall. */
export const labelRanks = (history: History, setting: Setting, depth: number): number[] =>
  history.prompts.flatMap((prompt) => {
    const ranked = retrieveFacts(prompt.store, {
      ...queryOf(prompt, { ...setting, ranking: { ...setting.ranking, floor: 0 } }),
      maxFacts: depth,
      maxTokens: 1e9,
    });
    const position = new Map(ranked.map((fact, i) => [tripleKey(fact), i + 1]));
    return prompt.expect.map((triple) => position.get(tripleKey(triple)) ?? Infinity);
  });
