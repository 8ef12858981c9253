/**
 * What is checked before a context file is written, so that nothing is written the reader would
 * refuse or that holds a secret: the text against the schema that reads it back and against
 * the size cap, and every context of the file (those kept apart too) for secrets.
 */
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import { inSide } from '../conflictMarkers.js';
import { formatJsonDocument } from '../jsonText.js';
import type { ConflictFiles } from '../mergeReadBack.js';
import {
  CONTEXT_FILE_MAX_BYTES,
  type ContextError,
  type ContextFile,
  type QuarantinedContext,
  type SharedContext,
} from '../model.js';
import { encodeCheckedContextFile, findContextSecret } from '../schema.js';
import { findSecretField, redactSecrets } from '../secrets.js';
import { formatBytes } from './files.js';
import { located, prune, type Scope } from './scope.js';

/** The text of `file` as it will be written, or why it may not be: the reader would refuse it, or it is too large. */
export const contextText = (
  scope: Scope,
  file: ContextFile,
  onDisk: ContextFile | undefined,
): E.Either<ContextError, string> =>
  pipe(
    E.of(new Set(onDisk?.contexts)),
    E.chain((decoded) => encodeCheckedContextFile(file, (context) => decoded.has(context))),
    E.map(formatJsonDocument),
    E.chain((text) => {
      const bytes = Buffer.byteLength(text, 'utf8');
      return bytes <= CONTEXT_FILE_MAX_BYTES
        ? E.right(text)
        : E.left(
            located(scope, scope.paths.json, {
              code: 'too_large',
              message: `would grow to ${formatBytes(bytes)}, over the ${formatBytes(CONTEXT_FILE_MAX_BYTES)} a context file may hold: ${prune(scope)}`,
            }),
          );
    }),
  );

/**
 * An entry kept apart, for a message: its place (`contexts[2]`) and its workstream when its key is
 * valid. Its place is counted in the file it was read from: of a conflict's merge, in the side
 * that held it (ours first, where both did), which is said.
 */
const describeKeptApart = (entry: QuarantinedContext, sides: ConflictFiles | undefined): string => {
  const place = /^contexts\[\d+\]/u.exec(entry.problem)?.[0] ?? 'a context kept apart';
  const { key } = entry;
  const named =
    key === undefined
      ? place
      : `${place} (workstream ${redactSecrets(key.workstreamId)}, branch ${redactSecrets(key.branch)})`;
  if (sides === undefined) return named;
  const side = sides.ours.quarantined?.some((held) => held.raw === entry.raw) === true ? 'ours' : 'theirs';
  return inSide(side, named);
};

/**
 * Refuses a file that holds a secret anywhere: in the context this write changes (naming the
 * field), or in any other, as a teammate's tool or an older version may have left it (naming
 * the context and the field, to remove it by hand; one kept apart in a side of a conflict being
 * merged, `sides`, by its place in that side). Nothing of it is written again.
 */
export const withoutSecrets = (
  scope: Scope,
  file: ContextFile,
  changed: SharedContext | undefined,
  sides?: ConflictFiles,
): E.Either<ContextError, true> => {
  const own = changed === undefined ? undefined : findContextSecret(changed);
  if (own !== undefined)
    return E.left({
      code: 'secret',
      message: `${own.path} holds what looks like ${own.shape}: secrets are never stored in the shared context; remove it and try again`,
    });
  for (const entry of file.quarantined ?? []) {
    // A context kept apart is written back as it was read: a secret in it would be written again.
    const secret = findSecretField(entry.raw);
    if (secret !== undefined)
      return E.left(
        located(scope, scope.paths.json, {
          code: 'secret',
          message: `${describeKeptApart(entry, sides)} holds what looks like ${secret.shape} in ${secret.path}: nothing is written while the file holds a secret; remove it from the file and try again`,
        }),
      );
  }
  for (const [index, context] of file.contexts.entries()) {
    if (context === changed) continue;
    const secret = findContextSecret(context);
    if (secret !== undefined)
      return E.left(
        located(scope, scope.paths.json, {
          code: 'secret',
          message: `contexts[${index}] (workstream ${redactSecrets(context.key.workstreamId)}, branch ${redactSecrets(context.key.branch)}) holds what looks like ${secret.shape} in ${secret.path}: nothing is written while the file holds a secret; remove it from the file and try again`,
        }),
      );
  }
  return E.right(true);
};
