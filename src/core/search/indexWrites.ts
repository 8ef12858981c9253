/**
 * The index's writers: the facts that became valid or stopped being valid (`IndexChanges`, as
 * a reducer hands them over), recorded prompts and files, and forgotten task records. Each
 * returns a new index root and writes in place what the current write run owns.
 */
import { redactSecrets } from '../../base/secrets.js';
import { isBlank } from '../../base/text.js';
import { asOneRun, type Writable } from '../../persistent/owner.js';
import * as PMap from '../../persistent/persistentMap.js';
import { setAt } from '../../persistent/persistentVector.js';
import { isFileFact, type SessionFact } from '../fact.js';
import { packPosting, postIn, putPosting, removePosting, unpostIn } from './postings.js';
import { priorFlags } from './priors.js';
import { withoutPairFact, withPairFact } from './pairFacts.js';
import {
  fileNameOf,
  type IndexChanges,
  PAIR_SEPARATOR,
  type RecordedFile,
  type SearchIndex,
  taskFactEntry,
} from './searchIndex.js';
import { markPair, recordFile, replaceInFileRecords, updateTask, withSummary, withTime } from './taskDocs.js';
import { withoutSessionContext } from './sectionLines.js';
import { isPathLike } from './terms.js';
import { factTermWeights } from './weights.js';

/**
 * A new index root written by `write`, as one write run: a new root every time, even inside a
 * run (a reducer tells a change by the index's identity), its parts changed in place where the
 * run owns them.
 */
const writeIndex = (index: SearchIndex, write: (next: Writable<SearchIndex>) => void): SearchIndex =>
  asOneRun(() => {
    const next: Writable<SearchIndex> = { ...index };
    write(next);
    return next;
  });

/** True when a query naming a path could name this subject (see `namesSubject`). */
const isNamedSubject = (subject: string): boolean => subject.includes('/') || isPathLike(subject);

/**
 * What a write changed that decides which file pairs a task's context can be lent to (see
 * `TaskDoc.live`): the pairs whose valid file facts it changed, each with whether it held one
 * before the write, and the pairs it added to tasks' asserted pairs, by task. Settled once the
 * write is done (`settleLive`), so a pair whose fact a newer one replaces, going empty and
 * filled again within the write, changes nothing.
 */
interface LiveChanges {
  readonly pairs: Map<string, boolean>;
  readonly asserted: Map<string, Set<string>>;
}

const noLiveChanges = (): LiveChanges => ({ pairs: new Map(), asserted: new Map() });

/** Notes, before the write changes them, whether the pair `key` holds a valid file fact. */
const notePair = (index: SearchIndex, live: LiveChanges, key: string): void => {
  if (!live.pairs.has(key)) live.pairs.set(key, PMap.has(index.pairFacts, key));
};

/**
 * Brings `TaskDoc.live` up to date after a write: each pair a task asserted before the write
 * counts one more or one fewer when it started or stopped holding a valid file fact (a file
 * record lists every task that asserted its pair), and each pair it asserted in the write counts
 * when it holds one now.
 */
const settleLive = (index: Writable<SearchIndex>, { pairs, asserted }: LiveChanges): void => {
  const moved = new Map<string, number>();
  const move = (taskId: string, by: number): void => {
    moved.set(taskId, (moved.get(taskId) ?? 0) + by);
  };
  pairs.forEach((before, key) => {
    const after = PMap.has(index.pairFacts, key);
    if (after === before) return;
    for (const taskId of PMap.get(index.files, key)?.tasks ?? [])
      if (asserted.get(taskId)?.has(key) !== true) move(taskId, after ? 1 : -1);
  });
  asserted.forEach((keys, taskId) => {
    for (const key of keys) if (PMap.has(index.pairFacts, key)) move(taskId, 1);
  });
  moved.forEach((by, taskId) => {
    if (by !== 0 && PMap.has(index.tasks, taskId))
      updateTask(index, taskId, false, (task) => {
        task.live += by;
      });
  });
};

const addFact = (index: Writable<SearchIndex>, fact: SessionFact, live: LiveChanges): void => {
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
    if (convention) index.conventionTerms = postIn(index.conventionTerms, term, doc, value);
    else index.terms = postIn(index.terms, term, doc, value);
  }
  if (isNamedSubject(fact.subject)) index.names = postIn(index.names, fileNameOf(fact.subject), doc, flags);
  if (convention) index.conventions = putPosting(index.conventions, doc, flags);
  const entry = taskFactEntry(doc, flags, isFileFact(fact));
  let taskNum = -1;
  updateTask(index, fact.sourceTaskId, fact.relation === 'summary', (task) => {
    task.facts = PMap.set(task.facts, fact.id, entry);
    task.times = withTime(task.times, fact.validFrom, 1);
    if (fact.relation === 'summary') task.summaries = withSummary(task.summaries, fact.id, fact.object);
    taskNum = task.num;
  });
  if (isFileFact(fact)) {
    const key = fact.subject + PAIR_SEPARATOR + fact.relation;
    notePair(index, live, key);
    index.pairFacts = withPairFact(index.pairFacts, index.docs, key, fact.id, entry, taskNum);
  }
};

const removeFact = (index: Writable<SearchIndex>, fact: SessionFact, live: LiveChanges): void => {
  const doc = PMap.get(index.ids, fact.id);
  if (doc === undefined) return;
  index.docs = setAt(index.docs, doc, undefined);
  index.ids = PMap.remove(index.ids, fact.id);
  const convention = fact.tags.includes('convention');
  const weights = factTermWeights(fact);
  for (let i = 0; i < weights.length; i += 2) {
    const term = weights[i] as string;
    if (convention) index.conventionTerms = unpostIn(index.conventionTerms, term, doc);
    else index.terms = unpostIn(index.terms, term, doc);
  }
  if (isNamedSubject(fact.subject)) index.names = unpostIn(index.names, fileNameOf(fact.subject), doc);
  if (convention) index.conventions = removePosting(index.conventions, doc);
  if (isFileFact(fact)) {
    const key = fact.subject + PAIR_SEPARATOR + fact.relation;
    notePair(index, live, key);
    index.pairFacts = withoutPairFact(index.pairFacts, key, doc);
  }
  updateTask(index, fact.sourceTaskId, fact.relation === 'summary', (task) => {
    task.facts = PMap.remove(task.facts, fact.id);
    task.times = withTime(task.times, fact.validFrom, -1);
    task.summaries = withSummary(task.summaries, fact.id, undefined);
  });
};

/**
 * The index without the records of `taskIds`: their prompts, the files they changed and the
 * context they lend. For tasks that no longer hold a valid fact, an open review item or an
 * assertion in a pair log (`pruneTaskRecords` in store/taskRecords.ts chooses them); any other task is left as it is.
 */
export const forgetTasks = (index: SearchIndex, taskIds: ReadonlyArray<string>): SearchIndex =>
  taskIds.length === 0
    ? index
    : writeIndex(index, (next) => {
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
            task.live = 0;
          });
        }
      });

/** Records that a task asserted a fact of a file pair (`recordFile`), noting the pair when the task had not asserted it before. */
const recordFileOf = (
  index: Writable<SearchIndex>,
  live: LiveChanges,
  taskId: string,
  subject: string,
  relation: string,
): void => {
  const key = recordFile(index, taskId, subject, relation);
  if (key === undefined) return;
  const keys = live.asserted.get(taskId);
  if (keys === undefined) live.asserted.set(taskId, new Set([key]));
  else keys.add(key);
};

/** The index with a reducer's changes applied (the same index when there are none). */
export const applyIndexChanges = (index: SearchIndex, changes: IndexChanges): SearchIndex => {
  const { invalid, valid, filesAsserted, itemsRaised, itemsDropped } = changes;
  const count = invalid.length + valid.length + filesAsserted.length + itemsRaised.length + itemsDropped.length;
  if (count === 0) return index;
  return writeIndex(index, (next) => {
    const live = noLiveChanges();
    for (const fact of invalid) removeFact(next, fact, live);
    for (const fact of valid) addFact(next, fact, live);
    for (const [taskId, subject, relation] of filesAsserted) recordFileOf(next, live, taskId, subject, relation);
    for (const [taskId, pairKey] of itemsRaised) markPair(next, taskId, 'raised', pairKey, true);
    for (const [taskId, pairKey] of itemsDropped) markPair(next, taskId, 'raised', pairKey, false);
    settleLive(next, live);
  });
};

/**
 * Records a task's prompt (the latest wins; an older one than the recorded prompt, or the same
 * text, changes nothing), kept for its words: its secrets redacted (a token pasted into one is
 * no word to find a fact by), and without the `[Session Context]` sections it carries from an
 * earlier prompt (their lines are other tasks' facts). A prompt that is nothing else records nothing.
 */
export const indexTaskPrompt = (index: SearchIndex, taskId: string, raw: string, at: number): SearchIndex => {
  const words = withoutSessionContext(raw);
  if (words !== raw && isBlank(words)) return index;
  const prompt = redactSecrets(words);
  const doc = PMap.get(index.tasks, taskId);
  if (doc?.promptAt !== undefined && (prompt === doc.prompt || at < doc.promptAt)) return index;
  // Read before the write: a doc the run owns is changed in place.
  const before = doc?.promptAt;
  return writeIndex(index, (next) => {
    updateTask(next, taskId, true, (task) => {
      task.prompt = prompt;
      task.promptAt = at;
    });
    if (at !== before) replaceInFileRecords(next, taskId);
  });
};

/** The index with files recorded as changed by tasks (those already recorded change nothing). */
export const indexTaskFiles = (index: SearchIndex, files: ReadonlyArray<RecordedFile>): SearchIndex =>
  files.length === 0
    ? index
    : writeIndex(index, (next) => {
        const live = noLiveChanges();
        for (const { taskId, subject, relation } of files) recordFileOf(next, live, taskId, subject, relation);
        settleLive(next, live);
      });
