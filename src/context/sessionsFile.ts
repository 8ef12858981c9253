/**
 * The tool-sessions files on disk (`*.local.json`, schema version 1): one machine's resumable
 * tool sessions per key, decoded with validation and encoded back deterministically, under the
 * same versioning rules as the context files.
 */
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import { z } from 'zod';
import { refuseArgument } from '../base/describe.js';
import { checkedKind } from './arguments.js';
import { compareContextKeys, contextKeyId } from './key.js';
import {
  CONTEXT_KINDS,
  CONTEXT_SCHEMA_VERSION,
  type ContextError,
  type ContextKind,
  type ContextSessionsEntry,
  type ContextSessionsFile,
} from './model.js';
import {
  type KeyDocument,
  KeySchema,
  keyFrom,
  keyTo,
  L,
  line,
  notNewer,
  ownRecord,
  sameKind,
  uniqueKeys,
  unwritable,
  validate,
  versionOf,
} from './schema.js';

const SessionsFileSchema = z.object({
  schema_version: z.literal(CONTEXT_SCHEMA_VERSION),
  kind: z.enum(CONTEXT_KINDS),
  sessions: z.array(
    z.object({
      key: KeySchema,
      cli_sessions: ownRecord(
        line(L.keyPart),
        z.object({ id: line(L.keyPart), local_path: line(L.path).optional() }),
        true,
      ),
    }),
  ),
});

/** A sessions file as written to disk (schema version 1). */
export type ContextSessionsDocument = z.infer<typeof SessionsFileSchema>;

/** A sessions entry as the code holds it. */
const sessionsEntryFrom = (entry: ContextSessionsDocument['sessions'][number]): ContextSessionsEntry => ({
  key: keyFrom(entry.key),
  cliSessions: Object.fromEntries(
    Object.entries(entry.cli_sessions).map(([tool, session]) => [
      tool,
      { id: session.id, ...(session.local_path === undefined ? {} : { localPath: session.local_path }) },
    ]),
  ),
});

/** True when `key` is stored as it is read: each part already normalized. */
const isStoredNormalized = (key: KeyDocument): boolean => {
  const read = keyFrom(key);
  return read.repo === key.repo && read.branch === key.branch && read.workstreamId === key.workstream_id;
};

/**
 * The entries of a sessions file, those whose keys read alike (`api ` beside the `api` a version
 * that normalized keys added) made one, tool by tool: tool sessions are this machine's
 * acceleration, so they are united rather than kept apart. Where both name a tool, the entry
 * stored normalized wins: this version wrote it, so it is the later.
 */
const uniteSharedKeys = (document: ContextSessionsDocument): ReadonlyArray<ContextSessionsEntry> => {
  const united = new Map<string, ContextSessionsEntry>();
  const normalizedLast = [
    ...document.sessions.filter((entry) => !isStoredNormalized(entry.key)),
    ...document.sessions.filter((entry) => isStoredNormalized(entry.key)),
  ];
  for (const entry of normalizedLast.map(sessionsEntryFrom)) {
    const id = contextKeyId(entry.key);
    const known = united.get(id)?.cliSessions;
    united.set(id, { key: entry.key, cliSessions: { ...known, ...entry.cliSessions } });
  }
  return [...united.values()];
};

/** Decodes a parsed sessions file of `kind` (same versioning rules; there is no older layout). */
export const decodeSessionsFile = (value: unknown, kind: ContextKind): E.Either<ContextError, ContextSessionsFile> => {
  // The kind is the caller's, not the file's: one that is none is a programmer's mistake.
  checkedKind(kind);
  return pipe(
    versionOf(value),
    E.chain(notNewer),
    E.chain(() => validate(SessionsFileSchema, value)),
    E.chainFirst((document) => sameKind(kind, document.kind)),
    E.chainFirst((document) => uniqueKeys(document.sessions.map((entry) => entry.key))),
    E.map((document) => ({
      kind,
      sessions: [...uniteSharedKeys(document)].sort((a, b) => compareContextKeys(a.key, b.key)),
    })),
  );
};

/** The sessions document to write for `file`, checked with the schema that reads it back. */
export const encodeCheckedSessionsFile = (
  file: ContextSessionsFile,
): E.Either<ContextError, ContextSessionsDocument> => {
  const document = encodeSessionsFile(file);
  return pipe(
    validate(SessionsFileSchema, document),
    E.chainFirst((valid) => uniqueKeys(valid.sessions.map((entry) => entry.key))),
    E.bimap(unwritable, () => document),
  );
};

/** The sessions file as written to disk. */
export const encodeSessionsFile = (file: ContextSessionsFile): ContextSessionsDocument => {
  if (typeof file !== 'object' || file === null || !Array.isArray(file.sessions))
    refuseArgument('the file', file, 'a sessions file ({ kind, sessions })');
  return sessionsDocument(file);
};

/** The document of a sessions file, once checked. */
const sessionsDocument = (file: ContextSessionsFile): ContextSessionsDocument => ({
  schema_version: CONTEXT_SCHEMA_VERSION,
  kind: file.kind,
  sessions: [...file.sessions]
    .sort((a, b) => compareContextKeys(a.key, b.key))
    .map((entry) => ({
      key: keyTo(entry.key),
      cli_sessions: Object.fromEntries(
        Object.entries(entry.cliSessions)
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
          .map(([tool, session]) => [
            tool,
            { id: session.id, ...(session.localPath === undefined ? {} : { local_path: session.localPath }) },
          ]),
      ),
    })),
});
