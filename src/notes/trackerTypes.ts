/**
 * The public shape of the notable-facts tracker (`tracker.ts`): its options, its methods and
 * what they return.
 */
import type * as E from 'fp-ts/lib/Either.js';
import type { Failure } from '../base/failure.js';
import type { ConversationMessage } from './conversation.js';
import type { NotesBlocks } from './format.js';
import type { NotesLedger } from './ledger.js';
import type { ProfileRewriteMode } from './machine.js';
import type { CategorizedFact, GlobalFacts, NoteCategory, NotesEvent } from './model.js';
import type { CompleteFn } from './port.js';
import type { NotesStore, NotesStoreFailureCode } from './store.js';

/**
 * Why a tracker call did nothing, or what `onError` hears: bad input (`invalid_input`: a call's
 * own, `categories` the tracker could not use, or a save the store refused as holding what it
 * cannot keep, whose changes were dropped), a bug (`internal`), a store that failed, kept
 * answering conflict, refused a save made under a lease another tracker took over, or held a
 * record that cannot be read (`unavailable`, `conflict`, `fenced`, `invalid_notes`;
 * `invalid_notes` too for what of `initial` no store can keep, left out), a clock that failed
 * (`clock_failed`), or a call that brings work to a closed tracker (`closed`).
 */
export type NotesTrackerFailureCode =
  'invalid_input' | 'internal' | NotesStoreFailureCode | 'invalid_notes' | 'clock_failed' | 'closed';

/** A failed tracker call, or a failure in the background reported to `onError`. */
export type NotesTrackerFailure = Failure<NotesTrackerFailureCode>;

/** Options of `createNotableFactsTracker`. */
export interface NotableFactsTrackerOptions {
  /** The model call: `(prompt, { signal }) => Promise<string>`; abort when `signal` fires. */
  readonly complete: CompleteFn;
  /** Where users' notes are kept between messages (default: `memoryNotesStore()`, this process's memory). */
  readonly store?: NotesStore;
  /** Hears every failure no caller is there to receive (a store or clock that failed) and every `internal` one. */
  readonly onError?: (failure: NotesTrackerFailure) => void;
  /**
   * The categories, names or `{ name, description }` (default: the five defaults); a set
   * `parseCategories` refuses reads as the five defaults, told to `onError` as `invalid_input`.
   */
  readonly categories?: ReadonlyArray<string | NoteCategory>;
  /** The number of facts the extraction prompt asks the model to stay within (default 18). */
  readonly softLimit?: number;
  /** Milliseconds a model call may take, from the moment it is made (default 15,000; at most 2^31 - 1). */
  readonly timeoutMs?: number;
  /** Epoch milliseconds now (default `Date.now`). */
  readonly now?: () => number;
  /** Exchanges `contextFor` returns as the history window (default 5; 0: none). */
  readonly historyTurns?: number;
  /**
   * A ledger to start from, such as one read back from a saved state (the store's records win
   * where it has them); what no store can keep (U+0000, an unpaired surrogate) is left out or
   * repaired, and reported to `onError` as `invalid_notes`.
   */
  readonly initial?: NotesLedger;
  /**
   * When an end of stage also has the model rewrite the merged profile: `'auto'` (the default)
   * only when the merge left two facts the supersede rule is unsure of, `true` after every merge
   * that changed the profile, `false` never.
   */
  readonly consolidateWithModel?: ProfileRewriteMode;
  /** The most events `events()` keeps (default 10,000); older ones fold into the snapshot of `eventLog()`. */
  readonly maxEvents?: number;
  /**
   * The idle (user, session) slots kept in memory (default 1,000): past it, the least recently
   * used are released (the store keeps them, and a later message loads them again). What is in
   * flight is kept besides, until it settles.
   */
  readonly cacheSize?: number;
  /**
   * With a store that has leases (a database several processes share): this tracker's name in
   * them, an id of 1 to 200 characters unique among the trackers (default: a random one).
   */
  readonly holder?: string;
  /**
   * With leases: how long a lease lasts from each call (default `timeoutMs` + 30,000; longer than a
   * model call), and how long `close` tries a failing save (twice that: `close` resolves,
   * whatever is still in flight, a model call included, its work left in the queue). Without
   * leases `close` uses `timeoutMs` for both, and waits for a running model call.
   */
  readonly leaseMs?: number;
  /**
   * With leases: how soon a tracker waiting for another's holder to merge its end of stage looks
   * again (default 250). Without: how soon `close` first tries a failed save again. With or
   * without: how long a save waits after its second conflict in a row (twice as long after each further one).
   */
  readonly leasePollMs?: number;
}

/** What a tracker holds in memory now. */
export interface NotesRetained {
  /** Users it holds anything of. */
  readonly users: number;
  /** (user, session) slots it holds: their facts, recent messages or what it knows of their records. */
  readonly sessions: number;
  /** Users with something in flight: an extraction, a rewrite, a load, a save or an end of stage. */
  readonly inFlight: number;
}

/** The event log as a ledger and the events since it: `replayNotes(events, snapshot)` is the current ledger. */
export interface NotesEventLog {
  readonly snapshot: NotesLedger;
  readonly events: ReadonlyArray<NotesEvent>;
}

/** What `recordUserMessage` did: started an extraction for the message, or folded it into the next one. */
export type RecordOutcome = 'started' | 'coalesced';

/** What the main prompt of `user` in `session` gets: the rendered blocks and the recent exchanges. */
export interface NotesContext extends NotesBlocks {
  /** The last exchanges (default 5) recorded for this user and session, oldest first. */
  readonly history: ReadonlyArray<ConversationMessage>;
}

/** What an end of stage merged into a user's profile. */
export interface StageReport {
  readonly user: string;
  /** The sessions whose facts were merged, in merge order. */
  readonly sessions: ReadonlyArray<string>;
  readonly profile: GlobalFacts | undefined;
  /** The profile facts that fell off past the cap of 50. */
  readonly dropped: ReadonlyArray<CategorizedFact>;
  /**
   * `true` when the store had not answered the save of the merge within `timeoutMs`: `profile` is
   * the one merged in this tracker's memory, and whether the store holds it is not known yet (the
   * save's answer is still taken when it comes). Absent otherwise.
   */
  readonly unconfirmed?: true;
}

/** Called after a change of the ledger. */
export type NotesListener = (next: NotesLedger, previous: NotesLedger) => void;

/** Notable facts per user and session, kept by a model in the background. No method throws. */
export interface NotableFactsTracker {
  /**
   * Records the message and schedules an extraction (once the user's notes in the session are
   * loaded from the store); returns at once, never waiting for the model.
   */
  recordUserMessage(user: string, session: string, text: string): E.Either<NotesTrackerFailure, RecordOutcome>;
  /** Records the assistant's reply, for the extraction prompt and the history window. */
  recordAssistantMessage(user: string, session: string, text: string): E.Either<NotesTrackerFailure, void>;
  /** The blocks and history window for the next main prompt of `user` in `session`. */
  contextFor(user: string, session: string): E.Either<NotesTrackerFailure, NotesContext>;
  /**
   * Loads the notes of `user` in `session` and their profile from the store, unless they are
   * loaded: what a request handler awaits before `contextFor` when the store answers later (a
   * database). A failed load is the store's failure, and a record the store holds that cannot be
   * read at all is `invalid_notes` (read again at each call); the tracker then carries on with what it has.
   * A store that leaves a call of the user unanswered for `timeoutMs` (seen so at two looks
   * `timeoutMs` apart, the first at the call) is answered `unavailable` (its answer is still taken
   * when it comes), and one still waiting when `close` ends is answered `closed`.
   */
  load(user: string, session: string): Promise<E.Either<NotesTrackerFailure, void>>;
  /**
   * Ends a stage: merges `session` (default: every session of the user with unmerged facts,
   * those the tracker holds and those the store lists, which it loads for the merge) into the
   * user's profile, once the extractions of the messages recorded before the call have settled
   * (never later ones: it ends under continuous traffic). Answers once the merge's save has
   * settled, with the profile that save stored (or, when the store did not take it, as merged in
   * memory). Never rejects.
   */
  endStage(user: string, session?: string): Promise<E.Either<NotesTrackerFailure, StageReport>>;
  /**
   * Resolves `Right` when the model calls, loads and saves running or queued at the call have
   * settled (not those asked for later); `Left` when it stopped waiting: `unavailable` once a store
   * call was left unanswered for `timeoutMs` (seen so at two looks `timeoutMs` apart), `closed`
   * once `close` gave up on it, `internal` after a bug. Never rejects.
   */
  settled(): Promise<E.Either<NotesTrackerFailure, void>>;
  /**
   * Lets go of the notes of `user` in `session` in memory: at once when nothing is in flight
   * for them, else once it has settled and saved (the user too, with their last session). The
   * store keeps them; a later message or `load` brings them back. Returns at once.
   */
  release(user: string, session: string): E.Either<NotesTrackerFailure, void>;
  /**
   * Closes the tracker, as a server does when it shuts down: from the call on, the calls that
   * bring work (`recordUserMessage`, `recordAssistantMessage`, `load`, `endStage`) answer a
   * failure with code `closed`, and the rest still answer from memory. Resolves once nothing of
   * the tracker's own doing is in flight (the extractions of the messages recorded before and
   * their follow-ups, the saves, the ends of stage asked for here, and with leases the work of
   * the leases it holds, reported to the store, which frees them), then cancels the wake-ups it had asked for, so that no timer of
   * the tracker keeps the process alive (with leases, one waits up to a lease's length). Messages
   * another tracker's holder took stay in the store's queue for that holder. Never rejects;
   * calling it again gives the same promise. The store stays open: close it after.
   */
  close(): Promise<void>;
  /** What the tracker holds in memory now (costs time in proportion to what it counts). */
  retained(): NotesRetained;
  getSnapshot(): NotesLedger;
  subscribe(listener: NotesListener): () => void;
  /** The recorded events (the changes, and the failed and timed-out model calls): every one, up to `maxEvents`. */
  events(): ReadonlyArray<NotesEvent>;
  /** The log as a snapshot and the events since it, which rebuild the ledger however long the tracker ran. */
  eventLog(): NotesEventLog;
}
