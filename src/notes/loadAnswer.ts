/**
 * A load's answer taken by the notes machine, pure: records newer than the machine's replace its
 * notes, its unsaved changes applied to them again once (so two writers lose nothing of each
 * other's merges), `notes/loaded` events recording the result, and the save that waited for the
 * load follows (`storage.ts`).
 */
import * as E from 'fp-ts/lib/Either.js';
import * as PMap from '../persistent/persistentMap.js';
import { applyNotesEvent } from './events.js';
import { type NotesEffect, type NotesLoaded, type NotesTransition } from './inputs.js';
import { mergedAsCounted, recounted } from './isolation.js';
import {
  type NotesLedger,
  ownLedger,
  selectGlobalFacts,
  selectSessionNotes,
  selectUserNotes,
  storedKey,
  type UserNotes,
  withUserNotes,
} from './ledger.js';
import {
  givenUpField,
  type NotesState,
  type NotesUserStorage,
  selectProfileRewrite,
  selectUserStorage,
  withLedger,
  withRewrite,
  withStorage,
} from './machine.js';
import type { GlobalFacts, NotesEvent, SessionNotes } from './model.js';
import { readProfileRecord, readSessionRecord } from './persist.js';
import type { NotesRecords, StoredRecord } from './store.js';
import { isMergedRecord, readRecord, reported } from './recordRead.js';
import { selectTouched, withoutReplacedOverflow } from './unsaved.js';
import { storeFailure } from './storeAnswer.js';
import { againstStored } from './blind.js';
import { attemptEnded, MAX_UNSAVED_CHANGES, saveIfNeeded } from './storage.js';

/**
 * The profile a rebuild after a load starts from: the store's (`undefined`: it holds none), or
 * the machine's own where the store's is the one the machine knew and no unsaved change touches it.
 */
type ProfileBase = { readonly from: 'store'; readonly profile: GlobalFacts | undefined } | { readonly from: 'own' };

/**
 * The user's notes as the store holds them where the rebuild needs it: the loaded session's
 * record (when newer), the profile of `base`, and each session an unsaved merge merges marked
 * unmerged, its `mergedAt` kept only where the store's record has one (`merged`), so the merge
 * applied again counts the session exactly when the store has not counted it. A session whose
 * mark is unknown (never loaded nor saved) keeps the `mergedAt` of any merge but the unsaved one.
 */
const storeView = (
  user: UserNotes,
  session: string,
  notes: SessionNotes | undefined,
  base: ProfileBase,
  merged: PMap.PersistentMap<boolean>,
  unsaved: ReadonlyArray<NotesEvent>,
): UserNotes => {
  const sessions = unsaved.reduce(
    (current, event) => {
      if (event.type !== 'notes/sessionConsolidated') return current;
      const own = PMap.get(current, event.session);
      if (own === undefined) return current;
      const { mergedAt, ...rest } = own;
      const counted = PMap.get(merged, storedKey(event.session)) ?? mergedAt !== event.at;
      return PMap.set(
        current,
        event.session,
        counted ? { ...own, consolidated: false, mergedAt: mergedAt ?? event.at } : { ...rest, consolidated: false },
      );
    },
    notes === undefined ? user.sessions : PMap.set(user.sessions, session, notes),
  );
  const profile = base.from === 'store' ? base.profile : user.profile;
  return { sessions, ...(profile === undefined ? {} : { profile }) };
};

/**
 * True for an extraction whose messages are no later than those the store's record of its
 * session was extracted from: another tracker extracted them, or later ones, and saved first (a
 * holder that took over the queue of one paused past its lease). Applied again, its list would
 * put back an older one in place of the store's.
 */
const isOutdated = (view: NotesLedger, user: string, event: NotesEvent, fenced: (key: string) => boolean): boolean => {
  // Made under a fencing lease: the newer record is no other holder's extraction (that save would be
  // refused as fenced), so times that a shared millisecond or a clock behind can tie are not compared.
  // Made blind: `againstStored` compares the times itself, and keeps what the extraction added.
  if (event.type !== 'notes/extracted' || event.blind !== undefined || fenced(storedKey(event.session))) return false;
  // Only the times of the messages covered compare: an extraction's end may come after later messages.
  const stored = selectSessionNotes(view, user, event.session)?.messagesAt;
  return stored !== undefined && event.messagesAt !== undefined && stored >= event.messagesAt;
};

/**
 * The ledger rebuilt from the loaded records where they are newer than what the machine had:
 * the store's view of the user's notes (`storeView`) with the unsaved changes applied to it
 * again, once, and the `notes/loaded` events recording the result (the loaded session with the
 * profile, then each other session the rebuild changed).
 */
const withFresh = (
  ledger: NotesLedger,
  user: string,
  session: string,
  notes: SessionNotes | undefined,
  base: ProfileBase,
  merged: PMap.PersistentMap<boolean>,
  unsaved: ReadonlyArray<NotesEvent>,
  fenced: (key: string) => boolean,
): readonly [NotesLedger, ReadonlyArray<NotesEvent>] => {
  const owned = ownLedger(ledger);
  const before = selectUserNotes(owned, user) ?? { sessions: PMap.empty };
  const view = withUserNotes(owned, user, storeView(before, session, notes, base, merged, unsaved));
  const applied = unsaved.reduce(
    (into, event) => (isOutdated(view, user, event, fenced) ? into : applyNotesEvent(into, againstStored(into, event))),
    view,
  );
  // Rebuilt from a store that holds no profile, the profile the ledger held (with a dropped merge)
  // is none now: an empty one says so, since a `notes/loaded` without a profile keeps the one there.
  const rebuilt = selectUserNotes(applied, user);
  const next =
    rebuilt !== undefined && rebuilt.profile === undefined && before.profile !== undefined
      ? withUserNotes(applied, user, {
          ...rebuilt,
          profile: { facts: [], consolidatedAt: before.profile.consolidatedAt, sessionCount: 0 },
        })
      : applied;
  const finalNotes = selectSessionNotes(next, user, session);
  const finalProfile = selectGlobalFacts(next, user);
  const changed = [...new Set(unsaved.flatMap((event) => ('session' in event ? [event.session] : [])))].filter(
    (other) =>
      other !== session &&
      JSON.stringify(selectSessionNotes(next, user, other)) !== JSON.stringify(PMap.get(before.sessions, other)),
  );
  return [
    next,
    [
      {
        type: 'notes/loaded',
        user,
        session,
        ...(finalNotes === undefined ? {} : { notes: finalNotes }),
        ...(finalProfile === undefined ? {} : { profile: finalProfile }),
      },
      ...changed.flatMap((other): NotesEvent[] => {
        const otherNotes = selectSessionNotes(next, user, other);
        return otherNotes === undefined ? [] : [{ type: 'notes/loaded', user, session: other, notes: otherNotes }];
      }),
    ],
  ];
};

/**
 * The profile a rebuild starts from: the fresh one decoded, else, when an unsaved change touches
 * the profile, the store's as it stands (none when it holds none; an unreadable one leaves the
 * machine's own), else the machine's own, which is the store's.
 */
const profileBase = (
  record: StoredRecord,
  fresh: GlobalFacts | undefined,
  touchedByUnsaved: boolean,
  categories: ReadonlyArray<string>,
): ProfileBase => {
  if (fresh !== undefined) return { from: 'store', profile: fresh };
  if (!touchedByUnsaved) return { from: 'own' };
  const stored =
    record.version === 0 || record.value === undefined
      ? E.right(undefined)
      : readProfileRecord(record.value, categories);
  return E.isRight(stored) ? { from: 'store', profile: stored.right?.record } : { from: 'own' };
};

/**
 * The storage without its unsaved profile rewrites, once the store's profile has changed since the
 * machine last knew it: each was asked of a profile without that change, and applied again it
 * would replace the store's newer profile (another tracker's merge) with the model's list. It is
 * dropped as a rewrite that answered a changed profile is (`onProfileRewriteSettled`); the
 * deterministic merges stay. A dropped change counts as settled, as a save of it would.
 */
const withoutStaleRewrites = (storage: NotesUserStorage): NotesUserStorage => {
  const isRewrite = (event: NotesEvent): boolean => event.type === 'notes/profileRewritten';
  const dropped = storage.unsaved.filter(isRewrite).length;
  if (dropped === 0) return storage;
  const { saving, ...rest } = storage;
  // A running save writes the first `count` unsaved events; those dropped among them leave it.
  const count = saving === undefined ? 0 : storage.unsaved.slice(0, saving.count).filter(isRewrite).length;
  return recounted(
    {
      ...rest,
      unsaved: storage.unsaved.filter((event) => !isRewrite(event)),
      settledChanges: Math.min(storage.changes, storage.settledChanges + dropped),
      ...(saving === undefined ? {} : { saving: { ...saving, count: saving.count - count } }),
    },
    storage.unsaved,
  );
};

/**
 * The `givenUp` field of the storage that replaces `storage` after a load's answer: `key` added
 * when the answer gives the load up (its late answer may follow), taken out when it is that late
 * answer, else as it was.
 */
const givenUpAfter = (
  storage: NotesUserStorage,
  key: string,
  input: NotesLoaded,
): { givenUp?: ReadonlyArray<string> } => {
  const before = storage.givenUp ?? [];
  const others = before.filter((other) => other !== key);
  return givenUpField(input.givenUp === true ? [...others, key] : input.late === true ? others : before);
};

/**
 * The records of a late load answer (`NotesLoaded.late`) with each one no newer than the version the
 * machine knows given that version, which reads as known (not taken): the tracker may have saved
 * newer ones since the load was sent.
 */
const notOlder =
  (storage: NotesUserStorage, key: string) =>
  (records: NotesRecords): NotesRecords => {
    const asKnown = (record: StoredRecord, known: number | undefined): StoredRecord =>
      known !== undefined && record.version <= known ? { ...record, version: known } : record;
    return {
      session: asKnown(records.session, PMap.get(storage.sessions, key)),
      profile: asKnown(records.profile, storage.profile),
    };
  };

/**
 * True when the load found a record the running save of `storage` writes at the version that save
 * makes (`expected + 1`), and none of them past it: the store took the save before the load, and
 * its answer has not come yet. The record is the save's own until that answer says otherwise (a
 * conflict loads it again), so the rebuild applies again only the changes made since the save
 * began: applied again over the record it wrote, the save's merge would take in a session list
 * extracted since, which its answer then confirms as stored. A save of one record alone
 * (`isolation.ts`) confirms no change by itself, and is left out.
 */
const isRunningSaveOwn = (storage: NotesUserStorage, key: string, records: NotesRecords): boolean => {
  const { saving } = storage;
  if (saving === undefined || saving.alone !== undefined) return false;
  const shown = [
    ...(saving.sessions.includes(key) ? [records.session.version - (PMap.get(storage.sessions, key) ?? 0)] : []),
    ...(saving.profile ? [records.profile.version - (storage.profile ?? 0)] : []),
  ];
  return shown.includes(1) && shown.every((ahead) => ahead <= 1);
};

/**
 * Takes a load's answer: records newer than the machine's replace its notes (its unsaved
 * changes applied to them again, `notes/loaded` events recording the result), and whether the
 * session's record was merged is kept for the next conflict's count; a record the
 * store does not hold keeps what the machine has, and one it cannot read at all is reported and
 * marked, its version not taken, so no save is made over it. A failed load counts the records as absent,
 * so a later save of them meets a conflict if they were there after all, and loads again.
 */
export const applyLoadAnswer = (state: NotesState, input: NotesLoaded): NotesTransition => {
  const { user, session, late } = input;
  const key = storedKey(session);
  const asked = selectUserStorage(state, user);
  if (late === true || asked.reloading?.includes(key) !== true || !asked.loading.includes(key))
    return takeLoadAnswer(state, input);
  // A load asked before the lease was taken (`reloadAfresh`): the one asked now brings what the
  // holder works from. A failure is taken as ever, and the holder loads again as after one.
  const { reloading: before, ...others } = asked;
  const reloading = before.filter((other) => other !== key);
  const rest = withStorage(state, user, { ...others, ...(reloading.length === 0 ? {} : { reloading }) });
  return E.isRight(input.outcome) && input.givenUp !== true
    ? [rest, [{ type: 'load', user, session }]]
    : takeLoadAnswer(rest, input);
};

/** `applyLoadAnswer` of an answer the machine takes as the session's latest read. */
const takeLoadAnswer = (state: NotesState, input: NotesLoaded): NotesTransition => {
  const { user, session, late } = input;
  const storage = selectUserStorage(state, user);
  const key = storedKey(session);
  // A late answer is older than what a load running now will bring, and a failure was taken already;
  // of a session let go of since, it is no newer than what the tracker saved there and forgot.
  const taken =
    late === true
      ? !storage.loading.includes(key) && E.isRight(input.outcome) && storage.givenUp?.includes(key) === true
      : storage.loading.includes(key);
  if (!taken) return [state, []];
  const outcome = late === true ? E.map(notOlder(storage, key))(input.outcome) : input.outcome;
  const loading = storage.loading.filter((other) => other !== key);
  const givenUp = givenUpAfter(storage, key, input);
  if (E.isLeft(outcome)) {
    // Nothing is saved at once on a failed load: a save waiting for this load (after a conflict)
    // would meet the same record again, and load again, without end while loads fail and saves
    // work. The changes wait, as after a failed save, for the next change or a holder's retry.
    // A load the save after a conflict waited for: that attempt ends here, as a failed save's does.
    const { givenUp: _before, ...kept } = storage.backingOff === undefined ? attemptEnded(storage) : storage;
    const next = {
      ...kept,
      loading,
      sessions: PMap.set(storage.sessions, key, PMap.get(storage.sessions, key) ?? 0),
      merged: PMap.set(storage.merged, key, PMap.get(storage.merged, key) ?? false),
      settledChanges: storage.changes,
      unloaded: [...(storage.unloaded ?? []).filter((other) => other !== key), key],
      ...givenUp,
    };
    return [withStorage(state, user, next), [reported(user, outcome.left)]];
  }
  const records = outcome.right;
  const { categories } = state.ledger;
  const unreadable = storage.unreadable ?? { sessions: PMap.empty, profile: undefined };
  const knownSession = PMap.get(storage.sessions, key);
  const sessionRead = readRecord(
    user,
    records.session,
    knownSession,
    PMap.get(unreadable.sessions, key),
    readSessionRecord,
    categories,
  );
  // A profile holding a dropped merge in memory is read whatever its version, and rebuilt from it.
  const stale = storage.profileStale === true;
  const profileRead = readRecord(
    user,
    records.profile,
    stale ? undefined : storage.profile,
    stale ? undefined : unreadable.profile,
    readProfileRecord,
    categories,
  );
  const rebuilding = stale && profileRead.unreadable === undefined;
  const notes = sessionRead.value;
  const profile = profileRead.value;
  const merged = PMap.set(
    storage.merged,
    key,
    records.session.version === knownSession && late === true
      ? PMap.get(storage.merged, key) === true
      : isMergedRecord(records.session),
  );
  const own = isRunningSaveOwn(storage, key, records);
  const ownSession = own && storage.saving?.sessions.includes(key) === true;
  const ownProfile = own && storage.saving?.profile === true;
  // The store's profile changed by the running save is no other tracker's: no rewrite is stale for it.
  const kept = profile === undefined || own ? storage : withoutStaleRewrites(storage);
  const [ledger, events] =
    notes === undefined && profile === undefined && !rebuilding
      ? [state.ledger, []]
      : withFresh(
          state.ledger,
          user,
          session,
          notes,
          rebuilding
            ? { from: 'store', profile }
            : profileBase(records.profile, profile, selectTouched(kept).profile, categories),
          mergedAsCounted({ ...kept, merged }),
          own ? kept.unsaved.slice(kept.saving?.count ?? 0) : kept.unsaved,
          (stored) => kept.fences !== undefined && PMap.has(kept.fences, stored),
        );
  const stillUnreadable = {
    sessions:
      sessionRead.unreadable === undefined
        ? PMap.remove(unreadable.sessions, key)
        : PMap.set(unreadable.sessions, key, sessionRead.unreadable),
    profile: profileRead.unreadable,
  };
  const foreignBefore = storage.foreign?.sessions ?? PMap.empty;
  const foreign = {
    sessions:
      sessionRead.foreign === undefined
        ? foreignBefore
        : sessionRead.foreign.length > 0
          ? PMap.set(foreignBefore, key, sessionRead.foreign)
          : PMap.remove(foreignBefore, key),
    profile: profileRead.foreign === undefined ? storage.foreign?.profile : profileRead.foreign,
  };
  // The version of a record not read is not taken as read, so no save is ever made over it.
  const {
    unreadable: _before,
    foreign: _foreignBefore,
    unloaded: failedBefore,
    givenUp: _late,
    profileStale,
    ...rest
  } = kept;
  const unloaded = (failedBefore ?? []).filter((other) => other !== key);
  const next: NotesUserStorage = {
    ...rest,
    loading,
    ...(unloaded.length === 0 ? {} : { unloaded }),
    ...givenUp,
    ...(profileStale === undefined || rebuilding ? {} : { profileStale }),
    // The versions the running save makes are taken from its answer: a conflict's load reads them again.
    sessions: PMap.set(
      storage.sessions,
      key,
      sessionRead.unreadable === undefined && !ownSession ? records.session.version : (knownSession ?? 0),
    ),
    merged,
    profile: profileRead.unreadable === undefined && !ownProfile ? records.profile.version : (storage.profile ?? 0),
    ...(PMap.size(stillUnreadable.sessions) > 0 || stillUnreadable.profile !== undefined
      ? { unreadable: stillUnreadable }
      : {}),
    ...(PMap.size(foreign.sessions) > 0 || (foreign.profile !== undefined && foreign.profile.length > 0)
      ? { foreign }
      : {}),
  };
  // Changes dropped past the bound are not applied again to a newer record: gone, and said so
  // (not of the running save's own records, which it wrote them to).
  const [rebuilt, replaced] = withoutReplacedOverflow(
    next,
    key,
    notes !== undefined && !ownSession,
    profile !== undefined && !ownProfile,
  );
  const problems = [
    ...sessionRead.problems,
    ...profileRead.problems,
    ...(replaced.length === 0
      ? []
      : [
          reported(
            user,
            storeFailure(
              'conflict',
              `another writer changed ${replaced.join(' and ')} of ${JSON.stringify(user)} while more than ${MAX_UNSAVED_CHANGES} changes waited unsaved here: the oldest of them, past that bound, could not be applied to the newer record again and are lost`,
            ),
          ),
        ]),
  ];
  const [saved, effects] = saveIfNeeded(
    withStorage(withLedger(askAgainIfDropped(state, user, storage, kept), ledger), user, rebuilt),
    user,
  );
  return [saved, [...events.map((event): NotesEffect => ({ type: 'record', event })), ...problems, ...effects]];
};

/**
 * `state` asking again for the rewrite of the profile of `user` when `before` held unsaved
 * rewrites that `after` dropped as stale: the rewrite the merge wanted is then of the store's
 * newer profile, asked at once (`resumeRewrite` starts it), not at the next merge.
 */
const askAgainIfDropped = (
  state: NotesState,
  user: string,
  before: NotesUserStorage,
  after: NotesUserStorage,
): NotesState => {
  if (after.unsaved.length === before.unsaved.length) return state;
  const rewrite = selectProfileRewrite(state, user);
  return withRewrite(state, user, { ...rewrite, requested: Math.max(rewrite.requested, rewrite.started + 1) });
};
