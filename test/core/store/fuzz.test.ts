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

  it('invalidate and compact ignore arbitrary arguments rather than throw', () => {
    fc.assert(
      fc.property(storeArb, fc.anything(), fc.anything(), fc.anything(), (store, a, b, c) => {
        expect(() => invalidate(store, a as never, b as never, c as never)).not.toThrow();
        expect(() => compact(store, a as never)).not.toThrow();
      }),
    );
  });
});
