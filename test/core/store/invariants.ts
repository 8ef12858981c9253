/**
 * Structural invariants of a store, checked after every reducer in the property tests: the
 * valid facts are exactly those derived from the pair logs, the search index holds exactly
 * what a rebuild from scratch holds (its document numbers aside), every map and posting list
 * is well formed, and the whole value is deeply frozen plain data.
 */
import { expect } from 'vitest';
import * as PMap from '../../../src/persistent/persistentMap.js';
import { forEachAt, getAt } from '../../../src/persistent/persistentVector.js';
import { isFileFact } from '../../../src/core/fact.js';
import { type FactStore, selectAllFacts, selectValidCount } from '../../../src/index.js';
import {
  BLOCK,
  forEachPosting,
  type Postings,
  postingsSize,
  postingWeightOf,
} from '../../../src/core/search/postings.js';
import { priorFlags } from '../../../src/core/search/priors.js';
import {
  entryDoc,
  entryFlags,
  entryIsFile,
  RECENT_TASKS,
  type SearchIndex,
} from '../../../src/core/search/searchIndex.js';
import { pairKey } from '../../../src/core/store/state.js';
import { buildValidOrder, validOrder, type ValidOrder } from '../../../src/core/store/validOrder.js';
import { mayHoldHistory } from '../../../src/core/store/timeline.js';
import {
  buildStore,
  selectPairLogs,
  selectRecordedFiles,
  selectRecordedPrompts,
} from '../../../src/core/store/write.js';

export const isDeepFrozen = (value: unknown): boolean => {
  if (typeof value !== 'object' || value === null) return true;
  if (!Object.isFrozen(value)) return false;
  return Object.values(value).every(isDeepFrozen);
};

const byKey = <U>([a]: [string, U], [b]: [string, U]): number => (a < b ? -1 : a > b ? 1 : 0);

const sortedEntries = <T, U>(map: PMap.PersistentMap<T>, view: (value: T) => U): Array<[string, U]> => {
  const out: Array<[string, U]> = [];
  PMap.forEach(map, (value, key) => out.push([key, view(value)]));
  return out.sort(byKey);
};

/** True when a posting list is sorted, its counts, lasts and bounds are right, and its blocks are within size. */
export const isWellFormedPostings = (postings: Postings): boolean => {
  const docs: number[] = [];
  let max = 0;
  forEachPosting(postings, (doc, value) => {
    docs.push(doc);
    max = Math.max(max, postingWeightOf(value));
  });
  if (docs.some((doc, i) => i > 0 && doc <= docs[i - 1]!)) return false;
  if (Array.isArray(postings)) return postings.length > 0 && postings.length <= 2 * BLOCK;
  const blocked = postings as Exclude<Postings, ReadonlyArray<number>>;
  return (
    blocked.n === docs.length &&
    blocked.n > BLOCK / 2 &&
    blocked.max === max &&
    blocked.blocks.every(
      (block, i) =>
        block.length > 0 &&
        block.length <= 2 * BLOCK &&
        blocked.lasts[i] === block[block.length - 2] &&
        blocked.maxes[i] === Math.max(...block.filter((_, j) => j % 2 === 1).map(postingWeightOf)),
    )
  );
};

/** A posting list by fact id or task id instead of by number. */
const postingsBy = (postings: Postings, name: (doc: number) => string | undefined): Array<[string, number]> => {
  const out: Array<[string, number]> = [];
  forEachPosting(postings, (doc, value) => out.push([name(doc) ?? `missing ${doc}`, value]));
  return out.sort(byKey);
};

/** The index's content, independent of how its maps happen to be split and its documents numbered. */
export const flattenIndex = (index: SearchIndex) => {
  const factId = (doc: number): string | undefined => getAt(index.docs, doc)?.id;
  const taskId = (num: number): string | undefined => getAt(index.taskIds, num);
  return {
    facts: sortedEntries(index.ids, (doc) => getAt(index.docs, doc)),
    terms: sortedEntries(index.terms, (postings) => postingsBy(postings, factId)),
    conventionTerms: sortedEntries(index.conventionTerms, (postings) => postingsBy(postings, factId)),
    names: sortedEntries(index.names, (postings) => postingsBy(postings, factId)),
    conventions: postingsBy(index.conventions, factId),
    taskTerms: sortedEntries(index.taskTerms, (postings) => postingsBy(postings, taskId)),
    contextCount: index.contextCount,
    // The first RECENT_TASKS are exact; the reserve after them depends on the path taken.
    recent: index.recent.slice(0, 2 * RECENT_TASKS),
    // Task numbers differ from a rebuilt index's: by id.
    prompted: index.prompted.map((value, i) => (i % 2 === 0 ? taskId(value) : value)),
    files: sortedEntries(index.files, (record) => record),
    tasks: sortedEntries(index.tasks, ({ num, ...doc }) => ({
      ...doc,
      numbered: taskId(num),
      facts: PMap.keys(doc.facts).sort(),
      // Each fact's entry: its document number, as `ids` has it (numbers differ from a rebuilt
      // index's), its prior flags and whether it is a file fact.
      entries: PMap.keys(doc.facts).every((id) => {
        const entry = PMap.get(doc.facts, id)!;
        const fact = getAt(index.docs, entryDoc(entry));
        return (
          entryDoc(entry) === PMap.get(index.ids, id) &&
          fact !== undefined &&
          entryFlags(entry) === priorFlags(fact) &&
          entryIsFile(entry) === isFileFact(fact)
        );
      }),
      touched: PMap.keys(doc.touched).sort(),
      raised: PMap.keys(doc.raised).sort(),
    })),
    // Each pair's valid facts by id (in the list's order), with their entries checked as the
    // tasks' are, and their tasks by id.
    pairFacts: sortedEntries(index.pairFacts, (entries) => {
      const out: Array<[string | undefined, boolean, string | undefined]> = [];
      for (let i = 0; i < entries.length; i += 2) {
        const fact = getAt(index.docs, entryDoc(entries[i]!));
        out.push([
          fact?.id,
          fact !== undefined &&
            entryFlags(entries[i]!) === priorFlags(fact) &&
            entryIsFile(entries[i]!) === isFileFact(fact),
          taskId(entries[i + 1]!),
        ]);
      }
      return out;
    }),
  };
};

/** A store's pair logs and bound, independent of how its maps happen to be split: what compaction decides. */
export const storeLogs = (store: FactStore) => ({
  maxValidFacts: store.maxValidFacts,
  pairs: sortedEntries(store.pairs, (log) => log),
  historyPairs: PMap.keys(store.historyPairs).sort(),
  tombstones: store.tombstones === undefined ? [] : sortedEntries(store.tombstones, (at) => at),
});

/**
 * A store's content, independent of how its maps happen to be split and its documents and tasks
 * numbered: two stores with equal content answer every selector and query alike.
 */
export const storeContent = (store: FactStore) => ({ ...storeLogs(store), index: flattenIndex(store.index) });

/** An order as plain data: ids by time, expendable ids by time, each subject's ids sorted, the mergeable subjects sorted. */
const plainOrder = (order: ValidOrder) => ({
  byTime: order.byTime.map((fact) => fact.id),
  expendable: order.expendable.map((fact) => fact.id),
  bySubject: [...order.bySubject]
    .map(([subject, facts]) => [subject, facts.map((fact) => fact.id).sort()] as const)
    .sort(([a], [b]) => (a < b ? -1 : 1)),
  mergeable: [...order.mergeable].sort(),
});

/** Checks that the order a store's writes carried is the order built from its index. */
export const expectOrderOf = (store: FactStore): void =>
  expect(plainOrder(validOrder(store.index))).toEqual(plainOrder(buildValidOrder(store.index)));

export const expectConsistent = (store: FactStore): void => {
  const rebuilt = buildStore(
    store.maxValidFacts,
    selectPairLogs(store),
    selectRecordedPrompts(store),
    selectRecordedFiles(store),
  );
  // Maps split as they grow and never merge, so compare contents, not shapes.
  expect(sortedEntries(store.pairs, (log) => log)).toEqual(sortedEntries(rebuilt.pairs, (log) => log));
  // The count compaction reads instead of walking the pairs is the count of logs that may hold history.
  expect(PMap.keys(store.historyPairs).sort()).toEqual(
    selectPairLogs(store)
      .filter(mayHoldHistory)
      .map((log) => pairKey(log.subject, log.relation))
      .sort(),
  );
  const { index } = store;
  // A pair's valid file facts in the index are those of its log, by id descending, of their tasks.
  const listed = new Map(flattenIndex(index).pairFacts);
  const expected = new Map<string, Array<[string, boolean, string]>>();
  for (const fact of selectAllFacts(store))
    if (fact.validTo === undefined && isFileFact(fact)) {
      const key = pairKey(fact.subject, fact.relation);
      expected.set(key, [...(expected.get(key) ?? []), [fact.id, true, fact.sourceTaskId]]);
    }
  expected.forEach((facts) => facts.sort(([a], [b]) => (a > b ? -1 : 1)));
  expect(listed).toEqual(expected);
  // Each check over every task, posting, file or document gathers what fails it for one expect:
  // an expect per item, on every store of every run, was much of the property tests' time.
  // A task's live pairs are those it asserted that hold a valid file fact, counted afresh here;
  // only a task with a valid fact or such a pair posts its context.
  const lending = new Set<number>();
  const wrongLive: Array<[string, number, number]> = [];
  PMap.forEach(index.tasks, (task, taskId) => {
    const live = PMap.keys(task.touched).filter((key) => expected.has(key)).length;
    if (!Object.is(task.live, live)) wrongLive.push([taskId, task.live, live]);
    if (PMap.size(task.facts) > 0 || task.live > 0) lending.add(task.num);
  });
  expect(wrongLive).toEqual([]);
  const notLending: number[] = [];
  PMap.forEach(index.taskTerms, (postings) =>
    forEachPosting(postings, (num) => {
      if (!lending.has(num)) notLending.push(num);
    }),
  );
  expect(notLending).toEqual([]);
  // A file record lists its tasks latest prompt first (none last), then by id: co-change stops
  // reading a record at the first task whose prompt is older than the ones it keeps.
  const fileTasks: Array<ReadonlyArray<string>> = [];
  const orderedTasks: string[][] = [];
  const time = (taskId: string): number => PMap.get(index.tasks, taskId)?.promptAt ?? -Infinity;
  PMap.forEach(index.files, ({ tasks }) => {
    fileTasks.push(tasks);
    orderedTasks.push([...tasks].sort((a, b) => time(b) - time(a) || (a < b ? -1 : 1)));
  });
  expect(fileTasks).toEqual(orderedTasks);
  const maps: ReadonlyArray<PMap.PersistentMap<unknown>> = [
    store.pairs,
    index.ids,
    index.terms,
    index.conventionTerms,
    index.names,
    index.taskTerms,
    index.tasks,
    index.files,
    index.pairFacts,
  ];
  for (const map of maps) expect(PMap.isWellFormed(map)).toBe(true);
  const illFormed: string[] = [];
  for (const postingMap of [index.terms, index.conventionTerms, index.names, index.taskTerms])
    PMap.forEach(postingMap, (postings, term) => {
      if (!isWellFormedPostings(postings)) illFormed.push(term);
    });
  expect(illFormed).toEqual([]);
  if (postingsSize(index.conventions) > 0) expect(isWellFormedPostings(index.conventions)).toBe(true);
  let documents = 0;
  const misplaced: Array<[string, number | undefined, number]> = [];
  forEachAt(index.docs, (fact, doc) => {
    documents += 1;
    const at = PMap.get(index.ids, fact.id);
    if (!Object.is(at, doc)) misplaced.push([fact.id, at, doc]);
  });
  expect(misplaced).toEqual([]);
  expect(documents).toBe(PMap.size(index.ids));
  expect(selectValidCount(store)).toBe(selectAllFacts(store).filter((fact) => fact.validTo === undefined).length);
  expect(flattenIndex(index)).toEqual(flattenIndex(rebuilt.index));
  expect(isDeepFrozen(store)).toBe(true);
};
