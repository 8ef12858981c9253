import { consolidateGlobalFactsWithReport } from './global.js';
import { type CategorizedFact, isNotesId, type NotesSessionConsolidatedEvent } from './model.js';
import {
  type NotesLedger,
  selectGlobalFacts,
  selectSessionNotes,
  selectUnconsolidatedSessions,
  selectUserNotes,
  storedKey,
  withUserNotes,
} from './ledger.js';

/** Which session of which user ends its stage, and when. */
export interface ConsolidationInput {
  readonly user: string;
  readonly session: string;
  /** Epoch milliseconds of the end of the stage. */
  readonly at: number;
}

/** The ledger after a consolidation, and the profile facts that fell off past the cap. */
export interface SessionConsolidation {
  readonly ledger: NotesLedger;
  readonly dropped: ReadonlyArray<CategorizedFact>;
}

/**
 * `consolidateSession`, with the facts that fell off the profile. A session already merged
 * as it stands, or unknown, leaves the same ledger.
 */
export const consolidateSessionWithReport = (ledger: NotesLedger, input: ConsolidationInput): SessionConsolidation => {
  if (typeof input !== 'object' || input === null) return { ledger, dropped: [] };
  const { user, session, at } = input;
  if (!isNotesId(user) || !isNotesId(session) || typeof at !== 'number' || !Number.isFinite(at))
    return { ledger, dropped: [] };
  const notes = selectSessionNotes(ledger, user, session);
  if (notes === undefined || notes.consolidated) return { ledger, dropped: [] };
  const { global, dropped } = consolidateGlobalFactsWithReport(selectGlobalFacts(ledger, user), notes.facts, at);
  const userNotes = selectUserNotes(ledger, user)!;
  const next = withUserNotes(ledger, user, {
    sessions: { ...userNotes.sessions, [storedKey(session)]: { ...notes, consolidated: true } },
    profile: global,
  });
  return { ledger: next, dropped };
};

/**
 * Merges the user's facts of `session` into their profile (`consolidateGlobalFactsWithReport`) and marks
 * the session merged; a later extraction that changes the list makes it mergeable again.
 */
export const consolidateSession = (ledger: NotesLedger, input: ConsolidationInput): NotesLedger =>
  consolidateSessionWithReport(ledger, input).ledger;

/** Which user ends a stage, for which session (default: every session with unmerged facts), and when. */
export interface EndStageInput {
  readonly user: string;
  readonly session?: string;
  readonly at: number;
}

/** What an end of stage did: the ledger after it, the events that record it, and what fell off the profile. */
export interface StageConsolidation extends SessionConsolidation {
  readonly events: ReadonlyArray<NotesSessionConsolidatedEvent>;
  /** The sessions merged, in merge order. */
  readonly sessions: ReadonlyArray<string>;
}

/**
 * Ends a stage for a user: merges `session`, or when none is named every session whose facts
 * changed since its last merge, oldest update first, so later sessions count as more recent.
 */
export const endStageWithReport = (ledger: NotesLedger, input: EndStageInput): StageConsolidation => {
  const { user, session, at } = input;
  const targets = session === undefined ? selectUnconsolidatedSessions(ledger, user) : [session];
  const events: NotesSessionConsolidatedEvent[] = [];
  const dropped: CategorizedFact[] = [];
  let next = ledger;
  for (const target of targets) {
    const event: NotesSessionConsolidatedEvent = { type: 'notes/sessionConsolidated', user, session: target, at };
    const result = consolidateSessionWithReport(next, event);
    if (result.ledger === next) continue;
    events.push(event);
    dropped.push(...result.dropped);
    next = result.ledger;
  }
  return { ledger: next, events, sessions: events.map((event) => event.session), dropped };
};
