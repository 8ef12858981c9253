import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fnv1a } from '../../src/base/hash.js';
import {
  beginBatch,
  beginTransientBatch,
  EMPTY_TRIE,
  type HexTrie,
  sealBatch,
  sealTree,
  trieForEach,
  trieGet,
  trieRemove,
  trieSet,
  trieSize,
} from '../../src/store/trie.js';
import { isDeepFrozen } from './invariants.js';

// Keys from untrusted text: names every object answers, index-like strings, and a few that
// share hash prefixes, so leaves split and branches prune.
const keyArb = fc.oneof(
  {
    weight: 1,
    arbitrary: fc.constantFrom('constructor', '__proto__', 'toString', 'hasOwnProperty', '12', '0', '~x', ''),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 6 }) },
  // A pool small enough that removals often hit, large enough that leaves split.
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 60 }).map((n) => `k${n}`) },
);
const opArb = fc.oneof(
  { weight: 3, arbitrary: fc.tuple(fc.constant('set' as const), keyArb, fc.integer({ min: 0, max: 5 })) },
  { weight: 2, arbitrary: fc.tuple(fc.constant('remove' as const), keyArb, fc.constant(0)) },
  { weight: 1, arbitrary: fc.tuple(fc.constant('seal' as const), fc.constant(''), fc.constant(0)) },
);

const contents = (trie: HexTrie<number>): Array<[string, number]> => {
  const out: Array<[string, number]> = [];
  trieForEach(trie, (value, key) => out.push([key, value]));
  return out.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
};

const modelContents = (model: Map<string, number>): Array<[string, number]> =>
  [...model].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

describe('hex tries', () => {
  for (const transient of [false, true])
    it(`a ${transient ? 'transient' : 'sealed'} run of sets and removes holds exactly what a Map holds, counts it, and never changes a sealed version`, () => {
      fc.assert(
        fc.property(fc.array(opArb, { minLength: 20, maxLength: 400, size: 'large' }), (ops) => {
          const model = new Map<string, number>();
          let trie: HexTrie<number> = EMPTY_TRIE;
          let batch = transient ? beginTransientBatch() : beginBatch();
          const sealed: Array<{ trie: HexTrie<number>; json: string }> = [];
          for (const [op, key, value] of ops) {
            if (op === 'set') {
              trie = trieSet(batch, trie, fnv1a(key), key, value, fnv1a);
              model.set(key, value);
            } else if (op === 'remove') {
              trie = trieRemove(batch, trie, fnv1a(key), key);
              model.delete(key);
            } else {
              if (transient) sealTree(trie);
              else sealBatch(batch);
              sealed.push({ trie, json: JSON.stringify(trie) });
              batch = transient ? beginTransientBatch() : beginBatch();
            }
            if (!transient) sealBatch(batch);
          }
          if (transient) sealTree(trie);
          expect(contents(trie)).toEqual(modelContents(model));
          expect(trieSize(trie)).toBe(model.size);
          for (const key of model.keys()) expect(trieGet(trie, fnv1a(key), key)).toBe(model.get(key));
          expect(trieGet(trie, fnv1a('absent key'), 'absent key')).toBe(model.get('absent key'));
          expect(isDeepFrozen(trie)).toBe(true);
          expect(JSON.parse(JSON.stringify(trie))).toEqual(trie);
          for (const version of sealed) expect(JSON.stringify(version.trie)).toBe(version.json);
        }),
        { numRuns: 150 },
      );
    });
});
