/**
 * The shared context of one workstream, as plain data: what a session needs to resume the
 * planning or implementation of a feature where the previous session left it. Times are epoch
 * milliseconds; nothing here is a class, a Map or a Date, so a context serializes as it is.
 */

/** The two kinds of context, kept apart: each has its own file and its own bundle budget. */
export const CONTEXT_KINDS = Object.freeze(['planning', 'implementation'] as const);
/** One kind of context. */
export type ContextKind = (typeof CONTEXT_KINDS)[number];

/** The schema version this code reads and writes. */
export const CONTEXT_SCHEMA_VERSION = 1;

/** The workstream used when none is named. */
export const DEFAULT_WORKSTREAM = 'default';

/**
 * Fields a file held that this version does not know (a newer 1.x writer's, a team's own
 * annotation), by name: plain JSON, kept as read and written back after the known ones, so an
 * older writer never drops them. An entry replaced by a new one (a new checkpoint, summary or
 * run) does not carry the old one's.
 */
export type UnknownFields = Readonly<Record<string, unknown>>;

/** What one context is stored under. Keys compare as (repo, branch, workstreamId) tuples. */
export interface ContextKey {
  readonly repo: string;
  readonly branch: string;
  readonly workstreamId: string;
}

/** The repository state a summary was verified against. */
export interface Checkpoint {
  /** The commit HEAD pointed to (empty in a repository without commits). */
  readonly gitHead: string;
  /** A hash of `git ls-files -s`, of the tracked files edited in the working tree and of the new files git does not ignore. */
  readonly trackedFilesHash: string;
  /**
   * Which files hash `trackedFilesHash` is (`TRACKED_FILES_HASH_VERSION` for a checkpoint this
   * version records); absent in one an older release recorded, whose hash left new files out.
   */
  readonly trackedFilesHashVersion?: number;
  /** A hash of the working summary's text as verified. */
  readonly summaryHash: string;
  /**
   * Files with uncommitted edits, and new files not committed yet, when the checkpoint was
   * recorded (at most 20): a checkout without them sees the summary stale, and this says why.
   */
  readonly uncommitted?: ReadonlyArray<string>;
  /** Fields this version does not know (see `UnknownFields`). */
  readonly unknownFields?: UnknownFields;
}

/** The short task summary a session resumes from. */
export interface WorkingSummary {
  readonly text: string;
  /** When the summary was last written; absent before the first verified checkpoint. */
  readonly updatedAt?: number;
  /** True when the repository moved past the checkpoint, so the summary must not be trusted. */
  readonly stale: boolean;
  /** Fields this version does not know (see `UnknownFields`). */
  readonly unknownFields?: UnknownFields;
}

/** The states of a decision. */
export const DECISION_STATUSES = Object.freeze(['open', 'decided', 'dropped'] as const);
/** The state of one decision. */
export type DecisionStatus = (typeof DECISION_STATUSES)[number];

/** A design question and its state, cited by id (`D1`, `D2`, ...). */
export interface Decision {
  readonly id: string;
  readonly text: string;
  readonly status: DecisionStatus;
  /** Fields this version does not know (see `UnknownFields`). */
  readonly unknownFields?: UnknownFields;
}

/** One step of the current task. */
export interface ChecklistItem {
  readonly text: string;
  readonly done: boolean;
  /** Fields this version does not know (see `UnknownFields`). */
  readonly unknownFields?: UnknownFields;
}

/** A pointer into a file: a repository-relative path and a line range, `L10-L40`. */
export interface FileEvidence {
  readonly path: string;
  readonly lines: string;
  /** Fields this version does not know (see `UnknownFields`). */
  readonly unknownFields?: UnknownFields;
}

/** A claim about the work and the evidence that backs it. */
export interface Claim {
  readonly claim: string;
  readonly files: ReadonlyArray<FileEvidence>;
  readonly symbols: ReadonlyArray<string>;
  readonly at?: number;
  /** Fields this version does not know (see `UnknownFields`). */
  readonly unknownFields?: UnknownFields;
}

/** The claims of a workstream, oldest first. */
export type EvidenceLedger = ReadonlyArray<Claim>;

/** How the last run ended. */
export type RunStatus = 'succeeded' | 'failed';

/** A failed run: the step, the error and what to do next. */
export interface RunFailure {
  readonly failedStep: string;
  readonly error: string;
  readonly nextAction: string;
  readonly at?: number;
  /** Fields this version does not know (see `UnknownFields`). */
  readonly unknownFields?: UnknownFields;
}

/** The last run of the workstream. */
export type LastRun =
  | { readonly status: 'succeeded'; readonly at?: number; readonly unknownFields?: UnknownFields }
  | ({ readonly status: 'failed' } & RunFailure);

/** A tool's resumable session (best-effort acceleration, never a source of truth). */
export interface CliSession {
  readonly id: string;
  readonly localPath?: string;
}

/** Tool sessions by tool name (`codex`, `gemini`, ...). */
export type CliSessions = Readonly<Record<string, CliSession>>;

/** The shared context of one workstream (schema version 1). */
export interface SharedContext {
  readonly key: ContextKey;
  /** A label for the workstream: what the user asked for. */
  readonly featureRequest: string;
  readonly checkpoint?: Checkpoint;
  /** Rules every bundle carries whole: the tool's own (`DEFAULT_PINNED_RULES`), then those users pinned. */
  readonly pinnedRules: ReadonlyArray<string>;
  /** Who pinned each rule a user added (`Name <email>`), by the rule's text. */
  readonly pinnedBy?: Readonly<Record<string, string>>;
  readonly workingSummary: WorkingSummary;
  /** Decisions, oldest first. */
  readonly openDecisions: ReadonlyArray<Decision>;
  readonly checklist: ReadonlyArray<ChecklistItem>;
  readonly evidenceLedger: EvidenceLedger;
  readonly lastRun?: LastRun;
  /** The most recent failed runs, oldest first. */
  readonly recentFailures: ReadonlyArray<RunFailure>;
  /** Fields this version does not know (see `UnknownFields`). */
  readonly unknownFields?: UnknownFields;
}

/** What a repository says about itself, as the repo part of its context keys (see `identifyRepository`). */
export interface RepositoryIdentity {
  readonly id: string;
  readonly source: 'origin' | 'first_commit' | 'folder';
  /** Fields this version does not know (see `UnknownFields`). */
  readonly unknownFields?: UnknownFields;
}

/**
 * A context of the file that breaks a cap or its schema, or shares its key with another (a hand
 * edit, a teammate's tool, an older version): kept apart exactly as it was read, written back
 * untouched, never served, so that one broken workstream never takes the others down.
 */
export interface QuarantinedContext {
  /** The entry as it stands in the file. */
  readonly raw: unknown;
  /** Its key, when that part is valid. */
  readonly key?: ContextKey;
  /** Where it breaks the schema and how (`contexts[1].open_decisions: ...`), never quoting its text. */
  readonly problem: string;
}

/** One context file: every workstream's context of one kind, in key order. */
export interface ContextFile {
  readonly kind: ContextKind;
  /** The repository identity the file was written under (absent in files written before it was recorded). */
  readonly repository?: RepositoryIdentity;
  readonly contexts: ReadonlyArray<SharedContext>;
  /** The contexts kept apart (see `QuarantinedContext`), after the others in the file. */
  readonly quarantined?: ReadonlyArray<QuarantinedContext>;
  /** Fields this version does not know (see `UnknownFields`). */
  readonly unknownFields?: UnknownFields;
}

/** One workstream's tool sessions, as kept in a `*.local.json` file. */
export interface ContextSessionsEntry {
  readonly key: ContextKey;
  readonly cliSessions: CliSessions;
}

/** One sessions file: the tool sessions of one kind, in key order. */
export interface ContextSessionsFile {
  readonly kind: ContextKind;
  readonly sessions: ReadonlyArray<ContextSessionsEntry>;
}

/** Length limits, in UTF-16 units, checked on input and when a file is decoded. */
export const CONTEXT_LIMITS = Object.freeze({
  keyPart: 200,
  featureRequest: 1000,
  summary: 4000,
  rule: 200,
  decision: 300,
  decisions: 100,
  checklistItem: 200,
  checklist: 50,
  claim: 300,
  claims: 200,
  path: 300,
  symbol: 200,
  evidencePerClaim: 20,
  runText: 1000,
  recentFailures: 5,
  uncommittedPaths: 20,
  hash: 64,
} as const);

/** 0000-01-01T00:00:00.000Z (`Date.UTC` reads years below 100 as 19xx). */
const EARLIEST_TIME = -62_167_219_200_000;
const LATEST_TIME = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** True for the times a context file can hold: whole epoch milliseconds from the year 0000 to 9999 (UTC). */
export const isContextTime = (at: number): boolean =>
  Number.isSafeInteger(at) && at >= EARLIEST_TIME && at <= LATEST_TIME;

/** The tool's own rules: every context and every bundle carries them, and none can be unpinned. */
export const DEFAULT_PINNED_RULES: ReadonlyArray<string> = Object.freeze([
  'Repository state beats memory: if the summary is stale, read the changed files first.',
  'Claims of done, implemented or fixed need evidence: file:L10-L40 or a symbol.',
  'Never put secrets or credentials in context files, claims or prompts.',
]);

/**
 * The most bytes a context or sessions file may hold. A context is a summary and pointers, not
 * a log: 5 MiB is hundreds of busy workstreams, and it bounds what a read costs (a 5 MiB file
 * reads, decodes and rewrites in well under a second here). A write that would grow a file
 * past it is refused with how to prune; a larger file is refused on read without being read whole.
 */
export const CONTEXT_FILE_MAX_BYTES = 5 * 1024 * 1024;

/** What a cap pushed out of a context (a merge over a cap, the window of recent failures): always reported, never silent. */
export interface DroppedEntry {
  readonly key: ContextKey;
  readonly what: 'decision' | 'claim' | 'failure' | 'rule' | 'step';
  /** The decision (`D3 [decided] text`), the claim, or the failure (`step: error`), as one line. */
  readonly text: string;
  /** The cap that pushed it out. */
  readonly cap: number;
}

/** What went wrong in a context operation: a code to branch on and one line to show. */
export interface ContextError {
  readonly code:
    | 'corrupt'
    | 'conflicted'
    | 'future_version'
    | 'invalid'
    | 'secret'
    | 'too_large'
    | 'not_a_git_repository'
    | 'git_failed'
    | 'unsafe_path'
    | 'config'
    | 'io'
    | 'internal';
  readonly message: string;
  /** Where a corrupt file was moved to. */
  readonly backup?: string;
  /** Set when a context file holds two entries of one key as written: it is left as it is, never moved aside. */
  readonly repeatedKey?: true;
}
