/**
 * Compaction as first written: every valid fact sorted and every subject sorted, on each
 * call. The store's compaction sorts only what it needs; this slow, obvious version pins down
 * that it decides exactly the same.
 */
import type { SessionFact } from '../../../src/core/fact.js';
import {
  type CompactionReport,
  compactionBase,
  emptyReport,
  isExpendable,
  pruneToValidRuns,
  SUMMARY_RELATION,
  UNMERGED_SHARE,
  withSummary,
  Workset,
} from '../../../src/core/store/compact.js';
import { selectAllFacts } from '../../../src/core/store/selectors.js';
import { type FactStore, pairKey, validCount } from '../../../src/core/store/state.js';
import { byTimeThenId, selectValidOfLog } from '../../../src/core/store/timeline.js';
import { selectPairLog, writePairChanges } from '../../../src/core/store/write.js';

export const referenceCompact = (
  store: FactStore,
  maxFacts: number,
): { store: FactStore; report: CompactionReport } => {
  if (typeof maxFacts !== 'number' || !(maxFacts >= 0) || validCount(store) <= maxFacts)
    return { store, report: emptyReport() };
  const limit = Math.floor(maxFacts);
  const records = selectAllFacts(store);
  const work = new Workset(compactionBase(store));
  const report = emptyReport();
  // (a) History goes: the pairs holding closed records keep only the runs of their valid facts.
  const closedIds = new Set<string>();
  const withHistory = new Map<string, SessionFact>();
  for (const fact of records)
    if (fact.validTo !== undefined) withHistory.set(pairKey(fact.subject, fact.relation), fact);
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
  // No subject merges whose newest fact is one of the most recent limit x UNMERGED_SHARE.
  const recent = Math.floor(limit * UNMERGED_SHARE);
  const isRecent = (fact: SessionFact): boolean => recent > 0 && valid.indexOf(fact) >= valid.length - recent;
  for (const [subject, facts] of subjectsOldestFirst) {
    if (work.count <= limit) break;
    if (isRecent(facts[facts.length - 1]!)) continue;
    // Open review items stay as they are, for the next review of their task to settle.
    const merging = facts.filter(
      (f) => !(f.sourceRole === 'reviewer' && (f.relation === 'issue' || f.relation === 'must_fix')),
    );
    const older = merging.slice(0, -1);
    if (older.length < 2) continue;
    for (const fact of older) work.remove(fact);
    const { log, summary } = withSummary(work.log(subject, SUMMARY_RELATION), subject, older);
    work.set(subject, SUMMARY_RELATION, log);
    report.summaries.push({ id: summary.id, merged: older.map((fact) => fact.id) });
  }

  if (work.count > limit) {
    // The valid facts now: the untouched pairs' as they were, the changed pairs' derived again.
    const changed = [...work.changed.values()];
    const now = valid.filter((fact) => !work.changed.has(pairKey(fact.subject, fact.relation)));
    for (const log of changed) if (log !== undefined) now.push(...selectValidOfLog(log));
    const oldestFirst = now.sort(byTimeThenId);
    // Outcomes, test runs and summaries go first, then the rest, oldest first in each.
    for (const fact of [...oldestFirst.filter(isExpendable), ...oldestFirst.filter((f) => !isExpendable(f))]) {
      if (work.count <= limit) break;
      if (limit > 0 && newest !== undefined && fact.id === newest.id) continue;
      work.remove(fact);
      report.dropped.push(fact.id);
    }
  }
  const changes = work.changes();
  return { store: writePairChanges(store, changes), report };
};
