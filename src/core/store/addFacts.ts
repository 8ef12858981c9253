import * as E from 'fp-ts/lib/Either.js';
import { parseNewFact, type SessionFact } from '../fact.js';
import { compactWithReport } from './compact.js';
import { asOneRun } from '../../persistent/owner.js';
import { type FactStore, pairKey, validCount } from './state.js';
import { checkedFactStore } from './storeShape.js';
import { pruneTaskRecords } from './taskRecords.js';
import { collapseToValidRuns, PAIR_LOG_LIMIT, withAssertions } from './timeline.js';
import { emptyPairLog, type PairChange, selectPairLog, writePairChanges } from './write.js';

/** The well-formed facts of `input`, as fresh plain copies; malformed ones are skipped. */
export const keepWellFormedFacts = (input: unknown): SessionFact[] =>
  Array.isArray(input)
    ? input
        .map(parseNewFact)
        .filter(E.isRight)
        .map((result) => result.right)
    : [];

/**
 * Asserts each well-formed fact at its `validFrom` (malformed facts are skipped, never thrown
 * on). Per (subject, relation) pair the valid facts are those asserted at the pair's latest
 * assertion time; see `timeline.ts`. Compacts to `maxValidFacts` when that is exceeded, and
 * keeps the records of tasks that hold nothing else within bounds (see `taskRecords.ts`).
 */
export const addFacts = (store: FactStore, facts: ReadonlyArray<SessionFact>): FactStore =>
  addCheckedFacts(checkedFactStore(store), keepWellFormedFacts(facts));

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
    const asserted = withAssertions(before ?? emptyPairLog(subject, relation), group);
    const after = asserted.assertions.length > PAIR_LOG_LIMIT ? collapseToValidRuns(asserted) : asserted;
    if (after !== before && (after === undefined || after.assertions.length > 0)) changes.push({ before, after });
  }
  if (changes.length === 0) return store;
  return asOneRun(() => {
    const next = writePairChanges(store, changes);
    return pruneTaskRecords(
      validCount(next) > next.maxValidFacts ? compactWithReport(next, next.maxValidFacts).store : next,
    );
  });
};
