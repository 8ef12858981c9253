/**
 * Extractions made blind: without leases, a tracker whose load of a session's record failed
 * still extracts, from what it holds, and its model never sees the facts the store holds. Its
 * list is the whole list only of what the model saw, so the stored facts it never saw are kept
 * beside it (the older first, so a list past its cap drops them first), never replaced by it:
 * where a load answers while the extraction runs, and where the record is loaded again after the
 * save that follows meets it as a conflict.
 */
import { type NotesLedger, selectSessionFacts } from './ledger.js';
import { type CategorizedFact, factKey, type NotesEvent } from './model.js';

/** `facts`, with the facts of `others` that neither it nor `seen` (fact keys) holds put before them. */
export const withUnseen = (
  facts: ReadonlyArray<CategorizedFact>,
  others: ReadonlyArray<CategorizedFact>,
  seen: ReadonlySet<string>,
): ReadonlyArray<CategorizedFact> => {
  const listed = new Set(facts.map(factKey));
  const unseen = others.filter((fact) => !listed.has(factKey(fact)) && !seen.has(factKey(fact)));
  return unseen.length === 0 ? facts : [...unseen, ...facts];
};

/**
 * `event` as applied again onto the records loaded fresh (`stored`, before any of this tracker's
 * unsaved changes): a blind extraction keeps the stored facts its model was not shown, and only
 * those, so a fact it was shown and left out stays out.
 */
export const againstStored = (stored: NotesLedger, event: NotesEvent): NotesEvent =>
  event.type === 'notes/extracted' && event.blind !== undefined
    ? {
        ...event,
        facts: withUnseen(event.facts, selectSessionFacts(stored, event.user, event.session), new Set(event.blind)),
      }
    : event;
