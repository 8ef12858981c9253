import { refuseUnlessDenseArray } from '../../base/record.js';
import * as E from 'fp-ts/lib/Either.js';
import { parseNewFact, type SessionFact } from '../fact.js';
import { planCompaction } from './compact.js';
import { asOneRun } from '../../persistent/owner.js';
import { type FactStore, normalizeMaxValidFacts, type PairLog, pairKey, validCount } from './state.js';
import { checkedFactStore, handedBack } from './storeShape.js';
import { pruneTaskRecords } from './taskRecords.js';
import { collapseToValidRuns, PAIR_LOG_LIMIT, withAssertions } from './timeline.js';
import { selectTombstone } from './tombstones.js';
import { detachValidOrder, stepValidOrder } from './validOrder.js';
import {
  composeChanges,
  emptyPairLog,
  type PairChange,
  selectPairLog,
  validCountChange,
  validDiff,
  writePairChanges,
} from './write.js';

/** The well-formed facts of `input`, as fresh plain copies; malformed ones are skipped. */
export const keepWellFormedFacts = (input: unknown): SessionFact[] => {
  if (!Array.isArray(input)) return [];
  // A list with a hole is refused before it is walked: the length it claims may be billions.
  refuseUnlessDenseArray('the facts', input, 'an array of facts');
  return input
    .map(parseNewFact)
    .filter(E.isRight)
    .map((result) => result.right);
};

/**
 * Asserts each well-formed fact at its `validFrom` (malformed facts are skipped, never thrown
 * on). Per (subject, relation) pair the valid facts are those asserted at the pair's latest
 * assertion time; see `timeline.ts`. Compacts to `maxValidFacts` when that is exceeded, and
 * keeps the records of tasks that hold nothing else within bounds (see `taskRecords.ts`).
 */
export const addFacts = (store: FactStore, facts: ReadonlyArray<SessionFact>): FactStore =>
  handedBack(store, addCheckedFacts(checkedFactStore(store), keepWellFormedFacts(facts)));

/**
 * The log a pair that has none starts from when `facts` are asserted: the invalidation its
 * tombstone keeps when one of them is dated at or before it, which closes them as the log
 * compaction removed would have; otherwise an empty log (the tombstone then closes nothing any
 * later assertion could make valid: the pair's latest assertion is after it).
 */
const startingLog = (
  store: FactStore,
  subject: string,
  relation: string,
  facts: ReadonlyArray<SessionFact>,
): PairLog => {
  const closedAt = selectTombstone(store, pairKey(subject, relation));
  return closedAt !== undefined && facts.some((fact) => fact.validFrom <= closedAt)
    ? { subject, relation, assertions: [], clears: [closedAt] }
    : emptyPairLog(subject, relation);
};

/**
 * `addFacts` for facts already checked and frozen, as the extractor builds them: they enter the
 * store as they are, without a second check (a replay of the event log checks them again).
 */
export const addCheckedFacts = (store: FactStore, facts: ReadonlyArray<SessionFact>): FactStore => {
  const byPair = new Map<string, SessionFact[]>();
  for (const fact of facts) {
    const key = pairKey(fact.subject, fact.relation);
    const group = byPair.get(key);
    if (group === undefined) byPair.set(key, [fact]);
    else group.push(fact);
  }
  const changes: PairChange[] = [];
  for (const group of byPair.values()) {
    const { subject, relation } = group[0]!;
    const before = selectPairLog(store, subject, relation);
    const asserted = withAssertions(before ?? startingLog(store, subject, relation, group), group);
    const after = asserted.assertions.length > PAIR_LOG_LIMIT ? collapseToValidRuns(asserted) : asserted;
    if (after !== before) changes.push({ before, after });
  }
  if (changes.length === 0) return store;
  return asOneRun(() => pruneTaskRecords(writeCompacted(store, changes)));
};

/**
 * The store with `changes` written and then compacted to its bound when they take it past it,
 * written as one (`ComposedSteps`): at the bound every dispatch compacts, and what it drops
 * first, the outcomes and summaries of tasks, are most often the ones just added, which are
 * then never indexed. The same store as writing, then compacting.
 */
const writeCompacted = (store: FactStore, changes: ReadonlyArray<PairChange>): FactStore => {
  const count = validCount(store) + validCountChange(changes);
  // As `emptyFactStore` reads a bound: one set by hand (0, -1, Infinity) would drop every fact, or keep a bound JSON loses.
  const bound = normalizeMaxValidFacts(store.maxValidFacts);
  if (count <= bound) return writePairChanges(store, changes);
  const added = validDiff(changes);
  const order = detachValidOrder(store.index);
  stepValidOrder(order, added.invalid, added.valid);
  const pending = new Map<string, PairLog | undefined>();
  for (const { before, after } of changes) {
    const log = (after ?? before)!;
    pending.set(pairKey(log.subject, log.relation), after);
  }
  const compaction = planCompaction({ store, pending, order, count }, bound).changes;
  const dropped = validDiff(compaction);
  stepValidOrder(order, dropped.invalid, dropped.valid);
  const steps = [changes, compaction];
  return writePairChanges(store, composeChanges(steps), { steps, order });
};
