/**
 * A keyed collection that grows as a trie on the hex digits of each key's hash: a node holds
 * its entries flat until it has more than LEAF_LIMIT of them, then splits into up to 16
 * children by the next digit. Small collections stay one small object (cheap in memory, which
 * matters for the many short posting lists of an index), and an update copies one path of
 * small nodes, so its cost does not grow with the collection.
 *
 * Updates are persistent (the input is never changed) and batched: within one `Batch`, nodes
 * the batch created are changed in place, so a reducer that writes many entries copies each
 * node at most once. Reads and writes work on plain objects, never on immer drafts: a proxy
 * per node visited would cost more than the copying it saves.
 */

/** A trie node: flat entries (`e`) or children by the next hex digit (`c`). Plain data. */
export interface HexTrie<T> {
  readonly e?: Readonly<Record<string, T>>;
  readonly c?: Readonly<Record<string, HexTrie<T>>>;
}

/** `T` with its own fields writable (for values a batch is still building). */
export type Mutable<T> = { -readonly [K in keyof T]: T[K] };
type MutableTrie<T> = { e?: Record<string, T>; c?: Record<string, HexTrie<T>> };

/**
 * Entries a node holds before it splits. Engines keep objects of up to about 16 properties in
 * a fast layout that copies in well under a microsecond; past that, a copy costs ten times
 * more, and a write copies a leaf.
 */
const LEAF_LIMIT = 16;

/**
 * Child nodes are keyed by a letter per hex digit. Entry keys come from untrusted text (terms,
 * task ids), so some are stored behind a `~`: integer-like keys (task id '12'), which put an
 * object in a slower layout, names an empty object already answers (`constructor`,
 * `toString`, `__proto__`), which would read as entries, and keys that start with `~`.
 */
const LETTER: Readonly<Record<string, string>> = Object.fromEntries(
  [...'0123456789abcdef'].map((digit, i) => [digit, 'abcdefghijklmnop'[i]!]),
);
const digitAt = (hash: string, depth: number): string => LETTER[hash[depth] ?? '0'] ?? 'a';
const ESCAPE = '~';
const INDEX_LIKE = /^(?:0|[1-9]\d*)$/u;
const needsEscape = (key: string): boolean =>
  key.startsWith(ESCAPE) || INDEX_LIKE.test(key) || key in Object.prototype || key === '__proto__';
const stored = (key: string): string => (needsEscape(key) ? ESCAPE + key : key);
const unstored = (key: string): string => (key.startsWith(ESCAPE) ? key.slice(1) : key);
/** Hash digits available for splitting (the shortest hash used is 8 hex digits). */
const MAX_DEPTH = 8;

/**
 * The objects created by one batch of updates, which the batch may still change in place.
 * A batch ends sealed: every object it created is frozen when the reducer returns. A transient
 * batch (see `beginTransientBatch`) stays open across reducer calls instead.
 */
export interface Batch {
  readonly fresh: { has(value: object): boolean; add(value: object): unknown };
  /** What `sealBatch` freezes; undefined for a transient batch, whose values `sealTree` freezes. */
  readonly created: object[] | undefined;
}

/** Starts a batch of persistent updates. */
export const beginBatch = (): Batch => ({ fresh: new Set(), created: [] });

/**
 * Starts a transient batch: it owns every object it creates until the caller seals the value
 * holding them with `sealTree`, so a run of reducer calls whose intermediate values nobody
 * keeps copies each node once instead of once per call. Only a caller that is the sole holder
 * of every value it passes may use one (the replay of a history does); what it seals is
 * exactly what the persistent reducers would have returned.
 */
export const beginTransientBatch = (): Batch => ({ fresh: new WeakSet(), created: undefined });

/** True for a batch that stays open across reducer calls. */
export const isTransient = (batch: Batch): boolean => batch.created === undefined;

/** A new object owned by the batch. */
export const fresh = <T extends object>(batch: Batch, value: T): T => {
  batch.fresh.add(value);
  batch.created?.push(value);
  return value;
};

/** `value` itself when this batch created it, else a shallow copy the batch now owns. */
export const own = <T extends object>(batch: Batch, value: T): Mutable<T> =>
  batch.fresh.has(value) ? (value as Mutable<T>) : fresh(batch, (Array.isArray(value) ? [...value] : { ...value }) as Mutable<T>);

/**
 * Freezes what the batch created (nothing for a transient batch). Everything else a batch's
 * result holds was frozen before (it comes from a frozen state, or is a shared frozen
 * constant), so this freezes the result deeply without walking it.
 */
export const sealBatch = (batch: Batch): void => {
  if (batch.created === undefined) return;
  for (const value of batch.created) Object.freeze(value);
  batch.created.length = 0;
};

/**
 * Deeply freezes `value`, skipping frozen objects: everything a frozen object holds is frozen
 * already, so this walks only what a transient batch built since the last seal.
 */
export const sealTree = (value: unknown): void => {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const key in value) sealTree((value as Readonly<Record<string, unknown>>)[key]);
};

/** A frozen empty record, to start a collection without creating an unfrozen object. */
export const EMPTY: Readonly<Record<string, never>> = Object.freeze({});

/** The entry at `key` (whose hash is `hash`). */
export const trieGet = <T>(trie: HexTrie<T> | undefined, hash: string, key: string): T | undefined => {
  let node = trie;
  for (let depth = 0; node?.c !== undefined; depth += 1) node = node.c[digitAt(hash, depth)];
  return node?.e?.[stored(key)];
};

/** Calls `visit` for every entry. */
export const trieForEach = <T>(trie: HexTrie<T> | undefined, visit: (value: T, key: string) => void): void => {
  if (trie === undefined) return;
  const { e, c } = trie;
  if (e !== undefined) for (const key in e) visit(e[key]!, unstored(key));
  if (c !== undefined) for (const digit in c) trieForEach(c[digit], visit);
};

/** Calls `visit` for every value (cheaper than `trieForEach` when the keys are not needed). */
export const trieForEachValue = <T>(trie: HexTrie<T> | undefined, visit: (value: T) => void): void => {
  if (trie === undefined) return;
  const { e, c } = trie;
  if (e !== undefined) for (const key in e) visit(e[key]!);
  if (c !== undefined) for (const digit in c) trieForEachValue(c[digit], visit);
};

/** True when the trie holds no entry. */
export const trieIsEmpty = <T>(trie: HexTrie<T> | undefined): boolean =>
  trie === undefined || (trie.e === undefined && trie.c === undefined);

const split = <T>(batch: Batch, node: MutableTrie<T>, depth: number, hashOf: (key: string) => string): void => {
  const children: Record<string, MutableTrie<T>> = fresh(batch, {});
  const entries = node.e!;
  for (const moved in entries) {
    const digit = digitAt(hashOf(unstored(moved)), depth);
    let child = children[digit];
    if (child === undefined) children[digit] = child = fresh(batch, { e: fresh(batch, {}) });
    child.e![moved] = entries[moved]!;
  }
  delete node.e;
  node.c = children;
};

/**
 * The trie with `key` set to `value`; `hashOf` recomputes the hash of keys moved by a split.
 * Returns the same trie when the entry already holds `value`.
 */
export const trieSet = <T>(
  batch: Batch,
  trie: HexTrie<T>,
  hash: string,
  key: string,
  value: T,
  hashOf: (key: string) => string,
  depth = 0,
): HexTrie<T> => {
  if (trie.c !== undefined) {
    const digit = digitAt(hash, depth);
    const child = trie.c[digit] ?? {};
    const updated = trieSet(batch, child, hash, key, value, hashOf, depth + 1);
    if (updated === child && trie.c[digit] !== undefined) return trie;
    const node = own(batch, trie) as MutableTrie<T>;
    node.c = own(batch, node.c!);
    node.c[digit] = updated;
    return node;
  }
  const name = stored(key);
  if (trie.e !== undefined && trie.e[name] === value) return trie;
  const node = own(batch, trie) as MutableTrie<T>;
  const isNew = node.e === undefined || !(name in node.e);
  node.e = node.e === undefined ? fresh(batch, {}) : own(batch, node.e);
  node.e[name] = value;
  if (isNew && depth < MAX_DEPTH && Object.keys(node.e).length > LEAF_LIMIT) split(batch, node, depth, hashOf);
  return node;
};

/** The trie without `key` (emptied nodes pruned), or the same trie when it had no such key. */
export const trieRemove = <T>(batch: Batch, trie: HexTrie<T>, hash: string, key: string, depth = 0): HexTrie<T> => {
  if (trie.c !== undefined) {
    const digit = digitAt(hash, depth);
    const child = trie.c[digit];
    if (child === undefined) return trie;
    const updated = trieRemove(batch, child, hash, key, depth + 1);
    // A node this batch created changes in place: the same object may now be empty.
    if (updated === child && !trieIsEmpty(child)) return trie;
    const node = own(batch, trie) as MutableTrie<T>;
    node.c = own(batch, node.c!);
    if (trieIsEmpty(updated)) delete node.c[digit];
    else node.c[digit] = updated;
    if (Object.keys(node.c).length === 0) delete node.c;
    return node;
  }
  const name = stored(key);
  if (trie.e === undefined || !(name in trie.e)) return trie;
  const node = own(batch, trie) as MutableTrie<T>;
  node.e = own(batch, node.e!);
  delete node.e[name];
  if (Object.keys(node.e).length === 0) delete node.e;
  return node;
};
