/**
 * Saves made one record at a time, pure: after a save of several records refused as
 * `invalid_input` (a store of one's own with a size or content policy), each record it wrote is
 * saved alone (the profile first, then the sessions), so a refusal names the one record the store
 * will not keep, and only that record's changes are dropped (`refusedSave.ts`); the others are saved.
 * The unsaved events the refused save wrote stay unsaved until each record they touch has been
 * saved or refused alone, and are then confirmed at once (`NotesIsolation`).
 */
import * as PMap from '../persistent/persistentMap.js';
import type { NotesTransition } from './inputs.js';
import { storedKey } from './ledger.js';
import { type NotesState, type NotesUserStorage, selectUserStorage, withStorage } from './machine.js';
import type { NotesEvent } from './model.js';
import { answerLanded } from './stageAnswers.js';
import { selectTouched, withFencesOfUnsaved, withoutOverflow } from './unsaved.js';

/** What a save writes, narrowed to one record while `storage` isolates: the profile first, then each session. */
export const narrowedToOne = (
  storage: NotesUserStorage,
  touched: { sessions: ReadonlyArray<string>; profile: boolean },
): { sessions: ReadonlyArray<string>; profile: boolean } => {
  const { isolating } = storage;
  if (isolating === undefined) return touched;
  if (isolating.profile && touched.profile) return { sessions: [], profile: true };
  const session = isolating.sessions.find((key) => touched.sessions.includes(key));
  return session === undefined ? touched : { sessions: [session], profile: false };
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
 * `stored` (a record saved alone by `saving` taken) with that record off its isolation; a profile
 * saved alone is kept, with the sessions whose merges it holds (the merges among the events it wrote).
 */
export const savedAlone = (
  stored: NotesUserStorage,
  saving: NonNullable<NotesUserStorage['saving']>,
): NotesUserStorage => {
  const done = isolatedDone(stored, saving.sessions, saving.profile);
  if (!saving.profile || done.isolating === undefined) return done;
  const merges = stored.unsaved
    .slice(0, saving.count)
    .flatMap((event) => (event.type === 'notes/sessionConsolidated' ? [storedKey(event.session)] : []));
  const counted = [...new Set([...(done.isolating.counted ?? []), ...merges])];
  return {
    ...done,
    isolating: {
      ...done.isolating,
      ...(saving.written === undefined ? {} : { written: saving.written }),
      ...(counted.length === 0 ? {} : { counted }),
    },
  };
};

/**
 * Whether the store's record of each session was merged, as a merge applied again after a
 * conflict must count it: also merged, the sessions whose merge a profile saved alone holds
 * (their own records, saved after it, may not say so yet), so the merge counts once in `sessionCount`.
 */
export const mergedAsCounted = (storage: NotesUserStorage): PMap.PersistentMap<boolean> =>
  (storage.isolating?.counted ?? []).reduce((marks, key) => PMap.set(marks, key, true), storage.merged);

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
