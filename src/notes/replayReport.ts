/**
 * What `replayConversationLog` reports: per user message the blocks its reply would get, per
 * extraction, end of stage and profile rewrite what it did, and the totals.
 */
import type { TokenCounter } from '../tokens/estimate.js';
import type { GlobalFacts } from './global.js';
import type { NotesLedger, NotesLedgerOptions } from './ledger.js';
import type { NotesLogError } from './log.js';
import type { CategorizedFact, ModelFailure } from './model.js';

/** What the main prompt of one user message would get. */
export interface NotesMessageStep {
  readonly kind: 'message';
  readonly line: number;
  readonly at: number;
  readonly user: string;
  readonly session: string;
  /** This user's message number in this session, from 1. */
  readonly turn: number;
  readonly text: string;
  /** The session facts available for the reply (from the extractions of earlier messages). */
  readonly facts: ReadonlyArray<CategorizedFact>;
  readonly profileFacts: number;
  /** The rendered blocks, profile first; `''` when there is nothing yet. */
  readonly blocks: string;
  readonly blockTokens: number;
  /** Messages and tokens of the history window the main prompt keeps (this message included). */
  readonly windowMessages: number;
  readonly windowTokens: number;
  /** Messages and tokens of the older history the blocks stand in for. */
  readonly trimmedMessages: number;
  readonly trimmedTokens: number;
}

/** What a recorded extraction did to the user's list. */
export interface NotesExtractionStep {
  readonly kind: 'extraction';
  readonly line: number;
  readonly at: number;
  readonly user: string;
  readonly session: string;
  readonly outcome: 'applied' | 'failed';
  /** Why it failed; the list stayed as it was. */
  readonly failure?: ModelFailure;
  /** The list after the extraction. */
  readonly facts: ReadonlyArray<CategorizedFact>;
  readonly added: ReadonlyArray<CategorizedFact>;
  readonly removed: ReadonlyArray<CategorizedFact>;
  readonly warnings: ReadonlyArray<string>;
  /** Tokens of the extraction prompt the recorded answer replied to. */
  readonly promptTokens: number;
}

/**
 * What an end of stage merged into a profile, once the extractions of the messages before it
 * settled (the line of the extraction that let it merge is `mergedAt`); `waiting` when the log
 * ended before they did.
 */
export interface NotesStageStep {
  readonly kind: 'stage';
  readonly line: number;
  readonly at: number;
  readonly user: string;
  readonly sessions: ReadonlyArray<string>;
  readonly profileFacts: number;
  readonly sessionCount: number;
  readonly dropped: ReadonlyArray<CategorizedFact>;
  /** The line at which it merged, when later than its own (it waited for extractions). */
  readonly mergedAt?: number;
  /** True when the log ended before the extractions it waited for. */
  readonly waiting?: true;
}

/** What a recorded rewrite of a profile did: applied, failed (the merge stands), or answered a profile that changed since. */
export interface NotesRewriteStep {
  readonly kind: 'rewrite';
  readonly line: number;
  readonly at: number;
  readonly user: string;
  readonly outcome: 'applied' | 'failed' | 'stale';
  readonly failure?: ModelFailure;
  readonly profileFacts: number;
  readonly warnings: ReadonlyArray<string>;
}

/** One reported step of a replay, in log order (assistant messages are recorded, not reported). */
export type NotesReplayStep = NotesMessageStep | NotesExtractionStep | NotesStageStep | NotesRewriteStep;

/** Totals of a replay. */
export interface NotesReplaySummary {
  readonly users: number;
  readonly sessions: number;
  readonly userMessages: number;
  readonly assistantMessages: number;
  readonly extractions: number;
  readonly failedExtractions: number;
  readonly stages: number;
  /** Summed over the user messages: the blocks, the kept window, and the trimmed history. */
  readonly blockTokens: number;
  readonly windowTokens: number;
  readonly trimmedTokens: number;
}

/** The report of a replay. */
export interface NotesReplayReport {
  readonly steps: ReadonlyArray<NotesReplayStep>;
  readonly errors: ReadonlyArray<NotesLogError>;
  readonly profiles: ReadonlyArray<{ readonly user: string; readonly profile: GlobalFacts }>;
  readonly summary: NotesReplaySummary;
}

/** A replay's report and the ledger it ends with. */
export interface NotesReplayResult {
  readonly report: NotesReplayReport;
  readonly ledger: NotesLedger;
}

/** Options of `replayConversationLog`: those of the tracker that recorded the log, for the same prompts. */
export interface NotesReplayOptions extends NotesLedgerOptions {
  readonly countTokens?: TokenCounter;
  /** Exchanges the main prompt keeps (default 5). */
  readonly turns?: number;
  /** The number of facts the extraction prompt asks the model to stay within (default 18). */
  readonly softLimit?: number;
  /** When an end of stage asks the model to rewrite the profile (default `'auto'`): a `rewrite` line answers it. */
  readonly consolidateWithModel?: boolean | 'auto';
}
