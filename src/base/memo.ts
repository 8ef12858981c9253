/**
 * `compute` memoized by its argument in a table of at most `limit` entries; past it the table
 * starts again, so memory stays bounded whatever is read, while what a session reads again (its
 * words, paths, texts and facts) is far less. For pure computations of immutable arguments:
 * strings, or frozen values compared by identity. A second argument is read only when the
 * value is made: it may help make it, never change it (the key alone decides it).
 */
export const memoize = <K, V, H = never>(
  limit: number,
  compute: (key: K, help?: H) => V,
): [H] extends [never] ? (key: K) => V : (key: K, help?: H) => V => {
  const table = new Map<K, V>();
  const memoized = (key: K, help?: H): V => {
    let value = table.get(key);
    if (value === undefined) {
      value = compute(key, help);
      if (table.size >= limit) table.clear();
      table.set(key, value);
    }
    return value;
  };
  return memoized as [H] extends [never] ? (key: K) => V : (key: K, help?: H) => V;
};
