/**
 * Saves made one record at a time, pure: after a save of several records refused as
 * `invalid_input` (a store of one's own with a size or content policy), each record it wrote is
 * saved alone (each session, then the profile), so a refusal names the one record the store
 * will not keep, and only that record's changes are dropped (`refusedSave.ts`); the others are saved.
 * The unsaved events the refused save wrote stay unsaved until each record they touch has been
 * saved or refused alone, and are then confirmed at once (`NotesIsolation`).
 *
 * Why the sessions go first: saved apart, a merge is in the store half made between the two
 * saves, and for as long as the second fails (or for good, should the process stop). A profile
 * that counts a session whose record is not marked merged is counted again by the next end of
 * stage of any process, and that merge puts the session's stored facts (older than those the
 * profile holds) in place of the newer ones: a double count and a fact lost from the profile for
 * good. A session marked merged before its profile holds the merge is never merged again by an
 * end of stage of the user (it is not listed as unmerged), and merged again by name it replaces
 * its own facts without counting: nothing is counted twice and nothing removed, the profile only
 * lacks that merge until its own save lands (this tracker's save of the profile, applied again to
 * whatever the store holds then, counts the session where the store's profile has not: `uncounted`).
 */
import * as PMap from '../persistent/persistentMap.js';
import type { NotesTransition } from './inputs.js';
import { type NotesState, type NotesUserStorage, selectUserStorage, withStorage } from './machine.js';
import type { NotesEvent } from './model.js';
import { answerLanded } from './stageAnswers.js';
import { selectTouched, withFencesOfUnsaved, withoutOverflow } from './unsaved.js';

/** What a save writes, narrowed to one record while `storage` isolates: each session, then the profile. */
export const narrowedToOne = (
  storage: NotesUserStorage,
  touched: { sessions: ReadonlyArray<string>; profile: boolean },
): { sessions: ReadonlyArray<string>; profile: boolean } => {
  const { isolating } = storage;
  if (isolating === undefined) return touched;
  const session = isolating.sessions.find((key) => touched.sessions.includes(key));
  if (session !== undefined) return { sessions: [session], profile: false };
  return isolating.profile && touched.profile ? { sessions: [], profile: true } : touched;
};

/**
 * `storage` after its unsaved events changed from `before` (some dropped): the isolation counts
 * those of its first events still there.
 */
export const recounted = (storage: NotesUserStorage, before: ReadonlyArray<NotesEvent>): NotesUserStorage => {
  const { isolating } = storage;
  if (isolating === undefined) return storage;
  const count = before.slice(0, isolating.count).filter((event) => storage.unsaved.includes(event)).length;
  return count === isolating.count ? storage : { ...storage, isolating: { ...isolating, count } };
};

/** `storage` with the records saved or refused alone (`sessions`, and the profile when `profile`) off its isolation. */
export const isolatedDone = (
  storage: NotesUserStorage,
  sessions: ReadonlyArray<string>,
  profile: boolean,
): NotesUserStorage => {
  const { isolating } = storage;
  if (isolating === undefined) return storage;
  return {
    ...storage,
    isolating: {
      ...isolating,
      sessions: isolating.sessions.filter((key) => !sessions.includes(key)),
      profile: isolating.profile && !profile,
    },
  };
};

/**
 * `stored` (a record saved alone by `saving` taken; `before`, the storage it was sent from) with
 * that record off its isolation. A session saved alone marked merged, whose record the store did
 * not hold merged before, is kept among the sessions whose merge the profile in the store does
 * not hold yet (`uncounted`), until the profile is saved.
 */
export const savedAlone = (
  stored: NotesUserStorage,
  before: NotesUserStorage,
  saving: NonNullable<NotesUserStorage['saving']>,
): NotesUserStorage => {
  const done = isolatedDone(stored, saving.sessions, saving.profile);
  if (done.isolating === undefined) return done;
  if (saving.profile) {
    const { uncounted: _counted, ...rest } = done.isolating;
    return {
      ...done,
      isolating: { ...rest, ...(saving.written === undefined ? {} : { written: saving.written }) },
    };
  }
  const marked = saving.merged.filter((key) => PMap.get(before.merged, key) !== true);
  if (marked.length === 0) return done;
  const uncounted = [...new Set([...(done.isolating.uncounted ?? []), ...marked])];
  return { ...done, isolating: { ...done.isolating, uncounted } };
};

/**
 * Whether the store's record of each session was merged, as a merge applied again after a
 * conflict must count it: not merged, the sessions this tracker saved alone marked merged before
 * the profile that counts them was saved (`uncounted`), so the merge applied again to the store's
 * profile counts them there, once.
 */
export const mergedAsCounted = (storage: NotesUserStorage): PMap.PersistentMap<boolean> =>
  (storage.isolating?.uncounted ?? []).reduce((marks, key) => PMap.set(marks, key, false), storage.merged);

/**
 * Ends the isolation of `user` once no record of it is left to save alone (a record no unsaved
 * change touches any more needs no save): the events the refused save wrote are confirmed, and
 * the ends of stage they stored are answered with the profile as saved alone.
 */
export const endIsolationIfDone = (state: NotesState, user: string): NotesTransition => {
  const storage = selectUserStorage(state, user);
  const { isolating, ...rest } = storage;
  if (isolating === undefined || storage.saving !== undefined) return [state, []];
  const touched = selectTouched(storage);
  const left = isolating.sessions.filter((key) => touched.sessions.includes(key));
  if (left.length > 0 || (isolating.profile && touched.profile)) {
    const pruned = { ...isolating, sessions: left, profile: isolating.profile && touched.profile };
    return [withStorage(state, user, { ...storage, isolating: pruned }), []];
  }
  const unsaved = storage.unsaved.slice(isolating.count);
  const next = withFencesOfUnsaved(
    withoutOverflow(
      { ...rest, unsaved, settledChanges: Math.max(storage.settledChanges, storage.changes - unsaved.length) },
      isolating.upTo ?? Number.NEGATIVE_INFINITY,
    ),
  );
  return answerLanded(withStorage(state, user, next), user, isolating.written);
};
