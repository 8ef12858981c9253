import * as E from 'fp-ts/lib/Either.js';
import { deepFreeze } from '../persistent/freeze.js';
import * as PMap from '../persistent/persistentMap.js';
import { type NotesLedger, ownLedger, selectUserNotes, withUserNotes } from './ledger.js';
import { isNotesId, type NotesLoadedEvent } from './model.js';
import { decodeProfileRecord, decodeSessionRecord } from './persist.js';

const usable = <T>(decoded: E.Either<unknown, T>): T | undefined => (E.isRight(decoded) ? decoded.right : undefined);

/**
 * Sets the user's notes in the event's session and their profile to what the event carries
 * (what the notes store held, with this process's unsaved changes applied again). The event may
 * come from a log read back from JSON: each part is checked as a store record is, and one that a
 * record could not hold is left out. What the event does not carry stays; an event for a bad id,
 * or with nothing usable, leaves the same ledger.
 */
export const applyLoaded = (ledger: NotesLedger, event: NotesLoadedEvent): NotesLedger => {
  if (typeof event !== 'object' || event === null) return ledger;
  const { user, session } = event;
  if (!isNotesId(user) || !isNotesId(session)) return ledger;
  const owned = ownLedger(ledger);
  const notes = event.notes === undefined ? undefined : usable(decodeSessionRecord(event.notes, owned.categories));
  const profile =
    event.profile === undefined ? undefined : usable(decodeProfileRecord(event.profile, owned.categories));
  if (notes === undefined && profile === undefined) return ledger;
  const current = selectUserNotes(owned, user) ?? { sessions: PMap.empty };
  return withUserNotes(owned, user, {
    sessions: notes === undefined ? current.sessions : PMap.set(current.sessions, session, deepFreeze(notes)),
    ...(profile === undefined
      ? current.profile === undefined
        ? {}
        : { profile: current.profile }
      : { profile: deepFreeze(profile) }),
  });
};
