/**
 * The one stateful binding a shell needs, in the spirit of zustand's `createStore`: the current
 * state, the log of events that made it, and listeners told once per call that changed it.
 * Both trackers are this plus their own scheduling; neither keeps a second copy of it.
 */
import { deepFreeze } from '../persistent/freeze.js';
import { outsideRuns } from '../persistent/owner.js';

/** Called after a commit changed the state. */
export type Listener<S> = (next: S, previous: S) => void;

/** Options of `createShell`. */
export interface ShellOptions<S, E> {
  readonly initial: S;
  /** Applies one event (a pure reducer: the same state back when nothing changes). */
  readonly reduce: (state: S, event: E) => S;
  /** Keep events that changed nothing in the log too (failures worth recording), default false. */
  readonly logUnchanged?: boolean;
  /** Keep an event log at all (default true): a caller that never reads it saves memory that grows with every call. */
  readonly keepLog?: boolean;
  /** Called on the states a listener is about to receive (to make them safe to keep). */
  readonly share?: (state: S) => void;
  /**
   * The most events the log keeps (default: all of them). Past it the oldest are folded into
   * the log's snapshot with `reduce`, so memory stays bounded and the log still rebuilds the state.
   */
  readonly maxEvents?: number;
}

/** The event log as a snapshot and the events since it: folding `events` over `snapshot` gives the state. */
export interface EventLog<S, E> {
  readonly snapshot: S;
  readonly events: ReadonlyArray<E>;
}

/** A state, its event log and its listeners. */
export interface Shell<S, E> {
  getState(): S;
  /**
   * Applies `events` in order (with `reduce`, default the shell's reducer), logs them, and
   * notifies the listeners once when the state changed. Events are frozen before they are
   * applied, so what a reducer keeps of one cannot change behind its back.
   */
  commit(events: ReadonlyArray<E>, reduce?: (state: S, event: E) => S): S;
  /**
   * Takes `next`, which the caller computed from the current state (a transition that also
   * returned effects to run), logs `events` (what it applied, for replay) and notifies the
   * listeners once when the state changed.
   */
  update(next: S, events: ReadonlyArray<E>): S;
  subscribe(listener: Listener<S>): () => void;
  /** The logged events since the log's snapshot (all of them unless `maxEvents` was reached), oldest first (a frozen copy). */
  events(): ReadonlyArray<E>;
  /** The log as a snapshot plus the events since it. */
  eventLog(): EventLog<S, E>;
  /** True when someone listens (a listener is handed the previous state, which must stay as it was). */
  hasListeners(): boolean;
}

/** Creates a shell holding `initial`. */
export const createShell = <S, E>(options: ShellOptions<S, E>): Shell<S, E> => {
  let state = options.initial;
  /** The events since `snapshot` are `log[start]` onwards (dropped ones are sliced off in bulk, not one by one). */
  let log: E[] = [];
  let start = 0;
  let snapshot = options.initial;
  const listeners = new Set<Listener<S>>();
  const logUnchanged = options.logUnchanged === true;
  const keepLog = options.keepLog !== false;
  const maxEvents =
    typeof options.maxEvents === 'number' && options.maxEvents >= 0 ? Math.floor(options.maxEvents) : Infinity;

  const record = (event: E): void => {
    if (!keepLog) return;
    log.push(event);
    if (log.length - start <= maxEvents) return;
    snapshot = options.reduce(snapshot, log[start]!);
    start += 1;
    if (start >= 1024 && 2 * start >= log.length) {
      log = log.slice(start);
      start = 0;
    }
  };

  const notify = (previous: S): S => {
    if (state === previous || listeners.size === 0) return state;
    options.share?.(previous);
    options.share?.(state);
    for (const listener of [...listeners]) {
      try {
        // A listener is the caller's code: it runs outside any write run the commit is part of.
        outsideRuns(() => listener(state, previous));
      } catch {
        // A failing listener must not break the caller or the other listeners.
      }
    }
    return state;
  };

  const commit = (events: ReadonlyArray<E>, reduce: (state: S, event: E) => S = options.reduce): S => {
    const previous = state;
    for (const event of events) {
      deepFreeze(event);
      const next = reduce(state, event);
      if (next !== state || logUnchanged) record(event);
      state = next;
    }
    return notify(previous);
  };

  const update = (next: S, events: ReadonlyArray<E>): S => {
    const previous = state;
    for (const event of events) record(deepFreeze(event));
    state = next;
    return notify(previous);
  };

  const tail = (): ReadonlyArray<E> => Object.freeze(log.slice(start));

  return {
    getState: () => state,
    commit,
    update,
    subscribe: (listener) => {
      if (typeof listener !== 'function') return () => undefined;
      // A wrapper per call: subscribing one function twice gives two independent subscriptions.
      const entry: Listener<S> = (next, previous) => listener(next, previous);
      listeners.add(entry);
      return () => {
        listeners.delete(entry);
      };
    },
    events: tail,
    // Without a log, everything is folded into the state itself.
    eventLog: () => (keepLog ? { snapshot, events: tail() } : { snapshot: state, events: [] }),
    hasListeners: () => listeners.size > 0,
  };
};
