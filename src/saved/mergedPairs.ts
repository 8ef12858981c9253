/**
 * The pair logs of a saved state named anew, as a newer version names what an earlier one
 * wrote (`redactedPairs`, `respelledPairs`): pairs whose names then meet are one pair, their
 * assertions and clears together, as a replay of those results gives now.
 */
import { createFactId, type SessionFact } from '../core/fact.js';
import { type PairLog, pairKey } from '../core/store/state.js';
import { byTimeThenId } from '../core/store/timeline.js';

/** An assertion named `subject`, `relation` and `object`, its id of the three; itself when none changed. */
export const renamedFact = (fact: SessionFact, subject: string, relation: string, object: string): SessionFact => {
  if (subject === fact.subject && relation === fact.relation && object === fact.object) return fact;
  return { ...fact, id: createFactId(subject, relation, object), subject, relation, object };
};

/** A pair's assertions and clears as a pair log holds them: sorted, each once. */
const settled = (pair: PairLog): PairLog => {
  const seen = new Set<string>();
  const assertions = pair.assertions.filter((fact) => {
    const key = `${fact.id}@${fact.validFrom}`;
    const first = !seen.has(key);
    seen.add(key);
    return first;
  });
  return {
    ...pair,
    assertions: assertions.sort(byTimeThenId),
    clears: [...new Set(pair.clears)].sort((a, b) => a - b),
  };
};

/**
 * The pair logs, each as `renamed` names it (its assertions named so too), those of one name
 * merged into one log, in the order they came.
 */
export const mergedPairs = (
  pairs: ReadonlyArray<PairLog>,
  renamed: (pair: PairLog) => PairLog,
): ReadonlyArray<PairLog> => {
  const merged = new Map<string, PairLog>();
  for (const pair of pairs) {
    const named = renamed(pair);
    const key = pairKey(named.subject, named.relation);
    const before = merged.get(key);
    merged.set(
      key,
      before === undefined
        ? named
        : {
            ...named,
            assertions: [...before.assertions, ...named.assertions],
            clears: [...before.clears, ...named.clears],
          },
    );
  }
  return [...merged.values()].map(settled);
};
