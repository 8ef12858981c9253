/**
 * The special facts of a query: those it finds directly rather than through its terms (of its
 * context's tasks and files, of a file it names, of a recent task, of a co-changed file), each
 * described once, by the first way in that finds it, into the scratch's special list (see
 * `SpecialScratch`): they get an accumulator from the start, with what they get besides their
 * terms, and are never dropped.
 */
import * as PMap from '../../persistent/persistentMap.js';
import { getAt } from '../../persistent/persistentVector.js';
import type { SessionFact } from '../fact.js';
import { forEachPosting } from '../search/postings.js';
import { rememberedPriorFlags } from '../search/priors.js';
import { entryDoc, entryFlags, entryIsFile, fileNameOf, type TaskDoc } from '../search/searchIndex.js';
import type { FactStore } from '../store/state.js';
import { namesSubject } from './rank.js';
import type { Pass } from './score.js';
import type { RetrievalMemo, RetrievalScratch, SpecialScratch } from './scratch.js';

const NO_RECENCY: ReadonlyMap<string, number> = new Map();

/** Describes the fact of `doc` from what is known of it (see `describe`). */
const describeDocument = (
  special: SpecialScratch,
  doc: number,
  flags: number,
  named: boolean,
  context: number,
  recency: number,
): void => {
  const at = special.count++;
  special.mark[doc] = 1;
  special.docs[at] = doc;
  special.contexts[at] = context;
  special.recencies[at] = recency;
  special.flags[at] = flags;
  special.named[at] = named ? 1 : 0;
};

/**
 * Describes the fact of `doc` for the query's passes and marks it (the callers pass over what
 * is marked), with its context score (`factContext`'s, which the way in mostly tells: see
 * `describeContextFacts`).
 */
const describe = (
  special: SpecialScratch,
  memo: RetrievalMemo,
  doc: number,
  fact: SessionFact,
  context: number,
): void => {
  const { recency } = special;
  describeDocument(
    special,
    doc,
    rememberedPriorFlags(fact, memo.flags),
    special.namesFile[doc] === 1,
    context,
    recency.size === 0 ? 0 : (recency.get(fact.sourceTaskId) ?? 0),
  );
};

/**
 * Describes the task's valid facts not described yet: all asserted by the task, so their context
 * is the task's, but a file fact's, which is its pair's: none, as the facts of the context's
 * pairs are described first. The task's entries tell each fact's document, flags and whether it
 * is a file fact, and the query's named files (`markNamedFacts`) whether the query names its file.
 */
const describeTaskFacts = (special: SpecialScratch, pass: Pass, taskId: string, task: TaskDoc): void => {
  const context = pass.table.byTask.get(taskId) ?? 0;
  const recency = special.recencyByTask[task.num] ?? 0;
  const { taskEntries, mark, namesFile } = special;
  const count = PMap.valuesInto(task.facts, taskEntries);
  for (let i = 0; i < count; i += 1) {
    const entry = taskEntries[i]!;
    const doc = entryDoc(entry);
    // A number outside the scratch is no document of this index (as a malformed one could hold).
    if (!(doc >= 0 && doc < mark.length) || mark[doc] === 1) continue;
    const ownContext = entryIsFile(entry) ? 0 : context;
    describeDocument(special, doc, entryFlags(entry), namesFile[doc] === 1, ownContext, recency);
  }
};

/**
 * Describes the valid file facts of a pair not described yet, from the index's entries of them
 * (`SearchIndex.pairFacts`): with `context` (the pair's score in the context table; 0 for a
 * co-changed pair, as the facts of the context's tasks and pairs are described first). Then
 * lists each of them, described now or before, with `coChange` when it is above 0 (a co-changed pair).
 */
const describePair = (
  special: SpecialScratch,
  store: FactStore,
  pair: string,
  context: number,
  coChange: number,
): void => {
  const entries = PMap.get(store.index.pairFacts, pair);
  if (entries === undefined) return;
  const { mark, namesFile, recencyByTask } = special;
  for (let i = 0; i < entries.length; i += 2) {
    const entry = entries[i]!;
    const doc = entryDoc(entry);
    if (mark[doc] === 0)
      describeDocument(
        special,
        doc,
        entryFlags(entry),
        namesFile[doc] === 1,
        context,
        recencyByTask[entries[i + 1]!] ?? 0,
      );
    if (coChange > 0) {
      special.coChangedDocs[special.coChangedCount] = doc;
      special.coChangedScores[special.coChangedCount++] = coChange;
    }
  }
};

/**
 * Describes the valid facts of the pass's co-changed files not described yet (with no context:
 * the facts of the context's tasks and pairs are described first), and lists each file fact
 * among them, described now or before, with its co-change score.
 */
const describeCoChanged = (special: SpecialScratch, store: FactStore, pass: Pass): void => {
  special.coChangedCount = 0;
  pass.coChange.forEach((score, pair) => describePair(special, store, pair, 0, score));
};

/**
 * Describes the facts with a task context (of a file a best-matching task touched, then of such
 * a task) and those of a named file. A pair's every valid fact is described through it, and a
 * task's through it, so a fact described after those two loops (here, or of a recent task or a
 * co-changed file) has no context: a file fact's pair is not the context's, nor is another
 * fact's task.
 */
const describeContextFacts = (special: SpecialScratch, memo: RetrievalMemo, store: FactStore, pass: Pass): void => {
  const { index } = store;
  pass.table.byPair.forEach((score, pair) => describePair(special, store, pair, score, 0));
  for (const taskId of pass.table.byTask.keys()) {
    const task = PMap.get(index.tasks, taskId);
    if (task !== undefined) describeTaskFacts(special, pass, taskId, task);
  }
  for (let i = 0; i < special.namedCount; i += 1) {
    const doc = special.namedDocs[i]!;
    if (special.mark[doc] === 1) continue;
    const fact = getAt(index.docs, doc);
    if (fact !== undefined) describe(special, memo, doc, fact, 0);
  }
};

/**
 * Marks the facts whose file the query names (`SpecialScratch.namesFile`), each listed once, in
 * the order its paths find them: a path finds, among the facts of its file name (`SearchIndex.names`,
 * which holds every fact whose subject a path could name), those whose subject it names.
 */
const markNamedFacts = (special: SpecialScratch, store: FactStore, paths: ReadonlyArray<string>): void => {
  const { index } = store;
  for (const path of paths) {
    const named = PMap.get(index.names, fileNameOf(path));
    if (named !== undefined)
      forEachPosting(named, (doc) => {
        if (special.namesFile[doc] === 1) return;
        const fact = getAt(index.docs, doc);
        if (fact === undefined || !namesSubject([path], fact.subject)) return;
        special.namesFile[doc] = 1;
        special.namedDocs[special.namedCount++] = doc;
      });
  }
};

/**
 * How many of the special list each pass of one query has: the facts of its context, of the
 * files it names and of the recent tasks first (the passes share the context table, the plan
 * and the recent tasks, so they are found and described once), then those of the co-changed
 * files (in the last pass). The recent tasks' facts get their recency in the last pass only,
 * but are special in the first too: the query phase then reads their query terms in full, and
 * the last pass need not seek them in every list of the query again.
 */
export const specialFactsOf = (
  { special, memo }: RetrievalScratch,
  store: FactStore,
  recent: ReadonlyMap<string, number>,
  records: ReadonlyArray<TaskDoc>,
): ((pass: Pass) => number) => {
  let shared = -1;
  return (pass) => {
    special.recency = recent;
    if (shared < 0) {
      setRecencyByTask(special, store, recent, records);
      markNamedFacts(special, store, pass.plan.paths);
      describeContextFacts(special, memo, store, pass);
      let at = 0;
      for (const taskId of recent.keys()) describeTaskFacts(special, pass, taskId, records[at++]!);
      shared = special.count;
    }
    describeCoChanged(special, store, pass);
    return special.count;
  };
};

/** Gives each recent task's number its recency (`SpecialScratch.recencyByTask`; `records` in the order of `recent`). */
const setRecencyByTask = (
  special: SpecialScratch,
  store: FactStore,
  recent: ReadonlyMap<string, number>,
  records: ReadonlyArray<TaskDoc>,
): void => {
  const { nextTask } = store.index;
  if (special.recencyByTask.length < nextTask)
    special.recencyByTask = new Float64Array(Math.max(nextTask, 2 * special.recencyByTask.length));
  let at = 0;
  recent.forEach((recency) => {
    const { num } = records[at++]!;
    if (!(num >= 0 && num < nextTask)) return;
    special.recencyByTask[num] = recency;
    special.recentTasks.push(num);
  });
};

/** Unmarks every special fact a query described (the scratch is all zeros between queries). */
export const clearSpecial = (special: SpecialScratch): void => {
  for (let i = 0; i < special.count; i += 1) special.mark[special.docs[i]!] = 0;
  for (let i = 0; i < special.namedCount; i += 1) special.namesFile[special.namedDocs[i]!] = 0;
  special.namedCount = 0;
  for (const num of special.recentTasks) special.recencyByTask[num] = 0;
  special.recentTasks.length = 0;
  special.count = 0;
  special.coChangedCount = 0;
  special.recency = NO_RECENCY;
};
