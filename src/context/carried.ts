/**
 * The record of the branches a context took in (`moveContext`), each with the commit whose
 * context file held that branch's context as it was taken in: the common ancestor a later move
 * between the two branches merges against, so that what either side removed since stays removed.
 */
import { CONTEXT_LIMITS, type CarriedFrom, type SharedContext } from './model.js';

/** The commit at which `context` took in the context of `branch`, if it did. */
export const selectCarriedFrom = (context: SharedContext, branch: string): CarriedFrom | undefined =>
  context.carriedFrom?.find((entry) => entry.branch === branch);

/**
 * `context` with `records` as its record, `taken` (what it took in just now) first in place of
 * an older entry of its branch; never an entry of the context's own branch; at most the cap,
 * the latest kept.
 */
export const recordCarriedFrom = (
  context: SharedContext,
  records: ReadonlyArray<CarriedFrom>,
  taken?: CarriedFrom,
): SharedContext => {
  const kept = records.filter((entry) => entry.branch !== context.key.branch && entry.branch !== taken?.branch);
  const carriedFrom = (taken === undefined ? kept : [taken, ...kept]).slice(0, CONTEXT_LIMITS.carriedFrom);
  const { carriedFrom: _, ...rest } = context;
  return carriedFrom.length === 0 ? rest : { ...rest, carriedFrom };
};

/** The records of two sides of a conflict as one: the newer side's, then the older side's of the other branches. */
export const unionCarriedFrom = (newer: SharedContext, older: SharedContext): Pick<SharedContext, 'carriedFrom'> => {
  const records = [
    ...(newer.carriedFrom ?? []),
    ...(older.carriedFrom ?? []).filter((entry) => selectCarriedFrom(newer, entry.branch) === undefined),
  ].slice(0, CONTEXT_LIMITS.carriedFrom);
  return records.length === 0 ? {} : { carriedFrom: records };
};
