/**
 * The index's list of the most recent tasks (`SearchIndex.recent`), kept in order as tasks'
 * latest valid facts change, so that recency reads a few tasks instead of every task.
 */
import { own, type Writable } from '../../persistent/owner.js';
import * as PMap from '../../persistent/persistentMap.js';
import { lastFactTime, RECENT_KEPT, RECENT_TASKS, type SearchIndex } from './searchIndex.js';

/** True when task `a` at time `x` is more recent than task `b` at time `y` (ties: the smaller id). */
export const isNewer = (a: string, x: number, b: string, y: number): boolean => x > y || (x === y && a < b);

/** Where `taskId` at `time` goes in `list` (after every more recent task). */
const placeIn = (list: ReadonlyArray<string | number>, taskId: string, time: number): number => {
  let place = 0;
  while (place < list.length && isNewer(list[place] as string, list[place + 1] as number, taskId, time)) place += 2;
  return place;
};

/**
 * The recent list with `taskId` at `time` put in order, or taken out (time -Infinity).
 *
 * The list keeps up to RECENT_KEPT tasks, in order, and every task with a valid fact outside it
 * is older than its last; while it holds fewer than RECENT_TASKS, it holds every such task. Its
 * first RECENT_TASKS are then exactly the most recent tasks, and a task that becomes older (a
 * compaction removes a recent task's outcome on every dispatch) only moves down the list or
 * leaves it: the walk over every task that refills it is needed once RECENT_TASKS tasks have
 * left, not on every change.
 */
export const withRecent = (index: Writable<SearchIndex>, taskId: string, time: number): void => {
  const list = index.recent;
  const at = list.indexOf(taskId);
  if (at < 0) {
    // A task new to the list goes in where its time puts it; past the last, only while the list
    // holds every task (under RECENT_TASKS). One that has no valid fact left changes nothing.
    if (time === -Infinity) return;
    const place = placeIn(list, taskId, time);
    if (place === list.length && list.length >= 2 * RECENT_TASKS) return;
    const next = own(list) as Array<string | number>;
    next.splice(place, 0, taskId, time);
    if (next.length > 2 * RECENT_KEPT) next.length = 2 * RECENT_KEPT;
    index.recent = next;
    return;
  }
  // The most recent task's facts becoming later (a dispatch's facts arrive task by task): it stays
  // first, and a list that long needs no refill. The same list the walk below makes, without it.
  if (at === 0 && time >= (list[1] as number) && list.length >= 2 * RECENT_TASKS) {
    const next = own(list) as Array<string | number>;
    next[1] = time;
    index.recent = next;
    return;
  }
  // A list shorter than RECENT_TASKS holds every task with a valid fact, and goes on holding them
  // here without a walk over every task (a store of a small bound, whose tasks with a valid fact
  // stay fewer, would otherwise walk every task on every change).
  const holdsAll = list.length < 2 * RECENT_TASKS;
  // The list is changed in place when the run owns it, else a copy is.
  const next = own(list) as Array<string | number>;
  next.splice(at, 2);
  if (time !== -Infinity) {
    const place = placeIn(next, taskId, time);
    // One that was in a longer list goes past the last only by the refill below, if the list is then short.
    if (place < next.length || holdsAll) next.splice(place, 0, taskId, time);
    next.length = Math.min(next.length, 2 * RECENT_KEPT);
  }
  if (next.length < 2 * RECENT_TASKS && !holdsAll) {
    // Fewer than RECENT_TASKS left: refill from every task (outside the list, older than its last).
    const outside: Array<[string, number]> = [];
    PMap.forEach(index.tasks, (doc, id) => {
      const latest = lastFactTime(doc);
      if (latest !== -Infinity && !next.includes(id)) outside.push([id, latest]);
    });
    outside.sort(([a, x], [b, y]) => (isNewer(a, x, b, y) ? -1 : 1));
    for (const [id, latest] of outside.slice(0, RECENT_KEPT - next.length / 2)) next.push(id, latest);
  }
  // A copy that came out the same is dropped: the list keeps its identity.
  if (next !== list && (next.length !== list.length || next.some((value, i) => value !== list[i]))) index.recent = next;
};
