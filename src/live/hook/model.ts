/** The values of the hook's transition: its settings, its inputs, its effects and its steps. */
import type * as E from 'fp-ts/lib/Either.js';
import type { Failure } from '../../base/failure.js';
import type { SectionLayout } from '../../core/retrieve/defaults.js';
import type { CompileContextInput, IngestResultInput } from '../session/model.js';
import type { HookEvent, SubagentDispatch } from './payload.js';
import type { DispatchRecord, HookRecord, ResultRecord } from './records.js';
import type { HookState } from './state.js';

/**
 * Agent types matching this are reviewers; every other agent is an implementer: "review" in any
 * case anywhere in the type (`reviewer`, `code-reviewer`, `CodeReviewer`, `codereviewer`) but as
 * the end of "preview" (`preview-builder`, `previewer`, `PreviewAgent`), whose implementers'
 * results would be checked as reviews and refused.
 */
export const DEFAULT_REVIEWER_PATTERN = /(?<!p)review/iu; /**
 * How long a section waits for its subagent, and a report for the call that names its agent:
 * a call the user denied or interrupted never starts a subagent and never ends.
 */
export const DEFAULT_PENDING_TIMEOUT_MS = 10 * 60_000;

/** What the decisions depend on besides the state, the input and the time. */
export interface HookSettings {
  /** How long a section waits for its subagent (default 10 minutes). */
  readonly timeoutMs: number;
  /** Agent types matching it are reviewers. */
  readonly reviewerPattern: RegExp;
  /** Facts and token budget of a section (the session's defaults when absent). */
  readonly maxFacts?: number;
  readonly maxTokens?: number;
  /** The sections' layout (the session's default, `lines`, when absent). */
  readonly layout?: SectionLayout;
}

/** The settings when nothing says otherwise. */
export const DEFAULT_HOOK_SETTINGS: HookSettings = Object.freeze({
  timeoutMs: DEFAULT_PENDING_TIMEOUT_MS,
  reviewerPattern: DEFAULT_REVIEWER_PATTERN,
});

/** A line for the user: on standard error, and also in the transcript when `notice`. */
export interface SayEffect {
  readonly type: 'say';
  readonly failure: Failure;
  readonly notice: boolean;
}

/** Record a prompt in the session and compute its section; the answer comes back as `compiled`. */
export interface CompileEffect {
  readonly type: 'compile';
  readonly request: CompileContextInput & { readonly at: number };
  /** The call the prompt is for: its section may go in front of its prompt. */
  readonly call: SubagentDispatch;
  /** The dispatch to record once the session answers, without what the answer gives. */
  readonly dispatch: Omit<DispatchRecord, 'key' | 'line' | 'sessionContext'> & { readonly key?: string };
}

/** Record a subagent's result in the session; the answer comes back as `ingested`. */
export interface IngestEffect {
  readonly type: 'ingest';
  readonly request: IngestResultInput & { readonly at: number };
  /** Who the result is from, for messages. */
  readonly what: string;
  /** What marks the result recorded: appended once the session answers that it is, and only then. */
  readonly marks: ReadonlyArray<ResultRecord>;
  /** The digest of the result's text, kept when the session does not record it (`MissRecord`). */
  readonly digest: string;
  /**
   * True where no later event brings the result again (the end of a Claude Code call): sent even
   * where the hooks file cannot take its note, rather than lost.
   */
  readonly final?: true;
  /**
   * True where the result is sent again as an older release noted it (`MissRecord.stamped`):
   * known by its content too, as its task's last result.
   */
  readonly byContent?: true;
}

/** What the shell does for a transition, in order. */
export type HookEffect = SayEffect | CompileEffect | IngestEffect;

/**
 * Why the session did not answer: it could not be opened (`open`), the call failed (`call`), or
 * the hooks file could not take the hook's record of the call, which the session was to write
 * after it (`note`).
 */
export interface SessionFailure {
  readonly step: 'open' | 'call' | 'note';
  readonly failure: Failure;
}

/** The session's answer to an effect. */
export type SessionAnswer<A> = E.Either<SessionFailure, A>;

/** An event that may change something: an agent's event the hook acts on. */
export type ActiveHookEvent = Exclude<HookEvent, { event: 'ignored' }>;

/**
 * What the log holds on the lines of the dispatches `selectUnwritten` gives: the key of each event
 * on one of those lines (among its last 1,000 events, `state().recent`).
 */
export type LogEvents = ReadonlyArray<readonly [key: string, line: number]>;

/**
 * What the transition takes: an agent's event, the session's answer to one of its effects, or
 * what the log holds on the lines of dispatches not known to be written, before an event.
 */
export type HookInput =
  | { readonly type: 'event'; readonly event: ActiveHookEvent }
  | { readonly type: 'checked'; readonly sessionId: string; readonly answer: SessionAnswer<LogEvents> }
  | {
      readonly type: 'compiled';
      readonly effect: CompileEffect;
      readonly answer: SessionAnswer<{ readonly line: number; readonly sessionContext: string }>;
      /**
       * The dispatch record the shell appended to the hooks file before the session wrote the
       * prompt's line (`dispatchRecordOf` the section as planned), when it did: it is in the state.
       */
      readonly noted?: DispatchRecord;
    }
  | {
      readonly type: 'ingested';
      readonly effect: IngestEffect;
      readonly answer: SessionAnswer<{ readonly warnings: ReadonlyArray<string> }>;
      /** The time the result was noted as sent with (its line's, were it written), when it was. */
      readonly sentAt?: number;
    };

/** What a decision adds: the records to append, the effects to run, the output to print. */
export interface HookDecision {
  readonly records: ReadonlyArray<HookRecord>;
  readonly effects: ReadonlyArray<HookEffect>;
  readonly output?: Readonly<Record<string, unknown>>;
  /**
   * True when the output may be printed only where the hooks file took the records: a section a
   * subagent took by its type, which the next subagent of that type would be handed again were
   * its claim not kept. Any other output stands on records the file holds already.
   */
  readonly outputNeedsRecords?: true;
}

/** What one input does: the state after, the records to append, the effects to run, the output to print. */
export interface HookStep {
  readonly state: HookState;
  readonly records: ReadonlyArray<HookRecord>;
  readonly effects: ReadonlyArray<HookEffect>;
  readonly output?: Readonly<Record<string, unknown>>;
  /** As `HookDecision`'s. */
  readonly outputNeedsRecords?: true;
}
