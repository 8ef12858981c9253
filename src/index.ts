/**
 * session-fact-tracker: facts extracted from dispatch results by deterministic rules, kept in
 * an immutable valid-time store, and retrieved within a token budget into the next prompt.
 */

export {
  createFactId,
  FACT_LIMITS,
  FACT_TAGS,
  isFactTag,
  isSourceRole,
  makeFact,
  parseNewFact,
  SOURCE_ROLES,
} from './core/fact.js';
export type { FactTag, SessionFact, SourceRole } from './core/fact.js';

export { DEFAULT_MAX_VALID_FACTS, emptyFactStore } from './core/store/state.js';
export type { FactStore, FactStoreOptions, PairLog } from './core/store/state.js';
export { addFacts } from './core/store/addFacts.js';
export { invalidate } from './core/store/invalidate.js';
export { recordTaskPrompt } from './core/store/recordTaskPrompt.js';
export { compact, compactWithReport, SUMMARY_RELATION } from './core/store/compact.js';
export type { CompactionReport } from './core/store/compact.js';
export {
  selectAllFacts,
  selectFactsValidAt,
  selectValidCount,
  selectValidFacts,
  selectValidFactsByTags,
} from './core/store/selectors.js';
export { applyEvent, replay } from './core/store/events.js';
export type {
  FactsAddedEvent,
  FactsInvalidatedEvent,
  PromptRecordedEvent,
  StoreCompactedEvent,
  TrackerEvent,
} from './core/store/events.js';

export {
  dispatchResultJsonSchema,
  ImplementerResultSchema,
  ReviewerResultSchema,
  validateDispatchResult,
} from './core/extract/contract.js';
export type { DispatchResult, ImplementerResult, ReviewerResult } from './core/extract/contract.js';
export {
  createExtractor,
  extractFromImplementer,
  extractFromReviewer,
  MAX_FACTS_PER_RESULT,
} from './core/extract/extractor.js';
export type { Extraction, Extractor } from './core/extract/extractor.js';
export { implementerRules, mentionsConvention, reviewerRules } from './core/extract/rules.js';
export { freeText, isPlaceholder, pathText } from './core/extract/rule.js';
export type { ExtractionRule, FactDraft, RuleContext } from './core/extract/rule.js';

export {
  explainRetrieval,
  explainRetrievalEither,
  retrieveFacts,
  retrieveFactsEither,
} from './core/prompt/retrieve.js';
export type { ExclusionReason, RetrievalDecision } from './core/retrieve/retrieve.js';
export { INVALID_QUERY, parseFactQuery } from './core/retrieve/query.js';
export type { FactQuery, QueryFailure } from './core/retrieve/query.js';
export { createRetrievalScratch } from './core/retrieve/scratch.js';
export type { RetrievalScratch, RetrievalScratchOptions } from './core/retrieve/scratch.js';
export { estimateTokens } from './tokens/estimate.js';
export { DEFAULT_RANKING, factPriors } from './core/retrieve/rank.js';
export type { RankingOptions, RankingOverrides, RankingPriors, ScoreParts } from './core/retrieve/rank.js';
export type { TokenCounter } from './tokens/estimate.js';
export { TOKENIZER_NAMES } from './tokens/names.js';
export type { TokenizerName } from './tokens/names.js';

export { formatFactLine, formatSessionFacts, MAX_LINE_LENGTH, SESSION_CONTEXT_HEADER } from './core/prompt/format.js';
export type { SectionFormatOptions } from './core/prompt/format.js';
export { DEFAULT_LAYOUT, DEFAULT_MAX_FACTS, DEFAULT_MAX_TOKENS, SECTION_LAYOUTS } from './core/retrieve/defaults.js';
export type { SectionLayout } from './core/retrieve/defaults.js';
export { buildDispatchDynamicTail } from './core/prompt/tail.js';
export type { DispatchTailInput } from './core/prompt/tail.js';

export { BEGIN_MARKER, END_MARKER, parseDispatchOutput, parseDispatchResult } from './core/extract/parse.js';
export type { ContractError } from './core/extract/parse.js';
export { createFactTracker, toStateSnapshotFacts } from './core/tracker/tracker.js';
export type {
  CompiledPrompt,
  CompilePromptInput,
  FactTracker,
  FactTrackerOptions,
  IngestInput,
  InvalidatedFacts,
  StoreListener,
} from './core/tracker/tracker.js';
export { initialTrackerState, trackerSettings } from './core/tracker/state.js';
export type { TrackerSettings, TrackerState, TrackerStateOptions } from './core/tracker/state.js';
export { promptQuery, recordPrompt, selectSessionContext, trackerTransition } from './core/tracker/transition.js';
export type {
  CompactInput,
  CompactOutput,
  DispatchInput,
  DispatchOutput,
  InvalidateInput,
  InvalidateOutput,
  PromptInput,
  PromptOutput,
  TrackerEnvironment,
  TrackerError,
  TrackerInput,
  TrackerOutput,
  TrackerStep,
} from './core/tracker/transition.js';
export { failure, INTERNAL, internalFailure } from './base/failure.js';
export type { Failure } from './base/failure.js';

export { decodeState, encodeState, STATE_FORMAT, STATE_VERSION } from './saved/savedState.js';
export type { SavedState } from './saved/savedState.js';

export { HISTORY_EVENT_TYPES, parseHistory, parseHistoryLine } from './core/history/events.js';
export type {
  HistoryCompactEvent,
  HistoryDispatchEvent,
  HistoryEvent,
  HistoryInvalidateEvent,
  HistoryLineError,
  HistoryLineErrorCode,
  HistoryPromptEvent,
  ParsedHistory,
} from './core/history/events.js';
export { parseEventTime, parseIsoTime } from './base/time.js';
export { explainPromptAt, MAX_REPORTED_ERRORS, replayHistory, startHistoryReplay } from './core/replay/replay.js';
export type {
  HistoryReplay,
  HistoryReplayOptions,
  PromptReport,
  PromptRetrieval,
  ReplayError,
  ReplayOptions,
  ReplayReport,
  ReplayResult,
  ReplaySummary,
} from './core/replay/replay.js';
export { HISTORY_LINE_LIMITS } from './core/history/lines.js';
export type { HistoryLine } from './core/history/lines.js';
