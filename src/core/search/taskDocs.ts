/**
 * A task's doc in the index (`TaskDoc`): created when a task first appears, changed in place
 * within a write run, dropped once unused, and the context terms it posts kept in step with its
 * prompt and summaries.
 */
import { own, type Writable } from '../../persistent/owner.js';
import * as PMap from '../../persistent/persistentMap.js';
import { setAt } from '../../persistent/persistentVector.js';
import { sliceable } from '../../persistent/sliceable.js';
import { packPosting, postIn, unpostIn } from './postings.js';
import { withPrompted } from './prompted.js';
import { withRecent } from './recent.js';
import {
  EMPTY_TASK_DOC,
  lastFactTime,
  NO_ITEMS,
  NO_TIMES,
  PAIR_SEPARATOR,
  type SearchIndex,
  type TaskDoc,
} from './searchIndex.js';
import { contextTermWeights, quantize } from './weights.js';

const isUnused = (doc: TaskDoc): boolean =>
  doc.promptAt === undefined &&
  doc.summaries.length === 0 &&
  PMap.size(doc.facts) === 0 &&
  PMap.size(doc.touched) === 0 &&
  PMap.size(doc.raised) === 0;

/**
 * The summaries with `key` holding `text` (`undefined`: removed), kept in key order: a new
 * frozen array of exactly its length (a task has one or two summaries).
 */
export const withSummary = (
  list: ReadonlyArray<string>,
  key: string,
  text: string | undefined,
): ReadonlyArray<string> => {
  let at = 0;
  while (at < list.length && list[at]! < key) at += 2;
  const present = list[at] === key;
  if (text === undefined ? !present : present && list[at + 1] === text) return list;
  if (text === undefined && list.length === 2) return NO_ITEMS;
  // Copied only when it changes (see `sliceable`).
  const from = sliceable(list);
  return Object.freeze(
    text === undefined
      ? from.slice(0, at).concat(from.slice(at + 2))
      : from.slice(0, at).concat([key, text], from.slice(present ? at + 2 : at)),
  );
};

/** The times with one more (`by` 1) or one fewer (`by` -1) fact asserted at `at` (the same array, changed, when the run owns it). */
export const withTime = (times: ReadonlyArray<number>, at: number, by: 1 | -1): ReadonlyArray<number> => {
  let i = 0;
  while (i < times.length && times[i]! < at) i += 2;
  if (times[i] === at) {
    const count = times[i + 1]! + by;
    if (count <= 0 && times.length === 2) return NO_TIMES;
    const list = own(times) as number[];
    if (count > 0) list[i + 1] = count;
    else list.splice(i, 2);
    return list;
  }
  if (by < 0) return times;
  const list = own(times) as number[];
  list.splice(i, 0, at, 1);
  return list;
};

/** The texts a task lends its facts as context: its prompt and summaries (in fact-id order), none empty. */
const taskContextPieces = (doc: Pick<TaskDoc, 'prompt' | 'summaries'>): string[] =>
  [doc.prompt, ...doc.summaries.filter((_, i) => i % 2 === 1)].filter((text) => text !== '');

const NO_PIECES: ReadonlyArray<string> = Object.freeze([]);

/**
 * A task lends its context only while it has something to lend it to: a valid fact, or a file
 * pair it asserted that holds a valid file fact (`TaskDoc.live`). Tasks whose facts compaction
 * has removed, and whose files' facts it has removed too, leave the context collection, so in a
 * long session the best-matching tasks are ones whose facts can still be found, not tasks that
 * would lend their score to nothing.
 */
const lendsContext = (doc: TaskDoc): boolean => PMap.size(doc.facts) > 0 || doc.live > 0;

/**
 * Changes a task's doc (created when missing, dropped when unused). When the change may touch
 * the context the task posts (its prompt or summaries, or whether it lends context at all),
 * re-posts the terms that come, go or change weight.
 */
export const updateTask = (
  index: Writable<SearchIndex>,
  taskId: string,
  touchesText: boolean,
  change: (doc: Writable<TaskDoc>) => void,
): void => {
  const known = PMap.get(index.tasks, taskId);
  const before = known ?? EMPTY_TASK_DOC;
  // Read before changing: a doc this run created is changed in place.
  const lentBefore = lendsContext(before);
  const timeBefore = lastFactTime(before);
  const promptBefore = before.promptAt;
  const piecesBefore = touchesText ? taskContextPieces(before) : undefined;
  const doc = own(before);
  if (known === undefined) {
    doc.num = index.nextTask;
    index.nextTask += 1;
    index.taskIds = setAt(index.taskIds, doc.num, taskId);
  }
  change(doc);
  const lentAfter = lendsContext(doc);
  if (touchesText || lentBefore !== lentAfter) {
    const pieces = taskContextPieces(doc);
    // What the task posted and now posts: its text while it lends context, else nothing.
    const piecesPosted = lentBefore ? (piecesBefore ?? pieces) : NO_PIECES;
    const piecesPosting = lentAfter ? pieces : NO_PIECES;
    const postedBefore = piecesPosted.join('\n');
    const postedAfter = piecesPosting.join('\n');
    if (postedBefore !== postedAfter) {
      const weightsBefore = contextTermWeights(postedBefore, piecesPosted);
      const weightsAfter = contextTermWeights(postedAfter, piecesPosting);
      weightsBefore.forEach((_weight, term) => {
        if (!weightsAfter.has(term)) index.taskTerms = unpostIn(index.taskTerms, term, doc.num);
      });
      weightsAfter.forEach((weight, term) => {
        const previous = weightsBefore.get(term);
        if (previous === undefined || quantize(previous) !== quantize(weight))
          index.taskTerms = postIn(index.taskTerms, term, doc.num, packPosting(quantize(weight), 0));
      });
      index.contextCount += Number(postedAfter !== '') - Number(postedBefore !== '');
    }
  }
  if (isUnused(doc)) {
    index.tasks = PMap.remove(index.tasks, taskId);
    index.taskIds = setAt(index.taskIds, doc.num, undefined);
  } else if (doc !== known) index.tasks = PMap.set(index.tasks, taskId, doc);
  const timeAfter = lastFactTime(doc);
  if (timeAfter !== timeBefore) withRecent(index, taskId, timeAfter);
  if (doc.promptAt !== promptBefore) withPrompted(index, taskId, doc.num, doc.promptAt);
};

/**
 * The task's doc with `pairKey` in (`on`) or out of one of its sets of pairs; nothing changes
 * when it already is. True when it changed.
 */
export const markPair = (
  index: Writable<SearchIndex>,
  taskId: string,
  set: 'touched' | 'raised',
  pairKey: string,
  on: boolean,
): boolean => {
  const known = PMap.get(index.tasks, taskId);
  if ((known !== undefined && PMap.has(known[set], pairKey)) === on) return false;
  updateTask(index, taskId, false, (task) => {
    task[set] = on ? PMap.set(task[set], pairKey, true) : PMap.remove(task[set], pairKey);
  });
  return true;
};

/** When a task's latest prompt was recorded (-Infinity when none): what orders a file record's tasks. */
const promptTime = (tasks: PMap.PersistentMap<TaskDoc>, taskId: string): number =>
  PMap.get(tasks, taskId)?.promptAt ?? -Infinity;

/**
 * The tasks of a file record with `taskId` put in its place (see `FileRecord.tasks`: by prompt
 * time, latest first, then id): first when it is, else found by bisection (a manifest's record
 * holds hundreds of tasks).
 */
const withTaskPlaced = (
  tasks: PMap.PersistentMap<TaskDoc>,
  list: ReadonlyArray<string>,
  taskId: string,
): ReadonlyArray<string> => {
  const time = promptTime(tasks, taskId);
  /** True when `other` goes before the task placed. */
  const before = (other: string): boolean => {
    const at = promptTime(tasks, other);
    return at > time || (at === time && other < taskId);
  };
  // Most often the task just prompted, which goes first.
  if (list.length === 0 || !before(list[0]!)) return Object.freeze([taskId, ...list]);
  let low = 1;
  let high = list.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (before(list[middle]!)) low = middle + 1;
    else high = middle;
  }
  const from = sliceable(list);
  return Object.freeze(from.slice(0, low).concat([taskId], from.slice(low)));
};

/**
 * Records that a task asserted a fact of a file pair (with the task's record: see
 * `SearchIndex.files`). The pair's key when the task had not asserted it before, else undefined.
 */
export const recordFile = (
  index: Writable<SearchIndex>,
  taskId: string,
  subject: string,
  relation: string,
): string | undefined => {
  const key = subject + PAIR_SEPARATOR + relation;
  const added = markPair(index, taskId, 'touched', key, true);
  const record = PMap.get(index.files, key);
  if (record?.tasks.includes(taskId) !== true) {
    const tasks = withTaskPlaced(index.tasks, record?.tasks ?? NO_ITEMS, taskId);
    index.files = PMap.set(index.files, key, Object.freeze({ subject, relation, tasks }));
  }
  return added ? key : undefined;
};

/** Puts a task whose prompt time changed back in its place in the records of the files it changed. */
export const replaceInFileRecords = (index: Writable<SearchIndex>, taskId: string): void => {
  const doc = PMap.get(index.tasks, taskId);
  if (doc === undefined) return;
  PMap.forEach(doc.touched, (_true, key) => {
    const record = PMap.get(index.files, key);
    if (record === undefined) return;
    const others = record.tasks.filter((id) => id !== taskId);
    const tasks = withTaskPlaced(index.tasks, others, taskId);
    index.files = PMap.set(index.files, key, Object.freeze({ ...record, tasks }));
  });
};
