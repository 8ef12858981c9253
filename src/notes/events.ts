import { applyExtraction } from './applyExtraction.js';
import { applyLoaded } from './applyLoaded.js';
import { applyReleased } from './applyReleased.js';
import { consolidateSession } from './consolidateSession.js';
import { emptyNotesLedger, type NotesLedger } from './ledger.js';
import type { NotesEvent } from './model.js';
import { rewriteProfile } from './rewriteProfile.js';

export type {
  NotesEvent,
  NotesExtractedEvent,
  NotesExtractionFailedEvent,
  NotesLoadedEvent,
  NotesProfileRewriteFailedEvent,
  NotesProfileRewrittenEvent,
  NotesReleasedEvent,
  NotesSessionConsolidatedEvent,
} from './model.js';

/** Applies one event with its reducer; failures and unknown events leave the same ledger. */
export const applyNotesEvent = (ledger: NotesLedger, event: NotesEvent): NotesLedger => {
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
    case 'notes/extractionFailed':
    case 'notes/profileRewriteFailed':
    default:
      return ledger;
  }
};

/** Folds `events` over `from` (default: an empty ledger with the default categories). */
export const replayNotes = (events: ReadonlyArray<NotesEvent>, from: NotesLedger = emptyNotesLedger()): NotesLedger =>
  events.reduce(applyNotesEvent, from);
