/**
 * Exactness of retrieval at any size: both index paths (scanning what a query reaches, and
 * MaxScore over the postings; special facts, conventions apart) must give exactly what scoring
 * every fact gives, on stores whose every term is common (where pruning does the most) and with
 * any ranking overrides.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  addFacts,
  createRetrievalScratch,
  emptyFactStore,
  explainRetrieval,
  type FactQuery,
  invalidate,
  type FactStore,
  type FactTag,
  makeFact,
  recordTaskPrompt,
  retrieveFacts,
  type RankingOverrides,
  selectValidCount,
  type SessionFact,
} from '../../../src/index.js';
import { addCheckedFacts } from '../../../src/core/store/addFacts.js';
import { asOneRun, createOwner, transientRun } from '../../../src/persistent/owner.js';
import { SCAN_FACTS } from '../../../src/core/retrieve/scratch.js';
import { renderSection } from '../../../src/core/prompt/retrieve.js';
import { contextTable } from '../../../src/core/retrieve/context.js';
import { passesFor } from '../../../src/core/retrieve/passes.js';
import { settingsFor } from '../../../src/core/retrieve/query.js';
import { explainRanked } from '../../../src/core/retrieve/retrieve.js';
import { scanPasses } from '../../../src/core/retrieve/scan.js';
import { rankPasses } from '../../../src/core/retrieve/topk.js';

const VOCABULARY = [
  'auth',
  'login',
  'token',
  'route',
  'cache',
  'retry',
  'invoice',
  'schema',
  'config',
  'test',
  'ledger',
  'queue',
  'parser',
  'render',
  'billing',
  'session',
  'export',
  'import',
  'widget',
  'socket',
  'pager',
  'mailer',
  'search',
  'upload',
  'locale',
  'theme',
  'report',
  'audit',
  'metric',
  'webhook',
];
const RELATIONS = ['modified_by', 'issue', 'convention', 'summary', 'requires', 'tested_by', 'completed_with'];
const TAG_SETS: ReadonlyArray<ReadonlyArray<FactTag>> = [
  ['file_change'],
  ['error'],
  ['convention'],
  ['decision'],
  ['dependency'],
  ['test'],
  ['test', 'error'],
];

const wordArb = (size: number) => fc.constantFrom(...VOCABULARY.slice(0, size));

interface Draft {
  readonly subjectWords: string[];
  readonly file: boolean;
  readonly relation: number;
  readonly objectWords: string[];
  readonly task: number;
  readonly at: number;
}

/** A word of the vocabulary, or (with `rare`) now and then one of many rare words, which make feedback words. */
const objectWordArb = (size: number, rare: boolean): fc.Arbitrary<string> =>
  rare
    ? fc.oneof(
        { arbitrary: wordArb(size), weight: 4 },
        { arbitrary: fc.nat({ max: 60 }).map((n) => `rare${n}`), weight: 1 },
      )
    : wordArb(size);

const draftArb = (size: number, rare: boolean): fc.Arbitrary<Draft> =>
  fc.record({
    subjectWords: fc.array(wordArb(size), { minLength: 1, maxLength: 3 }),
    file: fc.boolean(),
    relation: fc.nat({ max: RELATIONS.length - 1 }),
    objectWords: fc.array(objectWordArb(size, rare), { minLength: 1, maxLength: 5 }),
    task: fc.integer({ min: 1, max: 9 }),
    at: fc.integer({ min: 0, max: 60 }),
  });

const toFact = (draft: Draft): SessionFact => {
  const relation = RELATIONS[draft.relation]!;
  const subject = draft.file
    ? `src/${draft.subjectWords.join('/')}.ts`
    : relation === 'summary' || relation === 'requires'
      ? `task:${draft.task}`
      : draft.subjectWords.join('_');
  return makeFact({
    subject,
    relation,
    object: draft.objectWords.join(' '),
    tags: TAG_SETS[draft.relation]!,
    validFrom: draft.at,
    sourceTaskId: String(draft.task),
    sourceRole: relation === 'issue' || relation === 'convention' ? 'reviewer' : 'implementer',
    confidence: 1,
  });
};

/** A store of up to a few hundred facts over a vocabulary of `size` words (and rare words), with task prompts. */
const storeArb = (size: number, rare = false): fc.Arbitrary<FactStore> =>
  fc
    .tuple(
      // Up to about 500 facts: long enough posting lists to be split into blocks.
      fc.array(fc.array(draftArb(size, rare), { minLength: 1, maxLength: 12, size: 'max' }), {
        minLength: 1,
        maxLength: 45,
        size: 'max',
      }),
      fc.array(fc.tuple(fc.integer({ min: 1, max: 9 }), fc.array(wordArb(size), { maxLength: 6 })), {
        maxLength: 9,
      }),
    )
    .map(([batches, prompts]) =>
      asOneRun(() => {
        let store = emptyFactStore({ maxValidFacts: 10_000 });
        prompts.forEach(([task, words], i) => {
          store = recordTaskPrompt(store, String(task), words.join(' '), i);
        });
        for (const batch of batches) store = addFacts(store, batch.map(toFact));
        return store;
      }),
    );

const rankingArb: fc.Arbitrary<RankingOverrides | undefined> = fc.option(
  fc.record(
    {
      priors: fc.record(
        {
          convention: fc.constantFrom(0.5, 2, 4),
          issue: fc.constantFrom(0.1, 0.6, 1.5),
          duplicate: fc.constantFrom(0.1, 3),
          testFile: fc.constantFrom(0.5, 2),
          status: fc.constantFrom(0, 0.2, 1),
          docs: fc.constantFrom(0.3, 1.5),
          generated: fc.constantFrom(0.3, 2),
        },
        { requiredKeys: [] },
      ),
      feedback: fc.record(
        {
          weight: fc.constantFrom(0, 0.3, 1),
          facts: fc.integer({ min: 0, max: 4 }),
          terms: fc.integer({ min: 0, max: 8 }),
          // Above the default share, words of small stores become feedback words too.
          maxShare: fc.constantFrom(0.05, 0.3, 1),
        },
        { requiredKeys: ['weight', 'facts'] },
      ),
      recency: fc.record({
        weight: fc.constantFrom(0, 0.3, 1),
        tasks: fc.integer({ min: 0, max: 3 }),
        decay: fc.constantFrom(0.5, 1),
        shared: fc.constantFrom(0, 0.7, 3),
      }),
      coChange: fc.record({ weight: fc.constantFrom(0, 0.5, 2), seeds: fc.integer({ min: 0, max: 4 }) }),
      conventionBase: fc.constantFrom(0, 0.5),
      floor: fc.constantFrom(0, 0.1, 0.5),
      contextTasks: fc.integer({ min: 0, max: 4 }),
      contextShare: fc.constantFrom(0, 0.5, 1),
      exactFileBoost: fc.constantFrom(0, 100),
    },
    { requiredKeys: [] },
  ),
  { nil: undefined },
);

/**
 * Overrides whose every weight, prior and decay may be any double from 0 to the largest one:
 * near the largest, sums and products of them overflow, and near the smallest they lose the
 * precision the index path's bounds rely on, unless the ranking bounds them.
 */
const extremeRankingArb: fc.Arbitrary<RankingOverrides> = (() => {
  const weight = fc.oneof(
    fc.constantFrom(0, Number.MIN_VALUE, 1e-320, 1e-300, 1e-13, 0.5, 1, 3, 1e13, 1e150, 1e300, 1e308, Number.MAX_VALUE),
    fc.double({ min: 0, max: Number.MAX_VALUE, noNaN: true }),
  );
  const priors = fc.record(
    {
      status: weight,
      test: weight,
      testFile: weight,
      manifest: weight,
      docs: weight,
      generated: weight,
      convention: weight,
      summary: weight,
      issue: weight,
      duplicate: weight,
    },
    { requiredKeys: [] },
  );
  return fc.record(
    {
      priors,
      feedback: fc.record({ weight, facts: fc.integer({ min: 0, max: 4 }), maxShare: weight }, { requiredKeys: [] }),
      recency: fc.record(
        { weight, tasks: fc.integer({ min: 0, max: 63 }), decay: weight, shared: weight },
        {
          requiredKeys: [],
        },
      ),
      coChange: fc.record({ weight, seeds: fc.integer({ min: 0, max: 4 }) }, { requiredKeys: [] }),
      contextWeight: weight,
      exactFileBoost: weight,
      conventionBase: weight,
      floor: weight,
    },
    { requiredKeys: [] },
  );
})();

const queryArb = (
  size: number,
  ranking: fc.Arbitrary<RankingOverrides | undefined> = rankingArb,
): fc.Arbitrary<FactQuery> =>
  fc
    .record({
      words: fc.array(wordArb(size), { minLength: 1, maxLength: 6 }),
      path: fc.option(fc.array(wordArb(size), { minLength: 1, maxLength: 2 }), { nil: undefined }),
      taskId: fc.integer({ min: 0, max: 9 }),
      maxFacts: fc.integer({ min: 1, max: 40 }),
      maxTokens: fc.constantFrom(100_000, 500, 150),
      layout: fc.constantFrom('lines' as const, 'grouped' as const),
      tags: fc.option(fc.constantFrom<ReadonlyArray<FactTag>>(['file_change'], ['convention', 'error']), {
        nil: undefined,
      }),
      ranking,
    })
    .map(({ words, path, taskId, maxFacts, maxTokens, layout, tags, ranking }) => ({
      taskDescription: `${words.join(' ')}${path === undefined ? '' : ` in ${path.join('/')}.ts`}`,
      taskId: String(taskId),
      maxFacts,
      maxTokens,
      layout,
      ...(tags === undefined ? {} : { tags }),
      ...(ranking === undefined ? {} : { ranking }),
    }));

const included = (store: FactStore, query: FactQuery): ReadonlyArray<SessionFact> =>
  explainRetrieval(store, query)
    .filter((decision) => decision.decision === 'included')
    .map((decision) => decision.fact);

/** Both ways to the top k, at any store size: scanning what a query reaches, and MaxScore (`RetrievalScratch.scanFacts`). */
const WAYS = [createRetrievalScratch({ scanFacts: Infinity }), createRetrievalScratch({ scanFacts: 0 })];

/**
 * `included`, computed once per store and query: the tests that ask a store the same query again
 * (to catch what an earlier answer left in a scratch) compare each answer with the exhaustive
 * ranking, a pure function of the two, without scoring every fact again.
 */
const includedOnce = (): typeof included => {
  const known = new WeakMap<FactStore, Map<FactQuery, ReadonlyArray<SessionFact>>>();
  return (store, query) => {
    const queries = known.get(store) ?? new Map<FactQuery, ReadonlyArray<SessionFact>>();
    known.set(store, queries);
    const expected = queries.get(query) ?? included(store, query);
    queries.set(query, expected);
    return expected;
  };
};

/** Checks that retrieveFacts gives exactly the facts explainRetrieval includes, in its order, both ways. */
const expectExact = (store: FactStore, query: FactQuery, expectedOf: typeof included = included): void => {
  const expected = expectedOf(store, query);
  for (const scratch of WAYS) expect(retrieveFacts(store, { ...query, scratch })).toEqual(expected);
};

/**
 * Checks that both ways rank their best candidates as explainRetrieval ranks its first ones,
 * each with the very same score (a sum added in another order may differ in its last bit, which
 * the facts alone rarely show).
 */
const expectExactScores = (store: FactStore, query: FactQuery): void => {
  const decisions = explainRanked(store, query, renderSection);
  for (const scratch of WAYS) {
    const settings = settingsFor(store, { ...query, scratch }, renderSection);
    if (!(settings.maxFacts > 0)) continue;
    const passes = passesFor(store, settings, contextTable(store, settings.plan, scratch));
    const ranked = (scratch.scanFacts === 0 ? rankPasses : scanPasses)(store, settings, passes);
    expect(ranked.map(({ fact, parts }) => [fact, parts.total])).toEqual(
      decisions.slice(0, ranked.length).map(({ fact, score }) => [fact, score]),
    );
  }
};

describe('the way to the top k', () => {
  it('a scratch takes a scan limit of 0 or more, and keeps the default for anything else', () => {
    for (const scanFacts of [0, 10, Infinity]) expect(createRetrievalScratch({ scanFacts }).scanFacts).toBe(scanFacts);
    for (const scanFacts of [-1, Number.NaN, '5', null, undefined])
      expect(createRetrievalScratch({ scanFacts } as { scanFacts?: number }).scanFacts).toBe(SCAN_FACTS);
    expect(createRetrievalScratch().scanFacts).toBe(SCAN_FACTS);
  });
});

describe('exact top k', () => {
  for (const size of [3, 10, 30])
    it(`retrieveFacts gives exactly the facts explainRetrieval includes, in its order, on stores of a ${size}-word vocabulary`, () => {
      fc.assert(
        fc.property(storeArb(size), fc.array(queryArb(size), { minLength: 1, maxLength: 4 }), (store, queries) => {
          for (const query of queries) expectExact(store, query);
        }),
        { numRuns: 60 },
      );
    });

  it('both ways score their best candidates exactly as explainRetrieval scores them, to the last bit', () => {
    fc.assert(
      fc.property(storeArb(10), fc.array(queryArb(10), { minLength: 1, maxLength: 4 }), (store, queries) => {
        for (const query of queries) expectExactScores(store, query);
      }),
      { numRuns: 60 },
    );
  });

  // Common query words and short feedback lists: the last pass reuses the query phase's sums,
  // and a few places make the floors bite.
  it('retrieveFacts gives exactly the facts explainRetrieval includes on stores of common words and rare feedback words', () => {
    const fewArb = fc.tuple(queryArb(3), fc.integer({ min: 1, max: 6 })).map(([query, maxFacts]) => ({
      ...query,
      maxFacts,
    }));
    fc.assert(
      fc.property(storeArb(3, true), fc.array(fewArb, { minLength: 1, maxLength: 6 }), (store, queries) => {
        for (const query of queries) expectExact(store, query);
      }),
      { numRuns: 100 },
    );
  });

  it('conventions the query does not match, tied on score and time, are cut exactly where the exhaustive ranking cuts them', () => {
    const conventionArb = fc.record({
      word: wordArb(VOCABULARY.length),
      relation: fc.constantFrom('convention', 'issue'),
      task: fc.integer({ min: 1, max: 3 }),
      at: fc.integer({ min: 0, max: 2 }),
    });
    fc.assert(
      fc.property(
        fc.array(conventionArb, { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 1, max: 12 }),
        (drafts, maxFacts) => {
          const conventions = drafts.map(({ word, relation, task, at }, i) =>
            makeFact({
              subject: `src/${word}.ts`,
              relation,
              object: `rule ${i}`,
              tags: ['convention'],
              validFrom: at,
              sourceTaskId: String(task),
              sourceRole: 'reviewer',
              confidence: 1,
            }),
          );
          const matching = makeFact({
            subject: 'ledger',
            relation: 'modified_by',
            object: 'task:4',
            tags: ['file_change'],
            validFrom: 1,
            sourceTaskId: '4',
            sourceRole: 'implementer',
            confidence: 1,
          });
          const facts = [matching, ...conventions];
          // Without recency no convention is found directly: every one is weighed at its base.
          const query: FactQuery = {
            taskDescription: 'ledger',
            taskId: '0',
            maxFacts,
            maxTokens: 100_000,
            ranking: { recency: { weight: 0, shared: 0 }, coChange: { weight: 0 } },
          };
          expectExact(addFacts(emptyFactStore({ maxValidFacts: 10_000 }), facts), query);
          // A replay's store is written in place: its posting blocks are never frozen.
          transientRun(createOwner(), () =>
            expectExact(addFacts(emptyFactStore({ maxValidFacts: 10_000 }), facts), query),
          );
        },
      ),
      { numRuns: 100 },
    );
  });

  // The versions share their records; a fact invalidated and asserted again keeps its id at another
  // document: what one version's lookups leave behind must never answer for another.
  it('every version of a store, queried in any order after the others, gives exactly what explainRetrieval gives', () => {
    type Step =
      | { readonly kind: 'add'; readonly drafts: Draft[] }
      | { readonly kind: 'invalidate'; readonly draft: Draft }
      | { readonly kind: 'again'; readonly back: number };
    const stepArb: fc.Arbitrary<Step> = fc.oneof(
      {
        weight: 3,
        arbitrary: fc.record({
          kind: fc.constant('add' as const),
          drafts: fc.array(draftArb(3, false), { minLength: 1, maxLength: 8 }),
        }),
      },
      { weight: 2, arbitrary: fc.record({ kind: fc.constant('invalidate' as const), draft: draftArb(3, false) }) },
      { weight: 2, arbitrary: fc.record({ kind: fc.constant('again' as const), back: fc.nat({ max: 5 }) }) },
    );
    fc.assert(
      fc.property(
        fc.array(stepArb, { minLength: 2, maxLength: 14 }),
        fc.array(queryArb(3), { minLength: 1, maxLength: 3 }),
        fc.array(fc.nat(), { minLength: 3, maxLength: 12 }),
        (steps, queries, picks) => {
          const versions: FactStore[] = [emptyFactStore({ maxValidFacts: 10_000 })];
          const added: Draft[][] = [];
          steps.forEach((step, i) => {
            const store = versions[versions.length - 1]!;
            const at = 100 * (i + 1);
            if (step.kind === 'add') {
              added.push(step.drafts);
              versions.push(
                addFacts(
                  store,
                  step.drafts.map((draft) => toFact({ ...draft, at: at + draft.at })),
                ),
              );
            } else if (step.kind === 'invalidate') {
              const fact = toFact(step.draft);
              versions.push(invalidate(store, fact.subject, fact.relation, at));
            } else if (added.length > 0) {
              // The same triples again, later: the same ids, asserted anew.
              const drafts = added[Math.max(0, added.length - 1 - step.back)]!;
              versions.push(
                addFacts(
                  store,
                  drafts.map((draft) => toFact({ ...draft, at: at + draft.at })),
                ),
              );
            }
          });
          const expectedOf = includedOnce();
          for (const pick of picks) {
            const store = versions[pick % versions.length]!;
            for (const query of queries) expectExact(store, query, expectedOf);
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('stores built from the same fact values in other orders, queried one after the other, each give what explainRetrieval gives', () => {
    fc.assert(
      fc.property(
        fc.array(draftArb(3, false), { minLength: 2, maxLength: 40 }),
        fc.array(queryArb(3), { minLength: 1, maxLength: 3 }),
        (drafts, queries) => {
          // Checked, frozen facts (as the extractor makes them) enter a store as they are: both stores
          // hold the same objects, at other documents.
          const facts = drafts
            .map(toFact)
            .map((fact) => Object.freeze({ ...fact, tags: Object.freeze([...fact.tags]) }));
          const stores = [facts, [...facts].reverse()].map((order) =>
            order.reduce((store, fact) => addCheckedFacts(store, [fact]), emptyFactStore({ maxValidFacts: 10_000 })),
          );
          const expectedOf = includedOnce();
          for (const store of [...stores, ...stores])
            for (const query of queries) expectExact(store, query, expectedOf);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('with any weights up to the largest double, every score is a finite number and retrieveFacts gives exactly what explainRetrieval includes', () => {
    fc.assert(
      fc.property(
        storeArb(3, true),
        fc.array(queryArb(3, extremeRankingArb), { minLength: 1, maxLength: 3 }),
        (store, queries) => {
          for (const query of queries) {
            const decisions = explainRetrieval(store, query);
            expect(decisions.filter((decision) => !Number.isFinite(decision.score))).toEqual([]);
            expectExact(store, query);
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  // One scratch serves every query of a process, whichever way each takes: what one way leaves in
  // the scratch must never reach the other's answer.
  it('one scratch answering a store by MaxScore and a smaller one by scanning, in turn, gives what explainRetrieval gives each time', () => {
    fc.assert(
      fc.property(storeArb(3), fc.array(queryArb(3), { minLength: 1, maxLength: 4 }), (store, queries) => {
        const extra = makeFact({
          subject: 'src/extra.ts',
          relation: 'modified_by',
          object: 'task:9',
          tags: ['file_change'],
          validFrom: 0,
          sourceTaskId: '9',
          sourceRole: 'implementer',
          confidence: 1,
        });
        const larger = addFacts(store, [extra]);
        expect(selectValidCount(larger)).toBe(selectValidCount(store) + 1);
        const scratch = createRetrievalScratch({ scanFacts: selectValidCount(store) });
        const expectedOf = includedOnce();
        for (const query of queries)
          for (const target of [larger, store, larger]) {
            const expected = expectedOf(target, query);
            expect(retrieveFacts(target, { ...query, scratch })).toEqual(expected);
          }
      }),
      { numRuns: 80 },
    );
  });

  it('a query sharing a term with some eligible valid fact never comes back empty', () => {
    fc.assert(
      fc.property(storeArb(3), fc.array(wordArb(3), { minLength: 1, maxLength: 6 }), (store, words) => {
        const query: FactQuery = { taskDescription: words.join(' '), taskId: 'none', maxFacts: 10, maxTokens: 500 };
        const matching = explainRetrieval(store, query).some(
          (decision) => decision.fact.validTo === undefined && (decision.parts?.terms.length ?? 0) > 0,
        );
        if (matching)
          for (const scratch of WAYS) expect(retrieveFacts(store, { ...query, scratch }).length).toBeGreaterThan(0);
      }),
      { numRuns: 60 },
    );
  });
});

describe('exact top k on a store large enough to prune', () => {
  // 3,000 facts over 30 words, subjects and objects of 1 to 8 words: long posting lists whose
  // weights vary with the fact's length, where the lists stop admitting facts early and the
  // bound of every later list decides which facts are opened, kept and completed.
  const words = Array.from({ length: 30 }, (_, i) => `w${String.fromCharCode(97 + (i % 26))}${i}`);
  const drafts = fc.sample(
    fc.record({
      subject: fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 4 }),
      file: fc.boolean(),
      relation: fc.nat({ max: RELATIONS.length - 1 }),
      object: fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 8 }),
      task: fc.integer({ min: 1, max: 300 }),
    }),
    { seed: 11, numRuns: 3_000 },
  );
  const store = asOneRun(() => {
    let next = emptyFactStore({ maxValidFacts: 100_000 });
    drafts.forEach((draft, i) => {
      const relation = RELATIONS[draft.relation]!;
      next = addFacts(next, [
        makeFact({
          subject: draft.file ? `src/${draft.subject.join('/')}.ts` : draft.subject.join('_'),
          relation,
          object: draft.object.join(' '),
          tags: TAG_SETS[draft.relation]!,
          validFrom: i,
          sourceTaskId: String(draft.task),
          sourceRole: relation === 'issue' || relation === 'convention' ? 'reviewer' : 'implementer',
          confidence: 1,
        }),
      ]);
    });
    return next;
  });

  it('retrieveFacts gives exactly the facts explainRetrieval includes for 6-word queries of common words', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...words), { minLength: 6, maxLength: 6 }),
        fc.constantFrom(3, 10, 40),
        (query, maxFacts) => {
          const q: FactQuery = { taskDescription: query.join(' '), taskId: 'q', maxFacts, maxTokens: 100_000 };
          expectExact(store, q);
        },
      ),
      { numRuns: 40 },
    );
  });
});
