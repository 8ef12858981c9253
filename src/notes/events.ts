import { applyExtraction } from './applyExtraction.js';
import { applyLoaded } from './applyLoaded.js';
import { applyProfileRefused } from './applyProfileRefused.js';
import { applyReleased } from './applyReleased.js';
import { consolidateSession } from './consolidateSession.js';
import { refuseArgument } from '../base/describe.js';
import { checkedLedger, emptyNotesLedger, type NotesLedger } from './ledger.js';
import type { NotesEvent } from './model.js';
import { rewriteProfile } from './rewriteProfile.js';

export type {
  NotesEvent,
  NotesExtractedEvent,
  NotesExtractionFailedEvent,
  NotesLoadedEvent,
  NotesProfileRefusedEvent,
  NotesProfileRewriteFailedEvent,
  NotesProfileRewrittenEvent,
  NotesReleasedEvent,
  NotesSessionConsolidatedEvent,
} from './model.js';

/**
 * Applies one event with its reducer; failures and unknown events (null among them) leave the
 * same ledger. A ledger that is not one is refused with a TypeError.
 */
export const applyNotesEvent = (ledger: NotesLedger, event: NotesEvent): NotesLedger => {
  checkedLedger(ledger);
  if (typeof event !== 'object' || event === null) return ledger;
  switch (event.type) {
    case 'notes/extracted':
      return applyExtraction(ledger, event);
    case 'notes/sessionConsolidated':
      return consolidateSession(ledger, event);
    case 'notes/profileRewritten':
      return rewriteProfile(ledger, event);
    case 'notes/loaded':
      return applyLoaded(ledger, event);
    case 'notes/released':
      return applyReleased(ledger, event);
    case 'notes/profileRefused':
      return applyProfileRefused(ledger, event);
    case 'notes/extractionFailed':
    case 'notes/profileRewriteFailed':
    default:
      return ledger;
  }
};

/**
 * Folds `events` over `from` (default: an empty ledger with the default categories). Events
 * that are no array, or a `from` that is no ledger, are refused with a TypeError.
 */
export const replayNotes = (events: ReadonlyArray<NotesEvent>, from: NotesLedger = emptyNotesLedger()): NotesLedger => {
  if (!Array.isArray(events)) refuseArgument('events', events, 'an array of notes events');
  return events.reduce(applyNotesEvent, checkedLedger(from));
};
