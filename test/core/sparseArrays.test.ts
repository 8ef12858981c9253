/**
 * The pure entry points that take a list from their caller read a list with a hole (an element
 * never set) as what it is, at its first hole: `a[4e9 - 1] = x` on an empty list claims four
 * billion elements, and walking or copying them would take the process down.
 */
import * as E from 'fp-ts/lib/Either.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  addFacts,
  createExtractor,
  emptyFactStore,
  explainRetrieval,
  extractFromImplementer,
  extractFromReviewer,
  formatSessionFacts,
  implementerRules,
  parseFactQuery,
  parseNewFact,
  replay,
  retrieveFacts,
  selectValidFactsByTags,
  startHistoryReplay,
  toStateSnapshotFacts,
  validateDispatchResult,
} from '../../src/index.js';
import { implementer } from '../fixtures/results.js';

/** A file change fact, as the extractor makes one. */
const fact = extractFromImplementer(implementer('1', ['src/a.ts']) as never, '1', 1).facts[0]!;
const store = addFacts(emptyFactStore(), [fact]);
const query = { taskDescription: 'change src/a.ts', taskId: '2', maxFacts: 5, maxTokens: 500 };

/** A list of `length` that holds `element` at its first `set` places and nothing after them. */
const holey = <T>(element: T, set: number, length: number): T[] => {
  const list: T[] = Array.from({ length: set }, () => element);
  list.length = length;
  return list;
};

/** Each entry point, given a list with a hole where it takes one: what it answers, or the TypeError it throws. */
const entryPoints: ReadonlyArray<readonly [string, (list: <T>(element: T) => T[]) => unknown]> = [
  ['formatSessionFacts', (list) => formatSessionFacts(list(fact))],
  ['addFacts', (list) => addFacts(emptyFactStore(), list(fact))],
  ['toStateSnapshotFacts', (list) => toStateSnapshotFacts(list(fact))],
  ['replay', (list) => replay(list({ type: 'store/factsAdded', facts: [fact] } as never))],
  ['selectValidFactsByTags', (list) => selectValidFactsByTags(store, list('file_change'))],
  ['createExtractor', (list) => createExtractor({ implementerRules: list(implementerRules[0]!), reviewerRules: [] })],
  ['startHistoryReplay().feed', (list) => startHistoryReplay().feed(list('{"type":"prompt","taskId":"1"}' as never))],
  ['parseNewFact tags', (list) => parseNewFact({ ...fact, tags: list('file_change') })],
  ['parseFactQuery tags', (list) => parseFactQuery({ ...query, tags: list('file_change') })],
  ['retrieveFacts tags', (list) => retrieveFacts(store, { ...query, tags: list('file_change') })],
  ['explainRetrieval tags', (list) => explainRetrieval(store, { ...query, tags: list('file_change') })],
  [
    'validateDispatchResult',
    (list) =>
      validateDispatchResult(
        { task_id: '1', status: 'completed', summary: 's', files_changed: list('a.ts') },
        'implementer',
      ),
  ],
  [
    'extractFromImplementer',
    (list) =>
      extractFromImplementer({ task_id: '1', status: 'completed', summary: 's', files_changed: list('a.ts') }, '1', 1),
  ],
  [
    'extractFromReviewer',
    (list) =>
      extractFromReviewer(
        {
          task_id: '1',
          assessment: 'approved',
          strengths: [],
          issues: list({ severity: 'important', message: 'm', fix: 'f' }),
          required_fixes: [],
        },
        '1',
        1,
      ),
  ],
];

describe('lists with a hole given to the pure entry points', () => {
  it('every entry point that takes a list answers one with a hole, however long it claims to be, without walking its length: a TypeError naming the hole or its failure value', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: 4, max: 2 ** 32 - 1 }),
        fc.constantFrom(...entryPoints),
        (set, length, [, call]) => {
          let answer: unknown;
          try {
            answer = call((element) => holey(element, set, length));
          } catch (error) {
            expect(error).toBeInstanceOf(TypeError);
            expect((error as Error).message).toContain(`has a hole at [${set}]`);
            return;
          }
          // Those that answer with a value: a failure, no facts, or (lenient retrieval) the tags read as not given.
          const text = JSON.stringify(answer);
          expect(text.length).toBeLessThan(10_000);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('refuses a list of facts with a hole by name, and reads a result holding one as a result that cannot be read', () => {
    expect(() => formatSessionFacts(holey(fact, 1, 1e9))).toThrow(
      new TypeError(
        'the facts is not an array of facts: an array of 1000000000 elements has a hole at [1], an element never set',
      ),
    );
    expect(() => addFacts(emptyFactStore(), holey(fact, 0, 2 ** 32 - 1))).toThrow(/has a hole at \[0\]/u);
    const result = { task_id: '1', status: 'completed' as const, summary: 's', files_changed: holey('a.ts', 1, 4e9) };
    const validated = validateDispatchResult(result, 'implementer');
    expect(E.isLeft(validated) && validated.left.code).toBe('schema_invalid');
    expect(extractFromImplementer(result, '1', 1).facts).toEqual([]);
    expect(E.isLeft(parseFactQuery({ ...query, tags: holey('file_change', 1, 4e9) }))).toBe(true);
  });
});
