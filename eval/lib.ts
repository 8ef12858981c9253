/**
 * The evaluation's machinery: labeled histories replayed once into the stores their prompts see,
 * then any retrieval setting scored against the labels. A store does not depend on the ranking
 * (ranking is a query-time choice), so a history is replayed once and every setting is a pure
 * function call per prompt: a grid of settings costs retrievals, not replays.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import {
  createFactTracker,
  estimateTokens,
  type FactQuery,
  type FactStore,
  type FactTag,
  formatFactLine,
  formatSessionFacts,
  parseHistory,
  type RankingOverrides,
  retrieveFacts,
  SESSION_CONTEXT_HEADER,
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
  /** When the prompt was given (its line's `at`). */
  readonly at: number;
  readonly tags?: ReadonlyArray<FactTag>;
  readonly store: FactStore;
  readonly expect: ReadonlyArray<Triple>;
  /** How many of `expect` name no fact valid in `store` (compaction removed it). */
  readonly lost: number;
  /** The commit the prompt's line names, when it names one. */
  readonly commit?: string;
  /**
   * Per label of `expect`, how many files the task it points to changed: the task of the valid
   * fact it names (for a `modified_by` label, the task that last changed the file), counted from
   * the file facts that task's dispatches gave.
   */
  readonly labelFiles: ReadonlyArray<number>;
  /**
   * Per label of `expect`, how many tasks before this prompt's the task it points to was
   * prompted (1: the task prompted just before; counted in the history's prompt order), or -1
   * when that task was never prompted.
   */
  readonly labelAges: ReadonlyArray<number>;
}

/** Where a history comes from: hand-written (eval/histories), a real commit window, a long real session. */
export type HistoryGroup = 'hand' | 'real' | 'long';

/** A labeled history, replayed. */
export interface History {
  readonly name: string;
  readonly group: HistoryGroup;
  readonly prompts: ReadonlyArray<LabeledPrompt>;
  /** Task id -> the commit a prompt line names (histories built from commits carry a `commit` field). */
  readonly commits: ReadonlyMap<string, string>;
}

/**
 * Labels by the size of the task they point to: a task that changed one file (or none: a
 * reviewer's finding on a task with no file), 2 to 10, more than 10 (a sweeping commit: a
 * rename, a refactor, a dependency bump).
 */
export const LABEL_KINDS = ['1 file', '2-10 files', '>10 files'] as const;
export type LabelKind = (typeof LABEL_KINDS)[number];

/** The kind of a label pointing to a task that changed `files` files. */
export const labelKind = (files: number): LabelKind =>
  files <= 1 ? '1 file' : files <= 10 ? '2-10 files' : '>10 files';

/**
 * Labels by how long ago the change they point to was made, in tasks (see
 * `LabeledPrompt.labelAges`): a 150-commit window holds none older than 150 tasks, a long
 * session holds files last changed thousands of tasks before.
 */
export const LABEL_AGES = ['1-10 tasks', '11-50', '51-150', '151-500', '>500'] as const;
export type LabelAge = (typeof LABEL_AGES)[number];

/** The age class of a label pointing to a task prompted `age` tasks before; undefined when unknown. */
export const labelAge = (age: number): LabelAge | undefined =>
  age < 1
    ? undefined
    : age <= 10
      ? '1-10 tasks'
      : age <= 50
        ? '11-50'
        : age <= 150
          ? '51-150'
          : age <= 500
            ? '151-500'
            : '>500';

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

/** Options of a replay: the store's bound on valid facts (the library's default when absent). */
export interface ReplayOptions {
  readonly maxValidFacts?: number;
}

/** Replays a history through the tracker and keeps, at each labeled prompt, the store it sees. */
export const replayLabeled = (
  name: string,
  group: HistoryGroup,
  text: string,
  options: ReplayOptions = {},
): History => {
  const lines = text.split('\n');
  let now = 0;
  const tracker = createFactTracker({
    clock: () => now,
    ...(options.maxValidFacts === undefined ? {} : { maxValidFacts: options.maxValidFacts }),
  });
  const prompts: LabeledPrompt[] = [];
  const commits = new Map<string, string>();
  /** Task id -> the files its dispatches gave file facts of. */
  const taskFiles = new Map<string, Set<string>>();
  const filesOf = (taskId: string): Set<string> => {
    let files = taskFiles.get(taskId);
    if (files === undefined) {
      files = new Set();
      taskFiles.set(taskId, files);
    }
    return files;
  };
  /** Task id -> the place of its first prompt in the history (0: the first). */
  const promptedAt = new Map<string, number>();
  const parsed = parseHistory(text);
  if (parsed.errors.length > 0)
    throw new Error(`${name}: line ${parsed.errors[0]!.line}: ${parsed.errors[0]!.message}`);
  for (const event of parsed.events) {
    now = event.at;
    if (event.type === 'dispatch') {
      const extraction = tracker.ingestOutput({ role: event.role, taskId: event.taskId, output: event.output });
      if (extraction._tag === 'Right')
        for (const fact of extraction.right.facts)
          if (fact.tags.includes('file_change')) filesOf(fact.sourceTaskId).add(fact.subject);
    } else if (event.type === 'invalidate') tracker.invalidate(event.subject, event.relation, event.at);
    else if (event.type === 'compact') tracker.compact(event.maxFacts);
    else {
      const raw = JSON.parse(lines[event.line - 1]!) as { expect?: Triple[]; commit?: unknown };
      const commit = typeof raw.commit === 'string' ? raw.commit : undefined;
      if (commit !== undefined) commits.set(event.taskId, commit);
      if (raw.expect !== undefined) {
        const store = tracker.getSnapshot();
        const valid = new Map(selectValidFacts(store).map((fact) => [tripleKey(fact), fact]));
        const taskOf = (label: Triple): string | undefined =>
          valid.get(tripleKey(label))?.sourceTaskId ?? /^task:(.+)$/u.exec(label.object)?.[1];
        prompts.push({
          line: event.line,
          taskId: event.taskId,
          taskPrompt: event.taskPrompt,
          at: event.at,
          ...(event.tags === undefined ? {} : { tags: event.tags }),
          store,
          expect: raw.expect,
          lost: raw.expect.filter((triple) => !valid.has(tripleKey(triple))).length,
          ...(commit === undefined ? {} : { commit }),
          labelFiles: raw.expect.map((label) => {
            const task = taskOf(label);
            return task === undefined ? 0 : (taskFiles.get(task)?.size ?? 0);
          }),
          labelAges: raw.expect.map((label) => {
            const task = taskOf(label);
            const at = task === undefined ? undefined : promptedAt.get(task);
            return at === undefined ? -1 : promptedAt.size - at;
          }),
        });
      }
      if (!promptedAt.has(event.taskId)) promptedAt.set(event.taskId, promptedAt.size);
      // As an orchestrator does: the prompt is compiled (and recorded) before the task runs.
      tracker.compilePrompt({ taskId: event.taskId, taskPrompt: event.taskPrompt });
    }
  }
  return { name, group, prompts, commits };
};

/** True when `path` is a folder (false when absent, or under a file: ENOTDIR). */
export const isFolder = (path: string): boolean => {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
};

/** The `.jsonl` histories of a folder, in name order (none when the folder is absent). */
export const historyFiles = (dir: string): string[] =>
  existsSync(dir)
    ? readdirSync(dir)
        .filter((file) => file.endsWith('.jsonl'))
        .sort()
        .map((file) => join(dir, file))
    : [];

/** Every history of `dir`, replayed, in name order. */
export const loadHistories = (dir: string, group: HistoryGroup, options: ReplayOptions = {}): History[] =>
  historyFiles(dir).map((file) => replayLabeled(basename(file, '.jsonl'), group, readFileSync(file, 'utf8'), options));

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

/** How a retriever chooses facts for a prompt (the `i`th labeled prompt of its history). */
export type Retriever = (prompt: LabeledPrompt, i: number) => ReadonlyArray<SessionFact>;

/** The library's retrieval under a setting. */
export const libraryRetriever =
  (setting: Setting): Retriever =>
  (prompt) =>
    retrieveFacts(prompt.store, queryOf(prompt, setting));

/** The library's retrieval with each prompt's budget given by `tokensOf` (to compare at equal tokens). */
export const libraryAtTokens =
  (setting: Setting, tokensOf: (i: number) => number): Retriever =>
  (prompt, i) =>
    retrieveFacts(prompt.store, queryOf(prompt, { ...setting, maxTokens: tokensOf(i) }));

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

/** The facts that fit in `budget` tokens, taken in order (a fact that does not fit is skipped and later ones still tried). */
const fillBudget = (facts: ReadonlyArray<SessionFact>, budget: number): SessionFact[] => {
  const chosen: SessionFact[] = [];
  let characters = SESSION_CONTEXT_HEADER.length;
  for (const fact of facts) {
    const cost = formatFactLine(fact).length + 1;
    if (Math.ceil((characters + cost) / 4) > budget) continue;
    chosen.push(fact);
    characters += cost;
  }
  return chosen;
};

/** Each prompt's file facts in recency order, computed once (every comparison at equal tokens reads it again). */
const recencyOrders = new WeakMap<LabeledPrompt, ReadonlyArray<SessionFact>>();

/** The file facts of other tasks, newest first: what the recency baseline fills its budget from. */
export const recencyOrder = (prompt: LabeledPrompt): ReadonlyArray<SessionFact> => {
  let order = recencyOrders.get(prompt);
  if (order === undefined) {
    order = selectValidFacts(prompt.store)
      .filter((fact) => fact.tags.includes('file_change') && fact.sourceTaskId !== prompt.taskId)
      .sort((a, b) => b.validFrom - a.validFrom || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    recencyOrders.set(prompt, order);
  }
  return order;
};

/**
 * Each prompt's recency baseline as the fit reads it: its file facts newest first, with what each
 * line costs and whether it is a label, so its section at any budget is a fill of this list.
 */
export const recencyLists = (
  history: History,
): Array<{ readonly costs: ReadonlyArray<number>; readonly labels: ReadonlyArray<boolean> }> =>
  history.prompts.map((prompt) => {
    const labels = new Set(prompt.expect.map(tripleKey));
    const files = recencyOrder(prompt);
    return {
      costs: files.map((fact) => formatFactLine(fact).length + 1),
      labels: files.map((f) => labels.has(tripleKey(f))),
    };
  });

/**
 * The recency baseline: the file facts of the most recently changed files (other tasks' only,
 * newest first), as many as fit in the prompt's budget given by `tokensOf` (a fact that does not
 * fit is skipped and later ones are still tried, as the library's budget does), counted on the
 * section as rendered with the default estimate.
 */
export const recencyRetriever =
  (tokensOf: (i: number) => number): Retriever =>
  (prompt, i) =>
    fillBudget(recencyOrder(prompt), tokensOf(i));

/**
 * The oracle, a perfect ranking: the labels' own facts and nothing else, cheapest first, as many
 * as fit in `maxTokens`. Its tokens are the fewest that reach every label; its recall misses only
 * labels compaction removed or that do not fit.
 */
export const oracleRetriever =
  (maxTokens: number): Retriever =>
  (prompt) => {
    const wanted = new Set(prompt.expect.map(tripleKey));
    const labels = selectValidFacts(prompt.store)
      .filter((fact) => wanted.has(tripleKey(fact)))
      .map((fact) => ({ fact, cost: formatFactLine(fact).length }))
      .sort((a, b) => a.cost - b.cost);
    return fillBudget(
      labels.map(({ fact }) => fact),
      maxTokens,
    );
  };

/** One prompt's outcome under a retriever. */
export interface PromptOutcome {
  readonly hits: number;
  /** Per label of the prompt's `expect`, whether the section holds it. */
  readonly found: ReadonlyArray<boolean>;
  readonly injected: number;
  readonly tokens: number;
}

/** Scores a retriever on a history, per prompt: hits against the labels, facts injected, tokens of the section. */
export const scorePrompts = (
  history: History,
  retrieve: Retriever,
  options: { countTokens?: TokenCounter; layout?: SectionLayout } = {},
  onMiss?: (prompt: LabeledPrompt, triple: Triple) => void,
): PromptOutcome[] => {
  const count = options.countTokens ?? estimateTokens;
  const render = (facts: ReadonlyArray<SessionFact>): string =>
    formatSessionFacts(facts, options.layout === undefined ? {} : { layout: options.layout });
  return history.prompts.map((prompt, i) => {
    const facts = retrieve(prompt, i);
    const injected = new Set(facts.map(tripleKey));
    const found = prompt.expect.map((triple) => {
      const hit = injected.has(tripleKey(triple));
      if (!hit) onMiss?.(prompt, triple);
      return hit;
    });
    return {
      hits: found.filter(Boolean).length,
      found,
      injected: facts.length,
      tokens: facts.length === 0 ? 0 : count(render(facts)),
    };
  });
};

/** The tally of a history's prompt outcomes (`keep` selects prompts by position). */
export const tallyOf = (
  history: History,
  outcomes: ReadonlyArray<PromptOutcome>,
  keep: (i: number) => boolean = () => true,
): Tally => {
  const tally = emptyTally();
  outcomes.forEach((outcome, i) => {
    if (!keep(i)) return;
    tally.prompts += 1;
    tally.expected += history.prompts[i]!.expect.length;
    tally.hits += outcome.hits;
    tally.injected += outcome.injected;
    tally.tokens += outcome.tokens;
  });
  return tally;
};

/** Scores a retriever on a history: hits against the labels, facts injected, tokens of the section. */
export const score = (
  history: History,
  retrieve: Retriever,
  options: { countTokens?: TokenCounter; layout?: SectionLayout } = {},
  onMiss?: (prompt: LabeledPrompt, triple: Triple) => void,
): Tally => tallyOf(history, scorePrompts(history, retrieve, options, onMiss));

/** Labels and hits of one kind (see `LABEL_KINDS`). */
export interface KindTally {
  expected: number;
  hits: number;
}

/**
 * Labels and hits per class of label (`classOf` the `l`th label of a prompt; undefined: none),
 * over a history's prompt outcomes, added into `into`.
 */
export const addClassTallies = <K extends string>(
  into: Record<K, KindTally>,
  history: History,
  outcomes: ReadonlyArray<PromptOutcome>,
  classOf: (prompt: LabeledPrompt, l: number) => K | undefined,
): Record<K, KindTally> => {
  outcomes.forEach((outcome, i) => {
    const prompt = history.prompts[i]!;
    prompt.expect.forEach((_, l) => {
      const kind = classOf(prompt, l);
      if (kind === undefined) return;
      into[kind].expected += 1;
      if (outcome.found[l] === true) into[kind].hits += 1;
    });
  });
  return into;
};

/** The kind of a prompt's `l`th label (see `LABEL_KINDS`). */
export const kindOfLabel = (prompt: LabeledPrompt, l: number): LabelKind => labelKind(prompt.labelFiles[l]!);

/** The age class of a prompt's `l`th label (see `LABEL_AGES`). */
export const ageOfLabel = (prompt: LabeledPrompt, l: number): LabelAge | undefined => labelAge(prompt.labelAges[l]!);

/** Labels and hits per kind of label, over a history's prompt outcomes, added into `into`. */
export const addKindTallies = (
  into: Record<LabelKind, KindTally>,
  history: History,
  outcomes: ReadonlyArray<PromptOutcome>,
): Record<LabelKind, KindTally> => addClassTallies(into, history, outcomes, kindOfLabel);

/** No labels of any of `classes` yet. */
export const emptyClassTallies = <K extends string>(classes: ReadonlyArray<K>): Record<K, KindTally> =>
  Object.fromEntries(classes.map((kind) => [kind, { expected: 0, hits: 0 }])) as Record<K, KindTally>;

/** No labels of any kind yet. */
export const emptyKindTallies = (): Record<LabelKind, KindTally> => emptyClassTallies(LABEL_KINDS);
