/**
 * Write runs (the owner pattern): transient runs that leave what they built unfrozen for the
 * next run of the same owner, and callbacks made from inside a run that write as if none were
 * open.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { asOneRun, createOwner, outsideRuns, transientRun } from '../../src/persistent/owner.js';
import { deepFreeze } from '../../src/persistent/freeze.js';
import * as PMap from '../../src/persistent/persistentMap.js';
import { isDeepFrozen } from '../core/store/invariants.js';

type NumberMap = PMap.PersistentMap<number>;

const contents = (map: NumberMap): string => {
  const out: Array<[string, number]> = [];
  PMap.forEach(map, (value, key) => out.push([key, value]));
  return JSON.stringify(out.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
};

/** Enough keys that leaves split into branches. */
const fill = (map: NumberMap, from: number, count: number): NumberMap => {
  let next = map;
  for (let i = from; i < from + count; i += 1) next = PMap.set(next, `k${i}`, i);
  return next;
};

describe('transientRun', () => {
  it('leaves what it built unfrozen, the next transient run writes it in place, and seal makes it persistent', () => {
    const owner = createOwner();
    let map: NumberMap = PMap.empty;
    transientRun(owner, () => {
      map = fill(map, 0, 100);
    });
    expect(Object.isFrozen(map)).toBe(false);
    const before = map;
    transientRun(owner, () => {
      map = fill(map, 100, 100);
    });
    // The root the first run built was changed in place, not copied.
    expect(map).toBe(before);
    expect(PMap.size(map)).toBe(200);

    // A bare map the run held natively: sealing it gives its trie.
    map = deepFreeze(map);
    expect(isDeepFrozen(map)).toBe(true);
    expect(PMap.isWellFormed(map)).toBe(true);
    const sealed = contents(map);
    let later: NumberMap = map;
    transientRun(owner, () => {
      later = PMap.set(PMap.remove(map, 'k5'), 'k1', -1);
    });
    expect(later).not.toBe(map);
    expect(contents(map)).toBe(sealed);
    expect(PMap.get(later, 'k5')).toBeUndefined();
    expect(PMap.get(later, 'k1')).toBe(-1);
  });

  it('inside another run is part of it: the outer run freezes what both built', () => {
    const owner = createOwner();
    const map = asOneRun(() => {
      let inner = PMap.empty as NumberMap;
      transientRun(owner, () => {
        inner = fill(inner, 0, 50);
      });
      return fill(inner, 50, 50);
    });
    expect(PMap.size(map)).toBe(100);
    expect(isDeepFrozen(map)).toBe(true);
  });

  it('ends its run when `fn` throws: later writes outside a run are persistent again', () => {
    const owner = createOwner();
    expect(() =>
      transientRun(owner, () => {
        throw new Error('stop');
      }),
    ).toThrow('stop');
    const first = PMap.set(PMap.empty as NumberMap, 'a', 1);
    const second = PMap.set(first, 'b', 2);
    expect(isDeepFrozen(first)).toBe(true);
    expect(contents(first)).toBe('[["a",1]]');
    expect(PMap.size(second)).toBe(2);
  });

  it('transient runs then a seal give exactly the map the same writes make one by one, and no value sealed on the way changes', () => {
    const op = fc.oneof(
      fc.tuple(fc.constant('set' as const), fc.integer({ min: 0, max: 80 }), fc.integer({ min: 0, max: 9 })),
      fc.tuple(fc.constant('remove' as const), fc.integer({ min: 0, max: 80 }), fc.constant(0)),
      fc.tuple(fc.constant('share' as const), fc.constant(0), fc.constant(0)),
    );
    fc.assert(
      fc.property(fc.array(fc.array(op, { maxLength: 60 }), { minLength: 1, maxLength: 6 }), (runs) => {
        let persistent: NumberMap = PMap.empty;
        let owned: NumberMap = PMap.empty;
        const shared: Array<{ map: NumberMap; json: string }> = [];
        const owner = createOwner();
        for (const run of runs)
          transientRun(owner, () => {
            for (const [kind, key, value] of run) {
              if (kind === 'share') {
                owned = deepFreeze(owned);
                shared.push({ map: owned, json: contents(owned) });
              } else if (kind === 'set') {
                owned = PMap.set(owned, `k${key}`, value);
                persistent = outsideRuns(() => PMap.set(persistent, `k${key}`, value));
              } else {
                owned = PMap.remove(owned, `k${key}`);
                persistent = outsideRuns(() => PMap.remove(persistent, `k${key}`));
              }
            }
          });
        owned = deepFreeze(owned);
        expect(contents(owned)).toBe(contents(persistent));
        expect(owned).toEqual(persistent);
        expect(isDeepFrozen(owned)).toBe(true);
        expect(isDeepFrozen(persistent)).toBe(true);
        for (const { map, json } of shared) expect(contents(map)).toBe(json);
      }),
      { numRuns: 100 },
    );
  });
});

describe('ownership', () => {
  it('a run never writes a node it did not create: an unfrozen map from JSON.parse or structuredClone is copied, not changed', () => {
    const built = fill(PMap.empty as NumberMap, 0, 100);
    for (const input of [JSON.parse(JSON.stringify(built)) as NumberMap, structuredClone(built)]) {
      expect(Object.isFrozen(input)).toBe(false);
      const before = JSON.stringify(input);
      const changed = asOneRun(() => PMap.remove(fill(input, 50, 100), 'k3'));
      expect(JSON.stringify(input)).toBe(before);
      expect(changed).not.toBe(input);
      expect(PMap.size(changed)).toBe(149);
      // The same writes one by one, outside any run, leave it as it was too.
      const stepwise = PMap.remove(PMap.set(input, 'k0', -1), 'k1');
      expect(JSON.stringify(input)).toBe(before);
      expect(PMap.get(stepwise, 'k0')).toBe(-1);
    }
  });

  it('an owner writes in place only what its own runs built: another owner copies it', () => {
    const first = createOwner();
    const second = createOwner();
    let map: NumberMap = PMap.empty;
    transientRun(first, () => {
      map = fill(map, 0, 100);
    });
    const json = contents(map);
    let other: NumberMap = map;
    transientRun(second, () => {
      other = PMap.set(map, 'k1', -1);
    });
    expect(other).not.toBe(map);
    expect(contents(map)).toBe(json);
    let again: NumberMap = map;
    transientRun(first, () => {
      again = PMap.set(map, 'k1', -1);
    });
    expect(again).toBe(map);
  });
});

describe('outsideRuns', () => {
  it('lets a callback made from inside a run write persistently, and the run carries on in place', () => {
    let callbackMaps: NumberMap[] = [];
    const map = asOneRun(() => {
      const first = fill(PMap.empty as NumberMap, 0, 40);
      callbackMaps = outsideRuns(() => {
        const a = PMap.set(PMap.empty as NumberMap, 'x', 1);
        const b = PMap.set(a, 'y', 2);
        return [a, b];
      });
      // Still inside the run: the map it built is written in place.
      const second = PMap.set(first, 'k0', -1);
      expect(second).toBe(first);
      return second;
    });
    const [a, b] = callbackMaps;
    expect(isDeepFrozen(a)).toBe(true);
    expect(contents(a!)).toBe('[["x",1]]');
    expect(PMap.size(b!)).toBe(2);
    expect(isDeepFrozen(map)).toBe(true);
    expect(PMap.get(map, 'k0')).toBe(-1);
  });
});

describe('asOneRun', () => {
  it('makes the writes of a scope one run, whatever values they reach: each node the run built is changed in place, and all is frozen when it ends', () => {
    let map: NumberMap = PMap.empty;
    let other: NumberMap = PMap.empty;
    const sizes = asOneRun(() => {
      map = fill(map, 0, 50);
      const root = map;
      other = PMap.set(other, 'a', 1);
      map = fill(map, 50, 50);
      // The root the run built (a branch by now) took the later writes in place.
      expect(map).toBe(root);
      expect(Object.isFrozen(map)).toBe(false);
      return [PMap.size(map), PMap.size(other)];
    });
    expect(sizes).toEqual([100, 1]);
    expect(isDeepFrozen(map)).toBe(true);
    expect(isDeepFrozen(other)).toBe(true);
    expect(isDeepFrozen(sizes)).toBe(true);
  });

  it('ends its run when the scope throws: what it built is not written in place by later writes', () => {
    let built: NumberMap = PMap.empty;
    expect(() =>
      asOneRun(() => {
        built = fill(built, 0, 40);
        throw new Error('stop');
      }),
    ).toThrow('stop');
    const json = contents(built);
    const later = PMap.set(built, 'k0', -1);
    expect(later).not.toBe(built);
    expect(contents(built)).toBe(json);
  });
});
