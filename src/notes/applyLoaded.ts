import { deepFreeze } from '../persistent/freeze.js';
import * as PMap from '../persistent/persistentMap.js';
import { type NotesLedger, ownLedger, selectUserNotes, withUserNotes } from './ledger.js';
import { isNotesId, type NotesLoadedEvent } from './model.js';

/**
 * Sets the user's notes in the event's session and their profile to what the event carries
 * (what the notes store held, with this process's unsaved changes applied again). What the
 * event does not carry stays; an event for a bad id leaves the same ledger.
 */
export const applyLoaded = (ledger: NotesLedger, event: NotesLoadedEvent): NotesLedger => {
  if (typeof event !== 'object' || event === null) return ledger;
  const { user, session, notes, profile } = event;
  if (!isNotesId(user) || !isNotesId(session) || (notes === undefined && profile === undefined)) return ledger;
  const owned = ownLedger(ledger);
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
