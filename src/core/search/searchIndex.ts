/**
 * The inverted index the store keeps, so a query touches only the postings of its terms. It is
 * plain data, brought up to date from the changes each reducer makes to the valid facts (see
 * `IndexChanges`), and always holds what an index rebuilt from the valid facts and the
 * recorded task prompts would hold.
 *
 * - `docs`, `ids`, `nextDoc`: every valid fact gets a document number when it becomes valid
 *   (numbers only grow, so postings stay sorted by appending); `docs` maps numbers to facts and
 *   `ids` fact ids to numbers.
 * - `terms`: term -> postings over the valid facts (see postings.ts): the BM25 weight of the
 *   term in the fact (weights.ts) and the fact's prior flags (priors.ts), with per-block and
 *   per-term upper bounds for dynamic pruning. Conventions, whose prior raises a score, have
 *   postings of their own (`conventionTerms`), so the bounds of the others stay tight.
 * - `names`: file name -> postings of the facts whose subject is a path ending in it, so a query
 *   naming `config.ts` finds `src/config.ts` without reading anything else.
 * - `conventions`: postings of the valid facts tagged `convention` (eligible without a match),
 *   with their prior flags, so a query weighs the conventions it does not match without a lookup.
 * - `tasks`: per task, the context its facts inherit (its recorded prompt and its summaries),
 *   its valid facts, the file pairs it asserted, the open review items its reviewer asserted,
 *   and when its facts were asserted; each task has a number (`taskIds` maps numbers back to ids).
 * - `files`: per file pair, the tasks that asserted it. What a task changed is part of its record,
 *   like its prompt: compaction removes facts, not records, so a file keeps the context of every
 *   task that changed it, and co-change stays known. Records of tasks that hold nothing else
 *   are bounded in number (see `store/taskRecords.ts` and `forgetTasks`).
 * - `taskTerms`: term -> postings over the task numbers of the contexts of the tasks that still
 *   lend one (a task with a valid fact or an asserted file pair), weighted the same way.
 * - `recent`: the RECENT_TASKS tasks whose latest valid fact is the most recent (then by id), as
 *   task id, time, task id, time, ..., then up to as many more, in order: recency reads it
 *   instead of every task.
 */
import { own } from '../../persistent/owner.js';
import * as PMap from '../../persistent/persistentMap.js';
import { emptyVector, forEachAt, getAt, type PersistentVector, setAt } from '../../persistent/persistentVector.js';
import { isFileFact, type SessionFact } from '../fact.js';
import {
  FLAG_BITS,
  NO_POSTINGS,
  packPosting,
  type Postings,
  postingsSize,
  putPosting,
  removePosting,
} from './postings.js';
import { priorFlags } from './priors.js';
import { isPathLike } from './terms.js';
import { contextTermWeights, factTermWeights, quantize } from './weights.js';

/** What the store knows of a task beyond its facts. */
export interface TaskDoc {
  /** The task's latest recorded prompt ('' when none), and when (absent when none). */
  readonly prompt: string;
  readonly promptAt?: number;
  /** The task's valid `summary` facts: fact id, then the fact's object, in id order. */
  readonly summaries: ReadonlyArray<string>;
  /**
   * The task's valid facts: id -> document number, with the fact's prior flags and whether it
   * is a file fact (see `taskFactEntry`; a map: one result may give a task 100,000 facts, each
   * added in constant time). A query describes the facts of dozens of tasks from these numbers
   * alone, without a lookup in `ids`, in `docs` or of the flags.
   */
  readonly facts: PMap.PersistentMap<number>;
  /**
   * Pair keys of the file facts the task ever asserted, kept when compaction removes the facts (a
   * file's history lends it every modifying task's context; see `SearchIndex.files`).
   */
  readonly touched: PMap.PersistentMap<true>;
  /**
   * Pair keys of the open review items (`issue`, `must_fix`) the task's reviewer asserted that
   * their logs still hold: the pairs a later review of the task may settle, found without a
   * walk over every pair.
   */
  readonly raised: PMap.PersistentMap<true>;
  /** When the task's valid facts were asserted: time, count, time, count, ... by time (a task has a few). */
  readonly times: ReadonlyArray<number>;
  /** The task's number (its document number in `taskTerms`). */
  readonly num: number;
}

/** The store's search index. */
export interface SearchIndex {
  readonly docs: PersistentVector<SessionFact>;
  readonly ids: PMap.PersistentMap<number>;
  readonly nextDoc: number;
  readonly terms: PMap.PersistentMap<Postings>;
  readonly conventionTerms: PMap.PersistentMap<Postings>;
  readonly names: PMap.PersistentMap<Postings>;
  readonly conventions: Postings;
  readonly tasks: PMap.PersistentMap<TaskDoc>;
  readonly taskIds: PersistentVector<string>;
  readonly nextTask: number;
  readonly taskTerms: PMap.PersistentMap<Postings>;
  /** Tasks lending a context that is not empty (see `lendsContext`): the document count of `taskTerms`. */
  readonly contextCount: number;
  /** The most recent tasks by their latest valid fact (see `RECENT_TASKS`): id, time, id, time, ... */
  readonly recent: ReadonlyArray<string | number>;
  /** File pair key -> the pair and the tasks that asserted a fact of it, in id order. */
  readonly files: PMap.PersistentMap<FileRecord>;
}

/** A file pair and the tasks that asserted a fact of it. */
export interface FileRecord {
  readonly subject: string;
  readonly relation: string;
  readonly tasks: ReadonlyArray<string>;
}

/**
 * A file record as a snapshot stores it: its tasks alone, when its key gives back its subject
 * and relation (a snapshot is a sixth smaller without them), else the record itself.
 */
export type StoredFileRecord = FileRecord | ReadonlyArray<string>;

/** The file records as a snapshot stores them (see `StoredFileRecord`). */
export const storedFileRecords = (files: PMap.PersistentMap<FileRecord>): PMap.PersistentMap<StoredFileRecord> =>
  PMap.mapValues(files, (record, key): StoredFileRecord =>
    key.lastIndexOf(PAIR_SEPARATOR) === record.subject.length &&
    key === record.subject + PAIR_SEPARATOR + record.relation
      ? record.tasks
      : record,
  );

/** The file records a snapshot stored, just parsed, made in place what the index holds (not frozen yet). */
export const reviveFileRecords = (stored: PMap.PersistentMap<StoredFileRecord>): PMap.PersistentMap<FileRecord> =>
  PMap.reviveValues(stored, (value, key): FileRecord => {
    if (!Array.isArray(value)) return value as FileRecord;
    const at = key.lastIndexOf(PAIR_SEPARATOR);
    return { subject: key.slice(0, at), relation: key.slice(at + 1), tasks: value };
  });

/** How many of the most recent tasks the index knows exactly, in order (recency reads at most this many). */
export const RECENT_TASKS = 64;
/** How many tasks the recent list may hold: the first RECENT_TASKS are exact, the rest a reserve (see `withRecent`). */
export const RECENT_KEPT = 2 * RECENT_TASKS;

/** What a reducer changed, as the index needs to hear it. */
export interface IndexChanges {
  /** Facts that stopped being valid (before those that became valid: an id may do both). */
  readonly invalid: ReadonlyArray<SessionFact>;
  /** Facts that became valid. */
  readonly valid: ReadonlyArray<SessionFact>;
  /** File pairs a task started asserting (task id, subject, relation): recorded with the task's record. */
  readonly filesAsserted: ReadonlyArray<readonly [string, string, string]>;
  /** Open review items a task's reviewer started asserting (task id, pair key). */
  readonly itemsRaised: ReadonlyArray<readonly [string, string]>;
  /** Open review items a task's reviewer no longer asserts (compaction removed them). */
  readonly itemsDropped: ReadonlyArray<readonly [string, string]>;
}

const NO_ITEMS: ReadonlyArray<string> = Object.freeze([]);

/** Between the subject and the relation of a pair key (as the store's `pairKey` joins them). */
const PAIR_SEPARATOR = '\u001f';

/** An empty index. */
export const emptySearchIndex = (): SearchIndex => ({
  docs: emptyVector,
  ids: PMap.empty,
  nextDoc: 0,
  terms: PMap.empty,
  conventionTerms: PMap.empty,
  names: PMap.empty,
  conventions: NO_POSTINGS,
  tasks: PMap.empty,
  taskIds: emptyVector,
  nextTask: 0,
  taskTerms: PMap.empty,
  contextCount: 0,
  recent: NO_ITEMS,
  files: PMap.empty,
});

type Writable<T> = { -readonly [K in keyof T]: T[K] };

const NO_TIMES: ReadonlyArray<number> = Object.freeze([]);
const EMPTY_TASK_DOC: TaskDoc = Object.freeze({
  prompt: '',
  summaries: NO_ITEMS,
  facts: PMap.empty,
  touched: PMap.empty,
  raised: PMap.empty,
  times: NO_TIMES,
  num: -1,
});

/** The bit of a task's fact entry (`TaskDoc.facts`) that marks a file fact, above its prior flags. */
const FILE_BIT = 1 << FLAG_BITS;
/** A task fact entry is its document number times this, plus the file bit and the prior flags. */
const ENTRY_SCALE = 2 * FILE_BIT;

/** A task's entry for its fact of document `doc`, with the fact's prior flags (see `TaskDoc.facts`). */
export const taskFactEntry = (doc: number, flags: number, isFile: boolean): number =>
  doc * ENTRY_SCALE + (isFile ? FILE_BIT : 0) + flags;
/** The document of a task fact entry. */
export const entryDoc = (entry: number): number => Math.floor(entry / ENTRY_SCALE);
/** The prior flags of a task fact entry. */
export const entryFlags = (entry: number): number => entry % FILE_BIT;
/** True when a task fact entry is a file fact's. */
export const entryIsFile = (entry: number): boolean => entry % ENTRY_SCALE >= FILE_BIT;

/** The name a path-like subject is found by: what follows its last `/`. */
export const fileNameOf = (path: string): string => path.slice(path.lastIndexOf('/') + 1);

/** True when a query naming a path could name this subject (see `namesSubject`). */
const isNamedSubject = (subject: string): boolean => subject.includes('/') || isPathLike(subject);

const post = (
  map: PMap.PersistentMap<Postings>,
  key: string,
  doc: number,
  value: number,
): PMap.PersistentMap<Postings> => {
  const existing = PMap.get(map, key);
  const postings = putPosting(existing ?? NO_POSTINGS, doc, value);
  // A list the run owns was changed in place: the map already holds it.
  return postings === existing ? map : PMap.set(map, key, postings);
};

const unpost = (map: PMap.PersistentMap<Postings>, key: string, doc: number): PMap.PersistentMap<Postings> => {
  const existing = PMap.get(map, key);
  if (existing === undefined) return map;
  const postings = removePosting(existing, doc);
  if (postings === existing) return map;
  return postingsSize(postings) === 0 ? PMap.remove(map, key) : PMap.set(map, key, postings);
};

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
const withSummary = (list: ReadonlyArray<string>, key: string, text: string | undefined): ReadonlyArray<string> => {
  let at = 0;
  while (at < list.length && list[at]! < key) at += 2;
  const present = list[at] === key;
  if (text === undefined)
    return !present ? list : list.length === 2 ? NO_ITEMS : Object.freeze(list.slice(0, at).concat(list.slice(at + 2)));
  if (present && list[at + 1] === text) return list;
  return Object.freeze(list.slice(0, at).concat([key, text], list.slice(present ? at + 2 : at)));
};

/** The times with one more (`by` 1) or one fewer (`by` -1) fact asserted at `at` (the same array, changed, when the run owns it). */
const withTime = (times: ReadonlyArray<number>, at: number, by: 1 | -1): ReadonlyArray<number> => {
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

/** When the task's latest valid fact was asserted (-Infinity when it has none). */
export const lastFactTime = (doc: TaskDoc): number => doc.times[doc.times.length - 2] ?? -Infinity;

/** The texts a task lends its facts as context: its prompt and summaries (in fact-id order), none empty. */
const taskContextPieces = (doc: Pick<TaskDoc, 'prompt' | 'summaries'>): string[] =>
  [doc.prompt, ...doc.summaries.filter((_, i) => i % 2 === 1)].filter((text) => text !== '');

const NO_PIECES: ReadonlyArray<string> = Object.freeze([]);

/**
 * A task lends its context only while it has something to lend it to: a valid fact, or a file
 * pair it asserted. Tasks whose facts compaction has removed leave the context collection, so
 * in a long session the best-matching tasks are ones whose facts can still be found.
 */
const lendsContext = (doc: TaskDoc): boolean => PMap.size(doc.facts) > 0 || PMap.size(doc.touched) > 0;

/** True when task `a` at time `x` is more recent than task `b` at time `y` (ties: the smaller id). */
const isNewer = (a: string, x: number, b: string, y: number): boolean => x > y || (x === y && a < b);

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
const withRecent = (index: Writable<SearchIndex>, taskId: string, time: number): void => {
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
  // The list is changed in place when the run owns it, else a copy is.
  const next = own(list) as Array<string | number>;
  next.splice(at, 2);
  if (time !== -Infinity) {
    const place = placeIn(next, taskId, time);
    // One that was in the list goes past the last only by the refill below, if the list is then short.
    if (place < next.length) next.splice(place, 0, taskId, time);
    next.length = Math.min(next.length, 2 * RECENT_KEPT);
  }
  if (next.length < 2 * RECENT_TASKS) {
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

/**
 * Changes a task's doc (created when missing, dropped when unused). When the change may touch
 * the context the task posts (its prompt or summaries, or whether it lends context at all),
 * re-posts the terms that come, go or change weight.
 */
const updateTask = (
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
        if (!weightsAfter.has(term)) index.taskTerms = unpost(index.taskTerms, term, doc.num);
      });
      weightsAfter.forEach((weight, term) => {
        const previous = weightsBefore.get(term);
        if (previous === undefined || quantize(previous) !== quantize(weight))
          index.taskTerms = post(index.taskTerms, term, doc.num, packPosting(quantize(weight), 0));
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
};

const addFact = (index: Writable<SearchIndex>, fact: SessionFact): void => {
  const doc = index.nextDoc;
  index.nextDoc += 1;
  index.docs = setAt(index.docs, doc, fact);
  index.ids = PMap.set(index.ids, fact.id, doc);
  const flags = priorFlags(fact);
  const convention = fact.tags.includes('convention');
  const weights = factTermWeights(fact);
  for (let i = 0; i < weights.length; i += 2) {
    const term = weights[i] as string;
    const value = packPosting(weights[i + 1] as number, flags);
    if (convention) index.conventionTerms = post(index.conventionTerms, term, doc, value);
    else index.terms = post(index.terms, term, doc, value);
  }
  if (isNamedSubject(fact.subject)) index.names = post(index.names, fileNameOf(fact.subject), doc, flags);
  if (convention) index.conventions = putPosting(index.conventions, doc, flags);
  updateTask(index, fact.sourceTaskId, fact.relation === 'summary', (task) => {
    task.facts = PMap.set(task.facts, fact.id, taskFactEntry(doc, flags, isFileFact(fact)));
    task.times = withTime(task.times, fact.validFrom, 1);
    if (fact.relation === 'summary') task.summaries = withSummary(task.summaries, fact.id, fact.object);
  });
};

const removeFact = (index: Writable<SearchIndex>, fact: SessionFact): void => {
  const doc = PMap.get(index.ids, fact.id);
  if (doc === undefined) return;
  index.docs = setAt(index.docs, doc, undefined);
  index.ids = PMap.remove(index.ids, fact.id);
  const convention = fact.tags.includes('convention');
  const weights = factTermWeights(fact);
  for (let i = 0; i < weights.length; i += 2) {
    const term = weights[i] as string;
    if (convention) index.conventionTerms = unpost(index.conventionTerms, term, doc);
    else index.terms = unpost(index.terms, term, doc);
  }
  if (isNamedSubject(fact.subject)) index.names = unpost(index.names, fileNameOf(fact.subject), doc);
  if (convention) index.conventions = removePosting(index.conventions, doc);
  updateTask(index, fact.sourceTaskId, fact.relation === 'summary', (task) => {
    task.facts = PMap.remove(task.facts, fact.id);
    task.times = withTime(task.times, fact.validFrom, -1);
    task.summaries = withSummary(task.summaries, fact.id, undefined);
  });
};

/** The task's doc with `pairKey` in (`on`) or out of one of its sets of pairs; nothing changes when it already is. */
const markPair = (
  index: Writable<SearchIndex>,
  taskId: string,
  set: 'touched' | 'raised',
  pairKey: string,
  on: boolean,
): void => {
  const known = PMap.get(index.tasks, taskId);
  if ((known !== undefined && PMap.has(known[set], pairKey)) === on) return;
  updateTask(index, taskId, false, (task) => {
    task[set] = on ? PMap.set(task[set], pairKey, true) : PMap.remove(task[set], pairKey);
  });
};

/** Records that a task asserted a fact of a file pair (with the task's record: see `SearchIndex.files`). */
const recordFile = (index: Writable<SearchIndex>, taskId: string, subject: string, relation: string): void => {
  const key = subject + PAIR_SEPARATOR + relation;
  markPair(index, taskId, 'touched', key, true);
  const record = PMap.get(index.files, key);
  if (record?.tasks.includes(taskId) === true) return;
  // In id order: a record is the same however its tasks arrived (a store rebuilt from a saved state holds the same).
  const tasks = Object.freeze([...(record?.tasks ?? NO_ITEMS), taskId].sort());
  index.files = PMap.set(index.files, key, Object.freeze({ subject, relation, tasks }));
};

/**
 * The index without the records of `taskIds`: their prompts, the files they changed and the
 * context they lend. For tasks that no longer hold a valid fact, an open review item or an
 * assertion in a pair log (`pruneTaskRecords` in store/taskRecords.ts chooses them); any other task is left as it is.
 */
export const forgetTasks = (index: SearchIndex, taskIds: ReadonlyArray<string>): SearchIndex =>
  taskIds.length === 0
    ? index
    : PMap.withMutations(index, (current) => {
        const next: Writable<SearchIndex> = { ...current };
        for (const taskId of taskIds) {
          const doc = PMap.get(next.tasks, taskId);
          if (doc === undefined || PMap.size(doc.facts) > 0 || PMap.size(doc.raised) > 0) continue;
          PMap.forEach(doc.touched, (_true, key) => {
            const record = PMap.get(next.files, key);
            if (record === undefined) return;
            const tasks = record.tasks.filter((id) => id !== taskId);
            next.files =
              tasks.length === 0
                ? PMap.remove(next.files, key)
                : PMap.set(next.files, key, Object.freeze({ ...record, tasks: Object.freeze(tasks) }));
          });
          updateTask(next, taskId, true, (task) => {
            task.prompt = '';
            delete task.promptAt;
            task.touched = PMap.empty;
          });
        }
        return next;
      });

/** The index with a reducer's changes applied (the same index when there are none). */
export const applyIndexChanges = (index: SearchIndex, changes: IndexChanges): SearchIndex => {
  const { invalid, valid, filesAsserted, itemsRaised, itemsDropped } = changes;
  const count = invalid.length + valid.length + filesAsserted.length + itemsRaised.length + itemsDropped.length;
  if (count === 0) return index;
  return PMap.withMutations(index, (current) => {
    // A new root every time, even inside a run: a reducer tells a change by the index's identity.
    const next: Writable<SearchIndex> = { ...current };
    for (const fact of invalid) removeFact(next, fact);
    for (const fact of valid) addFact(next, fact);
    for (const [taskId, subject, relation] of filesAsserted) recordFile(next, taskId, subject, relation);
    for (const [taskId, pairKey] of itemsRaised) markPair(next, taskId, 'raised', pairKey, true);
    for (const [taskId, pairKey] of itemsDropped) markPair(next, taskId, 'raised', pairKey, false);
    return next;
  });
};

/** Records a task's prompt (the latest wins; an older one than the recorded prompt, or the same text, changes nothing). */
export const indexTaskPrompt = (index: SearchIndex, taskId: string, prompt: string, at: number): SearchIndex => {
  const doc = PMap.get(index.tasks, taskId);
  if (doc?.promptAt !== undefined && (prompt === doc.prompt || at < doc.promptAt)) return index;
  return PMap.withMutations(index, (current) => {
    const next: Writable<SearchIndex> = { ...current };
    updateTask(next, taskId, true, (task) => {
      task.prompt = prompt;
      task.promptAt = at;
    });
    return next;
  });
};

/**
 * The document a fact record was last found at, by record: a hint, checked against the index
 * it is used with (a document is never numbered again, and an id has at most one document at
 * a time), so that reading a pair's valid facts mostly skips the id map (at 100,000 facts, a
 * lookup in it is a walk of several nodes far apart in memory).
 */
const documentHints = new WeakMap<object, number>();

/** The document of the valid fact of this record's id, or -1 when the index holds none. */
export const indexedDocument = (index: SearchIndex, record: { readonly id: string }): number => {
  const hint = documentHints.get(record);
  if (hint !== undefined && getAt(index.docs, hint)?.id === record.id) return hint;
  const doc = PMap.get(index.ids, record.id);
  if (doc === undefined || getAt(index.docs, doc) === undefined) return -1;
  documentHints.set(record, doc);
  return doc;
};

/** The valid fact with this id, if any. */
export const selectIndexedFact = (index: SearchIndex, id: string): SessionFact | undefined => {
  const doc = PMap.get(index.ids, id);
  return doc === undefined ? undefined : getAt(index.docs, doc);
};

/** The number of valid facts. */
export const selectIndexedCount = (index: SearchIndex): number => PMap.size(index.ids);

/** Every valid fact, in the order they became valid. */
export const selectIndexedFacts = (index: SearchIndex): SessionFact[] => {
  const out: SessionFact[] = [];
  forEachAt(index.docs, (fact) => out.push(fact));
  return out;
};

/** A file a task changed, as recorded in the index. */
export interface RecordedFile {
  readonly taskId: string;
  readonly subject: string;
  readonly relation: string;
}

/** The recorded files, by subject, relation, then task id. */
export const selectIndexedFiles = (index: SearchIndex): RecordedFile[] => {
  const records = PMap.values(index.files).sort((a, b) =>
    a.subject < b.subject
      ? -1
      : a.subject > b.subject
        ? 1
        : a.relation < b.relation
          ? -1
          : a.relation > b.relation
            ? 1
            : 0,
  );
  return records.flatMap(({ subject, relation, tasks }) => tasks.map((taskId) => ({ taskId, subject, relation })));
};

/** The index with files recorded as changed by tasks (those already recorded change nothing). */
export const indexTaskFiles = (index: SearchIndex, files: ReadonlyArray<RecordedFile>): SearchIndex =>
  files.length === 0
    ? index
    : PMap.withMutations(index, (current) => {
        const next: Writable<SearchIndex> = { ...current };
        for (const { taskId, subject, relation } of files) recordFile(next, taskId, subject, relation);
        return next;
      });

/** A task prompt as recorded in the index. */
export interface RecordedPrompt {
  readonly taskId: string;
  readonly prompt: string;
  readonly at: number;
}

/** The recorded task prompts, by task id. */
export const selectIndexedPrompts = (index: SearchIndex): RecordedPrompt[] => {
  const out: RecordedPrompt[] = [];
  PMap.forEach(index.tasks, (doc, taskId) => {
    if (doc.promptAt !== undefined) out.push({ taskId, prompt: doc.prompt, at: doc.promptAt });
  });
  return out.sort((a, b) => (a.taskId < b.taskId ? -1 : a.taskId > b.taskId ? 1 : 0));
};
