/**
 * session-fact-tracker/notes: the notable-facts ledger, categorized facts per user and session
 * kept by a small model, and its section of the saved-state file.
 */
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
} from './model.js';
export type {
  CategorizedFact,
  GlobalFacts,
  NoteCategory,
  NotedFact,
  ProfileFact,
  SessionNotes,
  ValidatedFacts,
} from './model.js';
export {
  appendMessage,
  DEFAULT_HISTORY_TURNS,
  MAX_REPLIES_PER_TURN,
  selectRecentTurns,
  splitRecentTurns,
} from './conversation.js';
export type { ConversationMessage, RecentTurns } from './conversation.js';
export { buildNotableFactsPrompt, buildProfileConsolidationPrompt, DEFAULT_PROMPT_TURNS } from './prompt.js';
export type { NotableFactsPromptInput, ProfileConsolidationPromptInput } from './prompt.js';
export { parseNotableFactsResponse, parseNotableFactsResponseWithWarnings } from './parse.js';
export type {
  NotableFactsError,
  NotableFactsErrorCode,
  NotableFactsResponse,
  ParseNotableFactsOptions,
} from './parse.js';
export {
  emptyNotesLedger,
  selectGlobalFacts,
  selectSessionFacts,
  selectSessionNotes,
  selectSessions,
  selectUnconsolidatedSessions,
  selectUserIds,
  selectUserNotes,
} from './ledger.js';
export type { NotesLedger, NotesLedgerOptions, SessionEntry, UserNotes } from './ledger.js';
export { applyExtraction } from './applyExtraction.js';
export { applyLoaded } from './applyLoaded.js';
export { applyProfileRefused } from './applyProfileRefused.js';
export { applyReleased } from './applyReleased.js';
export type { ExtractionInput } from './applyExtraction.js';
export { consolidateSession, consolidateSessionWithReport, endStageWithReport } from './consolidateSession.js';
export type {
  ConsolidationInput,
  EndStageInput,
  SessionConsolidation,
  StageConsolidation,
} from './consolidateSession.js';
export { rewriteProfile } from './rewriteProfile.js';
export type { ProfileRewriteInput } from './rewriteProfile.js';
export { consolidateGlobalFacts, consolidateGlobalFactsWithReport } from './global.js';
export type { ConsolidationOptions, GlobalConsolidation } from './global.js';
export { applyNotesEvent, replayNotes } from './events.js';
export type {
  NotesEvent,
  NotesExtractedEvent,
  NotesExtractionFailedEvent,
  NotesLoadedEvent,
  NotesProfileRefusedEvent,
  NotesProfileRewriteFailedEvent,
  NotesProfileRewrittenEvent,
  NotesReleasedEvent,
  NotesSessionConsolidatedEvent,
} from './events.js';
export { settleExtraction, settleProfileRewrite } from './port.js';
export type {
  CompleteFn,
  CompleteOptions,
  ExtractionContext,
  ModelFailure,
  ModelFailureCode,
  ModelOutcome,
  NotesSlot,
} from './port.js';
export {
  formatGlobalFacts,
  formatNotableFacts,
  formatNotesBlocks,
  GLOBAL_FACTS_HEADER,
  NOTED_FACTS_HEADER,
} from './format.js';
export type { NotesBlocks } from './format.js';
export {
  initialNotesState,
  isExtracting,
  isLoaded,
  selectConversation,
  selectProfileRewrite,
  selectUserConversations,
  selectUserStorage,
} from './machine.js';
export type { NotesLeaseSettings, NotesLeaseSlot, OutgoingItem, OwnItem } from './leaseState.js';
export type {
  NotesConversation,
  NotesPendingStage,
  NotesProfileRewrite,
  NotesStageAnswer,
  NotesSettings,
  NotesState,
  NotesStateOptions,
  NotesUserMachine,
  NotesUserStorage,
  ProfileRewriteMode,
} from './machine.js';
export { MAX_PROMPT_TURNS, notesTransition } from './transition.js';
export type {
  NotesAssistantMessageRecorded,
  NotesBackedOff,
  NotesBackOffEffect,
  NotesEffect,
  NotesExtractEffect,
  NotesExtractionRequested,
  NotesExtractionSettled,
  NotesInput,
  NotesLeaseAnswered,
  NotesLeaseEffect,
  NotesLeaseWoke,
  NotesLoadEffect,
  NotesLoaded,
  NotesLoadRequested,
  NotesMergedEffect,
  NotesProfileRewriteSettled,
  NotesRecordEffect,
  NotesReleaseRequested,
  NotesRewriteProfileEffect,
  NotesSaved,
  NotesSaveRetried,
  NotesSaveEffect,
  NotesStageEnded,
  NotesStoreFailedEffect,
  NotesTransition,
  NotesUserMessageRecorded,
  NotesWakeEffect,
  StoreCallFailure,
} from './inputs.js';
export { memoryNotesStore, storeFailure } from './store.js';
export type {
  JsonValue,
  MemoryNotesStoreOptions,
  NotesRecords,
  NotesStore,
  NotesStoreFailure,
  NotesStoreFailureCode,
  NotesWrite,
  NotesWritten,
  RecordWrite,
  SaveFence,
  StoreAnswer,
  StoredRecord,
} from './store.js';
export { memoryLeases } from './leases.js';
export type { LeaseAnswer, LeaseItem, LeaseRequest, NotesLeases, QueuedItem } from './leases.js';
export {
  createNotableFactsTracker,
  DEFAULT_CACHE_SIZE,
  DEFAULT_LEASE_MARGIN_MS,
  DEFAULT_LEASE_POLL_MS,
  DEFAULT_MAX_EVENTS,
  DEFAULT_TIMEOUT_MS,
  MAX_TIMEOUT_MS,
} from './tracker.js';
export type {
  NotableFactsTracker,
  NotableFactsTrackerOptions,
  NotesContext,
  NotesEventLog,
  NotesListener,
  NotesRetained,
  NotesTrackerFailure,
  NotesTrackerFailureCode,
  RecordOutcome,
  StageReport,
} from './trackerTypes.js';
export { anthropicComplete } from './anthropic.js';
export type {
  AnthropicCompleteOptions,
  MessagesClient,
  MessagesRequest,
  MessagesResponse,
  TruncatedAnswer,
} from './anthropic.js';
export { decodeNotes, encodeNotes } from './persist.js';
export type { NotesDecodeFailure, SavedNotes, SavedProfile, SavedSessionNotes, StoredProfile } from './persist.js';
export { decodeSavedState } from '../saved/savedState.js';
export type { DecodedState, SavedStateFailure } from '../saved/savedState.js';
export { NOTES_LOG_TYPES, parseNotesLog, parseNotesLogLine } from './log.js';
export type {
  NotesLogEndStage,
  NotesLogEntry,
  NotesLogError,
  NotesLogErrorCode,
  NotesLogExtraction,
  NotesLogMessage,
  NotesLogRewrite,
} from './log.js';
export { replayConversationLog } from './replay.js';
export type {
  NotesExtractionStep,
  NotesMessageStep,
  NotesReplayOptions,
  NotesReplayReport,
  NotesReplayResult,
  NotesReplayStep,
  NotesReplaySummary,
  NotesRewriteStep,
  NotesStageStep,
} from './replayReport.js';
