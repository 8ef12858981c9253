/**
 * The reducers over the stores users really pass: the frozen store a reducer returned, the same
 * store after a JSON round trip (kept in a database, sent from another process) and after a
 * `structuredClone`. Plain copies are unfrozen; a reducer must read them as values all the same.
 */
import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import {
  addFacts,
  applyEvent,
  compact,
  compactWithReport,
  createFactId,
  createFactTracker,
  encodeState,
  explainRetrievalEither,
  FACT_LIMITS,
  type FactTracker,
  emptyFactStore,
  type FactStore,
  initialTrackerState,
  invalidate,
  parseNewFact,
  recordTaskPrompt,
  replay,
  replayHistory,
  retrieveFacts,
  selectValidCount,
  selectValidFacts,
  type SessionFact,
  trackerTransition,
  type TrackerEvent,
} from '../../../src/index.js';
import { eventArb, eventsArb, fileFact } from '../../arbitraries.js';
import { expectConsistent, isDeepFrozen } from './invariants.js';

const viaJson = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/** Every reducer of the public API, as one step a history can take. */
type Step = (store: FactStore) => FactStore;
const stepOf = (event: TrackerEvent, variant: number): Step => {
  switch (event.type) {
    case 'facts/added':
      return (store) => addFacts(store, event.facts);
    case 'facts/invalidated':
      return (store) => invalidate(store, event.subject, event.relation, event.at);
    case 'store/compacted':
      return variant % 2 === 0
        ? (store) => compact(store, event.maxFacts)
        : (store) => compactWithReport(store, event.maxFacts).store;
    case 'prompt/recorded':
      return (store) => recordTaskPrompt(store, event.taskId, event.taskPrompt, event.at);
    default:
      return (store) => applyEvent(store, event);
  }
};

/**
 * Runs `step` over `input`, checking the input is exactly as it was afterwards. A store is plain
 * data that survives JSON (the first test checks it), so its JSON text shows any write into it.
 */
const unchangedBy = (input: FactStore, step: Step): FactStore => {
  const json = JSON.stringify(input);
  const result = step(input);
  expect(JSON.stringify(input)).toBe(json);
  return result;
};

describe('reducers over the stores users pass', () => {
  it('along any history, every reducer leaves a frozen, a JSON round-tripped and a structuredClone input unchanged, and the three results deep-equal', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(eventArb, fc.nat(1)), { maxLength: 25 }),
        fc.option(fc.integer({ min: 1, max: 8 }), { nil: undefined }),
        (history, maxValidFacts) => {
          // Three chains: the frozen results, and copies made fresh before every step.
          let frozen = emptyFactStore(maxValidFacts === undefined ? {} : { maxValidFacts });
          let parsed = viaJson(frozen);
          let cloned = structuredClone(frozen);
          for (const [event, variant] of history) {
            const step = stepOf(event, variant);
            frozen = unchangedBy(frozen, step);
            parsed = viaJson(unchangedBy(parsed, step));
            cloned = structuredClone(unchangedBy(cloned, step));
            expect(isDeepFrozen(frozen)).toBe(true);
            expect(parsed).toEqual(frozen);
            expect(cloned).toEqual(frozen);
          }
          expectConsistent(frozen);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('replay from a JSON round-tripped or structuredClone store leaves it unchanged and gives what it gives from the frozen store', () => {
    fc.assert(
      fc.property(eventsArb, eventsArb, (first, second) => {
        const start = replay(first, emptyFactStore({ maxValidFacts: 6 }));
        const expected = replay(second, start);
        for (const input of [viaJson(start), structuredClone(start)]) {
          const result = unchangedBy(input, (store) => replay(viaJson(second), store));
          expect(result).toEqual(expected);
          expect(isDeepFrozen(result)).toBe(true);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('a reducer with nothing to do hands back the very store it was given, deeply frozen, a JSON round-tripped or structuredClone one included', () => {
    // Each step leaves any store as it is: a fact already asserted, a pair no store holds, a
    // bound above the count, a blank task id, an event of a type no reducer knows.
    const asserted = fileFact('src/a.ts', 'modified_by', 'task:1', 1);
    const start = addFacts(emptyFactStore({ maxValidFacts: 6 }), [asserted]);
    const idle: ReadonlyArray<readonly [string, Step]> = [
      ['addFacts of nothing', (store) => addFacts(store, [])],
      ['addFacts of a fact asserted', (store) => addFacts(store, [asserted])],
      ['invalidate of a pair no store holds', (store) => invalidate(store, 'src/none.ts', 'modified_by', 5)],
      ['compact above the count', (store) => compact(store, 6)],
      ['compactWithReport above the count', (store) => compactWithReport(store, 6).store],
      ['recordTaskPrompt of a blank task id', (store) => recordTaskPrompt(store, ' ', 'edit src/a.ts', 3)],
      ['applyEvent of an unknown event', (store) => applyEvent(store, { type: 'store/renamed' } as never)],
    ];
    for (const [name, step] of idle)
      for (const input of [start, viaJson(start), structuredClone(start)]) {
        const result = unchangedBy(input, step);
        expect(result, name).toBe(input);
        expect(isDeepFrozen(result), name).toBe(true);
      }
  });

  it('the same facts given unfrozen, as JSON, give the store the frozen facts give, and the facts are not changed', () => {
    fc.assert(
      fc.property(eventsArb, (events) => {
        const facts = events.flatMap((event) => (event.type === 'facts/added' ? event.facts : []));
        const plain = viaJson(facts) as SessionFact[];
        const before = JSON.stringify(plain);
        const store = emptyFactStore({ maxValidFacts: 5 });
        expect(addFacts(store, plain)).toEqual(addFacts(store, facts));
        expect(JSON.stringify(plain)).toBe(before);
      }),
    );
  });

  it('addFacts on a store parsed from JSON does not write the new assertion into the parsed store (the reported case)', () => {
    const fact = (object: string, at: number): SessionFact => ({
      id: createFactId('src/a.ts', 'modified_by', object),
      subject: 'src/a.ts',
      relation: 'modified_by',
      object,
      tags: ['file_change'],
      validFrom: at,
      sourceTaskId: '1',
      sourceRole: 'implementer',
      confidence: 1,
    });
    const saved = addFacts(emptyFactStore(), [fact('task:1', 1)]);
    const base = viaJson(saved);
    const before = JSON.stringify(base);
    const next = addFacts(base, [fact('task:2', 5)]);
    expect(JSON.stringify(base)).toBe(before);
    // And the parsed store goes on behaving as the one it was saved from.
    expect(next).toEqual(addFacts(saved, [fact('task:2', 5)]));
    expect(addFacts(base, [fileFact('src/b.ts', 'modified_by', 'task:3', 6)])).toEqual(
      addFacts(saved, [fileFact('src/b.ts', 'modified_by', 'task:3', 6)]),
    );
  });
});

/** What a session does to a tracker: results, invalidations and compactions. */
const trackerStepArb = fc.oneof(
  fc
    .record({
      task: fc.integer({ min: 1, max: 5 }),
      files: fc.subarray(['src/a.ts', 'src/b.ts', 'test/a.test.ts', 'README.md']),
    })
    .map(({ task, files }) => (tracker: FactTracker) => {
      tracker.ingestOutput({
        role: 'implementer',
        taskId: String(task),
        output: { task_id: String(task), status: 'completed', summary: `task ${task}`, files_changed: files },
      });
    }),
  fc
    .constantFrom('src/a.ts', 'src/b.ts')
    .map((subject) => (tracker: FactTracker) => void tracker.invalidate(subject, 'modified_by')),
  fc.integer({ min: 0, max: 4 }).map((n) => (tracker: FactTracker) => void tracker.compact(n)),
);

describe('a tracker started from a store users pass', () => {
  it('a tracker whose initial store came from JSON never writes into it, and ends where one started from the frozen store ends', () => {
    fc.assert(
      fc.property(eventsArb, fc.array(trackerStepArb, { maxLength: 12 }), (first, steps) => {
        const saved = replay(first, emptyFactStore({ maxValidFacts: 6 }));
        const parsed = viaJson(saved);
        const before = JSON.stringify(parsed);
        let now = 100;
        const fromParsed = createFactTracker({ clock: () => now, initial: parsed });
        const fromSaved = createFactTracker({ clock: () => now, initial: saved });
        for (const step of steps) {
          now += 1;
          step(fromParsed);
          step(fromSaved);
        }
        expect(JSON.stringify(parsed)).toBe(before);
        expect(fromParsed.getSnapshot()).toEqual(fromSaved.getSnapshot());
      }),
      { numRuns: 100 },
    );
  });
});

describe('a value that is not a fact store', () => {
  const store = replay([{ type: 'facts/added', facts: [fileFact('src/a.ts', 'modified_by', 'task:1', 1)] }]);
  const notStores: ReadonlyArray<readonly [string, unknown, RegExp]> = [
    ['a saved state not read through decodeState', viaJson(encodeState(store)), /saved-state document.*decodeState/u],
    ['a tracker state', initialTrackerState({ store }), /tracker state.*pass its store/u],
    ['an empty object', {}, /not a fact store/u],
    ['a store missing its index', { ...viaJson(store), index: undefined }, /no search index/u],
    ['a number', 42, /the store is a number/u],
    ['a string', 'store', /the store is a string/u],
  ];
  const query = { taskDescription: 'src/a.ts', taskId: '2', maxFacts: 5, maxTokens: 500 };
  const calls: ReadonlyArray<readonly [string, (value: FactStore) => unknown]> = [
    ['addFacts', (value) => addFacts(value, [fileFact('src/b.ts', 'modified_by', 'task:1', 2)])],
    ['invalidate', (value) => invalidate(value, 'src/a.ts', 'modified_by', 5)],
    ['compact', (value) => compact(value, 0)],
    ['recordTaskPrompt', (value) => recordTaskPrompt(value, '2', 'edit src/a.ts', 3)],
    ['selectValidFacts', (value) => selectValidFacts(value)],
    ['selectValidCount', (value) => selectValidCount(value)],
    ['retrieveFacts', (value) => retrieveFacts(value, query)],
    ['explainRetrievalEither', (value) => explainRetrievalEither(value, query)],
    ['encodeState', (value) => encodeState(value)],
    ['replay', (value) => replay([{ type: 'store/compacted', maxFacts: 0 }], value)],
    ['applyEvent', (value) => applyEvent(value, { type: 'store/compacted', maxFacts: 0 })],
    // An event of a type no reducer knows leaves a store as it is, but is no reason to hand back a value that is none.
    ['applyEvent of an unknown event', (value) => applyEvent(value, { type: 'store/renamed' } as never)],
    ['replayHistory', (value) => replayHistory('{"type":"compact","maxFacts":0}', { initial: value })],
    ['createFactTracker', (value) => createFactTracker({ initial: value })],
    [
      'trackerTransition',
      (value) => trackerTransition({ ...initialTrackerState(), store: value }, { type: 'compact', maxFacts: 0, at: 1 }),
    ],
  ];

  it.each(notStores)(
    '%s is refused by every reducer, selector, retrieval and shell with a TypeError saying what it is',
    (_name, value, message) => {
      for (const [name, call] of calls)
        expect(() => call(value as FactStore), name).toThrow(
          expect.objectContaining({ name: 'TypeError', message: expect.stringMatching(message) }),
        );
    },
  );

  it('a store as JSON or structuredClone gives it is taken by every one of them', () => {
    for (const value of [store, viaJson(store), structuredClone(store)])
      for (const [name, call] of calls) expect(() => call(value), name).not.toThrow();
  });
});

describe('callbacks from inside a write run', () => {
  it('a listener that writes from the state it is handed keeps a value no later call of the tracker changes', () => {
    const tracker = createFactTracker({ clock: () => 5 });
    const kept: Array<{ store: FactStore; json: string }> = [];
    tracker.subscribe((state) => {
      const derived = addFacts(state, [fileFact('src/listener.ts', 'modified_by', 'task:9', 9)]);
      kept.push({ store: derived, json: JSON.stringify(derived) });
    });
    for (let task = 1; task <= 6; task += 1)
      tracker.ingestOutput({
        role: 'implementer',
        taskId: String(task),
        output: { task_id: String(task), status: 'completed', summary: `task ${task}`, files_changed: ['src/a.ts'] },
      });
    expect(kept).toHaveLength(6);
    for (const { store, json } of kept) {
      expect(isDeepFrozen(store)).toBe(true);
      expect(JSON.stringify(store)).toBe(json);
    }
  });

  it('a token counter or a clock that writes, called from inside a replay, gets values as frozen as anywhere else', () => {
    const derived: FactStore[] = [];
    const history = [
      { type: 'prompt', taskId: '1', at: 1, taskPrompt: 'Add the parser' },
      {
        type: 'dispatch',
        role: 'implementer',
        taskId: '1',
        at: 2,
        result: { task_id: '1', status: 'completed', summary: 'parser', files_changed: ['src/parser.ts'] },
      },
      { type: 'prompt', taskId: '2', at: 3, taskPrompt: 'Fix the parser' },
    ]
      .map((event) => JSON.stringify(event))
      .join('\n');
    const report = replayHistory(history, {
      countTokens: (text) => {
        derived.push(addFacts(emptyFactStore(), [fileFact('src/counted.ts', 'modified_by', 'task:9', derived.length)]));
        return Math.ceil(text.length / 4);
      },
    });
    expect(report.report.summary.prompts).toBe(2);
    expect(derived.length).toBeGreaterThan(0);
    for (const store of derived) expect(isDeepFrozen(store)).toBe(true);
  });
});

describe('facts whose fields answer differently on each read', () => {
  /** A fact whose fields are getters: each answers `first` on its first read and `later` after. */
  const shifting = (fields: Record<string, readonly [unknown, unknown]>): SessionFact => {
    const fact = {};
    for (const [name, [first, later]] of Object.entries(fields)) {
      let reads = 0;
      Object.defineProperty(fact, name, { enumerable: true, get: () => (reads++ === 0 ? first : later) });
    }
    return fact as SessionFact;
  };
  const long = 'x'.repeat(FACT_LIMITS.subject + 300);
  const textArb = fc.constantFrom<unknown>('src/a.ts', long, '', { toString: () => 'src/a.ts' }, 42);
  const tagsArb = fc.constantFrom<unknown>(['file_change'], ['no_such_tag'], 'file_change');

  it('addFacts judges a fact by one read of each field: what it stores passes parseNewFact, and it never throws', () => {
    fc.assert(
      fc.property(textArb, textArb, tagsArb, tagsArb, fc.boolean(), (first, later, tags, laterTags, idOfLater) => {
        const subjectFor = idOfLater ? later : first;
        const fact = shifting({
          id: [createFactId(String(subjectFor), 'modified_by', 'task:1'), 'not an id'],
          subject: [first, later],
          relation: ['modified_by', { toString: () => 'modified_by' }],
          object: ['task:1', long],
          tags: [tags, laterTags],
          validFrom: [1, 1],
          sourceTaskId: ['1', '1'],
          sourceRole: ['implementer', 'implementer'],
          confidence: [1, 1],
        });
        const stored = selectValidFacts(addFacts(emptyFactStore(), [fact]));
        for (const kept of stored) {
          expect(parseNewFact({ ...kept })).toEqual(E.right(kept));
          expect(kept.subject).toBe('src/a.ts');
        }
      }),
    );
  });

  it('a tag list whose elements change after they were checked is stored as it was checked', () => {
    let reads = 0;
    const tags = new Proxy(['file_change'], {
      get: (target, key, receiver) => (key === '0' && reads++ > 0 ? 'no_such_tag' : Reflect.get(target, key, receiver)),
    });
    const fact = { ...fileFact('src/a.ts', 'modified_by', 'task:1', 1), tags } as SessionFact;
    const stored = selectValidFacts(addFacts(emptyFactStore(), [fact]));
    expect(stored.map((kept) => kept.tags)).toEqual([['file_change']]);
  });
});
