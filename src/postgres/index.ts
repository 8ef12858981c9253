/**
 * session-fact-tracker/postgres: the stores on PostgreSQL, for sessions and notes ledgers shared
 * by processes on several machines (Node only; loads the `pg` driver). The core and its browser
 * entry points never reach it.
 */
export { postgresSessionStore } from './sessionStore.js';
export type { PostgresSessionStore } from './sessionStore.js';
export { DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_QUERY_TIMEOUT_MS, DEFAULT_RETRY_MS, DEFAULT_SCHEMA } from './database.js';
export type { PostgresOptions, UrlOrPool } from './database.js';
export { migrate, MIGRATIONS, SCHEMA_VERSION, schemaSql, schemaVersion } from './schema.js';
export type { Migrated, Migration } from './schema.js';
export { isPostgresUrl, parsePostgresUrl } from './address.js';
export type { PostgresAddress } from './address.js';
export type { PostgresFailure, PostgresFailureCode } from './failures.js';
export { postgresNotesStore } from './notesStore.js';
export type { PostgresNotesStore } from './notesStore.js';
