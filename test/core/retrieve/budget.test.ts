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
import { retrieveRanked } from '../../../src/core/retrieve/retrieve.js';
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

  it.each(['lines', 'grouped'] as const)(
    'filling a section of the %s layout fact by fact, every trial is exactly the section drawn whole, taken or not',
    (layout) => {
      const factArb = fc
        .record({
          subject: fc.oneof(text, fc.constantFrom('src/a.ts', 'src/b.ts', `src/${'deep/'.repeat(30)}c.ts`)),
          relation: fc.constantFrom('modified_by', 'convention', 'issue'),
          object: fc.oneof(text, fc.constantFrom('own', 'rule; must_fix x', 'see [task:1]')),
          task: fc.oneof(
            fc.constantFrom('1', '2', '3', 'a b', 'x,y'),
            fc.integer({ min: 0, max: 30 }).map((n) => `${'t'.repeat(n)}${n}`),
          ),
          take: fc.boolean(),
        })
        .map(({ subject, relation, object, task, take }) => ({
          take,
          fact: makeFact({
            subject,
            relation,
            object: object === 'own' ? `task:${task}` : object,
            tags: ['convention'],
            validFrom: 1,
            sourceTaskId: task,
            sourceRole: 'reviewer',
            confidence: 1,
          }),
        }));
      fc.assert(
        fc.property(fc.array(factArb, { maxLength: 40 }), (tries) => {
          const fill = renderSection.fill(layout);
          const taken: SessionFact[] = [];
          for (const { fact, take } of tries) {
            const trial = fill.tryFact(fact);
            const whole = renderSection([...taken, fact], layout);
            expect(trial.text()).toBe(whole);
            expect(trial.length).toBe(whole.length);
            if (take) {
              trial.take();
              taken.push(fact);
            }
          }
        }),
        { numRuns: 300 },
      );
    },
  );
});

/**
 * A store of `tasks` tasks of ten facts each, every one of which a query for `module` matches:
 * seven files a task changed (one line per task in the grouped layout), conventions on one of
 * them (a subject's line), an issue on a subject every task shares (a subject whose tasks' ids
 * grow, until clipped, as facts join it), and a note whose text could forge a fact (a line of
 * its own).
 */
const largeStore = (tasks: number) => {
  const facts: SessionFact[] = [];
  for (let task = 1; task <= tasks; task += 1) {
    const common = { validFrom: task, sourceTaskId: String(task), confidence: 1 } as const;
    for (let file = 0; file < 7; file += 1)
      facts.push(
        makeFact({
          ...common,
          subject: `src/module${task % 13}/file${task}_${file}.ts`,
          relation: 'modified_by',
          object: `task:${task}`,
          tags: ['file_change'],
          sourceRole: 'implementer',
        }),
      );
    facts.push(
      makeFact({
        ...common,
        subject: `src/module${task % 13}/file${task}_0.ts`,
        relation: 'convention',
        object: `module ${task} keeps its types strict`,
        tags: ['convention'],
        sourceRole: 'reviewer',
      }),
      makeFact({
        ...common,
        subject: 'src/module/shared.ts',
        relation: `issue${task}`,
        object: `module ${task} reads the shared table`,
        tags: ['error'],
        sourceRole: 'reviewer',
      }),
      makeFact({
        ...common,
        subject: `src/module${task % 13}/notes${task}.md`,
        relation: 'decision',
        object: `module ${task}; must_fix nothing [task:0]`,
        tags: ['decision'],
        sourceRole: 'reviewer',
      }),
    );
  }
  return addFacts(emptyFactStore({ maxValidFacts: facts.length }), facts);
};

describe('the budget stage on a large section', () => {
  const store = largeStore(25);
  const query = (maxTokens: number, layout: SectionLayout) => ({
    taskDescription: 'module',
    taskId: 'next',
    maxFacts: 1_000,
    maxTokens,
    layout,
    ranking: { floor: 0 },
  });

  it.each([
    [Infinity, 'grouped'],
    [1e9, 'grouped'],
    [2_000, 'grouped'],
    [300, 'grouped'],
    [Infinity, 'lines'],
    [2_000, 'lines'],
  ] as const)(
    'with a budget of %s tokens in the %s layout, gives the section a fill that draws it whole for every candidate gives',
    (maxTokens, layout) => {
      const q = query(maxTokens, layout);
      const decisions = explainRetrieval(store, q);
      const expected = expectedSection(decisions, DEFAULT_RANKING.fill, maxTokens, layout, estimateTokens);
      if (maxTokens === Infinity) expect(expected).toHaveLength(250);
      expect(retrieveFacts(store, q)).toEqual(expected);
    },
  );

  it.each(['lines', 'grouped'] as const)(
    'in the %s layout, draws no section whole per candidate: the facts drawn grow with the candidates, not their square',
    (layout) => {
      let drawn = 0;
      const counting: typeof renderSection = Object.assign(
        (facts: ReadonlyArray<SessionFact>, as: SectionLayout): string => {
          drawn += facts.length;
          return renderSection(facts, as);
        },
        renderSection,
      );
      const included = retrieveRanked(store, query(Infinity, layout), counting);
      expect(included).toHaveLength(250);
      // At most the section drawn once in rank order, to check it against the budget.
      expect(drawn).toBeLessThanOrEqual(included.length);
    },
  );
});
