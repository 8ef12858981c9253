/**
 * The context table of a query: the `contextTasks` tasks whose prompts match it best, read from
 * the task postings. It must be exactly what scoring every task's own prompt gives.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addFacts, emptyFactStore, type FactStore, makeFact, recordTaskPrompt } from '../../../src/index.js';
import * as PMap from '../../../src/persistent/persistentMap.js';
import { asOneRun } from '../../../src/persistent/owner.js';
import { planQuery, resolveRanking } from '../../../src/core/retrieve/rank.js';
import { bestEntries, contextTable } from '../../../src/core/retrieve/context.js';
import { createRetrievalScratch } from '../../../src/core/retrieve/scratch.js';
import {
  BM25_K1,
  contextTermWeights,
  factTermWeights,
  FIELD_WEIGHTS,
  postingWeight,
  quantize,
  storedTermWeight,
} from '../../../src/core/search/weights.js';
import { textTerms } from '../../../src/core/search/terms.js';

/** The scratch every query of these tests writes (one, as queries one after another share one). */
const scratch = createRetrievalScratch();

/** A few common words and a tail of rarer ones: long lists (split into blocks) and many ties. */
const WORDS = ['fix', 'add', 'test', 'parser', 'cache', 'route', 'auth', 'docs', 'build', 'lint', 'queue', 'theme'];
const wordArb = fc.oneof(
  { arbitrary: fc.constantFrom(...WORDS.slice(0, 4)), weight: 6 },
  { arbitrary: fc.constantFrom(...WORDS), weight: 3 },
  { arbitrary: fc.nat({ max: 40 }).map((n) => `word${n}`), weight: 1 },
);

/** Up to 300 tasks, each with a prompt and one fact (a task lends its prompt while it holds a fact). */
const storeArb: fc.Arbitrary<{ store: FactStore; prompts: Map<string, string> }> = fc
  .array(fc.array(wordArb, { minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 300 })
  .map((tasks) => {
    const prompts = new Map(tasks.map((words, i) => [String(i + 1), words.join(' ')]));
    const store = asOneRun(() => {
      let next = emptyFactStore({ maxValidFacts: 10_000 });
      for (const [taskId, prompt] of prompts) {
        next = recordTaskPrompt(next, taskId, prompt, Number(taskId));
        next = addFacts(next, [
          makeFact({
            subject: `task:${taskId}`,
            relation: 'completed_with',
            object: 'completed',
            tags: ['decision'],
            validFrom: Number(taskId),
            sourceTaskId: taskId,
            sourceRole: 'implementer',
            confidence: 1,
          }),
        ]);
      }
      return next;
    });
    return { store, prompts };
  });

describe('the context table', () => {
  it('holds exactly the best contextTasks tasks by the BM25 of their prompts, with their scores, read from the index', () => {
    fc.assert(
      fc.property(
        storeArb,
        fc.array(wordArb, { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 1, max: 60 }),
        ({ store, prompts }, query, contextTasks) => {
          const ranking = resolveRanking({ contextTasks });
          const plan = planQuery(store.index, prompts.size, query.join(' '), ranking);
          // Every task scored: its terms' weights read from its own prompt, added in query order.
          const scored = [...prompts].flatMap(([taskId, prompt]) => {
            const weights = contextTermWeights(prompt);
            let sum = 0;
            for (const term of plan.contextTerms) {
              const weight = weights.get(term.term);
              if (weight !== undefined) sum += term.idf * postingWeight(quantize(weight));
            }
            return sum > 0 ? [{ taskId, score: sum * ranking.contextWeight }] : [];
          });
          scored.sort((a, b) => b.score - a.score || (a.taskId < b.taskId ? -1 : 1));
          const expected = new Map(
            scored
              .slice(0, contextTasks)
              .sort((a, b) => (a.taskId < b.taskId ? -1 : 1))
              .map(({ taskId, score }) => {
                const facts = PMap.size(PMap.get(store.index.tasks, taskId)!.facts);
                return [taskId, score / Math.max(1, facts)];
              }),
          );
          expect([...contextTable(store, plan, scratch).byTask]).toEqual([...expected]);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('keeps of a score map the limit highest scores, ties to the smaller key, in that order, as sorting them all does', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.string({ maxLength: 3 }),
            fc.oneof(fc.constantFrom(0, 0.5, 1, 2), fc.double({ min: 0, max: 10, noNaN: true })),
          ),
          {
            maxLength: 200,
          },
        ),
        fc.nat({ max: 80 }),
        (entries, limit) => {
          const scores = new Map(entries);
          const sorted = [...scores].sort(([a, x], [b, y]) => y - x || (a < b ? -1 : a > b ? 1 : 0));
          const expected = scores.size <= limit ? [...scores] : sorted.slice(0, limit);
          expect([...bestEntries(new Map(scores), limit, scratch.context.pairLeaders)]).toEqual(expected);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('a query on a malformed index that throws half-way leaves nothing behind: the next query gets the same table', () => {
    fc.assert(
      fc.property(storeArb, fc.array(wordArb, { minLength: 1, maxLength: 8 }), ({ store, prompts }, query) => {
        const plan = planQuery(store.index, prompts.size, query.join(' '), resolveRanking({}));
        const table = contextTable(store, plan, scratch);
        fc.pre(table.byTask.size > 0);
        // Its postings read, the task ids it then looks up are not there.
        const broken = { ...store, index: { ...store.index, taskIds: null } } as unknown as FactStore;
        expect(() => contextTable(broken, plan, scratch)).toThrow();
        expect(contextTable(store, plan, scratch)).toEqual(table);
      }),
      { numRuns: 200 },
    );
  });
});

describe('context term weights', () => {
  /** Prose, identifiers, paths and line breaks: what prompts and summaries hold. */
  const pieceArb = fc
    .array(
      fc.oneof(
        wordArb,
        fc.constantFrom('src/auth/loginRoute.ts', 'rate-limit', 'parseJSON', 'the', '\n', '  ', '.', 'a.b'),
      ),
      { maxLength: 8 },
    )
    .map((words) => words.join(' '));

  it("a context's weights from its pieces are the weights of the pieces joined by line breaks, read as one text", () => {
    fc.assert(
      fc.property(fc.array(pieceArb, { minLength: 1, maxLength: 4 }), (pieces) => {
        const joined = pieces.join('\n');
        const expected = new Map<string, number>();
        for (const term of textTerms(joined)) expected.set(term, (expected.get(term) ?? 0) + 1);
        expected.forEach((frequency, term) => expected.set(term, (frequency * (BM25_K1 + 1)) / (frequency + BM25_K1)));
        expect([...contextTermWeights(joined, pieces)]).toEqual([...expected]);
      }),
    );
  });

  it("a fact's stored weights are its terms once each, in the order they first occur, with the quantized BM25 weight of subject (x3) and object", () => {
    fc.assert(
      fc.property(pieceArb, pieceArb, (subject, object) => {
        const frequencies = new Map<string, number>();
        for (const term of textTerms(subject))
          frequencies.set(term, (frequencies.get(term) ?? 0) + FIELD_WEIGHTS.subject);
        for (const term of textTerms(object))
          frequencies.set(term, (frequencies.get(term) ?? 0) + FIELD_WEIGHTS.object);
        const expected = [...frequencies].flatMap(([term, frequency]) => [
          term,
          quantize((frequency * (BM25_K1 + 1)) / (frequency + BM25_K1)),
        ]);
        const weights = factTermWeights({ subject, object });
        expect([...weights]).toEqual(expected);
        expect(Object.isFrozen(weights)).toBe(true);
        for (const [term] of frequencies)
          expect(storedTermWeight(weights, term)).toBe(expected[expected.indexOf(term) + 1]);
        expect(storedTermWeight(weights, 'no such term')).toBeUndefined();
      }),
    );
  });
});
