import { refuseUnlessDenseArray } from '../../base/record.js';
import { refuseArgument } from '../../base/describe.js';
import type { SessionFact } from '../fact.js';
import { addFacts } from './addFacts.js';
import { compact } from './compact.js';
import { invalidate } from './invalidate.js';
import { recordTaskPrompt } from './recordTaskPrompt.js';
import { asOneRun } from '../../persistent/owner.js';
import { emptyFactStore, type FactStore } from './state.js';
import { checkedFactStore, handedBack } from './storeShape.js';

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

/**
 * `event`, refused with a TypeError naming it (`name`) when it is no object (null from an unset
 * variable): a programmer's mistake, said plainly rather than read as an event that changes nothing.
 */
const checkedEvent = (event: TrackerEvent, name: string): TrackerEvent => {
  if (typeof event !== 'object' || event === null) refuseArgument(name, event, 'an object (a tracker event)');
  return event;
};

const applyChecked = (store: FactStore, event: TrackerEvent): FactStore => {
  switch (event.type) {
    case 'facts/added':
      return addFacts(store, event.facts);
    case 'facts/invalidated':
      return invalidate(store, event.subject, event.relation, event.at);
    case 'store/compacted':
      return compact(store, event.maxFacts);
    case 'prompt/recorded':
      return recordTaskPrompt(store, event.taskId, event.taskPrompt, event.at);
    default:
      return store;
  }
};

/**
 * Applies one event with its reducer; an event of an unknown type leaves the store as it is.
 * An event that is no object (null), or a store that is none, is refused with a TypeError.
 */
export const applyEvent = (store: FactStore, event: TrackerEvent): FactStore =>
  // The store is checked here too: an event of an unknown type reaches no reducer that would.
  handedBack(store, applyChecked(checkedFactStore(store), checkedEvent(event, 'the event')));

/** Folds `events` over `from` (default: an empty store), writing in place between them. */
export const replay = (events: ReadonlyArray<TrackerEvent>, from: FactStore = emptyFactStore()): FactStore => {
  refuseUnlessDenseArray('events', events, 'an array of tracker events');
  // Checked even when there is no event to apply: a store that is none is never given back as one.
  checkedFactStore(from);
  return asOneRun(() =>
    events.reduce((store, event, i) => applyChecked(store, checkedEvent(event, `events[${i}]`)), from),
  );
};
