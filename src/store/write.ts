/**
 * Applies changed pair logs to a store in one immer producer: the pair's records are derived
 * again and only the records that differ are written, so untouched shards keep their identity.
 */
import type { SessionFact } from '../fact.js';
import { deepFreeze, produce } from './immer.js';
import { shardDelete, shardGet, shardPut, shardsFrom, shardValues } from './shards.js';
import { type FactStore, type PairLog, pairHash, pairKey, recordKey } from './state.js';
import { deriveRecords } from './timeline.js';

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

/** An empty log for a pair. */
export const emptyPairLog = (subject: string, relation: string): PairLog => ({ subject, relation, assertions: [], clears: [] });

const isOpen = (fact: SessionFact): boolean => fact.validTo === undefined;

const sameRecord = (a: SessionFact, b: SessionFact): boolean => a === b || (a.validTo === b.validTo && a.id === b.id);

/** The store with every change applied, or the same store when nothing differs. */
export const writePairChanges = (store: FactStore, changes: ReadonlyArray<PairChange>): FactStore => {
  const effective = changes.filter((change) => change.before !== change.after);
  if (effective.length === 0) return store;
  const puts: SessionFact[] = [];
  const deletes: SessionFact[] = [];
  let validDelta = 0;
  for (const { before, after } of effective) {
    const oldRecords = before === undefined ? [] : deriveRecords(before);
    const newRecords = after === undefined ? [] : deriveRecords(after);
    const oldByKey = new Map(oldRecords.map((fact) => [recordKey(fact), fact]));
    const newKeys = new Set<string>();
    for (const fact of newRecords) {
      const key = recordKey(fact);
      newKeys.add(key);
      const old = oldByKey.get(key);
      if (old === undefined || !sameRecord(old, fact)) puts.push(fact);
    }
    for (const [key, fact] of oldByKey) if (!newKeys.has(key)) deletes.push(fact);
    validDelta += newRecords.filter(isOpen).length - oldRecords.filter(isOpen).length;
  }
  return produce(store, (draft) => {
    for (const { before, after } of effective) {
      const log = (after ?? before)!;
      const key = pairKey(log.subject, log.relation);
      if (after === undefined) shardDelete(draft.pairs, pairHash(key), key);
      else shardPut(draft.pairs, pairHash(key), key, after);
    }
    for (const fact of deletes) shardDelete(draft.records, fact.id, recordKey(fact));
    for (const fact of puts) shardPut(draft.records, fact.id, recordKey(fact), fact);
    draft.validCount += validDelta;
  });
};

/** A whole store built from pair logs (used where a reducer rewrites most of the state). */
export const buildStore = (maxValidFacts: number, logs: Iterable<PairLog>): FactStore => {
  const pairEntries: Array<readonly [string, string, PairLog]> = [];
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
  return deepFreeze({ maxValidFacts, validCount, pairs: shardsFrom(pairEntries), records: shardsFrom(recordEntries) });
};

/** Every pair log of the store. */
export const selectPairLogs = (store: FactStore): PairLog[] => shardValues(store.pairs);
