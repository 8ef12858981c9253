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
export { compact, compactWithReport, SUMMARY_RELATION } from './store/compact.js';
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
export { createExtractor, extractFromImplementer, extractFromReviewer } from './extract/extractor.js';
export type { Extraction, Extractor } from './extract/extractor.js';
export { implementerRules, mentionsConvention, reviewerRules } from './extract/rules.js';
export { freeText, isPlaceholder, pathText } from './extract/rule.js';
export type { ExtractionRule, FactDraft, RuleContext } from './extract/rule.js';

export { explainRetrieval, retrieveFacts } from './retrieve/retrieve.js';
export type { ExclusionReason, FactQuery, RetrievalDecision } from './retrieve/retrieve.js';
export { estimateTokens } from './tokens/estimate.js';
export { DEFAULT_RANKING, factPriors } from './retrieve/rank.js';
export type { RankingOptions, RankingOverrides, RankingPriors, ScoreParts } from './retrieve/rank.js';
export type { TokenCounter } from './tokens/estimate.js';

export { formatFactLine, formatSessionFacts, MAX_LINE_LENGTH, SESSION_CONTEXT_HEADER } from './prompt/format.js';
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

export { decodeState, encodeState, STATE_FORMAT, STATE_VERSION } from './store/persist.js';
export type { SavedState } from './store/persist.js';

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
export { parseEventTime, parseIsoTime, parseTimeArgument } from './history/time.js';
export {
  DEFAULT_PROMPT_MAX_FACTS,
  DEFAULT_PROMPT_MAX_TOKENS,
  explainPromptAt,
  replayHistory,
} from './history/replay.js';
export type {
  PromptReport,
  PromptRetrieval,
  ReplayError,
  ReplayOptions,
  ReplayReport,
  ReplayResult,
  ReplaySummary,
} from './history/replay.js';

// Shared context across sessions: the pure core (schema, ledger, checkpoints, the bundle)...
export {
  CONTEXT_KINDS,
  CONTEXT_LIMITS,
  CONTEXT_SCHEMA_VERSION,
  DECISION_STATUSES,
  DEFAULT_PINNED_RULES,
  DEFAULT_WORKSTREAM,
} from './context/model.js';
export type {
  Checkpoint,
  ChecklistItem,
  Claim,
  CliSession,
  CliSessions,
  ContextError,
  ContextFile,
  ContextKey,
  ContextKind,
  ContextSessionsEntry,
  ContextSessionsFile,
  Decision,
  DecisionStatus,
  EvidenceLedger,
  FileEvidence,
  LastRun,
  RunFailure,
  RunStatus,
  SharedContext,
  WorkingSummary,
} from './context/model.js';
export { compareContextKeys, isSameContextKey, ordContextKey, parseContextKey } from './context/key.js';
export {
  findMissingEvidence,
  formatLineRange,
  isCompletionClaim,
  normalizeEvidencePath,
  parseClaim,
  parseLineRange,
  recordClaim,
  selectEvidencePaths,
} from './context/ledger.js';
export type { ClaimInput, ClaimRejection, LineRange, MissingEvidence } from './context/ledger.js';
export {
  checkpointAt,
  checkpointMismatch,
  hashSummary,
  hashTrackedFiles,
  parseNameStatus,
  parseWorkingTreeStatus,
  unverifiedStatus,
  verifyCheckpoint,
} from './context/checkpoint.js';
export type {
  ChangedFile,
  ContextStatus,
  RepositoryEvidence,
  RepositorySnapshot,
  StaleReason,
  WorkingFile,
  WorkingTreeStatus,
} from './context/checkpoint.js';
export {
  applyRunOutcome,
  emptySharedContext,
  markSummaryStale,
  recordContextClaim,
  selectContext,
  upsertContext,
} from './context/update.js';
export type { FailedRun, RunOutcome, SucceededRun } from './context/update.js';
export { decodeContextFile, decodeSessionsFile, encodeContextFile, encodeSessionsFile } from './context/schema.js';
export type { ContextFileDocument, ContextSessionsDocument } from './context/schema.js';
export { migrateContextDocument } from './context/migrate.js';
export { CONTEXT_BUDGETS } from './context/budget.js';
export type {
  BundleBudget,
  BundleSection,
  CharRange,
  ImplementationSection,
  PlanningSection,
} from './context/budget.js';
export {
  buildContextBundle,
  CONTEXT_BUNDLE_HEADER,
  DEFAULT_RELEVANCE_THRESHOLD,
  selectRelevantFacts,
} from './context/bundle.js';
export type { BundleFacts, BundleInput, BundleOptions, BundleSectionReport, ContextBundle } from './context/bundle.js';
export { PINNED_SECTION_MAX, pinnedRulesProblem } from './context/pinned.js';
export { renderContextDashboard } from './context/dashboard.js';
export { CONTEXT_CONFIG_FILE, parseFlagValue, resolveSharedContextFlag, SHARED_CONTEXT_ENV } from './context/flag.js';
export type { SharedContextFlag } from './context/flag.js';
export { CONTEXT_DIRECTORY, CONTEXT_GITIGNORE, contextFileNames } from './context/layout.js';
export type { ContextFileNames } from './context/layout.js';
// ...and its Node shell, whose Node modules load on first call, so this entry still loads in a browser.
export { loadContext, updateContext, writeContext } from './context/node/store.js';
export type { ContextChange, ContextOptions, ContextPaths, LoadedContext } from './context/node/store.js';

// The notable-facts ledger: categorized facts per user and session, kept by a small model.
export {
  categoryNames,
  DEFAULT_CATEGORIES,
  describeCategories,
  factKey,
  keepValidFacts,
  normalizeFactText,
  NOTES_LIMITS,
  parseCategories,
  parseCategorizedFact,
} from './notes/model.js';
export type { CategorizedFact, NoteCategory, ValidatedFacts } from './notes/model.js';
export { DEFAULT_HISTORY_TURNS, selectRecentTurns, splitRecentTurns } from './notes/conversation.js';
export type { ConversationMessage, RecentTurns } from './notes/conversation.js';
export { buildNotableFactsPrompt, buildProfileConsolidationPrompt, DEFAULT_PROMPT_TURNS } from './notes/prompt.js';
export type { NotableFactsPromptInput, ProfileConsolidationPromptInput } from './notes/prompt.js';
export { parseNotableFactsResponse, parseNotableFactsResponseWithWarnings } from './notes/parse.js';
export type {
  NotableFactsError,
  NotableFactsErrorCode,
  NotableFactsResponse,
  ParseNotableFactsOptions,
} from './notes/parse.js';
export {
  emptyNotesLedger,
  selectGlobalFacts,
  selectSessionFacts,
  selectSessionNotes,
  selectSessions,
  selectUnconsolidatedSessions,
  selectUserIds,
  selectUserNotes,
} from './notes/ledger.js';
export type { NotesLedger, NotesLedgerOptions, SessionEntry, SessionNotes, UserNotes } from './notes/ledger.js';
export { applyExtraction } from './notes/applyExtraction.js';
export type { ExtractionInput } from './notes/applyExtraction.js';
export { consolidateSession, consolidateSessionWithReport, endStageWithReport } from './notes/consolidateSession.js';
export type {
  ConsolidationInput,
  EndStageInput,
  SessionConsolidation,
  StageConsolidation,
} from './notes/consolidateSession.js';
export { rewriteProfile } from './notes/rewriteProfile.js';
export type { ProfileRewriteInput } from './notes/rewriteProfile.js';
export { consolidateGlobalFacts, consolidateGlobalFactsWithReport } from './notes/global.js';
export type { ConsolidationOptions, GlobalConsolidation, GlobalFacts } from './notes/global.js';
export { applyNotesEvent, replayNotes } from './notes/events.js';
export type {
  NotesEvent,
  NotesExtractedEvent,
  NotesExtractionFailedEvent,
  NotesProfileRewriteFailedEvent,
  NotesProfileRewrittenEvent,
  NotesSessionConsolidatedEvent,
} from './notes/events.js';
export { settleExtraction, settleProfileRewrite } from './notes/port.js';
export type {
  CompleteFn,
  CompleteOptions,
  ModelFailure,
  ModelFailureReason,
  ModelOutcome,
  NotesSlot,
} from './notes/port.js';
export {
  formatGlobalFacts,
  formatNotableFacts,
  formatNotesBlocks,
  GLOBAL_FACTS_HEADER,
  NOTED_FACTS_HEADER,
} from './notes/format.js';
export type { NotesBlocks } from './notes/format.js';
export { createNotableFactsTracker, DEFAULT_TIMEOUT_MS } from './notes/tracker.js';
export type {
  NotableFactsTracker,
  NotableFactsTrackerOptions,
  NotesContext,
  NotesListener,
  RecordOutcome,
  StageReport,
} from './notes/tracker.js';
export { anthropicComplete } from './notes/anthropic.js';
export type { AnthropicCompleteOptions, MessagesClient, MessagesRequest, MessagesResponse } from './notes/anthropic.js';
export { decodeNotes, encodeNotes } from './notes/persist.js';
export type { SavedNotes, SavedProfile, SavedSessionNotes } from './notes/persist.js';
export { decodeSavedState } from './store/persist.js';
export type { DecodedState } from './store/persist.js';
export { NOTES_LOG_TYPES, parseNotesLog, parseNotesLogLine, replayConversationLog } from './notes/replay.js';
export type {
  NotesExtractionStep,
  NotesLogEntry,
  NotesLogError,
  NotesLogErrorCode,
  NotesMessageStep,
  NotesReplayOptions,
  NotesReplayReport,
  NotesReplayResult,
  NotesReplayStep,
  NotesReplaySummary,
  NotesStageStep,
} from './notes/replay.js';
