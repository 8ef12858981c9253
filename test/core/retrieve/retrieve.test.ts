import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import {
  addFacts,
  createRetrievalScratch,
  explainRetrievalEither,
  INVALID_QUERY,
  parseFactQuery,
  retrieveFactsEither,
  emptyFactStore,
  estimateTokens,
  explainRetrieval,
  type FactQuery,
  type FactStore,
  formatSessionFacts,
  invalidate,
  makeFact,
  DEFAULT_RANKING,
  factPriors,
  recordTaskPrompt,
  retrieveFacts,
  selectAllFacts,
  selectFactsValidAt,
  selectValidFacts,
  selectValidFactsByTags,
  type RetrievalDecision,
  type SessionFact,
} from '../../../src/index.js';
import {
  MAX_FILL_POWER,
  MAX_RANKING_WEIGHT,
  MIN_RANKING_WEIGHT,
  RECENCY_DECAY_BOUNDS,
  resolveRanking,
} from '../../../src/core/retrieve/rank.js';
import { storeArb } from '../../arbitraries.js';

const fact = (subject: string, relation: string, object: string, validFrom: number, extra: Partial<SessionFact> = {}) =>
  makeFact({
    subject,
    relation,
    object,
    tags: extra.tags ?? ['file_change'],
    validFrom,
    sourceTaskId: extra.sourceTaskId ?? '1',
    sourceRole: extra.sourceRole ?? 'implementer',
    confidence: 1,
  });

/**
 * Keyword relevance only: the stage tests below check the pipeline, not the signals beyond the
 * words; an unmatched convention ranks below the best match (its base times its prior under 1).
 */
const KEYWORDS = { recency: { weight: 0, shared: 0 }, coChange: { weight: 0 }, conventionBase: 0.2 };

const query = (taskDescription: string, overrides: Partial<FactQuery> = {}): FactQuery => ({
  taskDescription,
  taskId: '9',
  maxFacts: 10,
  maxTokens: 500,
  ranking: KEYWORDS,
  ...overrides,
});

const store: FactStore = addFacts(emptyFactStore(), [
  fact('src/auth/login.ts', 'modified_by', 'task:1', 1),
  fact('src/billing/invoice.ts', 'modified_by', 'task:2', 2, { sourceTaskId: '2' }),
  fact('task:3', 'summary', 'Added rate limiting middleware', 3, { sourceTaskId: '3', tags: ['decision'] }),
  fact('task:4', 'convention', 'Handlers follow verbNoun naming', 4, {
    sourceTaskId: '4',
    tags: ['convention'],
    sourceRole: 'reviewer',
  }),
  fact('task:5', 'tested_by', 'npm test passed', 5, { sourceTaskId: '5', tags: ['test'] }),
]);

const recordPrompts = (s: FactStore, prompts: ReadonlyArray<readonly [string, string]>): FactStore =>
  prompts.reduce((current, [taskId, prompt], i) => recordTaskPrompt(current, taskId, prompt, i), s);

const subjectsOf = (facts: ReadonlyArray<SessionFact>) => facts.map((f) => f.subject);

describe('the fill order', () => {
  // Three files the query matches alike; the long path's task is the latest, so it ranks first of them.
  const long = 'packages/runtime-core/src/components/internal/experimental/transitions/alpha.ts';
  const s = addFacts(emptyFactStore(), [
    fact('src/main.ts', 'modified_by', 'task:1', 1),
    fact('a/transitions/alpha.ts', 'modified_by', 'task:3', 3, { sourceTaskId: '3' }),
    fact('b/transitions/alpha.ts', 'modified_by', 'task:4', 4, { sourceTaskId: '4' }),
    fact(long, 'modified_by', 'task:5', 5, { sourceTaskId: '5' }),
  ]);
  const words = { ...KEYWORDS, feedback: { weight: 0 } };
  const filled = (power: number, maxTokens: number) =>
    subjectsOf(
      retrieveFacts(s, query('alpha transitions in main.ts', { maxTokens, ranking: { ...words, fill: { power } } })),
    );

  it('takes two short file lines that score as well as a long one before it, and lists the section in rank order', () => {
    const ranked = explainRetrieval(s, query('alpha transitions in main.ts', { maxTokens: 10_000, ranking: words }));
    // The premise: the named file first, then the long path, which scores as the short ones do.
    expect(subjectsOf(ranked.map(({ fact }) => fact))).toEqual([
      'src/main.ts',
      long,
      'b/transitions/alpha.ts',
      'a/transitions/alpha.ts',
    ]);
    expect(ranked[1]!.score).toBe(ranked[2]!.score);
    const budget = estimateTokens(formatSessionFacts(ranked.slice(0, 2).map(({ fact }) => fact)));
    // In rank order the long line fills the budget; by score per character the two short ones do.
    expect(filled(0, budget)).toEqual(['src/main.ts', long]);
    expect(filled(1, budget)).toEqual(['src/main.ts', 'b/transitions/alpha.ts', 'a/transitions/alpha.ts']);
  });
});

describe('retrieveFacts', () => {
  it('keeps facts that share a keyword with the task, plus conventions', () => {
    expect(subjectsOf(retrieveFacts(store, query('Fix the login flow')))).toEqual(['src/auth/login.ts', 'task:4']);
  });

  it.each([
    ['Chinese', '登录页面报错了', 'task:1'],
    ['Japanese', 'キャッシュの問題を調べて', 'task:2'],
    ['Korean', '결제 모듈을 고쳐', 'task:3'],
  ])('%s: finds a fact by a word its text shares with the prompt', (_label, prompt, subject) => {
    const s = addFacts(emptyFactStore(), [
      fact('task:1', 'summary', '修复了登录页面的缓存问题', 1, { tags: ['decision'] }),
      fact('task:2', 'summary', 'ログイン後にキャッシュを削除する', 2, { sourceTaskId: '2', tags: ['decision'] }),
      fact('task:3', 'summary', '결제 모듈의 오류 수정', 3, { sourceTaskId: '3', tags: ['decision'] }),
      fact('src/billing/invoice.ts', 'modified_by', 'task:4', 4, { sourceTaskId: '4' }),
    ]);
    expect(subjectsOf(retrieveFacts(s, query(prompt)))).toEqual([subject]);
  });

  it('answers a frozen list of frozen facts, as the selectors of the valid facts do', () => {
    const answers = [
      retrieveFacts(store, query('Fix the login flow')),
      retrieveFacts(store, query('nothing matches this')),
      selectValidFactsByTags(store, ['convention']),
      selectFactsValidAt(store, 2_000),
    ];
    for (const answer of answers) {
      expect(Object.isFrozen(answer)).toBe(true);
      expect(answer.every((fact) => Object.isFrozen(fact))).toBe(true);
    }
  });

  it('ranks by score, then the most recent first', () => {
    const s = addFacts(emptyFactStore(), [
      fact('src/a/login.ts', 'modified_by', 'task:1', 1),
      fact('src/b/login.ts', 'modified_by', 'task:1', 2),
      fact('src/login/rate.ts', 'modified_by', 'task:1', 3),
    ]);
    expect(subjectsOf(retrieveFacts(s, query('login rate limits')))).toEqual([
      'src/login/rate.ts',
      'src/b/login.ts',
      'src/a/login.ts',
    ]);
  });

  it('with no keyword overlap and no recency gives only the conventions, and an empty store gives nothing', () => {
    expect(subjectsOf(retrieveFacts(store, query('Paint the bikeshed')))).toEqual(['task:4']);
    expect(retrieveFacts(emptyFactStore(), query('login'))).toEqual([]);
  });

  it('filters by any of the query tags; empty tags mean no filter', () => {
    expect(subjectsOf(retrieveFacts(store, query('login rate limiting invoice', { tags: ['decision'] })))).toEqual([
      'task:3',
    ]);
    expect(retrieveFacts(store, query('login', { tags: [] }))).toHaveLength(2);
  });

  it('reads a tag list holding a value that is no fact tag as no filter, as a list that is none, where parseFactQuery refuses it', () => {
    const unfiltered = retrieveFacts(store, query('login rate limiting invoice'));
    expect(unfiltered.length).toBeGreaterThan(1);
    for (const tags of [['decisions'], [1], [null], ['decision', 'nope'], 'decision']) {
      const odd = query('login rate limiting invoice', { tags: tags as never });
      expect(parseFactQuery(odd)).toEqual(E.left({ code: INVALID_QUERY, message: 'tags is not a list of fact tags' }));
      expect(retrieveFacts(store, odd)).toEqual(unfiltered);
      expect(explainRetrieval(store, odd).filter(({ reason }) => reason === 'tag')).toEqual([]);
    }
  });

  it('keeps a fact of a file the query names past the relevance floor through its exact-file boost: with the boost off, the floor holds it as any other', () => {
    const named = addFacts(emptyFactStore(), [
      fact('lib/util.ts', 'modified_by', 'task:1', 1),
      fact('src/alpha/beta/gamma/delta/epsilon.ts', 'modified_by', 'task:2', 2, { sourceTaskId: '2' }),
    ]);
    const decisionOf = (exactFileBoost: number): RetrievalDecision | undefined =>
      explainRetrieval(
        named,
        query('alpha beta gamma delta epsilon, then lib/util.ts', {
          ranking: { ...KEYWORDS, floor: 0.9, exactFileBoost },
        }),
      ).find(({ fact: { subject } }) => subject === 'lib/util.ts');
    expect(decisionOf(DEFAULT_RANKING.exactFileBoost)).toMatchObject({ decision: 'included' });
    expect(decisionOf(0)).toMatchObject({ decision: 'excluded', reason: 'no_match' });
  });

  it("excludes the query task's own facts", () => {
    expect(subjectsOf(retrieveFacts(store, query('login', { taskId: '1' })))).toEqual(['task:4']);
  });

  it('excludes invalidated facts', () => {
    const s = invalidate(store, 'src/auth/login.ts', 'modified_by', 10);
    expect(subjectsOf(retrieveFacts(s, query('login')))).toEqual(['task:4']);
  });

  it('takes at most maxFacts', () => {
    expect(retrieveFacts(store, query('login invoice rate', { maxFacts: 2 }))).toHaveLength(2);
    expect(retrieveFacts(store, query('login', { maxFacts: 0 }))).toEqual([]);
  });

  it('measures the budget on the rendered section, header included, and still tries smaller later facts', () => {
    const s = addFacts(emptyFactStore(), [
      fact('src/login/a.ts', 'requires', `login ${'long '.repeat(20)}`.trim(), 3, { tags: ['dependency'] }),
      fact('src/login/b.ts', 'modified_by', 'task:1', 2),
    ]);
    const countTokens = (text: string) => text.length;
    const short = selectAllFacts(s).find((f) => f.subject === 'src/login/b.ts')!;
    const small = formatSessionFacts([short]).length;
    // The long fact ranks first (more recent, same score) but alone overruns the budget.
    expect(subjectsOf(retrieveFacts(s, query('login')))[0]).toBe('src/login/a.ts');
    const facts = retrieveFacts(s, query('login', { maxTokens: small, countTokens }));
    expect(subjectsOf(facts)).toEqual(['src/login/b.ts']);
    expect(countTokens(formatSessionFacts(facts))).toBeLessThanOrEqual(small);
  });

  it('gives [] for bad numbers, and retrieveFactsEither says which field is wrong', () => {
    for (const bad of [-1, Number.NaN, undefined, '3']) {
      expect(retrieveFacts(store, query('login', { maxFacts: bad as number }))).toEqual([]);
      expect(retrieveFacts(store, query('login', { maxTokens: bad as number }))).toEqual([]);
      expect(retrieveFactsEither(store, query('login', { maxFacts: bad as number }))).toEqual(
        E.left({ code: INVALID_QUERY, message: 'maxFacts is not a number of facts (0 or more)' }),
      );
      expect(retrieveFactsEither(store, query('login', { maxTokens: bad as number }))).toEqual(
        E.left({ code: INVALID_QUERY, message: 'maxTokens is not a number of tokens (0 or more)' }),
      );
    }
  });

  it('lets a token counter that throws surface: no catch turns it into an empty answer', () => {
    const throwing = () => {
      throw new Error('tokenizer down');
    };
    expect(() => retrieveFacts(store, query('login', { countTokens: throwing }))).toThrow('tokenizer down');
    expect(() => retrieveFactsEither(store, query('login', { countTokens: throwing }))).toThrow('tokenizer down');
  });

  it('refuses a token counter answer that is no number of tokens with a TypeError naming countTokens, never an empty or unbounded section', () => {
    const answers: ReadonlyArray<readonly [unknown, string]> = [
      [Number.NaN, 'NaN'],
      ['12', 'a string'],
      [undefined, 'undefined'],
      [-5, '-5'],
      [Number.POSITIVE_INFINITY, 'Infinity'],
    ];
    for (const [answer, said] of answers) {
      const countTokens = (() => answer) as unknown as (text: string) => number;
      const message = `countTokens answered ${said}, not a number of tokens (a finite number 0 or more)`;
      expect(() => retrieveFacts(store, query('login', { countTokens }))).toThrow(
        expect.objectContaining({ name: 'TypeError', message }),
      );
      expect(() => retrieveFactsEither(store, query('login', { countTokens }))).toThrow(
        expect.objectContaining({ name: 'TypeError', message }),
      );
      expect(() => explainRetrieval(store, query('login', { countTokens }))).toThrow(
        expect.objectContaining({ name: 'TypeError', message }),
      );
    }
    // A count that is not whole is still a count.
    expect(retrieveFacts(store, query('login', { countTokens: (text) => text.length / 3 }))).not.toEqual([]);
  });

  it('parseFactQuery refuses what is not a query, field by field, and keeps a query exactly', () => {
    const refused = (input: unknown): string | undefined => {
      const parsed = parseFactQuery(input);
      return E.isLeft(parsed) ? parsed.left.message : undefined;
    };
    expect(refused(null)).toBe('the query is not an object');
    expect(refused([])).toBe('the query is not an object');
    expect(refused({ ...query('x'), taskDescription: 3 })).toBe('taskDescription is not a string');
    expect(refused({ ...query('x'), taskId: 9 })).toBe('taskId is not a string');
    expect(refused({ ...query('x'), tags: ['nope'] })).toBe('tags is not a list of fact tags');
    expect(refused({ ...query('x'), countTokens: 'words' })).toBe('countTokens is not a function');
    expect(refused({ ...query('x'), ranking: 1 })).toBe('ranking is not an object');
    expect(refused({ ...query('x'), minScore: Infinity })).toBe('minScore is not a finite number');
    expect(refused({ ...query('x'), layout: 'table' })).toBe('layout is not one of lines, grouped');
    expect(refused({ ...query('x'), scratch: {} })).toBe('scratch is not one createRetrievalScratch made');
    const full = query('login', {
      tags: ['file_change'],
      minScore: 0,
      layout: 'grouped',
      scratch: createRetrievalScratch(),
    });
    expect(parseFactQuery(full)).toEqual(E.right(full));
    expect(retrieveFactsEither(store, full)).toEqual(E.right(retrieveFacts(store, full)));
    expect(explainRetrievalEither(store, full)).toEqual(E.right(explainRetrieval(store, full)));
  });

  it('parseFactQuery reads the tag list once: a list whose elements change after the check filters by the tags checked', () => {
    let reads = 0;
    const shifting = new Proxy(['decision'], {
      get: (target, key, receiver) => (key === '0' && reads++ > 0 ? 'test' : Reflect.get(target, key, receiver)),
    });
    const plain = query('rate limiting', { tags: ['decision'] });
    const parsed = parseFactQuery(query('rate limiting', { tags: shifting as never }));
    expect(parsed).toEqual(E.right(plain));
    expect(E.map((checked: FactQuery) => retrieveFacts(store, checked))(parsed)).toEqual(
      E.right(retrieveFacts(store, plain)),
    );
    expect(retrieveFacts(store, plain).map((kept) => kept.relation)).toEqual(['summary']);
  });

  it('answers the same with a scratch of its own as with the default one', () => {
    const own = createRetrievalScratch();
    for (const text of ['login', 'rate limiting', 'billing invoice', 'naming handlers'])
      expect(retrieveFacts(store, query(text, { scratch: own }))).toEqual(retrieveFacts(store, query(text)));
  });

  it('the rendered section always fits the budget', () => {
    fc.assert(
      fc.property(
        storeArb,
        fc.string(),
        fc.integer({ min: 0, max: 200 }),
        fc.integer({ min: 0, max: 12 }),
        (s, text, maxTokens, maxFacts) => {
          const facts = retrieveFacts(s, query(`${text} src a.ts task naming`, { maxTokens, maxFacts }));
          expect(facts.length).toBeLessThanOrEqual(maxFacts);
          expect(Math.ceil(formatSessionFacts(facts).length / 4)).toBeLessThanOrEqual(maxTokens);
        },
      ),
    );
  });
});

describe('explainRetrieval', () => {
  it('gives one decision per stored fact with the exclusion reasons', () => {
    const s = invalidate(store, 'src/billing/invoice.ts', 'modified_by', 10);
    const decisions = explainRetrieval(
      s,
      query('login invoice rate', { tags: ['file_change', 'convention', 'test'], taskId: '5', maxFacts: 1 }),
    );
    const bySubject = Object.fromEntries(decisions.map((d) => [d.fact.subject, [d.decision, d.reason]]));
    expect(bySubject).toEqual({
      'src/auth/login.ts': ['included', undefined],
      'src/billing/invoice.ts': ['excluded', 'invalidated'],
      'task:3': ['excluded', 'tag'],
      'task:4': ['excluded', 'max_facts'],
      'task:5': ['excluded', 'own_task'],
    });
    expect(decisions).toHaveLength(selectAllFacts(s).length);
  });

  it('marks unmatched facts no_match and over-budget ones budget', () => {
    const decisions = explainRetrieval(store, query('login', { maxTokens: 5 }));
    const reasons = Object.fromEntries(decisions.map((d) => [d.fact.subject, d.reason]));
    expect(reasons['src/billing/invoice.ts']).toBe('no_match');
    expect(reasons['src/auth/login.ts']).toBe('budget');
  });

  it('its included facts, in order, are exactly what retrieveFacts returns, and a reason is present exactly when excluded', () => {
    fc.assert(
      fc.property(
        storeArb,
        fc.string(),
        fc.integer({ min: 0, max: 300 }),
        fc.integer({ min: 0, max: 6 }),
        (s, text, maxTokens, maxFacts) => {
          const q = query(`${text} src/a.ts naming task`, { maxTokens, maxFacts, taskId: '2' });
          const decisions = explainRetrieval(s, q);
          expect(decisions.filter((d) => d.decision === 'included').map((d) => d.fact)).toEqual(retrieveFacts(s, q));
          expect(decisions).toHaveLength(selectAllFacts(s).length);
          for (const d of decisions) expect(d.reason === undefined).toBe(d.decision === 'included');
        },
      ),
    );
  });

  it('scores each fact by the words it holds: 20,000 words no fact holds change no decision, score or part', () => {
    // A prompt the size of a pasted file: each fact is read through its own terms, not looked
    // up once per word of the query (which took seconds on a store of thousands of facts).
    const filler = Array.from({ length: 20_000 }, (_, i) => `unheard${i}`).join(' ');
    fc.assert(
      fc.property(
        storeArb,
        fc.constantFrom('login invoice', 'src/a.ts naming task', 'rate rate limiting'),
        (s, words) => {
          const settings = { taskId: '2', ranking: DEFAULT_RANKING };
          const plain = explainRetrieval(s, query(words, settings));
          const padded = explainRetrieval(s, query(`${filler} ${words} ${filler}`, settings));
          expect(padded).toEqual(plain);
        },
      ),
      { numRuns: 20 },
    );
  });
});

describe('the signals beyond the words', () => {
  const defaults = (taskDescription: string, overrides: Partial<FactQuery> = {}): FactQuery => ({
    taskDescription,
    taskId: '99',
    maxFacts: 40,
    maxTokens: 500,
    ...overrides,
  });
  const changed = (task: number, files: ReadonlyArray<string>, at = task): SessionFact[] =>
    files.map((file) => fact(file, 'modified_by', `task:${task}`, at, { sourceTaskId: String(task) }));

  it("a prompt that matches nothing still gets the most recent tasks' files, the latest first", () => {
    const s = addFacts(emptyFactStore(), [
      ...changed(1, ['src/old.go']),
      ...changed(2, ['src/middle.go']),
      ...changed(3, ['src/latest.go']),
    ]);
    expect(subjectsOf(retrieveFacts(s, defaults('make lint')))).toEqual([
      'src/latest.go',
      'src/middle.go',
      'src/old.go',
    ]);
  });

  it('at the defaults, a store holding a valid fact of another task never gives an empty section, whatever the prompt', () => {
    fc.assert(
      fc.property(storeArb, fc.string(), fc.constantFrom('1', '2', '3', 'other'), (s, text, taskId) => {
        const others = selectValidFacts(s).filter((f) => f.sourceTaskId !== taskId);
        const facts = retrieveFacts(s, defaults(text, { taskId }));
        expect(facts.length > 0).toBe(others.length > 0);
      }),
    );
  });

  it.each([
    ['as stored', 'src/a.go'],
    ['with a leading ./', './src/a.go'],
    ['with Windows separators', 'src\\a.go'],
    ['with a . segment', 'src/./a.go'],
    ['with a .. segment', 'src/b/../a.go'],
    ['with a line and column', 'src/a.go:12:5'],
    ['with a line range', '`src/a.go:L2-L9`'],
    ['with a GitHub line anchor', 'src/a.go#L12'],
    ['in decomposed Unicode', 'lib/cafe\u0301.go'],
  ])('a prompt that names a file %s gives its fact the exact-file boost', (_label, named) => {
    const s = addFacts(emptyFactStore(), changed(1, ['src/a.go', 'src/b.go', 'lib/caf\u00e9.go', 'lib/c.go']));
    const decisions = explainRetrieval(s, defaults(`Fix the crash at ${named} today`));
    const boosted = decisions.filter((d) => (d.parts?.boost ?? 0) > 0).map((d) => d.fact.subject);
    expect(boosted).toEqual([named.includes('caf') ? 'lib/caf\u00e9.go' : 'src/a.go']);
  });

  it.each([
    ['Japanese', 'src/a.goのクラッシュを直して', 'src/a.go'],
    ['Chinese', '修复src/a.go中的崩溃', 'src/a.go'],
    ['Korean', 'src/a.go의 충돌을 고쳐', 'src/a.go'],
    ['Japanese, of a file with a Japanese name', 'docs/設計.goのクラッシュを直して', 'docs/設計.go'],
  ])('%s: a prompt that names a file against its words gives its fact the exact-file boost', (_label, prompt, file) => {
    const s = addFacts(emptyFactStore(), changed(1, ['src/a.go', 'src/b.go', 'docs/設計.go', 'lib/c.go']));
    const decisions = explainRetrieval(s, defaults(prompt));
    const boosted = decisions.filter((d) => (d.parts?.boost ?? 0) > 0).map((d) => d.fact.subject);
    expect(boosted).toEqual([file]);
  });

  it('recency decays per task and stops past its window of tasks', () => {
    const s = addFacts(
      emptyFactStore(),
      Array.from({ length: 6 }, (_, i) => changed(i + 1, [`src/f${i + 1}.go`])).flat(),
    );
    const decisions = explainRetrieval(
      s,
      defaults('make lint', { ranking: { recency: { weight: 1, decay: 0.5, tasks: 3, shared: 0 } } }),
    );
    const recency = Object.fromEntries(decisions.map((d) => [d.fact.subject, d.parts?.recency]));
    expect(recency).toEqual({
      'src/f6.go': 1,
      'src/f5.go': 0.5,
      'src/f4.go': 0.25,
      'src/f3.go': 0,
      'src/f2.go': 0,
      'src/f1.go': 0,
    });
  });

  it('the shared recency of a recent task is divided by the square root of the files it changed', () => {
    const s = addFacts(emptyFactStore(), [
      ...changed(1, ['src/a.go', 'src/b.go', 'src/c.go', 'src/d.go']),
      ...changed(2, ['src/e.go']),
    ]);
    const decisions = explainRetrieval(
      s,
      defaults('make lint', { ranking: { recency: { weight: 1, decay: 0.5, tasks: 3, shared: 2 } } }),
    );
    const recency = Object.fromEntries(decisions.map((d) => [d.fact.subject, d.parts?.recency]));
    // Task 2, the latest: 1 + 2 / sqrt(1); task 1, one back: (1 + 2 / sqrt(4)) x 0.5.
    expect(recency['src/e.go']).toBe(3);
    expect(recency['src/a.go']).toBe(1);
    expect(recency['src/d.go']).toBe(1);
  });

  it('files that changed in the same tasks as the best match come along by co-change', () => {
    const s = addFacts(emptyFactStore({ maxValidFacts: 10_000 }), [
      ...changed(1, ['src/parser.y', 'src/parser.c']),
      ...changed(2, ['src/parser.y', 'src/parser.c', 'docs/grammar.md']),
      ...changed(3, ['src/lexer.c']),
      ...Array.from({ length: 70 }, (_, i) => changed(4 + i, [`src/unrelated${i}.c`])).flat(),
    ]);
    const q = defaults('Extend the parser.y grammar with a pipe operator', {
      ranking: { recency: { weight: 0, shared: 0 } },
    });
    const decisions = explainRetrieval(s, q).filter((d) => d.reason !== 'invalidated');
    const coChange = Object.fromEntries(decisions.map((d) => [d.fact.subject, d.parts?.coChange ?? 0]));
    // parser.c changed in both of parser.y's tasks, grammar.md in one of them; lexer.c in neither.
    expect(coChange['src/parser.c']).toBeGreaterThan(coChange['docs/grammar.md']!);
    expect(coChange['docs/grammar.md']).toBeGreaterThan(0);
    expect(coChange['src/lexer.c']).toBe(0);
    expect(subjectsOf(retrieveFacts(s, q))).toEqual(['src/parser.y', 'src/parser.c', 'docs/grammar.md']);
  });

  it('a sweep (a task that changed more than 32 files) lends no co-change, and only the latest 32 tasks of a seed count', () => {
    const sweep = Array.from({ length: 40 }, (_, i) => `src/mod${i}.c`);
    const s = addFacts(emptyFactStore({ maxValidFacts: 10_000 }), [
      ...changed(1, ['src/parser.y', ...sweep]),
      ...changed(2, ['src/parser.y', 'src/old.c']),
      ...Array.from({ length: 32 }, (_, i) => changed(3 + i, ['src/parser.y', 'src/parser.c'])).flat(),
    ]);
    // The latest tasks are those whose prompts came last.
    const withPrompts = recordPrompts(
      s,
      Array.from({ length: 34 }, (_, i) => [String(i + 1), `Work item ${i + 1}`] as const),
    );
    const q = defaults('Extend the parser.y grammar with a pipe operator', {
      ranking: { recency: { weight: 0, shared: 0 } },
    });
    const decisions = explainRetrieval(withPrompts, q).filter((d) => d.reason !== 'invalidated');
    const coChange = Object.fromEntries(decisions.map((d) => [d.fact.subject, d.parts?.coChange ?? 0]));
    expect(coChange['src/parser.c']).toBeGreaterThan(0);
    expect(coChange['src/mod0.c']).toBe(0);
    // Task 2 is older than the 32 tasks after it: its file is not read.
    expect(coChange['src/old.c']).toBe(0);
  });

  it('the context of a query reaches at most the 512 files it scores highest', () => {
    const s = addFacts(emptyFactStore({ maxValidFacts: 10_000 }), [
      ...changed(
        1,
        Array.from({ length: 600 }, (_, i) => `src/gen/file${i}.ts`),
      ),
      ...changed(2, ['src/gen/index.ts']),
    ]);
    const withPrompts = recordPrompts(s, [
      ['1', 'Regenerate the client bindings'],
      ['2', 'Regenerate the client bindings index'],
    ]);
    const decisions = explainRetrieval(withPrompts, defaults('Regenerate the client bindings'));
    const reached = decisions.filter((d) => (d.parts?.context ?? 0) > 0).map((d) => d.fact.subject);
    expect(reached).toHaveLength(512);
    // Task 2 changed one file: its share is the whole of its score, the highest.
    expect(reached).toContain('src/gen/index.ts');
  });

  it('a task that changed many files lends each of them its context over a root of their number, not the whole', () => {
    const s = addFacts(emptyFactStore(), [
      ...changed(
        1,
        Array.from({ length: 20 }, (_, i) => `assets/logo${i}.svg`),
      ),
      ...changed(2, ['src/render.ts']),
    ]);
    const withPrompts = recordPrompts(s, [
      ['1', 'Add documentation logos'],
      ['2', 'Add documentation rendering of code samples'],
    ]);
    const contextAt = (contextShare?: number): Record<string, number> =>
      Object.fromEntries(
        explainRetrieval(
          withPrompts,
          defaults('Add documentation', {
            ranking: {
              recency: { weight: 0, shared: 0 },
              coChange: { weight: 0 },
              ...(contextShare === undefined ? {} : { contextShare }),
            },
          }),
        ).map((d) => [d.fact.subject, d.parts?.context ?? 0]),
      );
    const shared = contextAt();
    const halved = contextAt(0.5);
    const even = contextAt(1);
    const whole = contextAt(0);
    // Twenty files: each gets its task's score over the fourth root of 20 by default, over its
    // square root at 0.5, over 20 when shared evenly; a task of one file lends its whole score.
    expect(shared['assets/logo0.svg']! * 20 ** 0.25).toBeCloseTo(whole['assets/logo0.svg']!, 9);
    expect(halved['assets/logo0.svg']! * Math.sqrt(20)).toBeCloseTo(whole['assets/logo0.svg']!, 9);
    expect(even['assets/logo0.svg']! * 20).toBeCloseTo(whole['assets/logo0.svg']!, 9);
    expect(shared['src/render.ts']).toBe(whole['src/render.ts']);
    expect(shared['src/render.ts']).toBeGreaterThan(shared['assets/logo0.svg']!);
    const decisions = explainRetrieval(
      withPrompts,
      defaults('Add documentation', { ranking: { recency: { weight: 0, shared: 0 }, coChange: { weight: 0 } } }),
    );
    expect(decisions[0]!.fact.subject).toBe('src/render.ts');
  });

  it('takes a weight, prior or decay past its bounds at its bound, keeps 0 as off, and a value that is no finite number 0 or more as its default', () => {
    const ranking = resolveRanking({
      contextWeight: 1e308,
      exactFileBoost: Number.MAX_VALUE,
      priors: { convention: 1e13, status: Number.MIN_VALUE, test: 0 },
      recency: { weight: 1e-320, decay: 1e9 },
      coChange: { weight: Number.POSITIVE_INFINITY },
      feedback: { weight: -1 },
    });
    expect(ranking.contextWeight).toBe(MAX_RANKING_WEIGHT);
    expect(ranking.exactFileBoost).toBe(MAX_RANKING_WEIGHT);
    expect(ranking.priors).toMatchObject({ convention: MAX_RANKING_WEIGHT, status: MIN_RANKING_WEIGHT, test: 0 });
    expect(ranking.recency).toMatchObject({ weight: MIN_RANKING_WEIGHT, decay: RECENCY_DECAY_BOUNDS.max });
    expect(resolveRanking({ recency: { decay: 1e-9 } }).recency.decay).toBe(RECENCY_DECAY_BOUNDS.min);
    expect(ranking.coChange.weight).toBe(DEFAULT_RANKING.coChange.weight);
    expect(ranking.feedback.weight).toBe(DEFAULT_RANKING.feedback.weight);
    expect(resolveRanking({ contextWeight: 2.5, priors: { docs: 0.01 } })).toMatchObject({
      contextWeight: 2.5,
      priors: { docs: 0.01 },
    });
  });

  it('keeps the defaults frozen, so no caller can change the ranking of every later query, and resolves no overrides to them', () => {
    const nested = [DEFAULT_RANKING, ...Object.values(DEFAULT_RANKING).filter((value) => typeof value === 'object')];
    for (const part of nested) expect(Object.isFrozen(part)).toBe(true);
    expect(() => {
      (DEFAULT_RANKING.priors as { status: number }).status = 5;
    }).toThrow(TypeError);
    expect(resolveRanking(undefined)).toBe(DEFAULT_RANKING);
    expect(resolveRanking({})).toEqual(DEFAULT_RANKING);
    expect(Object.isFrozen(resolveRanking({}))).toBe(false);
  });

  it('takes the shares contextShare and contextOld up to 1 and the counts rounded down, as docs/retrieval.md says', () => {
    const ranking = resolveRanking({
      contextShare: 2,
      contextOld: 3,
      contextTasks: 2.7,
      feedback: { facts: 1.5, terms: 4.9 },
      coChange: { seeds: 2.2 },
      recency: { tasks: 500 },
    });
    expect([ranking.contextShare, ranking.contextOld]).toEqual([1, 1]);
    expect([ranking.contextTasks, ranking.feedback.facts, ranking.feedback.terms, ranking.coChange.seeds]).toEqual([
      2, 1, 4, 2,
    ]);
    expect(ranking.recency.tasks).toBe(63);
  });

  it('takes a fill power past MAX_FILL_POWER at it, a longest line under 1 character as 1, and a fill that is no finite number 0 or more as its default', () => {
    expect(resolveRanking({ fill: { power: 1e9, longest: 0 } }).fill).toEqual({ power: MAX_FILL_POWER, longest: 1 });
    expect(resolveRanking({ fill: { power: -1, longest: Number.NaN } }).fill).toEqual(DEFAULT_RANKING.fill);
    expect(resolveRanking({ fill: 'by score' }).fill).toEqual(DEFAULT_RANKING.fill);
    expect(resolveRanking({ fill: { power: 0 } }).fill).toEqual({ power: 0, longest: DEFAULT_RANKING.fill.longest });
  });

  it('with weights near the largest double, scores stay finite and rank as at any smaller weight, not tied at Infinity', () => {
    const s = addFacts(emptyFactStore(), [
      fact('auth', 'convention', 'auth', 0, { tags: ['convention'], sourceRole: 'reviewer' }),
      fact('auth', 'modified_by', 'auth', 1, { sourceTaskId: '2' }),
    ]);
    // The convention's prior (3.66) outweighs the latest task's recency at any weight.
    for (const weight of [1, 1e6, 1e308]) {
      const q = defaults('auth', { maxFacts: 1, ranking: { recency: { weight, shared: weight } } });
      expect(retrieveFacts(s, q)[0]!.relation, String(weight)).toBe('convention');
      expect(explainRetrieval(s, q).every((decision) => Number.isFinite(decision.score))).toBe(true);
    }
  });

  it('a file kind is a prior of its own: documentation, generated files, tests and manifests', () => {
    const flagged = (subject: string): ReadonlyArray<string> =>
      factPriors(fact(subject, 'modified_by', 'task:1', 1), DEFAULT_RANKING.priors).names;
    expect(flagged('docs/guide/install.md')).toEqual(['docs']);
    expect(flagged('CHANGELOG.md')).toEqual(['docs']);
    expect(flagged('test/__snapshots__/cli.test.ts.snap')).toEqual(['testFile', 'generated']);
    expect(flagged('api/v1/service.pb.go')).toEqual(['generated']);
    expect(flagged('package.json')).toEqual(['manifest']);
    expect(flagged('src/index.ts')).toEqual([]);
  });
});
