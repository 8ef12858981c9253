/** The values a live session takes and gives: plain data, no file handles. */
import type * as E from 'fp-ts/lib/Either.js';
import type { Extraction } from '../../core/extract/extractor.js';
import type { SessionFact } from '../../core/fact.js';
import type { HistoryLineErrorCode } from '../../core/history/events.js';
import type { ReplayError } from '../../core/replay/replay.js';
import type { ContractError } from '../../core/extract/parse.js';
import type { CompactionReport } from '../../core/store/compact.js';
import type { FactTag, SourceRole } from '../../core/fact.js';
import type { SectionLayout } from '../../core/retrieve/defaults.js';
import type { TokenizerName } from '../../tokens/names.js';

/**
 * Why a store could not be reached or used at all, whichever session was asked for: its
 * address is not one (`store_url`), its server cannot be reached (`store_unreachable`), it
 * refused the credentials (`store_auth`) or an operation (`store_privilege`: a privilege the
 * role lacks, or a write to a read-only server), or its schema is missing or newer than this
 * library (`store_schema`).
 */
export const STORE_ACCESS_CODES = [
  'store_url',
  'store_unreachable',
  'store_auth',
  'store_privilege',
  'store_schema',
] as const;
export type StoreAccessCode = (typeof STORE_ACCESS_CODES)[number];

/** Why a session call did nothing. */
export interface SessionError {
  readonly code:
    | 'invalid_session_id'
    | 'unknown_session'
    | 'io'
    | 'conflict'
    | 'internal'
    | StoreAccessCode
    | 'invalid_input'
    | 'output_too_large'
    | 'prompt_too_large'
    /** A caller's `accept` refused the section as planned (`compileContext`'s options). */
    | 'answer_too_large'
    | HistoryLineErrorCode
    | ContractError['code'];
  readonly message: string;
}

/** A dispatch result to record: raw agent text or the result object, as the history format takes them. */
export interface IngestResultInput {
  readonly role: SourceRole;
  readonly taskId: string;
  readonly output: string | Readonly<Record<string, unknown>>;
  /** Epoch milliseconds (default: the session's clock). */
  readonly at?: number;
}

/** A prompt to compile, as a history prompt event holds it. */
export interface CompileContextInput {
  readonly taskId: string;
  readonly taskPrompt: string;
  readonly tags?: ReadonlyArray<FactTag>;
  readonly maxFacts?: number;
  readonly maxTokens?: number;
  /** The section's layout (default `lines`: one line per fact), kept in the prompt's line. */
  readonly layout?: SectionLayout;
  /** Epoch milliseconds (default: the session's clock). */
  readonly at?: number;
}

/**
 * How `compileContext` records: `accept` may refuse the section as planned, before its prompt is
 * written (a Left, or a promise of one, is the call's answer).
 */
export interface CompileOptions {
  readonly accept?: (section: {
    /** The line the prompt would be recorded on. */
    readonly line: number;
    /** The key of the prompt's event: once the log holds it on `line`, `state().recent` lists the two. */
    readonly key: string;
    readonly sessionContext: string;
    readonly facts: ReadonlyArray<SessionFact>;
  }) => E.Either<SessionError, unknown> | Promise<E.Either<SessionError, unknown>>;
}

/**
 * How `ingestResult` records a result sent without a time. `accept` is told the line and the time
 * (the clock's, or moved past the log's last event) the result is about to be written with, and
 * may refuse it (a Left is the call's answer, nothing written): a caller that keeps that time
 * sends the result again with it as the clock's, and the log's line is then known by it.
 */
export interface IngestOptions {
  /**
   * False: the result is the log's already only where one of its recent lines holds it at the
   * clock's time, never by its content as its task's last result, so another dispatch's result of
   * the same text is recorded too (default true).
   */
  readonly byContent?: boolean;
  readonly accept?: (planned: {
    /** The line the result would be recorded on. */
    readonly line: number;
    readonly at: number;
  }) => E.Either<SessionError, unknown> | Promise<E.Either<SessionError, unknown>>;
}

/** What a change to the log did. */
export interface Recorded {
  /** The line of the log that holds the event. */
  readonly line: number;
  /** True when the log held this very event already (same fields, same time): nothing was written. */
  readonly duplicate: boolean;
}

/** A recorded dispatch: the facts it added and the extraction's warnings (both empty for a duplicate). */
export type IngestedResult = Recorded & Extraction;

/** A recorded prompt: the `[Session Context]` section and its facts, as `compilePrompt` made them. */
export interface CompiledContext extends Recorded {
  readonly sessionContext: string;
  readonly facts: ReadonlyArray<SessionFact>;
}

/** The question `explainContext` answers: a prompt, without recording it. */
export type ExplainContextInput = Omit<CompileContextInput, 'at'> & {
  /**
   * The tokenizer the section explained was budgeted with, as a recorded prompt's line names it
   * (`recordedPrompt` gives it); default: the session's own counter.
   */
  readonly tokenizer?: TokenizerName;
};

/** An invalidation to record. */
export interface InvalidateFactInput {
  readonly subject: string;
  readonly relation: string;
  /** Epoch milliseconds (default: the session's clock). */
  readonly at?: number;
}

/** A compaction to record. */
export interface CompactInput {
  readonly maxFacts: number;
  readonly at?: number;
}

/** A recorded compaction: what it removed, merged and dropped (nothing for a duplicate). */
export type CompactedFacts = Recorded & { readonly report: CompactionReport };

/** A prompt recorded in the log, with the settings its section was made with: the line that holds it. */
export type RecordedPrompt = ExplainContextInput & { readonly line: number };

/** A recorded invalidation: the facts it closed. */
export interface InvalidatedFacts extends Recorded {
  readonly closed: ReadonlyArray<SessionFact>;
}

/** A torn last line, moved out of the log into its side file. */
export interface SetAsideLine {
  /** The line number it had in the log. */
  readonly line: number;
  readonly bytes: number;
  /** Where it is kept. */
  readonly file: string;
}

/** What reading the log met: lines that did not apply, and torn last lines set aside. */
export interface SessionReport {
  /** Events applied (rejected dispatches included, as `replay` counts them). */
  readonly events: number;
  /** Lines that are not events and dispatches the contract rejected, by line, exactly as `replay` reports them: the first 1,000. */
  readonly errors: ReadonlyArray<ReplayError>;
  /** How many more lines were rejected than `errors` lists (absent when it lists them all). */
  readonly errorsOmitted?: number;
  /** Torn last lines this process moved to the side file (the first 100). */
  readonly setAside: ReadonlyArray<SetAsideLine>;
}
