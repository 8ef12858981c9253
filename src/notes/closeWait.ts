/**
 * What `close` of the notes tracker waits for, in the shell: nothing of the tracker's own doing in
 * flight, a failed save tried again for a while, and a store that leaves a call unanswered given
 * up after a bound, so `close` always resolves.
 */
import * as E from 'fp-ts/lib/Either.js';
import { failure } from '../base/failure.js';
import type { NotesInput } from './inputs.js';
import type { NotesLeaseSettings } from './leaseState.js';
import type { NotesState } from './machine.js';
import { MAX_TIMEOUT_MS } from './trackerOptions.js';
import type { NotesTrackerFailure } from './trackerTypes.js';
import { isCallingModel, isQuiet, isQuietButRetries, selectStalledSaves } from './waiting.js';

/** What of the tracker `quietOrGivenUp` uses. */
export interface CloseWaitPorts {
  readonly lease: NotesLeaseSettings | undefined;
  readonly timeoutMs: number;
  readonly pollMs: number;
  /** The machine's state now. */
  readonly state: () => NotesState;
  /** Resolves once `done` holds of the state (`Left` after a bug stopped the machine). */
  readonly waitUntil: (done: (state: NotesState) => boolean) => Promise<E.Either<NotesTrackerFailure, void>>;
  /** Runs an input as one arriving later (a retry of a failed save). */
  readonly later: (input: NotesInput) => void;
  /** Tells `onError`. */
  readonly report: (problem: NotesTrackerFailure) => void;
}

/**
 * What `close` waits for: nothing of the tracker's own doing in flight. With leases, a lease
 * that waits on a failing store is waited for up to `leaseMs`, then left to expire, and at twice
 * that time `close` gives up whatever is still in flight, a model call included: the queue keeps
 * that work for the next holder. Without leases, a save that failed is tried again (after
 * `leasePollMs`, then twice as long each time up to a third of `timeoutMs`) for up to
 * `timeoutMs`, then given up, and a store call left unanswered is given up at twice
 * `timeoutMs`, but never while a model call runs (each is bounded by `timeoutMs`).
 */
export const quietOrGivenUp = ({
  lease,
  timeoutMs,
  pollMs,
  state,
  waitUntil,
  later,
  report,
}: CloseWaitPorts): Promise<void> =>
  new Promise<void>((resolve) => {
    const withLeases = lease !== undefined;
    const boundMs = lease?.ttlMs ?? timeoutMs;
    const timers = new Set<ReturnType<typeof setTimeout>>();
    let retrying = !withLeases;
    let retries = 0;
    let finished = false;
    const after = (ms: number, body: () => void): void => {
      const timer = setTimeout(
        () => {
          timers.delete(timer);
          body();
        },
        Math.min(ms, MAX_TIMEOUT_MS),
      );
      timers.add(timer);
    };
    const done = (): void => {
      if (finished) return;
      finished = true;
      for (const timer of timers) clearTimeout(timer);
      resolve();
    };
    /** Quiet: done, unless (without leases, within `timeoutMs`) a failed save is to be tried again. */
    const quiet = (outcome: E.Either<NotesTrackerFailure, void>): void => {
      if (finished) return;
      if (E.isLeft(outcome) || !retrying || selectStalledSaves(state()).length === 0) return done();
      after(Math.min(pollMs * 2 ** Math.min(retries, 52), Math.max(1, boundMs / 3)), () => {
        if (!retrying) return;
        retries += 1;
        for (const user of selectStalledSaves(state())) later({ type: 'notes/saveRetried', user });
        void waitUntil(isQuiet).then(quiet);
      });
    };
    void waitUntil(isQuiet).then(quiet);
    after(boundMs, () => {
      retrying = false;
      void waitUntil(withLeases ? isQuietButRetries : isQuiet).then(done);
    });
    const giveUp = (): void => {
      if (finished) return;
      // Without leases, a model call's messages live only here: bounded by its own timeout, it is
      // waited for, and the store given its time after it. With leases it is not: only messages
      // recorded meanwhile renew its lease while it runs, and a closing tracker records none (so the
      // lease may be another's by now), a closing holder goes on with a queue other trackers may
      // keep filling, and the queue keeps the work it was doing for the next holder.
      if (!withLeases && isCallingModel(state())) return after(boundMs, giveUp);
      if (!withLeases)
        report(
          failure(
            'closed',
            `the notes store left a call unanswered for twice timeoutMs (${2 * boundMs} ms): close gave up waiting for it`,
          ),
        );
      done();
    };
    after(2 * boundMs, giveUp);
  });
