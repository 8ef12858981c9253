/**
 * The store's answer to a save, pure: the confirmed changes leave `unsaved`, a `fenced` save's
 * work is dropped, and a conflict reloads the records and saves again. A store that answers
 * conflict every time (a custom adapter, or records another process keeps writing) is not
 * called in a loop: after the first conflict the records load again at once, after each later
 * one the machine waits first (a `backOff` effect, longer each time), and after
 * `MAX_SAVE_CONFLICTS` in a row the save is given up as a failed one is, its changes kept for
 * the next save.
 */
import * as E from 'fp-ts/lib/Either.js';
import * as PMap from '../persistent/persistentMap.js';
import { andThen, type NotesEffect, type NotesSaved, type NotesTransition, type StoreCallFailure } from './inputs.js';
import { idOfKey, storedKey } from './ledger.js';
import { type NotesState, type NotesUserStorage, selectUserStorage, withLedger, withStorage } from './machine.js';
import { applyNotesEvent } from './events.js';
import type { NotesEvent } from './model.js';
import { reported } from './recordRead.js';
import { answerLanded } from './stageAnswers.js';
import { recounted, savedAlone } from './isolation.js';
import { onRefused } from './refusedSave.js';
import { attemptEnded, reload, saveIfNeeded } from './storage.js';
import { storeFailure } from './storeAnswer.js';
import { selectFencedSessions, withFencesOfUnsaved, withoutOverflow } from './unsaved.js';

/**
 * The conflicts in a row after which a save is given up for now: a store that keeps answering
 * conflict gets this many saves and one load fewer, then none until the next change (or, with
 * leases, the holder's next try), whatever the time.
 */
export const MAX_SAVE_CONFLICTS = 6;

/** Loads the records (stored keys) of `user` again, those not loading already: the save follows the loads. */
const loadAgain = (state: NotesState, user: string, keys: ReadonlyArray<string>): NotesTransition => {
  const storage = selectUserStorage(state, user);
  return [
    withStorage(state, user, { ...storage, loading: [...new Set([...storage.loading, ...keys])] }),
    keys
      .filter((key) => !storage.loading.includes(key))
      .map((key): NotesEffect => ({ type: 'load', user, session: idOfKey(key) })),
  ];
};

/**
 * A save of `user` met a conflict: the records it wrote (`again`) load again, at once after the
 * first conflict of the attempt, after a wait after each later one; past `MAX_SAVE_CONFLICTS`
 * the attempt is given up and reported as `conflict`, its changes waiting for the next save.
 */
const onConflict = (
  state: NotesState,
  user: string,
  idle: NotesUserStorage,
  again: ReadonlyArray<string>,
): NotesTransition => {
  const conflicts = (idle.conflicts ?? 0) + 1;
  if (conflicts >= MAX_SAVE_CONFLICTS) {
    const given = storeFailure(
      'conflict',
      `the save of the notes of ${JSON.stringify(user)} met a conflict ${conflicts} times in a row (another writer keeps saving them): given up for now, its ${idle.unsaved.length} change${idle.unsaved.length === 1 ? '' : 's'} wait in this tracker's memory for the next save`,
    );
    return [withStorage(state, user, { ...attemptEnded(idle), settledChanges: idle.changes }), [reported(user, given)]];
  }
  const counted: NotesUserStorage = { ...idle, conflicts };
  return conflicts === 1
    ? loadAgain(withStorage(state, user, counted), user, again)
    : [
        withStorage(state, user, { ...counted, backingOff: again }),
        [{ type: 'backOff', user, retries: conflicts - 1 }],
      ];
};

/**
 * A record saved alone (`isolation.ts`) whose save failed, without leases: tried again after a
 * wait, as after a conflict (the records load again, then the save), up to `MAX_SAVE_CONFLICTS`
 * tries in a row, then left for the next change. A merge is half in the store until the last of
 * its records is saved, so that is not left to a change that may never come (a lease holder
 * tries its failed saves again itself).
 */
const retryAlone = (
  state: NotesState,
  user: string,
  idle: NotesUserStorage,
  again: ReadonlyArray<string>,
  failed: StoreCallFailure,
): NotesTransition => {
  const tries = (idle.conflicts ?? 0) + 1;
  if (tries >= MAX_SAVE_CONFLICTS)
    return [
      withStorage(state, user, { ...attemptEnded(idle), settledChanges: idle.changes }),
      [reported(user, failed)],
    ];
  return [
    withStorage(state, user, { ...idle, conflicts: tries, backingOff: again }),
    [reported(user, failed), { type: 'backOff', user, retries: tries }],
  ];
};

/** The wait after a conflict is over: the records load again, and the save follows. */
export const onBackedOff = (state: NotesState, user: string): NotesTransition => {
  const storage = selectUserStorage(state, user);
  if (storage.backingOff === undefined) return [state, []];
  const { backingOff: again, ...rest } = storage;
  return loadAgain(withStorage(state, user, rest), user, again);
};

/**
 * Takes a save's answer: confirmed changes leave `unsaved`, the ends of stage they stored are
 * answered, and the next save starts if more came meanwhile; a conflict loads the records the
 * save wrote again (the save follows the load; see `onConflict`); any other failure is
 * reported, and its changes wait for the next save.
 */
export const applySaveAnswer = (state: NotesState, input: NotesSaved): NotesTransition => {
  const { user, outcome } = input;
  const storage = selectUserStorage(state, user);
  const { saving, ...idle } = storage;
  if (saving === undefined) return [state, []];
  if (E.isRight(outcome)) {
    const written = outcome.right;
    const stored: NotesUserStorage = {
      ...attemptEnded(idle),
      sessions: written.sessions.reduce(
        (versions, { session, version }) => PMap.set(versions, storedKey(session), version),
        storage.sessions,
      ),
      merged: written.sessions.reduce(
        (marks, { session }) => PMap.set(marks, storedKey(session), saving.merged.includes(storedKey(session))),
        storage.merged,
      ),
      ...(written.profile === undefined ? {} : { profile: written.profile }),
    };
    // A record saved alone confirms no event by itself: the isolation does once each is saved.
    if (saving.alone !== undefined)
      return saveIfNeeded(withStorage(state, user, savedAlone(stored, storage, saving)), user);
    const unsaved = storage.unsaved.slice(saving.count);
    const next: NotesUserStorage = { ...stored, unsaved, settledChanges: storage.changes - unsaved.length };
    const landed = withFencesOfUnsaved(withoutOverflow(next, saving.upTo ?? Number.NEGATIVE_INFINITY));
    return andThen(answerLanded(withStorage(state, user, landed), user, saving.written), (after) =>
      saveIfNeeded(after, user),
    );
  }
  if (outcome.left.code === 'fenced') return dropFencedWork(state, user, outcome.left);
  if (outcome.left.code === 'invalid_input') return onRefused(state, user, outcome.left);
  const again = saving.sessions.length > 0 ? saving.sessions : PMap.keys(storage.sessions).slice(0, 1);
  if (outcome.left.code === 'conflict' && again.length > 0) return onConflict(state, user, idle, again);
  if (saving.alone !== undefined && state.settings.lease === undefined && again.length > 0)
    return retryAlone(state, user, idle, again, outcome.left);
  return [
    withStorage(state, user, { ...attemptEnded(idle), settledChanges: storage.changes }),
    [reported(user, outcome.left)],
  ];
};

/**
 * A save refused as `fenced`: another tracker took over a lease it was made under, and redoes
 * that lease's queue from the store. The unsaved changes of those sessions are dropped (they are
 * that holder's to make now; nothing of them was stored), their records are read again whatever
 * their version, and the failure is reported. The other changes stay and are saved after the load.
 * A session the store holds no record of is let go of in the ledger too (`notes/released`): the
 * load finds nothing to put in place of the dropped work, which an end of stage would else merge
 * and save. A dropped merge leaves the profile to be rebuilt from the store's by that load
 * (`profileStale`), so no later save of the profile writes it, even where the store holds none.
 */
const dropFencedWork = (state: NotesState, user: string, failed: StoreCallFailure): NotesTransition => {
  const storage = selectUserStorage(state, user);
  const lost = selectFencedSessions(state, user);
  const released = lost
    .filter((key) => (PMap.get(storage.sessions, key) ?? 0) === 0)
    .map((key): NotesEvent => ({ type: 'notes/released', user, session: idOfKey(key) }));
  const isLost = (event: NotesEvent): boolean =>
    (event.type === 'notes/extracted' || event.type === 'notes/sessionConsolidated') &&
    lost.includes(storedKey(event.session));
  const profileLost = storage.unsaved.some((event) => isLost(event) && event.type === 'notes/sessionConsolidated');
  const { saving: _refused, profile, ...idle } = storage;
  const next: NotesUserStorage = withFencesOfUnsaved(
    recounted(
      {
        ...withoutOverflow(attemptEnded(idle), Number.POSITIVE_INFINITY, lost),
        unsaved: storage.unsaved.filter((event) => !isLost(event)),
        settledChanges: storage.changes,
        // Read again whatever version the store holds: what this tracker has of them is not the store's.
        sessions: lost.reduce((versions, key) => PMap.remove(versions, key), storage.sessions),
        ...(profileLost || profile === undefined ? {} : { profile }),
        ...(profileLost ? { profileStale: true as const } : {}),
      },
      storage.unsaved,
    ),
  );
  return lost.reduce<NotesTransition>(
    ([current, done], key) => {
      const [loaded, loads] = reload(current, user, idOfKey(key));
      return [loaded, [...done, ...loads]];
    },
    [
      withStorage(withLedger(state, released.reduce(applyNotesEvent, state.ledger)), user, next),
      [...released.map((event): NotesEffect => ({ type: 'record', event })), reported(user, failed)],
    ],
  );
};
