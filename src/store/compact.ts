import { type FactTag, FACT_LIMITS, makeFact, type SessionFact } from '../fact.js';
import { clipEnd } from '../text.js';
import { type FactStore, type PairLog, pairHash, pairKey, recordKey } from './state.js';
import { byTimeThenId, deriveRecords, validRecords, withAssertions } from './timeline.js';
import { shardGet, shardValues } from './shards.js';
import type { Batch } from './trie.js';
import { emptyPairLog, NO_CLEARS, type PairChange, selectPairLog, writePairChanges } from './write.js';

/** What a compaction removed, so nothing is lost silently. */
export interface CompactionReport {
  /** Ids of the closed records removed (history). */
  readonly removedClosed: string[];
  /** Summary facts created, each with the ids of the valid facts it replaced. */
  readonly summaries: { id: string; merged: string[] }[];
  /** Ids of valid facts dropped because summaries were not enough. */
  readonly dropped: string[];
}

/** The relation of a compaction's summary facts. */
export const SUMMARY_RELATION = 'summary_of';

const emptyReport = (): CompactionReport => ({ removedClosed: [], summaries: [], dropped: [] });

/**
 * The log reduced to the runs of its valid facts (history goes, the valid facts stay exactly
 * as they were), with those valid facts; undefined when nothing of the pair is valid.
 */
const pruneToValidRuns = (log: PairLog, closedIds: Set<string>): { log: PairLog; valid: SessionFact[] } | undefined => {
  const records = deriveRecords(log);
  let hasHistory = log.clears.length > 0;
  for (const fact of records)
    if (fact.validTo !== undefined) {
      closedIds.add(fact.id);
      hasHistory = true;
    }
  const valid = validRecords(records);
  if (valid.length === 0) return undefined;
  if (!hasHistory) return { log, valid };
  const runStart = new Map(valid.map((fact) => [fact.id, fact.validFrom]));
  const assertions = log.assertions.filter((fact) => fact.validFrom >= (runStart.get(fact.id) ?? Infinity));
  return { log: { subject: log.subject, relation: log.relation, assertions, clears: NO_CLEARS }, valid };
};

/** One summary fact standing for `older` (two or more valid facts of one subject, in time order). */
const summarize = (subject: string, older: ReadonlyArray<SessionFact>): SessionFact => {
  const newest = older[older.length - 1]!;
  const tags = [...new Set(older.flatMap((fact) => fact.tags))].slice(0, FACT_LIMITS.maxTags) as FactTag[];
  return makeFact({
    subject,
    relation: SUMMARY_RELATION,
    object: clipEnd(older.map((fact) => `${fact.relation} ${fact.object}`).join('; '), FACT_LIMITS.object),
    tags,
    validFrom: newest.validFrom,
    sourceTaskId: newest.sourceTaskId,
    sourceRole: newest.sourceRole,
    confidence: Math.min(...older.map((fact) => fact.confidence)),
  });
};

/**
 * The pair logs a compaction changes, over the store it compacts, with the running count of
 * valid facts. Pairs it never touches are never derived again, so a compaction costs what it
 * changes plus one pass over the records.
 */
class Workset {
  readonly changed = new Map<string, PairLog | undefined>();
  count: number;

  constructor(private readonly store: FactStore) {
    this.count = store.validCount;
  }

  log(subject: string, relation: string): PairLog | undefined {
    const key = pairKey(subject, relation);
    return this.changed.has(key) ? this.changed.get(key) : selectPairLog(this.store, subject, relation);
  }

  set(subject: string, relation: string, after: PairLog | undefined): void {
    const before = this.log(subject, relation);
    const validIn = (log: PairLog | undefined): number => (log === undefined ? 0 : validRecords(deriveRecords(log)).length);
    this.count += validIn(after) - validIn(before);
    this.changed.set(pairKey(subject, relation), after !== undefined && after.assertions.length === 0 ? undefined : after);
  }

  remove(fact: SessionFact): void {
    const log = this.log(fact.subject, fact.relation);
    if (log === undefined) return;
    this.set(fact.subject, fact.relation, { ...log, assertions: log.assertions.filter((assertion) => assertion.id !== fact.id) });
  }

  /** The valid facts now: the untouched pairs' from `valid`, the changed pairs' derived again. */
  validFacts(valid: ReadonlyArray<SessionFact>): SessionFact[] {
    const kept = valid.filter((fact) => !this.changed.has(pairKey(fact.subject, fact.relation)));
    for (const log of this.changed.values()) if (log !== undefined) kept.push(...validRecords(deriveRecords(log)));
    return kept;
  }

  changes(): PairChange[] {
    return [...this.changed].flatMap(([key, after]) => {
      const before = shardGet(this.store.pairs, pairHash(key), key);
      return before === after ? [] : [{ before, after }];
    });
  }
}

/**
 * Brings the store within `maxFacts` valid facts: (a) removes history, (b) merges each
 * subject's older valid facts into one `summary_of` fact, subjects with the oldest newest fact
 * first, until within bounds, (c) drops the oldest valid facts if still over. The newest fact
 * survives unchanged, and a store already within bounds is returned as it is.
 */
export const compactWithReport = (store: FactStore, maxFacts: number): { store: FactStore; report: CompactionReport } =>
  compactIn(store, maxFacts);

/** `compactWithReport`, writing in `batch` when given (see `writePairChanges`). */
export const compactIn = (
  store: FactStore,
  maxFacts: number,
  batch?: Batch,
): { store: FactStore; report: CompactionReport } => {
  if (typeof maxFacts !== 'number' || !(maxFacts >= 0) || store.validCount <= maxFacts)
    return { store, report: emptyReport() };
  const limit = Math.floor(maxFacts);
  const records = shardValues(store.records);
  const work = new Workset(store);
  const report = emptyReport();
  // (a) History goes: the pairs holding closed records keep only the runs of their valid facts.
  const closedIds = new Set<string>();
  const withHistory = new Map<string, SessionFact>();
  for (const fact of records) if (fact.validTo !== undefined) withHistory.set(pairKey(fact.subject, fact.relation), fact);
  for (const { subject, relation } of withHistory.values()) {
    const log = selectPairLog(store, subject, relation)!;
    work.set(subject, relation, pruneToValidRuns(log, closedIds)?.log);
  }
  report.removedClosed.push(...[...closedIds].sort());

  const valid = records.filter((fact) => fact.validTo === undefined).sort(byTimeThenId);
  const newest = valid[valid.length - 1];
  const bySubject = new Map<string, SessionFact[]>();
  for (const fact of valid) {
    const facts = bySubject.get(fact.subject);
    if (facts === undefined) bySubject.set(fact.subject, [fact]);
    else facts.push(fact);
  }
  const subjectsOldestFirst = [...bySubject.entries()].sort(([, a], [, b]) =>
    byTimeThenId(a[a.length - 1]!, b[b.length - 1]!),
  );
  for (const [subject, facts] of subjectsOldestFirst) {
    if (work.count <= limit) break;
    const older = facts.slice(0, -1);
    if (older.length < 2) continue;
    const summary = summarize(subject, older);
    for (const fact of older) work.remove(fact);
    work.set(subject, SUMMARY_RELATION, withAssertions(work.log(subject, SUMMARY_RELATION) ?? emptyPairLog(subject, SUMMARY_RELATION), [summary]));
    report.summaries.push({ id: summary.id, merged: older.map((fact) => fact.id) });
  }

  if (work.count > limit) {
    const oldestFirst = work.validFacts(valid).sort(byTimeThenId);
    for (const fact of oldestFirst) {
      if (work.count <= limit) break;
      if (limit > 0 && newest !== undefined && recordKey(fact) === recordKey(newest)) continue;
      work.remove(fact);
      report.dropped.push(fact.id);
    }
  }
  const changes = work.changes();
  return { store: writePairChanges(store, changes, batch), report };
};

/** `compactWithReport` without the report. */
export const compact = (store: FactStore, maxFacts: number): FactStore => compactWithReport(store, maxFacts).store;
