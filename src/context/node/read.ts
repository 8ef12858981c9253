/**
 * Reading a context file without changing anything: absent, decoded, the two decoded sides of
 * a merge conflict, or broken (and why, never quoting it); from the index when a sparse
 * checkout leaves it out of the working tree; and what a read-only call says of a file it
 * cannot use. Also whether the dashboard is out of step with the JSON it is made from.
 */
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import { renderContextDashboard } from '../dashboard.js';
import { CONTEXT_DIRECTORY, contextFileNames } from '../layout.js';
import { splitConflictMarkers } from '../merge.js';
import { CONTEXT_FILE_MAX_BYTES, CONTEXT_SCHEMA_VERSION, type ContextError, type ContextFile } from '../model.js';
import { parseJsonText } from '../jsonText.js';
import { decodeContextFile } from '../schema.js';
import { formatBytes, readTextIfExists } from './files.js';
import { type Observed, readBlob } from './git.js';
import { contextCommand, located, prune, type Result, type Scope } from './scope.js';

/** Decodes file text, or says why not; `decode` is the kind's decoder. */
export const decodeText = <T>(
  text: string,
  decode: (value: unknown) => E.Either<ContextError, T>,
): E.Either<ContextError, T> => pipe(parseJsonText(text), E.chain(decode));

/** The workstreams of a file, each with its branch, for a message. */
export const workstreamsOf = (file: ContextFile): ReadonlyArray<string> =>
  file.contexts.map((context) => `${context.key.workstreamId} (branch ${context.key.branch})`);

const describeSide = (workstreams: ReadonlyArray<string>): string =>
  workstreams.length === 0 ? 'no workstream' : `workstreams ${workstreams.join(', ')}`;

/** A context file as read: decoded, or the two decoded sides of a merge conflict. */
export type ReadFile =
  | { readonly kind: 'absent' }
  | { readonly kind: 'file'; readonly file: ContextFile }
  | { readonly kind: 'conflict'; readonly ours: ContextFile; readonly theirs: ContextFile }
  | { readonly kind: 'broken'; readonly text: string; readonly error: ContextError };

/** Reads the context file without changing anything: absent, decoded, in conflict, or broken (and why). */
export const readContextFile = async (scope: Scope): Result<ReadFile> => {
  const file = scope.paths.json;
  const text = await readTextIfExists(file, CONTEXT_FILE_MAX_BYTES);
  if (E.isLeft(text))
    return E.left(
      located(
        scope,
        file,
        text.left.code === 'too_large' ? { ...text.left, message: `${text.left.message}: ${prune(scope)}` } : text.left,
      ),
    );
  if (text.right === undefined) return E.right({ kind: 'absent' });
  return parseContextText(scope, text.right);
};

/** Context file text as read: decoded, the two decoded sides of a merge conflict, or broken (and why). */
const parseContextText = (scope: Scope, text: string): E.Either<ContextError, ReadFile> => {
  const file = scope.paths.json;
  const decode = (value: unknown) => decodeContextFile(value, scope.kind);
  const sides = splitConflictMarkers(text);
  if (sides !== undefined) {
    const ours = decodeText(sides.ours, decode);
    const theirs = decodeText(sides.theirs, decode);
    if (E.isRight(ours) && E.isRight(theirs))
      return E.right({ kind: 'conflict', ours: ours.right, theirs: theirs.right });
    // A side written by a newer version is not broken: refused and left as it is, like a whole newer file.
    for (const [name, side] of [
      ['our', ours],
      ['their', theirs],
    ] as const)
      if (E.isLeft(side) && side.left.code === 'future_version')
        return E.left(
          located(scope, file, {
            code: 'future_version',
            message: `has merge conflict markers, and ${name} side was ${side.left.message.replace(
              '(the file was left as it is)',
              `and run ${contextCommand(scope, 'resolve')} (the file was left as it is)`,
            )}`,
          }),
        );
    const broken = E.isLeft(ours) ? ours.left : (theirs as E.Left<ContextError>).left;
    return E.right({
      kind: 'broken',
      text,
      error: {
        ...broken,
        message: `has merge conflict markers, and one side is not a context file: ${broken.message}`,
      },
    });
  }
  const decoded = decodeText(text, decode);
  if (E.isRight(decoded)) return E.right({ kind: 'file', file: decoded.right });
  if (decoded.left.code !== 'corrupt') return E.left(located(scope, file, decoded.left));
  return E.right({ kind: 'broken', text, error: decoded.left });
};

/**
 * The committed context file when a sparse checkout leaves it out of the working tree: read
 * from the index, so that the context a team committed is still what a read shows. Undefined
 * when the file is not left out that way.
 */
export const readFromIndex = async (
  scope: Scope,
  observed: Observed,
): Promise<E.Either<ContextError, ReadFile | undefined>> => {
  const entry = observed.index.get(scope.display(scope.paths.json));
  if (entry === undefined || !entry.skipWorktree) return E.right(undefined);
  const blob = await readBlob(scope.paths.root, entry.blob, CONTEXT_FILE_MAX_BYTES);
  if (E.isLeft(blob)) return E.left(located(scope, scope.paths.json, blob.left));
  return parseContextText(scope, blob.right.toString('utf8'));
};

/** What a read from the index says. */
export const SPARSE_NOTE = `${CONTEXT_DIRECTORY}/ is outside this sparse checkout: the context was read from the index; run git sparse-checkout add ${CONTEXT_DIRECTORY} to record anything`;

/** What a read-only call says of a file it cannot use: it is reported, and left exactly as it is. */
export const reportUnusable = (scope: Scope, read: ReadFile): ContextError | undefined => {
  if (read.kind === 'broken')
    return located(scope, scope.paths.json, {
      ...read.error,
      message: `${read.error.message} (left as it is; the next write moves it aside)`,
    });
  if (read.kind === 'conflict')
    return located(scope, scope.paths.json, {
      code: 'conflicted',
      message: `has merge conflict markers (from a git pull or merge): ours holds ${describeSide(workstreamsOf(read.ours))}; theirs holds ${describeSide(workstreamsOf(read.theirs))}; run ${contextCommand(scope, 'resolve')} (or any write) to merge both sides`,
    });
  return undefined;
};

/**
 * True when the dashboard on disk is not what the JSON renders to (a merge, an interrupted
 * write), or is missing when `missing` counts; false when it cannot be read.
 */
export const dashboardOutOfStep = async (scope: Scope, file: ContextFile, missing: boolean): Promise<boolean> => {
  const text = await readTextIfExists(scope.paths.dashboard, 4 * CONTEXT_FILE_MAX_BYTES);
  if (E.isLeft(text)) return false;
  return text.right === undefined
    ? missing
    : text.right !== renderContextDashboard(file, contextFileNames(scope.kind).json);
};

/**
 * True when the file's first bytes declare a newer schema version (the encoder writes
 * `schema_version` first): such a file is refused without a lock, so nothing is touched,
 * and without parsing the whole file twice on every write.
 */
export const isNewerVersion = async (scope: Scope): Promise<boolean> => {
  const head = await readTextIfExists(scope.paths.json, 512, true);
  const version = E.isRight(head) ? /^\s*\{\s*"schema_version"\s*:\s*(\d+)/u.exec(head.right ?? '') : null;
  return version !== null && Number(version[1]) > CONTEXT_SCHEMA_VERSION;
};

/** The refusal of a context file over the size cap. */
export const tooLarge = (scope: Scope): ContextError =>
  located(scope, scope.paths.json, {
    code: 'too_large',
    message: `is larger than ${formatBytes(CONTEXT_FILE_MAX_BYTES)}, the most it may hold: ${prune(scope)}`,
  });
