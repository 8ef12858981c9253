import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addFacts, emptyFactStore, formatSessionFacts, makeFact, retrieveFacts } from '../../src/index.js';
import { countO200kTokens } from '../../src/tokens/o200k.js';
import { storeArb } from '../arbitraries.js';

const text = fc.string({ unit: 'binary', minLength: 1, maxLength: 180 }).filter((s) => s.trim() !== '');

/** Stores of facts whose text is arbitrary unicode, where BPE token counts diverge most from characters / 4. */
const wildStoreArb = fc
  .array(
    fc.record({
      subject: text,
      object: text,
      validFrom: fc.integer({ min: 0, max: 50 }),
      task: fc.constantFrom('1', '2'),
    }),
    { maxLength: 30 },
  )
  .map((rows) =>
    addFacts(
      emptyFactStore(),
      rows.map(({ subject, object, validFrom, task }) =>
        makeFact({
          subject,
          relation: 'convention',
          object,
          tags: ['convention'],
          validFrom,
          sourceTaskId: task,
          sourceRole: 'reviewer',
          confidence: 1,
        }),
      ),
    ),
  );

describe('exact token budgets', () => {
  it('with the o200k tokenizer, the rendered section never exceeds maxTokens, for any store and query', () => {
    fc.assert(
      fc.property(
        fc.oneof(storeArb, wildStoreArb),
        fc.string(),
        fc.integer({ min: 0, max: 400 }),
        (store, query, maxTokens) => {
          const facts = retrieveFacts(store, {
            taskDescription: query,
            taskId: '9',
            maxFacts: 10,
            maxTokens,
            countTokens: countO200kTokens,
          });
          expect(countO200kTokens(formatSessionFacts(facts))).toBeLessThanOrEqual(maxTokens);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('counts real BPE tokens, which the characters / 4 estimate can undercount', () => {
    const emoji = '🚀'.repeat(40);
    expect(countO200kTokens(emoji)).toBeGreaterThan(Math.ceil(emoji.length / 4));
  });
});
