/** A live session's options and the calls of an open one (`openSession` in session.ts makes them). */
import type * as E from 'fp-ts/lib/Either.js';
import type * as O from 'fp-ts/lib/Option.js';
import type { RetrievalDecision } from '../../core/retrieve/retrieve.js';
import type { FactStore } from '../../core/store/state.js';
import type { SessionsFolder } from './files.js';
import type {
  CompactedFacts,
  CompactInput,
  CompileContextInput,
  CompiledContext,
  CompileOptions,
  ExplainContextInput,
  IngestedResult,
  IngestOptions,
  IngestResultInput,
  InvalidatedFacts,
  InvalidateFactInput,
  Recorded,
  RecordedPrompt,
  SessionError,
  SessionReport,
} from './model.js';
import type { SessionState } from './sessionState.js';
import type { SnapshotUse } from './snapshot.js';
import type { SessionStore } from './store.js';
import type { SessionTokenizerOptions } from './tokenizer.js';

/** Where the sessions are and how a session runs. */
export interface SessionOptions extends SessionsFolder, SessionTokenizerOptions {
  /** Where the session's log is kept (default: the files under `directory`, `.fact-tracker/sessions` in `cwd`). */
  readonly store?: SessionStore;
  /**
   * Create the session when it has no log yet (default true). When false, opening a session
   * without a log, and every call once its log is gone (deleted since), answers
   * `unknown_session`, and no call writes a new log.
   */
  readonly create?: boolean;
  /** Epoch milliseconds now, for events given without a time (default `Date.now`, made strictly increasing: two calls within one millisecond are two instants). */
  readonly clock?: () => number;
  /** With the default file store: when a dead writer's lock is taken over (default 5,000 ms; at least 2,000). */
  readonly lockStaleMs?: number;
}

/** An open session. No method throws; each catches up with other writers first. */
export interface LiveSession {
  readonly id: string;
  /** Where the log is: its path when the session opened its own files (no `store` given), else `LOCATION#ID`, the given store's location and the id. */
  readonly file: string;
  /** Records a dispatch result and extracts its facts; a result the contract rejects writes nothing; `options` as `IngestOptions` says. */
  ingestResult(input: IngestResultInput, options?: IngestOptions): Promise<E.Either<SessionError, IngestedResult>>;
  /** Records a prompt and returns its `[Session Context]` section; `accept`, when given, may refuse the section before anything is written. */
  compileContext(
    input: CompileContextInput,
    options?: CompileOptions,
  ): Promise<E.Either<SessionError, CompiledContext>>;
  /** The section `compileContext` would return now, recording nothing: a pure query. */
  previewContext(input: ExplainContextInput): Promise<E.Either<SessionError, Omit<CompiledContext, keyof Recorded>>>;
  /** Every fact's score and decision for a prompt, ranked candidates first; records nothing. */
  explainContext(input: ExplainContextInput): Promise<E.Either<SessionError, ReadonlyArray<RetrievalDecision>>>;
  /** The latest prompt the log holds for the task and prompt text of `input`, with the settings its section was made with. */
  recordedPrompt(input: ExplainContextInput): Promise<E.Either<SessionError, O.Option<RecordedPrompt>>>;
  /** Records the closing of the valid facts of (subject, relation). */
  invalidateFact(input: InvalidateFactInput): Promise<E.Either<SessionError, InvalidatedFacts>>;
  /** Records a compaction to `maxFacts` valid facts. */
  compact(input: CompactInput): Promise<E.Either<SessionError, CompactedFacts>>;
  /** The store after every event of the log. */
  snapshot(): Promise<E.Either<SessionError, FactStore>>;
  /** The session's whole state after every event of the log read so far. */
  state(): SessionState;
  /** What reading the log met so far. */
  report(): SessionReport;
  /** Whether the session started from the snapshot beside its log (and how far into the log it reached), or why not. */
  snapshotUse(): SnapshotUse;
  /**
   * Runs the queries of the latest recorded prompts once on the state as read, one at a time,
   * until `stop` says so; records nothing and never fails. A first call then finds the query's
   * code compiled and the lists it reads ready: a warm-up for a process that has just opened
   * the session.
   */
  warm(stop?: () => boolean): Promise<void>;
}
