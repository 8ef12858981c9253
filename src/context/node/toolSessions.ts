/**
 * The tool sessions of this machine (`codex`, `gemini`, ...) in the `*.local.json` file beside
 * a context file: best-effort acceleration, never a source of truth, so a broken file is
 * ignored with a warning when read and replaced when written.
 */
import * as E from 'fp-ts/lib/Either.js';
import { isSameContextKey } from '../key.js';
import {
  type CliSessions,
  CONTEXT_FILE_MAX_BYTES,
  type ContextError,
  type ContextKey,
  type ContextSessionsFile,
} from '../model.js';
import { formatJsonDocument } from '../jsonText.js';
import { decodeSessionsFile, encodeCheckedSessionsFile } from '../sessionsFile.js';
import { readTextIfExists } from './files.js';
import { gitPathOf } from './derived.js';
import { isTracked } from './git.js';
import { decodeText } from './read.js';
import { located, type Scope } from './scope.js';

/** The sessions file, or why it cannot be used (read-only: a broken one is left as it is). */
export const readSessionsFile = async (scope: Scope): Promise<E.Either<ContextError, ContextSessionsFile>> => {
  const empty: ContextSessionsFile = { kind: scope.kind, sessions: [] };
  const text = await readTextIfExists(scope.paths.sessions, CONTEXT_FILE_MAX_BYTES);
  if (E.isLeft(text)) return E.left(located(scope, scope.paths.sessions, text.left));
  if (text.right === undefined) return E.right(empty);
  // A file the repository committed is not this machine's: its sessions are anyone's text, never resumed.
  if (scope.location.kind === 'git' && (await isTracked(scope.paths.root, gitPathOf(scope, scope.paths.sessions))))
    return E.left(
      located(scope, scope.paths.sessions, {
        code: 'invalid',
        message: `is committed to git, but tool sessions are this machine's own: a committed file's are never used (git rm --cached it)`,
      }),
    );
  return E.mapLeft((error: ContextError) => located(scope, scope.paths.sessions, error))(
    decodeText(text.right, (value) => decodeSessionsFile(value, scope.kind)),
  );
};

/** The warning a sessions file that cannot be used gives: the tool sessions are best effort, so it stops nothing. */
export const ignoredSessions = (error: ContextError): string => `tool sessions ignored: ${error.message}`;

/** The tool sessions stored under `key`. */
export const sessionsOf = (file: ContextSessionsFile, key: ContextKey): CliSessions =>
  file.sessions.find((entry) => isSameContextKey(entry.key, key))?.cliSessions ?? {};

/**
 * The sessions file with `add` merged in under `key` (and the sessions of `from`, a moved
 * context's key, copied, or taken over when it does not keep them), checked before anything is written; undefined when nothing changes.
 */
export const sessionsToWrite = async (
  scope: Scope,
  key: ContextKey,
  add: CliSessions,
  from?: { readonly key: ContextKey; readonly keep: boolean },
): Promise<
  E.Either<ContextError, { readonly text: string; readonly merged: CliSessions; readonly warning?: string } | undefined>
> => {
  const read = await readSessionsFile(scope);
  const file: ContextSessionsFile = E.isRight(read) ? read.right : { kind: scope.kind, sessions: [] };
  const moved = from === undefined ? {} : sessionsOf(file, from.key);
  if (Object.keys(add).length === 0 && Object.keys(moved).length === 0) return E.right(undefined);
  const merged = { ...moved, ...sessionsOf(file, key), ...add };
  const next: ContextSessionsFile = {
    kind: scope.kind,
    sessions: [
      ...file.sessions.filter(
        (entry) =>
          !isSameContextKey(entry.key, key) &&
          (from === undefined || from.keep || !isSameContextKey(entry.key, from.key)),
      ),
      { key, cliSessions: merged },
    ],
  };
  return E.map((document: unknown) => ({
    text: formatJsonDocument(document),
    merged,
    ...(E.isLeft(read) ? { warning: `${ignoredSessions(read.left)}; it is replaced` } : {}),
  }))(encodeCheckedSessionsFile(next));
};
