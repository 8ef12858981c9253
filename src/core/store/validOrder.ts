/**
 * What compaction reads of the valid facts on every dispatch, kept beside the index instead of
 * derived from every valid fact each time: the valid facts in time order (then id), each
 * subject's valid facts, and the subjects holding enough of them to merge.
 *
 * A cache, not state. It is kept weakly by the index's document vector (the valid facts, by
 * document number: an index with the same vector holds the same facts), built from the index
 * the first time a compaction asks, and carried forward, changed in place, by every write that
 * makes the next index from that one (the only writes that change the vector); `addFacts`,
 * which compacts before it writes, takes it out, steps it through both and attaches it to the
 * index it writes. An older index then has none, and builds its own if it is ever compacted. So
 * it never changes what a compaction does, only what it costs: a store at its bound compacts on
 * every dispatch, and walking and grouping every valid fact each time cost more than the rest of
 * the compaction.
 */
import type { PersistentVector } from '../../persistent/persistentVector.js';
import type { SessionFact } from '../fact.js';
import { selectIndexedFacts } from '../search/indexReads.js';
import type { SearchIndex } from '../search/searchIndex.js';
import { byTimeThenId } from './timeline.js';

/** A subject's valid facts can merge into a summary once it holds this many (its newest stays, the older ones merge). */
export const MERGEABLE = 3;

/** Relations of the facts compaction drops first: how a task went, not what it established. */
const EXPENDABLE_RELATIONS: ReadonlySet<string> = new Set([
  'completed_with',
  'reviewed_as',
  'tested_by',
  'test_failure',
  'summary',
]);

/** True for a fact compaction drops before any other: a task's outcome, test run or summary. */
export const isExpendable = (fact: SessionFact): boolean => EXPENDABLE_RELATIONS.has(fact.relation);

/** The valid facts of one index, ordered and grouped as compaction reads them (read only: a write carries it forward in place). */
export interface ValidOrder {
  /** Every valid fact, by time then id (`byTimeThenId`). */
  readonly byTime: ReadonlyArray<SessionFact>;
  /**
   * The expendable ones (`isExpendable`), by time then id: once the old ones are gone, the
   * expendable facts are the recent ones, found without walking past every older fact.
   */
  readonly expendable: ReadonlyArray<SessionFact>;
  /** Subject -> its valid facts, in no particular order. */
  readonly bySubject: ReadonlyMap<string, ReadonlyArray<SessionFact>>;
  /** The subjects holding MERGEABLE valid facts or more. */
  readonly mergeable: ReadonlySet<string>;
}

/** An order as the cache holds it, changed in place by the writes that carry it. */
interface HeldOrder {
  readonly byTime: SessionFact[];
  readonly expendable: SessionFact[];
  readonly bySubject: Map<string, SessionFact[]>;
  readonly mergeable: Set<string>;
}

/** The orders kept beside indexes, by their document vector (see the module's comment). */
export interface ValidOrders {
  readonly byDocs: WeakMap<PersistentVector<SessionFact>, HeldOrder>;
}

/** An empty cache of orders. */
export const createValidOrders = (): ValidOrders => ({ byDocs: new WeakMap() });

/**
 * The orders every write carries forward and every compaction reads. They must be the same
 * object for the cache to follow the writes, and reducers are called from everywhere, so this
 * one instance is it rather than an argument of every reducer.
 */
export const validOrders: ValidOrders = createValidOrders();

/** Where `fact` is, or would go, in `byTime`. */
const placeOf = (byTime: ReadonlyArray<SessionFact>, fact: SessionFact): number => {
  let low = 0;
  let high = byTime.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (byTimeThenId(byTime[mid]!, fact) < 0) low = mid + 1;
    else high = mid;
  }
  return low;
};

const group = (order: HeldOrder, fact: SessionFact): void => {
  const facts = order.bySubject.get(fact.subject);
  if (facts === undefined) order.bySubject.set(fact.subject, [fact]);
  else if (facts.push(fact) === MERGEABLE) order.mergeable.add(fact.subject);
};

const ungroup = (order: HeldOrder, fact: SessionFact): void => {
  const facts = order.bySubject.get(fact.subject);
  const at = facts?.findIndex((held) => held.id === fact.id) ?? -1;
  if (at < 0) return;
  facts!.splice(at, 1);
  if (facts!.length === MERGEABLE - 1) order.mergeable.delete(fact.subject);
  else if (facts!.length === 0) order.bySubject.delete(fact.subject);
};

const buildHeldOrder = (index: SearchIndex): HeldOrder => {
  const byTime = selectIndexedFacts(index).sort(byTimeThenId);
  const order: HeldOrder = {
    byTime,
    expendable: byTime.filter(isExpendable),
    bySubject: new Map(),
    mergeable: new Set(),
  };
  for (const fact of order.byTime) group(order, fact);
  return order;
};

/** The order of `index`'s valid facts, built from them (what `validOrder` keeps). */
export const buildValidOrder = (index: SearchIndex): ValidOrder => buildHeldOrder(index);

/** The valid facts of `index`, ordered and grouped (built now unless a write carried them here). */
export const validOrder = (index: SearchIndex, orders: ValidOrders = validOrders): ValidOrder => {
  let order = orders.byDocs.get(index.docs);
  if (order === undefined) {
    order = buildHeldOrder(index);
    orders.byDocs.set(index.docs, order);
  }
  return order;
};

/** Past this many leaving facts, a time order is filtered once instead of spliced for each. */
const FILTER_PAST = 16;

/**
 * Takes the leaving facts out of a list in time order (a fact it does not hold changes nothing):
 * found by their time, and the facts after the first of them moved down once, not once per
 * fact (compaction takes the oldest, from the front of a list of a thousand).
 */
const remove = (byTime: SessionFact[], invalid: ReadonlyArray<SessionFact>): void => {
  if (invalid.length === 0) return;
  if (invalid.length > FILTER_PAST) {
    const leaving = new Set(invalid.map((fact) => fact.id));
    let kept = 0;
    for (const fact of byTime) if (!leaving.has(fact.id)) byTime[kept++] = fact;
    byTime.length = kept;
    return;
  }
  const places: number[] = [];
  for (const fact of invalid) {
    // By its time, or failing that by its id alone, as the index finds it.
    let at = placeOf(byTime, fact);
    if (byTime[at]?.id !== fact.id) at = byTime.findIndex((held) => held.id === fact.id);
    if (at >= 0) places.push(at);
  }
  if (places.length === 0) return;
  places.sort((a, b) => a - b);
  let kept = places[0]!;
  let next = 0;
  for (let read = kept; read < byTime.length; read += 1) {
    if (read === places[next]) {
      // A fact listed twice leaves once.
      while (places[next] === read) next += 1;
      continue;
    }
    byTime[kept++] = byTime[read]!;
  }
  byTime.length = kept;
};

/** Puts an entering fact in its place in a list in time order (facts usually enter newest). */
const insert = (byTime: SessionFact[], fact: SessionFact): void => {
  const last = byTime[byTime.length - 1];
  if (last === undefined || byTimeThenId(last, fact) < 0) byTime.push(fact);
  else byTime.splice(placeOf(byTime, fact), 0, fact);
};

/**
 * Makes in place the change to an order that a write makes to its index, with the facts
 * `invalid` leaving and `valid` entering (in that order: an id may do both), as the index
 * applies them: a leaving fact it does not hold changes nothing. For an order taken out of the
 * cache (`detachValidOrder`).
 */
export const stepValidOrder = (
  order: ValidOrder,
  invalid: ReadonlyArray<SessionFact>,
  valid: ReadonlyArray<SessionFact>,
): void => {
  const held = order as HeldOrder;
  remove(held.byTime, invalid);
  remove(
    held.expendable,
    invalid.filter((fact) => isExpendable(fact)),
  );
  for (const fact of invalid) ungroup(held, fact);
  for (const fact of valid) {
    insert(held.byTime, fact);
    if (isExpendable(fact)) insert(held.expendable, fact);
    group(held, fact);
  }
};

/**
 * The order of `index`'s valid facts (built now unless a write carried it here), taken out of
 * the cache: a writer steps it through its changes (`stepValidOrder`) and attaches it to the
 * index it makes (`attachValidOrder`). Should the write fail, the index has none, and builds its
 * own if it is ever compacted.
 */
export const detachValidOrder = (index: SearchIndex, orders: ValidOrders = validOrders): ValidOrder => {
  const order = validOrder(index, orders);
  orders.byDocs.delete(index.docs);
  return order;
};

/** Keeps `order` as the order of `index`, whose valid facts it must be. */
export const attachValidOrder = (index: SearchIndex, order: ValidOrder, orders: ValidOrders = validOrders): void => {
  orders.byDocs.set(index.docs, order as HeldOrder);
};

/**
 * Moves the order of `before` (if it has one) to `after`, the index a write made from it with
 * the facts `invalid` leaving and `valid` entering (see `stepValidOrder`).
 */
export const carryValidOrder = (
  before: SearchIndex,
  after: SearchIndex,
  invalid: ReadonlyArray<SessionFact>,
  valid: ReadonlyArray<SessionFact>,
  orders: ValidOrders = validOrders,
): void => {
  // Inside a write run the vector may be changed in place and keep its identity: the order is
  // changed all the same.
  const order = orders.byDocs.get(before.docs);
  if (order === undefined) return;
  orders.byDocs.delete(before.docs);
  stepValidOrder(order, invalid, valid);
  orders.byDocs.set(after.docs, order);
};
