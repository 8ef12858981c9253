/**
 * What the notes tracker says, pure, of the work a store has not confirmed when it answers
 * without the store: an end of stage answered before its save did (`unconfirmed`), and what
 * `close` tells of the changes and ends of stage it leaves. A save sent and never answered may
 * have been written: its outcome is said to be unknown, never lost.
 */
import * as PMap from '../persistent/persistentMap.js';
import type { OutgoingItem } from './leaseState.js';
import { idOfKey, selectGlobalFacts } from './ledger.js';
import { type NotesStageAnswer, type NotesState, selectUserStorage } from './machine.js';
import type { StageReport } from './trackerTypes.js';
import { selectUnsaved } from './waiting.js';

/** The merge of the end of stage `id` of `user`, made and waiting for its save to settle, if it is. */
export const selectMergedAwaitingSave = (state: NotesState, user: string, id: number): NotesStageAnswer | undefined =>
  selectUserStorage(state, user).answers?.find((answer) => answer.stage === id);

/** The answer of an end of stage whose save the store has not answered: the profile as merged in memory, unconfirmed. */
export const unconfirmedReport = (state: NotesState, user: string, merged: NotesStageAnswer): StageReport => ({
  user,
  sessions: merged.sessions,
  profile: selectGlobalFacts(state.ledger, user),
  dropped: merged.dropped,
  unconfirmed: true,
});

/** Why `close` answers the end of stage `id` of `user` (if known) left waiting as `closed`. */
export const closedStageMessage = (state: NotesState, user: string | undefined, id: number): string =>
  user !== undefined &&
  selectMergedAwaitingSave(state, user, id) !== undefined &&
  selectUserStorage(state, user).saving !== undefined
    ? 'the tracker closed before the store answered the save of this end of stage: it was merged in memory, and whether the store holds the merge is unknown'
    : 'the tracker closed before the store took this end of stage: it was not merged';

/**
 * What `close` tells `onError` of each user's changes the store has not confirmed and that are
 * lost with the tracker: without leases, all of them; with leases (`withLeases`), those kept from
 * a record the store holds unreadable, whose work was said done and left the queue, so no next
 * holder redoes it (the rest stay in the queue for that holder).
 */
export const selectAbandonedMessages = (state: NotesState, withLeases: boolean): ReadonlyArray<string> =>
  selectUnsaved(state)
    .filter(({ kept }) => !withLeases || kept)
    .map(({ user, changes, sessions, profile, sent }) => {
      const what = [
        ...sessions.map((session) => `session ${JSON.stringify(session)}`),
        ...(profile ? ['the profile'] : []),
      ];
      const counted = `${changes} change${changes === 1 ? '' : 's'} to the notes of ${JSON.stringify(user)} (${what.join(', ')})`;
      return sent
        ? `the tracker closed with ${counted} whose save the store never answered: whether it holds them is unknown, and what it does not hold is lost with the tracker`
        : `the tracker closed with ${counted} the store did not take: they are lost with the tracker`;
    });

/** `count` messages, spelled out. */
const messages = (count: number): string => `${count} message${count === 1 ? '' : 's'}`;

/**
 * What `close` tells `onError` of the messages recorded here that no lease queue is known to hold:
 * those still to add (every call that would have added them failed) are in no holder's queue and
 * are lost with the tracker; those of a call the store never answered may be in it or not.
 */
export const selectUnqueuedMessages = (state: NotesState): ReadonlyArray<string> => {
  const said: string[] = [];
  const count = (items: ReadonlyArray<OutgoingItem>): number => items.filter((item) => item.kind === 'message').length;
  PMap.forEach(state.users, ({ conversations }, user) =>
    PMap.forEach(conversations, ({ lease }, key) => {
      if (lease === undefined) return;
      const where = `of ${JSON.stringify(user)} in session ${JSON.stringify(idOfKey(key))}`;
      const [unsent, unanswered] = [count(lease.outbox), count(lease.sending)];
      if (unsent > 0)
        said.push(
          `the tracker closed with ${messages(unsent)} ${where} it could not add to the queue of that session's lease: no holder has them, and they are lost with the tracker, never extracted`,
        );
      if (unanswered > 0)
        said.push(
          `the tracker closed with ${messages(unanswered)} ${where} whose lease call the store never answered: whether that session's queue holds them is unknown, and what it does not hold is lost with the tracker`,
        );
    }),
  );
  return said;
};
