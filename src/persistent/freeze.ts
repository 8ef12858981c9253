/**
 * Frozen values, the one way: `deepFreeze` for a plain value built outside a producer (a run's
 * result, an event, a document just parsed), and `produce` from the package's one immer
 * instance for a small record updated by a recipe. A private instance keeps autoFreeze on
 * whatever the host application does with the global one: frozen snapshots are what prove
 * callers cannot mutate state behind the reducers' back.
 */
import { Immer } from 'immer';
import { NativeMap, sealedTrie } from './nativeMap.js';

/** The package's immer instance: every immer user imports `produce` (or the instance) from here. */
export const immer = new Immer({ autoFreeze: true });

/** immer's `produce`, from the package's instance. */
export const produce: Immer['produce'] = immer.produce.bind(immer);

/**
 * Adds the unfrozen objects among an array's elements to `pending`, each native map among them
 * replaced by its trie first (a function of its own: the engine optimizes it early).
 */
const pushArrayChildren = (node: unknown[], pending: object[]): void => {
  for (let i = 0; i < node.length; i += 1) {
    const child = node[i];
    if (typeof child === 'object' && child !== null && !Object.isFrozen(child))
      pending.push(child instanceof NativeMap ? (node[i] = sealedTrie(child)) : child);
  }
};

/** Adds the unfrozen objects among an object's property values to `pending` (see `pushArrayChildren`). */
const pushObjectChildren = (node: Record<string, unknown>, pending: object[]): void => {
  for (const key in node) {
    const child = node[key];
    if (typeof child === 'object' && child !== null && !Object.isFrozen(child))
      pending.push(child instanceof NativeMap ? (node[key] = sealedTrie(child)) : child);
  }
};

/**
 * Deeply freezes a value (plain objects and arrays; a typed array, which cannot be frozen, is
 * left as it is) and returns it. Frozen subtrees are skipped: what a frozen state holds is
 * frozen already, so sealing a state after a write walks only what the write built. Inside a
 * write run, freezing a value shares it: later writes of the run copy its nodes instead of
 * changing them in place (see owner.ts). A persistent map a transient run held as a native map
 * (nativeMap.ts) is replaced, in the object or array that holds it, by its trie, so what is
 * handed out is plain data; when `value` itself is one, its trie is returned instead. A loop
 * with a stack of its own, not recursion: a document just parsed may be deep and wide.
 */
export const deepFreeze = <T>(value: T): T => {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  const root = (value instanceof NativeMap ? sealedTrie(value) : value) as object;
  const pending: object[] = [root];
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    if (ArrayBuffer.isView(node) || Object.isFrozen(node)) continue;
    // The children first: a native map is replaced in its holder before the holder is frozen.
    if (Array.isArray(node)) pushArrayChildren(node, pending);
    else pushObjectChildren(node as Record<string, unknown>, pending);
    Object.freeze(node);
  }
  return root as T;
};

/**
 * `value` if it is frozen (the library's own, as every value a reducer returns is), else a
 * deeply frozen copy: a value the caller built or parsed (`JSON.parse`) stays theirs, never
 * frozen in place by a reducer whose result shares its parts.
 */
export const frozenCopy = <T>(value: T): T => (Object.isFrozen(value) ? value : deepFreeze(structuredClone(value)));
