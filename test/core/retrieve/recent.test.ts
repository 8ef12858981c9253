/**
 * The index keeps the most recent tasks in order (recency reads them instead of every task):
 * after any run of reducers over more tasks than it keeps, the list starts with exactly the
 * first RECENT_TASKS tasks by latest valid fact time, then id, computed from the valid facts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  addFacts,
  compact,
  emptyFactStore,
  type FactStore,
  invalidate,
  makeFact,
  selectValidFacts,
} from '../../../src/index.js';
import { RECENT_KEPT, RECENT_TASKS } from '../../../src/core/search/searchIndex.js';

type Step =
  | { readonly kind: 'add'; readonly task: number; readonly file: number; readonly at: number }
  | { readonly kind: 'invalidate'; readonly file: number; readonly at: number }
  | { readonly kind: 'compact'; readonly bound: number };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant('add' as const),
      task: fc.integer({ min: 1, max: 200 }),
      file: fc.integer({ min: 1, max: 300 }),
      at: fc.integer({ min: 0, max: 200 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('invalidate' as const),
      file: fc.integer({ min: 1, max: 300 }),
      at: fc.integer({ min: 0, max: 200 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('compact' as const), bound: fc.integer({ min: 20, max: 200 }) }),
  },
);

const apply = (store: FactStore, step: Step): FactStore => {
  switch (step.kind) {
    case 'add':
      return addFacts(store, [
        makeFact({
          subject: `src/f${step.file}.ts`,
          relation: 'modified_by',
          object: `task:${step.task}`,
          tags: ['file_change'],
          validFrom: step.at,
          sourceTaskId: String(step.task),
          sourceRole: 'implementer',
          confidence: 1,
        }),
      ]);
    case 'invalidate':
      return invalidate(store, `src/f${step.file}.ts`, 'modified_by', step.at);
    case 'compact':
      return compact(store, step.bound);
  }
};

/** The expected list: every task's latest valid fact time, newest first, then by id. */
const expectedRecent = (store: FactStore): Array<string | number> => {
  const latest = new Map<string, number>();
  for (const fact of selectValidFacts(store))
    latest.set(fact.sourceTaskId, Math.max(latest.get(fact.sourceTaskId) ?? -Infinity, fact.validFrom));
  return [...latest]
    .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1))
    .slice(0, RECENT_TASKS)
    .flat();
};

/**
 * The positions in `recent` (task id, then time, pair after pair) of the pairs that do not
 * follow the pair before them in order: that one later, or as late and of a smaller id. Checked
 * with one expect rather than one per pair: at every step of every run, those calls were about a
 * fifth of the file's time.
 */
const unorderedPairs = (recent: ReadonlyArray<string | number>): number[] => {
  const unordered: number[] = [];
  for (let i = 2; i < recent.length; i += 2) {
    const [id, at, nextId, nextAt] = recent.slice(i - 2, i + 2) as [string, number, string, number];
    if (!(at > nextAt || (at === nextAt && id < nextId))) unordered.push(i);
  }
  return unordered;
};

describe('recent tasks in the index', () => {
  it('after every reducer, the list starts with exactly the most recent tasks by latest valid fact, then id', () => {
    fc.assert(
      fc.property(fc.array(stepArb, { minLength: 1, maxLength: 250, size: 'max' }), (steps) => {
        let store = emptyFactStore({ maxValidFacts: 10_000 });
        for (const step of steps) {
          store = apply(store, step);
          const { recent } = store.index;
          expect(recent.slice(0, 2 * RECENT_TASKS)).toEqual(expectedRecent(store));
          // The reserve after them is in order too, and bounded.
          expect(recent.length).toBeLessThanOrEqual(2 * RECENT_KEPT);
          expect(unorderedPairs(recent)).toEqual([]);
        }
      }),
      { numRuns: 30, endOnFailure: true },
    );
  });

  it('in a session of tasks one after another, each adding facts as it goes, the list stays exactly the most recent tasks', () => {
    // The common path: the newest task's latest fact becoming later, over a list already full.
    const sessionArb = fc.array(
      fc.record({
        facts: fc.integer({ min: 1, max: 4 }),
        pause: fc.integer({ min: 0, max: 3 }),
        compact: fc.boolean(),
      }),
      { minLength: RECENT_TASKS + 1, maxLength: RECENT_TASKS + 60 },
    );
    fc.assert(
      fc.property(sessionArb, (tasks) => {
        let store = emptyFactStore({ maxValidFacts: 10_000 });
        let at = 0;
        tasks.forEach(({ facts, pause, compact: compacts }, i) => {
          for (let f = 0; f < facts; f += 1) {
            at += pause + f;
            store = apply(store, { kind: 'add', task: i + 1, file: (i * 7 + f) % 300, at });
            expect(store.index.recent.slice(0, 2 * RECENT_TASKS)).toEqual(expectedRecent(store));
          }
          if (compacts) store = apply(store, { kind: 'compact', bound: 150 });
        });
      }),
      { numRuns: 20 },
    );
  });
});
