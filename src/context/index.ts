/**
 * session-fact-tracker/context: the shared context across sessions, pure core (schema, ledger,
 * checkpoints, the bundle). Its Node shell is `session-fact-tracker/context/node`.
 */
export {
  CONTEXT_FILE_MAX_BYTES,
  CONTEXT_KINDS,
  CONTEXT_LIMITS,
  CONTEXT_SCHEMA_VERSION,
  DECISION_STATUSES,
  DEFAULT_PINNED_RULES,
  DEFAULT_WORKSTREAM,
  isContextTime,
} from './model.js';
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
  DroppedEntry,
  EvidenceLedger,
  FileEvidence,
  LastRun,
  RepositoryIdentity,
  RunFailure,
  RunStatus,
  SharedContext,
  QuarantinedContext,
  UnknownFields,
  WorkingSummary,
} from './model.js';
export {
  compareContextKeys,
  isSameContextKey,
  normalizeKeyPart,
  ordContextKey,
  parseContextKey,
  sanitizeKeyPart,
} from './key.js';
export {
  findMissingEvidence,
  formatLineRange,
  isCompletionClaim,
  normalizeEvidencePath,
  parseClaim,
  parseLineRange,
  recordClaim,
  selectEvidencePaths,
} from './ledger.js';
export type { ClaimInput, ClaimRejection, LineRange, MissingEvidence } from './ledger.js';
export {
  checkpointAt,
  checkpointMismatch,
  hashSummary,
  hashTrackedFiles,
  parseNameStatus,
  parseWorkingTreeStatus,
  unverifiedStatus,
  verifyCheckpoint,
} from './checkpoint.js';
export type {
  ChangedFile,
  ContextStatus,
  RepositoryEvidence,
  RepositorySnapshot,
  StaleReason,
  WorkingFile,
  WorkingTreeStatus,
} from './checkpoint.js';
export type { ContextExclusion } from './exclusion.js';
export { emptySharedContext, markSummaryStale, recordContextClaim, redactContext } from './update.js';
export { removeContext, selectContext, upsertContext } from './contextFile.js';
export { applyRunOutcome, RETRY_WINDOW_MS } from './runOutcome.js';
export type { FailedRun, RunOutcome, SucceededRun } from './runInput.js';
export { selectDroppedEntries } from './dropped.js';
export { decodeContextFile, encodeCheckedContextFile, encodeContextFile, findContextSecret } from './schema.js';
export type { ContextFileDocument } from './schema.js';
export { decodeSessionsFile, encodeCheckedSessionsFile, encodeSessionsFile } from './sessionsFile.js';
export type { ContextSessionsDocument } from './sessionsFile.js';
export { migrateContextDocument } from './migrate.js';
export { CONTEXT_BUDGETS } from './budget.js';
export type { BundleBudget, BundleSection, CharRange, ImplementationSection, PlanningSection } from './budget.js';
export { buildContextBundle, CONTEXT_BUNDLE_HEADER } from './bundle.js';
export { DEFAULT_RELEVANCE_THRESHOLD, selectRelevantFacts } from './bundleFacts.js';
export type { BundleFacts, BundleInput, BundleOptions, BundleSectionReport, ContextBundle } from './bundleModel.js';
export { PINNED_SECTION_MAX, pinnedRulesProblem } from './pinned.js';
export { escapeMarkdown, renderContextDashboard } from './dashboard.js';
export { hasConflictMarkers, splitConflictMarkers } from './conflictMarkers.js';
export type { ConflictSides } from './conflictMarkers.js';
export { mergeContextFiles, mergeContextFilesReported, mergeContexts, mergeContextsReported } from './merge.js';
export type { ContextFilesMerge, ContextsMerge } from './merge.js';
export { droppedNotice, elsewhereNotice, headNotice, selectOtherKeys } from './notices.js';
export type { HeadNotice } from './notices.js';
export { identifyRepository, normalizeRemoteUrl, REPOSITORY_SOURCES, resolveRepositoryKey } from './repository.js';
export type { RepositoryFacts, RepositoryResolution } from './repository.js';
export { findSecret, findSecretField, redactSecrets, secretProblem } from './secrets.js';
export type { SecretLocation } from './secrets.js';
export { CONTEXT_CONFIG_FILE, parseFlagValue, resolveSharedContextFlag, SHARED_CONTEXT_ENV } from './flag.js';
export type { SharedContextFlag } from './flag.js';
export { CONTEXT_DIRECTORY, CONTEXT_GITIGNORE, contextFileNames } from './layout.js';
export type { ContextFileNames } from './layout.js';
