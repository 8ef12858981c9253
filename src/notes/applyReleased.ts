import * as PMap from '../persistent/persistentMap.js';
import { checkedLedger, type NotesLedger, ownLedger, selectUserNotes, withUserNotes } from './ledger.js';
import { isNotesId, type NotesReleasedEvent } from './model.js';

/**
 * The ledger without the notes of the event's user in its session (or, with no session,
 * without the user): what a tracker no longer holds in memory, the store keeps. Releasing
 * what the ledger does not hold, or an event for a bad id, leaves the same ledger.
 */
export const applyReleased = (ledger: NotesLedger, event: NotesReleasedEvent): NotesLedger => {
  checkedLedger(ledger);
  if (typeof event !== 'object' || event === null) return ledger;
  const { user, session } = event;
  if (!isNotesId(user) || (session !== undefined && !isNotesId(session))) return ledger;
  const owned = ownLedger(ledger);
  const notes = selectUserNotes(owned, user);
  if (notes === undefined) return ledger;
  if (session === undefined)
    return Object.freeze({ categories: owned.categories, users: PMap.remove(owned.users, user) });
  const sessions = PMap.remove(notes.sessions, session);
  return sessions === notes.sessions ? ledger : withUserNotes(owned, user, { ...notes, sessions });
};
