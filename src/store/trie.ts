/**
 * A keyed collection that grows as a trie on the hex digits of each key's hash: a node holds
 * its entries flat until it has more than LEAF_LIMIT of them, then splits into up to 16
 * children by the next digit. An update inside an immer producer copies one path of small
 * nodes, so its cost does not grow with the collection, and small collections stay one small
 * object (cheap in memory, which matters for the many short posting lists of an index).
 */

/** A trie node: flat entries (`e`) or children by the next hex digit (`c`). Plain data. */
export interface HexTrie<T> {
  readonly e?: Readonly<Record<string, T>>;
  readonly c?: Readonly<Record<string, HexTrie<T>>>;
}

type MutableTrie<T> = { e?: Record<string, T>; c?: Record<string, MutableTrie<T>> };

/** Entries a node holds before it splits. */
const LEAF_LIMIT = 64;

/** The entry at `key` (whose hash is `hash`). */
export const trieGet = <T>(trie: HexTrie<T> | undefined, hash: string, key: string): T | undefined => {
  let node = trie;
  for (let depth = 0; node?.c !== undefined; depth += 1) node = node.c[hash[depth] ?? '0'];
  return node?.e?.[key];
};

/** Calls `visit` for every entry. */
export const trieForEach = <T>(trie: HexTrie<T> | undefined, visit: (value: T, key: string) => void): void => {
  if (trie === undefined) return;
  if (trie.e !== undefined) for (const key in trie.e) visit(trie.e[key]!, key);
  if (trie.c !== undefined) for (const digit in trie.c) trieForEach(trie.c[digit], visit);
};

/** Every value. */
export const trieValues = <T>(trie: HexTrie<T> | undefined): T[] => {
  const out: T[] = [];
  trieForEach(trie, (value) => out.push(value));
  return out;
};

/** Every key. */
export const trieKeys = <T>(trie: HexTrie<T> | undefined): string[] => {
  const out: string[] = [];
  trieForEach(trie, (_value, key) => out.push(key));
  return out;
};

/**
 * Sets an entry inside a draft (or any mutable trie); `hashOf` recomputes the hash of keys
 * moved by a split. Returns true when the key is new.
 */
export const triePut = <T>(
  trie: HexTrie<T>,
  hash: string,
  key: string,
  value: T,
  hashOf: (key: string) => string,
): boolean => {
  let node = trie as MutableTrie<T>;
  let depth = 0;
  while (node.c !== undefined) {
    const digit = hash[depth] ?? '0';
    node = node.c[digit] ??= {};
    depth += 1;
  }
  const entries = (node.e ??= {});
  const added = !(key in entries);
  entries[key] = value;
  if (added && depth < 8 && Object.keys(entries).length > LEAF_LIMIT) {
    const children: Record<string, MutableTrie<T>> = {};
    for (const moved of Object.keys(entries)) {
      const digit = hashOf(moved)[depth] ?? '0';
      ((children[digit] ??= {}).e ??= {})[moved] = entries[moved]!;
    }
    delete node.e;
    node.c = children;
  }
  return added;
};

/** Deletes an entry inside a draft, pruning emptied nodes. Returns true when it was there. */
export const trieDelete = <T>(trie: HexTrie<T>, hash: string, key: string): boolean => {
  const path: Array<[MutableTrie<T>, string]> = [];
  let node = trie as MutableTrie<T>;
  for (let depth = 0; node.c !== undefined; depth += 1) {
    const digit = hash[depth] ?? '0';
    const child = node.c[digit];
    if (child === undefined) return false;
    path.push([node, digit]);
    node = child;
  }
  if (node.e === undefined || !(key in node.e)) return false;
  delete node.e[key];
  if (Object.keys(node.e).length === 0) delete node.e;
  for (let i = path.length - 1; i >= 0; i -= 1) {
    const [parent, digit] = path[i]!;
    const child = parent.c![digit]!;
    if (child.e !== undefined || child.c !== undefined) break;
    delete parent.c![digit];
    if (Object.keys(parent.c!).length > 0) break;
    delete parent.c;
  }
  return true;
};

/** True when the trie holds no entry. */
export const trieIsEmpty = <T>(trie: HexTrie<T> | undefined): boolean =>
  trie === undefined || (trie.e === undefined && trie.c === undefined);
