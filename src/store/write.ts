/**
 * Applies changed pair logs to a store in one immer producer: the pair's records are derived
 * again and only the records that differ are written, so untouched shards keep their identity.
 */
import type { SessionFact } from '../fact.js';
import { deepFreeze, produce } from '../base/immer.js';
import { shardGet, shardsFrom, shardValues, shardWrite } from './shards.js';
import { type FactStore, type PairLog, pairHash, pairKey, recordKey } from './state.js';
import { deriveRecords } from './timeline.js';
import {
  emptySearchIndex,
  indexFact,
  indexFileAssertion,
  unindexFileAssertion,
  indexTaskPrompt,
  unindexFact,
  finishIndex,
  writeIndex,
} from './searchIndex.js';
import { type Batch, isTransient, type Mutable, trieForEach } from './trie.js';

/** A pair log before and after a reducer's change (`undefined`: no log). */
export interface PairChange {
  readonly before: PairLog | undefined;
  readonly after: PairLog | undefined;
}

/** The log stored for a pair, if any. */
export const selectPairLog = (store: FactStore, subject: string, relation: string): PairLog | undefined => {
  const key = pairKey(subject, relation);
  return shardGet(store.pairs, pairHash(key), key);
};

/** The clears of a pair never invalidated: one shared empty list instead of one per pair. */
export const NO_CLEARS: ReadonlyArray<number> = Object.freeze([]);

/** An empty log for a pair. */
export const emptyPairLog = (subject: string, relation: string): PairLog => ({
  subject,
  relation,
  assertions: [],
  clears: NO_CLEARS,
});

const isOpen = (fact: SessionFact): boolean => fact.validTo === undefined;

/** Facts about files: their history lends them the context of every task that asserted them. */
export const isFileFact = (fact: SessionFact): boolean => fact.tags.includes('file_change');

/** The tasks that asserted a file fact in a pair log. */
const fileTasks = (log: PairLog | undefined): Set<string> =>
  new Set((log?.assertions ?? []).filter(isFileFact).map((fact) => fact.sourceTaskId));

const sameRecord = (a: SessionFact, b: SessionFact): boolean => a === b || (a.validTo === b.validTo && a.id === b.id);

/**
 * The store with every change applied, or the same store when nothing differs. In a transient
 * batch the result is left unfrozen for the batch's owner to seal (see `beginTransientBatch`).
 */
export const writePairChanges = (store: FactStore, changes: ReadonlyArray<PairChange>, batch?: Batch): FactStore => {
  const effective = changes.filter((change) => change.before !== change.after);
  if (effective.length === 0) return store;
  const puts: SessionFact[] = [];
  const deletes: SessionFact[] = [];
  const becameInvalid: SessionFact[] = [];
  const becameValid: SessionFact[] = [];
  for (const { before, after } of effective) {
    const oldRecords = before === undefined ? [] : deriveRecords(before);
    const newRecords = after === undefined ? [] : deriveRecords(after);
    const oldByKey = new Map(oldRecords.map((fact) => [recordKey(fact), fact]));
    const newKeys = new Set<string>();
    for (const fact of newRecords) {
      const key = recordKey(fact);
      newKeys.add(key);
      const old = oldByKey.get(key);
      if (old !== undefined && sameRecord(old, fact)) continue;
      puts.push(fact);
      if (old !== undefined && isOpen(old)) becameInvalid.push(old);
      if (isOpen(fact)) becameValid.push(fact);
    }
    for (const [key, fact] of oldByKey)
      if (!newKeys.has(key)) {
        deletes.push(fact);
        if (isOpen(fact)) becameInvalid.push(fact);
      }
  }
  const writer = writeIndex(store.index, batch);
  for (const fact of becameInvalid) unindexFact(writer, fact);
  for (const fact of becameValid) indexFact(writer, fact);
  for (const { before, after } of effective) {
    const log = (after ?? before)!;
    const key = pairKey(log.subject, log.relation);
    const tasksBefore = fileTasks(before);
    const tasksAfter = fileTasks(after);
    for (const taskId of tasksAfter) if (!tasksBefore.has(taskId)) indexFileAssertion(writer, taskId, key);
    for (const taskId of tasksBefore) if (!tasksAfter.has(taskId)) unindexFileAssertion(writer, taskId, key);
  }
  // The wide collections are copied along one path per change, on plain data (a proxy per
  // node would cost more than the copy), in the same batch as the index; the batch freezes
  // what it created, and the new values are frozen before they enter the producer.
  let pairs = store.pairs;
  let records = store.records;
  for (const { before, after } of effective) {
    const log = (after ?? before)!;
    const key = pairKey(log.subject, log.relation);
    pairs = shardWrite(
      writer.batch,
      pairs,
      pairHash(key),
      key,
      after === undefined ? undefined : freezeLog(after),
      pairHash,
    );
  }
  for (const fact of deletes)
    records = shardWrite(writer.batch, records, fact.id, recordKey(fact), undefined, recordHash);
  for (const fact of puts)
    records = shardWrite(writer.batch, records, fact.id, recordKey(fact), freezeFact(fact), recordHash);
  const index = finishIndex(writer);
  const validCount = store.validCount + becameValid.length - becameInvalid.length;
  if (isTransient(writer.batch)) return { maxValidFacts: store.maxValidFacts, validCount, pairs, records, index };
  return produce(store, (draft: Mutable<FactStore>) => {
    draft.pairs = pairs;
    draft.records = records;
    draft.index = index;
    draft.validCount = validCount;
  });
};

/** A record key starts with its fact id, a hex hash already. */
const recordHash = (key: string): string => key;

/** Freezes a fact and its tag list (shared lists are frozen already). */
const freezeFact = (fact: SessionFact): SessionFact => {
  Object.freeze(fact.tags);
  return Object.freeze(fact);
};

/** Freezes a pair log built by a reducer: its assertions (fresh copies of input facts), their list and its clears. */
const freezeLog = (log: PairLog): PairLog => {
  if (Object.isFrozen(log)) return log;
  for (const fact of log.assertions) freezeFact(fact);
  Object.freeze(log.assertions);
  Object.freeze(log.clears);
  return Object.freeze(log);
};

/** A task prompt as recorded in the index. */
export interface RecordedPrompt {
  readonly taskId: string;
  readonly prompt: string;
  readonly at: number;
}

/** The task prompts recorded in a store. */
export const selectRecordedPrompts = (store: FactStore): RecordedPrompt[] => {
  const out: RecordedPrompt[] = [];
  trieForEach(store.index.tasks, (doc, taskId) => {
    if (doc.promptAt !== undefined) out.push({ taskId, prompt: doc.prompt, at: doc.promptAt });
  });
  return out.sort((a, b) => (a.taskId < b.taskId ? -1 : a.taskId > b.taskId ? 1 : 0));
};

/** A whole store built from pair logs and recorded prompts (where a reducer rewrites most of the state). */
export const buildStore = (
  maxValidFacts: number,
  logs: Iterable<PairLog>,
  prompts: ReadonlyArray<RecordedPrompt> = [],
): FactStore => {
  const pairEntries: Array<readonly [number, string, PairLog]> = [];
  const recordEntries: Array<readonly [string, string, SessionFact]> = [];
  let validCount = 0;
  for (const log of logs) {
    const key = pairKey(log.subject, log.relation);
    pairEntries.push([pairHash(key), key, log]);
    for (const fact of deriveRecords(log)) {
      recordEntries.push([fact.id, recordKey(fact), fact]);
      if (isOpen(fact)) validCount += 1;
    }
  }
  const writer = writeIndex(emptySearchIndex());
  for (const [, , fact] of recordEntries) if (isOpen(fact)) indexFact(writer, fact);
  for (const [, key, log] of pairEntries)
    for (const fact of log.assertions) if (isFileFact(fact)) indexFileAssertion(writer, fact.sourceTaskId, key);
  for (const { taskId, prompt, at } of prompts) indexTaskPrompt(writer, taskId, prompt, at);
  return deepFreeze({
    maxValidFacts,
    validCount,
    pairs: shardsFrom(pairEntries, pairHash),
    records: shardsFrom(recordEntries, recordHash),
    index: finishIndex(writer),
  });
};

/** Every pair log of the store. */
export const selectPairLogs = (store: FactStore): PairLog[] => shardValues(store.pairs);
