import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  addFacts,
  emptyFactStore,
  estimateTokens,
  explainRetrieval,
  formatSessionFacts,
  makeFact,
  retrieveFacts,
  type SessionFact,
} from '../../../src/index.js';
import { renderSection } from '../../../src/core/prompt/retrieve.js';
import { countO200kTokens } from '../../../src/tokens/o200k.js';
import { storeArb } from '../../arbitraries.js';

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
  it('the budget stage keeps exactly the facts whose section, rendered whole, fits: each candidate in rank order, after the kept ones', () => {
    fc.assert(
      fc.property(
        fc.oneof(storeArb, wildStoreArb),
        fc.string(),
        fc.integer({ min: 0, max: 300 }),
        fc.constantFrom('lines' as const, 'grouped' as const),
        (store, query, maxTokens, layout) => {
          const decisions = explainRetrieval(store, {
            taskDescription: query,
            taskId: '9',
            maxFacts: 12,
            maxTokens,
            layout,
          });
          const kept: SessionFact[] = [];
          for (const { fact, decision, reason } of decisions) {
            if (decision === 'excluded' && reason !== 'budget') continue;
            const fits = estimateTokens(formatSessionFacts([...kept, fact], { layout })) <= maxTokens;
            expect(decision === 'included').toBe(fits);
            if (fits) kept.push(fact);
          }
          expect(
            retrieveFacts(store, { taskDescription: query, taskId: '9', maxFacts: 12, maxTokens, layout }),
          ).toEqual(kept);
        },
      ),
    );
  });

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

describe('the budget decides', () => {
  const layouts = ['lines', 'grouped'] as const;

  it.each(layouts)(
    'in the %s layout, the section fits the budget, and every fact left out for the budget would not have fitted where it ranked',
    (layout) => {
      fc.assert(
        fc.property(
          fc.oneof(storeArb, wildStoreArb),
          fc.string(),
          fc.integer({ min: 0, max: 300 }),
          fc.boolean(),
          (store, query, maxTokens, exact) => {
            const countTokens = exact ? countO200kTokens : estimateTokens;
            const decisions = explainRetrieval(store, {
              taskDescription: `${query} src a.ts naming`,
              taskId: '9',
              maxFacts: 40,
              maxTokens,
              countTokens,
              layout,
            });
            const included: SessionFact[] = [];
            for (const decision of decisions) {
              if (decision.decision === 'included') included.push(decision.fact);
              else if (decision.reason === 'budget')
                expect(countTokens(formatSessionFacts([...included, decision.fact], { layout }))).toBeGreaterThan(
                  maxTokens,
                );
            }
            expect(countTokens(formatSessionFacts(included, { layout }))).toBeLessThanOrEqual(maxTokens);
          },
        ),
        { numRuns: 60 },
      );
    },
  );

  it('with a budget that every candidate fits in, no fact is left out for the budget, and the count cap alone bounds the section', () => {
    fc.assert(
      fc.property(storeArb, fc.string(), fc.integer({ min: 0, max: 12 }), (store, query, maxFacts) => {
        const decisions = explainRetrieval(store, {
          taskDescription: `${query} src a.ts naming`,
          taskId: '9',
          maxFacts,
          maxTokens: 1_000_000,
        });
        expect(decisions.some((decision) => decision.reason === 'budget')).toBe(false);
        expect(decisions.filter((decision) => decision.decision === 'included').length).toBeLessThanOrEqual(maxFacts);
      }),
      { numRuns: 60 },
    );
  });

  it('extending a section of the lines layout by one fact gives exactly the section drawn whole, and the grouped layout is always drawn whole', () => {
    const factArb = fc
      .record({ subject: text, object: text, relation: fc.constantFrom('modified_by', 'convention', 'issue') })
      .map(({ subject, object, relation }) =>
        makeFact({
          subject,
          relation,
          object,
          tags: ['convention'],
          validFrom: 1,
          sourceTaskId: '3',
          sourceRole: 'reviewer',
          confidence: 1,
        }),
      );
    fc.assert(
      fc.property(fc.array(factArb, { minLength: 1, maxLength: 12 }), factArb, (facts, next) => {
        const section = renderSection(facts, 'lines');
        expect(renderSection.extend?.(section, next, 'lines')).toBe(renderSection([...facts, next], 'lines'));
        expect(renderSection.extend?.(renderSection(facts, 'grouped'), next, 'grouped')).toBeUndefined();
      }),
      { numRuns: 100 },
    );
  });
});
