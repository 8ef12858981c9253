/**
 * The facts of a saved state read redacted. A state an earlier version saved before dispatch
 * results were redacted holds the secrets a model copied into them (a token in a summary, a
 * file named after a key): read as it is, its facts would list them and a replay resumed from
 * it would inject them. So a saved fact's texts are read as extraction now makes them: each
 * secret replaced by `[redacted: a GitHub token]`, within its field's limit, the fact's id that
 * of its redacted triple; and pairs whose names are then the same are one pair, as a replay of
 * those results gives now (`mergedPairs`). A state this version saved of extracted facts holds none,
 * and reads as it is (one of facts handed to `addFacts` by hand may: they are redacted too).
 */
import { findSecret, redactedClipEnd } from '../base/secrets.js';
import { FACT_LIMITS } from '../core/fact.js';
import type { PairLog } from '../core/store/state.js';
import { mergedPairs, renamedFact } from './mergedPairs.js';

/** `text` with its secrets redacted and clipped to `max` characters, or itself when it holds none. */
export const redactedField = (text: string, max: number): string =>
  findSecret(text) === undefined ? text : redactedClipEnd(text, max);

const holdsSecret = (pair: PairLog): boolean =>
  findSecret(pair.subject) !== undefined ||
  findSecret(pair.relation) !== undefined ||
  pair.assertions.some((fact) => findSecret(fact.object) !== undefined);

/** A pair log with its names and its assertions' objects redacted, each id of its redacted triple. */
const redactedPair = (pair: PairLog): PairLog => {
  const subject = redactedField(pair.subject, FACT_LIMITS.subject);
  const relation = redactedField(pair.relation, FACT_LIMITS.relation);
  const assertions = pair.assertions.map((fact) =>
    renamedFact(fact, subject, relation, redactedField(fact.object, FACT_LIMITS.object)),
  );
  return { subject, relation, assertions, clears: pair.clears };
};

/** The pair logs of a saved state, their texts redacted (see above), in the order they came. */
export const redactedPairs = (pairs: ReadonlyArray<PairLog>): ReadonlyArray<PairLog> =>
  pairs.some(holdsSecret) ? mergedPairs(pairs, redactedPair) : pairs;
