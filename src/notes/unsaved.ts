/**
 * What a user's unsaved changes touch, and the lease turns they were made in: the sessions and
 * profile a save of them writes, and the fences it names, so that the store refuses the save
 * once another tracker has taken a lease it was made under (see `NotesUserStorage.fences`).
 */
import * as PMap from '../persistent/persistentMap.js';
import { idOfKey, storedKey } from './ledger.js';
import {
  type NotesState,
  type NotesUserStorage,
  selectConversation,
  selectUserStorage,
  withStorage,
} from './machine.js';
import type { NotesEvent } from './model.js';
import type { NotesWrite } from './store.js';

/** The sessions (stored keys) and whether the profile the events change. */
export const touched = (events: ReadonlyArray<NotesEvent>): { sessions: ReadonlyArray<string>; profile: boolean } => {
  const sessions = new Set<string>();
  let profile = false;
  for (const event of events) {
    if (event.type === 'notes/extracted') sessions.add(storedKey(event.session));
    else if (event.type === 'notes/sessionConsolidated') {
      sessions.add(storedKey(event.session));
      profile = true;
    } else if (event.type === 'notes/profileRewritten') profile = true;
  }
  return { sessions: [...sessions], profile };
};

/**
 * The sessions (stored keys) and whether the profile a save of the unsaved changes of `storage`
 * writes: those its unsaved events touch, and those of events dropped past the bound (`overflow`).
 */
export const selectTouched = (storage: NotesUserStorage): { sessions: ReadonlyArray<string>; profile: boolean } => {
  const own = touched(storage.unsaved);
  if (storage.overflow === undefined) return own;
  const dropped = PMap.keys(storage.overflow.sessions).filter((key) => !own.sessions.includes(key));
  return { sessions: [...own.sessions, ...dropped], profile: own.profile || storage.overflow.profile !== undefined };
};

/** True when `storage` has changes the store has not confirmed (unsaved events, or records of dropped ones). */
export const hasUnsaved = (storage: NotesUserStorage): boolean =>
  storage.unsaved.length > 0 || storage.overflow !== undefined;

/** `storage` with `overflow` set to `sessions` and `profile` (none when both are empty). */
const withOverflowOf = (
  storage: NotesUserStorage,
  sessions: PMap.PersistentMap<number>,
  profile: number | undefined,
): NotesUserStorage => {
  const { overflow: _before, ...rest } = storage;
  return PMap.size(sessions) === 0 && profile === undefined
    ? rest
    : { ...rest, overflow: { sessions, ...(profile === undefined ? {} : { profile }) } };
};

/** `storage` remembering the records `dropped` (unsaved events past the bound) touch, as dropped when `changes` were made. */
export const withDropped = (
  storage: NotesUserStorage,
  dropped: ReadonlyArray<NotesEvent>,
  changes: number,
): NotesUserStorage => {
  if (dropped.length === 0) return storage;
  const { sessions, profile } = touched(dropped);
  return withOverflowOf(
    storage,
    sessions.reduce((known, key) => PMap.set(known, key, changes), storage.overflow?.sessions ?? PMap.empty),
    profile ? changes : storage.overflow?.profile,
  );
};

/**
 * `storage` writing the sessions `keys` (stored keys) at its next save as the ledger holds them,
 * as if `changes` dropped past the bound had touched them: a change no unsaved event carries
 * (the mark of a merge taken back, see `refusedSave.ts`).
 */
export const withSessionsToWrite = (
  storage: NotesUserStorage,
  keys: ReadonlyArray<string>,
  changes: number,
): NotesUserStorage =>
  keys.length === 0
    ? storage
    : withOverflowOf(
        storage,
        keys.reduce((known, key) => PMap.set(known, key, changes), storage.overflow?.sessions ?? PMap.empty),
        storage.overflow?.profile,
      );

/**
 * `storage` forgetting the dropped changes a save that began when `upTo` changes were made wrote
 * (or, with `keys`, all of those sessions', and not the profile's: their work was dropped): the
 * records they touched need no further save for them.
 */
export const withoutOverflow = (
  storage: NotesUserStorage,
  upTo: number,
  keys?: ReadonlyArray<string>,
): NotesUserStorage => {
  if (storage.overflow === undefined) return storage;
  const { sessions, profile } = storage.overflow;
  const covered = (key: string, at: number): boolean => (keys === undefined ? at <= upTo : keys.includes(key));
  return withOverflowOf(
    storage,
    PMap.keys(sessions).reduce(
      (kept, key) => (covered(key, PMap.get(sessions, key)!) ? PMap.remove(kept, key) : kept),
      sessions,
    ),
    profile !== undefined && profile <= upTo && keys === undefined ? undefined : profile,
  );
};

/**
 * `storage` after a load replaced the record of the session `key` (`session`) or the profile
 * (`profile`) with the store's newer one: the changes dropped past the bound that touched it are
 * not among those applied to it again, so they are gone; returned with the records they were of.
 */
export const withoutReplacedOverflow = (
  storage: NotesUserStorage,
  key: string,
  session: boolean,
  profile: boolean,
): readonly [NotesUserStorage, ReadonlyArray<string>] => {
  const { overflow } = storage;
  if (overflow === undefined) return [storage, []];
  const lostSession = session && PMap.has(overflow.sessions, key);
  const lostProfile = profile && overflow.profile !== undefined;
  const lost = [
    ...(lostSession ? [`the record of ${JSON.stringify(idOfKey(key))}`] : []),
    ...(lostProfile ? ['the profile'] : []),
  ];
  if (lost.length === 0) return [storage, []];
  return [
    withOverflowOf(
      storage,
      lostSession ? PMap.remove(overflow.sessions, key) : overflow.sessions,
      lostProfile ? undefined : overflow.profile,
    ),
    lost,
  ];
};

/** The leases a save of `sessions` (stored keys) is made under: those whose unsaved changes were made as their holder. */
export const fencesOf = (storage: NotesUserStorage, sessions: ReadonlyArray<string>): Pick<NotesWrite, 'fences'> => {
  const fences = sessions.flatMap((key) => {
    const fence = storage.fences === undefined ? undefined : PMap.get(storage.fences, key);
    return fence === undefined ? [] : [{ session: idOfKey(key), fence }];
  });
  return fences.length === 0 ? {} : { fences };
};

/**
 * The unsaved changes of `user` in `session` no longer fenced: the store has taken this holder's
 * report that the work is done (its save had landed, or waits on a record the store holds
 * unreadable), so no other holder redoes it, and a save made again later must not be refused
 * for a turn that has ended.
 */
export const unfence = (state: NotesState, user: string, session: string): NotesState => {
  const storage = selectUserStorage(state, user);
  const key = storedKey(session);
  if (storage.fences === undefined || !PMap.has(storage.fences, key)) return state;
  const fences = PMap.remove(storage.fences, key);
  const { fences: _before, ...rest } = storage;
  return withStorage(state, user, PMap.size(fences) === 0 ? rest : { ...rest, fences });
};

/** `storage` keeping the fences of only the sessions its unsaved changes still touch. */
export const withFencesOfUnsaved = (storage: NotesUserStorage): NotesUserStorage => {
  if (storage.fences === undefined) return storage;
  const { sessions } = selectTouched(storage);
  const fences = PMap.keys(storage.fences).reduce(
    (kept, key) => (sessions.includes(key) ? kept : PMap.remove(kept, key)),
    storage.fences,
  );
  const { fences: _before, ...rest } = storage;
  return PMap.size(fences) === 0 ? rest : { ...rest, fences };
};

/** The sessions (stored keys) of the running save of `user` that it wrote under a lease: those a `fenced` answer refers to. */
export const selectFencedSessions = (state: NotesState, user: string): ReadonlyArray<string> => {
  const { saving, fences } = selectUserStorage(state, user);
  return saving === undefined || fences === undefined ? [] : saving.sessions.filter((key) => PMap.has(fences, key));
};

/** True when unsaved changes of `user` in `session` were made in an earlier turn of the lease this tracker holds now. */
export const isEarlierTurnUnsaved = (state: NotesState, user: string, session: string): boolean => {
  const { fences } = selectUserStorage(state, user);
  const lease = selectConversation(state, user, session)?.lease;
  const made = fences === undefined ? undefined : PMap.get(fences, storedKey(session));
  return made !== undefined && lease?.held === true && lease.fence !== undefined && made !== lease.fence;
};
