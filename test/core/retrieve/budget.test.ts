import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  addFacts,
  DEFAULT_RANKING,
  emptyFactStore,
  estimateTokens,
  explainRetrieval,
  formatFactLine,
  formatSessionFacts,
  makeFact,
  type RetrievalDecision,
  retrieveFacts,
  type SectionLayout,
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

/**
 * Stores of tasks' own file changes, with paths of every length and conventions beside them:
 * what the grouped layout draws on a task's line, `- task:N modified a, b`, and what it does not.
 */
const filesStoreArb = fc
  .array(
    fc.record({
      path: fc.array(fc.constantFrom('src', 'lib', 'api', 'login', 'billing', 'components', 'x'), {
        minLength: 1,
        maxLength: 12,
      }),
      task: fc.constantFrom('1', '2', '3', '4'),
      convention: fc.boolean(),
      validFrom: fc.integer({ min: 0, max: 50 }),
    }),
    { minLength: 6, maxLength: 40 },
  )
  .map((rows) =>
    addFacts(
      emptyFactStore(),
      rows.map(({ path, task, convention, validFrom }) =>
        makeFact({
          subject: `${path.join('/')}.ts`,
          relation: convention ? 'convention' : 'modified_by',
          object: convention ? `login ${path.join(' ')} by convention` : `task:${task}`,
          tags: [convention ? 'convention' : 'file_change'],
          validFrom,
          sourceTaskId: task,
          sourceRole: convention ? 'reviewer' : 'implementer',
          confidence: 1,
        }),
      ),
    ),
  );

/**
 * What a fact adds to a section: its line and line break; in the grouped layout, a task's own
 * file change adds its path and `, ` to the task's line (read off the line it is drawn on alone).
 */
const addedCharacters = (fact: SessionFact, layout: SectionLayout): number => {
  if (layout === 'grouped' && fact.relation === 'modified_by' && fact.object === `task:${fact.sourceTaskId}`) {
    const line = formatSessionFacts([fact], { layout }).split('\n')[1]!;
    return line.length - (line.indexOf(' modified ') + ' modified '.length) + 2;
  }
  return formatFactLine(fact).length + 1;
};

/**
 * The section the budget stage should give, worked out from the ranked decisions the way the
 * ranking's `fill` says: the candidates the cap and the floor keep (included, or left out for
 * the budget), taken best first, then by score over the characters they add to `power` (a fact
 * that is not a file change counting at most `longest`), each one that fits after those taken
 * before it; drawn in rank order, and, with a counter that does not add up line by line, the
 * ones taken last dropped until the section fits.
 */
const expectedSection = (
  decisions: ReadonlyArray<RetrievalDecision>,
  fill: { power: number; longest: number },
  maxTokens: number,
  layout: SectionLayout,
  countTokens: (text: string) => number,
): SessionFact[] => {
  const ranked = decisions.filter(({ decision, reason }) => decision === 'included' || reason === 'budget');
  const valueOf = ({ fact, score }: RetrievalDecision): number => {
    const length = addedCharacters(fact, layout);
    return score / (fact.tags.includes('file_change') ? length : Math.min(length, fill.longest)) ** fill.power;
  };
  const order =
    fill.power === 0 || ranked.length < 3
      ? ranked
      : [ranked[0]!, ...ranked.slice(1).sort((x, y) => valueOf(y) - valueOf(x))];
  const draw = (facts: ReadonlyArray<RetrievalDecision>): string =>
    formatSessionFacts(
      facts.map(({ fact }) => fact),
      { layout },
    );
  const taken: RetrievalDecision[] = [];
  for (const candidate of order) if (countTokens(draw([...taken, candidate])) <= maxTokens) taken.push(candidate);
  let section = ranked.filter((candidate) => taken.includes(candidate));
  if (layout !== 'lines' || countTokens !== estimateTokens)
    while (section.length > 0 && countTokens(draw(section)) > maxTokens) {
      const last = taken.pop();
      section = section.filter((candidate) => candidate !== last);
    }
  return section.map(({ fact }) => fact);
};

const fillArb = fc.record({
  power: fc.constantFrom(0, 0.5, 1, 2),
  longest: fc.constantFrom(1, 40, DEFAULT_RANKING.fill.longest, 200),
});

describe('exact token budgets', () => {
  it('the budget stage keeps exactly the facts that fit when taken best first, then by score per character, and gives them in rank order', () => {
    fc.assert(
      fc.property(
        fc.oneof(storeArb, wildStoreArb, filesStoreArb),
        fc.oneof(fc.string(), fc.constantFrom('login billing components', 'fix the api in src')),
        fc.integer({ min: 0, max: 300 }),
        fc.constantFrom('lines' as const, 'grouped' as const),
        fc.option(fillArb, { nil: undefined }),
        (store, query, maxTokens, layout, fill) => {
          const q = {
            taskDescription: query,
            taskId: '9',
            maxFacts: 12,
            maxTokens,
            layout,
            ...(fill === undefined ? {} : { ranking: { fill } }),
          };
          const decisions = explainRetrieval(store, q);
          const expected = expectedSection(decisions, fill ?? DEFAULT_RANKING.fill, maxTokens, layout, estimateTokens);
          expect(decisions.filter(({ decision }) => decision === 'included').map(({ fact }) => fact)).toEqual(expected);
          expect(retrieveFacts(store, q)).toEqual(expected);
        },
      ),
    );
  });

  it("in the grouped layout, the fill weighs a task's own file change by the path and separator it adds to its task's line", () => {
    fc.assert(
      fc.property(
        filesStoreArb,
        fc.constantFrom('login billing components', 'fix the api in src'),
        fc.integer({ min: 10, max: 120 }),
        fc.constantFrom(DEFAULT_RANKING.fill, { power: 1, longest: 60 }),
        (store, query, maxTokens, fill) => {
          const q = { taskDescription: query, taskId: '9', maxFacts: 30, maxTokens, layout: 'grouped' as const };
          const decisions = explainRetrieval(store, { ...q, ranking: { fill } });
          const expected = expectedSection(decisions, fill, maxTokens, 'grouped', estimateTokens);
          expect(retrieveFacts(store, { ...q, ranking: { fill } })).toEqual(expected);
        },
      ),
      { numRuns: 200 },
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
    'in the %s layout, the section fits the budget, and is exactly the one the fill order takes, with the estimate or real BPE tokens',
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
            const included = decisions.filter(({ decision }) => decision === 'included').map(({ fact }) => fact);
            expect(countTokens(formatSessionFacts(included, { layout }))).toBeLessThanOrEqual(maxTokens);
            expect(included).toEqual(expectedSection(decisions, DEFAULT_RANKING.fill, maxTokens, layout, countTokens));
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
