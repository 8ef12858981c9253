/**
 * Ends of stage and profile rewrites in the notes machine. An end of stage waits for the
 * extractions of the messages recorded before it, as state: it is kept pending until they have
 * settled, and merges then, in the same transition that settles the last of them, so the live
 * tracker and a log replay merge at the same point. After a merge the model may be asked to
 * rewrite the profile (`consolidateWithModel`): after every change, only when the merge is
 * unsure (the default), or never.
 */
import * as E from 'fp-ts/lib/Either.js';
import { describeValue } from '../base/describe.js';
import * as PMap from '../persistent/persistentMap.js';
import { endStageWithReport } from './consolidateSession.js';
import { applyNotesEvent } from './events.js';
import {
  andThen,
  type NotesEffect,
  type NotesProfileRewriteSettled,
  type NotesStageEnded,
  type NotesTransition,
  type NotesUnmergedListed,
} from './inputs.js';
import { selectGlobalFacts, storedKey } from './ledger.js';
import {
  type NotesPendingStage,
  type NotesProfileRewrite,
  type NotesState,
  selectProfileRewrite,
  selectUserMachine,
  selectUserStorage,
  withLedger,
  withRewrite,
  withStages,
  withStorage,
} from './machine.js';
import { isNotesId } from './model.js';
import { settleProfileRewrite } from './port.js';
import { buildProfileConsolidationPrompt } from './prompt.js';
import { releaseLater } from './release.js';
import { recordChanges, requireLoaded } from './storage.js';
import { awaitStored } from './stageAnswers.js';

/** Starts the rewrite covering every request so far, when the user has a profile to rewrite. */
const startRewrite = (state: NotesState, user: string, rewrite: NotesProfileRewrite): NotesTransition => {
  const profile = selectGlobalFacts(state.ledger, user);
  const next: NotesProfileRewrite =
    profile === undefined
      ? { requested: rewrite.requested, started: rewrite.requested, settled: rewrite.requested }
      : { requested: rewrite.requested, started: rewrite.requested, settled: rewrite.settled, basis: profile };
  const nextState = withRewrite(state, user, next);
  if (profile === undefined) return [nextState, []];
  const prompt = buildProfileConsolidationPrompt({ facts: profile.facts, categories: state.settings.categories });
  return [nextState, [{ type: 'rewriteProfile', user, prompt }]];
};

/**
 * Starts the rewrite of the profile of `user` that was asked for and not started, unless one
 * runs (that one's end starts it): a rewrite dropped as stale after a load asks again so.
 */
export const resumeRewrite = (state: NotesState, user: string): NotesTransition => {
  const rewrite = selectProfileRewrite(state, user);
  return rewrite.requested > rewrite.started && rewrite.started <= rewrite.settled
    ? startRewrite(state, user, rewrite)
    : [state, []];
};

/** Asks for a rewrite of the profile of `user`, or folds the request into the one running. */
const requestRewrite = (state: NotesState, user: string): NotesTransition => {
  const rewrite = selectProfileRewrite(state, user);
  const requested = { ...rewrite, requested: rewrite.requested + 1 };
  return requested.started > requested.settled
    ? [withRewrite(state, user, requested), []]
    : startRewrite(state, user, requested);
};

/**
 * Merges the stage now, at `at`: the merge's events, the save, and a rewrite if one is wanted.
 * Its `merged` effect answers once the save has settled (`stageAnswers.ts`).
 */
export const mergeStage = (state: NotesState, user: string, stage: NotesPendingStage, at: number): NotesTransition => {
  const { session, id } = stage;
  const before = selectGlobalFacts(state.ledger, user);
  const result = endStageWithReport(state.ledger, { user, ...(session === undefined ? {} : { session }), at });
  const merged = withLedger(state, result.ledger);
  const after = selectGlobalFacts(merged.ledger, user);
  const effects = result.events.map((event): NotesEffect => ({ type: 'record', event }));
  const answer = {
    sessions: result.sessions,
    dropped: result.dropped,
    ...(id === undefined ? {} : { stage: id }),
    changes: result.events.filter((event) => event.type === 'notes/sessionConsolidated'),
  };
  const answering = andThen([merged, effects], (next) => awaitStored(next, user, answer));
  const saved = andThen(answering, (next) => recordChanges(next, user, result.events, stage.fence));
  const mode = state.settings.consolidateWithModel;
  const wanted = after !== undefined && after !== before && (mode === true || (mode === 'auto' && result.unsure));
  const rewritten = wanted ? andThen(saved, (next) => requestRewrite(next, user)) : saved;
  // What it loaded only to merge goes once saved, as a released session does.
  const { fetched = [] } = stage;
  return fetched.length === 0 ? rewritten : andThen(rewritten, (next) => [releaseLater(next, user, fetched), []]);
};

/**
 * True once the session named (or, without one, every session the store listed) is loaded and
 * every conversation the stage waits for has settled the requests it had.
 */
const isReady = (state: NotesState, user: string, stage: NotesPendingStage): boolean => {
  const { conversations, storage } = selectUserMachine(state, user);
  return (
    stage.listing === undefined &&
    (stage.session === undefined || !storage.loading.includes(storedKey(stage.session))) &&
    (stage.loads ?? []).every((key) => !storage.loading.includes(key)) &&
    stage.waitFor.every(([key, requested]) => {
      const conversation = PMap.get(conversations, key);
      return conversation === undefined || conversation.settled >= requested;
    })
  );
};

/** Merges the waiting ends of stage of `user` whose extractions have all settled, oldest first, at `at`. */
export const mergeReadyStages = (state: NotesState, user: string, at: number): NotesTransition => {
  const { stages } = selectUserMachine(state, user);
  const ready = stages.filter((stage) => isReady(state, user, stage));
  if (ready.length === 0) return [state, []];
  const waiting = withStages(
    state,
    user,
    stages.filter((stage) => !ready.includes(stage)),
  );
  return ready.reduce<NotesTransition>(
    (done, stage) => andThen(done, (next) => mergeStage(next, user, stage, Math.max(stage.at, at))),
    [waiting, []],
  );
};

/**
 * A stage ended: merge now when the extractions of the messages recorded before it have
 * settled, else keep it waiting for them (never for later messages: it ends under traffic).
 * A session named is loaded first (a tracker that released it, or never served it, merges what
 * the store holds of it, into the profile the store holds); without one, the store is asked
 * which of the user's sessions have facts not merged yet, and those the tracker does not hold
 * are loaded first, so it merges every one of them, not only those it holds.
 */
export const onStageEnded = (state: NotesState, input: NotesStageEnded): NotesTransition => {
  const { user, session, at, id } = input;
  if (!isNotesId(user) || (session !== undefined && !isNotesId(session)) || !Number.isFinite(at))
    return [
      state,
      [
        {
          type: 'merged',
          user: describeValue(user),
          sessions: [],
          dropped: [],
          ...(id === undefined ? {} : { stage: id }),
        },
      ],
    ];
  return session === undefined
    ? endNow(state, input, user)
    : andThen(requireLoaded(state, user, session), (loading) => endNow(loading, input, user));
};

/**
 * Merges the stage now when nothing it waits for is in flight, else keeps it waiting. Without a
 * session it waits for the store's list of the user's unmerged sessions first.
 */
const endNow = (state: NotesState, input: NotesStageEnded, user: string): NotesTransition => {
  const { session, at, id } = input;
  // The conversations with messages no settled extraction covers: the busy ones, not every one served.
  const { busy, conversations, storage } = selectUserMachine(state, user);
  const waitFor = busy
    .filter((key) => session === undefined || key === storedKey(session))
    .map((key) => [key, PMap.get(conversations, key)!.requested] as const);
  const call = (storage.lists ?? 0) + 1;
  const stage: NotesPendingStage = {
    ...(id === undefined ? {} : { id }),
    ...(session === undefined ? { listing: call } : { session }),
    at,
    waitFor,
  };
  if (isReady(state, user, stage)) return mergeStage(state, user, stage, at);
  const waiting = withStages(state, user, [...selectUserMachine(state, user).stages, stage]);
  return session === undefined
    ? [withStorage(waiting, user, { ...storage, lists: call }), [{ type: 'listUnmerged', user, call }]]
    : [waiting, []];
};

/**
 * The store listed the sessions of `user` with facts not merged yet, for the end of stage that
 * asked: those not held are loaded, and it waits for them (a failed list is reported, and it
 * merges what the tracker holds). Then merges what is ready.
 */
export const onUnmergedListed = (state: NotesState, input: NotesUnmergedListed): NotesTransition => {
  const { user, call, outcome } = input;
  if (!isNotesId(user)) return [state, []];
  const { stages } = selectUserMachine(state, user);
  const stage = stages.find((waiting) => waiting.listing === call);
  if (stage === undefined) return [state, []];
  const { listing: _answered, ...rest } = stage;
  const listed = E.isRight(outcome) ? [...new Set(outcome.right.filter(isNotesId))] : [];
  const before = selectUserStorage(state, user);
  const [loading, effects] = listed.reduce<NotesTransition>(
    (done, session) => andThen(done, (next) => requireLoaded(next, user, session)),
    [state, E.isLeft(outcome) ? [{ type: 'storeFailed', user, failure: outcome.left }] : []],
  );
  const now = selectUserStorage(loading, user).loading;
  const loads = listed.map(storedKey).filter((key) => now.includes(key));
  const fetched = loads.filter((key) => !before.loading.includes(key));
  const answered: NotesPendingStage = {
    ...rest,
    ...(loads.length === 0 ? {} : { loads }),
    ...(fetched.length === 0 ? {} : { fetched }),
  };
  const next = withStages(
    loading,
    user,
    selectUserMachine(loading, user).stages.map((waiting) => (waiting === stage ? answered : waiting)),
  );
  return andThen([next, effects], (after) => mergeReadyStages(after, user, Number.NEGATIVE_INFINITY));
};

/** The running rewrite of a user's profile has an outcome: apply it unless the profile changed since. */
export const onProfileRewriteSettled = (state: NotesState, input: NotesProfileRewriteSettled): NotesTransition => {
  const { user, outcome, at } = input;
  const rewrite = selectProfileRewrite(state, user);
  if (rewrite.started <= rewrite.settled) return [state, []];
  // A rewrite of a profile that has changed since would undo the newer merge: that merge asked for another.
  const current = selectGlobalFacts(state.ledger, user) === rewrite.basis;
  const event = current ? settleProfileRewrite(user, outcome, at, state.ledger.categories) : undefined;
  const applied = event === undefined ? state : withLedger(state, applyNotesEvent(state.ledger, event));
  const done: NotesProfileRewrite = {
    requested: current ? rewrite.requested : Math.max(rewrite.requested, rewrite.started + 1),
    started: rewrite.started,
    settled: rewrite.started,
  };
  const recorded: NotesTransition = [
    withRewrite(applied, user, done),
    event === undefined ? [] : [{ type: 'record', event }],
  ];
  const saved =
    applied === state || event === undefined
      ? recorded
      : andThen(recorded, (next) => recordChanges(next, user, [event]));
  return done.requested === done.started ? saved : andThen(saved, (next) => startRewrite(next, user, done));
};
