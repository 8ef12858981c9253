/**
 * The inverted index that lives in the store, so a query touches only the postings of its
 * terms. It is plain data, maintained by the same reducers as the records, and always equal
 * to the index rebuilt from the valid facts and recorded task prompts.
 *
 * - `terms`: term -> postings over the valid facts: the BM25 term weight of the fact's fields,
 *   subject weighted 3, object 1, relation 0.5, saturated with k1 = 1.2. Facts are short
 *   triples of similar length, so there is no length normalization (BM25 with b = 0).
 * - `tasks`: per task, the context a fact inherits from the task that produced it (the task's
 *   recorded prompt and its summary), the keys of the task's valid facts and the file pairs
 *   it asserted (so a file is found by the words of every task that changed it).
 * - `taskTerms`: term -> postings over task contexts, weighted the same way.
 * - `conventions`: the valid facts tagged `convention` (always eligible for retrieval).
 */
import type { SessionFact } from '../fact.js';
import { fnv1aHex } from '../hash.js';
import { textTerms } from '../terms.js';
import { type HexTrie, trieDelete, trieGet, trieIsEmpty, triePut } from './trie.js';

/** Postings of one term: how many entries hold it (`n`) and their weights by key (`p`). */
export interface TermPostings {
  readonly n: number;
  readonly p: HexTrie<number>;
}

/** What the store knows of a task beyond its facts. */
export interface TaskDoc {
  /** The task's latest recorded prompt ('' when none), and when (absent when none). */
  readonly prompt: string;
  readonly promptAt?: number;
  /** The objects of the task's valid `summary` facts, by record key. */
  readonly summaries: Readonly<Record<string, string>>;
  /** Keys of the task's valid facts. */
  readonly facts: Readonly<Record<string, true>>;
  /** Pair keys of the file facts the task ever asserted (a file's history lends it every modifying task's context). */
  readonly touched: Readonly<Record<string, true>>;
}

/** The store's search index. */
export interface SearchIndex {
  readonly terms: HexTrie<TermPostings>;
  readonly taskTerms: HexTrie<TermPostings>;
  /** Tasks whose context (prompt or summary) is not empty: the document count of `taskTerms`. */
  readonly contextCount: number;
  readonly tasks: HexTrie<TaskDoc>;
  readonly conventions: HexTrie<true>;
}

/** Field weights of a fact's terms. */
export const FIELD_WEIGHTS = { subject: 3, relation: 0.5, object: 1 } as const;
/** BM25 term-frequency saturation. */
export const BM25_K1 = 1.2;

/** An empty index. */
export const emptySearchIndex = (): SearchIndex => ({ terms: {}, taskTerms: {}, contextCount: 0, tasks: {}, conventions: {} });

/** The hash that places a term or task id in a trie. */
export const keyHash = (key: string): string => fnv1aHex(key);
/** Record keys start with the fact id, already a hex hash. */
const recordHash = (key: string): string => key;

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
export const factTermWeights = (fact: Pick<SessionFact, 'subject' | 'relation' | 'object'>): Map<string, number> => {
  const weights = new Map<string, number>();
  addWeighted(weights, fact.subject, FIELD_WEIGHTS.subject);
  addWeighted(weights, fact.relation, FIELD_WEIGHTS.relation);
  addWeighted(weights, fact.object, FIELD_WEIGHTS.object);
  return saturateAll(weights);
};

/** The text a task lends its facts as context: its prompt and summaries (in record-key order). */
export const taskContextText = (doc: Pick<TaskDoc, 'prompt' | 'summaries'>): string =>
  [doc.prompt, ...Object.keys(doc.summaries).sort().map((key) => doc.summaries[key]!)].filter((text) => text !== '').join('\n');

/** The BM25 weight of each term of a task's context. */
export const contextTermWeights = (doc: Pick<TaskDoc, 'prompt' | 'summaries'>): Map<string, number> => {
  const weights = new Map<string, number>();
  addWeighted(weights, taskContextText(doc), 1);
  return saturateAll(weights);
};

/** The record key of a fact (duplicated from state.ts to keep this module free of cycles). */
const keyOf = (fact: Pick<SessionFact, 'id' | 'validFrom'>): string => `${fact.id}@${fact.validFrom}`;

type Draft<T> = { -readonly [K in keyof T]: T[K] };

const postTerm = (
  terms: HexTrie<TermPostings>,
  term: string,
  hash: string,
  key: string,
  weight: number,
  hashOf: (key: string) => string,
): void => {
  let entry = trieGet(terms, keyHash(term), term) as Draft<TermPostings> | undefined;
  if (entry === undefined) {
    triePut(terms, keyHash(term), term, { n: 0, p: {} }, keyHash);
    entry = trieGet(terms, keyHash(term), term) as Draft<TermPostings>;
  }
  if (triePut(entry.p, hash, key, weight, hashOf)) entry.n += 1;
};

const unpostTerm = (terms: HexTrie<TermPostings>, term: string, hash: string, key: string): void => {
  const entry = trieGet(terms, keyHash(term), term) as Draft<TermPostings> | undefined;
  if (entry === undefined || !trieDelete(entry.p, hash, key)) return;
  entry.n -= 1;
  if (entry.n <= 0 || trieIsEmpty(entry.p)) trieDelete(terms, keyHash(term), term);
};

const emptyTaskDoc = (): TaskDoc => ({ prompt: '', summaries: {}, facts: {}, touched: {} });

const isUnused = (doc: TaskDoc): boolean =>
  doc.promptAt === undefined &&
  Object.keys(doc.summaries).length === 0 &&
  Object.keys(doc.facts).length === 0 &&
  Object.keys(doc.touched).length === 0;

/** The doc of a task inside a draft index, created when missing. */
const draftTaskDoc = (index: Draft<SearchIndex>, taskId: string): Draft<TaskDoc> => {
  const existing = trieGet(index.tasks, keyHash(taskId), taskId);
  if (existing !== undefined) return existing as Draft<TaskDoc>;
  triePut(index.tasks, keyHash(taskId), taskId, emptyTaskDoc(), keyHash);
  return trieGet(index.tasks, keyHash(taskId), taskId) as Draft<TaskDoc>;
};

/** Re-posts a task's context after `change` altered its prompt or summary. */
const updateTaskContext = (index: Draft<SearchIndex>, taskId: string, change: (doc: Draft<TaskDoc>) => void): void => {
  const doc = draftTaskDoc(index, taskId);
  const before = { prompt: doc.prompt, summaries: { ...doc.summaries } };
  change(doc);
  if (taskContextText(before) === taskContextText(doc)) return;
  const hash = keyHash(taskId);
  for (const term of contextTermWeights(before).keys()) unpostTerm(index.taskTerms, term, hash, taskId);
  for (const [term, weight] of contextTermWeights(doc)) postTerm(index.taskTerms, term, hash, taskId, weight, keyHash);
  const wasCounted = taskContextText(before) !== '';
  const isCounted = taskContextText(doc) !== '';
  index.contextCount += Number(isCounted) - Number(wasCounted);
};

/** Adds a newly valid fact to a draft index. */
export const indexFact = (index: Draft<SearchIndex>, fact: SessionFact): void => {
  const key = keyOf(fact);
  for (const [term, weight] of factTermWeights(fact)) postTerm(index.terms, term, fact.id, key, weight, recordHash);
  if (fact.tags.includes('convention')) triePut(index.conventions, fact.id, key, true, recordHash);
  (draftTaskDoc(index, fact.sourceTaskId).facts as Record<string, true>)[key] = true;
  if (fact.relation === 'summary')
    updateTaskContext(index, fact.sourceTaskId, (doc) => {
      (doc.summaries as Record<string, string>)[key] = fact.object;
    });
};

/** Removes a fact that stopped being valid from a draft index. */
export const unindexFact = (index: Draft<SearchIndex>, fact: SessionFact): void => {
  const key = keyOf(fact);
  for (const term of factTermWeights(fact).keys()) unpostTerm(index.terms, term, fact.id, key);
  if (fact.tags.includes('convention')) trieDelete(index.conventions, fact.id, key);
  const doc = draftTaskDoc(index, fact.sourceTaskId);
  delete (doc.facts as Record<string, true>)[key];
  if (fact.relation === 'summary')
    updateTaskContext(index, fact.sourceTaskId, (draft) => {
      delete (draft.summaries as Record<string, string>)[key];
    });
  if (isUnused(doc)) trieDelete(index.tasks, keyHash(fact.sourceTaskId), fact.sourceTaskId);
};

/** Notes in a draft index that a task asserted a file fact of the pair `pairKey`. */
export const indexFileAssertion = (index: Draft<SearchIndex>, taskId: string, pairKey: string): void => {
  const doc = draftTaskDoc(index, taskId);
  if (!(pairKey in doc.touched)) (doc.touched as Record<string, true>)[pairKey] = true;
};

/** Records a task's prompt in a draft index; an older prompt than the recorded one is ignored. */
export const indexTaskPrompt = (index: Draft<SearchIndex>, taskId: string, prompt: string, at: number): void => {
  updateTaskContext(index, taskId, (doc) => {
    if (doc.promptAt !== undefined && at < doc.promptAt) return;
    doc.prompt = prompt;
    doc.promptAt = at;
  });
};
