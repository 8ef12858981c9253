/**
 * Copying frozen arrays at the engine's speed. The engine copies a frozen array by `slice` or
 * `concat` off its fast path, many times slower than an unfrozen one of the same length (see
 * docs/performance.md). A spread of it is fast, but makes every copy a generic array, and
 * numbers kept generically take more room and are read and written out (`JSON.stringify`)
 * slower: so numbers are copied one by one, which keeps their compact layout.
 */

/** A shallow copy of `array`, exactly its length, in the layout `slice` would give. */
export const copyOf = <T>(array: ReadonlyArray<T>): T[] => {
  if (!Object.isFrozen(array)) return array.slice();
  if (typeof array[0] !== 'number') return [...array];
  const copy: T[] = [];
  for (let i = 0; i < array.length; i += 1) copy.push(array[i]!);
  return copy;
};

/** `array` itself, or a copy of it when it is frozen (see `copyOf`): what to call `slice` or `concat` on. */
export const sliceable = <T>(array: ReadonlyArray<T>): ReadonlyArray<T> =>
  Object.isFrozen(array) ? copyOf(array) : array;
