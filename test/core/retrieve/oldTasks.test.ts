/**
 * Old tasks: a task is old once OLD_TASK_AFTER tasks have had a prompt recorded after its own,
 * and lends `contextOld` of its context. Told by the index's list of the latest prompted tasks,
 * which must be the same however the store was built: by its reducers in any order, or from a
 * saved state.
 */
import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import {
  addFacts,
  DEFAULT_RANKING,
  decodeState,
  emptyFactStore,
  encodeState,
  explainRetrieval,
  type FactQuery,
  type FactStore,
  makeFact,
  recordTaskPrompt,
  retrieveFacts,
} from '../../../src/index.js';
import { resolveRanking } from '../../../src/core/retrieve/rank.js';
import { OLD_TASK_AFTER } from '../../../src/core/search/searchIndex.js';
import { forgetTasks } from '../../../src/core/search/indexWrites.js';
import { withIndex } from '../../../src/core/store/state.js';
import { asOneRun } from '../../../src/persistent/owner.js';
import * as PMap from '../../../src/persistent/persistentMap.js';
import { getAt } from '../../../src/persistent/persistentVector.js';
import { expectConsistent } from '../store/invariants.js';

/** Task `n` changed `files/f{n}.rs`, asked for by its prompt at time `n`. */
const changed = (n: number): ReturnType<typeof makeFact> =>
  makeFact({
    subject: `files/f${n}.rs`,
    relation: 'modified_by',
    object: `task:${n}`,
    tags: ['file_change'],
    validFrom: n,
    sourceTaskId: String(n),
    sourceRole: 'implementer',
    confidence: 1,
  });

/** A session of `tasks` tasks: task 1 asked to tune the zebra codec, every later one something else. */
const session = (tasks: number): FactStore => {
  let store = addFacts(
    emptyFactStore({ maxValidFacts: 10_000 }),
    Array.from({ length: tasks }, (_, i) => changed(i + 1)),
  );
  for (let n = 1; n <= tasks; n += 1)
    store = recordTaskPrompt(store, String(n), n === 1 ? 'Tune the zebra codec' : `Polish widget number ${n}`, n);
  return store;
};

/** The index's list of the latest prompted tasks, by task id instead of number. */
const promptedIds = (store: FactStore): Array<string | number> =>
  store.index.prompted.map((value, i) => (i % 2 === 0 ? getAt(store.index.taskIds, value)! : value));

const query = (ranking?: FactQuery['ranking']): FactQuery => ({
  taskDescription: 'Tune the zebra codec further',
  taskId: 'next',
  maxFacts: 40,
  maxTokens: 500,
  ...(ranking === undefined ? {} : { ranking }),
});

/** The context part task 1's file gets. */
const contextOfFirst = (store: FactStore, ranking?: FactQuery['ranking']): number =>
  explainRetrieval(store, query(ranking)).find((d) => d.fact.subject === 'files/f1.rs')!.parts!.context;

describe('old tasks', () => {
  it(`a task lends contextOld of its context once ${OLD_TASK_AFTER} tasks have had a prompt recorded after its own, and all of it before`, () => {
    const young = session(OLD_TASK_AFTER);
    const old = session(OLD_TASK_AFTER + 1);
    expect(contextOfFirst(young)).toBeGreaterThan(0);
    // 149 tasks after it: as any other, whatever contextOld says.
    expect(contextOfFirst(young, { contextOld: 0.25 })).toBe(contextOfFirst(young, { contextOld: 1 }));
    // 150 after it: the default share, or the one asked for; none at 0.
    expect(contextOfFirst(old) / contextOfFirst(old, { contextOld: 1 })).toBeCloseTo(0.7, 12);
    expect(contextOfFirst(old, { contextOld: 0.25 }) / contextOfFirst(old, { contextOld: 1 })).toBeCloseTo(0.25, 12);
    expect(contextOfFirst(old, { contextOld: 0 })).toBe(0);
    // The exact top k agrees with the exhaustive ranking either way.
    for (const ranking of [undefined, { contextOld: 0 }, { contextOld: 1 }]) {
      const included = explainRetrieval(old, query(ranking))
        .filter((d) => d.decision === 'included')
        .map((d) => d.fact.id);
      expect(retrieveFacts(old, query(ranking)).map((f) => f.id)).toEqual(included);
    }
  });

  it("takes an old task's share within 0 and 1: above 1 as 1, and one that is no finite number 0 or more as the default", () => {
    expect(resolveRanking({ contextOld: 5 }).contextOld).toBe(1);
    expect(resolveRanking({ contextOld: 0 }).contextOld).toBe(0);
    expect(resolveRanking({ contextOld: 0.25 }).contextOld).toBe(0.25);
    for (const value of [-1, Number.NaN, Number.POSITIVE_INFINITY, '0.5', null])
      expect(resolveRanking({ contextOld: value }).contextOld).toBe(DEFAULT_RANKING.contextOld);
    // A share above 1 lends an old task no more than any other.
    const old = session(OLD_TASK_AFTER + 1);
    expect(contextOfFirst(old, { contextOld: 5 })).toBe(contextOfFirst(old, { contextOld: 1 }));
  });

  it('a task prompted again later is young again: its latest prompt is what counts', () => {
    const store = recordTaskPrompt(session(OLD_TASK_AFTER + 40), '1', 'Tune the zebra codec, second round', 10_000);
    expect(contextOfFirst(store, { contextOld: 0.25 })).toBe(contextOfFirst(store, { contextOld: 1 }));
  });

  it('a store read back from its saved state tells the same tasks old, and answers every query alike', () => {
    // Prompts recorded out of their time order, two at one time, so the order is by time, then id.
    let store = addFacts(
      emptyFactStore({ maxValidFacts: 10_000 }),
      Array.from({ length: 400 }, (_, i) => changed(i + 1)),
    );
    for (let n = 400; n >= 1; n -= 1)
      store = recordTaskPrompt(store, String(n), n % 7 === 0 ? 'Tune the zebra codec' : `Polish widget ${n}`, n >> 1);
    const read = decodeState(JSON.parse(JSON.stringify(encodeState(store))));
    if (E.isLeft(read)) throw new Error(read.left.message);
    expect(promptedIds(read.right)).toEqual(promptedIds(store));
    const plain = (s: FactStore) =>
      explainRetrieval(s, query()).map((d) => [d.fact.id, d.decision, d.parts?.context ?? 0]);
    expect(plain(read.right)).toEqual(plain(store));
    expect(retrieveFacts(read.right, query())).toEqual(retrieveFacts(store, query()));
  });

  it('the index lists the 150 tasks with the latest prompts, whatever order prompts come in and whichever records are forgotten', () => {
    // 170 tasks, 160 of them prompted first, so the list is full and a forgotten task is often one of it.
    const step = fc.oneof(
      {
        weight: 8,
        arbitrary: fc.record({
          kind: fc.constant('prompt' as const),
          task: fc.nat(169),
          at: fc.nat(300),
          text: fc.nat(3),
        }),
      },
      {
        weight: 1,
        arbitrary: fc.record({ kind: fc.constant('forget' as const), tasks: fc.array(fc.nat(169), { maxLength: 8 }) }),
      },
    );
    fc.assert(
      fc.property(
        fc.array(fc.nat(300), { minLength: 160, maxLength: 160 }),
        fc.array(step, { maxLength: 300 }),
        (times, steps) => {
          let store = times.reduce((s, at, t) => recordTaskPrompt(s, `t${t}`, `Prompt of t${t}`, at), emptyFactStore());
          for (const s of steps) {
            store =
              s.kind === 'prompt'
                ? recordTaskPrompt(store, `t${s.task}`, `Prompt ${s.text} of t${s.task}`, s.at)
                : asOneRun(() =>
                    withIndex(
                      store,
                      forgetTasks(
                        store.index,
                        s.tasks.map((t) => `t${t}`),
                      ),
                    ),
                  );
            const all: Array<[string, number]> = [];
            PMap.forEach(store.index.tasks, (doc, id) => {
              if (doc.promptAt !== undefined) all.push([id, doc.promptAt]);
            });
            all.sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1));
            expect(promptedIds(store)).toEqual(all.slice(0, OLD_TASK_AFTER).flat());
          }
          expectConsistent(store);
        },
      ),
      { numRuns: 40 },
    );
  });
});
