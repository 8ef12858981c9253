/**
 * session-fact-tracker/session: live sessions kept in durable JSON Lines logs (Node only: files
 * and locks). A log is a dispatch history, so `fact-tracker replay` reads every session.
 */
export {
  DEFAULT_LOCK_STALE_MS,
  DEFAULT_SESSIONS_DIRECTORY,
  listSessionIds,
  locateSession,
  openSession,
  resolveSessionsDirectory,
} from './session.js';
export type {
  CompactInput,
  ExplainContextInput,
  InvalidateFactInput,
  LiveSession,
  SessionFiles,
  SessionOptions,
} from './session.js';
export { MAX_SESSION_ID_LENGTH, parseSessionId } from './id.js';
export type {
  CompileContextInput,
  CompiledContext,
  IngestedResult,
  IngestResultInput,
  InvalidatedFacts,
  Recorded,
  SessionError,
  SessionReport,
  SetAsideLine,
} from './model.js';
