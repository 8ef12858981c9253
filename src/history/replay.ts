/**
 * Replaying a dispatch history through the runtime shell, exactly as a live orchestrator would
 * have run it: the tracker's clock is the event's time, dispatches go through `ingestOutput`
 * (so a later review of a task settles the issues it does not repeat), and prompt events go
 * through `compilePrompt` (which also records the task prompt for the facts its dispatches will
 * produce). The result is plain data, the same for the same text and options.
 */
import * as E from 'fp-ts/lib/Either.js';
import * as O from 'fp-ts/lib/Option.js';
import type { SessionFact } from '../fact.js';
import { explainRetrieval } from '../prompt/retrieve.js';
import type { FactQuery, RetrievalDecision } from '../retrieve/retrieve.js';
import type { TokenCounter } from '../tokens/estimate.js';
import type { ContractError } from '../runtime/parse.js';
import { selectAllFacts, selectValidCount, selectValidFacts } from '../store/selectors.js';
import { emptyFactStore, type FactStore, withMutations } from '../store/state.js';
import { type HistoryEvent, type HistoryLineErrorCode, parseHistory } from './events.js';
import { createHistoryPlayer, type HistoryPlayerOptions } from './player.js';

export { DEFAULT_PROMPT_MAX_FACTS, DEFAULT_PROMPT_MAX_TOKENS } from './player.js';
/** How many events pass between two progress reports. */
const PROGRESS_STEP = 100;

/** Options of `replayHistory`. */
export interface ReplayOptions extends HistoryPlayerOptions {
  /** Counts tokens of sections and dispatch outputs (default: ceil(characters / 4)). */
  readonly countTokens?: TokenCounter;
  /** Stop at the first event whose time is after this (epoch ms). */
  readonly asOf?: number;
  /** Stop after this line (used to explain the prompt on it without replaying the rest). */
  readonly untilLine?: number;
  /**
   * Keep each prompt's store and query in `retrievals`, for `explainRetrieval` (default: off;
   * a snapshot per prompt makes a long replay several times slower).
   */
  readonly keepRetrievals?: boolean;
  /** Told now and then how many of the events have been replayed (for progress displays). */
  readonly onProgress?: (replayed: number, total: number) => void;
}

/** What one prompt event would have received. */
export interface PromptReport {
  readonly line: number;
  readonly taskId: string;
  readonly sessionContext: string;
  readonly facts: ReadonlyArray<SessionFact>;
  /** Tokens of `sessionContext`. */
  readonly contextTokens: number;
  /** Tokens of every earlier dispatch output: what the prompt would carry if nothing were masked. */
  readonly historyTokens: number;
}

/** A line that was not applied: a line that is not an event, or a dispatch result the contract rejected. */
export interface ReplayError {
  readonly line: number;
  readonly code: HistoryLineErrorCode | ContractError['code'];
  readonly message: string;
}

/** Totals of a replay. */
export interface ReplaySummary {
  /** Events replayed (rejected dispatches included). */
  readonly events: number;
  /** Dispatch events replayed (rejected ones included). */
  readonly dispatches: number;
  readonly prompts: number;
  readonly validFacts: number;
  /** Every record at the end, closed history included. */
  readonly allFacts: number;
  /** Tokens of every dispatch output replayed. */
  readonly historyTokens: number;
  /** Tokens injected over all prompts. */
  readonly contextTokens: number;
  /** `contextTokens / historyTokens`, rounded to 3 decimals (0 for an empty history). */
  readonly contextToHistoryRatio: number;
}

/** The replay as the command line prints it with `--json`. */
export interface ReplayReport {
  readonly prompts: ReadonlyArray<PromptReport>;
  readonly errors: ReadonlyArray<ReplayError>;
  /** The facts valid at the end of the replay. */
  readonly facts: ReadonlyArray<SessionFact>;
  readonly summary: ReplaySummary;
}

/** Everything needed to explain one prompt's retrieval later: the store it saw and its query. */
export interface PromptRetrieval {
  readonly line: number;
  readonly taskPrompt: string;
  readonly store: FactStore;
  readonly query: FactQuery;
}

/** A replay: the report, the final store, and with `keepRetrievals` each prompt's retrieval input (same order as `report.prompts`). */
export interface ReplayResult {
  readonly report: ReplayReport;
  readonly store: FactStore;
  readonly retrievals: ReadonlyArray<PromptRetrieval>;
}

const outputText = (output: string | Readonly<Record<string, unknown>>): string =>
  typeof output === 'string' ? output : JSON.stringify(output);

const ratio = (part: number, whole: number): number => (whole > 0 ? Math.round((part / whole) * 1000) / 1000 : 0);

const isPast = (event: HistoryEvent, options: ReplayOptions): boolean =>
  (options.asOf !== undefined && event.at > options.asOf) ||
  (options.untilLine !== undefined && event.line > options.untilLine);

/**
 * Replays a JSON Lines history and reports, for each prompt event, the section it would get
 * and its token cost against the history it stands in for. Bad lines are reported and
 * skipped; everything else still applies.
 */
export const replayHistory = (text: string, options: ReplayOptions = {}): ReplayResult => {
  const player = createHistoryPlayer(options);
  const { tracker, countTokens } = player;
  const parsed = parseHistory(text);

  const prompts: PromptReport[] = [];
  const retrievals: PromptRetrieval[] = [];
  const rejected: ReplayError[] = [];
  let historyTokens = 0;
  let contextTokens = 0;
  let dispatches = 0;
  let replayed = 0;
  // Line problems count up to where the replay stopped: the lines after it were never reached.
  let stopLine = options.untilLine === undefined ? Infinity : options.untilLine + 1;

  // The replay owns its tracker and keeps no state but the snapshots it takes (sealed as they
  // are taken), so it runs as one `withMutations` run: the store is written in place between them.
  withMutations(emptyFactStore(), () => {
    for (const event of parsed.events) {
      if (isPast(event, options)) {
        stopLine = Math.min(stopLine, event.line);
        break;
      }
      if (event.type === 'dispatch') {
        dispatches += 1;
        historyTokens += countTokens(outputText(event.output));
      }
      if (event.type === 'prompt' && options.keepRetrievals === true)
        retrievals.push({
          line: event.line,
          taskPrompt: event.taskPrompt,
          store: tracker.getSnapshot(),
          query: player.queryFor(event),
        });
      const applied = player.apply(event);
      if (applied.type === 'dispatch' && E.isLeft(applied.ingested))
        rejected.push({ line: event.line, code: applied.ingested.left.code, message: applied.ingested.left.message });
      if (applied.type === 'prompt') {
        const { sessionContext, facts } = applied.compiled;
        const tokens = countTokens(sessionContext);
        contextTokens += tokens;
        prompts.push({
          line: event.line,
          taskId: applied.query.taskId,
          sessionContext,
          facts,
          contextTokens: tokens,
          historyTokens,
        });
      }
      replayed += 1;
      if (options.onProgress !== undefined && replayed % PROGRESS_STEP === 0)
        options.onProgress(replayed, parsed.events.length);
    }
    return tracker.getSnapshot();
  });
  options.onProgress?.(replayed, parsed.events.length);

  const errors = [...parsed.errors.filter((error) => error.line < stopLine), ...rejected].sort(
    (a, b) => a.line - b.line,
  );
  const store = tracker.getSnapshot();
  return {
    report: {
      prompts,
      errors,
      facts: selectValidFacts(store),
      summary: {
        events: replayed,
        dispatches,
        prompts: prompts.length,
        validFacts: selectValidCount(store),
        allFacts: selectAllFacts(store).length,
        historyTokens,
        contextTokens,
        contextToHistoryRatio: ratio(contextTokens, historyTokens),
      },
    },
    store,
    retrievals,
  };
};

/** Every fact's score and decision for the prompt event on `line` of a replay run with `keepRetrievals`, if that line is a replayed prompt. */
export const explainPromptAt = (result: ReplayResult, line: number): O.Option<ReadonlyArray<RetrievalDecision>> => {
  const retrieval = result.retrievals.find((entry) => entry.line === line);
  return retrieval === undefined ? O.none : O.some(explainRetrieval(retrieval.store, retrieval.query));
};
