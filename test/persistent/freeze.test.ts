/**
 * The one way to freeze a value (`deepFreeze`) and the package's immer instance.
 */
import { describe, expect, it } from 'vitest';
import { deepFreeze, produce } from '../../src/persistent/freeze.js';
import { isDeepFrozen } from '../core/store/invariants.js';

describe('deepFreeze', () => {
  it('freezes every plain object and array below a value and returns the value itself', () => {
    const value = { a: [1, { b: [2, 3] }], c: { d: { e: 'f' } } };
    expect(deepFreeze(value)).toBe(value);
    expect(isDeepFrozen(value)).toBe(true);
  });

  it('skips a subtree already frozen: what a frozen node holds is not walked again', () => {
    const inner = { left: 'open' };
    const shallow = Object.freeze({ inner });
    deepFreeze({ shallow, fresh: { x: 1 } });
    expect(Object.isFrozen(inner)).toBe(false);
  });

  it('leaves a typed array as it is (one cannot be frozen) and freezes what surrounds it', () => {
    const view = new Int32Array([1, 2]);
    const value = { view, list: [view] };
    expect(() => deepFreeze(value)).not.toThrow();
    expect(Object.isFrozen(value)).toBe(true);
    expect(Object.isFrozen(value.list)).toBe(true);
    view[0] = 5;
    expect(view[0]).toBe(5);
  });

  it('returns a primitive or null as it is', () => {
    expect(deepFreeze(3)).toBe(3);
    expect(deepFreeze(null)).toBe(null);
  });
});

describe('produce', () => {
  it('freezes what it produces, whatever the global immer is set to', () => {
    const next = produce({ list: [1] }, (draft) => {
      draft.list.push(2);
    });
    expect(next).toEqual({ list: [1, 2] });
    expect(isDeepFrozen(next)).toBe(true);
  });
});
