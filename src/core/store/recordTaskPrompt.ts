import { indexTaskPrompt } from '../search/indexWrites.js';
import { asOneRun } from '../../persistent/owner.js';
import { isWithinYears, plainTime } from '../../base/time.js';
import { spelledTaskId, taskIdSecretProblem } from '../fact.js';
import { type FactStore, withIndex } from './state.js';
import { checkedFactStore, handedBack } from './storeShape.js';

/**
 * Records the prompt a task was given, so its facts can be found by the words of the task
 * that produced them. The task id is read as a fact's `sourceTaskId` is (`spelledTaskId`), so
 * the prompt reaches the facts of the task it names. The latest prompt of a task wins; an older
 * one, or the same text again, returns the same store, as does a blank task id (invisible
 * characters only, U+200B, too) or one holding a secret, which no fact's may hold.
 */
export const recordTaskPrompt = (store: FactStore, taskId: string, prompt: string, at: number): FactStore =>
  handedBack(store, recordChecked(checkedFactStore(store), taskId, prompt, at));

/** `recordTaskPrompt` on a store already checked. */
const recordChecked = (store: FactStore, taskId: string, prompt: string, at: number): FactStore => {
  if (typeof taskId !== 'string' || typeof prompt !== 'string') return store;
  const task = spelledTaskId(taskId);
  if (task === '' || taskIdSecretProblem('task id', task) !== undefined) return store;
  if (typeof at !== 'number' || !isWithinYears(at)) return store;
  const index = indexTaskPrompt(store.index, task, prompt, plainTime(at));
  if (index === store.index) return store;
  return asOneRun(() => withIndex(store, index));
};
