/**
 * Tombstones: what a store keeps of a closed pair whose log went. Compaction removes the log of
 * a pair none of whose facts is valid, and with it the invalidation that closed them; but times
 * may go backwards, and an assertion of the pair arriving later with a time at or before that
 * invalidation would then land in an empty pair and be valid, where the whole log closes it. The
 * invalidation's time is all the log held that decides this (every assertion it held is at or
 * before it), so the store keeps that time, by pair key, until the pair has a log again.
 */
import * as PMap from '../../persistent/persistentMap.js';
import { type FactStore, type PairChange, type PairLog, pairKey } from './state.js';
import { latestAssertionTime } from './timeline.js';

/**
 * The fewest tombstones a store keeps once it has had this many: the latest ones, by invalidation
 * time, then pair key, since an assertion must reach further back in time to meet the oldest. No
 * bound on how far back an assertion may be dated lets a tombstone go sooner.
 */
export const TOMBSTONE_LIMIT = 1_000;

/**
 * The most a store keeps: past TOMBSTONE_LIMIT plus an eighth, the oldest go down to the limit at
 * once. Dropped one a write instead, each write that adds one past the limit would read every
 * tombstone to find the oldest.
 */
export const TOMBSTONE_CEILING = TOMBSTONE_LIMIT + TOMBSTONE_LIMIT / 8;

/** The invalidation that closed every fact of the log (its latest, at or after its latest assertion), if one did. */
export const closingTime = (log: PairLog): number | undefined => {
  const latest = log.clears[log.clears.length - 1];
  return latest !== undefined && latest >= latestAssertionTime(log) ? latest : undefined;
};

/** The time of the invalidation that closed the pair of this key before its log went, if the store keeps one. */
export const selectTombstone = (store: FactStore, key: string): number | undefined =>
  store.tombstones === undefined ? undefined : PMap.get(store.tombstones, key);

const removesLog = ({ before, after }: PairChange): boolean => before !== undefined && after === undefined;

/**
 * What a write of `steps` changes in the tombstones, each step's changes made after the one
 * before (see `ComposedSteps`: a log one step makes and a later one removes leaves what it would leave
 * written step by step): a closed log that goes leaves its closing time; a pair that has a log
 * again has no tombstone (the write that gave it one took the tombstone's invalidation into it
 * when it mattered, see `addFacts`). A log that was there before a step and is still there after
 * it changes nothing: a pair with a log has no tombstone. By pair key, the new time or undefined
 * (none), only where it differs; nothing read again when the store keeps none and no log goes,
 * as in most writes.
 */
export const tombstoneChanges = (
  tombstones: PMap.PersistentMap<number> | undefined,
  steps: ReadonlyArray<ReadonlyArray<PairChange>>,
): Map<string, number | undefined> => {
  const last = new Map<string, number | undefined>();
  if (tombstones === undefined && !steps.some((changes) => changes.some(removesLog))) return last;
  for (const changes of steps)
    for (const { before, after } of changes) {
      // Only a log made or removed moves a tombstone.
      if ((before === undefined) === (after === undefined)) continue;
      const { subject, relation } = (after ?? before)!;
      last.set(pairKey(subject, relation), after === undefined ? closingTime(before!) : undefined);
    }
  for (const [key, at] of last)
    if ((tombstones === undefined ? undefined : PMap.get(tombstones, key)) === at) last.delete(key);
  return last;
};

/** The tombstones with `changes` (see `tombstoneChanges`) made, past TOMBSTONE_CEILING down to the latest TOMBSTONE_LIMIT; undefined when none is left. */
export const withTombstoneChanges = (
  tombstones: PMap.PersistentMap<number> | undefined,
  changes: ReadonlyMap<string, number | undefined>,
): PMap.PersistentMap<number> | undefined => {
  if (changes.size === 0) return tombstones;
  let next = tombstones ?? PMap.empty;
  for (const [key, at] of changes) next = at === undefined ? PMap.remove(next, key) : PMap.set(next, key, at);
  const kept = withinCeiling(next);
  return PMap.size(kept) === 0 ? undefined : kept;
};

/** A tombstone as an entry: its pair key and its invalidation time. */
type Tombstone = readonly [string, number];

/** Oldest first: by invalidation time, then pair key. */
const byAge = ([keyA, a]: Tombstone, [keyB, b]: Tombstone): number => a - b || (keyA < keyB ? -1 : keyA > keyB ? 1 : 0);

/** The tombstones as they are, or past TOMBSTONE_CEILING the latest TOMBSTONE_LIMIT of them. */
const withinCeiling = (tombstones: PMap.PersistentMap<number>): PMap.PersistentMap<number> => {
  if (PMap.size(tombstones) <= TOMBSTONE_CEILING) return tombstones;
  const entries: Tombstone[] = [];
  PMap.forEach(tombstones, (at, key) => entries.push([key, at]));
  entries.sort(byAge);
  let next = tombstones;
  for (const [key] of entries.slice(0, entries.length - TOMBSTONE_LIMIT)) next = PMap.remove(next, key);
  return next;
};

/**
 * The tombstones of these (pair key, invalidation time) entries, as a saved state lists them: a
 * key's latest time kept, and past TOMBSTONE_CEILING the latest TOMBSTONE_LIMIT, as a store keeps them.
 */
export const tombstonesOf = (entries: Iterable<readonly [string, number]>): PMap.PersistentMap<number> => {
  let tombstones: PMap.PersistentMap<number> = PMap.empty;
  for (const [key, at] of entries) {
    const kept = PMap.get(tombstones, key);
    if (kept === undefined || kept < at) tombstones = PMap.set(tombstones, key, at);
  }
  return withinCeiling(tombstones);
};
