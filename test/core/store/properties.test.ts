import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  addFacts,
  applyEvent,
  compact,
  compactWithReport,
  createFactId,
  emptyFactStore,
  type FactStore,
  invalidate,
  makeFact,
  replay,
  selectAllFacts,
  selectValidCount,
  selectValidFacts,
  type SessionFact,
  SUMMARY_RELATION,
  type TrackerEvent,
} from '../../../src/index.js';
import {
  canonicalFactArb,
  eventArb,
  eventsArb,
  factArb,
  fileFact,
  relations,
  storeArb,
  subjects,
  timeArb,
} from '../../arbitraries.js';
import { deepFreeze } from '../../../src/persistent/freeze.js';
import type { PairLog } from '../../../src/core/store/state.js';
import { selectPairLog, selectRecordedFiles } from '../../../src/core/store/write.js';
import {
  collapseToValidRuns,
  deriveRecords,
  latestAssertionTime,
  PAIR_LOG_LIMIT,
  validRecords,
  withAssertions,
} from '../../../src/core/store/timeline.js';
import { asOneRun } from '../../../src/persistent/owner.js';
import { expectConsistent, expectOrderOf, isDeepFrozen, storeContent, storeLogs } from './invariants.js';
import { referenceCompact } from './referenceCompact.js';

const roomy = () => emptyFactStore({ maxValidFacts: 10_000 });
const addEach = (facts: ReadonlyArray<SessionFact>, from: FactStore = roomy()): FactStore =>
  facts.reduce((store, fact) => addFacts(store, [fact]), from);
const intervals = (store: FactStore) => selectAllFacts(store).map((f) => [f.id, f.validFrom, f.validTo ?? null]);
const newestOf = (facts: ReadonlyArray<SessionFact>): SessionFact | undefined => facts[facts.length - 1];

describe('store properties', () => {
  it('a store survives a JSON round trip unchanged', () => {
    fc.assert(
      fc.property(storeArb, (store) => {
        expect(JSON.parse(JSON.stringify(store))).toEqual(store);
      }),
    );
  });

  it('every reducer returns a deeply frozen, consistent store and never mutates its input', () => {
    fc.assert(
      fc.property(storeArb, eventArb, (store, event) => {
        const before = JSON.stringify(store);
        const next = applyEvent(store, event);
        expect(JSON.stringify(store)).toBe(before);
        expect(isDeepFrozen(next)).toBe(true);
        expectConsistent(next);
      }),
    );
  });

  it('the valid facts of each pair are exactly those asserted at its latest assertion time', () => {
    fc.assert(
      fc.property(fc.array(factArb, { maxLength: 12 }), (facts) => {
        const store = addEach(facts);
        for (const subject of subjects)
          for (const relation of relations) {
            const asserted = facts.filter((f) => f.subject === subject && f.relation === relation);
            const latest = Math.max(...asserted.map((f) => f.validFrom));
            const expected = [...new Set(asserted.filter((f) => f.validFrom === latest).map((f) => f.id))].sort();
            const actual = selectValidFacts(store)
              .filter((f) => f.subject === subject && f.relation === relation)
              .map((f) => f.id)
              .sort();
            expect(actual).toEqual(expected);
          }
      }),
    );
  });

  it('the valid ids depend only on the set of assertions, not on the order or grouping of addFacts calls', () => {
    fc.assert(
      fc.property(
        fc
          .array(factArb, { maxLength: 12 })
          .chain((facts) =>
            fc.tuple(
              fc.constant(facts),
              fc.shuffledSubarray(facts, { minLength: facts.length, maxLength: facts.length }),
            ),
          ),
        fc.integer({ min: 1, max: 4 }),
        ([facts, shuffled], batch) => {
          const oneByOne = addEach(facts);
          let batched = roomy();
          for (let i = 0; i < shuffled.length; i += batch) batched = addFacts(batched, shuffled.slice(i, i + batch));
          const ids = (store: FactStore) =>
            selectValidFacts(store)
              .map((f) => f.id)
              .sort();
          expect(ids(batched)).toEqual(ids(oneByOne));
        },
      ),
    );
  });

  it('with the same metadata per assertion, the whole history is independent of arrival order, repeats included', () => {
    fc.assert(
      fc.property(
        fc
          .array(canonicalFactArb, { maxLength: 14 })
          .chain((facts) =>
            fc.tuple(
              fc.constant(facts),
              fc.shuffledSubarray([...facts, ...facts], { minLength: 2 * facts.length, maxLength: 2 * facts.length }),
            ),
          ),
        ([facts, shuffledTwice]) => {
          expect(selectAllFacts(addEach(shuffledTwice))).toEqual(selectAllFacts(addEach(facts)));
        },
      ),
    );
  });

  /** Facts of one pair, the pair's log after random assertions and invalidations of it. */
  const onePair = factArb.map((fact) => makeFact({ ...fact, subject: 'src/a.ts', relation: 'modified_by' }));
  const onePairLogArb = fc
    .array(
      fc.oneof(
        { weight: 4, arbitrary: fc.array(onePair, { minLength: 1, maxLength: 3 }) },
        { weight: 1, arbitrary: timeArb },
      ),
      { maxLength: 30 },
    )
    .map((steps) => {
      let store = roomy();
      for (const item of steps)
        store = typeof item === 'number' ? invalidate(store, 'src/a.ts', 'modified_by', item) : addFacts(store, item);
      return selectPairLog(store, 'src/a.ts', 'modified_by');
    })
    .filter((log): log is PairLog => log !== undefined);

  it("a pair's log collapsed to its valid runs gives the same valid facts, and the same assertions at its latest time", () => {
    fc.assert(
      fc.property(onePairLogArb, (log) => {
        const collapsed = collapseToValidRuns(log);
        const valid = validRecords(deriveRecords(log));
        expect(validRecords(deriveRecords(collapsed))).toEqual(valid);
        const atLatest = (of: PairLog) => of.assertions.filter((f) => f.validFrom === latestAssertionTime(log));
        expect(atLatest(collapsed)).toEqual(atLatest(log));
        if (valid.length > 0) expect(collapsed.clears).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it("any assertion after a pair's log collapsed leaves valid the facts it leaves valid after the whole log", () => {
    fc.assert(
      fc.property(onePairLogArb, onePair, (log, later) => {
        // Which facts, not since when: a fact asserted again at a time whose other assertions went
        // starts its record there (see PAIR_LOG_LIMIT in the docs).
        const validAfter = (of: PairLog) =>
          validRecords(deriveRecords(withAssertions(of, [later])))
            .map((fact) => fact.id)
            .sort();
        expect(validAfter(collapseToValidRuns(log))).toEqual(validAfter(log));
      }),
      { numRuns: 300 },
    );
  });

  it('a fact asserted again and again while valid keeps its log within PAIR_LOG_LIMIT assertions, and its first time', () => {
    const again = (at: number) =>
      makeFact({ ...fileFact('src/a.ts', 'modified_by', 'task:1', at), sourceTaskId: String(1 + (at % 3)) });
    let store = addFacts(roomy(), [fileFact('src/b.ts', 'modified_by', 'task:9', 0)]);
    for (let at = 1; at <= 3 * PAIR_LOG_LIMIT; at += 1) {
      store = addFacts(store, [again(at)]);
      expect(selectPairLog(store, 'src/a.ts', 'modified_by')!.assertions.length).toBeLessThanOrEqual(PAIR_LOG_LIMIT);
    }
    const { assertions } = selectPairLog(store, 'src/a.ts', 'modified_by')!;
    // The run's start stays, and so does its latest repeat, which names who asserted the pair last.
    expect([assertions[0]!.validFrom, assertions[0]!.sourceTaskId]).toEqual([1, '2']);
    expect(assertions.at(-1)!.validFrom).toBe(3 * PAIR_LOG_LIMIT);
    expect(selectValidFacts(store).map((f) => [f.subject, f.validFrom])).toEqual([
      ['src/b.ts', 0],
      ['src/a.ts', 1],
    ]);
    expectConsistent(store);
  });

  it('adding the same batch twice at the same time equals adding it once (the very same object)', () => {
    // Over stores within their bound: an automatic compaction that drops facts makes a
    // re-assertion of those facts new information again.
    fc.assert(
      fc.property(eventsArb, fc.array(factArb, { maxLength: 5 }), (events, batch) => {
        const once = addFacts(replay(events, roomy()), batch);
        expect(addFacts(once, batch)).toBe(once);
      }),
    );
  });

  it('a late invalidation never closes a fact asserted after it', () => {
    fc.assert(
      fc.property(
        storeArb,
        fc.constantFrom(...subjects),
        fc.constantFrom(...relations),
        timeArb,
        (store, subject, relation, at) => {
          const next = invalidate(store, subject, relation, at);
          const newer = selectValidFacts(store).filter(
            (f) => f.subject === subject && f.relation === relation && f.validFrom > at,
          );
          for (const fact of newer) expect(selectValidFacts(next)).toContainEqual(fact);
        },
      ),
    );
  });

  it('after compact(s, n) the valid count is at most n', () => {
    fc.assert(
      fc.property(storeArb, fc.integer({ min: 0, max: 8 }), (store, n) => {
        const next = compact(store, n);
        expect(selectValidCount(next)).toBeLessThanOrEqual(n);
        expectConsistent(next);
      }),
    );
  });

  it('compaction keeps the newest valid fact unchanged', () => {
    fc.assert(
      fc.property(storeArb, fc.integer({ min: 1, max: 8 }), (store, n) => {
        const newest = newestOf(selectValidFacts(store));
        fc.pre(newest !== undefined);
        expect(selectValidFacts(compact(store, n))).toContainEqual(newest);
      }),
    );
  });

  it('compact(compact(s, n), n) is the very same object as compact(s, n)', () => {
    fc.assert(
      fc.property(storeArb, fc.integer({ min: 0, max: 8 }), (store, n) => {
        const once = compact(store, n);
        expect(compact(once, n)).toBe(once);
      }),
    );
  });

  /**
   * Stores where subjects hold several valid facts (six relations on two subjects), so that a
   * compaction merges some into summaries: the small id space's stores rarely hold enough.
   */
  const mergeableStoreArb: fc.Arbitrary<FactStore> = fc
    .array(
      fc
        .record({
          subject: fc.constantFrom('src/a.ts', 'src/b.ts'),
          relation: fc.constantFrom('issue', 'uses', 'depends_on', 'exports', 'owns', 'names'),
          object: fc.constantFrom('x', 'y'),
          validFrom: timeArb,
          sourceTaskId: fc.constantFrom('1', '2', '3'),
        })
        .map((fields) => makeFact({ ...fields, tags: ['decision'], sourceRole: 'implementer', confidence: 1 })),
      { maxLength: 14 },
    )
    .map((facts) => addFacts(emptyFactStore(), facts));

  it('every valid fact a compaction removes is named in its report, and every new one is a reported summary', () => {
    fc.assert(
      fc.property(fc.oneof(storeArb, mergeableStoreArb), fc.integer({ min: 0, max: 8 }), (store, n) => {
        const { store: next, report } = compactWithReport(store, n);
        const before = new Set(selectValidFacts(store).map((f) => f.id));
        const after = new Set(selectValidFacts(next).map((f) => f.id));
        const accounted = new Set([...report.summaries.flatMap((s) => s.merged), ...report.dropped]);
        for (const id of before) if (!after.has(id)) expect(accounted).toContain(id);
        const summaries = new Set(report.summaries.map((s) => s.id));
        for (const id of after) if (!before.has(id)) expect(summaries).toContain(id);
        if (next !== store) expect(selectAllFacts(next).filter((f) => f.validTo !== undefined)).toEqual([]);
      }),
    );
  });

  it('replaying the same events always gives the same store', () => {
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 20 }), (events) => {
        expect(replay(events)).toEqual(replay(events));
        expect(intervals(replay(events))).toEqual(intervals(replay([...events])));
      }),
    );
  });
});

describe('fact text holding the separator of ids and pair keys (U+001F)', () => {
  /** Texts of one letter and the separator, so pairs and triples that join to the same text are common. */
  const textArb = fc.constantFrom('a', 'a\u001fa', 'a\u001f', '\u001fa');
  const tripleFactArb = fc
    .record({ subject: textArb, relation: textArb, object: textArb, validFrom: timeArb })
    .map(({ subject, relation, object, validFrom }) =>
      makeFact({
        subject,
        relation,
        object,
        tags: ['decision'],
        validFrom,
        sourceTaskId: '1',
        sourceRole: 'implementer',
        confidence: 1,
      }),
    );

  it('every store addFacts and invalidate build from facts of any text saves to a state that decodeState reads back to a store with the same facts', async () => {
    const { decodeState, encodeState } = await import('../../../src/saved/savedState.js');
    fc.assert(
      fc.property(
        fc.array(fc.array(tripleFactArb, { maxLength: 4 }), { maxLength: 5 }),
        fc.array(fc.tuple(textArb, textArb, timeArb), { maxLength: 3 }),
        (batches, invalidations) => {
          let store = emptyFactStore();
          for (const batch of batches) store = addFacts(store, batch);
          for (const [subject, relation, at] of invalidations) store = invalidate(store, subject, relation, at);
          const decoded = decodeState(JSON.parse(JSON.stringify(encodeState(store))));
          expect(decoded).toMatchObject({ _tag: 'Right' });
          if (decoded._tag === 'Right') expect(selectAllFacts(decoded.right)).toEqual(selectAllFacts(store));
        },
      ),
    );
  });

  it('two facts whose fields join to the same text stay apart: the one holding the separator is refused, and invalidating another pair leaves a pair alone', () => {
    const plain = makeFact({
      subject: 'a',
      relation: 'b',
      object: 'c',
      tags: ['decision'],
      validFrom: 10,
      sourceTaskId: '1',
      sourceRole: 'implementer',
      confidence: 1,
    });
    const forged = { ...plain, subject: 'a\u001fb', relation: 'c', id: createFactId('a\u001fb', 'c', 'c') };
    const store = addFacts(emptyFactStore(), [plain]);

    expect(addFacts(store, [forged])).toBe(store);
    // ('a', 'b') and ('a\u001fb', '') or ('a', 'b\u001f') would share the pair key 'a\u001fb' joined naively.
    expect(invalidate(store, 'a\u001fb', '', 20)).toBe(store);
    expect(invalidate(store, 'a', 'b\u001f', 20)).toBe(store);
    expect(selectValidFacts(invalidate(store, 'a', 'b', 20))).toEqual([]);
  });
});

describe('fact text holding lone surrogates (UTF-16 halves that UTF-8 cannot encode)', () => {
  /** Texts that differ only in a lone surrogate: SHA-256 over their UTF-8 sees U+FFFD in each. */
  const textArb = fc.constantFrom('a', 'a\ud800', 'a\ud801', '\udc00a', 'a\ufffd');
  const surrogateFactArb = fc
    .record({ subject: textArb, object: textArb, sourceTaskId: textArb, validFrom: timeArb })
    .map(({ subject, object, sourceTaskId, validFrom }) => ({
      ...fileFact(subject, 'modified_by', object, validFrom),
      sourceTaskId,
    }));

  it('every store addFacts and invalidate build from facts holding lone surrogates is consistent, each id one fact, and its saved state decodes to the same facts', async () => {
    const { decodeState, encodeState } = await import('../../../src/saved/savedState.js');
    fc.assert(
      fc.property(
        fc.array(fc.array(surrogateFactArb, { maxLength: 4 }), { maxLength: 5 }),
        fc.array(fc.tuple(textArb, timeArb), { maxLength: 3 }),
        (batches, invalidations) => {
          let store = emptyFactStore();
          for (const batch of batches) store = addFacts(store, batch);
          for (const [subject, at] of invalidations) store = invalidate(store, subject, 'modified_by', at);
          expectConsistent(store);
          expect(selectValidCount(store)).toBe(selectValidFacts(store).length);
          const ids = selectAllFacts(store).map((f) => `${f.id}@${f.validFrom}`);
          expect(new Set(ids).size).toBe(ids.length);
          const decoded = decodeState(JSON.parse(JSON.stringify(encodeState(store))));
          expect(decoded).toMatchObject({ _tag: 'Right' });
          if (decoded._tag === 'Right') expect(selectAllFacts(decoded.right)).toEqual(selectAllFacts(store));
        },
      ),
    );
  });
});

describe('in-place runs (asOneRun)', () => {
  const runArb = fc.tuple(
    fc.array(fc.tuple(eventArb, fc.boolean()), { maxLength: 25 }),
    fc.option(fc.integer({ min: 1, max: 10 }), { nil: undefined }),
  );

  it('a run of events written in place gives the same stores as the reducers one by one, and a value sealed during the run never changes afterwards', () => {
    fc.assert(
      fc.property(runArb, ([run, maxValidFacts]) => {
        const empty = emptyFactStore(maxValidFacts === undefined ? {} : { maxValidFacts });
        // The reducers one by one, outside any run.
        const expected: FactStore[] = [];
        let persistent = empty;
        for (const [event] of run) expected.push((persistent = applyEvent(persistent, event)));
        const sealed: Array<{ store: FactStore; json: string; expected: FactStore }> = [];
        const transient = asOneRun(() => {
          let current = empty;
          run.forEach(([event, share], i) => {
            current = applyEvent(current, event);
            if (share) {
              deepFreeze(current);
              sealed.push({ store: current, json: JSON.stringify(current), expected: expected[i]! });
            }
          });
          return current;
        });
        expect(transient).toEqual(persistent);
        expect(isDeepFrozen(transient)).toBe(true);
        expectConsistent(transient);
        for (const { store, json, expected } of sealed) {
          expect(JSON.stringify(store)).toBe(json);
          expect(store).toEqual(expected);
        }
      }),
    );
  });
});

describe('complete compaction', () => {
  it('a summary merged under a newer summary of its subject is valid, not left behind closed', () => {
    let s = emptyFactStore({ maxValidFacts: 3 });
    s = addFacts(s, [fileFact('src/a.ts', 'requires', 'task:1', 0)]);
    s = addFacts(s, [fileFact('src/a.ts', 'modified_by', 'task:1', 5)]);
    s = addFacts(s, [fileFact('src/a.ts', 'modified_by', 'beta', 5)]);
    s = compact(s, 2);
    // A late assertion, then a third fact: the subject's newest valid fact is now the summary at 5.
    s = addFacts(s, [fileFact('src/a.ts', 'modified_by', 'task:1', 0)]);
    s = addFacts(s, [fileFact('src/a.ts', 'issue', 'task:1', 0)]);
    const { store, report } = compactWithReport(s, 1);
    expect(selectAllFacts(store).filter((f) => f.validTo !== undefined)).toEqual([]);
    expect(selectValidCount(store)).toBe(1);
    expectConsistent(store);
    // The two older facts merged into a summary, valid when made; at a bound of 1 it then goes
    // as the oldest, and the report says so.
    const [summary] = report.summaries;
    expect(summary?.merged).toHaveLength(2);
    expect(report.dropped).toEqual([summary!.id]);
    // At a bound of 2 the summary stays, valid, with what it merged.
    const roomier = compactWithReport(s, 2).store;
    expect(selectAllFacts(roomier).filter((f) => f.validTo !== undefined)).toEqual([]);
    expect(
      selectValidFacts(roomier)
        .filter((f) => f.id === summary!.id)
        .map((f) => f.object),
    ).toEqual(['issue task:1; modified_by task:1']);
  });

  // Summaries asserted directly too, at any time, over two subjects, so that a subject's newest
  // valid fact is often a summary (about 2% of these histories on the compaction that left the
  // older facts' summary closed behind it: 500 runs miss it with a chance of about 1 in 60,000).
  const withSummaries = fc.oneof(
    { weight: 1, arbitrary: eventArb },
    {
      weight: 3,
      arbitrary: fc
        .array(
          fc
            .tuple(
              fc.constantFrom('src/a.ts', 'src/b.ts'),
              fc.constantFrom(SUMMARY_RELATION, ...relations),
              fc.constantFrom('a', 'b'),
              timeArb,
            )
            .map(([subject, relation, object, validFrom]) => fileFact(subject, relation, object, validFrom)),
          { minLength: 1, maxLength: 4 },
        )
        .map((facts): TrackerEvent => ({ type: 'facts/added', facts })),
    },
    {
      weight: 1,
      arbitrary: fc
        .integer({ min: 0, max: 4 })
        .map((maxFacts): TrackerEvent => ({ type: 'store/compacted', maxFacts })),
    },
  );

  it('a compaction that changes the store leaves no closed record in it', () => {
    fc.assert(
      fc.property(
        fc.array(withSummaries, { maxLength: 30 }),
        fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined }),
        fc.integer({ min: 0, max: 3 }),
        (events, maxValidFacts, n) => {
          const store = replay(events, emptyFactStore(maxValidFacts === undefined ? {} : { maxValidFacts }));
          const next = compact(store, n);
          if (next !== store) expect(selectAllFacts(next).filter((f) => f.validTo !== undefined)).toEqual([]);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('compaction against its reference', () => {
  it('compactWithReport decides exactly as the sort-everything reference: same store, same report', () => {
    fc.assert(
      fc.property(storeArb, fc.integer({ min: 0, max: 8 }), (store, n) => {
        const fast = compactWithReport(store, n);
        const reference = referenceCompact(store, n);
        expect(fast.report).toEqual(reference.report);
        expect(fast.store).toEqual(reference.store);
      }),
      { numRuns: 300 },
    );
  });

  it('adding facts past the bound leaves what writing them and then compacting leaves, files recorded and the order compaction reads included', () => {
    // addFacts compacts what it adds before writing it: a fact that goes at once is never
    // indexed, yet the file it changed is still recorded for its task.
    fc.assert(
      fc.property(
        eventsArb,
        fc.integer({ min: 1, max: 6 }),
        fc.array(factArb, { maxLength: 6 }),
        fc.boolean(),
        (events, maxValidFacts, facts, inRun) => {
          const store = replay(events, emptyFactStore({ maxValidFacts }));
          const add = (): FactStore => addFacts(store, facts);
          const added = inRun ? asOneRun(add) : add();
          const written = addFacts({ ...store, maxValidFacts: 1_000 }, facts);
          const stepwise = { ...compact(written, maxValidFacts), maxValidFacts };
          expect(storeContent(added)).toEqual(storeContent(stepwise));
          expect(selectRecordedFiles(added)).toEqual(selectRecordedFiles(stepwise));
          expectConsistent(deepFreeze(added));
          expectOrderOf(added);
        },
      ),
      { numRuns: 250 },
    );
  });

  it('a long session at a small bound compacts exactly as the reference on every dispatch', () => {
    // Many subjects, re-assertions and summaries: every compaction path, over hundreds of calls.
    const random = (() => {
      let state = 7;
      return (): number => (state = (state * 48271) % 2147483647) / 2147483647;
    })();
    let store = emptyFactStore({ maxValidFacts: 40 });
    for (let at = 1; at <= 300; at += 1) {
      const facts = Array.from({ length: 1 + Math.floor(random() * 6) }, () =>
        makeFact({
          subject: `src/f${Math.floor(random() * 25)}.ts`,
          relation: ['modified_by', 'issue', 'summary', 'requires'][Math.floor(random() * 4)]!,
          object: `o${Math.floor(random() * 6)}`,
          tags: ['file_change'],
          validFrom: at,
          sourceTaskId: String(at),
          sourceRole: 'implementer',
          confidence: 1,
        }),
      );
      // The session first, so each compaction reads the order the previous write carried.
      const previous = store;
      store = addFacts(store, facts);
      const added = addFacts({ ...previous, maxValidFacts: 1_000 }, facts);
      // The logs on every dispatch, the index too now and then (flattening it costs more than the session).
      const content = at % 25 === 0 ? storeContent : storeLogs;
      expect(content(store)).toEqual(content(referenceCompact({ ...added, maxValidFacts: 40 }, 40).store));
    }
  });
});
