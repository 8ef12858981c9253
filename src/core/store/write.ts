/**
 * Applies changed pair logs to a store: the pair's records are derived again, the facts that
 * became valid or stopped being valid go to the index, and untouched parts keep their identity.
 */
import { deepFreeze } from '../../persistent/freeze.js';
import { asOneRun, createOwner, transientRun } from '../../persistent/owner.js';
import * as PMap from '../../persistent/persistentMap.js';
import { isFileFact, type SessionFact } from '../fact.js';
import { selectIndexedFiles, selectIndexedPrompts } from '../search/indexReads.js';
import { applyIndexChanges, indexTaskFiles, indexTaskPrompt } from '../search/indexWrites.js';
import { emptySearchIndex, type RecordedFile, type RecordedPrompt } from '../search/searchIndex.js';
import { type FactStore, type PairChange, type PairLog, pairKey, storeOf } from './state.js';
import { mayHoldHistory, selectValidOfLog } from './timeline.js';
import { tombstoneChanges, tombstonesOf, withTombstoneChanges } from './tombstones.js';
import { attachValidOrder, carryValidOrder, type ValidOrder } from './validOrder.js';

export type { PairChange } from './state.js';

/** The log stored for a pair, if any. */
export const selectPairLog = (store: FactStore, subject: string, relation: string): PairLog | undefined =>
  PMap.get(store.pairs, pairKey(subject, relation));

/** Every pair log of the store, in no particular order. */
export const selectPairLogs = (store: FactStore): PairLog[] => PMap.values(store.pairs);

/** The clears of a pair never invalidated: one shared empty list instead of one per pair. */
export const NO_CLEARS: ReadonlyArray<number> = Object.freeze([]);

/** An empty log for a pair. */
export const emptyPairLog = (subject: string, relation: string): PairLog => ({
  subject,
  relation,
  assertions: [],
  clears: NO_CLEARS,
});

const historyIn = (log: PairLog | undefined): number => (log !== undefined && mayHoldHistory(log) ? 1 : 0);

/**
 * Lists up to this long are compared by a scan: most pairs hold one to three facts, and a write
 * compares every changed pair before and after, so small lists spare it a Map or Set each.
 */
const SCANNED = 8;

/** Appends to `out` the items of `list` not in `other` (a scan of small lists, a Set otherwise), each as `as` gives it. */
const appendMissing = <T, U>(
  list: ReadonlyArray<T>,
  other: ReadonlyArray<T>,
  out: U[],
  as: (item: T, key: string) => U,
  key: string,
): void => {
  if (list.length === 0) return;
  if (other.length <= SCANNED) {
    for (const item of list) if (!other.includes(item)) out.push(as(item, key));
    return;
  }
  const present = new Set(other);
  for (const item of list) if (!present.has(item)) out.push(as(item, key));
};

const itself = <T>(item: T): T => item;
const withKey = (taskId: string, key: string): [string, string] => [taskId, key];

const NO_TASKS: ReadonlyArray<string> = Object.freeze([]);

/** The distinct source tasks of the log's assertions that `keep` takes, in assertion order. */
const tasksOfLog = (log: PairLog | undefined, keep: (fact: SessionFact) => boolean): ReadonlyArray<string> => {
  if (log === undefined) return NO_TASKS;
  const tasks: string[] = [];
  const seen = log.assertions.length > SCANNED ? new Set<string>() : undefined;
  for (const fact of log.assertions) {
    if (!keep(fact)) continue;
    const taskId = fact.sourceTaskId;
    if (seen === undefined ? tasks.includes(taskId) : seen.has(taskId)) continue;
    seen?.add(taskId);
    tasks.push(taskId);
  }
  return tasks;
};

/** True when task `taskId` asserted a file fact that the pair log `log` still holds. */
export const holdsFileFactOf = (log: PairLog | undefined, taskId: string): boolean =>
  log?.assertions.some((fact) => fact.sourceTaskId === taskId && isFileFact(fact)) === true;

/** The tasks that asserted a file fact in a pair log. */
const fileTasks = (log: PairLog | undefined): ReadonlyArray<string> => tasksOfLog(log, isFileFact);

/** Relations a later review of the same task settles: what it does not repeat is fixed (see settleReview.ts). */
const REVIEW_OPEN_ITEMS: ReadonlySet<string> = new Set(['issue', 'must_fix']);

/** True for the relation of an open review item (`issue`, `must_fix`): one a later review of its task settles. */
export const isOpenReviewItem = (relation: string): boolean => REVIEW_OPEN_ITEMS.has(relation);

const byReviewer = (fact: SessionFact): boolean => fact.sourceRole === 'reviewer';

/** The tasks whose reviewer asserted an open review item in a pair log. */
const reviewTasks = (log: PairLog | undefined): ReadonlyArray<string> =>
  log === undefined || !isOpenReviewItem(log.relation) ? NO_TASKS : tasksOfLog(log, byReviewer);

/** The (task, subject, relation) entries of the tasks that asserted a file fact after a change and not before. */
const assertedFiles = ({ before, after }: PairChange, out: Array<[string, string, string]>): void => {
  if (after === undefined) return;
  const tasksBefore = fileTasks(before);
  for (const taskId of fileTasks(after))
    if (!tasksBefore.includes(taskId)) out.push([taskId, after.subject, after.relation]);
};

/** Adds to `gained` and `lost` the (task, pair) entries of the tasks `tasksOf` finds after and not before, and before and not after. */
const diffTasks = (
  tasksOf: (log: PairLog | undefined) => ReadonlyArray<string>,
  { before, after }: PairChange,
  key: string,
  gained: Array<[string, string]>,
  lost: Array<[string, string]>,
): void => {
  const tasksBefore = tasksOf(before);
  const tasksAfter = tasksOf(after);
  appendMissing(tasksAfter, tasksBefore, gained, withKey, key);
  appendMissing(tasksBefore, tasksAfter, lost, withKey, key);
};

const NO_FACTS: ReadonlyArray<SessionFact> = Object.freeze([]);

/** The valid records of a log (a valid record is the assertion object that opened it; one per id). */
const validOf = (log: PairLog | undefined): ReadonlyArray<SessionFact> =>
  log === undefined ? NO_FACTS : selectValidOfLog(log);

/** Freezes a pair log built by a reducer: its assertions (fresh copies of input facts), their list and its clears. */
const freezeLog = (log: PairLog): PairLog => {
  if (Object.isFrozen(log)) return log;
  for (const fact of log.assertions) {
    Object.freeze(fact.tags);
    Object.freeze(fact);
  }
  Object.freeze(log.assertions);
  Object.freeze(log.clears);
  return Object.freeze(log);
};

/** How many more valid facts (fewer, when negative) a list of changes leaves. */
export const validCountChange = (changes: ReadonlyArray<PairChange>): number => {
  let change = 0;
  for (const { before, after } of changes)
    if (before !== after) change += validOf(after).length - validOf(before).length;
  return change;
};

/** The facts that stop being valid and those that become valid through a list of changes. */
export const validDiff = (changes: ReadonlyArray<PairChange>): { invalid: SessionFact[]; valid: SessionFact[] } => {
  const invalid: SessionFact[] = [];
  const valid: SessionFact[] = [];
  for (const { before, after } of changes) {
    if (before === after) continue;
    // A valid record is kept exactly when the same object is valid after (ids are one per record).
    const validBefore = validOf(before);
    const validAfter = validOf(after);
    appendMissing(validBefore, validAfter, invalid, itself, '');
    appendMissing(validAfter, validBefore, valid, itself, '');
  }
  return { invalid, valid };
};

/**
 * Writes made as one: the changes of each step in turn, as `steps` lists them, written as their
 * composition (each pair from its log before the first step to its log after the last). A fact
 * that one step adds and a later one removes never reaches the index, yet each step's files are
 * recorded as they would be step by step. `order` is the valid facts' order already stepped
 * through every step (see `stepValidOrder`), kept for the index written.
 */
export interface ComposedSteps {
  readonly steps: ReadonlyArray<ReadonlyArray<PairChange>>;
  readonly order: ValidOrder;
}

/** The composition of changes made one after the other: per pair, its first log before and its last after. */
export const composeChanges = (steps: ReadonlyArray<ReadonlyArray<PairChange>>): PairChange[] => {
  const byPair = new Map<string, PairChange>();
  for (const changes of steps)
    for (const change of changes) {
      const log = (change.after ?? change.before)!;
      const key = pairKey(log.subject, log.relation);
      const first = byPair.get(key);
      byPair.set(key, first === undefined ? change : { before: first.before, after: change.after });
    }
  return [...byPair.values()];
};

/**
 * The store with every change applied, or the same store when nothing differs. With `composed`,
 * `changes` are the composition of its steps (see `ComposedSteps`).
 */
export const writePairChanges = (
  store: FactStore,
  changes: ReadonlyArray<PairChange>,
  composed?: ComposedSteps,
): FactStore => {
  const effective = changes.filter((change) => change.before !== change.after);
  const filesAsserted: Array<[string, string, string]> = [];
  for (const step of composed?.steps ?? [effective]) for (const change of step) assertedFiles(change, filesAsserted);
  const tombstonesChanged = tombstoneChanges(store.tombstones, composed?.steps ?? [effective]);
  if (effective.length === 0 && filesAsserted.length === 0 && tombstonesChanged.size === 0) {
    if (composed !== undefined) attachValidOrder(store.index, composed.order);
    return store;
  }
  const { invalid, valid } = validDiff(effective);
  const itemsRaised: Array<[string, string]> = [];
  const itemsDropped: Array<[string, string]> = [];
  const keys: string[] = [];
  for (const change of effective) {
    const log = (change.after ?? change.before)!;
    const key = pairKey(log.subject, log.relation);
    keys.push(key);
    diffTasks(reviewTasks, change, key, itemsRaised, itemsDropped);
  }
  return asOneRun(() => {
    let pairs = store.pairs;
    let historyPairs = store.historyPairs;
    effective.forEach(({ before, after }, i) => {
      const key = keys[i]!;
      pairs = after === undefined ? PMap.remove(pairs, key) : PMap.set(pairs, key, freezeLog(after));
      if (historyIn(after) !== historyIn(before))
        historyPairs = historyIn(after) === 1 ? PMap.set(historyPairs, key, true) : PMap.remove(historyPairs, key);
    });
    const tombstones = withTombstoneChanges(store.tombstones, tombstonesChanged);
    const index = applyIndexChanges(store.index, {
      invalid,
      valid,
      filesAsserted,
      itemsRaised,
      itemsDropped,
    });
    if (composed === undefined) carryValidOrder(store.index, index, invalid, valid);
    else attachValidOrder(index, composed.order);
    // A new store object every time, even inside a run: selectors memoize by store identity.
    return storeOf(store.maxValidFacts, pairs, historyPairs, index, tombstones);
  });
};

/** The task prompts recorded in a store, by task id. */
export const selectRecordedPrompts = (store: FactStore): RecordedPrompt[] => selectIndexedPrompts(store.index);

/** The `count` latest recorded prompts that are not empty, latest first (by time, then task id). */
export const selectLatestPrompts = (store: FactStore, count: number): RecordedPrompt[] =>
  selectRecordedPrompts(store)
    .filter((recorded) => recorded.prompt !== '')
    // A stable sort: prompts of one time keep the task-id order they come in.
    .sort((a, b) => b.at - a.at)
    .slice(0, Math.max(0, count));

/** The files recorded as changed by tasks, by subject, relation and task. */
export const selectRecordedFiles = (store: FactStore): RecordedFile[] => selectIndexedFiles(store.index);

/**
 * A whole store built from pair logs, recorded prompts, recorded files and tombstones (pair key,
 * invalidation time; one of a pair that has a log is left out, its log says when it was closed),
 * where a reducer rewrites most of the state. Built as a replay builds its store, in one transient run with
 * native maps, frozen once at the end (the tries `deepFreeze` makes of them are those the same
 * entries give however they are written), which takes less time than a persistent run (see
 * docs/performance.md).
 */
export const buildStore = (
  maxValidFacts: number,
  logs: Iterable<PairLog>,
  prompts: ReadonlyArray<RecordedPrompt> = [],
  files: ReadonlyArray<RecordedFile> = [],
  tombstones: Iterable<readonly [string, number]> = [],
): FactStore =>
  deepFreeze(
    transientRun(createOwner(), (): FactStore => {
      const empty = storeOf(maxValidFacts, PMap.empty, PMap.empty, emptySearchIndex(), tombstonesOf(tombstones));
      const changes: PairChange[] = [];
      for (const log of logs) changes.push({ before: undefined, after: log });
      const store = writePairChanges(empty, changes);
      let index = store.index;
      for (const { taskId, prompt, at } of prompts) index = indexTaskPrompt(index, taskId, prompt, at);
      return { ...store, index: indexTaskFiles(index, files) };
    }),
  );
