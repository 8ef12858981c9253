/**
 * The index's list of the tasks with the latest recorded prompts (`SearchIndex.prompted`), kept
 * in order as prompts are recorded and task records forgotten, so that a query tells an old task
 * from the others with one comparison: a task is old when OLD_TASK_AFTER tasks have had a prompt
 * recorded after its own. Prompt times are what a saved state and a snapshot keep of every task
 * record, so an index rebuilt from either tells the same tasks old.
 */
import { fresh, own, type Writable } from '../../persistent/owner.js';
import * as PMap from '../../persistent/persistentMap.js';
import { isNewer, placeIn } from './recent.js';
import { OLD_TASK_AFTER, type SearchIndex, type TaskDoc } from './searchIndex.js';

/** The list built from every task's prompt time: the OLD_TASK_AFTER latest, in order. */
const promptedOf = (index: SearchIndex): Array<string | number> => {
  const all: Array<[string, number]> = [];
  PMap.forEach(index.tasks, (doc, id) => {
    if (doc.promptAt !== undefined) all.push([id, doc.promptAt]);
  });
  all.sort(([a, x], [b, y]) => (isNewer(a, x, b, y) ? -1 : 1));
  return all.slice(0, OLD_TASK_AFTER).flat();
};

/**
 * The prompted list with `taskId`'s prompt time set to `time` (undefined: the task has no
 * recorded prompt any more). The list is always the OLD_TASK_AFTER latest: a task that leaves
 * it, or moves to its end while others may be newer, has it built again from every task, which
 * only forgetting a task among the latest does (records are forgotten oldest first).
 */
export const withPrompted = (index: Writable<SearchIndex>, taskId: string, time: number | undefined): void => {
  const list = index.prompted;
  const full = list.length >= 2 * OLD_TASK_AFTER;
  const at = list.indexOf(taskId);
  if (at < 0) {
    if (time === undefined) return;
    const place = placeIn(list, taskId, time);
    if (place === list.length && full) return;
    const next = own(list) as Array<string | number>;
    next.splice(place, 0, taskId, time);
    if (next.length > 2 * OLD_TASK_AFTER) next.length = 2 * OLD_TASK_AFTER;
    index.prompted = next;
    return;
  }
  const next = own(list) as Array<string | number>;
  next.splice(at, 2);
  const place = time === undefined ? next.length : placeIn(next, taskId, time);
  if (full && place === next.length) {
    index.prompted = fresh(promptedOf(index));
    return;
  }
  if (time !== undefined) next.splice(place, 0, taskId, time);
  index.prompted = next;
};

/** True when OLD_TASK_AFTER tasks have had a prompt recorded after the task's own (`doc`, of `taskId`). */
export const isOldTask = (index: SearchIndex, taskId: string, doc: TaskDoc): boolean => {
  const list = index.prompted;
  const end = list.length;
  return (
    doc.promptAt !== undefined &&
    end >= 2 * OLD_TASK_AFTER &&
    isNewer(list[end - 2] as string, list[end - 1] as number, taskId, doc.promptAt)
  );
};
