import { applyExtraction } from './applyExtraction.js';
import { consolidateSession, type NotesSessionConsolidatedEvent } from './consolidateSession.js';
import { emptyNotesLedger, type NotesLedger } from './ledger.js';
import type { CategorizedFact } from './model.js';
import type { ModelFailureReason } from './outcome.js';
import { rewriteProfile } from './rewriteProfile.js';

export type { NotesSessionConsolidatedEvent } from './consolidateSession.js';

/** An extraction returned the user's complete list for the session (`applyExtraction`). */
export interface NotesExtractedEvent {
  readonly type: 'notes/extracted';
  readonly user: string;
  readonly session: string;
  readonly facts: ReadonlyArray<CategorizedFact>;
  readonly at: number;
  /** The entries the parser dropped, for the record. */
  readonly warnings?: ReadonlyArray<string>;
}

/** An extraction failed or timed out; the list stays as it was. */
export interface NotesExtractionFailedEvent {
  readonly type: 'notes/extractionFailed';
  readonly user: string;
  readonly session: string;
  readonly reason: ModelFailureReason;
  readonly message: string;
  readonly at: number;
}

/** The model rewrote a user's profile (`rewriteProfile`). */
export interface NotesProfileRewrittenEvent {
  readonly type: 'notes/profileRewritten';
  readonly user: string;
  readonly facts: ReadonlyArray<CategorizedFact>;
  readonly at: number;
  readonly warnings?: ReadonlyArray<string>;
}

/** A model-backed profile rewrite failed; the profile stays as the deterministic merge left it. */
export interface NotesProfileRewriteFailedEvent {
  readonly type: 'notes/profileRewriteFailed';
  readonly user: string;
  readonly reason: ModelFailureReason;
  readonly message: string;
  readonly at: number;
}

/** Every ledger change and every failed model call, as serializable data: replaying them rebuilds the ledger. */
export type NotesEvent =
  | NotesExtractedEvent
  | NotesExtractionFailedEvent
  | NotesSessionConsolidatedEvent
  | NotesProfileRewrittenEvent
  | NotesProfileRewriteFailedEvent;

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
    case 'notes/extractionFailed':
    case 'notes/profileRewriteFailed':
    default:
      return ledger;
  }
};

/** Folds `events` over `from` (default: an empty ledger with the default categories). */
export const replayNotes = (events: ReadonlyArray<NotesEvent>, from: NotesLedger = emptyNotesLedger()): NotesLedger =>
  events.reduce(applyNotesEvent, from);
