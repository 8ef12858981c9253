/**
 * One step of a runner of the notes machine: an input, and the store answers that come at once,
 * folded through `notesTransition`. The live tracker and the log replay both step this way, so
 * they cannot differ in how an input and its store traffic become state.
 */
import { outsideRuns, asOneRun } from '../persistent/owner.js';
import type { NotesEffect, NotesInput } from './inputs.js';
import type { NotesState } from './machine.js';
import type { NotesEvent } from './model.js';
import type { NotesStore } from './store.js';
import { callStore, isPending, type StoreEffect } from './storeCall.js';
import { notesTransition } from './transition.js';

/** What a step did: the state after it, the events to log, the effects left to carry out, the inputs it ran. */
export interface MachineStep {
  readonly state: NotesState;
  /** The events of the `record` effects, in order. */
  readonly events: ReadonlyArray<NotesEvent>;
  /** Every effect but `record`, `load`, `save`, `lease` and `listUnmerged` (the step carried those out), in order. */
  readonly effects: ReadonlyArray<NotesEffect>;
  /** The effects of `first` alone, all of them. */
  readonly first: ReadonlyArray<NotesEffect>;
  /** `first`, then the store answers that came at once. */
  readonly inputs: ReadonlyArray<NotesInput>;
}

/**
 * Runs `first` from `state`, with the store calls it leads to (loads, saves, lease calls, lists
 * of unmerged sessions): an answer the store gives at once is run in the same step, one it
 * gives later goes to `later`, with the call it answers.
 */
export const stepMachine = (
  state: NotesState,
  first: NotesInput,
  store: NotesStore,
  later: (answer: PromiseLike<NotesInput>, call: StoreEffect) => void,
): MachineStep => {
  const queue: NotesInput[] = [first];
  const inputs: NotesInput[] = [];
  const events: NotesEvent[] = [];
  const effects: NotesEffect[] = [];
  let effectsOfFirst: ReadonlyArray<NotesEffect> | undefined;
  // One write run for the whole step: the maps of users it changes are copied once, not at each
  // transition, and the state it returns is sealed. The states in between are never handed out.
  const after = asOneRun(() => {
    let current = state;
    for (let input = queue.shift(); input !== undefined; input = queue.shift()) {
      const [next, asked] = notesTransition(current, input);
      current = next;
      effectsOfFirst ??= asked;
      inputs.push(input);
      for (const effect of asked) {
        if (effect.type === 'record') events.push(effect.event);
        else if (
          effect.type === 'load' ||
          effect.type === 'save' ||
          effect.type === 'lease' ||
          effect.type === 'listUnmerged'
        ) {
          // The store is someone else's code: it runs outside the write run, as a listener would.
          const answer = outsideRuns(() => callStore(store, effect));
          if (isPending(answer)) later(answer, effect);
          else queue.push(answer);
        } else effects.push(effect);
      }
    }
    return current;
  });
  return { state: after, events, effects, first: effectsOfFirst ?? [], inputs };
};
