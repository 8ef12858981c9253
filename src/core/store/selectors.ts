import { refuseArgument } from '../../base/describe.js';
import { refuseUnlessDenseArray } from '../../base/record.js';
import { isWithinYears } from '../../base/time.js';
import * as PMap from '../../persistent/persistentMap.js';
import { type FactTag, hasWantedTag, type SessionFact } from '../fact.js';
import { selectIndexedFacts } from '../search/indexReads.js';
import { type FactStore, validCount } from './state.js';
import { checkedFactStore } from './storeShape.js';
import { byTimeThenId, deriveRecords } from './timeline.js';
import { selectRecordedPrompts } from './write.js';

/**
 * What the selectors derived from a store, by store: a store is a frozen value, so a list once
 * derived from it holds for as long as the store lives (kept weakly, with it). An explicit
 * object: `selectorMemo` is the one the selectors use.
 */
export interface SelectorMemo {
  readonly allFacts: WeakMap<FactStore, ReadonlyArray<SessionFact>>;
  readonly validFacts: WeakMap<FactStore, ReadonlyArray<SessionFact>>;
}

/** An empty memo. */
export const createSelectorMemo = (): SelectorMemo => ({ allFacts: new WeakMap(), validFacts: new WeakMap() });

/** The memo the store selectors use (threading one through every caller of a selector would say nothing new). */
export const selectorMemo: SelectorMemo = createSelectorMemo();

const remembered = (
  table: WeakMap<FactStore, ReadonlyArray<SessionFact>>,
  store: FactStore,
  compute: () => SessionFact[],
): ReadonlyArray<SessionFact> => {
  const known = table.get(store);
  if (known !== undefined) return known;
  const value = Object.freeze(compute());
  table.set(store, value);
  return value;
};

/** Every record, closed history included, by `validFrom` then id. */
export const selectAllFacts = (store: FactStore): ReadonlyArray<SessionFact> =>
  remembered(selectorMemo.allFacts, checkedFactStore(store), () =>
    PMap.values(store.pairs)
      .flatMap((log) => deriveRecords(log).map((fact) => (fact.validTo === undefined ? fact : Object.freeze(fact))))
      .sort(byTimeThenId),
  );

/** The facts valid now, by `validFrom` then id. */
export const selectValidFacts = (store: FactStore): ReadonlyArray<SessionFact> =>
  remembered(selectorMemo.validFacts, checkedFactStore(store), () =>
    selectIndexedFacts(store.index).sort(byTimeThenId),
  );

/** The valid facts carrying any of `tags`. */
export const selectValidFactsByTags = (store: FactStore, tags: ReadonlyArray<FactTag>): ReadonlyArray<SessionFact> => {
  refuseUnlessDenseArray('the tags', tags, 'an array of fact tags');
  const wanted = new Set<string>(tags);
  return Object.freeze(selectValidFacts(store).filter((fact) => hasWantedTag(fact, wanted)));
};

/** The number of valid facts. */
export const selectValidCount = (store: FactStore): number => validCount(checkedFactStore(store));

/**
 * The latest time the store records (an assertion, a closing, a prompt), or undefined for an
 * empty store. A closing compaction removed with its pair is one its tombstone still records:
 * it still closes what is asserted at or before it.
 */
export const selectLatestTime = (store: FactStore): number | undefined => {
  let latest = -Infinity;
  const { pairs, tombstones } = checkedFactStore(store);
  for (const log of PMap.values(pairs)) {
    for (const fact of log.assertions) latest = Math.max(latest, fact.validFrom);
    for (const at of log.clears) latest = Math.max(latest, at);
  }
  if (tombstones !== undefined)
    PMap.forEach(tombstones, (at) => {
      latest = Math.max(latest, at);
    });
  for (const recorded of selectRecordedPrompts(store)) latest = Math.max(latest, recorded.at);
  return latest === -Infinity ? undefined : latest;
};

/**
 * Where a history that resumes from the store goes on (`replayHistory`'s `initial`): its last
 * event's time when a replay recorded it, else (a store saved before states kept it, or written
 * since) the latest time it records, so the lines come after its facts rather than before them.
 */
export const selectResumeTime = (store: FactStore): number | undefined => {
  const { lastEventAt } = checkedFactStore(store);
  // A store built by hand may hold anything there: only a time a history can hold is one.
  return typeof lastEventAt === 'number' && isWithinYears(lastEventAt) ? lastEventAt : selectLatestTime(store);
};

/**
 * The facts whose interval holds `at`: validFrom <= at < validTo (or no validTo). A time that is
 * no number (undefined from an unset variable, a time as text) or NaN is refused with a TypeError
 * naming it: compared as it is, it would answer that no fact was valid then.
 */
export const selectFactsValidAt = (store: FactStore, at: number): ReadonlyArray<SessionFact> => {
  checkedFactStore(store);
  if (typeof at !== 'number') refuseArgument('the time', at, 'a number (epoch milliseconds)');
  if (Number.isNaN(at)) throw new TypeError('the time is NaN, not a number (epoch milliseconds)');
  return Object.freeze(
    selectAllFacts(store).filter((fact) => fact.validFrom <= at && (fact.validTo === undefined || at < fact.validTo)),
  );
};

/** What `selectFactsWhere` keeps: every given condition must hold. */
export interface FactFilter {
  /** Closed facts too (with `asOf`: every fact asserted by then, as it stood then: one closed later is valid). */
  readonly all?: boolean;
  /** The facts valid at this time instead of now, as they stood then: one closed later is valid. */
  readonly asOf?: number;
  /** Facts carrying any of these tags (none: any tag). */
  readonly tags?: ReadonlyArray<FactTag>;
  /** Facts whose subject contains this text, ignoring case. */
  readonly subject?: string;
}

/** A fact closed after the time a selection looks at, as it stood then: still valid. */
const openAsOf = ({ validTo: _closed, ...fact }: SessionFact): SessionFact => Object.freeze(fact);

/** The facts as they stood at `asOf`: those closed later are still valid. */
const asTheyStood = (facts: ReadonlyArray<SessionFact>, asOf: number): ReadonlyArray<SessionFact> =>
  facts.map((fact) => (fact.validTo !== undefined && fact.validTo > asOf ? openAsOf(fact) : fact));

/** The facts `filter` selects, by `validFrom` then id: what `fact-tracker facts` and the MCP `list_facts` list. */
export const selectFactsWhere = (store: FactStore, filter: FactFilter): ReadonlyArray<SessionFact> => {
  const { asOf, all = false, tags = [] } = filter;
  const facts =
    asOf === undefined
      ? all
        ? selectAllFacts(store)
        : selectValidFacts(store)
      : asTheyStood(
          all ? selectAllFacts(store).filter((fact) => fact.validFrom <= asOf) : selectFactsValidAt(store, asOf),
          asOf,
        );
  const subject = filter.subject?.toLowerCase();
  refuseUnlessDenseArray('the tags', tags, 'an array of fact tags');
  const wanted = new Set<string>(tags);
  return facts.filter(
    (fact) =>
      (wanted.size === 0 || hasWantedTag(fact, wanted)) &&
      (subject === undefined || fact.subject.toLowerCase().includes(subject)),
  );
};
