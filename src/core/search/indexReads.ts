/**
 * Reads of the index: valid facts by id and in the order they became valid, their documents,
 * and the recorded files and prompts.
 */
import * as PMap from '../../persistent/persistentMap.js';
import { forEachAt, getAt } from '../../persistent/persistentVector.js';
import type { SessionFact } from '../fact.js';
import { bySubjectThenRelation, type RecordedFile, type RecordedPrompt, type SearchIndex } from './searchIndex.js';

/**
 * The document a fact record was last found at, by record: a hint, checked against the index
 * it is used with (a document is never numbered again, and an id has at most one document at
 * a time), so that reading a pair's valid facts mostly skips the id map (at 100,000 facts, a
 * lookup in it is a walk of several nodes far apart in memory). A query's scratch keeps one.
 */
export type DocumentHints = WeakMap<object, number>;

/** The document of the valid fact of this record's id, or -1 when the index holds none (remembered in `hints`). */
export const indexedDocument = (index: SearchIndex, record: { readonly id: string }, hints: DocumentHints): number => {
  const hint = hints.get(record);
  if (hint !== undefined && getAt(index.docs, hint)?.id === record.id) return hint;
  const doc = PMap.get(index.ids, record.id);
  if (doc === undefined || getAt(index.docs, doc) === undefined) return -1;
  hints.set(record, doc);
  return doc;
};

/** The valid fact with this id, if any. */
export const selectIndexedFact = (index: SearchIndex, id: string): SessionFact | undefined => {
  const doc = PMap.get(index.ids, id);
  return doc === undefined ? undefined : getAt(index.docs, doc);
};

/** The number of valid facts. */
export const selectIndexedCount = (index: SearchIndex): number => PMap.size(index.ids);

/** Every valid fact, in the order they became valid. */
export const selectIndexedFacts = (index: SearchIndex): SessionFact[] => {
  const out: SessionFact[] = [];
  forEachAt(index.docs, (fact) => out.push(fact));
  return out;
};

/** The recorded files, by subject, relation, then task id. */
export const selectIndexedFiles = (index: SearchIndex): RecordedFile[] => {
  const records = PMap.values(index.files).sort(bySubjectThenRelation);
  return records.flatMap(({ subject, relation, tasks }) => tasks.map((taskId) => ({ taskId, subject, relation })));
};

/** The recorded task prompts, by task id. */
export const selectIndexedPrompts = (index: SearchIndex): RecordedPrompt[] => {
  const out: RecordedPrompt[] = [];
  PMap.forEach(index.tasks, (doc, taskId) => {
    if (doc.promptAt !== undefined) out.push({ taskId, prompt: doc.prompt, at: doc.promptAt });
  });
  return out.sort((a, b) => (a.taskId < b.taskId ? -1 : a.taskId > b.taskId ? 1 : 0));
};
