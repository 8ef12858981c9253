/**
 * The notes machine's side of the store port, pure: which records to load and when, what a
 * save writes and against which versions, and what a load after a conflict does (apply this
 * machine's unsaved changes to the fresh records again, save again; the save's answer is
 * `saveAnswer.ts`). The runner carries out the `load` and `save` effects and answers with
 * `notes/loaded` and `notes/saved`.
 */
import * as PMap from '../persistent/persistentMap.js';
import { isRecord } from '../base/record.js';
import { andThen, type NotesTransition } from './inputs.js';
import { endIsolationIfDone, narrowedToOne, recounted } from './isolation.js';
import { idOfKey, selectGlobalFacts, selectSessionNotes, storedKey } from './ledger.js';
import { hasRead, type NotesState, type NotesUserStorage, selectUserStorage, withStorage } from './machine.js';
import type { NotesEvent, SessionNotes } from './model.js';
import {
  encodeProfileRecord,
  encodeSessionRecord,
  type ForeignWithin,
  foreignWithin,
  type RecordFacts,
} from './persist.js';
import type { JsonValue, NotesWrite } from './store.js';
import { leftOut } from './recordRead.js';
import { fencesOf, hasUnsaved, selectTouched, touched, withDropped } from './unsaved.js';

/**
 * The most unsaved changes a user keeps for applying again after a conflict: a store that is
 * down for a long time must not grow memory with every message. Older ones are still in the
 * notes a save writes (the records they touched are kept, `overflow`, and saved); only a
 * conflict after them would not see them again, which is reported.
 */
export const MAX_UNSAVED_CHANGES = 256;

/** Starts loading the notes of `user` in `session` unless they were read (`hasRead`) or load. */
export const requireLoaded = (state: NotesState, user: string, session: string): NotesTransition =>
  hasRead(state, user, session) ? [state, []] : reload(state, user, session);

/** Starts loading the notes of `user` in `session` again, loaded or not (another process may have changed them), unless a load runs. */
export const reload = (state: NotesState, user: string, session: string): NotesTransition => {
  const storage = selectUserStorage(state, user);
  const key = storedKey(session);
  if (storage.loading.includes(key)) return [state, []];
  return [
    withStorage(state, user, { ...storage, loading: [...storage.loading, key] }),
    [{ type: 'load', user, session }],
  ];
};

/**
 * Loads the notes of `user` in `session` with a load asked from now on, for a holder that has just
 * taken the lease: a load already running was asked before, and may have read the store before the
 * last holder's save landed, which the holder's own save would then be applied over as its own
 * turn's. So such a load is asked again once it answers (`reloading`), its answer not taken.
 */
export const reloadAfresh = (state: NotesState, user: string, session: string): NotesTransition => {
  const storage = selectUserStorage(state, user);
  const key = storedKey(session);
  if (!storage.loading.includes(key)) return reload(state, user, session);
  if (storage.reloading?.includes(key) === true) return [state, []];
  return [withStorage(state, user, { ...storage, reloading: [...(storage.reloading ?? []), key] }), []];
};

/**
 * True once the changes to the notes of `user` in `session` are settled for a lease holder: in
 * the store (no save of them runs or waits), or kept from a record the store holds unreadable,
 * where they wait in memory until a load reads it. What a holder waits for before it says the
 * work done: work said done leaves the queue, so work whose save failed is not (see `isSaveStalled`).
 */
export const isSessionSaved = (state: NotesState, user: string, session: string): boolean => {
  const storage = selectUserStorage(state, user);
  const key = storedKey(session);
  if (storage.saving !== undefined && (storage.saving.sessions.includes(key) || storage.saving.profile)) return false;
  if (!selectTouched(storage).sessions.includes(key)) return true;
  return isKeptFromStore(storage);
};

/**
 * True when the unsaved changes of `storage` wait for no save: one of the records they write is
 * held unreadable by the store (or the profile waits to be rebuilt from the store's), so they stay
 * in memory until a load reads it. With leases their work is said done all the same (`isSessionSaved`).
 */
export const isKeptFromStore = (storage: NotesUserStorage): boolean => {
  const blocked = blockedBy(storage);
  return storage.saving === undefined && (blocked.sessions.length > 0 || blocked.profile);
};

/**
 * True when changes to the notes of `user` in `session` wait unsaved with nothing under way to
 * save them, and no unreadable record keeps them: their save failed. They are saved at the next
 * change, or by `saveAgain`.
 */
export const isSaveStalled = (state: NotesState, user: string, session: string): boolean => {
  const storage = selectUserStorage(state, user);
  const { sessions } = selectTouched(storage);
  const blocked = blockedBy(storage);
  return (
    storage.saving === undefined &&
    storage.backingOff === undefined &&
    sessions.includes(storedKey(session)) &&
    !sessions.some((key) => storage.loading.includes(key)) &&
    blocked.sessions.length === 0 &&
    !blocked.profile
  );
};

/**
 * A record as encoded, with the entries of other trackers' categories it was read with after its
 * own facts, as many as its cap leaves room for (`foreignWithin`): those it writes back, and the
 * line reporting those it drops.
 */
const withForeign = (
  value: JsonValue,
  foreign: ReadonlyArray<JsonValue> | undefined,
  path: RecordFacts,
): ForeignWithin & { readonly value: JsonValue } => {
  if (foreign === undefined || foreign.length === 0 || !isRecord(value) || !Array.isArray(value['facts']))
    return { value, kept: foreign ?? [], warning: undefined };
  const own = value['facts'] as ReadonlyArray<JsonValue>;
  const within = foreignWithin(foreign, own.length, path);
  return { ...within, value: { ...value, facts: [...own, ...within.kept] } };
};

/**
 * The records of `storage` that its unsaved changes would write and that the store holds
 * unreadable, or (the profile) that wait to be rebuilt from the store's (`profileStale`).
 */
export const blockedBy = (storage: NotesUserStorage): { sessions: ReadonlyArray<string>; profile: boolean } => {
  const { sessions, profile } = selectTouched(storage);
  return {
    sessions: sessions.filter((key) => storage.unreadable !== undefined && PMap.has(storage.unreadable.sessions, key)),
    profile: profile && (storage.unreadable?.profile !== undefined || storage.profileStale === true),
  };
};

/** `storage` with no attempt at saving under way: the count of its conflicts starts afresh. */
export const attemptEnded = (storage: NotesUserStorage): NotesUserStorage => {
  if (storage.conflicts === undefined) return storage;
  const { conflicts: _ended, ...rest } = storage;
  return rest;
};

/**
 * The save of every unsaved change of `user`, unless one runs, it waits after a conflict, or a
 * session it writes is being loaded again. A change to a record the store holds unreadable is not saved over it: the
 * changes wait, as after a failed save, for a load that reads it.
 */
export const saveIfNeeded = (state: NotesState, user: string): NotesTransition =>
  andThen(endIsolationIfDone(state, user), (ended) => saveUnsaved(ended, user));

const saveUnsaved = (state: NotesState, user: string): NotesTransition => {
  const storage = selectUserStorage(state, user);
  if (storage.saving !== undefined || storage.backingOff !== undefined) return [state, []];
  if (!hasUnsaved(storage)) return [withStorage(state, user, attemptEnded(storage)), []];
  if (selectTouched(storage).sessions.some((key) => storage.loading.includes(key))) return [state, []];
  // After a save of several records refused as invalid_input, one record at a time (`isolation.ts`).
  const { sessions, profile } = narrowedToOne(storage, selectTouched(storage));
  const blocked = blockedBy(storage);
  if (blocked.sessions.length > 0 || blocked.profile)
    return [withStorage(state, user, { ...attemptEnded(storage), settledChanges: storage.changes }), []];
  const stored = (key: string): SessionNotes[] => {
    const notes = selectSessionNotes(state.ledger, user, idOfKey(key));
    return notes === undefined ? [] : [notes];
  };
  const current = profile ? selectGlobalFacts(state.ledger, user) : undefined;
  const sessionWrites = sessions.flatMap((key) =>
    stored(key).map((notes) => ({
      key,
      ...withForeign(
        encodeSessionRecord(notes),
        storage.foreign === undefined ? undefined : PMap.get(storage.foreign.sessions, key),
        'session.facts',
      ),
    })),
  );
  const profileWrite =
    current === undefined
      ? undefined
      : withForeign(encodeProfileRecord(current), storage.foreign?.profile, 'profile.facts');
  const write: NotesWrite = {
    sessions: sessionWrites.map(({ key, value }) => ({
      session: idOfKey(key),
      value,
      expected: PMap.get(storage.sessions, key) ?? 0,
    })),
    ...(profileWrite === undefined ? {} : { profile: { value: profileWrite.value, expected: storage.profile ?? 0 } }),
    ...fencesOf(storage, sessions),
  };
  const merged = sessions.filter((key) => stored(key).some((notes) => notes.mergedAt !== undefined));
  const saving = {
    count: storage.unsaved.length,
    sessions,
    profile: current !== undefined,
    merged,
    ...(current === undefined ? {} : { written: current }),
    ...(storage.isolating === undefined ? { upTo: storage.changes } : { alone: true as const }),
  };
  // What a save drops of other trackers' facts is gone from the record once it is saved: reported
  // once, and not written back by the next save (a failed one's included).
  const warnings = [...sessionWrites, ...(profileWrite === undefined ? [] : [profileWrite])].flatMap(({ warning }) =>
    warning === undefined ? [] : [warning],
  );
  const foreign =
    storage.foreign === undefined || warnings.length === 0
      ? storage.foreign
      : {
          sessions: sessionWrites.reduce(
            (kept, { key, kept: entries }) => (PMap.has(kept, key) ? PMap.set(kept, key, entries) : kept),
            storage.foreign.sessions,
          ),
          profile: profileWrite === undefined ? storage.foreign.profile : profileWrite.kept,
        };
  return [
    withStorage(state, user, { ...storage, saving, ...(foreign === undefined ? {} : { foreign }) }),
    [...leftOut(user, warnings), { type: 'save', user, write }],
  ];
};

/**
 * Notes `events` (the ledger changes just applied for `user`) as unsaved, and saves them unless a
 * save runs. `fence`: they were made as the holder of their session's lease, in the turn of that
 * fence, which their save names.
 */
export const recordChanges = (
  state: NotesState,
  user: string,
  events: ReadonlyArray<NotesEvent>,
  fence?: number,
): NotesTransition => {
  const changes = events.filter(
    (event) =>
      event.type === 'notes/extracted' ||
      event.type === 'notes/sessionConsolidated' ||
      event.type === 'notes/profileRewritten',
  );
  if (changes.length === 0) return [state, []];
  const storage = selectUserStorage(state, user);
  const unsaved = [...storage.unsaved, ...changes];
  const over = Math.max(0, unsaved.length - MAX_UNSAVED_CHANGES);
  // A running save covers the first `count` events; those dropped past the bound leave it.
  const saving =
    storage.saving === undefined ? undefined : { ...storage.saving, count: Math.max(0, storage.saving.count - over) };
  // The oldest turn of the unsaved changes: a save of an earlier turn's work is refused once it ended.
  const keep = (turn: number) => (known: PMap.PersistentMap<number>, key: string) =>
    PMap.has(known, key) ? known : PMap.set(known, key, turn);
  const fences =
    fence === undefined ? storage.fences : touched(changes).sessions.reduce(keep(fence), storage.fences ?? PMap.empty);
  // What falls off past the bound is still written: the records it touched are kept (`overflow`).
  const next: NotesUserStorage = withDropped(
    recounted(
      {
        ...storage,
        unsaved: unsaved.slice(over),
        changes: storage.changes + changes.length,
        ...(saving === undefined ? {} : { saving }),
        ...(fences === undefined ? {} : { fences }),
      },
      storage.unsaved,
    ),
    unsaved.slice(0, over),
    storage.changes + changes.length,
  );
  return saveAgain(withStorage(state, user, next), user);
};

/**
 * Saves the unsaved changes of `user` (unless a save or a load they wait for runs), and reads
 * again each record the store held unreadable that they would write: what a change does, and
 * what a lease holder whose save failed does when it tries again.
 */
export const saveAgain = (state: NotesState, user: string): NotesTransition => {
  const [saved, effects] = saveIfNeeded(state, user);
  // A save kept from an unreadable record reads it again at each change, as a failed save saves again.
  const storage = selectUserStorage(saved, user);
  const blocked = blockedBy(storage);
  // Any session's load reads the profile too.
  const anySession = [...selectTouched(storage).sessions, ...PMap.keys(storage.sessions)].slice(0, 1);
  const again = blocked.sessions.length > 0 ? blocked.sessions : blocked.profile ? anySession : [];
  return again.reduce<NotesTransition>(
    ([current, done], key) => {
      const [loaded, loads] = reload(current, user, idOfKey(key));
      return [loaded, [...done, ...loads]];
    },
    [saved, effects],
  );
};
