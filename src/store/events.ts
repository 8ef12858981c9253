import type { SessionFact } from '../fact.js';
import { addFactsIn } from './addFacts.js';
import { compactIn } from './compact.js';
import { invalidateIn } from './invalidate.js';
import { recordTaskPromptIn } from './recordTaskPrompt.js';
import { emptyFactStore, type FactStore } from './state.js';
import type { Batch } from './trie.js';

/** Facts were asserted (`addFacts`). */
export interface FactsAddedEvent {
  readonly type: 'facts/added';
  readonly facts: ReadonlyArray<SessionFact>;
}

/** A (subject, relation) pair was invalidated at `at` (`invalidate`). */
export interface FactsInvalidatedEvent {
  readonly type: 'facts/invalidated';
  readonly subject: string;
  readonly relation: string;
  readonly at: number;
}

/** The store was compacted to `maxFacts` valid facts (`compact`). */
export interface StoreCompactedEvent {
  readonly type: 'store/compacted';
  readonly maxFacts: number;
}

/** A task's prompt was recorded for ranking context (`recordTaskPrompt`). */
export interface PromptRecordedEvent {
  readonly type: 'prompt/recorded';
  readonly taskId: string;
  readonly taskPrompt: string;
  readonly at: number;
}

/** Every state change, as serializable data: replaying the events rebuilds the state. */
export type TrackerEvent = FactsAddedEvent | FactsInvalidatedEvent | StoreCompactedEvent | PromptRecordedEvent;

/** Applies one event with its reducer; an unknown event leaves the store as it is. */
export const applyEvent = (store: FactStore, event: TrackerEvent): FactStore => applyEventIn(store, event);

/** `applyEvent`, writing in `batch` when given (see `beginTransientBatch`). */
export const applyEventIn = (store: FactStore, event: TrackerEvent, batch?: Batch): FactStore => {
  if (typeof event !== 'object' || event === null) return store;
  switch (event.type) {
    case 'facts/added':
      return addFactsIn(store, event.facts, batch);
    case 'facts/invalidated':
      return invalidateIn(store, event.subject, event.relation, event.at, batch);
    case 'store/compacted':
      return compactIn(store, event.maxFacts, batch).store;
    case 'prompt/recorded':
      return recordTaskPromptIn(store, event.taskId, event.taskPrompt, event.at, batch);
    default:
      return store;
  }
};

/** Folds `events` over `from` (default: an empty store). */
export const replay = (events: ReadonlyArray<TrackerEvent>, from: FactStore = emptyFactStore()): FactStore =>
  events.reduce(applyEvent, from);
