/**
 * The inverted index that lives in the store, so a query touches only the postings of its
 * terms. It is plain data, maintained by the same reducers as the records, and always equal
 * to the index rebuilt from the valid facts and recorded task prompts.
 *
 * - `terms`: term -> postings over the valid facts, by fact id (no two valid records share an
 *   id, and the id is a string the fact holds anyway): the BM25 term weight of the fact's fields,
 *   subject weighted 3, object 1 (see FIELD_WEIGHTS), saturated with k1 = 1.2. Facts are short
 *   triples of similar length, so there is no length normalization (BM25 with b = 0).
 * - `tasks`: per task, the context a fact inherits from the task that produced it (the task's
 *   recorded prompt and its summary), the ids of the task's valid facts and the file pairs
 *   it asserted (so a file is found by the words of every task that changed it).
 * - `taskTerms`: term -> postings over the contexts of the tasks that still lend one (a task
 *   with a valid fact or an asserted file pair), weighted the same way.
 * - `conventions`: the valid facts tagged `convention` (always eligible for retrieval).
 */
import type { SessionFact } from '../fact.js';
import { fnv1a } from '../base/hash.js';
import { textTerms } from '../retrieve/index/terms.js';
import {
  type Batch,
  beginBatch,
  EMPTY_TRIE,
  fresh,
  type HexTrie,
  type TrieHash,
  isTransient,
  type Mutable,
  own,
  sealBatch,
  trieGet,
  trieIsEmpty,
  trieRemove,
  trieSet,
} from './trie.js';

/** Postings of one term: weights by key (its size, `trieSize`, is the term's document frequency). */
export type TermPostings = HexTrie<number>;

/** What the store knows of a task beyond its facts. */
export interface TaskDoc {
  /** The task's latest recorded prompt ('' when none), and when (absent when none). */
  readonly prompt: string;
  readonly promptAt?: number;
  /** The task's valid `summary` facts: fact id, then the fact's object, in id order. */
  readonly summaries: ReadonlyArray<string>;
  /** Ids of the task's valid facts. */
  readonly facts: ReadonlyArray<string>;
  /** Pair keys of the file facts the task ever asserted (a file's history lends it every modifying task's context). */
  readonly touched: ReadonlyArray<string>;
}

/** The store's search index. */
export interface SearchIndex {
  readonly terms: HexTrie<TermPostings>;
  readonly taskTerms: HexTrie<TermPostings>;
  /** Tasks lending a context that is not empty (see `lendsContext`): the document count of `taskTerms`. */
  readonly contextCount: number;
  readonly tasks: HexTrie<TaskDoc>;
  readonly conventions: HexTrie<true>;
}

/**
 * Field weights of a fact's terms. The relation is not indexed: a dozen relations name the
 * kinds of facts, their terms would be the longest posting lists of all, and kinds are ranked
 * by explicit priors instead.
 */
export const FIELD_WEIGHTS = { subject: 3, object: 1 } as const;
/** BM25 term-frequency saturation. */
export const BM25_K1 = 1.2;

/** An empty index. */
export const emptySearchIndex = (): SearchIndex => ({
  terms: EMPTY_TRIE,
  taskTerms: EMPTY_TRIE,
  contextCount: 0,
  tasks: EMPTY_TRIE,
  conventions: EMPTY_TRIE,
});

/** The hash that places a term or task id in a trie. */
export const keyHash = (key: string): number => fnv1a(key);
/** Valid facts are indexed by id (no two valid records share one), already a hex hash. */
const idHash = (id: string): string => id;

const saturate = (weightedFrequency: number): number =>
  (weightedFrequency * (BM25_K1 + 1)) / (weightedFrequency + BM25_K1);

const addWeighted = (weights: Map<string, number>, text: string, weight: number): void => {
  for (const term of textTerms(text)) weights.set(term, (weights.get(term) ?? 0) + weight);
};

const saturateAll = (weights: Map<string, number>): Map<string, number> => {
  for (const [term, frequency] of weights) weights.set(term, saturate(frequency));
  return weights;
};

/** The BM25 weight of each term of a fact (the value of its postings). */
export const factTermWeights = (fact: Pick<SessionFact, 'subject' | 'object'>): Map<string, number> => {
  const weights = new Map<string, number>();
  addWeighted(weights, fact.subject, FIELD_WEIGHTS.subject);
  addWeighted(weights, fact.object, FIELD_WEIGHTS.object);
  return saturateAll(weights);
};

/** The text a task lends its facts as context: its prompt and summaries (in fact-id order). */
const taskContextText = (doc: Pick<TaskDoc, 'prompt' | 'summaries'>): string =>
  [doc.prompt, ...doc.summaries.filter((_, i) => i % 2 === 1)].filter((text) => text !== '').join('\n');

/** The BM25 weight of each term of a task's context text. */
const contextTermWeights = (text: string): Map<string, number> => {
  const weights = new Map<string, number>();
  addWeighted(weights, text, 1);
  return saturateAll(weights);
};

/**
 * A batch of index updates: `index` is the current (persistent) root, replaced as updates
 * are made; nodes created by the batch are changed in place.
 */
export interface IndexWriter {
  readonly batch: Batch;
  index: SearchIndex;
}

/** Starts updating `index` in `batch` (default: a batch of its own). */
export const writeIndex = (index: SearchIndex, batch: Batch = beginBatch()): IndexWriter => ({ batch, index });

/** The updated index, deeply frozen (left open in a transient batch). */
export const finishIndex = (writer: IndexWriter): SearchIndex => {
  sealBatch(writer.batch);
  return Object.isFrozen(writer.index) || isTransient(writer.batch) ? writer.index : Object.freeze(writer.index);
};

const root = (writer: IndexWriter): Mutable<SearchIndex> => {
  const index = own(writer.batch, writer.index);
  writer.index = index;
  return index;
};

/**
 * Posting weights are stored as integers (thousandths): small integers are unboxed in the
 * engine, so a posting costs no separate number object.
 */
export const quantize = (weight: number): number => Math.max(1, Math.round(weight * 1000));
/** A stored posting weight as a BM25 term weight. */
export const postingWeight = (stored: number): number => stored / 1000;

const postTerm = (
  writer: IndexWriter,
  field: 'terms' | 'taskTerms',
  term: string,
  hash: TrieHash,
  key: string,
  weight: number,
  hashOf: (key: string) => TrieHash,
): void => {
  const { batch } = writer;
  const termHash = keyHash(term);
  const postings = trieSet(
    batch,
    trieGet(writer.index[field], termHash, term) ?? EMPTY_TRIE,
    hash,
    key,
    quantize(weight),
    hashOf,
  );
  const index = root(writer);
  index[field] = trieSet(batch, index[field], termHash, term, postings, keyHash);
};

const unpostTerm = (
  writer: IndexWriter,
  field: 'terms' | 'taskTerms',
  term: string,
  hash: TrieHash,
  key: string,
): void => {
  const { batch } = writer;
  const termHash = keyHash(term);
  const existing = trieGet(writer.index[field], termHash, term);
  if (existing === undefined || trieGet(existing, hash, key) === undefined) return;
  const postings = trieRemove(batch, existing, hash, key);
  const index = root(writer);
  index[field] = trieIsEmpty(postings)
    ? trieRemove(batch, index[field], termHash, term)
    : trieSet(batch, index[field], termHash, term, postings, keyHash);
};

const NO_ITEMS: ReadonlyArray<string> = Object.freeze([]);
const EMPTY_TASK_DOC: TaskDoc = Object.freeze({ prompt: '', summaries: NO_ITEMS, facts: NO_ITEMS, touched: NO_ITEMS });

const isUnused = (doc: TaskDoc): boolean =>
  doc.promptAt === undefined && doc.summaries.length === 0 && doc.facts.length === 0 && doc.touched.length === 0;

/*
 * A task's lists are arrays, not objects keyed by their items: every task would give such an
 * object a layout of its own, and the engine's record of those layouts outweighed the data.
 * Each change builds a new array of exactly its length.
 */

/** `list` with `item`, or the same list when it holds it already. */
const withItem = (batch: Batch, list: ReadonlyArray<string>, item: string): ReadonlyArray<string> =>
  list.includes(item) ? list : fresh(batch, list.concat([item]));

/** `list` without `item`, or the same list when it does not hold it. */
const withoutItem = (batch: Batch, list: ReadonlyArray<string>, item: string): ReadonlyArray<string> => {
  const at = list.indexOf(item);
  if (at < 0) return list;
  return list.length === 1 ? NO_ITEMS : fresh(batch, list.slice(0, at).concat(list.slice(at + 1)));
};

/** The summaries with `key` holding `text` (`undefined`: removed), kept in key order. */
const withSummary = (
  batch: Batch,
  list: ReadonlyArray<string>,
  key: string,
  text: string | undefined,
): ReadonlyArray<string> => {
  let at = 0;
  while (at < list.length && list[at]! < key) at += 2;
  const present = list[at] === key;
  if (text === undefined)
    return !present ? list : list.length === 2 ? NO_ITEMS : fresh(batch, list.slice(0, at).concat(list.slice(at + 2)));
  if (present && list[at + 1] === text) return list;
  return fresh(batch, list.slice(0, at).concat([key, text], list.slice(present ? at + 2 : at)));
};

/**
 * A task lends its context only while it has something to lend it to: a valid fact, or a file
 * pair it asserted. Tasks whose facts compaction has removed leave the context collection, so
 * in a long session the best-matching tasks are ones whose facts can still be found.
 */
const lendsContext = (doc: TaskDoc): boolean => doc.facts.length > 0 || doc.touched.length > 0;

/**
 * Changes a task's doc (created when missing, dropped when unused). When the change may touch
 * the context the task posts (its prompt or summaries, or whether it lends context at all),
 * re-posts the terms that come, go or change weight.
 */
const updateTask = (
  writer: IndexWriter,
  taskId: string,
  touchesText: boolean,
  change: (doc: Mutable<TaskDoc>, batch: Batch) => void,
): void => {
  const { batch } = writer;
  const hash = keyHash(taskId);
  const before = trieGet(writer.index.tasks, hash, taskId) ?? EMPTY_TASK_DOC;
  // Read before changing: a doc this batch created is changed in place.
  const lentBefore = lendsContext(before);
  const textBefore = touchesText ? taskContextText(before) : undefined;
  const doc = own(batch, before);
  change(doc, batch);
  const lentAfter = lendsContext(doc);
  if (touchesText || lentBefore !== lentAfter) {
    const text = taskContextText(doc);
    // What the task posted and now posts: its text while it lends context, else nothing.
    const postedBefore = lentBefore ? (textBefore ?? text) : '';
    const postedAfter = lentAfter ? text : '';
    if (postedBefore !== postedAfter) {
      const weightsBefore = contextTermWeights(postedBefore);
      const weightsAfter = contextTermWeights(postedAfter);
      for (const term of weightsBefore.keys())
        if (!weightsAfter.has(term)) unpostTerm(writer, 'taskTerms', term, hash, taskId);
      for (const [term, weight] of weightsAfter) {
        const previous = weightsBefore.get(term);
        if (previous === undefined || quantize(previous) !== quantize(weight))
          postTerm(writer, 'taskTerms', term, hash, taskId, weight, keyHash);
      }
      root(writer).contextCount += Number(postedAfter !== '') - Number(postedBefore !== '');
    }
  }
  const index = root(writer);
  index.tasks = isUnused(doc)
    ? trieRemove(batch, index.tasks, hash, taskId)
    : trieSet(batch, index.tasks, hash, taskId, doc, keyHash);
};

/** Adds a newly valid fact to the index. */
export const indexFact = (writer: IndexWriter, fact: SessionFact): void => {
  const key = fact.id;
  for (const [term, weight] of factTermWeights(fact)) postTerm(writer, 'terms', term, key, key, weight, idHash);
  if (fact.tags.includes('convention')) {
    const index = root(writer);
    index.conventions = trieSet(writer.batch, index.conventions, key, key, true, idHash);
  }
  updateTask(writer, fact.sourceTaskId, fact.relation === 'summary', (doc, batch) => {
    doc.facts = withItem(batch, doc.facts, key);
    if (fact.relation === 'summary') doc.summaries = withSummary(batch, doc.summaries, key, fact.object);
  });
};

/** Removes a fact that stopped being valid from the index. */
export const unindexFact = (writer: IndexWriter, fact: SessionFact): void => {
  const key = fact.id;
  for (const term of factTermWeights(fact).keys()) unpostTerm(writer, 'terms', term, key, key);
  if (fact.tags.includes('convention')) {
    const index = root(writer);
    index.conventions = trieRemove(writer.batch, index.conventions, key, key);
  }
  updateTask(writer, fact.sourceTaskId, fact.relation === 'summary', (doc, batch) => {
    doc.facts = withoutItem(batch, doc.facts, key);
    doc.summaries = withSummary(batch, doc.summaries, key, undefined);
  });
};

/** Notes that a task asserted a file fact of the pair `pairKey`. */
export const indexFileAssertion = (writer: IndexWriter, taskId: string, pairKey: string): void => {
  const known = trieGet(writer.index.tasks, keyHash(taskId), taskId);
  if (known !== undefined && known.touched.includes(pairKey)) return;
  updateTask(writer, taskId, false, (doc, batch) => {
    doc.touched = withItem(batch, doc.touched, pairKey);
  });
};

/** Notes that a task no longer asserts any file fact of the pair `pairKey` (compaction removed it). */
export const unindexFileAssertion = (writer: IndexWriter, taskId: string, pairKey: string): void => {
  const known = trieGet(writer.index.tasks, keyHash(taskId), taskId);
  if (known === undefined || !known.touched.includes(pairKey)) return;
  updateTask(writer, taskId, false, (doc, batch) => {
    doc.touched = withoutItem(batch, doc.touched, pairKey);
  });
};

/** Records a task's prompt; an older prompt than the recorded one is ignored. */
export const indexTaskPrompt = (writer: IndexWriter, taskId: string, prompt: string, at: number): void => {
  updateTask(writer, taskId, true, (doc) => {
    if (doc.promptAt !== undefined && at < doc.promptAt) return;
    doc.prompt = prompt;
    doc.promptAt = at;
  });
};
