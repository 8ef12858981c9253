/**
 * Reads of the index: valid facts by id and in the order they became valid, and the recorded
 * files and prompts.
 */
import * as PMap from '../../persistent/persistentMap.js';
import { forEachAt, getAt } from '../../persistent/persistentVector.js';
import type { SessionFact } from '../fact.js';
import { bySubjectThenRelation, type RecordedFile, type RecordedPrompt, type SearchIndex } from './searchIndex.js';

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
  return records.flatMap(({ subject, relation, tasks }) =>
    [...tasks].sort().map((taskId) => ({ taskId, subject, relation })),
  );
};

/** The recorded task prompts, by task id. */
export const selectIndexedPrompts = (index: SearchIndex): RecordedPrompt[] => {
  const out: RecordedPrompt[] = [];
  PMap.forEach(index.tasks, (doc, taskId) => {
    if (doc.promptAt !== undefined) out.push({ taskId, prompt: doc.prompt, at: doc.promptAt });
  });
  return out.sort((a, b) => (a.taskId < b.taskId ? -1 : a.taskId > b.taskId ? 1 : 0));
};
