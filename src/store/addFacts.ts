import * as E from 'fp-ts/lib/Either.js';
import { parseNewFact, type SessionFact } from '../fact.js';
import { compactIn } from './compact.js';
import { type FactStore, pairKey } from './state.js';
import { withAssertions } from './timeline.js';
import type { Batch } from './trie.js';
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
 * assertion time; see `timeline.ts`. Compacts to `maxValidFacts` when that is exceeded.
 */
export const addFacts = (store: FactStore, facts: ReadonlyArray<SessionFact>): FactStore => addFactsIn(store, facts);

/**
 * `addFacts`, writing in `batch` when given (see `writePairChanges`). `wellFormed` skips the
 * check of each fact: only for facts the extractor has just built and checked, frozen since.
 */
export const addFactsIn = (
  store: FactStore,
  facts: ReadonlyArray<SessionFact>,
  batch?: Batch,
  wellFormed = false,
): FactStore => {
  const byPair = new Map<string, SessionFact[]>();
  for (const fact of wellFormed ? facts : keepWellFormedFacts(facts)) {
    const key = pairKey(fact.subject, fact.relation);
    const group = byPair.get(key);
    if (group === undefined) byPair.set(key, [fact]);
    else group.push(fact);
  }
  const changes: PairChange[] = [];
  for (const group of byPair.values()) {
    const { subject, relation } = group[0]!;
    const before = selectPairLog(store, subject, relation);
    const after = withAssertions(before ?? emptyPairLog(subject, relation), group);
    if (after !== before && after.assertions.length > 0) changes.push({ before, after });
  }
  const next = writePairChanges(store, changes, batch);
  return next.validCount > next.maxValidFacts ? compactIn(next, next.maxValidFacts, batch).store : next;
};
