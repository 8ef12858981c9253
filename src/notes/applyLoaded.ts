import * as E from 'fp-ts/lib/Either.js';
import { deepFreeze } from '../persistent/freeze.js';
import * as PMap from '../persistent/persistentMap.js';
import { checkedLedger, type NotesLedger, ownLedger, selectUserNotes, withUserNotes } from './ledger.js';
import { isNotesId, type NotesLoadedEvent } from './model.js';
import { decodeProfileRecord, decodeSessionRecord } from './persist.js';

/**
 * `part` as the ledger may take it: the library's own (frozen, as every record it decoded and
 * every event it recorded is) as it is, any other checked by `decode`; undefined when unusable.
 */
const checked = <T>(
  part: T | undefined,
  decode: (value: unknown, categories: ReadonlyArray<string>) => E.Either<unknown, T>,
  categories: ReadonlyArray<string>,
): T | undefined => {
  if (part === undefined) return undefined;
  if (typeof part === 'object' && part !== null && Object.isFrozen(part)) return part;
  const decoded = decode(part, categories);
  return E.isRight(decoded) ? decoded.right : undefined;
};

/**
 * Sets the user's notes in the event's session and their profile to what the event carries
 * (what the notes store held, with this process's unsaved changes applied again). The event may
 * come from a log read back from JSON: a part the library did not make is checked as a store
 * record is, and left out when a record could not hold it. What the event does not carry stays;
 * an event for a bad id, or with nothing usable, leaves the same ledger.
 */
export const applyLoaded = (ledger: NotesLedger, event: NotesLoadedEvent): NotesLedger => {
  checkedLedger(ledger);
  if (typeof event !== 'object' || event === null) return ledger;
  const { user, session } = event;
  if (!isNotesId(user) || !isNotesId(session)) return ledger;
  const owned = ownLedger(ledger);
  const notes = checked(event.notes, decodeSessionRecord, owned.categories);
  const profile = checked(event.profile, decodeProfileRecord, owned.categories);
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
