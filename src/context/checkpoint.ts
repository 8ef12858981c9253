/**
 * Repository state beats memory. A checkpoint records the commit, a hash of the tracked files
 * and a hash of the summary; a context loaded against a repository that no longer matches is
 * stale, and its changed files come first. The shell runs git and hands the raw output here,
 * so parsing and every decision stay pure.
 */
import { refuseArgument } from '../base/describe.js';
import { sha256HexPrefix } from '../base/hash.js';
import { clipStartRedacted, redactSecrets } from './secrets.js';
import { checkedContext, checkedList, checkedText } from './arguments.js';
import * as E from 'fp-ts/lib/Either.js';
import { checkedExclusion, type ContextExclusion, isExcluded } from './exclusion.js';
import { findMissingEvidence, type MissingEvidence, parseLineRange } from './ledger.js';
import { type Checkpoint, CONTEXT_LIMITS, type SharedContext } from './model.js';

/** What the repository looks like now, as the shell saw it. */
export type RepositorySnapshot =
  | {
      readonly kind: 'git';
      /** The current commit; empty before the first commit. */
      readonly head: string;
      /** The files hash a checkpoint of this version records (see `TRACKED_FILES_HASH_VERSION`). */
      readonly trackedFilesHash: string;
      /**
       * The files hash as version 1 took it, which a checkpoint without a version (an older
       * release's) is compared with; without it, such a checkpoint is compared with `trackedFilesHash`.
       */
      readonly trackedFilesHashV1?: string;
      /** Files with unresolved merge conflicts (outside the context directory): nothing can be verified over them. */
      readonly unmerged?: ReadonlyArray<string>;
      /** Files with uncommitted edits, and new files git does not ignore (outside the context directory), as a checkpoint names them. */
      readonly uncommitted?: ReadonlyArray<string>;
    }
  | { readonly kind: 'none'; readonly reason: string };

/**
 * One line of `git diff --name-status` (A, C, D, M, R, T, U or X, the path, and the old path of a
 * rename or copy), or `?` for a file git does not track yet and does not ignore.
 */
export interface ChangedFile {
  readonly status: string;
  readonly path: string;
  readonly from?: string;
}

/** Why a summary is stale; `unverified` is a context nobody checked against the repository. */
export type StaleReason =
  'not_a_git_repository' | 'no_checkpoint' | 'head_moved' | 'files_changed' | 'summary_changed' | 'unverified';

/** The verified state of a loaded context. */
export interface ContextStatus {
  readonly repository: 'git' | 'none';
  /** The current commit, in a git repository. */
  readonly head?: string;
  /** Why the repository could not be read, or why the changes are unknown. */
  readonly note?: string;
  readonly stale: boolean;
  readonly reasons: ReadonlyArray<StaleReason>;
  /** The files changed since the checkpoint's commit (working tree included), when stale. */
  readonly changes: ReadonlyArray<ChangedFile>;
  /** Evidence that points at files the repository no longer has. */
  readonly missingEvidence: ReadonlyArray<MissingEvidence>;
  /** Evidence whose line range ends past the end of its file as it is now (a teammate shrank it). */
  readonly pastEndEvidence?: ReadonlyArray<PastEndEvidence>;
}

/** A claim's line range that its file no longer reaches. */
export interface PastEndEvidence {
  readonly claim: string;
  readonly path: string;
  /** The range as recorded: `L5-L9`. */
  readonly lines: string;
  /** How many lines the file has now. */
  readonly length: number;
}

/** What the shell gathered to verify a context: the snapshot, the diff and which evidence files are gone. */
export interface RepositoryEvidence {
  readonly snapshot: RepositorySnapshot;
  readonly changes: ReadonlyArray<ChangedFile>;
  readonly missingPaths: ReadonlyArray<string>;
  /** Set when the diff could not be computed (for example, the checkpoint's commit is gone). */
  readonly diffNote?: string;
  /** How many lines each evidence file has now, as far as its ranges needed counting; a file not counted is taken to reach them. */
  readonly lineCounts?: ReadonlyMap<string, number>;
}

/** `snapshot`, refused with a TypeError when it is none (null from an unset variable). */
const checkedSnapshot = (snapshot: RepositorySnapshot): RepositorySnapshot =>
  typeof snapshot === 'object' && snapshot !== null && (snapshot.kind === 'git' || snapshot.kind === 'none')
    ? snapshot
    : refuseArgument('the snapshot', snapshot, 'a repository snapshot ({ kind: git or none, ... })');

/** The hash of a summary's text, as a checkpoint records it. */
export const hashSummary = (text: string): string => sha256HexPrefix(checkedText(text, 'the summary'), 16);

/** The NUL-separated fields of git's `-z` output, without the empty one after the last NUL. */
export const splitNulSeparated = (text: string): string[] => {
  const parts = text.split('\0');
  if (parts[parts.length - 1] === '') parts.pop();
  return parts;
};

/** Parses `git diff --name-status -z`: a status, then one path (two for renames and copies). */
export const parseNameStatus = (output: string): ReadonlyArray<ChangedFile> => {
  const parts = splitNulSeparated(checkedText(output, "git's output"));
  const changes: ChangedFile[] = [];
  for (let i = 0; i < parts.length;) {
    const status = parts[i]!.charAt(0);
    if (status === 'R' || status === 'C') {
      const from = parts[i + 1];
      const path = parts[i + 2];
      if (from !== undefined && path !== undefined) changes.push({ status, path, from });
      i += 3;
    } else {
      const path = parts[i + 1];
      if (path !== undefined && status !== '') changes.push({ status, path });
      i += 2;
    }
  }
  return changes;
};

/** What `git status --porcelain=v2 --branch -z` says about HEAD and the working tree. */
export interface WorkingTreeStatus {
  /** The commit HEAD points to; empty before the first commit. */
  readonly head: string;
  /** The current branch, or undefined on a detached HEAD. */
  readonly branch?: string;
  /** Tracked files whose working-tree content differs from the index. */
  readonly modified: ReadonlyArray<string>;
  /** Tracked files deleted from the working tree. */
  readonly deleted: ReadonlyArray<string>;
  /** Submodules whose checked-out commit or tracked content differs from the index. */
  readonly submodules: ReadonlyArray<string>;
  /** The working tree's mode of each changed file whose mode it shows (`100755` after a `chmod +x`). */
  readonly modes: ReadonlyArray<readonly [path: string, mode: string]>;
  /** Files with unresolved merge conflicts. */
  readonly unmerged: ReadonlyArray<string>;
}

/** The number of space-separated fields before the path, by entry type (ordinary, rename or copy, unmerged). */
const FIELDS_BEFORE_PATH: Readonly<Record<string, number>> = { '1': 8, '2': 9, u: 10 };
/** Which field holds the working tree's mode, by entry type (`mW`). */
const WORKTREE_MODE_FIELD: Readonly<Record<string, number>> = { '1': 5, '2': 5, u: 6 };

/**
 * Parses `git status --porcelain=v2 --branch -z` (paths relative to the repository root): the
 * `# branch.oid` and `# branch.head` headers, and each entry whose working-tree column (the Y
 * of XY) says it changed; a submodule entry (its `S...` field) is listed apart, since its
 * content is a commit and a working tree of its own, not a blob.
 */
export const parseWorkingTreeStatus = (output: string): WorkingTreeStatus => {
  checkedText(output, "git's output");
  let head = '';
  let branch: string | undefined;
  const modified: string[] = [];
  const deleted: string[] = [];
  const submodules: string[] = [];
  const modes: Array<readonly [string, string]> = [];
  const unmerged: string[] = [];
  const records = splitNulSeparated(output);
  for (let i = 0; i < records.length; i += 1) {
    const record = records[i]!;
    if (record.startsWith('# branch.oid ')) head = record.slice(13) === '(initial)' ? '' : record.slice(13);
    else if (record.startsWith('# branch.head '))
      branch = record.slice(14) === '(detached)' ? undefined : record.slice(14);
    const before = FIELDS_BEFORE_PATH[record.charAt(0)];
    if (before === undefined) continue;
    const parts = record.split(' ');
    const path = parts.slice(before).join(' ');
    const worktree = record.charAt(0) === 'u' ? 'M' : (parts[1] ?? '..').charAt(1);
    const submodule = (parts[2] ?? '').startsWith('S');
    if (record.charAt(0) === 'u') unmerged.push(path);
    if (worktree === 'D') deleted.push(path);
    else if (worktree !== '.') {
      (submodule ? submodules : modified).push(path);
      const mode = parts[WORKTREE_MODE_FIELD[record.charAt(0)]!];
      if (!submodule && mode !== undefined && /^[0-7]{6}$/u.test(mode) && mode !== '000000') modes.push([path, mode]);
    }
    // A rename or copy carries its original path as the next record.
    if (record.charAt(0) === '2') i += 1;
  }
  return { head, ...(branch === undefined ? {} : { branch }), modified, deleted, submodules, modes, unmerged };
};

/**
 * A file as it is in the working tree: its blob hash, or null when it was deleted, and its mode
 * when it shows one. A file the index does not hold is a new one, as `git add` would record it.
 */
export interface WorkingFile {
  readonly path: string;
  readonly blob: string | null;
  readonly mode?: string;
  /** Its blob as version 1 of the files hash took it, where that differs (an edited symbolic link, a changed submodule). */
  readonly blobV1?: string;
}

/** One entry of the index: its mode, blob and stage, and whether it is outside a sparse checkout (skip-worktree). */
export interface IndexEntry {
  readonly path: string;
  readonly mode: string;
  readonly blob: string;
  readonly stage: string;
  readonly skipWorktree: boolean;
}

/**
 * Parses `git ls-files -s -z`, with or without `-t` (whose tag says `S` for a file outside a
 * sparse checkout): one entry per index line, in its order.
 */
export const parseIndexEntries = (lsFiles: string): ReadonlyArray<IndexEntry> => {
  const entries: IndexEntry[] = [];
  for (const record of splitNulSeparated(lsFiles)) {
    const tab = record.indexOf('\t');
    if (tab === -1) continue;
    const fields = record.slice(0, tab).split(' ');
    const tagged = fields.length === 4;
    const [mode = '', blob = '', stage = ''] = tagged ? fields.slice(1) : fields;
    entries.push({ path: record.slice(tab + 1), mode, blob, stage, skipWorktree: tagged && fields[0] === 'S' });
  }
  return entries;
};

/**
 * The version of the files hash a checkpoint records: 2 counts the new files git does not ignore
 * and takes an edited symbolic link by its blob as git's own. A checkpoint without a version
 * (one recorded by a release before new files counted) holds version 1: the index's entries
 * alone, an edited link by a hash of its target. Each is compared with the hash of its own
 * version, so a checkpoint an older release recorded over new files is not stale for them alone.
 */
export const TRACKED_FILES_HASH_VERSION = 2;

/** The hash of file entries, in a stable order. */
const hashEntries = (entries: string[]): string => sha256HexPrefix(entries.sort().join('\0'), 16);

/**
 * The files hash of each version, from one reading of the index (`git ls-files -s -z`, cheap:
 * no file is read). Both take each entry of the index with its blob and mode replaced by the
 * working tree's where git lists the file as modified, so an uncommitted edit or `chmod +x`
 * changes the hash, and committing it does not. The current version also takes each new file
 * (in `working`, not in the index) as the index will hold it once added (mode, blob, stage 0);
 * version 1 leaves new files out and takes a file's `blobV1` where it has one.
 * The files `excluded` leaves out (the context's own, see `ContextExclusion`) do not count:
 * writing or committing the context must not make it stale.
 */
export const hashTrackedFilesByVersion = (
  lsFiles: string,
  working: ReadonlyArray<WorkingFile>,
  excluded: ContextExclusion,
): { readonly trackedFilesHash: string; readonly trackedFilesHashV1: string } => {
  checkedText(lsFiles, "git's output");
  checkedExclusion(excluded);
  const edits = new Map(checkedList(working, 'working', 'working files').map((file) => [file.path, file]));
  const entries: string[] = [];
  const entriesV1: string[] = [];
  const indexed = new Set<string>();
  for (const { path, mode, blob, stage } of parseIndexEntries(lsFiles)) {
    indexed.add(path);
    if (isExcluded(excluded, path)) continue;
    const edit = edits.get(path);
    const entry = (current: string | null): string => `${edit?.mode ?? mode} ${current ?? 'deleted'} ${stage}\t${path}`;
    const current = entry(edit === undefined ? blob : edit.blob);
    entries.push(current);
    entriesV1.push(edit?.blobV1 === undefined ? current : entry(edit.blobV1));
  }
  for (const { path, mode, blob } of edits.values())
    if (!indexed.has(path) && blob !== null && !isExcluded(excluded, path))
      entries.push(`${mode ?? '100644'} ${blob} 0\t${path}`);
  return { trackedFilesHash: hashEntries(entries), trackedFilesHashV1: hashEntries(entriesV1) };
};

/** The files hash of the current version (see `hashTrackedFilesByVersion`), as a checkpoint records it. */
export const hashTrackedFiles = (
  lsFiles: string,
  working: ReadonlyArray<WorkingFile>,
  excluded: ContextExclusion,
): string => hashTrackedFilesByVersion(lsFiles, working, excluded).trackedFilesHash;

/** The checkpoint of `summary` at the repository state `snapshot`. */
export const checkpointAt = (snapshot: RepositorySnapshot & { readonly kind: 'git' }, summary: string): Checkpoint => {
  if (checkedSnapshot(snapshot).kind !== 'git')
    throw new TypeError('the snapshot is of no git repository: a checkpoint is recorded only in one');
  return {
    gitHead: snapshot.head,
    trackedFilesHash: snapshot.trackedFilesHash,
    trackedFilesHashVersion: TRACKED_FILES_HASH_VERSION,
    summaryHash: hashSummary(summary),
    ...(snapshot.uncommitted === undefined || snapshot.uncommitted.length === 0
      ? {}
      : {
          // A path over the schema's limit is recorded clipped at its start (its file name matters most), never refused.
          // A path is git's, not text anyone wrote into the context: one that holds a secret, or
          // whose cut makes one, is recorded redacted rather than refusing the checkpoint.
          uncommitted: snapshot.uncommitted
            .slice(0, CONTEXT_LIMITS.uncommittedPaths)
            .map((path) => clipStartRedacted(redactSecrets(path), CONTEXT_LIMITS.path)),
        }),
  };
};

/**
 * True when the files match `checkpoint` in the version it holds. One without a version (or of
 * version 1) matches the snapshot's version 1 hash, as the older release that recorded it
 * would; or this version's, since an older release that rewrites the file drops the version of
 * a checkpoint this one recorded. A newer version's, which this one cannot compute, is compared
 * with this version's hash alone.
 */
const filesMatch = (checkpoint: Checkpoint, snapshot: RepositorySnapshot & { readonly kind: 'git' }): boolean =>
  checkpoint.trackedFilesHash === snapshot.trackedFilesHash ||
  ((checkpoint.trackedFilesHashVersion ?? 1) === 1 && checkpoint.trackedFilesHash === snapshot.trackedFilesHashV1);

/**
 * Why the context's summary no longer matches `snapshot`; empty when it does. The files'
 * content, hashed in the checkpoint's version (see `filesMatch`), decides: `files_changed` when
 * it differs from the checkpoint's, and `head_moved` too when a commit brought the change. A
 * HEAD that moved without changing any tracked file (the verified work was committed, or only
 * the context files were) leaves the summary valid.
 */
export const checkpointMismatch = (
  context: SharedContext,
  snapshot: RepositorySnapshot,
): ReadonlyArray<StaleReason> => {
  checkedContext(context);
  checkedSnapshot(snapshot);
  if (snapshot.kind === 'none') return ['not_a_git_repository'];
  const { checkpoint } = context;
  if (checkpoint === undefined) return ['no_checkpoint'];
  const reasons: StaleReason[] = [];
  if (!filesMatch(checkpoint, snapshot))
    reasons.push(...(checkpoint.gitHead === snapshot.head ? [] : ['head_moved' as const]), 'files_changed');
  if (checkpoint.summaryHash !== hashSummary(context.workingSummary.text)) reasons.push('summary_changed');
  return reasons;
};

/**
 * The status of a context that was not verified against the repository (built by the pure
 * functions alone, without the shell): stale, since only the repository could say otherwise.
 */
export const unverifiedStatus = (): ContextStatus => ({
  repository: 'git',
  note: 'not verified against the repository: load it with loadContext to check the checkpoint',
  stale: true,
  reasons: ['unverified'],
  changes: [],
  missingEvidence: [],
});

/** True when the files changed since the checkpoint are worth a `git diff`. */
export const needsDiff = (reasons: ReadonlyArray<StaleReason>): boolean => reasons.includes('files_changed');

/** The ledger's ranges that end past their file's current end, as far as `lineCounts` knows. */
const findPastEndEvidence = (
  context: SharedContext,
  lineCounts: ReadonlyMap<string, number>,
): ReadonlyArray<PastEndEvidence> =>
  context.evidenceLedger.flatMap((claim) =>
    claim.files.flatMap((file) => {
      const length = lineCounts.get(file.path);
      const range = parseLineRange(file.lines);
      return length === undefined || E.isLeft(range) || range.right.end <= length
        ? []
        : [{ claim: claim.claim, path: file.path, lines: file.lines, length }];
    }),
  );

/**
 * Why a stale summary may list no changed file: its checkpoint was recorded over uncommitted
 * edits, which a checkout without them (a teammate's, after a pull) does not have.
 */
export const uncommittedNote = (context: SharedContext, reasons: ReadonlyArray<StaleReason>): string | undefined => {
  const paths = context.checkpoint?.uncommitted ?? [];
  return paths.length === 0 || !reasons.includes('files_changed')
    ? undefined
    : `the checkpoint was recorded over uncommitted edits of ${paths.slice(0, 3).join(', ')}${paths.length > 3 ? ` and ${paths.length - 3} more` : ''}: a checkout without them sees the summary stale until they are committed`;
};

/**
 * Verifies a context against the repository: staleness, its reasons, the changed files
 * (without the context's own, which `excluded` leaves out), the evidence that points at missing
 * files or past the end of its file, and why a stale summary lists no changed file.
 */
export const verifyCheckpoint = (
  context: SharedContext,
  evidence: RepositoryEvidence,
  excluded: ContextExclusion,
): ContextStatus => {
  checkedContext(context);
  checkedExclusion(excluded);
  if (typeof evidence !== 'object' || evidence === null)
    refuseArgument('the evidence', evidence, 'repository evidence ({ snapshot, changes, missingPaths })');
  const { snapshot } = evidence;
  const reasons = checkpointMismatch(context, snapshot);
  const missing = new Set(evidence.missingPaths);
  const notes = [snapshot.kind === 'none' ? snapshot.reason : evidence.diffNote, uncommittedNote(context, reasons)];
  const note = notes.filter((line) => line !== undefined).join('; ');
  return {
    repository: snapshot.kind,
    ...(snapshot.kind === 'git' ? { head: snapshot.head } : {}),
    ...(note === '' ? {} : { note }),
    stale: reasons.length > 0,
    reasons,
    changes: needsDiff(reasons) ? evidence.changes.filter((change) => !isExcluded(excluded, change.path)) : [],
    missingEvidence: findMissingEvidence(context.evidenceLedger, (path) => !missing.has(path)),
    pastEndEvidence: findPastEndEvidence(context, evidence.lineCounts ?? new Map()),
  };
};
