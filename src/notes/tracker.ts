/**
 * The notable-facts shell: the shared shell binding (`shell/shell.ts`: state, event log,
 * listeners) over the pure notes machine (`transition.ts`), plus what no pure code may do: the
 * clock, the model calls and their timeouts, the store calls, and the promises of `load`,
 * `endStage` and `settled`. No method waits for the model.
 *
 * Failures are values. Bad input is a `Left` with code `invalid_input`; a model that fails is
 * recorded as a failed extraction; a store or a clock that fails is reported to `onError`. Apart
 * from the calls into the caller's own code (the clock and `onError`, whose failures are expected
 * ones), the shell catches only at its outermost boundary (each public method, and each answer
 * of the model or the store arriving later): an exception nobody expected (a bug) becomes a
 * failure with code `internal`, returned where there is a caller and always reported to
 * `onError`, never an empty answer that looks like "nothing noted yet".
 */
import * as E from 'fp-ts/lib/Either.js';
import { describeError } from '../base/describe.js';
import { failure, internalFailure } from '../base/failure.js';
import { isBlank } from '../base/text.js';
import { createShell } from '../shell/shell.js';
import { callModel } from './callModel.js';
import { selectRecentTurns } from './conversation.js';
import { applyNotesEvent } from './events.js';
import { formatNotesBlocks } from './format.js';
import {
  closedStageMessage,
  selectAbandonedMessages,
  selectUnqueuedMessages,
  selectMergedAwaitingSave,
  unconfirmedReport,
} from './closeReports.js';
import { quietOrGivenUp } from './closeWait.js';
import type { NotesEffect, NotesInput, NotesMergedEffect, StoreCallFailure } from './inputs.js';
import {
  initialNotesState,
  isExtracting,
  isLoadNeedless,
  type NotesState,
  selectConversation,
  selectUnreadableRecord,
  selectUserStorage,
} from './machine.js';
import { isStorableNotesId, type NotesEvent } from './model.js';
import { selectRetained } from './release.js';
import { stepMachine } from './runner.js';
import { createSlotCache } from './slotCache.js';
import type {
  NotableFactsTracker,
  NotableFactsTrackerOptions,
  NotesContext,
  NotesTrackerFailure,
  RecordOutcome,
  StageReport,
} from './trackerTypes.js';
import { DEFAULT_MAX_EVENTS, MAX_TIMEOUT_MS, positive, resolveOptions, startingLedger } from './trackerOptions.js';
import {
  boundedByStore,
  createUnansweredCalls,
  givenUpAfterBound,
  givenUpInput,
  type PendingCall,
  type StoreBound,
} from './unanswered.js';
import { settledAndSavedSince } from './waiting.js';

export {
  DEFAULT_CACHE_SIZE,
  DEFAULT_LEASE_MARGIN_MS,
  DEFAULT_LEASE_POLL_MS,
  DEFAULT_MAX_EVENTS,
  DEFAULT_TIMEOUT_MS,
  MAX_TIMEOUT_MS,
} from './trackerOptions.js';

/** Something a caller waits for: resumed once `done` holds of the state, or with the failure of a bug that stopped the machine. */
interface Waiter {
  readonly done: (state: NotesState) => boolean;
  readonly resume: (outcome: E.Either<NotesTrackerFailure, void>) => void;
}

const invalidInput = (message: string): NotesTrackerFailure => failure('invalid_input', message);

const slotKey = (user: string, session: string): string => JSON.stringify([user, session]);

/** What a user or session id a tracker takes must be. */
const ID_RULE =
  'user and session must be ids of 1 to 200 characters, without U+0000 or an unpaired surrogate (no store could keep them)';

/** Creates a tracker over an empty ledger (or `initial`), keeping users' notes in `store` (default: in memory). */
export const createNotableFactsTracker = (options: NotableFactsTrackerOptions): NotableFactsTracker => {
  const { settings, complete, now, timeoutMs, store, onError, cacheSize, lease, pollMs, unused } =
    resolveOptions(options);
  const cache = createSlotCache(cacheSize);
  // What no store can keep is left out where it enters, or every save of its user would be refused for good.
  const initial = settings.initial === undefined ? undefined : startingLedger(settings.initial);

  const shell = createShell<NotesState, NotesEvent>({
    initial: initialNotesState({
      ...(lease === undefined ? {} : { lease }),
      ...(settings.categories === undefined ? {} : { categories: settings.categories }),
      ...(settings.softLimit === undefined ? {} : { softLimit: settings.softLimit }),
      ...(settings.historyTurns === undefined ? {} : { historyTurns: settings.historyTurns }),
      ...(initial === undefined ? {} : { ledger: initial.ledger }),
      ...(settings.consolidateWithModel === undefined ? {} : { consolidateWithModel: settings.consolidateWithModel }),
    }),
    // What the log folds into its snapshot: the ledger part (conversations are not logged).
    reduce: (state, event) => ({ ...state, ledger: applyNotesEvent(state.ledger, event) }),
    logUnchanged: true,
    maxEvents: Math.floor(positive(settings.maxEvents, DEFAULT_MAX_EVENTS)),
  });
  const waiters = new Set<Waiter>();
  /** The callers of `load` waiting for the answer of a load, by (user, session). */
  const loads = new Map<string, Array<(outcome: E.Either<NotesTrackerFailure, void>) => void>>();
  /** The callers of `endStage` waiting for their stage to merge, by the id the stage was given. */
  const stages = new Map<number, (outcome: E.Either<NotesTrackerFailure, StageReport>) => void>();
  /** The user of each end of stage waiting in `stages`. */
  const stageUsers = new Map<number, string>();
  let nextStage = 0;
  let lastTime = 0;
  /** The wake-ups asked for and not yet due: `close` cancels those left once its work has settled. */
  const wakes = new Set<ReturnType<typeof setTimeout>>();
  /** Set by `close`: the calls that bring work are refused. */
  let closing: Promise<void> | undefined;
  /** Set once `close` has settled: no wake-up is asked for any more. */
  let ended = false;
  /** What bounds the waits of `load` and `settled` on a store that leaves a call unanswered. */
  const storeBound: StoreBound = {
    calls: createUnansweredCalls(),
    lookMs: Math.min(timeoutMs, MAX_TIMEOUT_MS),
    timers: wakes,
    ended: () => ended,
    open: new Set(),
    givenUp: new Set(),
  };
  /** The failure of a wait the store held past the bound: `waited` says what the caller does without it. */
  const unanswered = (call: PendingCall, waited: string): NotesTrackerFailure =>
    failure(
      'unavailable',
      `the notes store left ${call.what} unanswered for ${storeBound.lookMs} ms or more (timeoutMs): ${waited} (a save's answer is still taken when it comes, a load's where it is newer than what the tracker holds)`,
    );

  /** Tells `onError`; an `onError` that throws is the caller's bug, with nowhere further to go. */
  const report = (problem: NotesTrackerFailure): void => {
    if (onError === undefined) return;
    try {
      onError(problem);
    } catch {
      // The caller's own error handler failed: there is no one left to tell.
    }
  };
  // Told once the tracker is made, so an `onError` that uses it finds it.
  for (const problem of [...unused, ...(initial?.problems ?? []).map((message) => failure('invalid_notes', message))])
    void Promise.resolve().then(() => report(problem));

  /** The outermost boundary: an exception here is a bug, returned and reported as `internal`. */
  const boundary = <T>(body: () => E.Either<NotesTrackerFailure, T>): E.Either<NotesTrackerFailure, T> => {
    try {
      return body();
    } catch (error) {
      const problem = internalFailure(error);
      report(problem);
      return E.left(problem);
    }
  };

  /**
   * The bug that stopped the machine while it took an answer that arrived later: what that
   * answer was for will never settle now, so whoever waits, or comes to wait, hears the bug
   * instead of waiting forever.
   */
  let stopped: NotesTrackerFailure | undefined;

  const stop = (problem: NotesTrackerFailure): void => {
    stopped ??= problem;
    for (const waiter of [...waiters]) waiter.resume(E.left(problem));
    waiters.clear();
    for (const [key, waiting] of [...loads]) {
      loads.delete(key);
      for (const resume of waiting) resume(E.left(problem));
    }
    for (const [id, resume] of [...stages]) {
      stages.delete(id);
      resume(E.left(problem));
    }
  };

  /** The clock port; one that fails or returns a non-finite value is reported, and the last good time stands. */
  const time = (): number => {
    let value: unknown;
    try {
      value = now();
    } catch (error) {
      report(failure('clock_failed', `the clock failed: ${describeError(error)}`));
      return lastTime;
    }
    if (typeof value === 'number' && Number.isFinite(value)) lastTime = value;
    else report(failure('clock_failed', `the clock returned ${String(value)}, not a finite time`));
    return lastTime;
  };

  /** Runs an input that arrives later (a model's or a store's answer): its own outermost boundary. */
  const later = (input: NotesInput): void => {
    // Closed: an answer that comes now is not taken, so no model or store call follows close().
    if (ended) return;
    const ran = boundary(() => E.right(run(input)));
    if (E.isLeft(ran)) stop(ran.left);
  };

  const stageReport = (merged: NotesMergedEffect): StageReport => ({
    user: merged.user,
    sessions: merged.sessions,
    profile: merged.profile,
    dropped: merged.dropped,
    ...(merged.unconfirmed === undefined ? {} : { unconfirmed: true }),
  });

  /** Runs `input` after `afterMs`, unless `close` has settled (which cancels the wake-ups still to come). */
  const wakeLater = (afterMs: number, input: NotesInput): void => {
    if (ended) return;
    const timer = setTimeout(
      () => {
        wakes.delete(timer);
        later(input);
      },
      Math.min(Math.max(0, afterMs), MAX_TIMEOUT_MS),
    );
    wakes.add(timer);
  };

  /** Carries out an effect once the run that asked for it is committed. */
  const perform = (effect: NotesEffect): void => {
    switch (effect.type) {
      case 'extract': {
        const { user, session } = effect;
        void callModel(complete, effect.prompt, timeoutMs).then((outcome) =>
          later({ type: 'notes/extractionSettled', user, session, outcome, at: time() }),
        );
        return;
      }
      case 'rewriteProfile': {
        const { user } = effect;
        void callModel(complete, effect.prompt, timeoutMs).then((outcome) =>
          later({ type: 'notes/profileRewriteSettled', user, outcome, at: time() }),
        );
        return;
      }
      case 'storeFailed':
        report(effect.failure);
        return;
      case 'wake':
        return wakeLater(effect.afterMs, { type: 'notes/leaseWoke', user: effect.user, session: effect.session });
      case 'backOff':
        // As `close` paces its retries of a failed save: `leasePollMs`, twice as long each time, up to a third of its bound.
        return wakeLater(
          Math.min(pollMs * 2 ** Math.min(effect.retries - 1, 52), Math.max(1, (lease?.ttlMs ?? timeoutMs) / 3)),
          { type: 'notes/backedOff', user: effect.user },
        );
      case 'merged': {
        const resume = effect.stage === undefined ? undefined : stages.get(effect.stage);
        if (resume === undefined) return;
        stages.delete(effect.stage!);
        stageUsers.delete(effect.stage!);
        resume(E.right(stageReport(effect)));
        return;
      }
      default:
        return;
    }
  };

  /** Answers the callers of `load` waiting for this load. */
  const answerLoads = (input: NotesInput): void => {
    // A late answer (of a load given up on) answers none of them: a load running now will.
    if (input.type !== 'notes/loaded' || input.late === true) return;
    const key = slotKey(input.user, input.session);
    const waiting = loads.get(key);
    if (waiting === undefined) return;
    loads.delete(key);
    const outcome = E.isLeft(input.outcome) ? E.left<StoreCallFailure>(input.outcome.left) : unreadableAfterLoad(input);
    for (const resume of waiting) resume(outcome);
  };

  /**
   * A load that found a record of the slot it cannot read at all: a failure for the caller, who
   * would otherwise take the context for all there is (`onError` heard why, once per version).
   */
  const unreadableAfterLoad = ({
    user,
    session,
  }: {
    user: string;
    session: string;
  }): E.Either<NotesTrackerFailure, void> => {
    const record = selectUnreadableRecord(selectUserStorage(shell.getState(), user), session);
    if (record === undefined) return E.right(undefined);
    const what =
      record === 'session'
        ? `the record of ${JSON.stringify(user)} in ${JSON.stringify(session)}`
        : `the profile of ${JSON.stringify(user)}`;
    return E.left(
      failure(
        'invalid_notes',
        `the notes store holds ${what} unreadable: its facts are not in the context, and changes to it wait in this tracker's memory until it can be read`,
      ),
    );
  };

  /**
   * Runs `first` through the machine, with the store answers that come at once, and commits the
   * result in one update: a bug half-way commits nothing (only a store write made before it
   * stands, and a later save meets it as a conflict). Then carries out the other effects and
   * wakes whoever waits. Returns the effects of `first`.
   */
  const run = (first: NotesInput): ReadonlyArray<NotesEffect> => {
    const step = stepMachine(shell.getState(), first, store, (answer, call) => {
      const watched = storeBound.calls.watch(answer, call);
      if (call.type !== 'load' && call.type !== 'listUnmerged') return void Promise.resolve(watched).then(later);
      // A load or list left unanswered past the bound is taken as failed: a later call loads again,
      // and an end of stage is not held. A late list is of no use: its end of stage has merged.
      const lateLoad = (input: NotesInput): void =>
        input.type === 'notes/loaded' ? later({ ...input, late: true }) : undefined;
      const givenUp = (pending: PendingCall): NotesInput => givenUpInput(storeBound.lookMs, call, pending);
      void givenUpAfterBound(storeBound, watched, givenUp, lateLoad, call).then(
        (input) => input !== undefined && later(input),
      );
    });
    shell.update(step.state, step.events);
    for (const effect of step.effects) perform(effect);
    for (const input of step.inputs) answerLoads(input);
    const now = shell.getState();
    for (const waiter of [...waiters])
      if (waiter.done(now)) {
        waiters.delete(waiter);
        waiter.resume(E.right(undefined));
      }
    return step.first;
  };

  const waitUntil = (done: (state: NotesState) => boolean): Promise<E.Either<NotesTrackerFailure, void>> =>
    stopped !== undefined
      ? Promise.resolve(E.left(stopped))
      : done(shell.getState())
        ? Promise.resolve(E.right(undefined))
        : new Promise((resume) => waiters.add({ done, resume }));

  /**
   * Ends a stage: the machine merges once the extractions of the messages recorded before now
   * have settled (at once when none runs), and the `merged` effect naming this stage answers.
   */
  const endStage = (user: string, session: string | undefined): Promise<E.Either<NotesTrackerFailure, StageReport>> => {
    const id = (nextStage += 1);
    // Waiting before the run: the merge may come in the same step, after a load the store answered at once.
    const merged = new Promise<E.Either<NotesTrackerFailure, StageReport>>((resume) => stages.set(id, resume));
    stageUsers.set(id, user);
    try {
      run({ type: 'notes/stageEnded', user, ...(session === undefined ? {} : { session }), at: time(), id });
    } catch (error) {
      stages.delete(id);
      stageUsers.delete(id);
      throw error;
    }
    if (stages.has(id)) boundStage(id, user);
    return merged;
  };

  /**
   * Looks every `timeoutMs` whether the end of stage `id` is merged and waits only for its save;
   * seen so at two looks in a row (the save has had `timeoutMs` at least), it is answered with the
   * profile as merged in memory, marked `unconfirmed`, so a store that takes a save and never
   * answers it does not hold the caller (the save's answer, whenever it comes, is taken as ever).
   * Until the merge is made (its extractions and loads, bounded by `timeoutMs` or by `close`), it looks again.
   */
  const boundStage = (id: number, user: string, seen = false): void => {
    if (ended) return;
    const timer = setTimeout(
      () => {
        wakes.delete(timer);
        const resume = stages.get(id);
        if (resume === undefined) return;
        const waiting = boundary(() => E.right(selectMergedAwaitingSave(shell.getState(), user, id)));
        if (E.isLeft(waiting) || waiting.right === undefined || !seen)
          return boundStage(id, user, E.isRight(waiting) && waiting.right !== undefined);
        stages.delete(id);
        stageUsers.delete(id);
        resume(E.right(unconfirmedReport(shell.getState(), user, waiting.right)));
      },
      Math.min(timeoutMs, MAX_TIMEOUT_MS),
    );
    wakes.add(timer);
  };

  /**
   * Waits for the extractions, rewrites, loads, saves and ends of stage running or asked for at
   * the call, then for the saves of what they changed; a store call left unanswered past the
   * bound ends the wait as `unavailable`.
   */
  const settled = (): Promise<E.Either<NotesTrackerFailure, void>> => {
    const done = settledAndSavedSince(shell.getState());
    if (stopped !== undefined || done(shell.getState())) return waitUntil(done);
    // Closed: no look would bound the wait, and what is left is what close gave up on.
    if (ended)
      return Promise.resolve(
        E.left(
          failure('closed', 'the tracker is closed with work unsettled that close gave up on: nothing to wait for'),
        ),
      );
    let waiter: Waiter | undefined;
    const waiting = new Promise<E.Either<NotesTrackerFailure, void>>((resume) => {
      waiter = { done, resume };
      waiters.add(waiter);
    });
    return boundedByStore(
      storeBound,
      waiting,
      () => true,
      (call) => unanswered(call, 'settled() stopped waiting, and what it waited for may still settle'),
      () => void waiters.delete(waiter!),
    );
  };

  /** The slot was just used: the cache keeps it, and lets go of the least recently used past its size. */
  const used = (user: string, session: string): void => {
    cache.use(user, session);
    for (const [oldest, slot] of cache.overflow()) run({ type: 'notes/releaseRequested', user: oldest, session: slot });
  };

  const validSlot = (user: unknown, session: unknown): E.Either<NotesTrackerFailure, readonly [string, string]> =>
    isStorableNotesId(user) && isStorableNotesId(session) ? E.right([user, session]) : E.left(invalidInput(ID_RULE));

  const validMessage = (user: unknown, session: unknown, text: unknown): E.Either<NotesTrackerFailure, string> =>
    E.chain(() =>
      typeof text === 'string' && !isBlank(text)
        ? E.right<NotesTrackerFailure, string>(text)
        : E.left(invalidInput('text must be non-empty text')),
    )(validSlot(user, session));

  const recordOutcome = (user: string, session: string): RecordOutcome => {
    const conversation = selectConversation(shell.getState(), user, session);
    if (conversation === undefined) return 'coalesced';
    // Started now, or first in line for the extraction that starts once the notes are loaded.
    return (isExtracting(conversation) && conversation.started === conversation.requested) ||
      (!isExtracting(conversation) && conversation.requested - conversation.started === 1)
      ? 'started'
      : 'coalesced';
  };

  /** The answer of a call that brings work once the tracker is closed, else the call's own. */
  const whenOpen = <T>(body: () => E.Either<NotesTrackerFailure, T>): E.Either<NotesTrackerFailure, T> =>
    closing === undefined ? body() : E.left(failure('closed', 'the tracker is closed: it takes no more work'));

  /** Tells `onError` of the changes the store never took, lost with the tracker (or not known to be). */
  const reportAbandoned = (): void => {
    const state = shell.getState();
    const unqueued = lease === undefined ? [] : selectUnqueuedMessages(state);
    for (const message of [...selectAbandonedMessages(state, lease !== undefined), ...unqueued])
      report(failure('closed', message));
  };

  const close = (): Promise<void> => {
    if (closing !== undefined) return closing;
    const waiting = boundary(() =>
      E.right(quietOrGivenUp({ lease, timeoutMs, pollMs, state: shell.getState, waitUntil, later, report })),
    );
    closing = (E.isLeft(waiting) ? Promise.resolve() : waiting.right).then(() => {
      ended = true;
      boundary(() => E.right(reportAbandoned()));
      for (const timer of wakes) clearTimeout(timer);
      wakes.clear();
      // Loads and waits for settling that the store held: answered, never left waiting on a tracker that is gone.
      for (const cut of [...storeBound.open])
        cut(failure('closed', 'the tracker closed before the notes store answered what this call waited for'));
      // What close itself waited for and gave up on: nothing will change the state now.
      for (const waiter of [...waiters]) waiter.resume(E.left(failure('closed', 'the tracker is closed')));
      waiters.clear();
      // Ends of stage the store never took: answered, never left waiting on a tracker that is gone.
      for (const [id, resume] of [...stages]) {
        const message = closedStageMessage(shell.getState(), stageUsers.get(id), id);
        stages.delete(id);
        stageUsers.delete(id);
        resume(E.left(failure('closed', message)));
      }
    });
    return closing;
  };

  const asynchronously = <T>(
    body: () => E.Either<NotesTrackerFailure, Promise<E.Either<NotesTrackerFailure, T>>>,
  ): Promise<E.Either<NotesTrackerFailure, T>> => {
    const started = boundary(body);
    return E.isLeft(started) ? Promise.resolve(started) : started.right;
  };

  return {
    recordUserMessage: (user, session, text) =>
      boundary(() =>
        whenOpen(() =>
          E.map(() => {
            run({ type: 'notes/userMessageRecorded', user, session, text, at: time() });
            const outcome = recordOutcome(user, session);
            used(user, session);
            return outcome;
          })(validMessage(user, session, text)),
        ),
      ),
    recordAssistantMessage: (user, session, text) =>
      boundary(() =>
        whenOpen(() =>
          E.map(() => {
            run({ type: 'notes/assistantMessageRecorded', user, session, text });
            used(user, session);
          })(validMessage(user, session, text)),
        ),
      ),
    contextFor: (user, session) =>
      boundary(() => {
        const slot = validSlot(user, session);
        if (E.isLeft(slot)) return slot;
        const state = shell.getState();
        const transcript = selectConversation(state, user, session)?.transcript ?? [];
        const context: NotesContext = {
          ...formatNotesBlocks(state.ledger, user, session),
          history: selectRecentTurns(transcript, state.settings.historyTurns),
        };
        return E.right(context);
      }),
    load: (user, session) =>
      asynchronously(() => {
        const slot = whenOpen(() => validSlot(user, session));
        if (E.isLeft(slot)) return slot;
        if (isLoadNeedless(shell.getState(), user, session)) {
          // Read already: the request still says it is in use (a release asked for earlier is off).
          // A load that failed read nothing, and a lease another tracker may hold may have been saved to since: those read the store again.
          run({ type: 'notes/loadRequested', user, session });
          used(user, session);
          return E.right(Promise.resolve(E.right(undefined)));
        }
        const key = slotKey(user, session);
        let waiting: ((outcome: E.Either<NotesTrackerFailure, void>) => void) | undefined;
        const answer = new Promise<E.Either<NotesTrackerFailure, void>>((resume) => {
          waiting = resume;
          loads.set(key, [...(loads.get(key) ?? []), resume]);
        });
        run({ type: 'notes/loadRequested', user, session });
        used(user, session);
        const letGo = (): void => {
          const left = (loads.get(key) ?? []).filter((resume) => resume !== waiting);
          if (left.length > 0) loads.set(key, left);
          else loads.delete(key);
        };
        return E.right(
          boundedByStore(
            storeBound,
            answer,
            (call) => call.user === user,
            (call) => unanswered(call, 'load answers without it, and the tracker carries on with what it has'),
            letGo,
          ),
        );
      }),
    endStage: (user, session) =>
      asynchronously(() =>
        whenOpen(() => {
          if (!isStorableNotesId(user) || (session !== undefined && !isStorableNotesId(session)))
            return E.left(invalidInput(ID_RULE));
          if (stopped !== undefined) return E.left(stopped);
          const merging = endStage(user, session);
          if (session !== undefined) used(user, session);
          return E.right(merging);
        }),
      ),
    release: (user, session) =>
      boundary(() =>
        E.map(() => {
          cache.forget(user, session);
          run({ type: 'notes/releaseRequested', user, session });
        })(validSlot(user, session)),
      ),
    close,
    retained: () => selectRetained(shell.getState()),
    settled: () => asynchronously(() => E.right(settled())),
    getSnapshot: () => shell.getState().ledger,
    subscribe: (listener) => {
      if (typeof listener !== 'function') return () => undefined;
      return shell.subscribe((next, previous) => {
        if (next.ledger !== previous.ledger) listener(next.ledger, previous.ledger);
      });
    },
    events: () => shell.events(),
    eventLog: () => {
      const { snapshot, events } = shell.eventLog();
      return { snapshot: snapshot.ledger, events };
    },
  };
};
