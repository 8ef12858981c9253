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
} from './fact.js';
export type { FactTag, SessionFact, SourceRole } from './fact.js';

export { DEFAULT_MAX_VALID_FACTS, emptyFactStore } from './store/state.js';
export type { FactStore, FactStoreOptions, PairLog } from './store/state.js';
export { addFacts } from './store/addFacts.js';
export { invalidate } from './store/invalidate.js';
export { recordTaskPrompt } from './store/recordTaskPrompt.js';
export { compact, compactWithReport, SUMMARY_RELATION, UNMERGED_SHARE } from './store/compact.js';
export type { CompactionReport } from './store/compact.js';
export {
  selectAllFacts,
  selectFactsValidAt,
  selectValidCount,
  selectValidFacts,
  selectValidFactsByTags,
} from './store/selectors.js';
export { applyEvent, replay } from './store/events.js';
export type {
  FactsAddedEvent,
  FactsInvalidatedEvent,
  PromptRecordedEvent,
  StoreCompactedEvent,
  TrackerEvent,
} from './store/events.js';

export {
  dispatchResultJsonSchema,
  ImplementerResultSchema,
  ReviewerResultSchema,
  validateDispatchResult,
} from './extract/contract.js';
export type { DispatchResult, ImplementerResult, ReviewerResult } from './extract/contract.js';
export {
  createExtractor,
  extractFromImplementer,
  extractFromReviewer,
  MAX_FACTS_PER_RESULT,
} from './extract/extractor.js';
export type { Extraction, Extractor } from './extract/extractor.js';
export { implementerRules, mentionsConvention, reviewerRules } from './extract/rules.js';
export { freeText, isPlaceholder, pathText } from './extract/rule.js';
export type { ExtractionRule, FactDraft, RuleContext } from './extract/rule.js';

export { explainRetrieval, retrieveFacts } from './prompt/retrieve.js';
export type { ExclusionReason, FactQuery, RetrievalDecision } from './retrieve/retrieve.js';
export { estimateTokens } from './tokens/estimate.js';
export { DEFAULT_RANKING, factPriors } from './retrieve/rank.js';
export type { RankingOptions, RankingOverrides, RankingPriors, ScoreParts } from './retrieve/rank.js';
export type { TokenCounter } from './tokens/estimate.js';

export { formatFactLine, formatSessionFacts, MAX_LINE_LENGTH, SESSION_CONTEXT_HEADER } from './prompt/format.js';
export type { SectionFormatOptions } from './prompt/format.js';
export { DEFAULT_LAYOUT, DEFAULT_MAX_FACTS, DEFAULT_MAX_TOKENS, SECTION_LAYOUTS } from './retrieve/defaults.js';
export type { SectionLayout } from './retrieve/defaults.js';
export { buildDispatchDynamicTail } from './prompt/tail.js';
export type { DispatchTailInput } from './prompt/tail.js';

export { BEGIN_MARKER, END_MARKER, parseDispatchOutput, parseDispatchResult } from './runtime/parse.js';
export type { ContractError } from './runtime/parse.js';
export { createFactTracker, toStateSnapshotFacts } from './runtime/tracker.js';
export type {
  CompiledPrompt,
  CompilePromptInput,
  FactTracker,
  FactTrackerOptions,
  IngestInput,
  StoreListener,
} from './runtime/tracker.js';

export { decodeState, encodeState, STATE_FORMAT, STATE_VERSION } from './state/savedState.js';
export type { SavedState } from './state/savedState.js';

export { HISTORY_EVENT_TYPES, parseHistory, parseHistoryLine } from './history/events.js';
export type {
  HistoryCompactEvent,
  HistoryDispatchEvent,
  HistoryEvent,
  HistoryInvalidateEvent,
  HistoryLineError,
  HistoryLineErrorCode,
  HistoryPromptEvent,
  ParsedHistory,
} from './history/events.js';
export { parseEventTime, parseIsoTime, parseTimeArgument } from './base/time.js';
export {
  DEFAULT_PROMPT_MAX_FACTS,
  DEFAULT_PROMPT_MAX_TOKENS,
  explainPromptAt,
  MAX_REPORTED_ERRORS,
  replayHistory,
  startHistoryReplay,
} from './history/replay.js';
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
} from './history/replay.js';
export { HISTORY_LINE_LIMITS } from './history/lines.js';
export type { HistoryLine } from './history/lines.js';
