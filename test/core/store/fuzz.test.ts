import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addFacts, explainRetrieval, invalidate, compact, retrieveFacts, selectAllFacts } from '../../../src/index.js';
import { factArb, storeArb } from '../../arbitraries.js';

describe('total functions', () => {
  it('addFacts never throws on arbitrary input and keeps every fact already stored', () => {
    fc.assert(
      fc.property(
        storeArb,
        fc.anything(),
        fc.array(
          fc.oneof(
            fc.anything(),
            factArb.map((f) => ({ ...f, tags: ['nope'] })),
          ),
        ),
        (store, junk, junkList) => {
          const before = selectAllFacts(store);
          for (const input of [junk, junkList]) {
            let next = store;
            expect(() => (next = addFacts(store, input as never))).not.toThrow();
            expect(selectAllFacts(next)).toEqual(before);
          }
        },
      ),
    );
  });

  it('retrieveFacts and explainRetrieval never throw on an arbitrary query', () => {
    fc.assert(
      fc.property(
        storeArb,
        fc.anything(),
        fc.record({
          taskDescription: fc.anything(),
          taskId: fc.anything(),
          tags: fc.anything(),
          maxFacts: fc.anything(),
          maxTokens: fc.anything(),
          countTokens: fc.anything(),
        }),
        (store, junk, query) => {
          expect(() => retrieveFacts(store, junk as never)).not.toThrow();
          expect(() => retrieveFacts(store, query as never)).not.toThrow();
          expect(() => explainRetrieval(store, query as never)).not.toThrow();
        },
      ),
    );
  });

  it('invalidate and compact never throw, and hand back the very store given arguments of the wrong type', () => {
    fc.assert(
      fc.property(storeArb, fc.anything(), fc.anything(), fc.anything(), (store, a, b, c) => {
        let invalidated = store;
        let compacted = store;
        expect(() => (invalidated = invalidate(store, a as never, b as never, c as never))).not.toThrow();
        expect(() => (compacted = compact(store, a as never))).not.toThrow();
        // Arguments of the right types may close a pair or compact; any other are ignored.
        if (typeof a !== 'string' || typeof b !== 'string' || typeof c !== 'number') expect(invalidated).toBe(store);
        if (typeof a !== 'number' || !(a >= 0)) expect(compacted).toBe(store);
      }),
    );
  });
});
