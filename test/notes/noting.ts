/** A model for tracker tests that notes each user message as a fact, keeping the facts its prompt shows, and a tracker on it. */
import { vi } from 'vitest';
import type { CompleteFn } from '../../src/notes/port.js';
import type { NotesStore } from '../../src/notes/store.js';
import { createNotableFactsTracker } from '../../src/notes/tracker.js';
import type {
  NotableFactsTracker,
  NotesTrackerFailure,
  NotableFactsTrackerOptions,
} from '../../src/notes/trackerTypes.js';

export const noting: CompleteFn = async (prompt) => {
  const shown = [...prompt.matchAll(/"fact":"([^"]*)"/gu)].map((match) => match[1]!);
  const latest = /Latest user message:\nUser: (.*)/u.exec(prompt)?.[1] ?? '';
  const facts = [...new Set([...shown, `Said ${latest}`])];
  return JSON.stringify({ notableFacts: facts.map((fact) => ({ category: 'History', fact })) });
};

/** A tracker on `store` with the noting model and `options`, and the failures it reports to `onError`. */
export const notingTracker = (
  store: NotesStore,
  options: Omit<NotableFactsTrackerOptions, 'complete' | 'store' | 'onError'> = {},
): { readonly tracker: NotableFactsTracker; readonly errors: NotesTrackerFailure[] } => {
  const errors: NotesTrackerFailure[] = [];
  const tracker = createNotableFactsTracker({
    complete: noting,
    store,
    ...options,
    onError: (problem) => errors.push(problem),
  });
  return { tracker, errors };
};

/** Closes `tracker` under fake timers, running the timers its close waits on. */
export const closeUnderFakeTimers = async (tracker: NotableFactsTracker): Promise<void> => {
  const closing = tracker.close();
  await vi.runAllTimersAsync();
  await closing;
};
