import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { asOneRun, createOwner, transientRun } from '../../src/persistent/owner.js';
import { deepFreeze } from '../../src/persistent/freeze.js';
import * as PMap from '../../src/persistent/persistentMap.js';
import { isDeepFrozen } from '../core/store/invariants.js';

// Keys from untrusted text: names every object answers, index-like strings, and a pool small
// enough that removals often hit and large enough that leaves split and branches prune.
const keyArb = fc.oneof(
  {
    weight: 1,
    arbitrary: fc.constantFrom('constructor', '__proto__', 'toString', 'hasOwnProperty', '12', '0', '~x', ''),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 6 }) },
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 60 }).map((n) => `k${n}`) },
);
const opArb = fc.oneof(
  { weight: 3, arbitrary: fc.tuple(fc.constant('set' as const), keyArb, fc.integer({ min: 0, max: 5 })) },
  { weight: 2, arbitrary: fc.tuple(fc.constant('remove' as const), keyArb, fc.constant(0)) },
  { weight: 1, arbitrary: fc.tuple(fc.constant('share' as const), fc.constant(''), fc.constant(0)) },
);

const contents = (map: PMap.PersistentMap<number>): Array<[string, number]> => {
  const out: Array<[string, number]> = [];
  PMap.forEach(map, (value, key) => out.push([key, value]));
  return out.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
};

const modelContents = (model: Map<string, number>): Array<[string, number]> =>
  [...model].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/** Entries of distinct keys, up to 300 (enough for leaves to split). */
const entriesArb = fc.uniqueArray(fc.tuple(keyArb, fc.integer({ min: 0, max: 5 })), {
  selector: ([key]) => key,
  maxLength: 300,
  size: 'large',
});

describe('persistent map', () => {
  for (const inPlace of [false, true])
    it(`a run of sets and removes ${inPlace ? 'inside one write run (asOneRun) ' : ''}holds exactly what a Map holds, counts it, and never changes a shared version`, () => {
      fc.assert(
        fc.property(fc.array(opArb, { minLength: 20, maxLength: 400, size: 'large' }), (ops) => {
          const model = new Map<string, number>();
          const shared: Array<{ map: PMap.PersistentMap<number>; json: string }> = [];
          const apply = (start: PMap.PersistentMap<number>): PMap.PersistentMap<number> => {
            let map = start;
            for (const [op, key, value] of ops) {
              if (op === 'set') {
                map = PMap.set(map, key, value);
                model.set(key, value);
              } else if (op === 'remove') {
                map = PMap.remove(map, key);
                model.delete(key);
              } else {
                deepFreeze(map);
                shared.push({ map, json: JSON.stringify(map) });
              }
            }
            return map;
          };
          const map = inPlace ? asOneRun(() => apply(PMap.empty as PMap.PersistentMap<number>)) : apply(PMap.empty);
          expect(contents(map)).toEqual(modelContents(model));
          expect(PMap.size(map)).toBe(model.size);
          expect(PMap.values(map).sort()).toEqual([...model.values()].sort());
          for (const key of model.keys()) expect(PMap.get(map, key)).toBe(model.get(key));
          expect(PMap.get(map, 'absent key')).toBe(model.get('absent key'));
          expect(PMap.isWellFormed(map)).toBe(true);
          expect(isDeepFrozen(map)).toBe(true);
          expect(JSON.parse(JSON.stringify(map))).toEqual(map);
          for (const version of shared) expect(JSON.stringify(version.map)).toBe(version.json);
        }),
        { numRuns: 150 },
      );
    });

  it('maps set with the same entries in any order are deep-equal: the layout depends on the entries alone', () => {
    fc.assert(
      fc.property(
        entriesArb,
        fc.array(fc.nat(), { minLength: 300, maxLength: 300 }),
        fc.boolean(),
        (entries, order, inPlace) => {
          const shuffled = entries
            .map((entry, i) => ({ entry, rank: order[i]! }))
            .sort((a, b) => a.rank - b.rank)
            .map(({ entry }) => entry);
          const build = (list: ReadonlyArray<readonly [string, number]>): PMap.PersistentMap<number> =>
            inPlace
              ? PMap.fromEntries(list)
              : list.reduce((map, [key, value]) => PMap.set(map, key, value), PMap.empty as PMap.PersistentMap<number>);
          expect(build(shuffled)).toEqual(build(entries));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('maps reached by any sets and removes, outside runs, in one run or in a transient run then sealed, are deep-equal to the map of their final entries alone', () => {
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 20, maxLength: 600, size: 'large' }), (ops) => {
        const model = new Map<string, number>();
        const apply = (start: PMap.PersistentMap<number>, track: boolean): PMap.PersistentMap<number> => {
          let map = start;
          for (const [op, key, value] of ops)
            if (op === 'set') {
              map = PMap.set(map, key, value);
              if (track) model.set(key, value);
            } else if (op === 'remove') {
              map = PMap.remove(map, key);
              if (track) model.delete(key);
            }
          return map;
        };
        const stepwise = apply(PMap.empty, true);
        const inRun = asOneRun(() => apply(PMap.empty as PMap.PersistentMap<number>, false));
        let transient: PMap.PersistentMap<number> = PMap.empty;
        transientRun(createOwner(), () => {
          transient = apply(transient, false);
        });
        // A transient run holds the map natively: reads see the same entries before it is sealed.
        expect(contents(transient)).toEqual(modelContents(model));
        const sealed = deepFreeze(transient);
        const fresh = PMap.fromEntries(model);
        for (const map of [stepwise, inRun, sealed]) {
          expect(map).toEqual(fresh);
          expect(PMap.isWellFormed(map)).toBe(true);
          expect(isDeepFrozen(map)).toBe(true);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('mapValues gives the map a set of the mapped entries gives, and leaves its input as it was; reviveValues gives it too, in place, from the JSON', () => {
    fc.assert(
      fc.property(entriesArb, (entries) => {
        const map = PMap.fromEntries(entries);
        const json = JSON.stringify(map);
        const mapped = PMap.mapValues(map, (value, key) => `${key}=${value * 2}`);
        expect(mapped).toEqual(PMap.fromEntries(entries.map(([key, value]) => [key, `${key}=${value * 2}`])));
        expect(PMap.isWellFormed(mapped)).toBe(true);
        expect(JSON.stringify(map)).toBe(json);
        const parsed = JSON.parse(json) as PMap.PersistentMap<number>;
        expect(PMap.reviveValues(parsed, (value, key) => `${key}=${value * 2}`)).toEqual(mapped);
      }),
      { numRuns: 150 },
    );
  });

  it('valuesInto and keysInto write what forEach visits, in its order, over whatever the scratch held before', () => {
    fc.assert(
      fc.property(entriesArb, fc.array(fc.integer(), { maxLength: 400 }), (entries, leftover) => {
        const map = PMap.fromEntries(entries);
        const visited: Array<[string, number]> = [];
        PMap.forEach(map, (value, key) => visited.push([key, value]));
        const values: number[] = [...leftover];
        const keys: string[] = leftover.map(String);
        const count = PMap.valuesInto(map, values);
        expect(PMap.keysInto(map, keys)).toBe(count);
        expect(count).toBe(entries.length);
        expect(values.slice(0, count)).toEqual(visited.map(([, value]) => value));
        expect(keys.slice(0, count)).toEqual(visited.map(([key]) => key));
      }),
      { numRuns: 150 },
    );
  });

  it('a write that changes nothing returns the very same map', () => {
    const map = PMap.fromEntries([
      ['a', 1],
      ['b', 2],
    ]);
    expect(PMap.set(map, 'a', 1)).toBe(map);
    expect(PMap.remove(map, 'zzz')).toBe(map);
  });

  it('outside a run every write leaves its input as it was', () => {
    const before = PMap.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, i] as const));
    const json = JSON.stringify(before);
    const after = PMap.remove(PMap.set(before, 'new', 1), 'k3');
    expect(JSON.stringify(before)).toBe(json);
    expect(PMap.size(after)).toBe(40);
  });
});
