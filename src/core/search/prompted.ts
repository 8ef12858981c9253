/**
 * The index's list of the tasks with the latest recorded prompts (`SearchIndex.prompted`), kept
 * in order as prompts are recorded and task records forgotten, so that a query tells an old task
 * from the others without a lookup: a task is old when OLD_TASK_AFTER tasks have had a prompt
 * recorded after its own. The list holds task numbers, which are the index's own: an index
 * rebuilt from a saved state numbers its tasks anew and builds the list from the same prompt
 * times (what a saved state and a snapshot keep of every task record), so it tells the same
 * tasks old.
 */
import { fresh, own, type Writable } from '../../persistent/owner.js';
import * as PMap from '../../persistent/persistentMap.js';
import { getAt } from '../../persistent/persistentVector.js';
import { isNewer } from './recent.js';
import { OLD_TASK_AFTER, type SearchIndex } from './searchIndex.js';

/** The list built from every task's prompt time: the OLD_TASK_AFTER latest, in order. */
const promptedOf = (index: SearchIndex): number[] => {
  const all: Array<[string, number, number]> = [];
  PMap.forEach(index.tasks, (doc, id) => {
    if (doc.promptAt !== undefined) all.push([id, doc.promptAt, doc.num]);
  });
  all.sort(([a, x], [b, y]) => (isNewer(a, x, b, y) ? -1 : 1));
  return all.slice(0, OLD_TASK_AFTER).flatMap(([, time, num]) => [num, time]);
};

/** True when the task numbered at `at` in the list is more recent than `taskId` at `time`. */
const isListedNewer = (index: SearchIndex, list: ReadonlyArray<number>, at: number, taskId: string, time: number) =>
  isNewer(getAt(index.taskIds, list[at]!)!, list[at + 1]!, taskId, time);

/**
 * The prompted list with the prompt time of task `taskId` (numbered `num`) set to `time`
 * (undefined: the task has no recorded prompt any more). The list is always the
 * OLD_TASK_AFTER latest: a task that leaves it, or moves to its end while others may be newer,
 * has it built again from every task, which only forgetting a task among the latest does
 * (records are forgotten oldest first).
 */
export const withPrompted = (
  index: Writable<SearchIndex>,
  taskId: string,
  num: number,
  time: number | undefined,
): void => {
  const list = index.prompted;
  const full = list.length >= 2 * OLD_TASK_AFTER;
  let at = 0;
  while (at < list.length && list[at] !== num) at += 2;
  const listed = at < list.length;
  if (time === undefined && !listed) return;
  // The list without the task (the run's own copy), or the list itself when it is not in it.
  const rest: ReadonlyArray<number> = listed ? own(list) : list;
  if (listed) (rest as number[]).splice(at, 2);
  let place = rest.length;
  if (time !== undefined) {
    place = 0;
    while (place < rest.length && isListedNewer(index, rest, place, taskId, time)) place += 2;
  }
  if (place === rest.length && full) {
    // Past the end of a full list: the task is not among the latest, and one that left it makes
    // room for a task outside, found among them all.
    if (listed) index.prompted = fresh(promptedOf(index));
    return;
  }
  const written = own(rest) as number[];
  if (time !== undefined) written.splice(place, 0, num, time);
  if (written.length > 2 * OLD_TASK_AFTER) written.length = 2 * OLD_TASK_AFTER;
  index.prompted = written;
};

/**
 * Marks in `young` (by task number, 1) the tasks of the prompted list and returns true, when
 * the list is full and so some task may be old; returns false and marks nothing otherwise.
 */
export const markYoungTasks = (index: SearchIndex, young: Uint8Array): boolean => {
  const list = index.prompted;
  if (list.length < 2 * OLD_TASK_AFTER) return false;
  for (let i = 0; i < list.length; i += 2) young[list[i]!] = 1;
  return true;
};

/** Clears the marks `markYoungTasks` made. */
export const unmarkYoungTasks = (index: SearchIndex, young: Uint8Array): void => {
  const list = index.prompted;
  for (let i = 0; i < list.length; i += 2) young[list[i]!] = 0;
};
