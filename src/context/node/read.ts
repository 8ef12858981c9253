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
import { type ConflictSide, type ConflictSides, hasConflictMarkers, splitConflictMarkers } from '../conflictMarkers.js';
import { selectQuarantined } from '../contextFile.js';
import { isSameContextKey } from '../key.js';
import {
  CONTEXT_FILE_MAX_BYTES,
  CONTEXT_SCHEMA_VERSION,
  type ContextError,
  type ContextFile,
  type ContextKey,
  type QuarantinedContext,
} from '../model.js';
import { checkJsonNesting, type FileLine, parseJsonText, withoutTrailingCommas } from '../jsonText.js';
import { decodeContextFile } from '../schema.js';
import { redactSecrets } from '../secrets.js';
import { formatBytes, readTextIfExists } from './files.js';
import { readBlob } from './git.js';
import type { ConflictStages, Observed } from './snapshot.js';
import { contextCommand, located, prune, type Result, type Scope } from './scope.js';

/** Decodes file text, or says why not (at a line of the file: `fileLine`), nested too deep included; `decode` is the kind's decoder. */
export const decodeText = <T>(
  text: string,
  decode: (value: unknown) => E.Either<ContextError, T>,
  fileLine?: FileLine,
): E.Either<ContextError, T> =>
  pipe(
    checkJsonNesting(text, fileLine),
    E.chain(() => parseJsonText(text, fileLine)),
    E.chain(decode),
  );

/** The workstreams of a file, each with its branch, for a message. */
export const workstreamsOf = (file: ContextFile): ReadonlyArray<string> =>
  file.contexts.map(
    (context) => `${redactSecrets(context.key.workstreamId)} (branch ${redactSecrets(context.key.branch)})`,
  );

const describeSide = (workstreams: ReadonlyArray<string>): string =>
  workstreams.length === 0 ? 'no workstream' : `workstreams ${workstreams.join(', ')}`;

/** A context file as read: decoded, or the two decoded sides of a merge conflict. */
export type ReadFile =
  | { readonly kind: 'absent' }
  | {
      readonly kind: 'file';
      readonly file: ContextFile;
      /** Set when the text was read only once a hand edit's typo was set right (`a trailing comma at line 3, column 4`). */
      readonly repaired?: string;
    }
  | {
      readonly kind: 'conflict';
      readonly ours: ContextFile;
      readonly theirs: ContextFile;
      /** The common ancestor, when the markers show it (git's `diff3` style). */
      readonly base?: ContextFile;
    }
  | {
      readonly kind: 'broken';
      readonly text: string;
      readonly error: ContextError;
      /** The side of the conflict markers that is not a context file, when that is what is broken. */
      readonly side?: ConflictSide;
    };

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

/** The sides of a merge conflict decoded, or why they cannot be. */
type DecodedSides =
  | Extract<ReadFile, { readonly kind: 'conflict' }>
  | { readonly kind: 'broken'; readonly error: ContextError; readonly side: ConflictSide };

/** A side's line as the file on disk has it; a side from the index (stage 2 or 3) is on no line of it, so its line is its own. */
const fileLineOf =
  (sides: ConflictSides | IndexSides, side: ConflictSide): FileLine =>
  (line) =>
    'fileLines' in sides ? (sides.fileLines[side][line - 1] ?? line) : line;

/** The sides of a conflict as git holds them in the index, stages 2 and 3: each a whole file, on no line of the one on disk. */
interface IndexSides {
  readonly ours: string;
  readonly theirs: string;
}

/** A side as a message names it: ours or theirs, and, from the index, where git holds it (its lines are that text's). */
const nameSide = (scope: Scope, sides: ConflictSides | IndexSides, side: ConflictSide): string =>
  'fileLines' in sides
    ? side
    : `${side} as git holds it (git show :${side === 'ours' ? 2 : 3}:${scope.display(scope.paths.json)})`;

/**
 * The two sides of a merge conflict (from the markers of `text`, or from the index), decoded:
 * a conflict to merge, or broken (and why) when a side is not a context file; a side written by
 * a newer version is refused, like a whole newer file.
 */
const decodeSides = (scope: Scope, sides: ConflictSides | IndexSides): E.Either<ContextError, DecodedSides> => {
  const file = scope.paths.json;
  const decode = (value: unknown) => decodeContextFile(value, scope.kind);
  const ours = decodeText(sides.ours, decode, fileLineOf(sides, 'ours'));
  const theirs = decodeText(sides.theirs, decode, fileLineOf(sides, 'theirs'));
  const base = !('base' in sides) || sides.base === undefined ? undefined : decodeText(sides.base, decode);
  if (E.isRight(ours) && E.isRight(theirs))
    return E.right({
      kind: 'conflict',
      ours: ours.right,
      theirs: theirs.right,
      ...(base !== undefined && E.isRight(base) ? { base: base.right } : {}),
    });
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
  const side = E.isLeft(ours) ? 'ours' : 'theirs';
  const broken = E.isLeft(ours) ? ours.left : (theirs as E.Left<ContextError>).left;
  return E.right({
    kind: 'broken',
    side,
    error: {
      ...broken,
      message: `has merge conflict markers, and ${nameSide(scope, sides, side)} is not a context file: ${broken.message}`,
    },
  });
};

/** Context file text as read: decoded, the two decoded sides of a merge conflict, or broken (and why). */
const parseContextText = (scope: Scope, text: string): E.Either<ContextError, ReadFile> => {
  const sides = splitConflictMarkers(text);
  if (sides !== undefined)
    return E.map((decoded: DecodedSides): ReadFile => (decoded.kind === 'broken' ? { ...decoded, text } : decoded))(
      decodeSides(scope, sides),
    );
  const decode = (value: unknown) => decodeContextFile(value, scope.kind);
  const decoded = decodeText(text, decode);
  if (E.isRight(decoded)) return E.right({ kind: 'file', file: decoded.right });
  if (decoded.left.code !== 'corrupt') return E.left(located(scope, scope.paths.json, decoded.left));
  // A trailing comma left by a hand edit is read as meant, and said; the next write writes the file clean.
  const repaired = withoutTrailingCommas(text);
  const retried = repaired === undefined ? undefined : decodeText(repaired.text, decode);
  if (repaired !== undefined && retried !== undefined && E.isRight(retried))
    return E.right({ kind: 'file', file: retried.right, repaired: `a trailing comma at ${repaired.first}` });
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

/** What to do with a file whose conflict markers cannot be read as two context files: it is never moved aside. */
export const conflictByHand = (scope: Scope): string => {
  const shown = scope.display(scope.paths.json);
  return `set it right by hand (git checkout --ours -- ${shown}, or --theirs, keeps one side; or edit the markers out), then try again`;
};

/** What to do with a file holding two entries of one key as written: it is never moved aside. */
export const MERGE_REPEATED_KEY = 'merge the two entries into one, or remove one, by hand, then try again';

/** What a read-only call says of a file it cannot use: it is reported, and left exactly as it is. */
export const reportUnusable = (scope: Scope, read: ReadFile): ContextError | undefined => {
  if (read.kind === 'broken')
    return located(scope, scope.paths.json, {
      ...read.error,
      message: hasConflictMarkers(read.text)
        ? `${read.error.message} (left as it is: ${conflictByHand(scope)})`
        : read.error.repeatedKey === true
          ? `${read.error.message} (left as it is: ${MERGE_REPEATED_KEY})`
          : `${read.error.message} (left as it is; the next write moves it aside)`,
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
 * write), line endings aside, or is missing when `missing` counts; false when it cannot be read.
 */
export const dashboardOutOfStep = async (scope: Scope, file: ContextFile, missing: boolean): Promise<boolean> => {
  const text = await readTextIfExists(scope.paths.dashboard, 4 * CONTEXT_FILE_MAX_BYTES);
  if (E.isLeft(text)) return false;
  // A checkout with CRLF line endings (`eol=crlf`) holds the same dashboard: only the line ends differ.
  return text.right === undefined
    ? missing
    : text.right.replace(/\r\n/gu, '\n') !== renderContextDashboard(file, contextFileNames(scope.kind).json);
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

/** What a context kept apart is, for a message: its workstream and branch when its key is valid. */
const describeQuarantined = (entry: QuarantinedContext): string =>
  entry.key === undefined
    ? 'a context without a valid key'
    : `workstream ${redactSecrets(entry.key.workstreamId)} (branch ${redactSecrets(entry.key.branch)})`;

/**
 * How to set right a context kept apart. One whose key a served entry holds too is not fixed
 * in place: made whole, it would stand beside that entry under one key, and a file holding one
 * key twice is refused whole (it reads as git's wrong join of a conflict).
 */
const fixKeptApart = (file: ContextFile, entry: QuarantinedContext): string => {
  const { key } = entry;
  return key !== undefined && file.contexts.some((context) => isSameContextKey(context.key, key))
    ? 'a served entry has its key, so do not fix this one in place (two entries of one key make the file unreadable): merge the two into one entry, or remove one, by hand'
    : 'fix it by hand';
};

/**
 * What every read and write says of a file it could use only in part: each context kept apart
 * (it breaks a cap or its schema, or shares its key) and a typo that was set right. The contexts
 * kept apart are left exactly as they are; the others are served and written.
 */
export const partialFileWarnings = (scope: Scope, file: ContextFile, repaired: string | undefined): string[] => [
  ...(repaired === undefined
    ? []
    : [
        `${scope.display(scope.paths.json)} has ${repaired} (a hand edit?): it is read as if it were not there, and the next write writes the file without it`,
      ]),
  ...(file.quarantined ?? []).map(
    (entry) =>
      `${scope.display(scope.paths.json)}: ${describeQuarantined(entry)} is kept apart, untouched and not served: ${entry.problem}; ${fixKeptApart(file, entry)} (the other workstreams are served as usual)`,
  ),
];

/** The refusal of a call whose own context is kept apart: it is fixed by hand, never replaced or shadowed. */
export const quarantinedHere = (scope: Scope, file: ContextFile, key: ContextKey): ContextError | undefined => {
  const entry = selectQuarantined(file, key);
  return entry === undefined
    ? undefined
    : located(scope, scope.paths.json, {
        code: 'corrupt',
        message: `${describeQuarantined(entry)} is kept apart and left untouched (${entry.problem}), and the other workstreams are served; ${fixKeptApart(file, entry)}, then try again`,
      });
};

/** The text of a blob of the index, or undefined when git cannot give it. */
const readIndexText = async (scope: Scope, blob: string | undefined): Promise<string | undefined> => {
  if (blob === undefined) return undefined;
  const bytes = await readBlob(scope.paths.root, blob, CONTEXT_FILE_MAX_BYTES);
  return E.isRight(bytes) ? bytes.right.toString('utf8') : undefined;
};

/**
 * True when a line of `text` is a conflict marker of any length (`conflict-marker-size`), or
 * what is left of one: a file set right by hand but for a marker line still reads from the index.
 */
const holdsMarkerLines = (text: string): boolean => /^(?:<{7,}|\|{7,}|>{7,})(?: |$)|^={7,}$/mu.test(text);

/** The two decoded sides of a merge conflict. */
type ConflictRead = Extract<ReadFile, { readonly kind: 'conflict' }>;

/** How many contexts a side keeps apart (each breaks a cap or its schema, or shares its key). */
const keptApart = (file: ContextFile): number => file.quarantined?.length ?? 0;

/**
 * True when the sides rebuilt from the markers keep apart more contexts than the index's stages
 * 2 and 3, side by side: what the markers add is then git's wrong join (both sides' decisions
 * under one id outside the markers), or an edit that broke a context, never a context made whole.
 */
const keepsApartMore = (markers: ConflictRead, index: ConflictRead): boolean =>
  keptApart(markers.ours) > keptApart(index.ours) || keptApart(markers.theirs) > keptApart(index.theirs);

/** The common ancestor of a merge in progress, stage 1, when it is a context file. */
const readAncestor = async (scope: Scope, stages: ConflictStages): Promise<ContextFile | undefined> => {
  const text = await readIndexText(scope, stages.base);
  const decoded = text === undefined ? undefined : decodeText(text, (value) => decodeContextFile(value, scope.kind));
  return decoded !== undefined && E.isRight(decoded) ? decoded.right : undefined;
};

/** Stages 2 and 3 decoded as the two sides of a conflict (or why they cannot be); undefined when git lacks one. */
const readIndexSides = async (
  scope: Scope,
  stages: ConflictStages,
): Promise<E.Either<ContextError, DecodedSides> | undefined> => {
  const [ours, theirs] = await Promise.all([stages.ours, stages.theirs].map((blob) => readIndexText(scope, blob)));
  return ours === undefined || theirs === undefined ? undefined : decodeSides(scope, { ours, theirs });
};

/** `sides` with the index's ancestor, when it has one that is a context file. */
const withAncestor = (sides: ConflictRead, ancestor: ContextFile | undefined): ConflictRead =>
  ancestor === undefined ? sides : { ...sides, base: ancestor };

/**
 * The sides of markers that read as two context files: kept (so hand edits between them count)
 * unless they keep apart more contexts than stages 2 and 3, which are then the sides. The stages
 * are read only when a side keeps a context apart, so an ordinary conflict costs one blob.
 */
const sidesOfConflict = async (scope: Scope, stages: ConflictStages, read: ConflictRead): Promise<ConflictRead> => {
  const suspect = keptApart(read.ours) + keptApart(read.theirs) > 0;
  const [ancestor, fromIndex] = await Promise.all([
    readAncestor(scope, stages),
    suspect ? readIndexSides(scope, stages) : undefined,
  ]);
  const index = fromIndex !== undefined && E.isRight(fromIndex) ? fromIndex.right : undefined;
  return withAncestor(index?.kind === 'conflict' && keepsApartMore(read, index) ? index : read, ancestor);
};

/** A file whose markers give no two context files: its sides from stages 2 and 3 when those are context files. */
const sidesOfBroken = async (
  scope: Scope,
  stages: ConflictStages,
  read: Extract<ReadFile, { readonly kind: 'broken' }>,
): Promise<E.Either<ContextError, ReadFile>> => {
  const [ancestor, fromIndex] = await Promise.all([readAncestor(scope, stages), readIndexSides(scope, stages)]);
  if (fromIndex === undefined) return E.right(read);
  if (E.isLeft(fromIndex)) return fromIndex;
  if (fromIndex.right.kind === 'conflict') return E.right(withAncestor(fromIndex.right, ancestor));
  // Neither way gives two context files: the index's sides are the true ones, so theirs is the reason
  // given, unless the markers break on the same side: theirs then says where in the file on disk.
  return E.right(read.side === fromIndex.right.side ? read : { ...fromIndex.right, text: read.text });
};

/**
 * A context file with conflict markers as the merge left it in the index (a merge, pull, rebase
 * or stash pop alike). Its two sides are the markers' while they give two sound context files,
 * so edits made by hand between them count. The stages are not taken first, although each is
 * exactly one side's file: they are that file as committed, without what was set right between
 * the markers. When the markers give no two sound context files, the sides are stages 2 and 3:
 * git joins the hunks outside the markers line by line, so a side rebuilt from them may hold one
 * context twice (after a squash merge) or one decision id twice (an ordinary pull where both
 * sides added a decision), and markers of another length than 7 (`conflict-marker-size`) are not
 * seen as markers at all. A side that keeps apart more contexts than its stage is such a join (or
 * an edit that broke a context), not an edit worth keeping: taken, it would keep the workstream
 * apart, so that nothing either side recorded in it is merged. A file without stages (markers
 * committed or copied, nothing to compare with) is read as it is. The ancestor is stage 1 when
 * it is a context file, else the markers' own (`diff3`, only with the markers' sides); one that
 * cannot be read only makes the merge two-way.
 */
export const readConflictStages = async (
  scope: Scope,
  observed: Observed,
  read: ReadFile,
): Promise<E.Either<ContextError, ReadFile>> => {
  const stages = observed.conflictStages.get(scope.display(scope.paths.json));
  if (stages === undefined) return E.right(read);
  if (read.kind === 'conflict') return E.right(await sidesOfConflict(scope, stages, read));
  if (read.kind === 'broken' && holdsMarkerLines(read.text)) return sidesOfBroken(scope, stages, read);
  return E.right(read);
};
