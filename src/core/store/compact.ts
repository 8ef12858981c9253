import { type FactTag, FACT_LIMITS, makeFact, type SessionFact } from '../fact.js';
import { clipEndRedacted } from '../../base/secrets.js';
import * as PMap from '../../persistent/persistentMap.js';
import { asOneRun } from '../../persistent/owner.js';
import { type FactStore, type PairLog, pairKey, validCount } from './state.js';
import { checkedFactStore, handedBack } from './storeShape.js';
import {
  byTimeThenId,
  deriveRecords,
  latestAssertionTime,
  mayHoldHistory,
  selectValidOfLog,
  validRecords,
  withAssertions,
} from './timeline.js';
import { isExpendable, MERGEABLE, validOrder, type ValidOrder } from './validOrder.js';

export { isExpendable } from './validOrder.js';
import { emptyPairLog, isOpenReviewItem, NO_CLEARS, type PairChange, writePairChanges } from './write.js';

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

export const emptyReport = (): CompactionReport => ({ removedClosed: [], summaries: [], dropped: [] });

/**
 * The log reduced to the runs of its valid facts (history goes, the valid facts stay exactly
 * as they were), with those valid facts; undefined when nothing of the pair is valid.
 */
export const pruneToValidRuns = (
  log: PairLog,
  closedIds: Set<string>,
): { log: PairLog; valid: SessionFact[] } | undefined => {
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
  // A filtered list keeps spare slots; the stored one is copied to its exact length.
  const assertions = log.assertions.filter((fact) => fact.validFrom >= (runStart.get(fact.id) ?? Infinity)).slice();
  return { log: { subject: log.subject, relation: log.relation, assertions, clears: NO_CLEARS }, valid };
};

/**
 * `relation object; relation object; ...` of the facts, clipped to the object limit (only as
 * much as the limit needs is joined), with a secret the clip makes of facts holding none redacted.
 */
const summaryText = (older: ReadonlyArray<SessionFact>): string => {
  let text = '';
  for (const fact of older) {
    text += `${text === '' ? '' : '; '}${fact.relation} ${fact.object}`;
    if (text.length > FACT_LIMITS.object) break;
  }
  return clipEndRedacted(text, FACT_LIMITS.object);
};

/**
 * One summary fact standing for `older` (two or more valid facts of one subject, in time
 * order), asserted when the newest of them was, or at `notBefore` when that is later.
 */
export const summarize = (subject: string, older: ReadonlyArray<SessionFact>, notBefore = -Infinity): SessionFact => {
  const newest = older[older.length - 1]!;
  const tags = [...new Set(older.flatMap((fact) => fact.tags))].slice(0, FACT_LIMITS.maxTags) as FactTag[];
  return makeFact({
    subject,
    relation: SUMMARY_RELATION,
    object: summaryText(older),
    tags,
    validFrom: Math.max(newest.validFrom, notBefore),
    sourceTaskId: newest.sourceTaskId,
    sourceRole: newest.sourceRole,
    confidence: older.reduce((lowest, fact) => Math.min(lowest, fact.confidence), newest.confidence),
  });
};

/**
 * The subject's summary log (`log`, if any, once the merged facts are gone) with the summary
 * of `older` asserted. The summary must be valid once asserted: a summary asserted before the
 * log's latest assertion would be closed at once, left behind as history by the compaction that
 * made it, and the facts it stands for lost with it. So it is asserted no earlier than that.
 */
export const withSummary = (
  log: PairLog | undefined,
  subject: string,
  older: ReadonlyArray<SessionFact>,
): { log: PairLog; summary: SessionFact } => {
  const summaries = log ?? emptyPairLog(subject, SUMMARY_RELATION);
  const summary = summarize(subject, older, latestAssertionTime(summaries));
  return { log: withAssertions(summaries, [summary]), summary };
};

/**
 * What a compaction starts from: a store, the pair logs a write has changed since (`pending`,
 * by pair key, not yet written to the store's index; undefined: no log), and the valid facts
 * and their order with those changes made. `addFacts` compacts what it adds before writing it,
 * so a fact that goes at once is never indexed.
 */
export interface CompactionBase {
  readonly store: FactStore;
  readonly pending: ReadonlyMap<string, PairLog | undefined>;
  readonly order: ValidOrder;
  readonly count: number;
}

/** A store as it is, as a compaction starts from it. */
export const compactionBase = (store: FactStore): CompactionBase => ({
  store,
  pending: new Map(),
  order: validOrder(store.index),
  count: validCount(store),
});

/** The log of a pair in the base: its pending change, else the store's. */
const baseLog = (base: CompactionBase, key: string): PairLog | undefined =>
  base.pending.has(key) ? base.pending.get(key) : PMap.get(base.store.pairs, key);

/**
 * The pair logs a compaction changes, over the base it compacts, with the running count of
 * valid facts. Pairs it never touches are never derived again, and the valid facts are read in
 * order from the base's order, so a compaction costs about what it changes.
 */
export class Workset {
  readonly changed = new Map<string, PairLog | undefined>();
  /** Subjects of the changed pairs: most facts are of an untouched subject, found without building a key. */
  private readonly subjects = new Set<string>();
  count: number;

  constructor(private readonly base: CompactionBase) {
    this.count = base.count;
  }

  log(subject: string, relation: string): PairLog | undefined {
    const key = pairKey(subject, relation);
    return this.changed.has(key) ? this.changed.get(key) : baseLog(this.base, key);
  }

  set(subject: string, relation: string, after: PairLog | undefined): void {
    const before = this.log(subject, relation);
    const validIn = (log: PairLog | undefined): number => (log === undefined ? 0 : selectValidOfLog(log).length);
    this.count += validIn(after) - validIn(before);
    this.changed.set(
      pairKey(subject, relation),
      after !== undefined && after.assertions.length === 0 ? undefined : after,
    );
    this.subjects.add(subject);
  }

  /** Removes the fact's assertions. */
  remove(fact: SessionFact): void {
    this.removeAll([fact]);
  }

  /** Removes these facts' assertions, each pair's once for all of its facts (a pair may hold thousands). */
  removeAll(facts: ReadonlyArray<SessionFact>): void {
    const byPair = new Map<string, { subject: string; relation: string; ids: Set<string> }>();
    for (const fact of facts) {
      const key = pairKey(fact.subject, fact.relation);
      const group = byPair.get(key);
      if (group === undefined)
        byPair.set(key, { subject: fact.subject, relation: fact.relation, ids: new Set([fact.id]) });
      else group.ids.add(fact.id);
    }
    for (const { subject, relation, ids } of byPair.values()) {
      const log = this.log(subject, relation);
      if (log === undefined) continue;
      const assertions = log.assertions.filter((assertion) => !ids.has(assertion.id)).slice();
      this.set(subject, relation, { subject: log.subject, relation: log.relation, assertions, clears: log.clears });
    }
  }

  /**
   * The valid facts now that `keep` keeps, oldest first, one per call (undefined past the last):
   * the untouched pairs' from `byTime` (the valid facts before the changes that `keep` keeps, in
   * time order), the changed pairs' derived again. Later changes do not change what it gives.
   */
  oldestFirst(
    byTime: ReadonlyArray<SessionFact>,
    keep: (fact: SessionFact) => boolean = () => true,
  ): () => SessionFact | undefined {
    const changed = new Set(this.changed.keys());
    const subjects = new Set(this.subjects);
    const isChanged = (fact: SessionFact): boolean =>
      subjects.has(fact.subject) && changed.has(pairKey(fact.subject, fact.relation));
    const derived: SessionFact[] = [];
    for (const log of this.changed.values())
      if (log !== undefined) for (const fact of selectValidOfLog(log)) if (keep(fact)) derived.push(fact);
    derived.sort(byTimeThenId);
    let i = 0;
    let j = 0;
    return () => {
      while (i < byTime.length && isChanged(byTime[i]!)) i += 1;
      const kept = byTime[i];
      const other = derived[j];
      if (kept === undefined || (other !== undefined && byTimeThenId(other, kept) < 0)) {
        if (other !== undefined) j += 1;
        return other;
      }
      i += 1;
      return kept;
    };
  }

  /** The changes to the base's logs (what they are after its pending changes, as they become). */
  changes(): PairChange[] {
    return [...this.changed].flatMap(([key, after]) => {
      const before = baseLog(this.base, key);
      return before === after ? [] : [{ before, after }];
    });
  }
}

/**
 * The share of the bound, counted in the most recent valid facts, whose subjects compaction does
 * not merge. A store at its bound compacts on every dispatch, and once the older subjects are
 * merged the only ones left to merge are the latest tasks': each task's facts became one
 * `summary_of` line as soon as they arrived, merged again with the next dispatch's (on the
 * bench's history, a summary of a summary was common: see docs/performance.md). Left alone, a
 * recent task keeps its facts as they were given, and what goes is the oldest outcomes, test runs
 * and summaries, as step (c) orders.
 */
export const UNMERGED_SHARE = 0.25;

/**
 * True for an open item a review raised (`issue`, `must_fix`): compaction never merges one into a
 * summary, since the next review of its task settles it by closing its pair, and a summary
 * holding its text would go on claiming it once it is fixed.
 */
const awaitsSettling = (fact: SessionFact): boolean =>
  fact.sourceRole === 'reviewer' && isOpenReviewItem(fact.relation);

/**
 * Brings the store within `maxFacts` valid facts: (a) removes history, (b) merges each
 * subject's older valid facts into one `summary_of` fact, subjects with the oldest newest fact
 * first, until within bounds, but no subject whose newest fact is one of the most recent
 * `maxFacts` x UNMERGED_SHARE, and no open review item (see `awaitsSettling`), (c) drops valid facts if still over: first the outcomes, test
 * runs and summaries of tasks, oldest first, then the oldest of the rest. The newest fact
 * survives unchanged (a bound of 0 keeps none), and a store already within bounds is returned as it is.
 */
export const compactWithReport = (
  store: FactStore,
  maxFacts: number,
): { store: FactStore; report: CompactionReport } => {
  checkedFactStore(store);
  if (typeof maxFacts !== 'number' || !(maxFacts >= 0) || validCount(store) <= maxFacts)
    return { store: handedBack(store, store), report: emptyReport() };
  const { changes, report } = planCompaction(compactionBase(store), maxFacts);
  return { store: asOneRun(() => writePairChanges(store, changes)), report };
};

/**
 * The changes `compactWithReport` makes to a base over `maxFacts` valid facts (a number, 0 or
 * more), relative to the base's logs, and its report.
 */
export const planCompaction = (
  base: CompactionBase,
  maxFacts: number,
): { changes: PairChange[]; report: CompactionReport } => {
  const { store, order } = base;
  const limit = Math.floor(maxFacts);
  const work = new Workset(base);
  const report = emptyReport();
  // (a) History goes: the pairs holding closed records keep only the runs of their valid facts.
  const closedIds = new Set<string>();
  const pruneHistory = (key: string): void => {
    const log = baseLog(base, key);
    if (log !== undefined && mayHoldHistory(log)) {
      const pruned = pruneToValidRuns(log, closedIds);
      if (pruned?.log !== log) work.set(log.subject, log.relation, pruned?.log);
    }
  };
  // Only the pairs that may hold some are read, not every pair: the store's, then those a
  // pending change gave history.
  PMap.forEach(store.historyPairs, (_true, key) => pruneHistory(key));
  base.pending.forEach((log, key) => {
    if (log !== undefined && !PMap.has(store.historyPairs, key)) pruneHistory(key);
  });
  for (const id of [...closedIds].sort()) report.removedClosed.push(id);

  // (b) Only subjects with two or more facts besides their newest can merge (the order keeps
  // them apart), open review items not counted, which never merge; subjects with the oldest
  // newest fact merge first, and none whose newest fact is one of the most recent (see UNMERGED_SHARE).
  const newest = order.byTime[order.byTime.length - 1];
  const recent = Math.floor(limit * UNMERGED_SHARE);
  const firstRecent = recent > 0 ? order.byTime[order.byTime.length - recent] : undefined;
  const mergeable: Array<{ latest: SessionFact; merging: SessionFact[] }> = [];
  for (const subject of order.mergeable) {
    const facts = order.bySubject.get(subject)!;
    // A recent subject is left out before its facts are copied and sorted (at the bound, on every dispatch).
    let latest = facts[0]!;
    for (const fact of facts) if (byTimeThenId(fact, latest) > 0) latest = fact;
    if (firstRecent !== undefined && byTimeThenId(latest, firstRecent) >= 0) continue;
    const merging = facts.filter((fact) => !awaitsSettling(fact));
    if (merging.length >= MERGEABLE) mergeable.push({ latest, merging: merging.sort(byTimeThenId) });
  }
  mergeable.sort((a, b) => byTimeThenId(a.latest, b.latest));
  for (const { merging: facts } of mergeable) {
    if (work.count <= limit) break;
    const subject = facts[0]!.subject;
    const older = facts.slice(0, -1);
    work.removeAll(older);
    const { log, summary } = withSummary(work.log(subject, SUMMARY_RELATION), subject, older);
    work.set(subject, SUMMARY_RELATION, log);
    report.summaries.push({ id: summary.id, merged: older.map((fact) => fact.id) });
  }

  // (c) Facts go until within bounds: first those that only say how a task went (its outcome,
  // its test runs, its summary: the kinds ranking weighs least, and a task's prompt still lends
  // its context), oldest first, then any, oldest first. A removal lowers the count by one at most
  // (it may reopen an older fact of its pair), so the next `count - limit` candidates would all go
  // one by one: they go together, then the count is checked again. The candidates are the valid
  // facts after (b), oldest first, read only as far as needed.
  for (const expendableOnly of [true, false]) {
    if (work.count <= limit) break;
    const oldestFirst = expendableOnly
      ? work.oldestFirst(order.expendable, isExpendable)
      : work.oldestFirst(order.byTime);
    let fact = oldestFirst();
    while (work.count > limit && fact !== undefined) {
      const batch: SessionFact[] = [];
      for (let need = work.count - limit; need > 0 && fact !== undefined; fact = oldestFirst()) {
        if (limit > 0 && newest !== undefined && fact.id === newest.id) continue;
        if (expendableOnly && !isExpendable(fact)) continue;
        batch.push(fact);
        need -= 1;
      }
      work.removeAll(batch);
      for (const dropped of batch) report.dropped.push(dropped.id);
    }
  }
  return { changes: work.changes(), report };
};

/** `compactWithReport` without the report. */
export const compact = (store: FactStore, maxFacts: number): FactStore => compactWithReport(store, maxFacts).store;
