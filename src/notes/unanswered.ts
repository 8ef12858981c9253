/**
 * The store calls a tracker made whose answers have not come yet, so that a caller waiting on a
 * store that never answers (`load`, `settled`) is answered after a bound rather than held forever.
 * Shell state: it is the tracker's, never the machine's.
 */
import * as E from 'fp-ts/lib/Either.js';
import type { NotesInput, NotesListUnmergedEffect, NotesLoadEffect } from './inputs.js';
import { storeFailure } from './storeAnswer.js';
import type { StoreEffect } from './storeCall.js';
import type { NotesTrackerFailure } from './trackerTypes.js';

/** A store call whose answer has not come: whose it is, and what it is, in words. */
export interface PendingCall {
  readonly user: string;
  readonly what: string;
}

/** The calls watched, and those among them still unanswered. */
export interface UnansweredCalls {
  /** Watches `answer` (of `call`) until it settles, and passes it on. */
  readonly watch: <T>(answer: PromiseLike<T>, call: StoreEffect) => PromiseLike<T>;
  /** The calls whose answers have not come, each the same object for as long as it waits. */
  readonly pending: () => ReadonlyArray<PendingCall>;
  /** Stops watching the call `answer` (as `watch` returned it) stands for: it was given up on. */
  readonly forget: (answer: PromiseLike<unknown>) => void;
  /** The call `answer` (as `watch` returned it) stands for, while it waits. */
  readonly find: (answer: PromiseLike<unknown>) => PendingCall | undefined;
}

/** A store call in words, for the failure of a wait it held. */
const describeCall = (call: StoreEffect): string => {
  const user = JSON.stringify(call.user);
  switch (call.type) {
    case 'load':
      return `the load of the notes of ${user} in ${JSON.stringify(call.session)}`;
    case 'save':
      return `a save of the notes of ${user}`;
    case 'lease':
      return `a lease call for ${user} in ${JSON.stringify(call.session)}`;
    case 'listUnmerged':
      return `the list of the unmerged sessions of ${user}`;
  }
};

/** An empty set of watched calls. */
export const createUnansweredCalls = (): UnansweredCalls => {
  const calls = new Map<PromiseLike<unknown>, PendingCall>();
  return {
    watch: (answer, call) => {
      calls.set(answer, { user: call.user, what: describeCall(call) });
      const forget = (): void => {
        calls.delete(answer);
      };
      answer.then(forget, forget);
      return answer;
    },
    pending: () => [...calls.values()],
    forget: (answer) => {
      calls.delete(answer);
    },
    find: (answer) => calls.get(answer),
  };
};

/**
 * The answer of the watched load or list `answer` (of `call`), or, when it has not come within
 * `bound.lookMs`, the failed answer `givenUp` makes, the call given up on: the machine then takes
 * it as a failed load (and loads again at the next call that needs the records) or list. The answer that comes after that
 * is passed on through `late` (the machine takes of it only what is newer than what it holds).
 * Without this, one store promise that never settles would hold the session's load for good (a
 * load runs, so no other is made) and keep its messages from ever being extracted, or hold an end
 * of stage for good.
 */
export const givenUpAfterBound = <T>(
  bound: StoreBound,
  answer: PromiseLike<T>,
  givenUp: (call: PendingCall) => T,
  late: (answer: T) => void,
  call: StoreEffect,
): Promise<T | undefined> =>
  new Promise((resolve) => {
    let gaveUp = false;
    let finished = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const finish = (outcome: T | undefined): void => {
      if (finished) return;
      finished = true;
      if (timer !== undefined) {
        clearTimeout(timer);
        bound.timers.delete(timer);
      }
      resolve(outcome);
    };
    if (!bound.ended()) {
      timer = setTimeout(() => {
        bound.timers.delete(timer!);
        timer = undefined;
        if (finished) return;
        const pending = bound.calls.find(answer) ?? { user: call.user, what: describeCall(call) };
        bound.calls.forget(answer);
        gaveUp = true;
        for (const tell of [...bound.givenUp]) tell(pending);
        finish(givenUp(pending));
      }, bound.lookMs);
      bound.timers.add(timer);
    }
    answer.then(
      (value) => (gaveUp ? late(value) : finish(value)),
      () => finish(undefined),
    );
  });

/** What bounds the waits of a tracker's callers on its store. */
export interface StoreBound {
  readonly calls: UnansweredCalls;
  /** How long apart the looks are: a call seen unanswered at two looks in a row has waited this long at least. */
  readonly lookMs: number;
  /** Where the looks' timers are kept, so that `close` cancels them. */
  readonly timers: Set<ReturnType<typeof setTimeout>>;
  /** True once no timer may be asked for any more (the tracker has closed). */
  readonly ended: () => boolean;
  /** The waits bounded now: each, called with a failure, lets go of its caller with it (what `close` does). */
  readonly open: Set<(failure: NotesTrackerFailure) => void>;
  /** The waits bounded now, told of a call given up on (`givenUpAfterBound`): one that watches it ends as `unavailable`. */
  readonly givenUp: Set<(call: PendingCall) => void>;
}

/**
 * `waiting`, unless a store call that `watched` selects is unanswered at two looks in a row
 * (`lookMs` apart, the first at the call): then, once `letGo` has taken the caller off what it
 * waits for, the failure `stuck` makes of that call. So a store whose promise never settles holds
 * the caller between `lookMs` and twice that, never forever; the call's answer, whenever it
 * comes, is still taken by the tracker.
 */
export const boundedByStore = <T>(
  bound: StoreBound,
  waiting: Promise<E.Either<NotesTrackerFailure, T>>,
  watched: (call: PendingCall) => boolean,
  stuck: (call: PendingCall) => NotesTrackerFailure,
  letGo: () => void,
): Promise<E.Either<NotesTrackerFailure, T>> =>
  new Promise((resolve) => {
    let finished = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const finish = (outcome: E.Either<NotesTrackerFailure, T>): void => {
      if (finished) return;
      finished = true;
      bound.open.delete(cut);
      bound.givenUp.delete(heard);
      if (timer !== undefined) {
        clearTimeout(timer);
        bound.timers.delete(timer);
      }
      resolve(outcome);
    };
    const cut = (failure: NotesTrackerFailure): void => {
      if (finished) return;
      letGo();
      finish(E.left(failure));
    };
    // A call given up on is no empty answer to pass off as success: the wait ends as if it were stuck.
    const heard = (call: PendingCall): void => {
      if (watched(call)) cut(stuck(call));
    };
    let seen = new Set(bound.calls.pending().filter(watched));
    const look = (): void => {
      if (finished || bound.ended()) return;
      timer = setTimeout(() => {
        bound.timers.delete(timer!);
        timer = undefined;
        const now = bound.calls.pending().filter(watched);
        const still = now.find((call) => seen.has(call));
        if (still !== undefined) return cut(stuck(still));
        seen = new Set(now);
        look();
      }, bound.lookMs);
      bound.timers.add(timer);
    };
    bound.open.add(cut);
    bound.givenUp.add(heard);
    void waiting.then(finish);
    look();
  });

/**
 * The failed answer a load or a list of unmerged sessions (`call`) the store left unanswered for
 * `lookMs` is taken for (`givenUpAfterBound`): as any failed load, or failed list (the end of stage
 * waiting for it merges what the tracker holds).
 */
export const givenUpInput = (
  lookMs: number,
  call: NotesLoadEffect | NotesListUnmergedEffect,
  pending: PendingCall,
): NotesInput => {
  const unanswered = `the notes store left ${pending.what} unanswered for ${lookMs} ms (timeoutMs): taken as failed`;
  return call.type === 'load'
    ? {
        type: 'notes/loaded',
        user: call.user,
        session: call.session,
        givenUp: true,
        outcome: E.left(
          storeFailure(
            'unavailable',
            `${unanswered}, and loaded again at the next call that needs the records (its answer, should it come, is taken where it is newer than what the tracker holds)`,
          ),
        ),
      }
    : {
        type: 'notes/unmergedListed',
        user: call.user,
        call: call.call,
        outcome: E.left(
          storeFailure(
            'unavailable',
            `${unanswered}: the end of stage merges the sessions this tracker holds (its answer, should it come, is not used)`,
          ),
        ),
      };
};
