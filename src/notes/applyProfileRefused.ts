import * as PMap from '../persistent/persistentMap.js';
import {
  checkedLedger,
  type NotesLedger,
  ownLedger,
  selectUserNotes,
  type UserNotes,
  withUserNotes,
} from './ledger.js';
import { isNotesId, type NotesProfileRefusedEvent } from './model.js';

/**
 * The ledger with what a refused save of the event's user's profile leaves in memory: without
 * their profile when `dropped` is true, and the sessions of `unmerged` no longer marked merged.
 * An event for a user the ledger does not hold, or for a bad id, leaves the same ledger.
 */
export const applyProfileRefused = (ledger: NotesLedger, event: NotesProfileRefusedEvent): NotesLedger => {
  checkedLedger(ledger);
  if (typeof event !== 'object' || event === null) return ledger;
  const { user, dropped, unmerged } = event;
  if (!isNotesId(user)) return ledger;
  const owned = ownLedger(ledger);
  const notes = selectUserNotes(owned, user);
  if (notes === undefined) return ledger;
  const { profile: _dropped, ...rest } = notes;
  const sessions = (Array.isArray(unmerged) ? (unmerged as ReadonlyArray<unknown>) : []).reduce<UserNotes['sessions']>(
    (all, session) => {
      const own = isNotesId(session) ? PMap.get(all, session) : undefined;
      if (own === undefined) return all;
      const { mergedAt: _unmarked, ...kept } = own;
      return PMap.set(all, session as string, { ...kept, consolidated: false });
    },
    notes.sessions,
  );
  return withUserNotes(owned, user, { ...(dropped === true ? rest : notes), sessions });
};
