/**
 * The facts of a saved state read redacted. A state an earlier version saved before dispatch
 * results were redacted holds the secrets a model copied into them (a token in a summary, a
 * file named after a key): read as it is, its facts would list them and a replay resumed from
 * it would inject them. So a saved fact's texts are read as extraction now makes them: each
 * secret replaced by `[redacted: a GitHub token]`, within its field's limit, the fact's id that
 * of its redacted triple; and pairs whose names are then the same are one pair, as a replay of
 * those results gives now. A state this version saved holds none, and reads as it is.
 */
import { findSecret, redactedClipEnd } from '../base/secrets.js';
import { createFactId, FACT_LIMITS, type SessionFact } from '../core/fact.js';
import { type PairLog, pairKey } from '../core/store/state.js';
import { byTimeThenId } from '../core/store/timeline.js';

/** `text` with its secrets redacted and clipped to `max` characters, or itself when it holds none. */
export const redactedField = (text: string, max: number): string =>
  findSecret(text) === undefined ? text : redactedClipEnd(text, max);

const holdsSecret = (pair: PairLog): boolean =>
  findSecret(pair.subject) !== undefined ||
  findSecret(pair.relation) !== undefined ||
  pair.assertions.some((fact) => findSecret(fact.object) !== undefined);

/** An assertion of the pair now named `subject` and `relation`, its object redacted and its id of the three. */
const redactedFact = (fact: SessionFact, subject: string, relation: string): SessionFact => {
  const object = redactedField(fact.object, FACT_LIMITS.object);
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

/** The pair logs of a saved state, their texts redacted (see above), in the order they came. */
export const redactedPairs = (pairs: ReadonlyArray<PairLog>): ReadonlyArray<PairLog> => {
  if (!pairs.some(holdsSecret)) return pairs;
  const merged = new Map<string, PairLog>();
  for (const pair of pairs) {
    const subject = redactedField(pair.subject, FACT_LIMITS.subject);
    const relation = redactedField(pair.relation, FACT_LIMITS.relation);
    const assertions = pair.assertions.map((fact) => redactedFact(fact, subject, relation));
    const key = pairKey(subject, relation);
    const before = merged.get(key);
    merged.set(
      key,
      before === undefined
        ? { subject, relation, assertions, clears: pair.clears }
        : {
            subject,
            relation,
            assertions: [...before.assertions, ...assertions],
            clears: [...before.clears, ...pair.clears],
          },
    );
  }
  return [...merged.values()].map(settled);
};
