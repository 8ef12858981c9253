/**
 * In-place writes for persistent data, the Immutable.js owner pattern. A write run has an
 * owner, an explicit token that lists the nodes the run created; inside the run, those nodes
 * (and only those) are changed in place, so a run of many writes copies each node at most
 * once. Anything else, frozen or not (a store from `JSON.parse` or `structuredClone`, a value
 * of another run), is read as a value: the first write copies it. When the outermost run
 * ends, what it created is frozen, and the result is exactly the value the same writes make
 * one by one. Outside a run, writers make every write a run of its own, so data stays
 * persistent.
 *
 * Which run is open is the one piece of module state (the architecture test's list names it):
 * every write of a persistent map or vector asks it, and threading an owner through every
 * reducer and index write would cost each of them an argument for nothing. Callbacks a run
 * makes into its caller's code go through `outsideRuns`, which closes the run for the
 * callback's duration, so nothing a callback does can write into, or be written by, the run
 * that called it. This module is the one import path of the pattern.
 */
import { deepFreeze } from './freeze.js';
import { copyOf } from './sliceable.js';

/** `T` with its fields writable: what `own` hands a run to change in place. */
export type Writable<T> = { -readonly [K in keyof T]: T[K] };

/** A run's token: the nodes it created, which its writes may change in place. */
export interface Owner {
  /**
   * What the run created: a weak set for a transient owner, which lives as long as its replay
   * and must let what it drops be collected; a set for a run that ends with its call, which
   * holds its nodes in `created` anyway (a weak set's additions cost more).
   */
  readonly nodes: WeakSet<object> | Set<object>;
  /** The same nodes in order, frozen one by one when the run ends; absent for a transient owner, which freezes nothing. */
  readonly created?: object[];
  /**
   * True for a transient owner: the persistent maps it starts are native maps while it writes
   * them (nativeMap.ts), turned back into tries by `deepFreeze` when a value is handed out.
   */
  readonly native?: boolean;
}

/** The owner of the run in progress, if any. */
let current: Owner | undefined;

/**
 * A new owner for transient runs (see `transientRun`): a replay keeps one for its whole life
 * and writes in place, across runs, what its own runs built, its maps as native maps.
 */
export const createOwner = (): Owner => ({ nodes: new WeakSet(), native: true });

/** The current run's owner when it holds its maps as native maps (a transient owner), else undefined. */
export const nativeOwner = (): Owner | undefined => (current?.native === true ? current : undefined);

/** True when the current run may change `value` in place: it created it and has not shared (frozen) it. */
export const owns = (value: object): boolean =>
  current !== undefined && !Object.isFrozen(value) && current.nodes.has(value);

/** Registers a new object with the current run, which may then change it in place (and freezes it when it ends). */
export const fresh = <T extends object>(value: T): T => {
  if (current !== undefined) {
    current.nodes.add(value);
    current.created?.push(value);
  }
  return value;
};

/**
 * `value` itself when the current run created it, else a shallow copy the run now owns. For
 * the values a state keeps in a map, when a reducer changes one field by field. Whatever a run
 * stores in such a value must be frozen or owned too.
 */
export const own = <T extends object>(value: T): Writable<T> =>
  // Not `slice`: the values copied here are mostly frozen (see sliceable.ts).
  (owns(value) ? value : fresh(Array.isArray(value) ? copyOf(value as unknown[]) : { ...value })) as Writable<T>;

/**
 * Runs `fn` as one write run, under a new owner, and returns its result: every node created
 * during the run is changed in place by later writes of the same run instead of being copied
 * again, and nothing the run did not create is ever written. When the outermost run returns,
 * its result and everything the run built are deeply frozen, exactly the values the same
 * writes make one by one. Inside another run, `fn` is part of that run. `fn` must not hand out
 * intermediate values (only the result is frozen), and a failure half-way leaves the
 * intermediate values unusable, as with any transient.
 */
export const asOneRun = <T>(fn: () => T): T => {
  if (current !== undefined) return fn();
  const owner: Owner = { nodes: new Set(), created: [] };
  current = owner;
  let result: T;
  try {
    result = fn();
  } finally {
    current = undefined;
  }
  // Through the result first: what it holds that the run did not build (a caller's unfrozen
  // input, shared) is frozen too, and a frozen node the run built stops no walk below it.
  deepFreeze(result);
  for (const value of owner.created!) Object.freeze(value);
  return result;
};

/** True inside a write run. */
export const isMutating = (): boolean => current !== undefined;

/**
 * A write run whose results stay transient (Immutable.js's `asMutable`), under `owner`: what
 * it builds is not frozen when it ends, so the next transient run of the same owner writes it
 * in place again instead of copying it, and reads stay on unfrozen arrays (the engine reads a
 * frozen array's elements slower: see docs/performance.md). The maps it starts are native maps
 * (nativeMap.ts). For an owner that keeps its values to itself between runs (a replay fed a
 * history in pieces): it must `deepFreeze` a value before anyone else sees it (which also turns
 * its native maps into tries: use the value `deepFreeze` returns when it is a map itself). Inside another run, `fn` is simply part of that run.
 */
export const transientRun = <T>(owner: Owner, fn: () => T): T => {
  if (current !== undefined) return fn();
  current = owner;
  try {
    return fn();
  } finally {
    current = undefined;
  }
};

/**
 * Calls `fn` as if no run were open (a caller's callback, from inside a run): its own writes
 * copy and freeze as they would anywhere else, it cannot write what the run owns, and the run
 * carries on after it.
 */
export const outsideRuns = <T>(fn: () => T): T => {
  if (current === undefined) return fn();
  const saved = current;
  current = undefined;
  try {
    return fn();
  } finally {
    current = saved;
  }
};
