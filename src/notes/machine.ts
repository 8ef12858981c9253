/**
 * The state of the notes machine (`transition.ts`): the ledger, the conversations it is kept
 * from, the model-backed profile rewrites, and what the machine knows of each user's records in
 * the notes store. Plain, frozen data, read through the selectors here.
 *
 * Scheduling is state: per (user, session) at most one extraction runs, and the user messages
 * recorded meanwhile are folded into one follow-up. Counters say what is covered: `requested`
 * user messages, of which the running (or last) extraction covers the first `started`, and the
 * last settled one the first `settled`. So "wait for what was asked before now" is a
 * comparison, and waiting never depends on traffic that comes later.
 */
import * as E from 'fp-ts/lib/Either.js';
import { deepFreeze } from '../persistent/freeze.js';
import { refuseArgument } from '../base/describe.js';
import * as PMap from '../persistent/persistentMap.js';
import { type ConversationMessage, turnCount } from './conversation.js';
import type { GlobalFacts } from './global.js';
import { emptyNotesLedger, idOfKey, isLedger, type NotesLedger, ownLedger, storedKey } from './ledger.js';
import { DEFAULT_CATEGORIES, describeCategories, NOTES_LIMITS, type NoteCategory, parseCategories } from './model.js';
import type { CategorizedFact, NotesEvent } from './model.js';
import { isLeaseAtRest, type NotesLeaseSettings, type NotesLeaseSlot } from './leaseState.js';
import type { JsonValue } from './store.js';

/** How the machine builds prompts and keeps conversations. */
export interface NotesSettings {
  /** The ledger's categories, with the descriptions the prompts show. */
  readonly categories: ReadonlyArray<NoteCategory>;
  /** The number of facts the extraction prompt asks the model to stay within. */
  readonly softLimit: number;
  /** Exchanges the history window of the main prompt keeps. */
  readonly historyTurns: number;
  /**
   * When an end of stage asks the model to rewrite the merged profile: after every merge that
   * changed it (`true`), only after one that left two facts that may tell of the same thing in
   * other words (`'auto'`), or never (`false`).
   */
  readonly consolidateWithModel: ProfileRewriteMode;
  /** Present when the store has leases: trackers sharing it take turns on each (user, session). */
  readonly lease?: NotesLeaseSettings;
}

/** When the model rewrites a merged profile: always, when the merge is unsure, or never. */
export type ProfileRewriteMode = boolean | 'auto';

/** One user's conversation in one session: its recent messages and its extractions. */
export interface NotesConversation {
  /** The recent messages, oldest first: bounded, enough for the history window and the next prompt. */
  readonly transcript: ReadonlyArray<ConversationMessage>;
  /** Extractions asked for: one per user message. */
  readonly requested: number;
  /** The requests the running (or last) extraction covers. */
  readonly started: number;
  /** The requests covered by the extractions that have settled. */
  readonly settled: number;
  /** Epoch milliseconds of the latest user message recorded, when the runner gave one. */
  readonly requestedAt?: number;
  /**
   * Epoch milliseconds of the latest user message the running (or last) extraction covers, as
   * settled when it started (`messageTime`): the time its list's facts count as told.
   */
  readonly startedAt?: number;
  /** What the machine knows of the (user, session)'s lease, when the store has leases. */
  readonly lease?: NotesLeaseSlot;
  /**
   * The running extraction was started blind (see `blind.ts`): the keys of the facts its model
   * was shown, the session's stored record unread.
   */
  readonly blind?: ReadonlyArray<string>;
}

/** An end of stage waiting for the extractions of the messages recorded before it. */
export interface NotesPendingStage {
  /** The runner's name for it, carried by the `merged` effect that ends it. */
  readonly id?: number;
  readonly session?: string;
  readonly at: number;
  /** The conversations (stored keys) it waits for, and how many requests each must have settled. */
  readonly waitFor: ReadonlyArray<readonly [string, number]>;
  /**
   * Without a session: the number of the store call listing the user's unmerged sessions that
   * it waits for (absent once answered).
   */
  readonly listing?: number;
  /** The sessions (stored keys) the store listed that it waits to be loaded. */
  readonly loads?: ReadonlyArray<string>;
  /**
   * Those of `loads` it loaded for itself and nothing else uses: let go of once it has merged
   * (a message, a load or an end of stage naming one of them meanwhile keeps it).
   */
  readonly fetched?: ReadonlyArray<string>;
  /** Merged as the holder of its session's lease: the fence of that turn, which the merge's save names. */
  readonly fence?: number;
}

/** One user's model-backed profile rewrites, counted as the extractions are. */
export interface NotesProfileRewrite {
  readonly requested: number;
  readonly started: number;
  readonly settled: number;
  /** The profile the running rewrite was asked about: a rewrite of an older profile is not applied. */
  readonly basis?: GlobalFacts;
}

/**
 * What the machine knows of one user's records in the notes store. A change is an event
 * applied to the ledger and kept in `unsaved` until a save of it is confirmed; after a
 * conflict, the fresh records are loaded and the unsaved events applied to them again, so two
 * writers lose nothing of each other's merges (two extractions of one session side by side are
 * two whole lists, of which one stays: leases keep those apart).
 */
export interface NotesUserStorage {
  /** The store's version of each session record loaded or written, by stored key (0: not in the store). */
  readonly sessions: PMap.PersistentMap<number>;
  /**
   * Whether the store's record of each session, at the version in `sessions`, was merged (holds a
   * `mergedAt`), by stored key: after a conflict, a merge applied again counts its session only
   * where the store has not counted it, whoever merged it and when.
   */
  readonly merged: PMap.PersistentMap<boolean>;
  /** The store's version of the profile record, once known (0: not in the store). */
  readonly profile?: number;
  /** The sessions (stored keys) whose load runs. */
  readonly loading: ReadonlyArray<string>;
  /** The sessions (stored keys) whose running load was asked before a lease was taken: asked again once it answers (`reloadAfresh`). */
  readonly reloading?: ReadonlyArray<string>;
  /** The sessions (stored keys) whose last load failed: a lease holder starts no work there until one succeeds. */
  readonly unloaded?: ReadonlyArray<string>;
  /**
   * The sessions (stored keys) whose load was given up unanswered and whose answer may still be
   * taken when it comes late: not once the session was let go of, since its answer is then no
   * newer than what the tracker saved there and forgot.
   */
  readonly givenUp?: ReadonlyArray<string>;
  /** The changes to this user's notes the store has not confirmed, oldest first. */
  readonly unsaved: ReadonlyArray<NotesEvent>;
  /** What the running save writes: the first `count` unsaved events, to these sessions (stored keys) and maybe the profile. */
  readonly saving?: {
    readonly count: number;
    readonly sessions: ReadonlyArray<string>;
    readonly profile: boolean;
    /** Those of `sessions` it writes as merged. */
    readonly merged: ReadonlyArray<string>;
    /** The profile it writes, as the ledger held it: what an end of stage it stores answers. */
    readonly written?: GlobalFacts;
    /** `changes` when it began: the records `overflow` names up to it are among those it writes. */
    readonly upTo?: number;
    /** A save of one record while `isolating`: it confirms no unsaved event by itself. */
    readonly alone?: true;
  };
  /**
   * A merge this machine applied to the profile in memory was dropped, its session's record refused
   * as `invalid_input` (`refusedSave.ts`) or its save `fenced` (`saveAnswer.ts`): the profile is
   * rebuilt from the store's (an empty one where it holds none) by the next load, the unsaved
   * changes applied to it again, and is not saved until then.
   */
  readonly profileStale?: true;
  /** After a save of several records refused as `invalid_input`: the records still to save alone (`isolation.ts`). */
  readonly isolating?: NotesIsolation;
  /**
   * The records touched by unsaved changes dropped from `unsaved` past its bound
   * (`MAX_UNSAVED_CHANGES`), each with `changes` when it was dropped: still written by the next save,
   * so no change is lost for the bound (only not applied again after a conflict, which is reported).
   */
  readonly overflow?: { readonly sessions: PMap.PersistentMap<number>; readonly profile?: number };
  /**
   * The saves of the attempt under way that met a conflict in a row: present from a conflict until
   * the attempt ends (a save lands or fails otherwise, a load it waits for fails, or it is given up
   * after `MAX_SAVE_CONFLICTS`), so a store that answers conflict every time is not called in a loop.
   */
  readonly conflicts?: number;
  /** Waiting after a conflict (a `backOff` effect runs): the records (stored keys) to load again once it is over. */
  readonly backingOff?: ReadonlyArray<string>;
  /** Ends of stage merged whose answer waits for the save of their changes (`stageAnswers.ts`), oldest first. */
  readonly answers?: ReadonlyArray<NotesStageAnswer>;
  /** Changes made so far, and those whose save has settled (confirmed, or failed and left for the next save). */
  readonly changes: number;
  readonly settledChanges: number;
  /** The calls made listing the user's unmerged sessions: each call is numbered by it. */
  readonly lists?: number;
  /**
   * The records the store holds that the machine could not read at all, as last loaded: the version
   * of each such session record (by stored key) and of the profile. Nothing is saved over them; the
   * changes wait for a load that reads them.
   */
  readonly unreadable?: { readonly sessions: PMap.PersistentMap<number>; readonly profile: number | undefined };
  /**
   * The fact entries of categories the machine does not know (another tracker's), as the store
   * held them in each record last read: session records by stored key, and the profile. A save
   * writes them back with the record.
   */
  readonly foreign?: {
    readonly sessions: PMap.PersistentMap<ReadonlyArray<JsonValue>>;
    readonly profile: ReadonlyArray<JsonValue> | undefined;
  };
  /**
   * The sessions (stored keys) with unsaved changes made as the holder of their lease, and the
   * fence of that turn (the latest): their saves name it, so the store refuses them once another
   * tracker has taken the lease over. Gone once the store has taken the report that the work is done.
   */
  readonly fences?: PMap.PersistentMap<number>;
}

/**
 * The records of a save refused as `invalid_input` that wrote several, saved one at a time until
 * each has been saved or refused alone: a refusal of one record names the record, and only its
 * changes are dropped. Once none is left, the first `count` unsaved events (those the refused save
 * wrote, less those dropped) are confirmed: every record they touch was saved alone after them.
 */
export interface NotesIsolation {
  readonly sessions: ReadonlyArray<string>;
  readonly profile: boolean;
  readonly count: number;
  /** The refused save's `upTo`: the records `overflow` names up to it are among `sessions` and `profile`. */
  readonly upTo?: number;
  /** The profile as saved alone, when it was: what the ends of stage the confirmed events store are answered with. */
  readonly written?: GlobalFacts;
  /**
   * The sessions (stored keys) saved alone marked merged whose merge the store's profile does not
   * hold yet (it is saved after them): a merge applied again after a conflict counts them in
   * `sessionCount` once, though their records in the store say merged.
   */
  readonly uncounted?: ReadonlyArray<string>;
}

/**
 * An end of stage merged, its answer (the `merged` effect) waiting for the save of its changes:
 * answered with the profile that save stored, or, once no save of them is under way (it failed,
 * or waits on a record the store holds unreadable), with the profile as merged in memory.
 */
export interface NotesStageAnswer {
  readonly sessions: ReadonlyArray<string>;
  readonly dropped: ReadonlyArray<CategorizedFact>;
  /** The `id` of the `notes/stageEnded` input it answers. */
  readonly stage?: number;
  /** The changes the merge made (the very events kept in `unsaved`): saved once none is left there. */
  readonly changes: ReadonlyArray<NotesEvent>;
}

/** What the machine keeps of one user besides their notes. */
export interface NotesUserMachine {
  /**
   * The number `NotesState.made` gave this machine when it was made. One made again for a user
   * who was let go of has another, so a wait that began before tells its counters, which start
   * afresh, from those it was waiting on.
   */
  readonly generation: number;
  /** Their conversations by session (stored through `storedKey`), in a persistent map. */
  readonly conversations: PMap.PersistentMap<NotesConversation>;
  /** The conversations (stored keys) with messages no settled extraction covers yet: what waiting looks at. */
  readonly busy: ReadonlyArray<string>;
  readonly rewrite: NotesProfileRewrite;
  readonly storage: NotesUserStorage;
  /** Ends of stage asked for and waiting, oldest first. */
  readonly stages: ReadonlyArray<NotesPendingStage>;
  /** Sessions (stored keys) released while work on them was in flight: they go once it has settled. */
  readonly releasing: ReadonlyArray<string>;
  /** The conversations (stored keys) whose lease is not at rest: items to add, items in the queue, a call, the lease held. */
  readonly leased: ReadonlyArray<string>;
}

/**
 * The machine's state: the ledger, and per user the conversations, rewrites and storage that
 * keep it (one entry per user, so a step that touches a user copies one path of one map).
 * Plain, frozen data.
 */
export interface NotesState {
  readonly settings: NotesSettings;
  readonly ledger: NotesLedger;
  readonly users: PMap.PersistentMap<NotesUserMachine>;
  /**
   * The users with something in flight (an extraction, a rewrite, a load, a save, an end of
   * stage): what waiting for everything looks at, so its cost is that of the work in flight,
   * never of the users and conversations served before.
   */
  readonly active: PMap.PersistentMap<true>;
  /** The user machines made so far, each numbered by it (`NotesUserMachine.generation`). */
  readonly made: number;
  /** The items added to lease queues so far: the number in each one's key (`NotesLeaseSettings.instance`). */
  readonly issued: number;
}

/** Options of `initialNotesState`. */
export interface NotesStateOptions {
  /** The categories, names or `{ name, description }` (default: the five defaults). */
  readonly categories?: ReadonlyArray<string | NoteCategory>;
  /** Default 18, at most 25. */
  readonly softLimit?: number;
  /** Default 5. */
  readonly historyTurns?: number;
  /** Default `'auto'`. */
  readonly consolidateWithModel?: ProfileRewriteMode;
  /** A ledger to start from; its categories win, described by `categories` where they name them. */
  readonly ledger?: NotesLedger;
  /** How to take part in the store's leases (default: the store has none). */
  readonly lease?: NotesLeaseSettings;
}

const positive = (value: unknown, fallback: number): number =>
  typeof value === 'number' && value > 0 && Number.isFinite(value) ? value : fallback;

/** The state of a machine that has seen nothing yet (or only the ledger it starts from). */
export const initialNotesState = (options: NotesStateOptions = {}): NotesState => {
  const settings: NotesStateOptions = typeof options === 'object' && options !== null ? options : {};
  const known = E.getOrElse(() => DEFAULT_CATEGORIES)(parseCategories(settings.categories));
  const ledger = isLedger(settings.ledger) ? ownLedger(settings.ledger) : emptyNotesLedger({ categories: known });
  return deepFreeze({
    settings: {
      categories: describeCategories(ledger.categories, known),
      softLimit: Math.min(Math.floor(positive(settings.softLimit, NOTES_LIMITS.softLimit)), NOTES_LIMITS.hardCap),
      historyTurns: turnCount(settings.historyTurns),
      consolidateWithModel:
        settings.consolidateWithModel === true || settings.consolidateWithModel === false
          ? settings.consolidateWithModel
          : 'auto',
      ...(settings.lease === undefined ? {} : { lease: settings.lease }),
    },
    ledger,
    users: PMap.empty,
    active: PMap.empty,
    made: 0,
    issued: 0,
  });
};

/** A conversation nothing was recorded in yet. */
export const EMPTY_CONVERSATION: NotesConversation = deepFreeze({
  transcript: [],
  requested: 0,
  started: 0,
  settled: 0,
});
const NO_REWRITE: NotesProfileRewrite = deepFreeze({ requested: 0, started: 0, settled: 0 });
/** The storage of a user the machine has not touched. */
export const UNTOUCHED: NotesUserStorage = deepFreeze({
  sessions: PMap.empty,
  merged: PMap.empty,
  loading: [],
  unsaved: [],
  changes: 0,
  settledChanges: 0,
});
const NEW_USER: NotesUserMachine = deepFreeze({
  generation: 0,
  conversations: PMap.empty,
  busy: [],
  rewrite: NO_REWRITE,
  storage: UNTOUCHED,
  stages: [],
  releasing: [],
  leased: [],
});

/** What the machine keeps of `user`. */
export const selectUserMachine = (state: NotesState, user: string): NotesUserMachine =>
  PMap.get(state.users, user) ?? NEW_USER;

/**
 * `state`, refused with a TypeError when it is not a notes state (null from an unset variable,
 * a ledger): a programmer's mistake, said plainly rather than as a failure deep inside.
 */
export const checkedNotesState = (state: NotesState): NotesState => {
  if (
    typeof state !== 'object' ||
    state === null ||
    typeof state.users !== 'object' ||
    state.users === null ||
    typeof state.settings !== 'object' ||
    state.settings === null
  )
    refuseArgument('the state', state, 'a notes state (initialNotesState makes one)');
  return state;
};

/** What the machine keeps of `user`, for a selector: a user that is no string has nothing kept, as in the ledger's. */
const selectedUser = (state: NotesState, user: string): NotesUserMachine => {
  const checked = checkedNotesState(state);
  return typeof user === 'string' ? selectUserMachine(checked, user) : NEW_USER;
};

/** The ids of the users the machine keeps anything of. */
export const selectMachineUsers = (state: NotesState): ReadonlyArray<string> => PMap.keys(state.users);

/** The conversation of `user` in `session`, if anything was recorded for it. */
export const selectConversation = (state: NotesState, user: string, session: string): NotesConversation | undefined => {
  const { conversations } = selectedUser(state, user);
  return typeof session === 'string' ? PMap.get(conversations, storedKey(session)) : undefined;
};

/** The conversations of `user`, by session. */
export const selectUserConversations = (
  state: NotesState,
  user: string,
): ReadonlyArray<readonly [string, NotesConversation]> => {
  const entries: Array<readonly [string, NotesConversation]> = [];
  PMap.forEach(selectedUser(state, user).conversations, (conversation, key) =>
    entries.push([idOfKey(key), conversation]),
  );
  return entries;
};

/** The profile rewrites of `user` so far. */
export const selectProfileRewrite = (state: NotesState, user: string): NotesProfileRewrite =>
  selectedUser(state, user).rewrite;

/** What the machine knows of the records of `user` in the store. */
export const selectUserStorage = (state: NotesState, user: string): NotesUserStorage =>
  selectedUser(state, user).storage;

/**
 * True once the notes of `user` in `session` are loaded from the store (or were found absent
 * there); a session that is no string is not. A storage that is none is refused with a TypeError.
 */
export const isLoaded = (storage: NotesUserStorage, session: string): boolean => {
  if (typeof storage !== 'object' || storage === null || typeof storage.sessions !== 'object')
    refuseArgument('the storage', storage, "a user's notes storage (selectUserStorage gives one)");
  return typeof session === 'string' && PMap.has(storage.sessions, storedKey(session));
};

/**
 * True once the notes of `user` in `session` were read from the store: loaded, and the last load
 * did not fail. A failed load counts the records as absent (so work goes on), but leaves them
 * unread: the next load, message or end of stage reads the store again.
 */
export const isRead = (storage: NotesUserStorage, session: string): boolean =>
  isLoaded(storage, session) && storage.unloaded?.includes(storedKey(session)) !== true;

/** The `givenUp` field of a user's storage holding `keys`: spread into the storage (none when empty). */
export const givenUpField = (keys: ReadonlyArray<string>): { givenUp?: ReadonlyArray<string> } =>
  keys.length === 0 ? {} : { givenUp: keys };

/**
 * Whether a message or an end of stage finds the notes of `user` in `session` read: without
 * leases, `isRead` (a failed load is tried again then); with them, `isLoaded` (a holder whose load
 * failed tries it again itself, as a failed save, and starts no work meanwhile).
 */
export const hasRead = (state: NotesState, user: string, session: string): boolean =>
  (state.settings.lease === undefined ? isRead : isLoaded)(selectUserStorage(state, user), session);

/**
 * Which of the records a load of `session` reads the store holds unreadable, as last loaded: the
 * session's, the profile, or neither (`undefined`). Changes to it wait in memory until it can be read.
 */
export const selectUnreadableRecord = (
  storage: NotesUserStorage,
  session: string,
): 'session' | 'profile' | undefined => {
  if (storage.unreadable === undefined) return undefined;
  if (PMap.has(storage.unreadable.sessions, storedKey(session))) return 'session';
  return storage.unreadable.profile === undefined ? undefined : 'profile';
};

/**
 * True when a `load` of `user` in `session` has nothing to read: the notes were read and are
 * readable, and with leases they are this tracker's own, under a lease it holds. Otherwise the
 * load reads the store again (a record found unreadable may have been repaired, another tracker's
 * holder may have saved since), and its caller is answered once it has.
 */
export const isLoadNeedless = (state: NotesState, user: string, session: string): boolean => {
  const storage = selectUserStorage(state, user);
  return (
    isRead(storage, session) &&
    selectUnreadableRecord(storage, session) === undefined &&
    (state.settings.lease === undefined || selectConversation(state, user, session)?.lease?.held === true)
  );
};

/** True while an extraction of the conversation runs. A conversation that is none is refused with a TypeError. */
export const isExtracting = (conversation: NotesConversation): boolean => {
  if (typeof conversation !== 'object' || conversation === null)
    refuseArgument('the conversation', conversation, 'a notes conversation (selectConversation gives one)');
  return conversation.started > conversation.settled;
};

/**
 * True while `machine` runs work of its own besides its leases: an extraction, an end of stage
 * (or its answer, waiting for its save), a rewrite, a load or a save (or the wait after its conflict).
 */
export const hasWorkBesidesLeases = (machine: NotesUserMachine): boolean =>
  machine.busy.length > 0 ||
  machine.stages.length > 0 ||
  machine.rewrite.requested > machine.rewrite.settled ||
  machine.storage.loading.length > 0 ||
  machine.storage.saving !== undefined ||
  machine.storage.backingOff !== undefined ||
  machine.storage.changes > machine.storage.settledChanges ||
  machine.storage.answers !== undefined;

/** True while `machine` has something in flight, which `settled()` waits for. */
export const isUserActive = (machine: NotesUserMachine): boolean =>
  machine.leased.length > 0 || hasWorkBesidesLeases(machine);

const withUser = (state: NotesState, user: string, machine: NotesUserMachine): NotesState => {
  // A user the machine does not keep gets a machine of a new generation.
  const made = PMap.has(state.users, user) ? state.made : state.made + 1;
  const frozen = Object.freeze(made === state.made ? machine : { ...machine, generation: made });
  const active = isUserActive(frozen) ? PMap.set(state.active, user, true as const) : PMap.remove(state.active, user);
  return Object.freeze({ ...state, users: PMap.set(state.users, user, frozen), active, made });
};

/** `state` without anything of `user` in the machine (the ledger is the caller's to change). */
export const withoutUserMachine = (state: NotesState, user: string): NotesState =>
  Object.freeze({ ...state, users: PMap.remove(state.users, user), active: PMap.remove(state.active, user) });

/** `state` with the machine of `user` replaced (what releasing a session leaves of it). */
export const withUserMachine = withUser;

/** `keys` with `key` in it or not, as `wanted` says (the same array when it already is). */
const toggled = (keys: ReadonlyArray<string>, key: string, wanted: boolean): ReadonlyArray<string> =>
  wanted === keys.includes(key) ? keys : wanted ? [...keys, key] : keys.filter((other) => other !== key);

/** `state` with the conversation of `user` in `session` replaced. */
export const withConversation = (
  state: NotesState,
  user: string,
  session: string,
  conversation: NotesConversation,
): NotesState => {
  const machine = selectUserMachine(state, user);
  const key = storedKey(session);
  const busy = conversation.requested > conversation.settled;
  return withUser(state, user, {
    ...machine,
    conversations: PMap.set(machine.conversations, key, deepFreeze(conversation)),
    leased: toggled(machine.leased, key, !isLeaseAtRest(conversation.lease)),
    busy: toggled(machine.busy, key, busy),
  });
};

/** `state` with `ledger` (the same state when it is the same ledger). */
export const withLedger = (state: NotesState, ledger: NotesLedger): NotesState =>
  ledger === state.ledger ? state : Object.freeze({ ...state, ledger });

/** `state` with the profile rewrites of `user` replaced. */
export const withRewrite = (state: NotesState, user: string, rewrite: NotesProfileRewrite): NotesState =>
  withUser(state, user, { ...selectUserMachine(state, user), rewrite: deepFreeze(rewrite) });

/** `state` with the waiting ends of stage of `user` replaced. */
export const withStages = (state: NotesState, user: string, stages: ReadonlyArray<NotesPendingStage>): NotesState =>
  withUser(state, user, { ...selectUserMachine(state, user), stages: deepFreeze(stages) });

/** `state` with the storage of `user` replaced. */
export const withStorage = (state: NotesState, user: string, storage: NotesUserStorage): NotesState =>
  withUser(state, user, { ...selectUserMachine(state, user), storage: deepFreeze(storage) });
