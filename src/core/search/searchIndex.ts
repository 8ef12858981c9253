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
 * - `files`: per file pair, the tasks that asserted it, latest prompt first. What a task changed is part of its record,
 *   like its prompt: compaction removes facts, not records, so a file keeps the context of every
 *   task that changed it, and co-change stays known. Records of tasks that hold nothing else
 *   are bounded in number (see `store/taskRecords.ts` and `forgetTasks`).
 * - `taskTerms`: term -> postings over the task numbers of the contexts of the tasks that still
 *   lend one (a task with a valid fact, or an asserted file pair that holds one), weighted the same way.
 * - `pairFacts`: per (subject, relation) pair key, its valid file facts' task entries and task
 *   numbers (see `pairFacts.ts`), so a query reads a context pair's facts with one lookup.
 * - `recent`: the RECENT_TASKS tasks whose latest valid fact is the most recent (then by id), as
 *   task id, time, task id, time, ..., then up to as many more, in order: recency reads it
 *   instead of every task.
 * - `prompted`: the OLD_TASK_AFTER tasks whose recorded prompt is the latest (then by id), as
 *   task number, time, ...: a task whose prompt is older than all of them is an old one, whose
 *   context counts for less (`RankingOptions.contextOld`).
 *
 * This module is the index's shape and encodings; it is written by `indexWrites.ts` (with
 * `taskDocs.ts`, `recent.ts` and `prompted.ts`) and read through `indexReads.ts`.
 */
import * as PMap from '../../persistent/persistentMap.js';
import { emptyVector, type PersistentVector } from '../../persistent/persistentVector.js';
import type { SessionFact } from '../fact.js';
import { FLAG_BITS, NO_POSTINGS, type Postings } from './postings.js';

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
  /**
   * How many of the pairs in `touched` hold a valid file fact (`SearchIndex.pairFacts`): the
   * pairs the task's context can still be lent to (see `lendsContext` in taskDocs.ts).
   */
  readonly live: number;
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
  /** The OLD_TASK_AFTER tasks with the latest recorded prompts (see `prompted.ts`): number, time, number, time, ... latest first. */
  readonly prompted: ReadonlyArray<number>;
  /** File pair key -> the pair and the tasks that asserted a fact of it, latest prompt first (see `FileRecord`). */
  readonly files: PMap.PersistentMap<FileRecord>;
  /** Pair key -> its valid file facts: task fact entry, task number, ... by fact id descending (see `pairFacts.ts`). */
  readonly pairFacts: PMap.PersistentMap<ReadonlyArray<number>>;
}

/** Orders (subject, relation) pairs by subject, then relation: how pairs are listed wherever they are written out. */
export const bySubjectThenRelation = (
  a: { readonly subject: string; readonly relation: string },
  b: { readonly subject: string; readonly relation: string },
): number =>
  a.subject < b.subject
    ? -1
    : a.subject > b.subject
      ? 1
      : a.relation < b.relation
        ? -1
        : a.relation > b.relation
          ? 1
          : 0;

/** A file pair and the tasks that asserted a fact of it. */
export interface FileRecord {
  readonly subject: string;
  readonly relation: string;
  /**
   * By the time of the task's latest prompt, latest first (tasks without one last), then id:
   * the same however the tasks arrived, and co-change, which reads a file's latest tasks,
   * stops at the first ones instead of reading every task that ever changed a manifest.
   */
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
/**
 * How many tasks must have had a prompt recorded after a task's own for it to be an old one (see
 * `prompted.ts`): the length of the histories the ranking is fitted on, whose tasks are none so
 * old, so only a longer session's oldest tasks are told apart.
 */
export const OLD_TASK_AFTER = 150;

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

/** The empty list of strings an index shares. */
export const NO_ITEMS: ReadonlyArray<string> = Object.freeze([]);

/** The empty list of numbers an index shares. */
export const NO_NUMBERS: ReadonlyArray<number> = Object.freeze([]);

/** Between the subject and the relation of a pair key (as the store's `pairKey` joins them). */
export const PAIR_SEPARATOR = '\u001f';

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
  prompted: NO_NUMBERS,
  files: PMap.empty,
  pairFacts: PMap.empty,
});

/** A task's times when it has no valid fact. */
export const NO_TIMES: ReadonlyArray<number> = Object.freeze([]);
/** The doc of a task the index does not know yet. */
export const EMPTY_TASK_DOC: TaskDoc = Object.freeze({
  prompt: '',
  summaries: NO_ITEMS,
  facts: PMap.empty,
  touched: PMap.empty,
  raised: PMap.empty,
  times: NO_TIMES,
  live: 0,
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

/** When the task's latest valid fact was asserted (-Infinity when it has none). */
export const lastFactTime = (doc: TaskDoc): number => doc.times[doc.times.length - 2] ?? -Infinity;

/** A file a task changed, as recorded in the index. */
export interface RecordedFile {
  readonly taskId: string;
  readonly subject: string;
  readonly relation: string;
}

/** A task prompt as recorded in the index. */
export interface RecordedPrompt {
  readonly taskId: string;
  readonly prompt: string;
  readonly at: number;
}
