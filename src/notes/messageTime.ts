/**
 * When the user messages an extraction covers count as told. Every tracker sharing a notes store
 * times the messages recorded through it by its own clock, and the records it reads were timed by
 * the clocks of the trackers that wrote them: a server whose clock is behind would time a
 * correction, told after another server merged the fact it corrects, before that fact, and the
 * merge (newer wins, by the time told) and the session's blocks would keep the fact. What the
 * tracker holds of the user's session and profile once they are loaded for the extraction was
 * told before the messages it extracts, whatever clock timed it, so they count as told no earlier
 * than a millisecond after the latest of those times. Settled when the extraction starts, never
 * when a message is recorded: every extraction starts from records read from the store (or kept
 * since), so a tracker that let go of the session and one that kept it time the messages alike.
 */
import { timeAfter } from '../base/time.js';
import { type NotesLedger, selectGlobalFacts, selectSessionNotes } from './ledger.js';
import { listTimeOf } from './model.js';

/** The latest time told in what `ledger` holds of `user` in `session` and of their profile (-Infinity: nothing). */
const latestToldAt = (ledger: NotesLedger, user: string, session: string): number => {
  const notes = selectSessionNotes(ledger, user, session);
  return (selectGlobalFacts(ledger, user)?.facts ?? []).reduce(
    (latest, fact) => Math.max(latest, fact.at ?? Number.NEGATIVE_INFINITY),
    notes === undefined ? Number.NEGATIVE_INFINITY : listTimeOf(notes),
  );
};

/**
 * The time of the messages of `user` in `session` an extraction starting now covers, the latest
 * of which the clock of the tracker that recorded it says came at `at`: no earlier than a
 * millisecond after the latest time told in what `ledger` holds of the session and the profile
 * (held at the end of the year 9999).
 */
export const messageTime = (ledger: NotesLedger, user: string, session: string, at: number): number => {
  const latest = latestToldAt(ledger, user, session);
  return Number.isFinite(latest) ? Math.max(at, timeAfter(latest, 1)) : at;
};
