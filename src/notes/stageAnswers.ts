/**
 * The answers of ends of stage, pure: a merge is answered once the save of its changes has
 * settled, with the profile as that save stored it. After a conflict the save that lands writes
 * the store's newer records with the merge applied to them again (another tracker's facts
 * included), which the profile merged in memory did not hold. When no save of the changes is
 * under way any more (it failed, was given up, or waits on a record the store holds
 * unreadable), the answer gives the profile as merged in memory: the changes wait there for the
 * next save, and a caller is never left waiting on a store that does not take them.
 */
import type { NotesEffect, NotesTransition } from './inputs.js';
import { selectGlobalFacts } from './ledger.js';
import type { GlobalFacts } from './global.js';
import type { NotesEvent } from './model.js';
import { type NotesStageAnswer, type NotesState, selectUserStorage, withStorage } from './machine.js';

/** The `merged` effect answering `answer` with `profile`. */
const mergedEffect = (
  user: string,
  answer: NotesStageAnswer,
  profile: GlobalFacts | undefined,
  unconfirmed?: true,
): NotesEffect => ({
  type: 'merged',
  user,
  sessions: answer.sessions,
  dropped: answer.dropped,
  ...(profile === undefined ? {} : { profile }),
  ...(answer.stage === undefined ? {} : { stage: answer.stage }),
  ...(unconfirmed === undefined ? {} : { unconfirmed }),
});

/**
 * `state` with the answers of `user` that `isDue` picks given, each as a `merged` effect with
 * `profile`, the others kept waiting.
 */
const answerDue = (
  state: NotesState,
  user: string,
  isDue: (answer: NotesStageAnswer) => boolean,
  profile: GlobalFacts | undefined,
  unconfirmed?: true,
): NotesTransition => {
  const storage = selectUserStorage(state, user);
  const waiting = storage.answers ?? [];
  const due = waiting.filter(isDue);
  if (due.length === 0) return [state, []];
  const { answers: _given, ...rest } = storage;
  const kept = waiting.filter((answer) => !due.includes(answer));
  return [
    withStorage(state, user, kept.length === 0 ? rest : { ...rest, answers: kept }),
    due.map((answer) => mergedEffect(user, answer, profile, unconfirmed)),
  ];
};

/**
 * A merge of `user` just made: kept until the save of `answer.changes` settles. One that changed
 * nothing waits, as the merge before it does, for the save of the profile changes still unsaved
 * (an earlier merge's, whose save runs or failed): its profile holds them too. With none, it is
 * answered at once.
 */
export const awaitStored = (state: NotesState, user: string, answer: NotesStageAnswer): NotesTransition => {
  const storage = selectUserStorage(state, user);
  const changes =
    answer.changes.length > 0
      ? answer.changes
      : storage.unsaved.filter(
          (event) => event.type === 'notes/sessionConsolidated' || event.type === 'notes/profileRewritten',
        );
  if (changes.length === 0) return [state, [mergedEffect(user, answer, selectGlobalFacts(state.ledger, user))]];
  return [withStorage(state, user, { ...storage, answers: [...(storage.answers ?? []), { ...answer, changes }] }), []];
};

/**
 * A save of `user` landed, writing `written` as the profile: the merges whose changes are no
 * longer unsaved (this save wrote them) are answered with it.
 */
export const answerLanded = (state: NotesState, user: string, written: GlobalFacts | undefined): NotesTransition => {
  const { unsaved } = selectUserStorage(state, user);
  return answerDue(
    state,
    user,
    (answer) => answer.changes.every((change) => !unsaved.includes(change)),
    written ?? selectGlobalFacts(state.ledger, user),
  );
};

/**
 * The merges of `user` still waiting once no save is under way (none runs, waits after a
 * conflict, or waits for a load): their save failed or cannot be made now, and they are
 * answered with the profile as merged in memory. What every transition ends with.
 */
export const answerUnsaved = (state: NotesState, user: string): NotesTransition => {
  const storage = selectUserStorage(state, user);
  if (
    storage.answers === undefined ||
    storage.saving !== undefined ||
    storage.backingOff !== undefined ||
    storage.loading.length > 0
  )
    return [state, []];
  return answerDue(state, user, () => true, selectGlobalFacts(state.ledger, user));
};

/**
 * The merges of `user` some of whose changes (`dropped`) the store refused as `invalid_input`:
 * never answered as stored, they are answered at once with the profile as merged in memory,
 * marked `unconfirmed`.
 */
export const answerRefused = (state: NotesState, user: string, dropped: ReadonlyArray<NotesEvent>): NotesTransition =>
  answerDue(
    state,
    user,
    (answer) => answer.changes.some((change) => dropped.includes(change)),
    selectGlobalFacts(state.ledger, user),
    true,
  );
