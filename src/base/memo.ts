/**
 * `compute` memoized by its argument in a table of at most `limit` entries; past it the table
 * starts again, so memory stays bounded whatever is read, while what a session reads again (its
 * words, paths, texts and facts) is far less. For pure computations of immutable arguments:
 * strings, or frozen values compared by identity.
 */
export const memoize = <K, V>(limit: number, compute: (key: K) => V): ((key: K) => V) => {
  const table = new Map<K, V>();
  return (key) => {
    let value = table.get(key);
    if (value === undefined) {
      value = compute(key);
      if (table.size >= limit) table.clear();
      table.set(key, value);
    }
    return value;
  };
};
