/**
 * What the notes machine is told (inputs, named in the past tense) and what it asks its runner
 * to do (effects, as data): the vocabulary of `notesTransition`.
 */
import type * as E from 'fp-ts/lib/Either.js';
import type { Failure } from '../base/failure.js';
import type { CategorizedFact, GlobalFacts, NotesEvent } from './model.js';
import type { NotesState } from './machine.js';
import type { ModelOutcome } from './port.js';
import type { LeaseAnswer, LeaseRequest } from './leases.js';
import type { NotesRecords, NotesStoreFailure, NotesWrite, NotesWritten } from './store.js';

/** A user message was recorded: extract now, or fold it into the follow-up of the running extraction. */
export interface NotesUserMessageRecorded {
  readonly type: 'notes/userMessageRecorded';
  readonly user: string;
  readonly session: string;
  readonly text: string;
  /** Epoch milliseconds of the message: how new the facts told in it are. */
  readonly at?: number;
}

/** An assistant reply was recorded: it shows in the history window and in later prompts. */
export interface NotesAssistantMessageRecorded {
  readonly type: 'notes/assistantMessageRecorded';
  readonly user: string;
  readonly session: string;
  readonly text: string;
}

/** An extraction of the latest user message was asked for, with no new message (a recorded log does this). */
export interface NotesExtractionRequested {
  readonly type: 'notes/extractionRequested';
  readonly user: string;
  readonly session: string;
}

/** The running extraction of (user, session) has an outcome. */
export interface NotesExtractionSettled {
  readonly type: 'notes/extractionSettled';
  readonly user: string;
  readonly session: string;
  readonly outcome: ModelOutcome;
  readonly at: number;
}

/**
 * A stage ended for a user: merge `session` (default: every session with unmerged facts) into
 * the profile, once the extractions of the messages recorded before it have settled.
 */
export interface NotesStageEnded {
  readonly type: 'notes/stageEnded';
  readonly user: string;
  readonly session?: string;
  readonly at: number;
  /** The runner's name for this end of stage, carried by the `merged` effect that ends it. */
  readonly id?: number;
}

/** The running profile rewrite of a user has an outcome. */
export interface NotesProfileRewriteSettled {
  readonly type: 'notes/profileRewriteSettled';
  readonly user: string;
  readonly outcome: ModelOutcome;
  readonly at: number;
}

/** The notes of `user` in `session` (and their profile) are wanted: load them unless they are. */
export interface NotesLoadRequested {
  readonly type: 'notes/loadRequested';
  readonly user: string;
  readonly session: string;
}

/** The store answered a load of `user` in `session`. */
export interface NotesLoaded {
  readonly type: 'notes/loaded';
  readonly user: string;
  readonly session: string;
  readonly outcome: E.Either<NotesStoreFailure, NotesRecords>;
  /**
   * The answer of a load the runner gave up on, as failed, after its bound: taken only while no
   * other load of the session runs and the session was not let go of since, and only the records
   * newer than those the machine knows.
   */
  readonly late?: true;
  /** A failed answer standing for a load the runner gave up on after its bound: its `late` answer may follow. */
  readonly givenUp?: true;
}

/** The store answered the running save of `user`. */
export interface NotesSaved {
  readonly type: 'notes/saved';
  readonly user: string;
  readonly outcome: E.Either<NotesStoreFailure, NotesWritten>;
}

/** The store answered the call `call` listing the sessions of `user` with facts not merged yet. */
export interface NotesUnmergedListed {
  readonly type: 'notes/unmergedListed';
  readonly user: string;
  /** The number of the `listUnmerged` effect it answers. */
  readonly call: number;
  readonly outcome: E.Either<NotesStoreFailure, ReadonlyArray<string>>;
}

/**
 * The runner no longer needs the notes of `user` in `session` in memory (a request handler is
 * done with them, or its cache is full): they go once nothing is in flight for them and the
 * store holds what the ledger holds, the user too once nothing of theirs is left.
 */
export interface NotesReleaseRequested {
  readonly type: 'notes/releaseRequested';
  readonly user: string;
  readonly session: string;
}

/** The store answered the running lease call of (user, session). */
export interface NotesLeaseAnswered {
  readonly type: 'notes/leaseAnswered';
  readonly user: string;
  readonly session: string;
  readonly outcome: E.Either<NotesStoreFailure, LeaseAnswer>;
}

/** The wake-up the machine asked for (`wake`) is due: look at the lease of (user, session) again. */
export interface NotesLeaseWoke {
  readonly type: 'notes/leaseWoke';
  readonly user: string;
  readonly session: string;
}

/**
 * Without leases: try the save of the unsaved changes of `user` again (after a failed one), as
 * the next change would. What `close` sends while it tries a failing save for up to `leaseMs`.
 */
export interface NotesSaveRetried {
  readonly type: 'notes/saveRetried';
  readonly user: string;
}

/** The wait the machine asked for after a save's conflict (`backOff`) is over: load the records again, and save. */
export interface NotesBackedOff {
  readonly type: 'notes/backedOff';
  readonly user: string;
}

/** What the machine is told. */
export type NotesInput =
  | NotesUserMessageRecorded
  | NotesAssistantMessageRecorded
  | NotesExtractionRequested
  | NotesExtractionSettled
  | NotesStageEnded
  | NotesProfileRewriteSettled
  | NotesLoadRequested
  | NotesLoaded
  | NotesSaved
  | NotesUnmergedListed
  | NotesReleaseRequested
  | NotesLeaseAnswered
  | NotesLeaseWoke
  | NotesSaveRetried
  | NotesBackedOff;

/** Ask the model `prompt` for the fact list of `user` in `session`; answer with `notes/extractionSettled`. */
export interface NotesExtractEffect {
  readonly type: 'extract';
  readonly user: string;
  readonly session: string;
  readonly prompt: string;
}

/** Ask the model `prompt` to rewrite the profile of `user`; answer with `notes/profileRewriteSettled`. */
export interface NotesRewriteProfileEffect {
  readonly type: 'rewriteProfile';
  readonly user: string;
  readonly prompt: string;
}

/** An event the transition applied to the ledger: log it (the log replays to the ledger). */
export interface NotesRecordEffect {
  readonly type: 'record';
  readonly event: NotesEvent;
}

/** An end of stage merged `sessions` (in merge order) into the profile; `dropped` fell off past the cap. */
export interface NotesMergedEffect {
  readonly type: 'merged';
  readonly user: string;
  readonly sessions: ReadonlyArray<string>;
  readonly dropped: ReadonlyArray<CategorizedFact>;
  /**
   * The user's profile (absent: none) as the save of the merge stored it (after a conflict, the
   * merge applied again to the store's newer profile), or as the merge left it in memory when the
   * store did not take that save; for a report made after the user may have been let go of.
   */
  readonly profile?: GlobalFacts;
  /** The `id` of the `notes/stageEnded` input it ends. */
  readonly stage?: number;
  /** The store refused the save of its merge: `profile` is the merge as made in memory, not stored. */
  readonly unconfirmed?: true;
}

/** Load the notes of `user` in `session` and their profile from the store; answer with `notes/loaded`. */
export interface NotesLoadEffect {
  readonly type: 'load';
  readonly user: string;
  readonly session: string;
}

/** Save `write` for `user`; answer with `notes/saved`. */
export interface NotesSaveEffect {
  readonly type: 'save';
  readonly user: string;
  readonly write: NotesWrite;
}

/**
 * List the sessions of `user` whose stored facts are not merged yet (those a tracker let go of
 * included); answer with `notes/unmergedListed` carrying `call`.
 */
export interface NotesListUnmergedEffect {
  readonly type: 'listUnmerged';
  readonly user: string;
  readonly call: number;
}

/** A store call that failed, or returned a record that cannot be read (`invalid_notes`). */
export type StoreCallFailure = NotesStoreFailure | Failure<'invalid_notes'>;

/** A store call of `user` failed, or read a record that cannot be used (a conflict the machine resolves itself): report it. */
export interface NotesStoreFailedEffect {
  readonly type: 'storeFailed';
  readonly user: string;
  readonly failure: StoreCallFailure;
}

/** Make this lease call for (user, session); answer with `notes/leaseAnswered`. */
export interface NotesLeaseEffect {
  readonly type: 'lease';
  readonly user: string;
  readonly session: string;
  readonly request: LeaseRequest;
}

/** Answer with `notes/leaseWoke` for (user, session) after `afterMs` milliseconds. */
export interface NotesWakeEffect {
  readonly type: 'wake';
  readonly user: string;
  readonly session: string;
  readonly afterMs: number;
}

/**
 * The save of `user` met a conflict again, the `retries`-th time in a row after the first: answer
 * with `notes/backedOff` after a wait that grows with `retries` (the tracker waits `leasePollMs`,
 * twice as long each time, up to a third of `timeoutMs`, or of `leaseMs` with leases).
 */
export interface NotesBackOffEffect {
  readonly type: 'backOff';
  readonly user: string;
  readonly retries: number;
}

/** What the runner of the machine does after a transition, as data. */
export type NotesEffect =
  | NotesExtractEffect
  | NotesRewriteProfileEffect
  | NotesRecordEffect
  | NotesMergedEffect
  | NotesLoadEffect
  | NotesSaveEffect
  | NotesListUnmergedEffect
  | NotesStoreFailedEffect
  | NotesLeaseEffect
  | NotesWakeEffect
  | NotesBackOffEffect;

/** The next state and the effects to run. */
export type NotesTransition = readonly [NotesState, ReadonlyArray<NotesEffect>];

/** Runs `next` on the state `first` left, keeping the effects of both in order. */
export const andThen = (first: NotesTransition, next: (state: NotesState) => NotesTransition): NotesTransition => {
  const [state, effects] = first;
  const [after, more] = next(state);
  return more.length === 0 ? [after, effects] : [after, [...effects, ...more]];
};
