/**
 * session-fact-tracker/session: live sessions kept in durable JSON Lines logs (Node only: files
 * and locks). A log is a dispatch history, so `fact-tracker replay` reads every session.
 */
export {
  bytesToReplay,
  DEFAULT_LOCK_STALE_MS,
  DEFAULT_SESSIONS_DIRECTORY,
  DUPLICATE_WINDOW,
  latestSessionId,
  listSessionIds,
  locateSession,
  openSession,
  resolveSessionsDirectory,
  SNAPSHOT_EVERY,
} from './session.js';
export type { LiveSession, SessionFiles, SessionOptions } from './session.js';
export { fileSessionStore } from './files.js';
export type { FileSessionStoreOptions, SessionsFolder } from './files.js';
export { memorySessionStore } from './memoryStore.js';
export { invalidSnapshot } from './store.js';
export type {
  AppendResult,
  SessionFollower,
  SessionStore,
  SessionStoreError,
  SnapshotFailure,
  StoredLine,
  StoredSnapshot,
  TailRead,
} from './store.js';
export {
  applyLogLine,
  applyLogLines,
  decodeSessionState,
  encodeSessionState,
  initialSessionState,
  planEvent,
} from './sessionState.js';
export type { EventPlan, RecordedEvent, SessionState } from './sessionState.js';
export { parseSessionId } from './id.js';
export {
  MAX_MESSAGE_BYTES,
  MAX_OUTPUT_DEPTH,
  MAX_OUTPUT_LENGTH,
  MAX_PROMPT_LENGTH,
  MAX_RELATION_LENGTH,
  MAX_SECTION_FACTS,
  MAX_SECTION_TOKENS,
  MAX_SESSION_ID_LENGTH,
  MAX_SUBJECT_LENGTH,
  MAX_TASK_ID_LENGTH,
  MAX_TIME_LENGTH,
} from './limits.js';
export type { SnapshotUse } from './snapshot.js';
export type {
  CompactedFacts,
  CompactInput,
  CompileContextInput,
  CompileOptions,
  CompiledContext,
  ExplainContextInput,
  IngestedResult,
  IngestOptions,
  IngestResultInput,
  InvalidatedFacts,
  InvalidateFactInput,
  Recorded,
  RecordedPrompt,
  SessionError,
  SessionReport,
  SetAsideLine,
  StoreAccessCode,
} from './model.js';
