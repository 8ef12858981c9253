/**
 * What "everything asked for so far has settled" means for the notes machine, as a pure
 * predicate built from a state: the extractions of the messages recorded, the profile rewrites
 * asked for, the loads and lists of unmerged sessions running and the changes made, each
 * compared by counters later, so a
 * wait never depends on traffic that comes after it. Built from the users with something in
 * flight only, so an idle machine answers at once however many users it served.
 */
import * as PMap from '../persistent/persistentMap.js';
import { awaitsOwnStage, isLeaseBusy, type NotesLeaseSlot } from './leaseState.js';
import { idOfKey, storedKey } from './ledger.js';
import { blockedBy, isKeptFromStore, isSaveStalled } from './storage.js';
import { hasUnsaved, isEarlierTurnUnsaved, selectTouched } from './unsaved.js';
import {
  hasWorkBesidesLeases,
  isExtracting,
  type NotesState,
  type NotesUserStorage,
  selectConversation,
  selectProfileRewrite,
  selectUserMachine,
  selectUserStorage,
} from './machine.js';

/**
 * True when a holder waits on the store alone: it has worked through its queue and only the save
 * of that work waits, after a failed one, to be tried again; or its last call or its load of the
 * notes failed, or unsaved work of an earlier turn waits to be refused, and it does no new work
 * until the store answers. Settled, as a failed save or call is without leases, and
 * quiet, since were the tracker to stop, its lease would expire and the next holder redo the work.
 */
const isStalledAtRest = (state: NotesState, user: string, session: string, lease: NotesLeaseSlot): boolean =>
  lease.held &&
  !lease.calling &&
  lease.working === undefined &&
  (lease.failures > 0 ||
    selectUserStorage(state, user).unloaded?.includes(storedKey(session)) === true ||
    (isEarlierTurnUnsaved(state, user, session) && isSaveStalled(state, user, session)) ||
    (lease.queue.length === 0 &&
      lease.outbox.length === 0 &&
      lease.done !== undefined &&
      isSaveStalled(state, user, session)));

/**
 * True when a tracker that does not hold the lease waits on the store alone: its last lease call
 * failed (what it recorded waits in its outbox, to be added to the queue once a call is answered).
 */
const isCallFailedAtRest = (lease: NotesLeaseSlot): boolean => !lease.held && !lease.calling && lease.failures > 0;

/** True once what `state` had in flight has settled in the state it is given. */
export type SettledSince = (current: NotesState) => boolean;

/** The last item a holder knows it has to work through and report (nothing to report when it does not hold the lease). */
const reportTarget = (lease: NotesLeaseSlot): number =>
  lease.held
    ? Math.max(
        lease.done ?? Number.NEGATIVE_INFINITY,
        lease.working ?? Number.NEGATIVE_INFINITY,
        lease.queue[lease.queue.length - 1]?.seq ?? Number.NEGATIVE_INFINITY,
      )
    : Number.NEGATIVE_INFINITY;

/**
 * True when the machine of `user` in `current` is no longer the one of `generation`: it was let
 * go of since, which the machine does only once nothing of the user's is in flight, so what was
 * in flight then has settled (the counters of a machine made again start afresh).
 */
const goneSince = (current: NotesState, user: string, generation: number): boolean =>
  PMap.get(current.users, user)?.generation !== generation;

/** The predicate that holds once the extractions, rewrites, loads, saves and lease work in flight in `state` have settled. */
export const settledSince = (state: NotesState): SettledSince => {
  const targets: Array<readonly [string, string, number]> = [];
  const rewrites: Array<readonly [string, number]> = [];
  const storage: Array<readonly [string, number, ReadonlyArray<string>, NotesUserStorage['saving']]> = [];
  const leases: Array<readonly [string, string, number, number, number]> = [];
  const generations = new Map<string, number>();
  const lists: Array<readonly [string, ReadonlyArray<number>]> = [];
  const pending: Array<readonly [string, ReadonlyArray<number>]> = [];
  PMap.forEach(state.active, (_active, user) => {
    const {
      conversations,
      busy,
      leased,
      rewrite,
      storage: stored,
      stages,
      generation,
    } = selectUserMachine(state, user);
    generations.set(user, generation);
    for (const key of busy) targets.push([user, idOfKey(key), PMap.get(conversations, key)!.requested]);
    for (const key of leased) {
      const lease = PMap.get(conversations, key)?.lease;
      if (lease !== undefined) leases.push([user, idOfKey(key), lease.calls, lease.work, reportTarget(lease)]);
    }
    rewrites.push([user, rewrite.requested]);
    storage.push([user, stored.changes, stored.loading, stored.saving]);
    const listing = stages.flatMap((stage) => (stage.listing === undefined ? [] : [stage.listing]));
    if (listing.length > 0) lists.push([user, listing]);
    // The tracker names every end of stage it asks for: one waiting here is known by its id.
    const ids = stages.flatMap((stage) => (stage.id === undefined ? [] : [stage.id]));
    if (ids.length > 0) pending.push([user, ids]);
  });
  /** The user's machine was let go of since: all of theirs has settled. */
  const gone = (current: NotesState, user: string): boolean => goneSince(current, user, generations.get(user) ?? 0);
  return (current) =>
    targets.every(
      ([user, session, requested]) =>
        gone(current, user) || (selectConversation(current, user, session)?.settled ?? requested) >= requested,
    ) &&
    rewrites.every(
      ([user, requested]) => gone(current, user) || selectProfileRewrite(current, user).settled >= requested,
    ) &&
    storage.every(
      ([user, changes, loading, saving]) =>
        gone(current, user) || isStoredThrough(selectUserStorage(current, user), changes, loading, saving),
    ) &&
    // The ends of stage waiting at the call: merged (their saves are waited for once this holds).
    pending.every(
      ([user, ids]) =>
        gone(current, user) ||
        selectUserMachine(current, user).stages.every((stage) => stage.id === undefined || !ids.includes(stage.id)),
    ) &&
    // The store's lists of unmerged sessions that ends of stage asked for: answered.
    lists.every(
      ([user, calls]) =>
        gone(current, user) ||
        selectUserMachine(current, user).stages.every(
          (stage) => stage.listing === undefined || !calls.includes(stage.listing),
        ),
    ) &&
    // Lease calls made and extractions started under a lease: answered and settled (or the lease let go of).
    leases.every(([user, session, calls, work, target]) => {
      const lease = selectConversation(current, user, session)?.lease;
      return (
        gone(current, user) ||
        lease === undefined ||
        (lease.answers >= calls &&
          lease.worked >= work &&
          // What this holder had to work through is reported done, unless the lease was lost meanwhile,
          // or worked through with its save failed: settled as a failed save is, though not said
          // done (it is saved again later, or the next holder redoes it).
          (!lease.held ||
            (lease.acknowledged ?? Number.NEGATIVE_INFINITY) >= target ||
            isStalledAtRest(current, user, session, lease)))
      );
    });
};

/**
 * True once the changes counted in `changes` have settled in `stored` (saved, or their save failed
 * and left them for the next), the loads of `loading` have answered, and the save running then
 * (`saving`) has too: one that writes changes already counted as settled (kept after a failed or
 * blocked save) is still in flight until then.
 */
const isStoredThrough = (
  stored: NotesUserStorage,
  changes: number,
  loading: ReadonlyArray<string>,
  saving: NotesUserStorage['saving'],
): boolean =>
  stored.settledChanges >= changes &&
  loading.every((key) => !stored.loading.includes(key)) &&
  (saving === undefined || stored.saving !== saving);

/**
 * The predicate that holds once the changes the users of `users` made by `state` have settled,
 * with the loads then running (a change kept from a record the store holds unreadable reads it
 * again) and the profile rewrites then asked for, and with leases once the work a holder had
 * done there is reported to the store (unless its save or call failed, as in `settledSince`).
 */
const followedUpSince = (state: NotesState, users: ReadonlySet<string>): SettledSince => {
  const storage: Array<readonly [string, number, ReadonlyArray<string>, NotesUserStorage['saving'], number]> = [];
  const reports: Array<readonly [string, string, number]> = [];
  const generations = new Map<string, number>();
  PMap.forEach(state.active, (_active, user) => {
    if (!users.has(user)) return;
    const { conversations, leased, storage: stored, rewrite, generation } = selectUserMachine(state, user);
    generations.set(user, generation);
    storage.push([user, stored.changes, stored.loading, stored.saving, rewrite.requested]);
    for (const key of leased) {
      const lease = PMap.get(conversations, key)?.lease;
      if (lease?.held === true && lease.done !== undefined) reports.push([user, idOfKey(key), lease.done]);
    }
  });
  const gone = (current: NotesState, user: string): boolean => goneSince(current, user, generations.get(user) ?? 0);
  return (current) =>
    storage.every(
      ([user, changes, loading, saving, rewrites]) =>
        gone(current, user) ||
        (isStoredThrough(selectUserStorage(current, user), changes, loading, saving) &&
          selectProfileRewrite(current, user).settled >= rewrites),
    ) &&
    reports.every(([user, session, done]) => {
      const lease = selectConversation(current, user, session)?.lease;
      return (
        gone(current, user) ||
        lease === undefined ||
        !lease.held ||
        (lease.acknowledged ?? Number.NEGATIVE_INFINITY) >= done ||
        isStalledAtRest(current, user, session, lease)
      );
    });
};

/** True when a profile rewrite of one of `users` was asked for or settled between `before` and `after`. */
const hasRewrittenSince = (before: NotesState, after: NotesState, users: ReadonlySet<string>): boolean =>
  [...users].some((user) => {
    const [was, is] = [selectProfileRewrite(before, user), selectProfileRewrite(after, user)];
    return was.requested !== is.requested || was.settled !== is.settled;
  });

/**
 * What `settled()` waits for: the work in flight at `state` (`settledSince`), then what it led to,
 * taken from the first state given where it has settled: the saves of its changes (an
 * extraction's notes, a merge) and the loads and rewrites they asked for; and while a rewrite was
 * asked for or settled meanwhile (a merge's, or one asked again after a conflict), what that led
 * to in turn. The runner asks after every step, so a message recorded after the call adds no wait
 * beyond the store calls under way when that work settled, and the wait ends under traffic. Each
 * target is the wait's own scratch, kept in the predicate the caller holds.
 */
export const settledAndSavedSince = (state: NotesState): SettledSince => {
  const users = new Set<string>();
  PMap.forEach(state.active, (_active, user) => void users.add(user));
  let waiting = settledSince(state);
  let since: NotesState | undefined;
  return (current) => {
    while (waiting(current)) {
      if (since !== undefined && !hasRewrittenSince(since, current, users)) return true;
      since = current;
      waiting = followedUpSince(current, users);
    }
    return false;
  };
};

/**
 * True while a model call runs (an extraction or a profile rewrite): each is bounded by the
 * tracker's `timeoutMs`, so `close` without leases waits for it rather than give it up as a store
 * call left unanswered (with leases the queue keeps its work: see `quietOrGivenUp`).
 */
export const isCallingModel = (state: NotesState): boolean => {
  let calling = false;
  PMap.forEach(state.active, (_active, user) => {
    const { conversations, busy, rewrite } = selectUserMachine(state, user);
    if (rewrite.started > rewrite.settled) calling = true;
    for (const key of busy) {
      const conversation = PMap.get(conversations, key);
      if (conversation !== undefined && isExtracting(conversation)) calling = true;
    }
  });
  return calling;
};

/**
 * True when nothing of this machine's own doing is in flight: no extraction, rewrite, load or
 * save runs, no end of stage waits (here, or in a queue another tracker holds: its caller is
 * answered here), and no lease is held or called. Messages it added to a queue whose lease
 * another tracker holds may still wait there: they are that holder's to do, and the store keeps
 * them. What `close` waits for, up to the lease's time while a held lease's save fails (then
 * `isQuietButRetries`).
 */
export const isQuiet = (state: NotesState): boolean => quietWith(state, false);

/**
 * `isQuiet`, but for leases that wait on the store alone (a held one's failed save to be tried
 * again, or a failed call to be answered; see `isStalledAtRest` and `isCallFailedAtRest`): those
 * count as quiet. Were the tracker to stop then, each such held lease would expire and the next
 * holder redo the work from the queue; what waits in an outbox is lost with the tracker.
 */
export const isQuietButRetries = (state: NotesState): boolean => quietWith(state, true);

const quietWith = (state: NotesState, retriesAside: boolean): boolean => {
  let quiet = true;
  PMap.forEach(state.active, (_active, user) => {
    if (!quiet) return;
    const machine = selectUserMachine(state, user);
    quiet =
      !hasWorkBesidesLeases(machine) &&
      machine.leased.every((key) => {
        const lease = PMap.get(machine.conversations, key)?.lease;
        const aside =
          retriesAside &&
          lease !== undefined &&
          (isStalledAtRest(state, user, idOfKey(key), lease) || isCallFailedAtRest(lease));
        return (aside || !isLeaseBusy(lease)) && !awaitsOwnStage(lease);
      });
  });
  return quiet;
};

/**
 * Without leases: the users whose unsaved changes wait with nothing under way to save them (their
 * save failed), none kept from a record the store holds unreadable, and no load they wait for
 * running. What `close` tries to save again, as the next change would.
 */
export const selectStalledSaves = (state: NotesState): ReadonlyArray<string> => {
  const users: string[] = [];
  PMap.forEach(state.users, ({ storage }, user) => {
    if (!hasUnsaved(storage) || storage.saving !== undefined) return;
    const { sessions } = selectTouched(storage);
    const blocked = blockedBy(storage);
    if (sessions.some((key) => storage.loading.includes(key)) || blocked.sessions.length > 0 || blocked.profile) return;
    users.push(user);
  });
  return users;
};

/** The changes each user has that the store has not confirmed: what is lost with a tracker that stops now. */
export const selectUnsaved = (
  state: NotesState,
): ReadonlyArray<{
  readonly user: string;
  readonly changes: number;
  readonly sessions: ReadonlyArray<string>;
  readonly profile: boolean;
  /** A save of them was sent and the store has not answered it: whether it holds them is unknown. */
  readonly sent: boolean;
  /** No save of them is made until a record the store holds unreadable is read (`isKeptFromStore`). */
  readonly kept: boolean;
}> => {
  const unsaved: Array<{
    user: string;
    changes: number;
    sessions: ReadonlyArray<string>;
    profile: boolean;
    sent: boolean;
    kept: boolean;
  }> = [];
  PMap.forEach(state.users, ({ storage }, user) => {
    if (!hasUnsaved(storage)) return;
    const { sessions, profile } = selectTouched(storage);
    unsaved.push({
      user,
      changes: storage.unsaved.length,
      sessions: sessions.map(idOfKey),
      profile,
      sent: storage.saving !== undefined,
      kept: isKeptFromStore(storage),
    });
  });
  return unsaved;
};
