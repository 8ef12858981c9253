/**
 * The valid-time rules of one (subject, relation) pair, as pure functions of its log.
 *
 * Walk the pair's assertion times in order. At each time the pair's valid set becomes exactly
 * the facts asserted at that time; an invalidation at time t (taken after the assertions of t)
 * empties it. A fact entering the set opens a record; leaving it closes the record at that
 * time. So a re-asserted valid fact keeps its `validFrom`, a late assertion lands in history
 * already closed at the next newer time, and the outcome depends only on the set of assertions.
 */
import { sliceable } from '../../persistent/sliceable.js';
import type { SessionFact } from '../fact.js';
import type { PairLog } from './state.js';

/** Orders assertions by time, then id. */
export const byTimeThenId = (a: SessionFact, b: SessionFact): number =>
  a.validFrom - b.validFrom || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** The pair's records: closed intervals and the facts valid now, in time order. */
export const deriveRecords = (log: PairLog): SessionFact[] => {
  const records: SessionFact[] = [];
  let open = new Map<string, SessionFact>();
  const close = (fact: SessionFact, at: number): void => {
    records.push({ ...fact, validTo: at });
  };
  const { assertions, clears } = log;
  let i = 0;
  let c = 0;
  while (i < assertions.length || c < clears.length) {
    const nextAssertion = assertions[i]?.validFrom ?? Infinity;
    const nextClear = clears[c] ?? Infinity;
    if (nextAssertion <= nextClear) {
      const at = nextAssertion;
      const next = new Map<string, SessionFact>();
      for (; i < assertions.length && assertions[i]!.validFrom === at; i += 1) {
        const fact = assertions[i]!;
        next.set(fact.id, open.get(fact.id) ?? fact);
      }
      for (const [id, fact] of open) if (!next.has(id)) close(fact, at);
      open = next;
    } else {
      for (const fact of open.values()) close(fact, nextClear);
      open = new Map();
      c += 1;
    }
  }
  for (const fact of open.values()) records.push(fact);
  return records.sort(byTimeThenId);
};

/**
 * False when a log certainly holds no closed record: no invalidation, and every assertion made
 * at one time (most pairs hold a single assertion), so compaction derives only the others.
 */
export const mayHoldHistory = (log: PairLog): boolean =>
  log.clears.length > 0 || log.assertions[0]?.validFrom !== log.assertions[log.assertions.length - 1]?.validFrom;

/**
 * The facts of the pair valid now, in time order: `validRecords(deriveRecords(log))`, without
 * deriving anything for a log that holds no history (its assertions are exactly its valid facts).
 */
export const selectValidOfLog = (log: PairLog): ReadonlyArray<SessionFact> =>
  mayHoldHistory(log) ? validRecords(deriveRecords(log)) : log.assertions;

/** The latest assertion time of the pair, or -Infinity for an empty log. */
export const latestAssertionTime = (log: PairLog): number =>
  log.assertions[log.assertions.length - 1]?.validFrom ?? -Infinity;

/**
 * The log with `facts` asserted, or the same log when every one of them was already asserted
 * at its time (the first assertion of an id at a time is the one kept).
 */
export const withAssertions = (log: PairLog, facts: ReadonlyArray<SessionFact>): PairLog => {
  const seen = new Set(log.assertions.map((fact) => `${fact.id}@${fact.validFrom}`));
  const added: SessionFact[] = [];
  for (const fact of facts) {
    const key = `${fact.id}@${fact.validFrom}`;
    if (seen.has(key)) continue;
    seen.add(key);
    added.push(fact);
  }
  if (added.length === 0) return log;
  // concat, not a spread: the new list is exactly its length (a spread keeps spare slots, and logs are stored).
  return {
    subject: log.subject,
    relation: log.relation,
    assertions: sliceable(log.assertions).concat(added).sort(byTimeThenId),
    clears: log.clears,
  };
};

/**
 * The most assertions a pair's log holds before its history goes (see `collapseToValidRuns`).
 * Compaction removes history only once the store is past its bound: a fact asserted again and
 * again while it stays valid (one task's result sent thousands of times) would otherwise grow
 * its log, and the work of every later assertion of the pair, without end.
 */
export const PAIR_LOG_LIMIT = 128;

/**
 * The log reduced to what its valid facts need: at each time a valid fact's run starts, and at
 * the latest assertion time, the assertions made then of the valid facts whose runs have
 * started; nothing else. Its valid facts come out exactly as they were (each is asserted at
 * every kept time from its run's start, as it was at every assertion time), and so do the
 * assertions of the latest time, which say who raised the pair last. History goes, as in
 * compaction, and so do the repeats of a valid fact between those times. A pair none of whose
 * facts is valid keeps its latest assertions and the invalidation that closed them (see
 * `closedRemnant`). Either way, any later assertion leaves the valid facts the whole log would.
 */
export const collapseToValidRuns = (log: PairLog): PairLog => {
  const valid = validRecords(deriveRecords(log));
  if (valid.length === 0) return closedRemnant(log);
  const runStart = new Map(valid.map((fact) => [fact.id, fact.validFrom]));
  const kept = new Set(runStart.values());
  kept.add(latestAssertionTime(log));
  // A filtered list keeps spare slots; the stored one is copied to its exact length.
  const assertions = log.assertions
    .filter((fact) => kept.has(fact.validFrom) && fact.validFrom >= (runStart.get(fact.id) ?? Infinity))
    .slice();
  // A valid fact's run holds no invalidation, and every run starts after any there was.
  return { subject: log.subject, relation: log.relation, assertions, clears: [] };
};

/**
 * What a pair whose facts were all invalidated needs to stay so: the assertions of its latest
 * time and the invalidations from that time on (the one that closed them). Without them, an
 * assertion arriving late, at a time before the invalidation, would land in an empty pair and be
 * valid, as if the pair had never been invalidated.
 */
const closedRemnant = (log: PairLog): PairLog => {
  const latest = latestAssertionTime(log);
  return {
    subject: log.subject,
    relation: log.relation,
    // Filtered lists keep spare slots; the stored ones are copied to their exact length.
    assertions: log.assertions.filter((fact) => fact.validFrom === latest).slice(),
    clears: log.clears.filter((at) => at >= latest).slice(),
  };
};

/** The log with an invalidation at `at` (the caller checks that it closes something). */
export const withClear = (log: PairLog, at: number): PairLog =>
  log.clears.includes(at)
    ? log
    : {
        subject: log.subject,
        relation: log.relation,
        assertions: log.assertions,
        clears: sliceable(log.clears)
          .concat([at])
          .sort((a, b) => a - b),
      };

/** The facts of the pair that are valid now. */
export const validRecords = (records: ReadonlyArray<SessionFact>): SessionFact[] =>
  records.filter((fact) => fact.validTo === undefined);
