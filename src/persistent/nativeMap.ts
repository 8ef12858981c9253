/**
 * A persistent map as a transient owner holds it while its runs write (owner.ts,
 * `transientRun`): a native `Map`, whose lookup and write cost a fraction of a trie walk's
 * (no hash of the key in script, no node per level, no ownership check per node). It never
 * leaves its owner: `deepFreeze` (freeze.ts) replaces it, wherever it meets one, by the trie of
 * its entries (`sealedTrie`), the very layout the same writes give a persistent map, so a value
 * handed out is plain frozen data deep-equal to what writes one by one make.
 */
import { type Node, trieOf } from './trie.js';

/** A map a transient owner writes in place; `owner` is the owner's token (see owner.ts). */
export class NativeMap extends Map<string, unknown> {
  constructor(
    readonly owner: object,
    entries?: Iterable<readonly [string, unknown]>,
  ) {
    super(entries);
  }
}

/** The trie of the map's entries, as new unfrozen nodes (see trie.ts). */
export const sealedTrie = (map: NativeMap): Node => {
  const keys: string[] = [];
  const values: unknown[] = [];
  map.forEach((value, key) => {
    keys.push(key);
    values.push(value);
  });
  return trieOf(keys, values);
};
