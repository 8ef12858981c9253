/**
 * Letting go of what the machine holds, so that a tracker serving many users holds only what is
 * in flight and what its runner chooses to keep. A (user, session) goes when nothing is in
 * flight for it (no extraction running or waiting, no load, no save of it, no end of stage
 * waiting on it) and the store holds what the ledger holds of it; released earlier, it waits in
 * `releasing` until then. A user goes with their last session, once nothing of theirs is in
 * flight and the store holds their profile. Each goes with a `notes/released` event, so the
 * event log still replays to the ledger.
 */
import { deepFreeze } from '../persistent/freeze.js';
import * as PMap from '../persistent/persistentMap.js';
import { applyNotesEvent } from './events.js';
import type { NotesEffect, NotesReleaseRequested, NotesTransition } from './inputs.js';
import { idOfKey, selectSessionNotes, selectUserNotes, storedKey } from './ledger.js';
import {
  givenUpField,
  isUserActive,
  type NotesState,
  type NotesUserMachine,
  selectUserMachine,
  withLedger,
  withoutUserMachine,
  withUserMachine,
} from './machine.js';
import { type GlobalFacts, isNotesId, type NotesEvent } from './model.js';
import { hasUnsaved } from './unsaved.js';

/** True when `event` changes the notes of `session`. */
const touches = (event: NotesEvent, session: string): boolean =>
  (event.type === 'notes/extracted' || event.type === 'notes/sessionConsolidated') && event.session === session;

/**
 * Something for (user, session) is in flight, or an end of stage waits that may merge it: it
 * settles later, and the session may go then.
 */
const inFlight = (machine: NotesUserMachine, session: string): boolean => {
  const key = storedKey(session);
  const { storage } = machine;
  return (
    machine.busy.includes(key) ||
    machine.leased.includes(key) ||
    storage.loading.includes(key) ||
    storage.saving?.sessions.includes(key) === true ||
    storage.unsaved.some((event) => touches(event, session)) ||
    (storage.overflow !== undefined && PMap.has(storage.overflow.sessions, key)) ||
    // An end of stage without a session may merge any session of the user: each stays until it has.
    machine.stages.some(
      (stage) =>
        stage.session === undefined || stage.session === session || stage.waitFor.some(([waited]) => waited === key),
    )
  );
};

/** The store holds what the ledger holds of (user, session): nothing, or a record it loaded or saved. */
const isStored = (state: NotesState, machine: NotesUserMachine, user: string, session: string): boolean =>
  selectSessionNotes(state.ledger, user, session) === undefined ||
  (PMap.get(machine.storage.sessions, storedKey(session)) ?? 0) > 0;

/** The state without (user, session), and the event that records it. */
const dropSession = (state: NotesState, user: string, session: string): NotesTransition => {
  const machine = selectUserMachine(state, user);
  const key = storedKey(session);
  const { givenUp, ...storage } = machine.storage;
  const event: NotesEvent = { type: 'notes/released', user, session };
  const ledger = applyNotesEvent(state.ledger, event);
  const kept = withUserMachine(withLedger(state, ledger), user, {
    ...machine,
    conversations: PMap.remove(machine.conversations, key),
    storage: {
      ...storage,
      sessions: PMap.remove(storage.sessions, key),
      merged: PMap.remove(storage.merged, key),
      // A session let go of takes no late load answer (`loadAnswer.ts`).
      ...givenUpField((givenUp ?? []).filter((other) => other !== key)),
    },
    releasing: machine.releasing.filter((other) => other !== key),
  });
  return [kept, ledger === state.ledger ? [] : [{ type: 'record', event }]];
};

/** An empty profile that counts no session: what a rebuild leaves where the store holds none (`loadAnswer.ts`). */
const isBlank = (profile: GlobalFacts): boolean => profile.facts.length === 0 && profile.sessionCount === 0;

/** Nothing of `user` is left but what the store holds: no session, nothing in flight, the profile stored. */
const isEmptied = (state: NotesState, machine: NotesUserMachine, user: string): boolean => {
  const notes = selectUserNotes(state.ledger, user);
  return (
    PMap.size(machine.conversations) === 0 &&
    PMap.size(machine.storage.sessions) === 0 &&
    PMap.size(notes?.sessions ?? PMap.empty) === 0 &&
    machine.releasing.length === 0 &&
    !hasUnsaved(machine.storage) &&
    !isUserActive(machine) &&
    machine.rewrite.started === machine.rewrite.settled &&
    (notes?.profile === undefined || (machine.storage.profile ?? 0) > 0 || isBlank(notes.profile))
  );
};

/**
 * Drops the released sessions of `user` that nothing is in flight for any more, then the user
 * if nothing of theirs is left. Cheap when there is nothing to drop: what every step of a user
 * ends with.
 */
export const tidyUser = (state: NotesState, user: string): NotesTransition => {
  const found = PMap.get(state.users, user);
  if (found !== undefined && PMap.size(found.conversations) > 0 && found.releasing.length === 0) return [state, []];
  let current = state;
  const effects: NotesEffect[] = [];
  for (const key of found?.releasing ?? []) {
    const machine = selectUserMachine(current, user);
    const session = machine.releasing.includes(key) ? idOfKey(key) : undefined;
    if (session === undefined || inFlight(machine, session) || !isStored(current, machine, user, session)) continue;
    const [next, recorded] = dropSession(current, user, session);
    current = next;
    effects.push(...recorded);
  }
  const machine = selectUserMachine(current, user);
  if (
    !isEmptied(current, machine, user) ||
    (found === undefined && selectUserNotes(current.ledger, user) === undefined)
  )
    return [current, effects];
  const event: NotesEvent = { type: 'notes/released', user };
  const ledger = applyNotesEvent(current.ledger, event);
  return [
    withoutUserMachine(withLedger(current, ledger), user),
    ledger === current.ledger ? effects : [...effects, { type: 'record', event }],
  ];
};

/**
 * A release asked for: drops (user, session) now when nothing is in flight for it and the store
 * holds it, keeps it in `releasing` while something is in flight, and otherwise (what only this
 * tracker holds, as an `initial` ledger's notes the store never saw) keeps it.
 */
export const onReleaseRequested = (state: NotesState, input: NotesReleaseRequested): NotesTransition => {
  const { user, session } = input;
  if (!isNotesId(user) || !isNotesId(session)) return [state, []];
  const machine = selectUserMachine(state, user);
  const key = storedKey(session);
  if (inFlight(machine, session)) {
    if (machine.releasing.includes(key)) return [state, []];
    return [withUserMachine(state, user, { ...machine, releasing: [...machine.releasing, key] }), []];
  }
  if (!isStored(state, machine, user, session)) return [state, []];
  const [dropped, effects] = dropSession(state, user, session);
  const [tidied, more] = tidyUser(dropped, user);
  return [tidied, [...effects, ...more]];
};

/**
 * `state` with (user, session) no longer waiting to be released, nor to be let go of by the end
 * of stage that loaded it: it is in use again.
 */
export const keepSession = (state: NotesState, user: string, session: string): NotesState => {
  const machine = PMap.get(state.users, user);
  const key = storedKey(session);
  if (machine === undefined) return state;
  const releasing = machine.releasing.includes(key);
  const fetched = machine.stages.some((stage) => stage.fetched?.includes(key) === true);
  if (!releasing && !fetched) return state;
  return withUserMachine(state, user, {
    ...machine,
    releasing: releasing ? machine.releasing.filter((other) => other !== key) : machine.releasing,
    stages: fetched
      ? deepFreeze(
          machine.stages.map((stage) =>
            stage.fetched?.includes(key) === true
              ? { ...stage, fetched: stage.fetched.filter((other) => other !== key) }
              : stage,
          ),
        )
      : machine.stages,
  });
};

/** `state` with the sessions (stored keys) of `user` let go of once nothing is in flight for them (`tidyUser`). */
export const releaseLater = (state: NotesState, user: string, keys: ReadonlyArray<string>): NotesState => {
  const machine = selectUserMachine(state, user);
  const added = keys.filter((key) => !machine.releasing.includes(key));
  return added.length === 0
    ? state
    : withUserMachine(state, user, { ...machine, releasing: [...machine.releasing, ...added] });
};

/** What `state` holds: users, (user, session) slots, users with something in flight. */
export const selectRetained = (state: NotesState): { users: number; sessions: number; inFlight: number } => {
  const users = new Set<string>();
  const slots = new Set<string>();
  const add = (user: string, key: string): void => {
    slots.add(JSON.stringify([user, key]));
  };
  PMap.forEach(state.ledger.users, (notes, user) => {
    users.add(user);
    PMap.forEach(notes.sessions, (_notes, session) => add(user, storedKey(session)));
  });
  PMap.forEach(state.users, (machine, user) => {
    users.add(user);
    PMap.forEach(machine.conversations, (_conversation, key) => add(user, key));
    PMap.forEach(machine.storage.sessions, (_version, key) => add(user, key));
  });
  return { users: users.size, sessions: slots.size, inFlight: PMap.size(state.active) };
};
