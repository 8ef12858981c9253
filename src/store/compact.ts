import { type FactTag, FACT_LIMITS, makeFact, type SessionFact } from '../fact.js';
import { clipEnd } from '../text.js';
import { type FactStore, type PairLog, pairKey, recordKey } from './state.js';
import { byTimeThenId, deriveRecords, validRecords, withAssertions } from './timeline.js';
import { buildStore, emptyPairLog, selectPairLogs, selectRecordedPrompts } from './write.js';

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

/** The log reduced to the runs of its valid facts: history goes, the valid facts stay exactly as they were. */
const pruneToValidRuns = (log: PairLog, closedIds: Set<string>): PairLog | undefined => {
  const records = deriveRecords(log);
  for (const fact of records) if (fact.validTo !== undefined) closedIds.add(fact.id);
  const runStart = new Map(validRecords(records).map((fact) => [fact.id, fact.validFrom]));
  if (runStart.size === 0) return undefined;
  const assertions = log.assertions.filter((fact) => fact.validFrom >= (runStart.get(fact.id) ?? Infinity));
  return { subject: log.subject, relation: log.relation, assertions, clears: [] };
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

/** Mutable working set of pruned logs with a running count of valid facts. */
class Workset {
  readonly logs = new Map<string, PairLog>();
  count = 0;

  constructor(logs: Iterable<PairLog>) {
    for (const log of logs) {
      this.logs.set(pairKey(log.subject, log.relation), log);
      this.count += validRecords(deriveRecords(log)).length;
    }
  }

  validFacts(): SessionFact[] {
    return [...this.logs.values()].flatMap((log) => validRecords(deriveRecords(log)));
  }

  update(subject: string, relation: string, change: (log: PairLog) => PairLog): void {
    const key = pairKey(subject, relation);
    const before = this.logs.get(key) ?? emptyPairLog(subject, relation);
    const after = change(before);
    this.count += validRecords(deriveRecords(after)).length - validRecords(deriveRecords(before)).length;
    if (after.assertions.length === 0) this.logs.delete(key);
    else this.logs.set(key, after);
  }

  remove(fact: SessionFact): void {
    this.update(fact.subject, fact.relation, (log) => ({
      ...log,
      assertions: log.assertions.filter((assertion) => assertion.id !== fact.id),
    }));
  }
}

/**
 * Brings the store within `maxFacts` valid facts: (a) removes history, (b) merges each
 * subject's older valid facts into one `summary_of` fact, subjects with the oldest newest fact
 * first, until within bounds, (c) drops the oldest valid facts if still over. The newest fact
 * survives unchanged, and a store already within bounds is returned as it is.
 */
export const compactWithReport = (
  store: FactStore,
  maxFacts: number,
): { store: FactStore; report: CompactionReport } => {
  if (typeof maxFacts !== 'number' || !(maxFacts >= 0) || store.validCount <= maxFacts)
    return { store, report: emptyReport() };
  const limit = Math.floor(maxFacts);
  const closedIds = new Set<string>();
  const pruned = selectPairLogs(store).flatMap((log) => pruneToValidRuns(log, closedIds) ?? []);
  const work = new Workset(pruned);
  const report = emptyReport();
  report.removedClosed.push(...[...closedIds].sort());

  const valid = work.validFacts().sort(byTimeThenId);
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
    work.update(subject, SUMMARY_RELATION, (log) => withAssertions(log, [summary]));
    report.summaries.push({ id: summary.id, merged: older.map((fact) => fact.id) });
  }

  if (work.count > limit) {
    const oldestFirst = work.validFacts().sort(byTimeThenId);
    for (const fact of oldestFirst) {
      if (work.count <= limit) break;
      if (limit > 0 && newest !== undefined && recordKey(fact) === recordKey(newest)) continue;
      work.remove(fact);
      report.dropped.push(fact.id);
    }
  }
  return { store: buildStore(store.maxValidFacts, work.logs.values(), selectRecordedPrompts(store)), report };
};

/** `compactWithReport` without the report. */
export const compact = (store: FactStore, maxFacts: number): FactStore => compactWithReport(store, maxFacts).store;
