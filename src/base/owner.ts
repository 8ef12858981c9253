/**
 * In-place writes for persistent data, the Immutable.js owner pattern. Inside a
 * `withMutations` run, the objects the run created (the ones not frozen yet) are changed in
 * place, so a run of many writes copies each node at most once; when the outermost run ends,
 * what it created is frozen, and the result is exactly the value the same writes make one by
 * one. Outside a run, writers make every write a run of its own, so data stays persistent.
 */

/** How deep `withMutations` runs are nested (0: none, every write copies and freezes). */
let runs = 0;
/** The objects the current run created, frozen one by one when it ends (no walk over what they hold). */
let created: object[] = [];
/** True while the outermost run is a transient one (see `transientRun`): it freezes nothing, so it lists nothing. */
let transient = false;

/** True when the current run may change `value` in place: it created it. */
export const owns = (value: object): boolean => runs > 0 && !Object.isFrozen(value);

/** Registers a new object with the current run, which freezes it when it ends. */
export const fresh = <T extends object>(value: T): T => {
  if (runs > 0 && !transient) created.push(value);
  return value;
};

/**
 * `value` itself when the current run created it, else a shallow copy the run now owns. For
 * the values a state keeps in a map, when a reducer changes one field by field. Whatever a run
 * stores in such a value must be frozen or owned too.
 */
export const own = <T extends object>(value: T): { -readonly [K in keyof T]: T[K] } =>
  (owns(value) ? value : fresh(Array.isArray(value) ? value.slice() : { ...value })) as {
    -readonly [K in keyof T]: T[K];
  };

/**
 * Deeply freezes what a run built (everything else in a sealed state is frozen already, so
 * frozen subtrees are skipped). Inside a run, sealing a value shares it: later writes of the
 * run copy its nodes instead of changing them in place.
 */
export const seal = (value: unknown): void => {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
  Object.freeze(value);
  if (Array.isArray(value)) for (let i = 0; i < value.length; i += 1) seal(value[i]);
  else for (const key in value) seal((value as Record<string, unknown>)[key]);
};

/**
 * Runs `fn` over `state` with in-place writes: every node created during the run is changed in
 * place by later writes of the same run instead of being copied again. When the outermost run
 * returns, its result is deeply frozen, exactly the value the same writes make one by one.
 * `fn` must not keep or hand out intermediate values (only the result is sealed), and a
 * failure half-way leaves the intermediate values unusable, as with any transient.
 */
export const withMutations = <S>(state: S, fn: (state: S) => S): S => {
  runs += 1;
  let result: S;
  try {
    result = fn(state);
  } finally {
    runs -= 1;
  }
  if (runs === 0) {
    const built = created;
    created = [];
    for (const value of built) Object.freeze(value);
    // What the run built outside this module (a new root, say) is reached from the result.
    seal(result);
  }
  return result;
};

/** True inside a `withMutations` run. */
export const isMutating = (): boolean => runs > 0;

/**
 * A write run whose results stay transient (Immutable.js's `asMutable`): what it builds is not
 * frozen when it ends, so the next transient run over the same values writes in place again
 * instead of copying what this one built, and reads stay on unfrozen arrays (the engine reads a
 * frozen array's elements about a third slower). Nothing it creates is listed either, so
 * what it drops is collected as it goes. For an owner that keeps its values to itself between
 * runs (a replay fed a history in pieces): it must `seal` a value before anyone else sees it.
 * Inside another run, `fn` is simply part of that run.
 */
export const transientRun = <T>(fn: () => T): T => {
  if (runs > 0) return fn();
  runs = 1;
  transient = true;
  try {
    return fn();
  } finally {
    runs = 0;
    transient = false;
  }
};

/**
 * Calls `fn` as if no run were open (a caller's callback, from inside a run): its own writes
 * copy and freeze as they would anywhere else, and the run carries on after it.
 */
export const outsideRuns = <T>(fn: () => T): T => {
  if (runs === 0) return fn();
  const saved = { runs, created, transient };
  runs = 0;
  created = [];
  transient = false;
  try {
    return fn();
  } finally {
    ({ runs, created, transient } = saved);
  }
};
