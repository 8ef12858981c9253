/**
 * What the context tells its user beyond the context itself, as plain lines: where HEAD is
 * when it is not on a branch, which other keys of the file hold the workstream (after a branch
 * was renamed, or under another repository identity), and what a cap pushed out. Pure: the
 * shell gathers the facts and shows the lines.
 */
import { isSameContextKey } from './key.js';
import type { ContextFile, ContextKey, ContextKind, DroppedEntry } from './model.js';

/** How the checkout names its branch (see the shell's `HeadState`). */
export type HeadNotice = 'rebase' | 'bisect' | 'detached';

/** The `fact-tracker context` command line of `subcommand` for a context of `kind` and `workstream`. */
export const contextCommandLine = (subcommand: string, kind: ContextKind, workstream: string, extra = ''): string =>
  `fact-tracker context ${subcommand}${extra === '' ? '' : ` ${extra}`}${kind === 'planning' ? '' : ` --kind ${kind}`}${workstream === 'default' ? '' : ` --workstream ${quoteArgument(workstream)}`}`;

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
  switch (head) {
    case 'rebase':
      return write
        ? `a rebase of ${branch} is in progress: the context is kept under branch ${branch}; git add ${directory}/ before git rebase --continue`
        : `HEAD is detached by a rebase of ${branch}: the context is the one of branch ${branch}`;
    case 'bisect':
      return `HEAD is detached by a bisect started on ${branch}: the context is the one of branch ${branch}`;
    case 'detached':
      return `HEAD is detached (no branch, and no rebase or bisect in progress): the context is keyed under ${branch}, which every detached checkout shares; give --branch NAME to use a branch's`;
  }
};

/** The keys of `file` other than `key` that hold `key`'s workstream: on another branch, or under another repository key. */
export const selectOtherKeys = (file: ContextFile, key: ContextKey): ReadonlyArray<ContextKey> =>
  file.contexts
    .map((context) => context.key)
    .filter((other) => other.workstreamId === key.workstreamId && !isSameContextKey(other, key));

const MAX_LISTED = 5;

/**
 * What to say when nothing is stored under `key` but the file holds the workstream elsewhere
 * (a renamed branch, a context written under another repository identity): where, and the
 * command that carries a branch's context here.
 */
export const elsewhereNotice = (key: ContextKey, others: ReadonlyArray<ContextKey>, kind: ContextKind): string => {
  const listed = others
    .slice(0, MAX_LISTED)
    .map((other) =>
      other.repo === key.repo ? `branch ${other.branch}` : `branch ${other.branch} under repo ${other.repo}`,
    );
  const more = others.length > MAX_LISTED ? ` and ${others.length - MAX_LISTED} more` : '';
  const sameRepo = others.find((other) => other.repo === key.repo);
  const move =
    sameRepo === undefined
      ? ''
      : `; ${contextCommandLine('move', kind, key.workstreamId, `--from ${quoteArgument(sameRepo.branch)}`)} carries it to branch ${key.branch}`;
  return `nothing is stored for workstream ${key.workstreamId} on branch ${key.branch}, but the file holds it on ${listed.join(', ')}${more}${move}`;
};

/** One entry a cap pushed out, as a line. */
export const droppedNotice = (entry: DroppedEntry): string =>
  `dropped ${entry.what === 'decision' ? 'decision' : entry.what === 'claim' ? 'the claim' : 'the failure'} ${JSON.stringify(entry.text)} of workstream ${entry.key.workstreamId} (branch ${entry.key.branch}): a context keeps at most ${entry.cap} ${entry.what === 'failure' ? 'recent failures' : `${entry.what}s`}`;
