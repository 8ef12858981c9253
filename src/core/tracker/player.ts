/**
 * A tracker driven by history events, one at a time: what `replayHistory` runs over a whole
 * file, and what a live session log runs as its lines arrive. Keeping the one step here is what
 * makes a live session and a later replay of its log agree line for line.
 */
import type * as E from 'fp-ts/lib/Either.js';
import { outsideRuns } from '../../persistent/owner.js';
import type { Extraction } from '../extract/extractor.js';
import { DEFAULT_MAX_FACTS, DEFAULT_MAX_TOKENS, type SectionLayout } from '../retrieve/defaults.js';
import type { FactQuery } from '../retrieve/retrieve.js';
import type { ContractError } from '../extract/parse.js';
import type { FactStore } from '../store/state.js';
import { type CompiledPrompt, createFactTracker, type FactTracker } from './tracker.js';
import { estimateTokens, type TokenCounter } from '../../tokens/estimate.js';
import type { HistoryEvent, HistoryPromptEvent } from '../history/events.js';

/** Facts per prompt when neither the prompt event nor the options say. */
export const DEFAULT_PROMPT_MAX_FACTS = DEFAULT_MAX_FACTS;
/** Token budget of a prompt's section when neither the prompt event nor the options say. */
export const DEFAULT_PROMPT_MAX_TOKENS = DEFAULT_MAX_TOKENS;

/** How a player runs prompts: the overrides `replayHistory` takes. */
export interface HistoryPlayerOptions {
  /** Facts per prompt for every prompt, over the prompt event's own `maxFacts`. */
  readonly maxFacts?: number;
  /** Token budget for every prompt, over the prompt event's own `maxTokens`. */
  readonly maxTokens?: number;
  /** Counts tokens of sections (default: ceil(characters / 4)). */
  readonly countTokens?: TokenCounter;
  /** Overrides of the ranking defaults, as `createFactTracker` takes them. */
  readonly ranking?: FactQuery['ranking'];
  /** The sections' layout (default `lines`). */
  readonly layout?: SectionLayout;
  /** Keep the tracker's event log (default true); a replay, which never reads it, keeps none. */
  readonly keepEvents?: boolean;
  /** The store to start from (default: an empty one), for a replay that resumes where a saved state left off. */
  readonly initial?: FactStore;
}

/** What applying one event did. */
export type AppliedHistoryEvent =
  | { readonly type: 'dispatch'; readonly ingested: E.Either<ContractError, Extraction> }
  | { readonly type: 'prompt'; readonly query: FactQuery; readonly compiled: CompiledPrompt }
  | { readonly type: 'invalidate' }
  | { readonly type: 'compact' };

/** A tracker whose clock is the time of the event being applied. */
export interface HistoryPlayer {
  readonly tracker: FactTracker;
  readonly countTokens: TokenCounter;
  /** The query a prompt event runs, so `explainRetrieval` can run it on the same store. */
  queryFor(event: HistoryPromptEvent): FactQuery;
  /** Applies one event exactly as a replay does: dispatches through `ingestOutput`, prompts through `compilePrompt`. */
  apply(event: HistoryEvent): AppliedHistoryEvent;
  /**
   * Applies one event to the store only, as `apply` changes it, without compiling a prompt's
   * section (a prompt is recorded through `recordPrompt`): for catching up on a log whose
   * prompts were answered when they were written.
   */
  advance(event: HistoryEvent): AdvancedHistoryEvent;
}

/** What advancing over one event did: a dispatch's ingest, or only the event's kind. */
export type AdvancedHistoryEvent =
  | { readonly type: 'dispatch'; readonly ingested: E.Either<ContractError, Extraction> }
  | { readonly type: 'prompt' | 'invalidate' | 'compact' };

/** A player over an empty store, or the `initial` one. */
export const createHistoryPlayer = (options: HistoryPlayerOptions = {}): HistoryPlayer => {
  // The caller's counter runs outside the replay's write run, as the tracker runs it.
  const userCounter = options.countTokens;
  const countTokens: TokenCounter =
    userCounter === undefined ? estimateTokens : (text) => outsideRuns(() => userCounter(text));
  let now = 0;
  const tracker = createFactTracker({
    clock: () => now,
    countTokens,
    ...(options.ranking === undefined ? {} : { ranking: options.ranking }),
    ...(options.layout === undefined ? {} : { layout: options.layout }),
    ...(options.keepEvents === undefined ? {} : { keepEvents: options.keepEvents }),
    ...(options.initial === undefined ? {} : { initial: options.initial }),
  });

  const queryFor = (event: HistoryPromptEvent): FactQuery => ({
    taskDescription: event.taskPrompt,
    taskId: event.taskId,
    ...(event.tags === undefined ? {} : { tags: event.tags }),
    maxFacts: options.maxFacts ?? event.maxFacts ?? DEFAULT_PROMPT_MAX_FACTS,
    maxTokens: options.maxTokens ?? event.maxTokens ?? DEFAULT_PROMPT_MAX_TOKENS,
    countTokens,
    ...(options.ranking === undefined ? {} : { ranking: options.ranking }),
    ...(options.layout === undefined ? {} : { layout: options.layout }),
  });

  const apply = (event: HistoryEvent): AppliedHistoryEvent => {
    now = event.at;
    switch (event.type) {
      case 'dispatch':
        return {
          type: 'dispatch',
          ingested: tracker.ingestOutput({ role: event.role, taskId: event.taskId, output: event.output }),
        };
      case 'prompt': {
        const query = queryFor(event);
        const compiled = tracker.compilePrompt({
          taskId: event.taskId,
          taskPrompt: event.taskPrompt,
          ...(query.tags === undefined ? {} : { tags: query.tags }),
          maxFacts: query.maxFacts,
          maxTokens: query.maxTokens,
        });
        return { type: 'prompt', query, compiled };
      }
      case 'invalidate':
        tracker.invalidate(event.subject, event.relation, event.at);
        return { type: 'invalidate' };
      case 'compact':
        tracker.compact(event.maxFacts);
        return { type: 'compact' };
    }
  };

  const advance = (event: HistoryEvent): AdvancedHistoryEvent => {
    if (event.type !== 'prompt') return apply(event);
    now = event.at;
    tracker.recordPrompt(event.taskId, event.taskPrompt, event.at);
    return { type: 'prompt' };
  };

  return { tracker, countTokens, queryFor, apply, advance };
};
