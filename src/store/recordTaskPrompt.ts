import { produce } from '../base/immer.js';
import { finishIndex, indexTaskPrompt, keyHash, writeIndex } from './searchIndex.js';
import type { FactStore } from './state.js';
import { type Batch, isTransient, trieGet } from './trie.js';

/**
 * Records the prompt a task was given, so its facts can be found by the words of the task
 * that produced them. The latest prompt of a task wins; an older one, or the same text again,
 * returns the same store.
 */
export const recordTaskPrompt = (store: FactStore, taskId: string, prompt: string, at: number): FactStore =>
  recordTaskPromptIn(store, taskId, prompt, at);

/** `recordTaskPrompt`, writing in `batch` when given (see `writePairChanges`). */
export const recordTaskPromptIn = (
  store: FactStore,
  taskId: string,
  prompt: string,
  at: number,
  batch?: Batch,
): FactStore => {
  if (typeof taskId !== 'string' || taskId.trim() === '' || typeof prompt !== 'string') return store;
  if (typeof at !== 'number' || !Number.isFinite(at)) return store;
  const doc = trieGet(store.index.tasks, keyHash(taskId), taskId);
  if (doc?.promptAt !== undefined && (prompt === doc.prompt || at < doc.promptAt)) return store;
  const writer = writeIndex(store.index, batch);
  indexTaskPrompt(writer, taskId, prompt, at);
  const index = finishIndex(writer);
  if (isTransient(writer.batch)) return { ...store, index };
  return produce(store, (draft) => {
    draft.index = index as typeof draft.index;
  });
};
