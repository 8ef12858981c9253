/**
 * The one stateful binding a shell needs, in the spirit of zustand's `createStore`: the current
 * state, the log of events that made it, and listeners told once per call that changed it.
 * Both trackers are this plus their own scheduling; neither keeps a second copy of it.
 */
import { deepFreeze } from './immer.js';

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
  subscribe(listener: Listener<S>): () => void;
  /** Every logged event, oldest first (a frozen copy). */
  events(): ReadonlyArray<E>;
  /** True when someone listens (a listener is handed the previous state, which must stay as it was). */
  hasListeners(): boolean;
}

/** Creates a shell holding `initial`. */
export const createShell = <S, E>(options: ShellOptions<S, E>): Shell<S, E> => {
  let state = options.initial;
  const log: E[] = [];
  const listeners = new Set<Listener<S>>();
  const logUnchanged = options.logUnchanged === true;
  const keepLog = options.keepLog !== false;

  const commit = (events: ReadonlyArray<E>, reduce: (state: S, event: E) => S = options.reduce): S => {
    const previous = state;
    for (const event of events) {
      deepFreeze(event);
      const next = reduce(state, event);
      if (keepLog && (next !== state || logUnchanged)) log.push(event);
      state = next;
    }
    if (state === previous || listeners.size === 0) return state;
    options.share?.(previous);
    options.share?.(state);
    for (const listener of [...listeners]) {
      try {
        listener(state, previous);
      } catch {
        // A failing listener must not break the caller or the other listeners.
      }
    }
    return state;
  };

  return {
    getState: () => state,
    commit,
    subscribe: (listener) => {
      if (typeof listener !== 'function') return () => undefined;
      // A wrapper per call: subscribing one function twice gives two independent subscriptions.
      const entry: Listener<S> = (next, previous) => listener(next, previous);
      listeners.add(entry);
      return () => {
        listeners.delete(entry);
      };
    },
    events: () => Object.freeze([...log]),
    hasListeners: () => listeners.size > 0,
  };
};
