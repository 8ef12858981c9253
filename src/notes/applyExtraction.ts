import {
  type CategorizedFact,
  factKey,
  isNotesId,
  keepValidFacts,
  listTimeOf,
  NOTES_LIMITS,
  type NotedFact,
  sameFacts,
  type SessionNotes,
  toldTimeOf,
} from './model.js';
import { plainTimeOf } from '../base/time.js';
import {
  checkedLedger,
  type NotesLedger,
  ownLedger,
  selectSessionNotes,
  selectUserNotes,
  withSessionNotes,
  withUserNotes,
} from './ledger.js';

/** A successful extraction: the complete list the model returned for a user in a session. */
export interface ExtractionInput {
  readonly user: string;
  readonly session: string;
  readonly facts: ReadonlyArray<CategorizedFact>;
  /** Epoch milliseconds the extraction finished. */
  readonly at: number;
  /** Epoch milliseconds of the latest user message the extraction covered (default `at`). */
  readonly messagesAt?: number;
}

/**
 * `facts` with the time each was first told. The extractor lists every fact of the session each
 * time, so one the list carries over from `current` (by `factKey`) was not told again: it keeps
 * its own time, or a merge would count it as told with the session's latest message, newer than
 * a correction told meanwhile in another session. The others were told in the messages the list
 * covers (`listTime`), which their `at` leaves unsaid, as it does for a list saved before facts
 * had times.
 */
const withToldTimes = (
  facts: ReadonlyArray<CategorizedFact>,
  current: SessionNotes | undefined,
  listTime: number,
): ReadonlyArray<NotedFact> => {
  if (current === undefined) return facts;
  const toldBefore = new Map(current.facts.map((fact) => [factKey(fact), toldTimeOf(current, fact)]));
  return facts.map((fact) => {
    // Never later than the list that holds it: a list covering earlier messages may follow (another process's).
    const told = Math.min(toldBefore.get(factKey(fact)) ?? listTime, listTime);
    return told === listTime ? fact : { ...fact, at: told };
  });
};

/**
 * Replaces the user's list in the session with `facts` (full-list output: a fact the model
 * left out is gone), validated against the ledger's categories, deduplicated and capped at 25
 * (the newest kept); a fact carried over keeps the time it was first told (`withToldTimes`).
 * Only this (user, session) changes, at a cost independent of the number of users. Invalid
 * input, or a list equal to the current one, returns the same ledger.
 */
export const applyExtraction = (ledger: NotesLedger, input: ExtractionInput): NotesLedger => {
  checkedLedger(ledger);
  if (typeof input !== 'object' || input === null) return ledger;
  const { user, session } = input;
  // -0 read as 0, so the ledger deep-equals its JSON round trip (see `plainTime`).
  const [at, messagesAt] = [plainTimeOf(input.at), plainTimeOf(input.messagesAt)];
  if (!isNotesId(user) || !isNotesId(session) || typeof at !== 'number' || !Number.isFinite(at)) return ledger;
  const owned = ownLedger(ledger);
  const current = selectSessionNotes(owned, user, session);
  const { facts } = keepValidFacts(
    Array.isArray(input.facts) ? input.facts : [],
    owned.categories,
    NOTES_LIMITS.hardCap,
    current?.facts,
  );
  if (sameFacts(current?.facts ?? [], facts)) return ledger;
  const told = typeof messagesAt === 'number' && Number.isFinite(messagesAt) ? { messagesAt } : {};
  return withUserNotes(
    owned,
    user,
    withSessionNotes(selectUserNotes(owned, user), session, {
      facts: withToldTimes(facts, current, listTimeOf({ updatedAt: at, ...told })),
      updatedAt: at,
      consolidated: false,
      ...told,
      ...(current?.mergedAt === undefined ? {} : { mergedAt: current.mergedAt }),
    }),
  );
};
