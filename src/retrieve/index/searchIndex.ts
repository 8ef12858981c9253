/**
 * The inverted index the store keeps, so a query touches only the postings of its terms. It is
 * plain data, brought up to date from the changes each reducer makes to the valid facts (see
 * `IndexChanges`), and always equal to the index rebuilt from the valid facts and the recorded
 * task prompts.
 *
 * - `facts`: the valid facts by id (no two valid records share an id).
 * - `terms`: term -> postings over the valid facts, by fact id: the BM25 weight of the term in
 *   the fact (see weights.ts).
 * - `tasks`: per task, the context a fact inherits from the task that produced it (the task's
 *   recorded prompt and its summary), the ids of the task's valid facts and the file pairs it
 *   asserted (so a file is found by the words of every task that changed it).
 * - `taskTerms`: term -> postings over the contexts of the tasks that still lend one (a task
 *   with a valid fact or an asserted file pair), weighted the same way.
 * - `conventions`: the valid facts tagged `convention` (always eligible for retrieval).
 */
import * as PMap from '../../base/persistentMap.js';
import type { SessionFact } from '../../fact.js';
import { contextTermWeights, factTermWeights, quantize } from './weights.js';

/** Postings of one term: stored weights by key (its size is the term's document frequency). */
export type TermPostings = PMap.PersistentMap<number>;

/** What the store knows of a task beyond its facts. */
export interface TaskDoc {
  /** The task's latest recorded prompt ('' when none), and when (absent when none). */
  readonly prompt: string;
  readonly promptAt?: number;
  /** The task's valid `summary` facts: fact id, then the fact's object, in id order. */
  readonly summaries: ReadonlyArray<string>;
  /** Ids of the task's valid facts (a map: one result may give a task 100,000 facts, each added in constant time). */
  readonly facts: PMap.PersistentMap<true>;
  /** Pair keys of the file facts the task ever asserted (a file's history lends it every modifying task's context). */
  readonly touched: PMap.PersistentMap<true>;
}

/** The store's search index. */
export interface SearchIndex {
  readonly facts: PMap.PersistentMap<SessionFact>;
  readonly terms: PMap.PersistentMap<TermPostings>;
  readonly taskTerms: PMap.PersistentMap<TermPostings>;
  /** Tasks lending a context that is not empty (see `lendsContext`): the document count of `taskTerms`. */
  readonly contextCount: number;
  readonly tasks: PMap.PersistentMap<TaskDoc>;
  readonly conventions: PMap.PersistentMap<true>;
}

/** What a reducer changed, as the index needs to hear it. */
export interface IndexChanges {
  /** Facts that stopped being valid (before those that became valid: an id may do both). */
  readonly invalid: ReadonlyArray<SessionFact>;
  /** Facts that became valid. */
  readonly valid: ReadonlyArray<SessionFact>;
  /** File pairs a task started asserting (task id, pair key). */
  readonly filesAsserted: ReadonlyArray<readonly [string, string]>;
  /** File pairs a task no longer asserts (compaction removed them). */
  readonly filesRetracted: ReadonlyArray<readonly [string, string]>;
}

/** An empty index. */
export const emptySearchIndex = (): SearchIndex => ({
  facts: PMap.empty,
  terms: PMap.empty,
  taskTerms: PMap.empty,
  contextCount: 0,
  tasks: PMap.empty,
  conventions: PMap.empty,
});

type Writable<T> = { -readonly [K in keyof T]: T[K] };

const NO_ITEMS: ReadonlyArray<string> = Object.freeze([]);
const EMPTY_TASK_DOC: TaskDoc = Object.freeze({
  prompt: '',
  summaries: NO_ITEMS,
  facts: PMap.empty,
  touched: PMap.empty,
});

const postTerm = (
  index: Writable<SearchIndex>,
  field: 'terms' | 'taskTerms',
  term: string,
  key: string,
  weight: number,
): void => {
  const postings = PMap.set(PMap.get(index[field], term) ?? PMap.empty, key, quantize(weight));
  index[field] = PMap.set(index[field], term, postings);
};

const unpostTerm = (index: Writable<SearchIndex>, field: 'terms' | 'taskTerms', term: string, key: string): void => {
  const existing = PMap.get(index[field], term);
  if (existing === undefined || !PMap.has(existing, key)) return;
  const postings = PMap.remove(existing, key);
  index[field] = PMap.size(postings) === 0 ? PMap.remove(index[field], term) : PMap.set(index[field], term, postings);
};

const isUnused = (doc: TaskDoc): boolean =>
  doc.promptAt === undefined &&
  doc.summaries.length === 0 &&
  PMap.size(doc.facts) === 0 &&
  PMap.size(doc.touched) === 0;

/**
 * The summaries with `key` holding `text` (`undefined`: removed), kept in key order: a new
 * frozen array of exactly its length (a task has one or two summaries).
 */
const withSummary = (list: ReadonlyArray<string>, key: string, text: string | undefined): ReadonlyArray<string> => {
  let at = 0;
  while (at < list.length && list[at]! < key) at += 2;
  const present = list[at] === key;
  if (text === undefined)
    return !present ? list : list.length === 2 ? NO_ITEMS : Object.freeze(list.slice(0, at).concat(list.slice(at + 2)));
  if (present && list[at + 1] === text) return list;
  return Object.freeze(list.slice(0, at).concat([key, text], list.slice(present ? at + 2 : at)));
};

/** The text a task lends its facts as context: its prompt and summaries (in fact-id order). */
const taskContextText = (doc: Pick<TaskDoc, 'prompt' | 'summaries'>): string =>
  [doc.prompt, ...doc.summaries.filter((_, i) => i % 2 === 1)].filter((text) => text !== '').join('\n');

/**
 * A task lends its context only while it has something to lend it to: a valid fact, or a file
 * pair it asserted. Tasks whose facts compaction has removed leave the context collection, so
 * in a long session the best-matching tasks are ones whose facts can still be found.
 */
const lendsContext = (doc: TaskDoc): boolean => PMap.size(doc.facts) > 0 || PMap.size(doc.touched) > 0;

/**
 * Changes a task's doc (created when missing, dropped when unused). When the change may touch
 * the context the task posts (its prompt or summaries, or whether it lends context at all),
 * re-posts the terms that come, go or change weight.
 */
const updateTask = (
  index: Writable<SearchIndex>,
  taskId: string,
  touchesText: boolean,
  change: (doc: Writable<TaskDoc>) => void,
): void => {
  const before = PMap.get(index.tasks, taskId) ?? EMPTY_TASK_DOC;
  // Read before changing: a doc this run created is changed in place.
  const lentBefore = lendsContext(before);
  const textBefore = touchesText ? taskContextText(before) : undefined;
  const doc = PMap.own(before);
  change(doc);
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
        if (!weightsAfter.has(term)) unpostTerm(index, 'taskTerms', term, taskId);
      for (const [term, weight] of weightsAfter) {
        const previous = weightsBefore.get(term);
        if (previous === undefined || quantize(previous) !== quantize(weight))
          postTerm(index, 'taskTerms', term, taskId, weight);
      }
      index.contextCount += Number(postedAfter !== '') - Number(postedBefore !== '');
    }
  }
  index.tasks = isUnused(doc) ? PMap.remove(index.tasks, taskId) : PMap.set(index.tasks, taskId, doc);
};

const addFact = (index: Writable<SearchIndex>, fact: SessionFact): void => {
  const key = fact.id;
  index.facts = PMap.set(index.facts, key, fact);
  for (const [term, weight] of factTermWeights(fact)) postTerm(index, 'terms', term, key, weight);
  if (fact.tags.includes('convention')) index.conventions = PMap.set(index.conventions, key, true);
  updateTask(index, fact.sourceTaskId, fact.relation === 'summary', (doc) => {
    doc.facts = PMap.set(doc.facts, key, true);
    if (fact.relation === 'summary') doc.summaries = withSummary(doc.summaries, key, fact.object);
  });
};

const removeFact = (index: Writable<SearchIndex>, fact: SessionFact): void => {
  const key = fact.id;
  index.facts = PMap.remove(index.facts, key);
  for (const term of factTermWeights(fact).keys()) unpostTerm(index, 'terms', term, key);
  if (fact.tags.includes('convention')) index.conventions = PMap.remove(index.conventions, key);
  updateTask(index, fact.sourceTaskId, fact.relation === 'summary', (doc) => {
    doc.facts = PMap.remove(doc.facts, key);
    doc.summaries = withSummary(doc.summaries, key, undefined);
  });
};

const assertFile = (index: Writable<SearchIndex>, taskId: string, pairKey: string): void => {
  const known = PMap.get(index.tasks, taskId);
  if (known !== undefined && PMap.has(known.touched, pairKey)) return;
  updateTask(index, taskId, false, (doc) => {
    doc.touched = PMap.set(doc.touched, pairKey, true);
  });
};

const retractFile = (index: Writable<SearchIndex>, taskId: string, pairKey: string): void => {
  const known = PMap.get(index.tasks, taskId);
  if (known === undefined || !PMap.has(known.touched, pairKey)) return;
  updateTask(index, taskId, false, (doc) => {
    doc.touched = PMap.remove(doc.touched, pairKey);
  });
};

/** The index with a reducer's changes applied (the same index when there are none). */
export const applyIndexChanges = (index: SearchIndex, changes: IndexChanges): SearchIndex => {
  const { invalid, valid, filesAsserted, filesRetracted } = changes;
  if (invalid.length + valid.length + filesAsserted.length + filesRetracted.length === 0) return index;
  return PMap.withMutations(index, (current) => {
    // A new root every time, even inside a run: a reducer tells a change by the index's identity.
    const next: Writable<SearchIndex> = { ...current };
    for (const fact of invalid) removeFact(next, fact);
    for (const fact of valid) addFact(next, fact);
    for (const [taskId, pairKey] of filesAsserted) assertFile(next, taskId, pairKey);
    for (const [taskId, pairKey] of filesRetracted) retractFile(next, taskId, pairKey);
    return next;
  });
};

/** Records a task's prompt (the latest wins; an older one than the recorded prompt, or the same text, changes nothing). */
export const indexTaskPrompt = (index: SearchIndex, taskId: string, prompt: string, at: number): SearchIndex => {
  const doc = PMap.get(index.tasks, taskId);
  if (doc?.promptAt !== undefined && (prompt === doc.prompt || at < doc.promptAt)) return index;
  return PMap.withMutations(index, (current) => {
    // A new root every time, even inside a run: a reducer tells a change by the index's identity.
    const next: Writable<SearchIndex> = { ...current };
    updateTask(next, taskId, true, (task) => {
      task.prompt = prompt;
      task.promptAt = at;
    });
    return next;
  });
};

/** The task's doc, if the index knows the task. */
export const selectTaskDoc = (index: SearchIndex, taskId: string): TaskDoc | undefined => PMap.get(index.tasks, taskId);

/** A task prompt as recorded in the index. */
export interface RecordedPrompt {
  readonly taskId: string;
  readonly prompt: string;
  readonly at: number;
}

/** The recorded task prompts, by task id. */
export const selectIndexedPrompts = (index: SearchIndex): RecordedPrompt[] => {
  const out: RecordedPrompt[] = [];
  PMap.forEach(index.tasks, (doc, taskId) => {
    if (doc.promptAt !== undefined) out.push({ taskId, prompt: doc.prompt, at: doc.promptAt });
  });
  return out.sort((a, b) => (a.taskId < b.taskId ? -1 : a.taskId > b.taskId ? 1 : 0));
};
