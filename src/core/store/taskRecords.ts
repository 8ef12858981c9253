/**
 * Retention of task records. A task's record (its prompt, the files it changed) outlives its
 * facts, so a file keeps the context of the tasks that changed it and co-change stays known after
 * compaction. Kept for every task, records grow with the session, and every query reads the
 * prompts of all of them: a session of tens of thousands of tasks grew quadratic. So a store
 * keeps the records of TASK_RECORDS tasks that hold nothing else, the most recent by their
 * prompt's time, besides those of every task that still holds a valid fact, an open review item
 * or an assertion in a pair log (what the store's own content would bring back).
 */
import * as PMap from '../../persistent/persistentMap.js';
import { forgetTasks } from '../search/indexWrites.js';
import type { TaskDoc } from '../search/searchIndex.js';
import { asOneRun } from '../../persistent/owner.js';
import { type FactStore, withIndex } from './state.js';
import { holdsFileFactOf } from './write.js';

/** Records of tasks that hold nothing else a store keeps: the most recent by their prompt's time. */
export const TASK_RECORDS = 1_024;

/**
 * True when nothing in the store but the record itself holds the task: no valid fact, no open
 * review item, and no file fact of it left in the logs of the files it changed.
 */
const holdsNothingElse = (store: FactStore, taskId: string, doc: TaskDoc): boolean => {
  if (PMap.size(doc.facts) > 0 || PMap.size(doc.raised) > 0) return false;
  let asserted = false;
  PMap.forEach(doc.touched, (_true, key) => {
    asserted ||= holdsFileFactOf(PMap.get(store.pairs, key), taskId);
  });
  return !asserted;
};

/**
 * How many new tasks apart `pruneTaskRecords` walks the tasks, at `tasks` tasks: an eighth of
 * `keep`, so the idle records stay between `keep` and `keep` + `keep` / 8 and a query sums the
 * context of few more tasks than it must; an eighth of the largest power of two up to `tasks`
 * when that is more, so a session whose tasks all still hold something (a store under its bound
 * keeps its history) walks them about eight times each time their number doubles.
 */
export const pruneStep = (tasks: number, keep: number): number =>
  Math.max(1, Math.floor(keep / 8), Math.floor(2 ** Math.floor(Math.log2(Math.max(1, tasks))) / 8));

/**
 * The store keeping the records of at most `keep` (default TASK_RECORDS) tasks that hold nothing
 * else (see the module's comment), the most recent by their prompt's time (then id). It walks
 * every task only when the store holds more than `keep` + `pruneStep` tasks and their number is
 * a multiple of `pruneStep`, else it returns the same store.
 */
export const pruneTaskRecords = (store: FactStore, keep: number = TASK_RECORDS): FactStore => {
  const { index } = store;
  const tasks = PMap.size(index.tasks);
  const step = pruneStep(tasks, keep);
  if (tasks <= keep + step || tasks % step !== 0) return store;
  const idle: Array<readonly [string, number]> = [];
  PMap.forEach(index.tasks, (doc, taskId) => {
    if (holdsNothingElse(store, taskId, doc)) idle.push([taskId, doc.promptAt ?? -Infinity]);
  });
  if (idle.length <= keep) return store;
  idle.sort(([a, x], [b, y]) => (x !== y ? (x > y ? -1 : 1) : a < b ? -1 : a > b ? 1 : 0));
  const forgotten = idle.slice(keep).map(([taskId]) => taskId);
  return asOneRun(() => withIndex(store, forgetTasks(store.index, forgotten)));
};
