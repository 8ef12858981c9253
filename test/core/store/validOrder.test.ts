import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addFacts, applyEvent, compact, emptyFactStore, makeFact } from '../../../src/index.js';
import { asOneRun } from '../../../src/persistent/owner.js';
import { eventArb } from '../../arbitraries.js';
import { expectOrderOf, storeContent } from './invariants.js';
import { referenceCompact } from './referenceCompact.js';
import { buildValidOrder, stepValidOrder } from '../../../src/core/store/validOrder.js';

describe('the order compaction keeps beside the index', () => {
  it('after any events, written one by one or in place within runs, the carried order is the order built from the index', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(eventArb, fc.boolean()), { maxLength: 30 }),
        fc.integer({ min: 1, max: 6 }),
        (events, maxValidFacts) => {
          // One by one: each compaction reads the order the write before it carried.
          let store = emptyFactStore({ maxValidFacts });
          for (const [event] of events) {
            store = applyEvent(store, event);
            expectOrderOf(store);
          }
          // In place: runs end where the event says, and the order follows writes that keep the vector's identity.
          let inRuns = emptyFactStore({ maxValidFacts });
          let at = 0;
          while (at < events.length) {
            inRuns = asOneRun(() => {
              let current = inRuns;
              do current = applyEvent(current, events[at]![0]);
              while (!events[at++]![1] && at < events.length);
              return current;
            });
            expectOrderOf(inRuns);
          }
          expect(inRuns).toEqual(store);
        },
      ),
    );
  });

  /** Task i's fact of file i, every `summaryEvery`-th a summary, their times `times` apart at most (so many tie). */
  const fileFact = (i: number, summaryEvery: number, times: number) =>
    makeFact({
      subject: `src/f${i}.ts`,
      relation: i % summaryEvery === 0 ? 'summary' : 'modified_by',
      object: `task:${i}`,
      tags: ['file_change'],
      validFrom: 1_000 + (i % times),
      sourceTaskId: String(i),
      sourceRole: 'implementer',
      confidence: 1,
    });

  it('takes leaving facts out wherever they are, a fact listed twice once, and one it does not hold changes nothing', () => {
    const fact = (i: number) => fileFact(i, 3, 7);
    const facts = Array.from({ length: 40 }, (_, i) => fact(i));
    const store = addFacts(emptyFactStore({ maxValidFacts: 1_000 }), facts);
    const order = buildValidOrder(store.index);
    const byTime = [...order.byTime];
    const leaving = [byTime[0]!, byTime[17]!, byTime[3]!, byTime[17]!, byTime[39]!, fact(99)];
    stepValidOrder(order, leaving, []);
    const ids = new Set(leaving.map(({ id }) => id));
    expect(order.byTime).toEqual(byTime.filter(({ id }) => !ids.has(id)));
    expect(order.expendable).toEqual(byTime.filter((held) => held.relation === 'summary' && !ids.has(held.id)));
  });

  it('taking out any leaving facts, from the front, the back or both, leaves exactly the others in time order', () => {
    const fact = (i: number) => fileFact(i, 4, 5);
    const facts = Array.from({ length: 60 }, (_, i) => fact(i));
    const store = addFacts(emptyFactStore({ maxValidFacts: 1_000 }), facts);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 64 }), { maxLength: 20 }), (picks) => {
        const order = buildValidOrder(store.index);
        const byTime = [...order.byTime];
        // Past the list: a fact it does not hold.
        const leaving = picks.map((at) => byTime[at] ?? fact(100 + at));
        stepValidOrder(order, leaving, []);
        const ids = new Set(leaving.map(({ id }) => id));
        expect(order.byTime).toEqual(byTime.filter(({ id }) => !ids.has(id)));
        expect(order.expendable).toEqual(byTime.filter((held) => held.relation === 'summary' && !ids.has(held.id)));
      }),
    );
  });

  it('a long session at a small bound, written in runs, compacts exactly as the reference', () => {
    const random = (() => {
      let state = 11;
      return (): number => (state = (state * 48271) % 2147483647) / 2147483647;
    })();
    const batches = Array.from({ length: 240 }, (_, i) =>
      Array.from({ length: 1 + Math.floor(random() * 6) }, () =>
        makeFact({
          subject: `src/f${Math.floor(random() * 20)}.ts`,
          relation: ['modified_by', 'issue', 'summary', 'requires'][Math.floor(random() * 4)]!,
          object: `o${Math.floor(random() * 6)}`,
          tags: ['file_change'],
          validFrom: i + 1,
          sourceTaskId: String(i + 1),
          sourceRole: 'implementer',
          confidence: 1,
        }),
      ),
    );
    let expected = emptyFactStore({ maxValidFacts: 30 });
    let store = expected;
    for (let start = 0; start < batches.length; start += 24) {
      const run = batches.slice(start, start + 24);
      store = asOneRun(() => run.reduce((next, facts) => addFacts(next, facts), store));
      for (const facts of run)
        expected = referenceCompact(addFacts({ ...expected, maxValidFacts: 1_000 }, facts), 30).store;
      expect(storeContent(store)).toEqual(storeContent({ ...expected, maxValidFacts: 30 }));
      expectOrderOf(store);
      // Now and then a compaction far below the bound: many facts leave the order at once.
      if (start % 72 === 48) {
        store = compact(store, 8);
        expected = referenceCompact(expected, 8).store;
        expect(storeContent(store)).toEqual(storeContent({ ...expected, maxValidFacts: 30 }));
        expectOrderOf(store);
      }
    }
  });
});
