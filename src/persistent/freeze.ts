/**
 * Frozen values, the one way: `deepFreeze` for a plain value built outside a producer (a run's
 * result, an event, a document just parsed), and `produce` from the package's one immer
 * instance for a small record updated by a recipe. A private instance keeps autoFreeze on
 * whatever the host application does with the global one: frozen snapshots are what prove
 * callers cannot mutate state behind the reducers' back.
 */
import { Immer } from 'immer';

/** The package's immer instance: every immer user imports `produce` (or the instance) from here. */
export const immer = new Immer({ autoFreeze: true });

/** immer's `produce`, from the package's instance. */
export const produce: Immer['produce'] = immer.produce.bind(immer);

/** Adds the objects among an array's elements to `pending` (a function of its own: the engine optimizes it early). */
const pushArrayChildren = (node: ReadonlyArray<unknown>, pending: object[]): void => {
  for (let i = 0; i < node.length; i += 1) {
    const child = node[i];
    if (typeof child === 'object' && child !== null && !Object.isFrozen(child)) pending.push(child);
  }
};

/** Adds the objects among an object's property values to `pending`. */
const pushObjectChildren = (node: Record<string, unknown>, pending: object[]): void => {
  for (const key in node) {
    const child = node[key];
    if (typeof child === 'object' && child !== null && !Object.isFrozen(child)) pending.push(child);
  }
};

/**
 * Deeply freezes a value (plain objects and arrays; a typed array, which cannot be frozen, is
 * left as it is) and returns it. Frozen subtrees are skipped: what a frozen state holds is
 * frozen already, so sealing a state after a write walks only what the write built. Inside a
 * write run, freezing a value shares it: later writes of the run copy its nodes instead of
 * changing them in place (see owner.ts). A loop with a stack of its own, not recursion: a
 * document just parsed may be deep and wide.
 */
export const deepFreeze = <T>(value: T): T => {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  const pending: object[] = [value];
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    if (ArrayBuffer.isView(node)) continue;
    Object.freeze(node);
    if (Array.isArray(node)) pushArrayChildren(node, pending);
    else pushObjectChildren(node as Record<string, unknown>, pending);
  }
  return value;
};
