/**
 * Structural invariants of a store, checked after every reducer in the property tests: the
 * records are exactly those derived from the pair logs, the valid count is right, and the
 * whole value is deeply frozen plain data.
 */
import { expect } from 'vitest';
import { type FactStore, selectAllFacts } from '../../src/index.js';
import { buildStore } from '../../src/store/write.js';
import { selectPairLogs } from '../../src/store/write.js';

export const isDeepFrozen = (value: unknown): boolean => {
  if (typeof value !== 'object' || value === null) return true;
  if (!Object.isFrozen(value)) return false;
  return Object.values(value).every(isDeepFrozen);
};

export const expectConsistent = (store: FactStore): void => {
  const rebuilt = buildStore(store.maxValidFacts, selectPairLogs(store));
  expect(store.records).toEqual(rebuilt.records);
  expect(store.validCount).toBe(rebuilt.validCount);
  expect(store.validCount).toBe(selectAllFacts(store).filter((fact) => fact.validTo === undefined).length);
  expect(isDeepFrozen(store)).toBe(true);
};
