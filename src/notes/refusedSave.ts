/**
 * A save refused as `invalid_input`, pure: the store cannot keep what it wrote, and the same save
 * made again would be refused again (and, kept, would block every later save of the user, and with
 * leases hold the lease). A save of several records is not dropped whole: its records are saved one
 * at a time (`isolation.ts`), so a refusal names the record. A refused save of one record drops that
 * record's changes (said once to `onError`, naming it), and the tracker's copy of the record is read
 * again from the store (none when the store holds none), so the next change to it is not refused
 * again for what was dropped. The other records' changes stay and are saved.
 */
import * as PMap from '../persistent/persistentMap.js';
import { applyNotesEvent } from './events.js';
import { andThen, type NotesEffect, type NotesTransition, type StoreCallFailure } from './inputs.js';
import { isolatedDone, recounted } from './isolation.js';
import { idOfKey, type NotesLedger, selectUserNotes, storedKey } from './ledger.js';
import { type NotesState, type NotesUserStorage, selectUserStorage, withLedger, withStorage } from './machine.js';
import type { NotesEvent } from './model.js';
import { reported } from './recordRead.js';
import { answerRefused } from './stageAnswers.js';
import { attemptEnded, reload, saveIfNeeded } from './storage.js';
import { storeFailure } from './storeAnswer.js';
import { touched, withFencesOfUnsaved, withoutOverflow, withSessionsToWrite } from './unsaved.js';

/** Takes an `invalid_input` answer to the running save of `user`. */
export const onRefused = (state: NotesState, user: string, failed: StoreCallFailure): NotesTransition => {
  const storage = selectUserStorage(state, user);
  const { saving, ...idle } = storage;
  if (saving === undefined) return [state, []];
  const records = saving.sessions.length + (saving.profile ? 1 : 0);
  if (records <= 1 || saving.alone !== undefined) return dropRefusedRecord(state, user, failed);
  // Which record the store refuses is unknown: each is saved alone, none dropped yet.
  const isolating = {
    sessions: saving.sessions,
    profile: saving.profile,
    count: saving.count,
    ...(saving.upTo === undefined ? {} : { upTo: saving.upTo }),
  };
  return saveIfNeeded(withStorage(state, user, { ...attemptEnded(idle), isolating }), user);
};

/**
 * What the ledger of `user` lets go of for the refused records until they load again, as events:
 * the refused session (`session`, `notes/released`) or profile (`notes/profileRefused`), unless
 * a change made since the refused save touches it (that change is saved next), and the sessions
 * whose merge was dropped with the profile (`unmerged`) no longer marked merged.
 */
const refusedReleases = (
  ledger: NotesLedger,
  user: string,
  refused: { session?: string; profile: boolean; unmerged: ReadonlyArray<string> },
  since: { sessions: ReadonlyArray<string>; profile: boolean },
): NotesEvent[] => {
  const notes = selectUserNotes(ledger, user);
  if (notes === undefined) return [];
  const { session } = refused;
  if (session !== undefined)
    return since.sessions.includes(session) || PMap.get(notes.sessions, idOfKey(session)) === undefined
      ? []
      : [{ type: 'notes/released', user, session: idOfKey(session) }];
  const profile = refused.profile && !since.profile && notes.profile !== undefined;
  const unmerged = refused.unmerged.map(idOfKey).filter((id) => PMap.get(notes.sessions, id) !== undefined);
  return profile || unmerged.length > 0 ? [{ type: 'notes/profileRefused', user, dropped: profile, unmerged }] : [];
};

/**
 * A save of one record refused: the changes it wrote to that record are dropped (a merge's
 * changes with the profile, the sessions it marked merged read again too), and the records are
 * read again from the store whatever their version; until then the tracker holds none of them,
 * so one the store never held is gone rather than kept with the refused content.
 */
const dropRefusedRecord = (state: NotesState, user: string, failed: StoreCallFailure): NotesTransition => {
  const storage = selectUserStorage(state, user);
  const { saving, profile: version, ...idle } = storage;
  if (saving === undefined) return [state, []];
  const session = saving.sessions[0];
  const isProfile = session === undefined && saving.profile;
  const hits = (event: NotesEvent): boolean =>
    isProfile
      ? event.type === 'notes/sessionConsolidated' || event.type === 'notes/profileRewritten'
      : (event.type === 'notes/extracted' || event.type === 'notes/sessionConsolidated') &&
        storedKey(event.session) === session;
  const written = storage.unsaved.slice(0, saving.count);
  const dropped = session === undefined && !isProfile ? written : written.filter(hits);
  // Sessions saved alone marked merged before their profile, which is refused: the store holds
  // them merged, yet its profile never held their merge. Kept (not read again) and written
  // unmarked by the next save, so a later end of stage merges them and counts them, once.
  const uncounted = isProfile ? (storage.isolating?.uncounted ?? []) : [];
  const reset = session === undefined ? touched(dropped).sessions.filter((key) => !uncounted.includes(key)) : [session];
  const kept = storage.unsaved.filter((event) => !dropped.includes(event));
  // A merge dropped with its session's record was applied to the profile in memory, which the
  // store never took (the profile is saved after its sessions, or with them): the profile is
  // rebuilt from the store's, the changes left applied again, before it is saved (`profileStale`).
  const mergeDropped = session !== undefined && dropped.some((event) => event.type === 'notes/sessionConsolidated');
  const base = withSessionsToWrite(attemptEnded(idle), uncounted, storage.changes);
  const next: NotesUserStorage = withFencesOfUnsaved(
    recounted(
      isolatedDone(
        {
          ...(session !== undefined
            ? withoutOverflow(base, Number.NEGATIVE_INFINITY, [session])
            : isProfile
              ? base
              : withoutOverflow(base, saving.upTo ?? Number.NEGATIVE_INFINITY)),
          unsaved: kept,
          settledChanges: storage.changes,
          ...(mergeDropped ? { profileStale: true as const } : {}),
          // Read again whatever version the store holds: what this tracker has of them is not the store's.
          sessions: reset.reduce((versions, key) => PMap.remove(versions, key), storage.sessions),
          ...(isProfile || version === undefined ? {} : { profile: version }),
        },
        session === undefined ? [] : [session],
        isProfile,
      ),
      storage.unsaved,
    ),
  );
  const records = [
    ...saving.sessions.map((key) => `session ${JSON.stringify(idOfKey(key))}`),
    ...(saving.profile ? ['the profile'] : []),
  ];
  const count = dropped.length;
  // Changes past the bound of unsaved ones are no longer listed: the record's are dropped all the same.
  const what =
    count === 0
      ? 'the changes it wrote to it were dropped'
      : `the ${count} change${count === 1 ? '' : 's'} it wrote ${count === 1 ? 'was' : 'were'} dropped`;
  const said = storeFailure(
    'invalid_input',
    `${failed.message} (the notes of ${JSON.stringify(user)}: trying again cannot help, so ${what}${records.length === 0 ? '' : `, of ${records.join(', ')}`}, and what the store holds is read again)`,
  );
  // A merge dropped (with the profile, or with its session) is answered now, unconfirmed.
  const [answered, answers] = answerRefused(state, user, dropped);
  const refused = {
    ...(session === undefined ? {} : { session }),
    profile: isProfile,
    unmerged: isProfile ? [...reset, ...uncounted] : [],
  };
  const released = refusedReleases(answered.ledger, user, refused, touched(kept));
  const cleared = withStorage(withLedger(answered, released.reduce(applyNotesEvent, answered.ledger)), user, next);
  // Any session's load reads the profile too.
  const again = reset.length > 0 ? reset : PMap.keys(storage.sessions).slice(0, 1);
  const loaded = again.reduce<NotesTransition>(
    ([current, done], key) => {
      const [after, loads] = reload(current, user, idOfKey(key));
      return [after, [...done, ...loads]];
    },
    [cleared, [...answers, ...released.map((event): NotesEffect => ({ type: 'record', event })), reported(user, said)]],
  );
  return andThen(loaded, (after) => saveIfNeeded(after, user));
};
