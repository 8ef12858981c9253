import * as E from 'fp-ts/lib/Either.js';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  addFacts,
  compact,
  compactWithReport,
  decodeState,
  emptyFactStore,
  encodeState,
  type FactStore,
  invalidate,
  selectValidFacts,
  type SessionFact,
  SUMMARY_RELATION,
} from '../../../src/index.js';
import { factArb, fileFact, relations, subjects, timeArb } from '../../arbitraries.js';
import { pairKey } from '../../../src/core/store/state.js';
import { TOMBSTONE_CEILING, TOMBSTONE_LIMIT, tombstonesOf } from '../../../src/core/store/tombstones.js';
import * as PMap from '../../../src/persistent/persistentMap.js';
import { expectConsistent, storeLogs } from './invariants.js';

/** What a history does to a store: facts asserted, a pair invalidated, or a compaction to `maxFacts`. */
type Step =
  | { readonly type: 'add'; readonly facts: ReadonlyArray<SessionFact> }
  | { readonly type: 'invalidate'; readonly subject: string; readonly relation: string; readonly at: number }
  | { readonly type: 'compact'; readonly maxFacts: number };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.array(factArb, { minLength: 1, maxLength: 3 }).map((facts): Step => ({ type: 'add', facts })),
  },
  {
    weight: 3,
    arbitrary: fc
      .record({ subject: fc.constantFrom(...subjects), relation: fc.constantFrom(...relations), at: timeArb })
      .map((fields): Step => ({ type: 'invalidate', ...fields })),
  },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 4 }).map((maxFacts): Step => ({ type: 'compact', maxFacts })) },
);

const unbounded = (): FactStore => emptyFactStore({ maxValidFacts: Infinity });

/**
 * The valid facts `keep` takes, by pair and id. Not by start: a late assertion of a valid fact
 * dated before its run's start extends the run back once the history before it went (see
 * docs/library.md), which changes when the fact became valid, not whether it is.
 */
const validByPair = (store: FactStore, keep: (fact: SessionFact) => boolean): string[] =>
  selectValidFacts(store)
    .filter(keep)
    .map((fact) => pairKey(fact.subject, fact.relation) + ' ' + fact.id)
    .sort();

describe('tombstones: what compaction keeps of a closed pair it removes', () => {
  it('compaction never changes which facts of a pair are valid after any later assertion or invalidation, but in the pairs whose facts it merged or dropped', () => {
    fc.assert(
      fc.property(fc.array(stepArb, { maxLength: 30 }), (steps) => {
        let whole = unbounded();
        let compacted = unbounded();
        // The pairs a compaction changed the valid facts of on purpose (merged or dropped).
        const changed = new Set<string>();
        // Those pairs, and the summaries compaction makes, are left out.
        const untouched = (fact: SessionFact): boolean =>
          fact.relation !== SUMMARY_RELATION && !changed.has(pairKey(fact.subject, fact.relation));
        for (const step of steps) {
          if (step.type === 'add') {
            whole = addFacts(whole, step.facts);
            compacted = addFacts(compacted, step.facts);
          } else if (step.type === 'invalidate') {
            whole = invalidate(whole, step.subject, step.relation, step.at);
            compacted = invalidate(compacted, step.subject, step.relation, step.at);
          } else {
            const before = new Map(selectValidFacts(compacted).map((fact) => [fact.id, fact]));
            const { store, report } = compactWithReport(compacted, step.maxFacts);
            for (const id of [...report.dropped, ...report.summaries.flatMap((summary) => summary.merged)]) {
              // A summary made and dropped by the same compaction was never valid before it.
              const fact = before.get(id);
              if (fact !== undefined) changed.add(pairKey(fact.subject, fact.relation));
            }
            compacted = store;
          }
          expect(validByPair(compacted, untouched)).toEqual(validByPair(whole, untouched));
        }
        expectConsistent(compacted);
      }),
      { numRuns: 300 },
    );
  });

  it('an assertion dated before an invalidation that compaction removed with its pair is closed by it, and one dated after is valid', () => {
    let store = addFacts(unbounded(), [fileFact('src/a.ts', 'modified_by', 'task:1', 1000)]);
    store = invalidate(store, 'src/a.ts', 'modified_by', 2000);
    store = addFacts(store, [fileFact('src/b.ts', 'modified_by', 'task:2', 3000)]);
    store = compact(store, 0);
    expect(selectValidFacts(store)).toEqual([]);
    const late = addFacts(store, [fileFact('src/a.ts', 'modified_by', 'task:3', 1500)]);
    expect(selectValidFacts(late)).toEqual([]);
    const atTheInvalidation = addFacts(store, [fileFact('src/a.ts', 'modified_by', 'task:3', 2000)]);
    expect(selectValidFacts(atTheInvalidation)).toEqual([]);
    const after = fileFact('src/a.ts', 'modified_by', 'task:3', 2500);
    expect(selectValidFacts(addFacts(store, [after]))).toEqual([after]);
  });

  it('a saved state keeps the tombstones, and one without them decodes as before', () => {
    let store = addFacts(unbounded(), [fileFact('src/a.ts', 'modified_by', 'task:1', 1000)]);
    store = invalidate(store, 'src/a.ts', 'modified_by', 2000);
    // A compaction runs only past its bound: one valid fact takes the store past 0.
    store = compact(addFacts(store, [fileFact('src/b.ts', 'modified_by', 'task:2', 3000)]), 0);
    const saved = encodeState(store);
    expect(saved.tombstones).toEqual([{ subject: 'src/a.ts', relation: 'modified_by', invalidatedAt: 2000 }]);
    const decoded = decodeState(JSON.parse(JSON.stringify(saved)));
    expect(E.isRight(decoded) && storeLogs(decoded.right)).toEqual(storeLogs(store));
    const late = [fileFact('src/a.ts', 'modified_by', 'task:3', 1500)];
    expect(E.isRight(decoded) && selectValidFacts(addFacts(decoded.right, late))).toEqual([]);
    const { tombstones: _dropped, ...older } = saved;
    const asBefore = decodeState(JSON.parse(JSON.stringify(older)));
    expect(E.isRight(asBefore) && asBefore.right.tombstones).toBeUndefined();
    expect(E.isRight(asBefore) && selectValidFacts(addFacts(asBefore.right, late))).toEqual(late);
    const { tombstones: _none, ...withoutAny } = encodeState(addFacts(unbounded(), late));
    expect(encodeState(addFacts(unbounded(), late))).toEqual(withoutAny);
  });

  it('a saved state whose tombstones are not of their kind is refused in one line', () => {
    const saved = encodeState(unbounded());
    const refusal = (tombstones: unknown): string | undefined => {
      const decoded = decodeState({ ...saved, tombstones });
      return E.isLeft(decoded) ? decoded.left.message : undefined;
    };
    expect(refusal('none')).toBe('saved state tombstones is not an array');
    expect(refusal([{ subject: 'src/a.ts', relation: 'modified_by' }])).toBe(
      'tombstones[0] needs a subject, a relation and a finite invalidatedAt',
    );
    expect(refusal([{ subject: 'a\u001fb', relation: 'r', invalidatedAt: 1 }])).toBe(
      'tombstones[0].subject holds U+001F, the separator of pair keys',
    );
  });

  // The two tests at the ceiling share their first TOMBSTONE_CEILING pairs, each closed once, in order.
  const past = TOMBSTONE_CEILING + 5;
  const closedFiles = (store: FactStore, from: number, to: number): FactStore => {
    const facts = Array.from({ length: to - from }, (_, i) =>
      fileFact(`src/f${from + i}.ts`, 'modified_by', 'task:1', from + i),
    );
    let next = addFacts(store, facts);
    for (const [i, fact] of facts.entries()) next = invalidate(next, fact.subject, fact.relation, past + from + i);
    return next;
  };
  let atCeiling: FactStore;
  beforeAll(() => {
    atCeiling = closedFiles(unbounded(), 0, TOMBSTONE_CEILING);
  });

  it(`past ${TOMBSTONE_CEILING} tombstones, a store keeps the latest ${TOMBSTONE_LIMIT}, by invalidation time`, () => {
    const count = past;
    let store = closedFiles(atCeiling, TOMBSTONE_CEILING, count);
    store = compact(addFacts(store, [fileFact('src/b.ts', 'modified_by', 'task:2', 3 * count)]), 0);
    expect(PMap.size(store.tombstones!)).toBe(TOMBSTONE_LIMIT);
    const oldestKept = count - TOMBSTONE_LIMIT;
    expect(PMap.has(store.tombstones!, pairKey(`src/f${oldestKept - 1}.ts`, 'modified_by'))).toBe(false);
    expect(PMap.get(store.tombstones!, pairKey(`src/f${oldestKept}.ts`, 'modified_by'))).toBe(count + oldestKept);
  });

  it(`up to ${TOMBSTONE_CEILING} tombstones, a store keeps them all`, () => {
    const store = compact(addFacts(atCeiling, [fileFact('src/b.ts', 'modified_by', 'task:2', 3 * past)]), 0);
    expect(PMap.size(store.tombstones!)).toBe(TOMBSTONE_CEILING);
    expect(PMap.get(store.tombstones!, pairKey('src/f0.ts', 'modified_by'))).toBe(past);
  });

  it('the tombstones a saved state lists are all kept up to the ceiling, and past it the latest by invalidation time, ties going by pair key', () => {
    // Times from a narrow range tie often; from the limit to past the ceiling.
    const entriesArb = fc.integer({ min: TOMBSTONE_LIMIT - 5, max: TOMBSTONE_CEILING + 80 }).chain((count) =>
      fc.array(fc.tuple(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 9 })), {
        minLength: count,
        maxLength: count,
      }),
    );
    fc.assert(
      fc.property(entriesArb, (drawn) => {
        const entries = drawn.map(([at, tag], i): [string, number] => [`k${tag}-${i}`, at]);
        const expected = [...entries]
          .sort(([keyA, a], [keyB, b]) => b - a || (keyA < keyB ? 1 : keyA > keyB ? -1 : 0))
          .slice(0, entries.length > TOMBSTONE_CEILING ? TOMBSTONE_LIMIT : entries.length);
        const kept = tombstonesOf(entries);
        expect(PMap.size(kept)).toBe(expected.length);
        for (const [key, at] of expected) expect(PMap.get(kept, key)).toBe(at);
      }),
      { numRuns: 30 },
    );
  });
});
