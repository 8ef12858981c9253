import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import {
  addFacts,
  applyEvent,
  compact,
  compactWithReport,
  createFactId,
  DEFAULT_MAX_VALID_FACTS,
  emptyFactStore,
  type FactStore,
  invalidate,
  makeFact,
  parseNewFact,
  replay,
  selectAllFacts,
  selectFactsValidAt,
  selectValidCount,
  selectValidFacts,
  selectValidFactsByTags,
  type SessionFact,
  SUMMARY_RELATION,
} from '../../../src/index.js';
import { PAIR_LOG_LIMIT } from '../../../src/core/store/timeline.js';
import { expectConsistent, isDeepFrozen } from './invariants.js';

const fact = (object: string, validFrom: number, overrides: Partial<Omit<SessionFact, 'id'>> = {}): SessionFact => {
  const fields = {
    subject: 'src/config.ts',
    relation: 'modified_by',
    object,
    tags: ['file_change' as const],
    validFrom,
    sourceTaskId: '1',
    sourceRole: 'implementer' as const,
    confidence: 1,
    ...overrides,
  };
  return makeFact(fields);
};

const valid = (store: FactStore): string[] => selectValidFacts(store).map((f) => `${f.object}@${f.validFrom}`);
const history = (store: FactStore): string[] =>
  selectAllFacts(store).map((f) => `${f.object}[${f.validFrom},${f.validTo ?? ''})`);

describe('emptyFactStore', () => {
  it('is deeply frozen plain data with the default bound of 1,000', () => {
    const store = emptyFactStore();
    expect(store.maxValidFacts).toBe(DEFAULT_MAX_VALID_FACTS);
    expect(isDeepFrozen(store)).toBe(true);
    expect(JSON.parse(JSON.stringify(store))).toEqual(store);
    expect(selectAllFacts(store)).toEqual([]);
  });

  it('takes a custom bound and ignores a nonsensical one', () => {
    expect(emptyFactStore({ maxValidFacts: 20 }).maxValidFacts).toBe(20);
    expect(emptyFactStore({ maxValidFacts: -3 }).maxValidFacts).toBe(DEFAULT_MAX_VALID_FACTS);
    expect(emptyFactStore({ maxValidFacts: Number.NaN }).maxValidFacts).toBe(DEFAULT_MAX_VALID_FACTS);
  });

  it('reads a bound of Infinity as no bound, kept as a number JSON holds', () => {
    const store = emptyFactStore({ maxValidFacts: Infinity });
    expect(store.maxValidFacts).toBe(Number.MAX_SAFE_INTEGER);
    expect(JSON.parse(JSON.stringify(store))).toEqual(store);
    const many = Array.from({ length: DEFAULT_MAX_VALID_FACTS + 200 }, (_, i) =>
      fact('task:1', i + 1, { subject: `src/f${i}.ts` }),
    );
    expect(selectValidCount(addFacts(store, many))).toBe(many.length);
  });
});

describe('addFacts', () => {
  it('stores facts and returns the same store when there is nothing to add', () => {
    const store = addFacts(emptyFactStore(), [fact('task:1', 10)]);
    expect(valid(store)).toEqual(['task:1@10']);
    expect(addFacts(store, [])).toBe(store);
    expect(addFacts(store, [fact('task:1', 10)])).toBe(store);
    expectConsistent(store);
  });

  it('supersedes by valid time: a newer assertion of the pair closes the older fact', () => {
    const store = addFacts(addFacts(emptyFactStore(), [fact('task:1', 10)]), [fact('task:2', 20)]);
    expect(valid(store)).toEqual(['task:2@20']);
    expect(history(store)).toEqual(['task:1[10,20)', 'task:2[20,)']);
  });

  it('lets facts asserted at the same time coexist (several follow-ups of one result)', () => {
    const a = fact('add rate limiting', 10, { subject: 'task:1', relation: 'requires', tags: ['dependency'] });
    const b = fact('document the route', 10, { subject: 'task:1', relation: 'requires', tags: ['dependency'] });
    const store = addFacts(emptyFactStore(), [a, b]);
    expect(selectValidCount(store)).toBe(2);
  });

  it('keeps a late assertion as history closed at the next newer time, as if it had arrived in order', () => {
    const late = addFacts(addFacts(addFacts(emptyFactStore(), [fact('X', 10)]), [fact('X', 30)]), [fact('Y', 20)]);
    const inOrder = addFacts(addFacts(addFacts(emptyFactStore(), [fact('X', 10)]), [fact('Y', 20)]), [fact('X', 30)]);
    expect(valid(late)).toEqual(['X@30']);
    expect(history(late)).toEqual(['X[10,20)', 'Y[20,30)', 'X[30,)']);
    expect(selectAllFacts(late)).toEqual(selectAllFacts(inOrder));
    expectConsistent(late);
  });

  it('re-asserting a valid fact keeps its validFrom and closes what the new assertion leaves out', () => {
    const store = addFacts(addFacts(emptyFactStore(), [fact('A', 10), fact('B', 10)]), [fact('A', 20)]);
    expect(history(store).sort()).toEqual(['A[10,)', 'B[10,20)']);
  });

  it('re-asserting a valid fact alongside a new one leaves both valid', () => {
    const store = addFacts(addFacts(emptyFactStore(), [fact('X', 10)]), [fact('X', 20), fact('Y', 20)]);
    expect(valid(store)).toEqual(['X@10', 'Y@20']);
  });

  it('re-asserting a closed fact makes it valid again and keeps the earlier interval', () => {
    let store = addFacts(emptyFactStore(), [fact('X', 10)]);
    store = addFacts(store, [fact('Y', 20)]);
    store = addFacts(store, [fact('X', 30)]);
    expect(history(store)).toEqual(['X[10,20)', 'Y[20,30)', 'X[30,)']);
  });

  it('skips malformed facts without throwing and keeps the good ones', () => {
    const good = fact('task:1', 10);
    const bad: unknown[] = [
      null,
      42,
      { ...good, id: '' },
      { ...good, id: 'deadbeefdeadbeef' },
      { ...good, subject: '' },
      { ...good, subject: 'x'.repeat(201), id: createFactId('x'.repeat(201), good.relation, good.object) },
      { ...good, relation: 'r'.repeat(51), id: createFactId(good.subject, 'r'.repeat(51), good.object) },
      { ...good, object: 'o'.repeat(201), id: createFactId(good.subject, good.relation, 'o'.repeat(201)) },
      { ...good, sourceTaskId: '' },
      { ...good, sourceTaskId: 't'.repeat(51) },
      { ...good, tags: [] },
      { ...good, tags: ['file_change', 'test', 'error', 'decision'] },
      { ...good, tags: ['gossip'] },
      { ...good, validFrom: Number.NaN },
      { ...good, validFrom: Infinity },
      { ...good, confidence: 1.5 },
      { ...good, confidence: Number.NaN },
      { ...good, confidence: '1' },
      { ...good, sourceRole: 'planner' },
      { ...good, validTo: 20 },
    ];
    const store = addFacts(emptyFactStore(), [...bad, good] as SessionFact[]);
    expect(selectAllFacts(store)).toEqual([good]);
    expect(addFacts(emptyFactStore(), bad as SessionFact[])).toEqual(emptyFactStore());
  });

  it('skips a fact whose task id holds a secret, as normalizeTaskId refuses the id, and stores its other texts as given', () => {
    const token = `ghp_${'a1B2c3D4e5'.repeat(4).slice(0, 36)}`;
    const good = fact('task:1', 10);
    const store = addFacts(emptyFactStore(), [
      { ...good, sourceTaskId: token },
      { ...good, sourceTaskId: `deploy  ${token}` },
      good,
    ]);
    expect(selectAllFacts(store)).toEqual([good]);
    expect(JSON.stringify(store)).not.toContain(token.slice(4));
    expect(replay([{ type: 'facts/added', facts: [{ ...good, sourceTaskId: token }] }])).toEqual(emptyFactStore());
    expect(parseNewFact({ ...good, sourceTaskId: token })).toEqual(
      E.left(
        expect.objectContaining({
          code: 'invalid_fact',
          message: expect.stringContaining('sourceTaskId holds what looks like a GitHub token') as string,
        }),
      ),
    );
    // A subject, relation or object is the caller's text: extraction redacts a result's before it makes facts.
    const path = `deploy/${token}/config.ts`;
    expect(selectAllFacts(addFacts(emptyFactStore(), [fact('task:1', 10, { subject: path })]))).toEqual([
      fact('task:1', 10, { subject: path }),
    ]);
  });

  it('does not alias or freeze the caller’s objects', () => {
    const input = { ...fact('task:1', 10) };
    addFacts(emptyFactStore(), [input]);
    expect(Object.isFrozen(input)).toBe(false);
  });

  it('reads a bound set by hand on a store ({ ...store, maxValidFacts }) as emptyFactStore reads it, and as encodeState saves it', () => {
    const facts = Array.from({ length: 6 }, (_, i) => fact('task:1', i, { subject: `src/f${i}.ts` }));
    for (const maxValidFacts of [0, -1, 0.5, 4.7, Infinity]) {
      const byHand = addFacts({ ...emptyFactStore(), maxValidFacts }, facts);
      expect(byHand, String(maxValidFacts)).toEqual(addFacts(emptyFactStore({ maxValidFacts }), facts));
      expect(JSON.parse(JSON.stringify(byHand))).toEqual(byHand);
    }
  });

  it('compacts automatically when maxValidFacts is exceeded', () => {
    const facts = Array.from({ length: 6 }, (_, i) => fact('task:1', i, { subject: `src/f${i}.ts` }));
    const store = addFacts(emptyFactStore({ maxValidFacts: 4 }), facts);
    expect(selectValidCount(store)).toBe(4);
    expect(selectValidFacts(store).map((f) => f.subject)).toEqual(['src/f2.ts', 'src/f3.ts', 'src/f4.ts', 'src/f5.ts']);
  });
});

describe('invalidate', () => {
  it('closes the valid facts of the pair at the given time', () => {
    const store = invalidate(addFacts(emptyFactStore(), [fact('task:1', 10)]), 'src/config.ts', 'modified_by', 15);
    expect(history(store)).toEqual(['task:1[10,15)']);
    expect(selectValidCount(store)).toBe(0);
    expectConsistent(store);
  });

  it('closes at the assertion time itself when invalidated at that time', () => {
    const store = invalidate(addFacts(emptyFactStore(), [fact('task:1', 10)]), 'src/config.ts', 'modified_by', 10);
    expect(history(store)).toEqual(['task:1[10,10)']);
  });

  it('cannot close a newer assertion (a late invalidation is a no-op)', () => {
    const store = addFacts(emptyFactStore(), [fact('task:2', 30)]);
    expect(invalidate(store, 'src/config.ts', 'modified_by', 20)).toBe(store);
  });

  it('returns the same store for an unknown pair, nothing valid, or a bad time', () => {
    const store = addFacts(emptyFactStore(), [fact('task:1', 10)]);
    expect(invalidate(store, 'nope', 'modified_by', 50)).toBe(store);
    expect(invalidate(store, 'src/config.ts', 'modified_by', Number.NaN)).toBe(store);
    const closed = invalidate(store, 'src/config.ts', 'modified_by', 20);
    expect(invalidate(closed, 'src/config.ts', 'modified_by', 30)).toBe(closed);
  });

  it('is total: arguments not of their kind return the same store, directly, in applyEvent and in replay', () => {
    const store = addFacts(emptyFactStore(), [fact('task:1', 10)]);
    const wrong: ReadonlyArray<readonly [unknown, unknown, unknown]> = [
      [null, 'modified_by', 20],
      ['src/config.ts', undefined, 20],
      ['src/config.ts', 'modified_by', '20'],
      ['src/config.ts', 'modified_by', Infinity],
    ];
    for (const [subject, relation, at] of wrong) {
      expect(invalidate(store, subject as never, relation as never, at as never)).toBe(store);
      const event = { type: 'facts/invalidated', subject, relation, at } as never;
      expect(applyEvent(store, event)).toBe(store);
      expect(replay([event], store)).toBe(store);
    }
  });

  it('closes a late assertion that lands before an invalidation at the invalidation', () => {
    let store = addFacts(emptyFactStore(), [fact('X', 10)]);
    store = invalidate(store, 'src/config.ts', 'modified_by', 20);
    store = addFacts(store, [fact('Y', 15)]);
    expect(history(store)).toEqual(['X[10,15)', 'Y[15,20)']);
    expect(selectValidCount(store)).toBe(0);
  });

  it('closes a late assertion that lands before an invalidation at the invalidation once the log passed PAIR_LOG_LIMIT', () => {
    let store = emptyFactStore();
    for (let at = 0; at < PAIR_LOG_LIMIT - 1; at += 1) store = addFacts(store, [fact(`task:${at}`, at)]);
    store = invalidate(store, 'src/config.ts', 'modified_by', 1_000);
    // The second one takes the log past the limit; the third lands in what the log became.
    for (const at of [500, 501, 502]) store = addFacts(store, [fact(`late ${at}`, at)]);
    expect(selectValidFacts(store)).toEqual([]);
    expect(history(store).at(-1)).toBe('late 502[502,1000)');
    expectConsistent(store);
  });
});

describe('compact', () => {
  const subjectFacts = (subject: string, times: number[]): SessionFact[] =>
    times.map((t, i) => fact(`obj ${subject} ${i}`, t, { subject, relation: `rel${i}` }));

  it('returns the store itself when within bounds', () => {
    const store = addFacts(emptyFactStore(), subjectFacts('a', [1, 2, 3]));
    expect(compact(store, 3)).toBe(store);
    expect(compactWithReport(store, 10)).toEqual({ store, report: { removedClosed: [], summaries: [], dropped: [] } });
  });

  it('removes closed facts first and reports them', () => {
    let store = addFacts(emptyFactStore(), [fact('X', 1)]);
    store = addFacts(store, [fact('Y', 2)]);
    store = addFacts(store, [
      fact('o', 3, { subject: 'b', relation: 'r' }),
      fact('p', 4, { subject: 'c', relation: 'r' }),
    ]);
    const { store: next, report } = compactWithReport(store, 2);
    expect(report.removedClosed).toEqual([createFactId('src/config.ts', 'modified_by', 'X')]);
    expect(selectAllFacts(next).every((f) => f.validTo === undefined)).toBe(true);
    expect(selectValidCount(next)).toBe(2);
    expectConsistent(next);
  });

  it('merges a subject’s older valid facts into one summary_of fact, oldest subjects first', () => {
    const store = addFacts(emptyFactStore(), [
      ...subjectFacts('src/old.ts', [1, 2, 3]),
      ...subjectFacts('src/new.ts', [4, 5, 6]),
    ]);
    const { store: next, report } = compactWithReport(store, 5);
    expect(report.summaries).toHaveLength(1);
    expect(report.dropped).toEqual([]);
    const summary = selectValidFacts(next).find((f) => f.relation === SUMMARY_RELATION)!;
    expect(summary).toMatchObject({
      subject: 'src/old.ts',
      object: 'rel0 obj src/old.ts 0; rel1 obj src/old.ts 1',
      validFrom: 2,
      tags: ['file_change'],
    });
    expect(report.summaries[0]!.id).toBe(summary.id);
    expect(selectValidFacts(next).map((f) => `${f.subject} ${f.relation}`)).toContain('src/old.ts rel2');
    expect(selectValidCount(next)).toBe(5);
    expect(selectValidFacts(next).filter((f) => f.subject === 'src/new.ts')).toHaveLength(3);
  });

  it('at its bound, a session keeps what the latest tasks established as it was given, and drops outcomes first, instead of merging each new task at once', () => {
    // Tasks of five facts each: an outcome, a summary and a test run (expendable), two it established.
    const task = (n: number): SessionFact[] =>
      ['completed_with', 'summary', 'tested_by', 'requires', 'must_fix'].map((relation, i) =>
        fact(`${relation} of ${n}`, n * 10 + i, { subject: `task:${n}`, relation, sourceTaskId: String(n) }),
      );
    let store = emptyFactStore({ maxValidFacts: 40 });
    for (let n = 1; n <= 30; n += 1) store = addFacts(store, task(n));
    expectConsistent(store);
    const facts = selectValidFacts(store);
    expect(facts).toHaveLength(40);
    // The last ten tasks' requirements and fixes are there one by one, none merged into a summary.
    for (let n = 21; n <= 30; n += 1)
      for (const relation of ['requires', 'must_fix'])
        expect(facts.some((f) => f.subject === `task:${n}` && f.relation === relation)).toBe(true);
    const merged = facts
      .filter((f) => f.relation === SUMMARY_RELATION)
      .map((f) => Number(f.subject.slice('task:'.length)));
    expect(merged.every((n) => n < 21)).toBe(true);
    // What went is how the tasks went (and the oldest tasks), never a recent task's fix.
    expect(facts.filter((f) => f.relation === 'tested_by').length).toBeLessThanOrEqual(1);
  });

  it('clips a long summary to 200 characters and takes the minimum confidence', () => {
    const long = 'y'.repeat(150);
    const store = addFacts(emptyFactStore(), [
      fact(long, 1, { subject: 's', relation: 'r1', confidence: 0.4 }),
      fact(long, 2, { subject: 's', relation: 'r2', confidence: 0.9 }),
      fact('z', 3, { subject: 's', relation: 'r3' }),
    ]);
    const summary = selectValidFacts(compact(store, 2)).find((f) => f.relation === SUMMARY_RELATION)!;
    expect(summary.object).toHaveLength(200);
    expect(summary.object.endsWith('...')).toBe(true);
    expect(summary.confidence).toBe(0.4);
  });

  it('drops the oldest valid facts when summaries are not enough, keeping the newest', () => {
    const store = addFacts(
      emptyFactStore(),
      Array.from({ length: 5 }, (_, i) => fact('task:1', i, { subject: `src/f${i}.ts` })),
    );
    const { store: next, report } = compactWithReport(store, 2);
    expect(report.dropped).toHaveLength(3);
    expect(selectValidFacts(next).map((f) => f.subject)).toEqual(['src/f3.ts', 'src/f4.ts']);
  });

  it('600 facts compact to 500 keeping the most recent', () => {
    const facts = Array.from({ length: 600 }, (_, i) => fact('task:1', i, { subject: `src/file${i}.ts` }));
    const store = addFacts(emptyFactStore({ maxValidFacts: 1000 }), facts);
    const next = compact(store, 500);
    expect(selectValidCount(next)).toBe(500);
    const kept = selectValidFacts(next);
    expect(kept[0]!.subject).toBe('src/file100.ts');
    expect(kept[kept.length - 1]!.subject).toBe('src/file599.ts');
    expect(compact(next, 500)).toBe(next);
  });

  it('ignores a nonsensical bound', () => {
    const store = addFacts(emptyFactStore(), [fact('task:1', 1)]);
    expect(compact(store, -1)).toBe(store);
    expect(compact(store, Number.NaN)).toBe(store);
  });
});

describe('selectors', () => {
  const store = addFacts(emptyFactStore(), [
    fact('b', 5, { subject: 's2', tags: ['convention'] }),
    fact('a', 5, { subject: 's1', tags: ['error', 'test'] }),
    fact('c', 1, { subject: 's3' }),
  ]);

  it('order by validFrom, then id', () => {
    const ordered = selectValidFacts(store);
    expect(ordered.map((f) => f.validFrom)).toEqual([1, 5, 5]);
    expect(ordered[1]!.id < ordered[2]!.id).toBe(true);
  });

  it('filter by any tag', () => {
    expect(
      selectValidFactsByTags(store, ['test', 'convention'])
        .map((f) => f.object)
        .sort(),
    ).toEqual(['a', 'b']);
    expect(selectValidFactsByTags(store, [])).toEqual([]);
  });

  it('select the facts valid at a time, validFrom <= at < validTo', () => {
    let s = addFacts(emptyFactStore(), [fact('X', 10)]);
    s = addFacts(s, [fact('Y', 20)]);
    expect(selectFactsValidAt(s, 9).map((f) => f.object)).toEqual([]);
    expect(selectFactsValidAt(s, 10).map((f) => f.object)).toEqual(['X']);
    expect(selectFactsValidAt(s, 19).map((f) => f.object)).toEqual(['X']);
    expect(selectFactsValidAt(s, 20).map((f) => f.object)).toEqual(['Y']);
  });
});

describe('untrusted keys', () => {
  it('facts whose words or task ids are names every object has (constructor, toString, __proto__) index and retrieve like any other', async () => {
    const { retrieveFacts, recordTaskPrompt } = await import('../../../src/index.js');
    const words = ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf', '~tilde', '12'];
    let store = emptyFactStore();
    words.forEach((word, i) => {
      store = addFacts(store, [fact(`${word} handling`, i, { subject: `src/${word}.ts`, sourceTaskId: word })]);
      store = recordTaskPrompt(store, word, `fix ${word}`, i);
    });
    expectConsistent(store);
    for (const word of words) {
      const found = retrieveFacts(store, {
        taskDescription: `the ${word} bug`,
        taskId: 'other',
        maxFacts: 10,
        maxTokens: 500,
      });
      expect(found.map((f) => f.subject)).toContain(`src/${word}.ts`);
    }
  });
});

describe('task context', () => {
  it('a task lends its prompt as context only while it has a valid fact or an asserted file, so compacted-away tasks leave the collection', async () => {
    const { recordTaskPrompt } = await import('../../../src/index.js');
    const PMap = await import('../../../src/persistent/persistentMap.js');
    const { postingsSize, NO_POSTINGS } = await import('../../../src/core/search/postings.js');
    /** How many task contexts hold `term`. */
    const postedFor = (s: FactStore, term: string): number =>
      postingsSize(PMap.get(s.index.taskTerms, term) ?? NO_POSTINGS);
    // A prompt alone lends nothing: no fact of the task can inherit it yet.
    let store = recordTaskPrompt(emptyFactStore({ maxValidFacts: 2 }), '1', 'rate limiting for the login route', 0);
    expect(store.index.contextCount).toBe(0);
    expect(postedFor(store, 'rate')).toBe(0);
    // Its first fact makes it lend the prompt.
    store = addFacts(store, [
      fact('limit set', 1, { subject: 'task:1', relation: 'decided', sourceTaskId: '1', tags: ['decision'] }),
    ]);
    expect(store.index.contextCount).toBe(1);
    expect(postedFor(store, 'rate')).toBe(1);
    expectConsistent(store);
    // Once compaction has dropped every fact of task 1, its prompt is no longer posted (the doc keeps it).
    store = addFacts(store, [
      fact('a', 2, { subject: 'task:2', relation: 'decided', sourceTaskId: '2', tags: ['decision'] }),
      fact('b', 3, { subject: 'task:3', relation: 'decided', sourceTaskId: '3', tags: ['decision'] }),
    ]);
    expect(selectValidFacts(store).map((f) => f.sourceTaskId)).toEqual(['2', '3']);
    expect(store.index.contextCount).toBe(0);
    expect(postedFor(store, 'rate')).toBe(0);
    expectConsistent(store);
  });
});

describe('recordTaskPrompt', () => {
  it('returns the same store for a task id of invisible characters only, as for a blank one', async () => {
    const { recordTaskPrompt } = await import('../../../src/index.js');
    const store = emptyFactStore();
    for (const taskId of ['', '  ', '\u200b', ' \u200c\u2060 ', '\u{E0031}'])
      expect(recordTaskPrompt(store, taskId, 'rate limiting for the login route', 1)).toBe(store);
    expect(recordTaskPrompt(store, '1', 'rate limiting for the login route', 1)).not.toBe(store);
  });

  it("reads a task id as a fact's sourceTaskId is read, so the prompt reaches the facts of the task it names", async () => {
    const { recordTaskPrompt } = await import('../../../src/index.js');
    const { SECRETS } = await import('../../fixtures/secrets.js');
    /** Task `taskId`'s prompt, then a fact of that very task id, as a caller of the reducers gives them. */
    const session = (taskId: string): FactStore =>
      addFacts(recordTaskPrompt(emptyFactStore(), taskId, 'rate limiting for the login route', 0), [
        fact('task:7', 1, { sourceTaskId: taskId }),
      ]);
    // The fact's task id is read collapsed (and well-formed): the prompt's is read so too, or it lends the fact nothing.
    for (const spelled of ['7  a', ' 7\ta ', '7\n a', '7 \u200ba']) expect(session(spelled)).toEqual(session('7 a'));
    expect(session('7\ud800')).toEqual(session('7\ufffd'));
    expect(session('7 a').index.contextCount).toBe(1);
    // A task id holding a secret is no task id (a fact holding one is malformed): it records nothing.
    for (const [, secret] of SECRETS) {
      const store = emptyFactStore();
      expect(recordTaskPrompt(store, `deploy ${secret}`, 'rate limiting for the login route', 1)).toBe(store);
    }
  });
});

describe('retention', () => {
  const outcome = (task: number, at: number): SessionFact[] => [
    fact('completed', at, {
      subject: `task:${task}`,
      relation: 'completed_with',
      sourceTaskId: String(task),
      tags: ['decision'],
    }),
    fact(`did ${task}`, at, {
      subject: `task:${task}`,
      relation: 'summary',
      sourceTaskId: String(task),
      tags: ['decision'],
    }),
  ];
  const change = (task: number, file: string, at: number): SessionFact =>
    fact(`task:${task}`, at, { subject: file, sourceTaskId: String(task) });

  it('drops task outcomes, test runs and summaries before any other fact, oldest first', () => {
    const store = addFacts(emptyFactStore({ maxValidFacts: 100 }), [
      ...outcome(1, 1),
      change(1, 'src/a.ts', 1),
      fact('use snake_case', 2, { subject: 'db/', relation: 'convention', sourceTaskId: '2', tags: ['convention'] }),
      ...outcome(2, 2),
      change(3, 'src/b.ts', 3),
      ...outcome(3, 3),
    ]);
    const { store: next, report } = compactWithReport(store, 5);
    expect(report.dropped).toHaveLength(4);
    expect(
      selectValidFacts(next)
        .map((f) => `${f.subject} ${f.relation}`)
        .sort(),
    ).toEqual([
      'db/ convention',
      'src/a.ts modified_by',
      'src/b.ts modified_by',
      'task:3 completed_with',
      'task:3 summary',
    ]);
    expectConsistent(next);
  });

  it('keeps what a task changed when compaction removes the facts: context and co-change still see every task', async () => {
    const { recordTaskPrompt, explainRetrieval } = await import('../../../src/index.js');
    const { decodeState, encodeState } = await import('../../../src/saved/savedState.js');
    let store = emptyFactStore({ maxValidFacts: 1_000 });
    store = recordTaskPrompt(store, '1', 'Teach the parser the pipe operator', 0);
    const done = (task: number, at: number): SessionFact =>
      fact('completed', at, {
        subject: `task:${task}`,
        relation: 'completed_with',
        sourceTaskId: String(task),
        tags: ['decision'],
      });
    store = addFacts(store, [change(1, 'src/parser.y', 1), change(1, 'src/parser.c', 1), done(1, 1)]);
    store = recordTaskPrompt(store, '2', 'Fix a crash in the lexer', 2);
    store = addFacts(store, [change(2, 'src/parser.y', 3), change(2, 'src/lexer.c', 3), done(2, 2)]);
    const query = {
      taskDescription: 'Teach the parser.y grammar a pipe operator',
      taskId: '3',
      maxFacts: 10,
      maxTokens: 500,
      // The best match alone seeds co-change (the outcomes compaction drops could be seeds too).
      ranking: { coChange: { seeds: 1 } },
    };
    const partsOf = (s: FactStore) =>
      Object.fromEntries(
        explainRetrieval(s, query)
          .filter((d) => d.fact.validTo === undefined)
          .map((d) => [d.fact.subject, { context: d.parts!.context, coChange: d.parts!.coChange }]),
      );
    const before = partsOf(store);
    // Compaction removes the outcomes and task 1's fact of parser.y (history): the record stays.
    const compacted = compact(store, 3);
    expect(selectAllFacts(compacted).filter((f) => f.subject === 'src/parser.y')).toHaveLength(1);
    expect(partsOf(compacted)['src/parser.y']).toEqual(before['src/parser.y']);
    expect(partsOf(compacted)['src/lexer.c']).toEqual(before['src/lexer.c']);
    expectConsistent(compacted);
    // A saved state carries the records the pair logs no longer show.
    const saved = JSON.parse(JSON.stringify(encodeState(compacted))) as unknown;
    expect((saved as { files: unknown }).files).toEqual([
      { taskId: '1', subject: 'src/parser.y', relation: 'modified_by' },
    ]);
    const decoded = decodeState(saved);
    expect(decoded._tag).toBe('Right');
    if (decoded._tag === 'Right') expect(partsOf(decoded.right)).toEqual(partsOf(compacted));
    // U+001F joins a record's subject and relation into its key: two records would be one.
    const forged = {
      ...(saved as object),
      files: [{ taskId: '2', subject: 'src/a.ts\u001fmodified_by', relation: 'x' }],
    };
    expect(decodeState(forged)).toEqual({
      _tag: 'Left',
      left: { code: 'invalid_state', message: 'files[0].subject holds U+001F, the separator of pair keys' },
    });
  });
});
