import { consolidateGlobalFactsWithReport } from './global.js';
import { plainTimeOf } from '../base/time.js';
import { type CategorizedFact, isNotesId, listTimeOf, type NotesSessionConsolidatedEvent } from './model.js';
import {
  checkedLedger,
  type NotesLedger,
  ownLedger,
  selectGlobalFacts,
  selectSessionNotes,
  selectUnconsolidatedSessions,
  selectUserNotes,
  withSessionNotes,
  withUserNotes,
} from './ledger.js';

/** Which session of which user ends its stage, and when. */
export interface ConsolidationInput {
  readonly user: string;
  readonly session: string;
  /** Epoch milliseconds of the end of the stage. */
  readonly at: number;
}

/** The ledger after a consolidation, the profile facts that fell off past the cap, and whether a model should look again. */
export interface SessionConsolidation {
  readonly ledger: NotesLedger;
  readonly dropped: ReadonlyArray<CategorizedFact>;
  /** The merge left a fact that may tell of the same thing as an older one in other words. */
  readonly unsure: boolean;
}

const UNCHANGED = (ledger: NotesLedger): SessionConsolidation => ({ ledger, dropped: [], unsure: false });

/**
 * `consolidateSession`, with the facts that fell off the profile. The session's facts replace
 * what its own earlier merge put in the profile; each counts as told when the session first
 * told it (`NotedFact.at`, for one carried over from earlier messages), else when its latest
 * message was (`messagesAt`), and the session counts once in `sessionCount`, at its first merge.
 * Merging a session again as it stands, or an unknown one, leaves the same ledger.
 */
export const consolidateSessionWithReport = (ledger: NotesLedger, input: ConsolidationInput): SessionConsolidation => {
  checkedLedger(ledger);
  if (typeof input !== 'object' || input === null) return UNCHANGED(ledger);
  const { user, session } = input;
  const at = plainTimeOf(input.at);
  if (!isNotesId(user) || !isNotesId(session) || typeof at !== 'number' || !Number.isFinite(at))
    return UNCHANGED(ledger);
  const owned = ownLedger(ledger);
  const notes = selectSessionNotes(owned, user, session);
  if (notes === undefined) return UNCHANGED(ledger);
  const { global, dropped, unsure } = consolidateGlobalFactsWithReport(
    selectGlobalFacts(owned, user),
    notes.facts,
    at,
    { session, messagesAt: listTimeOf(notes), counts: notes.mergedAt === undefined },
  );
  const merged = { ...notes, consolidated: true, mergedAt: notes.mergedAt ?? at };
  if (global === selectGlobalFacts(owned, user) && notes.consolidated && notes.mergedAt !== undefined)
    return { ledger, dropped, unsure };
  const next = withUserNotes(owned, user, {
    ...withSessionNotes(selectUserNotes(owned, user), session, merged),
    profile: global,
  });
  return { ledger: next, dropped, unsure };
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

/** What an end of stage did: the ledger after it, the events that record it, what fell off the profile, and whether a model should look again. */
export interface StageConsolidation extends SessionConsolidation {
  readonly events: ReadonlyArray<NotesSessionConsolidatedEvent>;
  /** The sessions merged, in merge order. */
  readonly sessions: ReadonlyArray<string>;
}

/**
 * Ends a stage for a user: merges `session`, or when none is named every session whose facts
 * changed since its last merge, in the order of their latest messages (the profile is ordered
 * by those times whatever the order of merges).
 */
export const endStageWithReport = (ledger: NotesLedger, input: EndStageInput): StageConsolidation => {
  checkedLedger(ledger);
  // An input that is not one ends no stage, as `consolidateSessionWithReport` reads it.
  if (typeof input !== 'object' || input === null) return { ...UNCHANGED(ledger), events: [], sessions: [] };
  const { user, session, at } = input;
  const targets = session === undefined ? selectUnconsolidatedSessions(ledger, user) : [session];
  const events: NotesSessionConsolidatedEvent[] = [];
  const dropped: CategorizedFact[] = [];
  let next = ledger;
  let unsure = false;
  for (const target of targets) {
    const event: NotesSessionConsolidatedEvent = { type: 'notes/sessionConsolidated', user, session: target, at };
    const result = consolidateSessionWithReport(next, event);
    if (result.ledger === next) continue;
    events.push(event);
    dropped.push(...result.dropped);
    unsure ||= result.unsure;
    next = result.ledger;
  }
  return { ledger: next, events, sessions: events.map((event) => event.session), dropped, unsure };
};
