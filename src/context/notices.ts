/**
 * What the context tells its user beyond the context itself, as plain lines: where HEAD is
 * when it is not on a branch, which other keys of the file hold the workstream (after a branch
 * was renamed, or under another repository identity), and what a cap pushed out. Pure: the
 * shell gathers the facts and shows the lines.
 */
import { count, number } from '../base/count.js';
import { refuseArgument } from '../base/describe.js';
import { isRecord } from '../base/record.js';
import { checkedContextFile, checkedKey, checkedKind, checkedList, checkedText, isContextKey } from './arguments.js';
import { isSameContextKey } from './key.js';
import { redactSecrets } from './secrets.js';
import type { ContextFile, ContextKey, ContextKind, DroppedEntry, SharedContext } from './model.js';

/** How the checkout names its branch (see the shell's `HeadState`). */
export type HeadNotice = 'rebase' | 'bisect' | 'detached';

/** The `fact-tracker context` command line of `subcommand` for a context of `kind` and `workstream`. */
export const contextCommandLine = (subcommand: string, kind: ContextKind, workstream: string, extra = ''): string =>
  `fact-tracker context ${subcommand}${extra === '' ? '' : ` ${extra}`}${kind === 'planning' ? '' : ` --kind ${kind}`}${workstream === 'default' ? '' : ` --workstream ${quoteArgument(workstream)}`}`;

/**
 * `--name VALUE`, or `--name=VALUE` when the value starts with `-` (a branch named `--force`):
 * an option parser would take such a value for an option of its own.
 */
export const optionArgument = (name: string, value: string): string =>
  value.startsWith('-') ? `--${name}=${quoteArgument(value)}` : `--${name} ${quoteArgument(value)}`;

/** An argument as a POSIX shell reads it back: bare when it is plain, else in single quotes. */
export const quoteArgument = (value: string): string =>
  /^[\w@%+=:,./-]+$/u.test(value) ? value : `'${value.replace(/'/gu, `'\\''`)}'`;

/**
 * Why the branch part of the key is what it is, when HEAD is not on a branch: the branch a
 * rebase or a bisect works for, or a HEAD detached on its own (keyed under `(detached)`, which
 * every detached checkout shares). A write during a rebase changes files that
 * `git rebase --continue` refuses to leave unstaged: it says to add the context directory.
 */
export const headNotice = (head: HeadNotice, branch: string, write: boolean, directory: string): string => {
  checkedText(branch, 'the branch');
  checkedText(directory, 'the directory');
  switch (head) {
    case 'rebase':
      return write
        ? `a rebase of ${branch} is in progress: the context is kept under branch ${branch}; git add ${directory}/ before git rebase --continue`
        : `HEAD is detached by a rebase of ${branch}: the context is the one of branch ${branch}`;
    case 'bisect':
      return `HEAD is detached by a bisect started on ${branch}: the context is the one of branch ${branch}`;
    case 'detached':
      return `HEAD is detached (no branch, and no rebase or bisect in progress): the context is keyed under ${branch}, which every detached checkout shares; give --branch NAME to use a branch's`;
    default:
      return refuseArgument('the head', head, 'a head notice (rebase, bisect or detached)');
  }
};

/** The keys of `file` other than `key` that hold `key`'s workstream: on another branch, or under another repository key. */
export const selectOtherKeys = (file: ContextFile, key: ContextKey): ReadonlyArray<ContextKey> => {
  checkedKey(key);
  return checkedContextFile(file)
    .contexts.map((context) => context.key)
    .filter((other) => other.workstreamId === key.workstreamId && !isSameContextKey(other, key));
};

const MAX_LISTED = 5;

/**
 * How a branch that holds nothing relates to one of the same repository that holds the
 * workstream: that branch still exists (this one is new, most likely made from it), it is gone
 * (this one is it, renamed), or the caller did not say.
 */
export type BranchRelation = 'made_from' | 'renamed' | 'unknown';

/** How the branch `other` relates to the current one, from the branches the repository has (`present`), when known. */
export const branchRelation = (other: string, present: ReadonlyArray<string> | undefined): BranchRelation =>
  present === undefined ? 'unknown' : present.includes(other) ? 'made_from' : 'renamed';

/**
 * The other key of the same repository that most likely holds this branch's context: the gone
 * branch git's reflog says this one was renamed from (`renamedFrom`, the latest first), else
 * one that still exists (the branch this one was made from), else one that is gone (this
 * branch, renamed where git kept no record of it). A gone branch is not taken before one that
 * exists: the file keeps the contexts of branches merged and deleted, and of a teammate's
 * branches this clone never had, none of which any new branch was made from.
 */
export const likelyOrigin = (
  key: ContextKey,
  others: ReadonlyArray<ContextKey>,
  present: ReadonlyArray<string> | undefined,
  renamedFrom: ReadonlyArray<string> = [],
): ContextKey | undefined => {
  const sameRepo = others.filter((other) => other.repo === key.repo);
  const gone = sameRepo.filter((other) => branchRelation(other.branch, present) === 'renamed');
  const renamed = renamedFrom.flatMap((name) => gone.filter((other) => other.branch === name));
  return (
    renamed[0] ??
    sameRepo.find((other) => branchRelation(other.branch, present) === 'made_from') ??
    gone[0] ??
    sameRepo[0]
  );
};

/**
 * The command that carries the workstream's context from branch `from` to `key`'s branch: a
 * copy that leaves `from` its own, or for a renamed branch a move that takes it along.
 */
export const moveCommand = (key: ContextKey, from: string, kind: ContextKind, relation: BranchRelation): string =>
  contextCommandLine(
    'move',
    kind,
    key.workstreamId,
    `${optionArgument('from', from)}${relation === 'renamed' ? ' --remove-source' : ''}`,
  );

/**
 * What to say when nothing is stored under `key` but the file holds the workstream elsewhere:
 * on a branch this one was made from (a copy starts it, the other keeps its own), on a branch
 * that is gone (a renamed branch: the move takes it along), or under another repository
 * identity; never "start from scratch". `present` lists the branches the repository has, and
 * `renamed` the names git's reflog says this branch had before a rename, the latest first.
 */
export const elsewhereNotice = (
  key: ContextKey,
  others: ReadonlyArray<ContextKey>,
  kind: ContextKind,
  given?: ReadonlyArray<string>,
  renamed?: ReadonlyArray<string>,
): string => {
  checkedKey(key);
  checkedKind(kind);
  // Branches present that are none (null) are unknown, as when not given.
  const present = given === null ? undefined : given;
  if (present !== undefined) checkedList(present, 'present', 'branch names');
  const renamedFrom =
    renamed === undefined || renamed === null ? [] : checkedList(renamed, 'renamedFrom', 'branch names');
  const listed = checkedList(others, 'others', 'context keys')
    .slice(0, MAX_LISTED)
    .map((other) =>
      other.repo === key.repo ? `branch ${other.branch}` : `branch ${other.branch} under repo ${other.repo}`,
    );
  const more = others.length > MAX_LISTED ? ` and ${number(others.length - MAX_LISTED)} more` : '';
  const sameRepo = likelyOrigin(key, others, present, renamedFrom);
  const where = `nothing is stored for workstream ${key.workstreamId} on branch ${key.branch}`;
  if (sameRepo === undefined) return `${where}, but the file holds it on ${listed.join(', ')}${more}`;
  const relation = branchRelation(sameRepo.branch, present);
  const move = moveCommand(key, sameRepo.branch, kind, relation);
  switch (relation) {
    case 'made_from':
      return `${where} yet; branch ${sameRepo.branch} holds it: ${move} starts branch ${key.branch} from it (${sameRepo.branch} keeps its own)`;
    case 'renamed':
      return `${where}, but the file holds it on branch ${sameRepo.branch}, which no longer exists (a renamed branch?); ${move} carries it to branch ${key.branch}`;
    case 'unknown':
      return `${where}, but the file holds it on ${listed.join(', ')}${more}; ${move} carries it to branch ${key.branch}`;
  }
};

/** Counted nouns, thousands grouped: `1 decision`, `1,005 claims`. */
export const countOf = (n: number, noun: string): string => count(n, noun, `${noun}s`);

/**
 * What a context on another branch holds of this workstream, for a reader of this one (a
 * branch merged, squashed or cherry-picked here brings its context along): its decisions and
 * claims, and the command that carries them here.
 */
export const relatedNotice = (key: ContextKey, related: SharedContext, kind: ContextKind): string => {
  const decisions = related.openDecisions.map((decision) => `${decision.id} [${decision.status}] ${decision.text}`);
  const claims = related.evidenceLedger.map((claim) => `claim: ${claim.claim}`);
  const listed = [...decisions.slice(0, MAX_LISTED), ...claims.slice(0, MAX_LISTED)];
  const more = decisions.length + claims.length - listed.length;
  return `also on branch ${related.key.branch}: ${listed.length === 0 ? 'no decision and no claim' : listed.join('; ')}${more > 0 ? `; and ${number(more)} more` : ''} (${moveCommand(key, related.key.branch, kind, 'unknown')} carries them here)`;
};

/** The workstream's contexts on the other branches of `key`'s repository, in `file`. */
export const selectRelatedContexts = (file: ContextFile, key: ContextKey): ReadonlyArray<SharedContext> =>
  file.contexts.filter(
    (context) =>
      context.key.repo === key.repo &&
      context.key.workstreamId === key.workstreamId &&
      context.key.branch !== key.branch,
  );

/** How each kind of entry a cap pushed out is named, and what its cap counts. */
const DROPPED: Readonly<Record<DroppedEntry['what'], { readonly entry: string; readonly cap: string }>> = {
  decision: { entry: 'decision', cap: 'decisions' },
  claim: { entry: 'the claim', cap: 'claims' },
  failure: { entry: 'the failure', cap: 'recent failures' },
  rule: { entry: 'the pinned rule', cap: 'characters of pinned rules' },
  step: { entry: 'the step', cap: 'steps' },
};

/** One entry a cap pushed out, as a line. */
export const droppedNotice = (entry: DroppedEntry): string =>
  !isRecord(entry) || !isContextKey(entry.key) || !Object.hasOwn(DROPPED, entry.what)
    ? refuseArgument('the entry', entry, 'a dropped entry ({ key, what, text, cap }: selectDroppedEntries gives them)')
    : `dropped ${DROPPED[entry.what].entry} ${JSON.stringify(entry.text)} of workstream ${redactSecrets(entry.key.workstreamId)} (branch ${redactSecrets(entry.key.branch)}): a context keeps at most ${entry.cap} ${DROPPED[entry.what].cap}`;
