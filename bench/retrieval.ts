/**
 * Retrieval at scale, for exact top k: stores of 1,000 and 100,000 valid facts over two
 * vocabularies (a Zipfian one of 3,000 words, where a few words are everywhere and most are
 * rare, and one of 30 words, where every term is common), queried with 6-word task-like
 * queries of three classes (realistic: drawn like prompts; common: the most frequent words;
 * rare: words from the tail). Per store and class: median and p95 time of `retrieveFacts`, the
 * answers that came back empty, and the share of queries whose top 10 equals the exhaustive
 * ranking (`explainRetrieval`, which scores every fact).
 *
 * The library is an argument, not an import: `bench/run.ts` passes the build it measures, and
 * `bench/retrievalChild.ts` the build `bench:against` names, so a process loads one build only
 * (two builds loaded in one process do not compare: see docs/performance.md).
 */
import type * as Library from '../dist/index.js';
import { seeded } from './generate.js';

type FactStore = Library.FactStore;
type FactTag = Library.FactTag;
type FactQuery = Library.FactQuery;
type SessionFact = Library.SessionFact;

/** The functions of a build of the library that these measures call. */
export type RetrievalLibrary = Pick<
  typeof Library,
  | 'addFacts'
  | 'emptyFactStore'
  | 'explainRetrieval'
  | 'makeFact'
  | 'recordTaskPrompt'
  | 'retrieveFacts'
  | 'selectValidCount'
>;

interface Vocabulary {
  readonly name: string;
  readonly words: ReadonlyArray<string>;
  /** Cumulative weights for drawing (Zipf with s = 1, or uniform). */
  readonly cumulative: ReadonlyArray<number>;
}

const LETTERS = 'bcdfghjklmnprstvz';
const VOWELS = 'aeiou';

/** Distinct pronounceable words (no English stopword, none a stem of another). */
const makeWords = (count: number): string[] =>
  Array.from({ length: count }, (_, i) => {
    let word = '';
    let n = i;
    do {
      word += LETTERS[n % LETTERS.length]! + VOWELS[Math.floor(n / LETTERS.length) % VOWELS.length]!;
      n = Math.floor(n / (LETTERS.length * VOWELS.length));
    } while (n > 0);
    return `${word}x`;
  });

const vocabulary = (name: string, count: number, zipf: boolean): Vocabulary => {
  const weights = Array.from({ length: count }, (_, rank) => (zipf ? 1 / (rank + 1) : 1));
  const total = weights.reduce((sum, w) => sum + w, 0);
  let running = 0;
  return { name, words: makeWords(count), cumulative: weights.map((w) => (running += w / total)) };
};

export const VOCABULARIES = [vocabulary('zipf-3000', 3_000, true), vocabulary('common-30', 30, false)];

const draw = (vocab: Vocabulary, random: () => number): string => {
  const target = random();
  let low = 0;
  let high = vocab.cumulative.length - 1;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (vocab.cumulative[mid]! < target) low = mid + 1;
    else high = mid;
  }
  return vocab.words[low]!;
};

const phrase = (vocab: Vocabulary, random: () => number, length: number): string =>
  Array.from({ length }, () => draw(vocab, random)).join(' ');

const camel = (a: string, b: string): string => a + b.charAt(0).toUpperCase() + b.slice(1);

const path = (vocab: Vocabulary, random: () => number): string =>
  `src/${draw(vocab, random)}/${draw(vocab, random)}/${camel(draw(vocab, random), draw(vocab, random))}.ts`;

/** One task's facts, as the extraction rules shape them, every word from the vocabulary. */
const taskFacts = (
  { makeFact }: RetrievalLibrary,
  vocab: Vocabulary,
  random: () => number,
  task: number,
  at: number,
): SessionFact[] => {
  const taskId = String(task);
  const fact = (
    subject: string,
    relation: string,
    object: string,
    tags: FactTag[],
    role: 'implementer' | 'reviewer',
  ): SessionFact =>
    makeFact({ subject, relation, object, tags, validFrom: at, sourceTaskId: taskId, sourceRole: role, confidence: 1 });
  const facts: SessionFact[] = [
    fact(`task:${taskId}`, 'summary', phrase(vocab, random, 8), ['decision'], 'implementer'),
    fact(`task:${taskId}`, 'tested_by', `${phrase(vocab, random, 2)} passed`, ['test'], 'implementer'),
  ];
  for (let i = 3 + Math.floor(random() * 4); i > 0; i -= 1)
    facts.push(fact(path(vocab, random), 'modified_by', `task:${taskId}`, ['file_change'], 'implementer'));
  if (random() < 0.5)
    facts.push(fact(`task:${taskId}`, 'requires', phrase(vocab, random, 5), ['dependency'], 'implementer'));
  for (let i = Math.floor(random() * 3); i > 0; i -= 1) {
    const file = path(vocab, random);
    facts.push(fact(file, 'issue', phrase(vocab, random, 8), ['error'], 'reviewer'));
    if (random() < 0.2) facts.push(fact(file, 'convention', phrase(vocab, random, 8), ['convention'], 'reviewer'));
  }
  if (random() < 0.4)
    facts.push(fact(`task:${taskId}`, 'must_fix', phrase(vocab, random, 5), ['convention'], 'reviewer'));
  return facts;
};

/** A store of at least `size` valid facts over `vocab`, with a prompt per task. */
export const buildVocabularyStore = (library: RetrievalLibrary, vocab: Vocabulary, size: number): FactStore => {
  const { addFacts, emptyFactStore, recordTaskPrompt, selectValidCount } = library;
  const random = seeded(size + vocab.words.length);
  let store = emptyFactStore({ maxValidFacts: 10_000_000 });
  for (let task = 1; selectValidCount(store) < size; task += 1) {
    const at = task * 60_000;
    store = recordTaskPrompt(store, String(task), phrase(vocab, random, 10), at);
    store = addFacts(store, taskFacts(library, vocab, random, task, at + 1_000));
  }
  return store;
};

type QueryClass = 'realistic' | 'common' | 'rare';
const QUERY_CLASSES: ReadonlyArray<QueryClass> = ['realistic', 'common', 'rare'];

/** 6-word queries of a class over a vocabulary. */
const queries = (vocab: Vocabulary, kind: QueryClass, count: number): string[] => {
  const random = seeded(count + kind.length);
  const { words } = vocab;
  const commonPool = words.slice(0, Math.min(30, words.length));
  const rarePool = words.slice(Math.floor(words.length / 2));
  const pick = (pool: ReadonlyArray<string>): string => pool[Math.floor(random() * pool.length)]!;
  return Array.from({ length: count }, () =>
    Array.from({ length: 6 }, () =>
      kind === 'realistic' ? draw(vocab, random) : kind === 'common' ? pick(commonPool) : pick(rarePool),
    ).join(' '),
  );
};

const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
};

/** One store's figures for one class of queries. */
export interface ClassFigures {
  readonly queries: number;
  readonly medianMs: number;
  readonly p95Ms: number;
  readonly empty: number;
  readonly exactChecked: number;
  readonly exactShare: number;
}

const query = (description: string, maxFacts: number, maxTokens: number): FactQuery => ({
  taskDescription: description,
  taskId: 'query',
  maxFacts,
  maxTokens,
});

/** Times `count` queries of each class and checks `exact` of them against the exhaustive ranking. */
export const measureRetrievalClasses = (
  { explainRetrieval, retrieveFacts }: RetrievalLibrary,
  store: FactStore,
  vocab: Vocabulary,
  count: number,
  exact: number,
): Record<QueryClass, ClassFigures> => {
  const out = {} as Record<QueryClass, ClassFigures>;
  for (const kind of QUERY_CLASSES) {
    const texts = queries(vocab, kind, count);
    // Warm-up: 100 other queries of the class (another seed), so the engine has compiled the hot
    // paths for this store before timing (the first 200 queries of a fresh process run slower,
    // with outliers of 5 to 10 ms at 1,000 facts, while code is still compiled and deoptimized).
    for (const text of queries(vocab, kind, count + 1).slice(0, 100)) retrieveFacts(store, query(text, 40, 500));
    const times: number[] = [];
    let empty = 0;
    for (const text of texts) {
      const start = performance.now();
      const found = retrieveFacts(store, query(text, 40, 500));
      times.push(performance.now() - start);
      if (found.length === 0) empty += 1;
    }
    let equal = 0;
    for (const text of texts.slice(0, exact)) {
      const top = retrieveFacts(store, query(text, 10, Number.MAX_SAFE_INTEGER)).map((fact) => fact.id);
      const exhaustive = explainRetrieval(store, query(text, 10, Number.MAX_SAFE_INTEGER))
        .filter((decision) => decision.decision === 'included')
        .map((decision) => decision.fact.id);
      if (JSON.stringify(top) === JSON.stringify(exhaustive)) equal += 1;
    }
    out[kind] = {
      queries: texts.length,
      medianMs: percentile(times, 0.5),
      p95Ms: percentile(times, 0.95),
      empty,
      exactChecked: Math.min(exact, texts.length),
      exactShare: exact === 0 ? 1 : equal / Math.min(exact, texts.length),
    };
  }
  return out;
};

/** The retrieval section: each vocabulary at each size. */
export const measureRetrieval = (
  library: RetrievalLibrary,
  sizes: ReadonlyArray<number>,
  exactAtLargest: number,
): Array<{ vocabulary: string; validFacts: number; classes: Record<QueryClass, ClassFigures> }> =>
  VOCABULARIES.flatMap((vocab) =>
    sizes.map((size) => {
      const store = buildVocabularyStore(library, vocab, size);
      // Building leaves garbage: collected now (the bench runs with --expose-gc), not during the timed queries.
      (globalThis as { gc?: () => void }).gc?.();
      const exact = size >= 100_000 ? exactAtLargest : 40;
      return {
        vocabulary: vocab.name,
        validFacts: library.selectValidCount(store),
        classes: measureRetrievalClasses(library, store, vocab, 200, exact),
      };
    }),
  );
