import { produce } from './immer.js';
import { finishIndex, indexTaskPrompt, keyHash, writeIndex } from './searchIndex.js';
import type { FactStore } from './state.js';
import { trieGet } from './trie.js';

/**
 * Records the prompt a task was given, so its facts can be found by the words of the task
 * that produced them. The latest prompt of a task wins; an older one, or the same text again,
 * returns the same store.
 */
export const recordTaskPrompt = (store: FactStore, taskId: string, prompt: string, at: number): FactStore => {
  if (typeof taskId !== 'string' || taskId.trim() === '' || typeof prompt !== 'string') return store;
  if (typeof at !== 'number' || !Number.isFinite(at)) return store;
  const doc = trieGet(store.index.tasks, keyHash(taskId), taskId);
  if (doc?.promptAt !== undefined && (prompt === doc.prompt || at < doc.promptAt)) return store;
  const writer = writeIndex(store.index);
  indexTaskPrompt(writer, taskId, prompt, at);
  return produce(store, (draft) => {
    draft.index = finishIndex(writer) as typeof draft.index;
  });
};
