/**
 * Extractions made blind: without leases, a tracker whose load of a session's record failed
 * still extracts, from what it holds, and its model never sees the facts the store holds. Its
 * list is the whole list only of what the model saw, so the stored facts it never saw are kept
 * beside it (the older first, so a list past its cap drops them first), never replaced by it:
 * where a load answers while the extraction runs, and where the record is loaded again after the
 * save that follows meets it as a conflict.
 */
import { type NotesLedger, selectSessionNotes } from './ledger.js';
import { type CategorizedFact, factKey, type NotesEvent } from './model.js';

/** `facts`, with the facts of `others` that neither it nor `seen` (fact keys) holds put before them. */
export const withUnseen = (
  facts: ReadonlyArray<CategorizedFact>,
  others: ReadonlyArray<CategorizedFact>,
  seen: ReadonlySet<string>,
): ReadonlyArray<CategorizedFact> => {
  const listed = new Set(facts.map(factKey));
  // As plain facts: an event holds a list as a model gives one, not the times the ledger keeps of it.
  const unseen = others
    .filter((fact) => !listed.has(factKey(fact)) && !seen.has(factKey(fact)))
    .map(({ category, fact }) => ({ category, fact }));
  return unseen.length === 0 ? facts : [...unseen, ...facts];
};

/**
 * `event` as applied again onto `rebuilt`: the records loaded fresh with this tracker's unsaved
 * changes before `event` applied to them. A blind extraction keeps the facts there its model was
 * not shown, and only those, so a fact it was shown and left out stays out. Where the record
 * covers later messages than the extraction (another process extracted them since), the record's
 * list stands, with the facts the extraction added beside it, and its time of messages.
 */
export const againstStored = (rebuilt: NotesLedger, event: NotesEvent): NotesEvent => {
  if (event.type !== 'notes/extracted' || event.blind === undefined) return event;
  const shown = new Set(event.blind);
  const record = selectSessionNotes(rebuilt, event.user, event.session);
  const stored = record?.facts ?? [];
  const later = record?.messagesAt;
  if (later !== undefined && event.messagesAt !== undefined && later >= event.messagesAt) {
    const added = event.facts.filter((fact) => !shown.has(factKey(fact)));
    return { ...event, facts: withUnseen(added, stored, new Set()), messagesAt: later };
  }
  return { ...event, facts: withUnseen(event.facts, stored, shown) };
};
