/**
 * Retention of task records: a store keeps the records (prompt, files changed) of at most
 * TASK_RECORDS tasks that hold nothing else, the most recent, and what it keeps is what a store
 * rebuilt from its saved state holds.
 */
import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import * as PMap from '../../../src/persistent/persistentMap.js';
import {
  addFacts,
  decodeState,
  emptyFactStore,
  encodeState,
  type FactStore,
  makeFact,
  recordTaskPrompt,
  selectValidFacts,
  type SessionFact,
} from '../../../src/index.js';
import { lastFactTime } from '../../../src/core/search/searchIndex.js';
import { pruneStep, pruneTaskRecords, TASK_RECORDS } from '../../../src/core/store/taskRecords.js';
import { selectLatestPrompts, selectRecordedFiles, selectRecordedPrompts } from '../../../src/core/store/write.js';
import { expectConsistent, flattenIndex } from './invariants.js';

const change = (task: number, path: string, at: number): SessionFact =>
  makeFact({
    subject: path,
    relation: 'modified_by',
    object: `task:${task}`,
    tags: ['file_change'],
    validFrom: at,
    sourceTaskId: String(task),
    sourceRole: 'implementer',
    confidence: 1,
  });

/** A task of a session: its prompt, then the files it changed, at its own time. */
const taskArb = fc.record({
  task: fc.integer({ min: 1, max: 14 }),
  files: fc.subarray(['src/a.ts', 'src/b.ts', 'src/c.ts', 'docs/d.md', 'package.json'], { minLength: 1 }),
  prompted: fc.boolean(),
});

const sessionOf = (tasks: ReadonlyArray<{ task: number; files: string[]; prompted: boolean }>, bound: number) => {
  let store = emptyFactStore({ maxValidFacts: bound });
  tasks.forEach(({ task, files, prompted }, at) => {
    if (prompted) store = recordTaskPrompt(store, String(task), `task ${task} changes ${files.join(' ')}`, at);
    store = addFacts(
      store,
      files.map((path) => change(task, path, at)),
    );
  });
  return store;
};

/** Tasks whose record holds nothing but itself: no valid fact, no open item, no file fact left in a log. */
const idleTasks = (store: FactStore): string[] => {
  const out: string[] = [];
  PMap.forEach(store.index.tasks, (doc, taskId) => {
    if (PMap.size(doc.facts) > 0 || PMap.size(doc.raised) > 0) return;
    let asserted = false;
    PMap.forEach(doc.touched, (_true, key) => {
      asserted ||= PMap.get(store.pairs, key)?.assertions.some((f) => f.sourceTaskId === taskId) === true;
    });
    if (!asserted) out.push(taskId);
  });
  return out;
};

const roundTrip = (store: FactStore): FactStore => {
  const decoded = decodeState(JSON.parse(JSON.stringify(encodeState(store))));
  if (E.isLeft(decoded)) throw new Error(decoded.left.message);
  return decoded.right;
};

describe('task records', () => {
  it('pruning keeps at most `keep` idle task records, the most recent by prompt time, and nothing else changes but those records; the result is consistent and survives a saved state', () => {
    fc.assert(
      fc.property(
        fc.array(taskArb, { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 3 }),
        (tasks, bound, keep) => {
          const store = sessionOf(tasks, bound);
          const pruned = pruneTaskRecords(store, keep);
          expectConsistent(pruned);
          expect(selectValidFacts(pruned)).toEqual(selectValidFacts(store));
          expect(pruned.pairs).toBe(store.pairs);
          const idleBefore = idleTasks(store);
          const tasksBefore = PMap.size(store.index.tasks);
          const step = pruneStep(tasksBefore, keep);
          if (tasksBefore <= keep + step || tasksBefore % step !== 0 || idleBefore.length <= keep) {
            expect(pruned).toBe(store);
            return;
          }
          const idleAfter = idleTasks(pruned).sort();
          expect(idleAfter.length).toBe(keep);
          // The kept ones are the most recent by prompt time (then id).
          const time = (taskId: string) => PMap.get(store.index.tasks, taskId)?.promptAt ?? -Infinity;
          const ranked = [...idleBefore].sort((a, b) => time(b) - time(a) || (a < b ? -1 : a > b ? 1 : 0));
          expect(idleAfter).toEqual(ranked.slice(0, keep).sort());
          // Every other task keeps its record as it was.
          PMap.forEach(store.index.tasks, (doc, taskId) => {
            if (!idleBefore.includes(taskId)) expect(PMap.get(pruned.index.tasks, taskId)).toEqual(doc);
          });
          const forgotten = new Set(ranked.slice(keep));
          expect(selectRecordedPrompts(pruned)).toEqual(
            selectRecordedPrompts(store).filter(({ taskId }) => !forgotten.has(taskId)),
          );
          expect(selectRecordedFiles(pruned)).toEqual(
            selectRecordedFiles(store).filter(({ taskId }) => !forgotten.has(taskId)),
          );
          expect(flattenIndex(roundTrip(pruned).index)).toEqual(flattenIndex(pruned.index));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a long session keeps its task records bounded: past the bound, TASK_RECORDS idle ones, the latest, besides those of tasks with facts', () => {
    const tasks = Array.from({ length: 3 * TASK_RECORDS + 300 }, (_, i) => ({
      task: i + 1,
      files: [`src/m${i % 97}.ts`, `src/n${i % 13}.ts`],
      prompted: true,
    }));
    const store = sessionOf(tasks, 50);
    expectConsistent(store);
    const total = PMap.size(store.index.tasks);
    expect(total).toBeLessThanOrEqual(50 + 3 * TASK_RECORDS);
    expect(total).toBeLessThan(tasks.length);
    // Idle records stay within an eighth of the bound above it, not up to twice it.
    expect(idleTasks(store).length).toBeLessThanOrEqual(TASK_RECORDS + pruneStep(total, TASK_RECORDS));
    expect(pruneStep(total, TASK_RECORDS)).toBe(TASK_RECORDS / 8);
    // The most recent tasks all keep their prompts.
    const prompts = new Set(selectRecordedPrompts(store).map(({ taskId }) => taskId));
    for (let task = tasks.length; task > tasks.length - TASK_RECORDS; task -= 1)
      expect(prompts.has(String(task))).toBe(true);
    // The oldest are forgotten, and with them the files they changed.
    expect(prompts.has('1')).toBe(false);
    expect(selectRecordedFiles(store).some(({ taskId }) => taskId === '1')).toBe(false);
    // What recency reads is untouched: the latest tasks with facts.
    expect(lastFactTime(PMap.get(store.index.tasks, String(tasks.length))!)).toBe(tasks.length - 1);
    expect(flattenIndex(roundTrip(store).index)).toEqual(flattenIndex(store.index));
  });

  it('the walk over every task comes about eight times each time the number of tasks doubles, so all its walks cost time linear in the tasks', () => {
    for (const keep of [1, 8, TASK_RECORDS]) {
      let walks = 0;
      let visited = 0;
      let smallest = Infinity;
      for (let tasks = 1; tasks <= 200_000; tasks += 1) {
        const step = pruneStep(tasks, keep);
        smallest = Math.min(smallest, step);
        if (tasks > keep + step && tasks % step === 0) {
          walks += 1;
          visited += tasks;
        }
      }
      expect(smallest).toBe(Math.max(1, Math.floor(keep / 8)));
      expect(walks).toBeLessThanOrEqual(8 * Math.log2(200_000) + 8);
      expect(visited).toBeLessThanOrEqual(16 * 200_000);
    }
  });

  it('selectLatestPrompts gives the latest non-empty prompts, latest first, ties by task id', () => {
    let store = emptyFactStore();
    for (const [task, prompt, at] of [
      ['b', 'second at 5', 5],
      ['a', 'first at 5', 5],
      ['c', 'at 9', 9],
      ['d', '', 12],
      ['e', 'at 1', 1],
    ] as const)
      store = recordTaskPrompt(store, task, prompt, at);
    const ids = (count: number) => selectLatestPrompts(store, count).map((recorded) => recorded.taskId);
    expect(ids(3)).toEqual(['c', 'a', 'b']);
    expect(ids(10)).toEqual(['c', 'a', 'b', 'e']);
    expect(ids(0)).toEqual([]);
    expect(selectLatestPrompts(store, 1)).toEqual([{ taskId: 'c', prompt: 'at 9', at: 9 }]);
  });
});
