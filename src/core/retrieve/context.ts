/**
 * The context table of a query: how well the prompts and summaries of the best-matching tasks
 * match it, lent to those tasks' facts and, summed over the tasks that changed each, to files.
 */
import * as PMap from '../../persistent/persistentMap.js';
import { getAt, type PersistentVector } from '../../persistent/persistentVector.js';
import { isFileFact, type SessionFact } from '../fact.js';
import { listChunks } from '../search/postingViews.js';
import { postingWeightOf } from '../search/postings.js';
import { markYoungTasks, unmarkYoungTasks } from '../search/prompted.js';
import { postingWeight } from '../search/weights.js';
import { type FactStore, pairKey } from '../store/state.js';
import type { Leaders } from './leaders.js';
import type { QueryPlan } from './rank.js';
import type { ContextScratch, RetrievalScratch } from './scratch.js';

/**
 * Context scores for one query: per task (its prompt and summary, shared out over the task's
 * valid facts; an old task's times `contextOld`), for the `contextTasks` best-matching tasks,
 * and per file pair (the sum over those tasks that asserted a fact about the file, each shared
 * out over the files it changed, by their number to the power `contextShare`: a file is
 * described by all the work done on it, and a task that changed twenty files lends each of
 * them less than its whole score).
 */
export interface ContextTable {
  readonly byTask: ReadonlyMap<string, number>;
  readonly byPair: ReadonlyMap<string, number>;
}

/**
 * The `limit` entries of a score map with the highest scores (ties: the smaller key), as a map
 * in that order; the map itself when it holds no more. `leaders` is the scratch it ranks them in.
 */
export const bestEntries = (scores: Map<string, number>, limit: number, leaders: Leaders): Map<string, number> => {
  if (scores.size <= limit) return scores;
  leaders.start(Math.max(0, Math.floor(limit)));
  scores.forEach((score, key) => leaders.offer(score, key));
  return new Map(leaders.take());
};

/**
 * How many file pairs a query's context reaches at most: the best-scored ones. A task that
 * changed hundreds of files lends each of them a share too small to rank it, and describing
 * them all would cost more than the rest of the query.
 */
export const CONTEXT_PAIRS = 512;

/**
 * Adds one run of a context term's postings to the sums, appending each task it reaches first
 * to `reached` after the `count` reached before; returns the new count.
 */
const addContextPostings = (scratch: ContextScratch, list: ArrayLike<number>, idf: number, count: number): number => {
  const { sums, reached } = scratch;
  let at = count;
  for (let i = 0; i < list.length; i += 2) {
    const num = list[i]!;
    const sum = sums[num]!;
    if (sum === 0) reached[at++] = num;
    sums[num] = sum + idf * postingWeight(postingWeightOf(list[i + 1]!));
  }
  return at;
};

/**
 * The `limit` best of the `count` tasks reached (score: the sum times `weight`, and times `old`
 * for an old task when `tellsOld`, above 0; ties to the smaller id), in order. A task's id is
 * read only when its score may enter.
 */
const bestTasks = (
  scratch: ContextScratch,
  taskIds: PersistentVector<string>,
  count: number,
  weight: number,
  old: number,
  tellsOld: boolean,
  limit: number,
): Array<[string, number]> => {
  const { sums, reached, young, taskLeaders } = scratch;
  taskLeaders.start(limit);
  for (let t = 0; t < count; t += 1) {
    const num = reached[t]!;
    const score = tellsOld && young[num] === 0 ? sums[num]! * weight * old : sums[num]! * weight;
    if (score > 0 && !taskLeaders.refuses(score)) taskLeaders.offer(score, getAt(taskIds, num)!);
  }
  return taskLeaders.take();
};

/**
 * The context table of a query. A task's score is its BM25 against the query, summed in
 * query-term order, then weighted; tasks are summed into file pairs in id order.
 */
export const contextTable = (
  store: FactStore,
  plan: QueryPlan,
  { context: scratch, memo }: RetrievalScratch,
): ContextTable => {
  const { index } = store;
  const limit = plan.ranking.contextTasks;
  const byTask = new Map<string, number>();
  const byPair = new Map<string, number>();
  if (plan.contextTerms.length === 0 || limit < 1) return { byTask, byPair };
  if (scratch.sums.length < index.nextTask)
    scratch.sums = new Float64Array(Math.max(index.nextTask, 2 * scratch.sums.length));
  if (scratch.young.length < index.nextTask)
    scratch.young = new Uint8Array(Math.max(index.nextTask, 2 * scratch.young.length));
  const old = plan.ranking.contextOld;
  // No task is old before OLD_TASK_AFTER tasks have a prompt (see prompted.ts).
  const tellsOld = old !== 1 && markYoungTasks(index, scratch.young);
  let count = 0;
  let ranked: Array<[string, number]>;
  try {
    for (const term of plan.contextTerms)
      if (term.postings !== undefined)
        for (const list of listChunks(term.postings, memo.views)) {
          // A posting reaches at most one task not reached before (its sum is above 0 from then on).
          const most = count + list.length / 2;
          if (scratch.reached.length < most) {
            const grown = new Int32Array(Math.max(most, 2 * scratch.reached.length));
            grown.set(scratch.reached.subarray(0, count));
            scratch.reached = grown;
          }
          count = addContextPostings(scratch, list, term.idf, count);
        }
    ranked = bestTasks(
      scratch,
      index.taskIds,
      count,
      plan.ranking.contextWeight,
      old,
      tellsOld,
      Math.min(Math.floor(limit), count),
    );
  } finally {
    // The sums and marks are all 0 between queries, whatever a malformed index throws.
    for (let t = 0; t < count; t += 1) scratch.sums[scratch.reached[t]!] = 0;
    if (tellsOld) unmarkYoungTasks(index, scratch.young);
  }
  ranked.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const { touchedPairs } = scratch;
  for (const [taskId, score] of ranked) {
    const task = PMap.get(index.tasks, taskId);
    byTask.set(taskId, score / Math.max(1, task === undefined ? 0 : PMap.size(task.facts)));
    if (task === undefined) continue;
    const share = score / Math.max(1, PMap.size(task.touched)) ** plan.ranking.contextShare;
    for (let i = 0, count = PMap.keysInto(task.touched, touchedPairs); i < count; i += 1) {
      const pair = touchedPairs[i]!;
      byPair.set(pair, (byPair.get(pair) ?? 0) + share);
    }
  }
  return { byTask, byPair: bestEntries(byPair, CONTEXT_PAIRS, scratch.pairLeaders) };
};

/** The context score of a fact: its pair's, for a file fact, else its task's. */
export const factContext = (table: ContextTable, fact: SessionFact): number =>
  (isFileFact(fact) ? table.byPair.get(pairKey(fact.subject, fact.relation)) : table.byTask.get(fact.sourceTaskId)) ??
  0;
