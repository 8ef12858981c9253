/**
 * The repository as git sees it, read with `execFile` (no shell, so no path is ever
 * interpreted). Only read-only commands run, with `GIT_OPTIONAL_LOCKS=0` so that none of them
 * refreshes the index behind the user's back, and `GIT_TERMINAL_PROMPT=0` so that none waits on a
 * prompt for credentials (a partial clone fetching a blob it lacks): it fails, and says so. Outside a repository (or without git) the
 * location says so, and everything counts as stale; a git that fails inside a repository is
 * an error of its own, with git's own words, never mistaken for "not a repository".
 */
import { execFile } from 'node:child_process';
import { lstatSync, type Stats } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { type ChangedFile, parseNameStatus, splitNulSeparated } from '../checkpoint.js';
import type { ContextError } from '../model.js';
import { normalizeRemoteUrl, type RepositoryFacts } from '../repository.js';
import { describeFileType, formatBytes } from './files.js';
import { decodeGitOutput, displayGitPath, pathUnder } from './gitPaths.js';

/** The branch part of a key outside a git repository. */
export const NO_BRANCH = '(no branch)';
/** The branch part of a key on a detached HEAD. */
export const DETACHED = '(detached)';

/** Where the shell works: the top level of a repository's working tree, or a folder outside any repository. */
export type RepositoryLocation =
  | { readonly kind: 'git'; readonly root: string }
  | { readonly kind: 'none'; readonly root: string; readonly reason: string };

/** How a git process failed: not installed, its exit status, and its first line. */
export interface GitFailure {
  readonly missing: boolean;
  readonly code: number | undefined;
  readonly message: string;
}

/** Git's output as text, or how it failed. */
export type GitResult = E.Either<GitFailure, string>;

/**
 * Runs git and returns its output as bytes; `input`, when given, is its standard input. Git's
 * paths are bytes, not always UTF-8: callers that read paths decode with `decodeGitOutput`.
 */
export const runGitBytes = async (
  cwd: string,
  args: ReadonlyArray<string>,
  input?: Buffer,
): Promise<E.Either<GitFailure, Buffer>> => {
  return new Promise((resolve) => {
    const child = execFile(
      'git',
      [...args],
      {
        cwd,
        encoding: 'buffer',
        maxBuffer: 512 * 1024 * 1024,
        env: { ...process.env, GIT_OPTIONAL_LOCKS: '0', GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' },
        windowsHide: true,
      },
      (error, stdout, stderr) => {
        if (error === null) resolve(E.right(stdout));
        else {
          const said = stderr.toString('utf8').trim().split('\n')[0]?.trim() ?? '';
          resolve(
            E.left({
              missing: (error as NodeJS.ErrnoException).code === 'ENOENT',
              code: typeof error.code === 'number' ? error.code : undefined,
              message: said || error.message.split('\n')[0]!,
            }),
          );
        }
      },
    );
    // A git that exits before reading all of its input is reported by its exit status, not by EPIPE.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(input);
  });
};

/** Runs git and returns its output as text: UTF-8, or for output that is not, each other byte kept (see `decodeGitOutput`). */
export const runGit = async (cwd: string, args: ReadonlyArray<string>, input?: Buffer): Promise<GitResult> =>
  E.map(decodeGitOutput)(await runGitBytes(cwd, args, input));

/**
 * What git answered in one call of the shell about the repository itself (where its files are,
 * whether it is shallow, its origin, its first commits), by the query: asked once however many
 * steps of the call need it, and never about the working tree, which every read asks afresh.
 * Scratch for one call, made with `new Map()`; a query in flight is shared by whoever asks it.
 */
export type GitAnswers = Map<string, Promise<GitResult>>;

/**
 * Git's answer to `args` at `root`, asked once per call (see `GitAnswers`); an answer `keep`
 * refuses (one that may change while the call runs) is asked again by the next step that needs it.
 */
const askOnce = (
  answers: GitAnswers,
  root: string,
  args: ReadonlyArray<string>,
  keep: (result: GitResult) => boolean = () => true,
): Promise<GitResult> => {
  const query = JSON.stringify([root, ...args]);
  const known = answers.get(query);
  if (known !== undefined) return known;
  const asked = runGit(root, args).then((result) => {
    if (!keep(result)) answers.delete(query);
    return result;
  });
  answers.set(query, asked);
  return asked;
};

/** Where git keeps the repository's files and what kind it is, as one `git rev-parse` gives them. */
interface GitDirectoryFacts {
  readonly shallow: boolean;
  readonly objectFormat: string;
  /** The clone's own ignore rules (`info/exclude`), relative to the root as git gives it. */
  readonly excludeFile: string;
}

/**
 * Whether the repository at `root` is shallow, its object format and where its `info/exclude`
 * is: one `git rev-parse` for the three, since none of them fails where the others answer (each
 * needs only the repository git finds), asked once per call. Git prints them in the order
 * asked, one a line; the path last, as it may hold a line break of its own.
 */
const gitDirectoryFacts = async (
  answers: GitAnswers,
  root: string,
): Promise<E.Either<GitFailure, GitDirectoryFacts>> => {
  const said = await askOnce(answers, root, [
    'rev-parse',
    '--is-shallow-repository',
    '--show-object-format',
    '--git-path',
    'info/exclude',
  ]);
  if (E.isLeft(said)) return said;
  const [shallow = '', objectFormat = '', ...rest] = said.right.split('\n');
  // Only git's own line break goes: a path ending in a line break keeps it.
  return E.right({
    shallow: shallow.trim() === 'true',
    objectFormat: objectFormat.trim(),
    excludeFile: rest.join('\n').replace(/\n$/u, ''),
  });
};

/** The object format (`sha1`, `sha256`) of the repository at `root`, or how git failed to say. */
export const objectFormat = async (answers: GitAnswers, root: string): Promise<E.Either<GitFailure, string>> =>
  E.map((facts: GitDirectoryFacts) => facts.objectFormat)(await gitDirectoryFacts(answers, root));

/** A git failure inside a repository, in git's own words. */
export const gitFailed = (failure: GitFailure): ContextError => ({
  code: 'git_failed',
  message: failure.missing
    ? 'git failed: git was not found: install it, or put it on PATH, and try again'
    : `git failed: ${failure.message}`,
});

/** True when this process may enter the folder `dir` (search it), as a process started there must. */
const mayEnter = (dir: string): Promise<boolean> =>
  fs.access(dir, fs.constants.X_OK).then(
    () => true,
    () => false,
  );

/**
 * Where `cwd` is: the top level of its repository's working tree (a directory with a `.git`
 * entry is its own top level, which saves a git process in the common case), or a folder
 * outside any repository. A bare repository and a `.git` directory have no working tree to
 * keep context in: refused, as are a folder this user may not enter (where no git can run) and
 * a git that fails for another reason (git's first line).
 */
export const locateRepository = async (cwd: string): Promise<E.Either<ContextError, RepositoryLocation>> => {
  const stat = await fs.stat(cwd).catch(() => undefined);
  if (stat === undefined || !stat.isDirectory())
    return E.left({ code: 'io', message: `the working directory ${cwd} does not exist (was it deleted?)` });
  // Git runs in it: a folder this user may not enter would fail every git as "spawn git EACCES".
  if (!(await mayEnter(cwd)))
    return E.left({
      code: 'io',
      message: `cannot use the working directory ${cwd}: permission denied (it cannot be entered, so git cannot run there)`,
    });
  if (path.basename(cwd) !== '.git' && (await fs.lstat(path.join(cwd, '.git')).catch(() => undefined)) !== undefined)
    return E.right({ kind: 'git', root: cwd });
  const top = await runGit(cwd, ['rev-parse', '--show-toplevel']);
  // Only git's own line break goes: a folder named `proj ` (or ending in a line break) is not `proj`.
  if (E.isRight(top)) return E.right({ kind: 'git', root: top.right.replace(/\n$/u, '') });
  if (top.left.missing) return E.right({ kind: 'none', root: cwd, reason: 'git is not installed' });
  if (/not a git repository/iu.test(top.left.message))
    return E.right({ kind: 'none', root: cwd, reason: `${cwd} is not in a git repository` });
  const where = await runGit(cwd, ['rev-parse', '--is-bare-repository', '--is-inside-git-dir']);
  const [bare, insideGitDir] = E.isRight(where) ? where.right.trim().split('\n') : [];
  if (bare === 'true')
    return E.left({
      code: 'invalid',
      message: `${cwd} is a bare repository: it has no working tree to keep data/context in; run fact-tracker in a checkout`,
    });
  if (insideGitDir === 'true')
    return E.left({
      code: 'invalid',
      message: `${cwd} is inside a repository's .git directory: run fact-tracker in the working tree, not in .git`,
    });
  return E.left(gitFailed(top.left));
};

/**
 * What the repository says about itself (its origin, else its first commits): what keys its
 * contexts. Finding the first commits walks the whole history; `knownRoot`, the first commit a
 * context file records, is checked instead (one `git cat-file`: a commit of this repository
 * without parents), so the walk runs only until a context file records it. A recorded commit
 * that is not one of this repository's first commits is not trusted: the history is walked,
 * and the key resolution says the checkout computes another identity. A shallow clone, which
 * may lack the first commit, takes the recorded one. A failing git is an error, never a switch
 * to another key. `answers` keeps what git said for the rest of the call.
 */
export const readRepositoryFacts = async (
  answers: GitAnswers,
  location: RepositoryLocation,
  knownRoot?: string,
): Promise<E.Either<ContextError, RepositoryFacts>> => {
  const folder = path.basename(location.root);
  if (location.kind === 'none') return E.right({ rootCommits: [], folder });
  // The recorded first commit is checked while the origin is read: each is one short git process.
  const [origin, known] = await Promise.all([
    askOnce(answers, location.root, ['config', '--get', 'remote.origin.url']),
    knownRoot === undefined ? Promise.resolve('unknown' as const) : checkFirstCommit(answers, location.root, knownRoot),
  ]);
  // Exit 1 is the documented answer for an unset key.
  if (E.isLeft(origin) && origin.left.code !== 1) return E.left(gitFailed(origin.left));
  const url = E.isRight(origin) ? origin.right.trim() : '';
  // A local path as origin names a folder on this machine, not the repository: the first commit does.
  if (normalizeRemoteUrl(url) !== undefined) return E.right({ origin: url, rootCommits: [], folder });
  if (known === 'first') return E.right({ rootCommits: [knownRoot!], folder });
  const misrecorded = known === 'has_parents' ? { misrecordedRoot: knownRoot! } : {};
  // A shallow clone's history ends at its boundary, which looks like a first commit: it is no identity.
  if (await isShallow(answers, location.root))
    return E.right({ rootCommits: [], folder, shallow: true, ...misrecorded });
  return E.map((ids: ReadonlyArray<string>): RepositoryFacts => ({ rootCommits: ids, folder, ...misrecorded }))(
    await rootCommits(answers, location.root),
  );
};

/** True in a shallow clone, whose history stops at a boundary. */
const isShallow = async (answers: GitAnswers, root: string): Promise<boolean> => {
  const facts = await gitDirectoryFacts(answers, root);
  return E.isRight(facts) && facts.right.shallow;
};

/**
 * What the commit `id` a context file records as the first one is in the repository at `root`:
 * a commit without parents (`first`); one with parents (`has_parents`: a shallow clone
 * recorded its boundary), unless this is a shallow clone too, which cannot tell; or a commit
 * a shallow clone lacks, taken at its word (`first`); otherwise `unknown`.
 */
const checkFirstCommit = async (
  answers: GitAnswers,
  root: string,
  id: string,
): Promise<'first' | 'has_parents' | 'unknown'> => {
  // A commit is what it is for good; one this clone lacks may arrive (a fetch) while the call runs.
  const commit = await askOnce(answers, root, ['cat-file', 'commit', id], E.isRight);
  if (E.isRight(commit))
    return !/^parent /mu.test(commit.right.split('\n\n')[0] ?? '')
      ? 'first'
      : (await isShallow(answers, root))
        ? 'unknown'
        : 'has_parents';
  return (await isShallow(answers, root)) ? 'first' : 'unknown';
};

/** The commits without parents reachable from HEAD: a walk of the whole history. */
const rootCommits = async (
  answers: GitAnswers,
  root: string,
): Promise<E.Either<ContextError, ReadonlyArray<string>>> => {
  // A HEAD without commits may get its first one while the call runs: that answer is asked again.
  const roots = await askOnce(answers, root, ['rev-list', '--max-parents=0', 'HEAD', '--'], E.isRight);
  if (E.isRight(roots)) return E.right(roots.right.split('\n').filter((line) => line !== ''));
  // Before the first commit HEAD names no commit: no roots yet.
  return /unknown revision|ambiguous argument|bad revision/iu.test(roots.left.message)
    ? E.right([])
    : E.left(gitFailed(roots.left));
};

/** The changes `git diff --name-status` lists between the commit `since` and the working tree, as shown. */
const nameStatusSince = async (
  root: string,
  since: string,
  renames: boolean,
): Promise<E.Either<GitFailure, ReadonlyArray<ChangedFile>>> =>
  E.map((output: string) =>
    parseNameStatus(output).map((change) => ({
      ...change,
      path: displayGitPath(change.path),
      ...(change.from === undefined ? {} : { from: displayGitPath(change.from) }),
    })),
  )(await runGit(root, ['diff', ...(renames ? [] : ['--no-renames']), '--name-status', '-z', since, '--']));

/**
 * The files changed between the commit `since` and the working tree (`git diff --name-status`),
 * or why they cannot be listed. Since no commit (a checkpoint taken before the first one),
 * every tracked file is new. Finding a rename compares the blobs of both sides, which a partial
 * clone (`--filter=blob:none`) fetches from its remote: where it cannot, the changes are listed
 * without renames (a renamed file as deleted and added). A commit this clone lacks is said so;
 * any other failure in git's words.
 */
export const changedFiles = async (
  root: string,
  since: string,
): Promise<E.Either<ContextError, ReadonlyArray<ChangedFile>>> => {
  if (since === '') {
    const files = await runGit(root, ['ls-files', '-z']);
    return E.isLeft(files)
      ? E.left(gitFailed(files.left))
      : E.right(splitNulSeparated(files.right).map((path) => ({ status: 'A', path: displayGitPath(path) })));
  }
  if (!/^[0-9a-f]{7,64}$/u.test(since))
    return E.left({ code: 'invalid', message: `the checkpoint's commit ${JSON.stringify(since)} is not a commit id` });
  const diff = await nameStatusSince(root, since, true);
  if (E.isRight(diff)) return diff;
  const plain = await nameStatusSince(root, since, false);
  if (E.isRight(plain)) return plain;
  return E.isRight(await runGit(root, ['cat-file', '-e', `${since}^{commit}`]))
    ? E.left(gitFailed(plain.left))
    : E.left({
        code: 'git_failed',
        message: `the checkpoint's commit ${since.slice(0, 7)} is not in this clone (a shallow clone, or a history rewritten by a rebase or a force push), so the changed files are unknown: git fetch --unshallow, or compare by hand`,
      });
};

/**
 * The content of the blob `blob` (`git cat-file blob`), or why not; one larger than `maxBytes`
 * is refused. Reads what a sparse checkout leaves out of the working tree.
 */
export const readBlob = async (
  root: string,
  blob: string,
  maxBytes: number,
): Promise<E.Either<ContextError, Buffer>> => {
  if (!/^[0-9a-f]{40,64}$/u.test(blob)) return E.left({ code: 'git_failed', message: `${blob} is not a blob id` });
  const size = await runGit(root, ['cat-file', '-s', blob]);
  if (E.isLeft(size)) return E.left(gitFailed(size.left));
  if (Number(size.right.trim()) > maxBytes)
    return E.left({ code: 'too_large', message: `is larger than ${formatBytes(maxBytes)}, the most it may hold` });
  const content = await runGitBytes(root, ['cat-file', 'blob', blob]);
  return E.isLeft(content) ? E.left(gitFailed(content.left)) : E.right(content.right);
};

/**
 * Which of `paths` (repository-relative, with `/`) git would ignore, each with the rule that
 * does (`.gitignore:2: data/`): what `git add -A` leaves out. A file git already tracks is never
 * ignored (it is committed, whatever the rules say).
 */
export const ignoredBy = async (
  answers: GitAnswers,
  root: string,
  paths: ReadonlyArray<string>,
): Promise<E.Either<ContextError, ReadonlyMap<string, string>>> => {
  const blocking = await blockingIgnoreFile(answers, root, paths);
  if (blocking !== undefined) return E.left(blocking);
  const found = await runGit(
    root,
    ['check-ignore', '-v', '-z', '--stdin'],
    Buffer.from(paths.map((path) => `${path}\0`).join(''), 'utf8'),
  );
  // Exit 1 is git's answer for "none of them is ignored".
  if (E.isLeft(found)) return found.left.code === 1 ? E.right(new Map()) : E.left(gitFailed(found.left));
  const fields = splitNulSeparated(found.right);
  const rules = new Map<string, string>();
  for (let i = 0; i + 3 < fields.length; i += 4)
    rules.set(fields[i + 3]!, `${displayGitPath(fields[i]!)}:${fields[i + 1]!}: ${fields[i + 2]!}`);
  return E.right(rules);
};

/** True when git tracks `file` (repository-relative, with `/`): it is committed, whatever the ignore rules say. */
export const isTracked = async (root: string, file: string): Promise<boolean> =>
  E.isRight(await runGit(root, ['ls-files', '--error-unmatch', '--', file]));

/** Why git must not be asked while `file` (shown as `shown`) holds ignore rules it would wait on. */
const blockingRules = (shown: string, stat: Stats): ContextError => ({
  code: 'io',
  message: `${shown} is ${describeFileType(stat)}, not a regular file: git would wait on it for its ignore rules; remove it`,
});

/**
 * A FIFO, socket or device at `.git/info/exclude`, the clone's own ignore rules (a linked
 * worktree's are its main checkout's): `git status`, `git diff` and `git check-ignore` open it
 * for its rules and would wait on such a file for good, so it is named instead of git run.
 * Git says where the file is (`--git-path`, once per call), which reads no rules; what is there
 * is looked at every time; a link is followed, as git follows it.
 */
export const blockingExcludeFile = async (answers: GitAnswers, root: string): Promise<ContextError | undefined> => {
  // A git that cannot answer here fails the command it was about to run, in its own words.
  const where = await gitDirectoryFacts(answers, root);
  if (E.isLeft(where)) return undefined;
  const file = path.resolve(root, where.right.excludeFile);
  const stat = await fs.stat(file).catch(() => undefined);
  if (stat === undefined || stat.isFile() || stat.isDirectory()) return undefined;
  const relative = path.relative(root, file);
  const inside = relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative);
  return blockingRules(inside ? relative.split(path.sep).join('/') : file, stat);
};

/**
 * A FIFO, socket or device among the files git reads ignore rules from for `paths`: the
 * `.gitignore` of each folder on the way to one of them, and `.git/info/exclude`. Git opens
 * each of them for its rules and would wait on such a file for good, so it is named instead
 * of asked about.
 */
const blockingIgnoreFile = async (
  answers: GitAnswers,
  root: string,
  paths: ReadonlyArray<string>,
): Promise<ContextError | undefined> => {
  const exclude = await blockingExcludeFile(answers, root);
  if (exclude !== undefined) return exclude;
  const folders = new Set([
    '',
    ...paths.flatMap((file) =>
      file
        .split('/')
        .slice(0, -1)
        .map((_, i, parts) => parts.slice(0, i + 1).join('/')),
    ),
  ]);
  for (const folder of folders) {
    const shown = folder === '' ? '.gitignore' : `${folder}/.gitignore`;
    const stat = await fs.lstat(path.join(root, ...shown.split('/'))).catch(() => undefined);
    if (stat !== undefined && !stat.isFile() && !stat.isDirectory() && !stat.isSymbolicLink())
      return blockingRules(shown, stat);
  }
  return undefined;
};

/**
 * Whether a `.gitignore` in one of `folders` (repository-relative, `''` the root) is a FIFO,
 * socket or device, which git would wait on for good when it reads the folder's rules. Looked
 * at without waiting: one `lstat` each.
 */
export const blockingIgnoreFileIn = (root: string, folders: ReadonlyArray<string>): boolean =>
  folders.some((folder) => {
    const stat = lstatOrUndefined(pathUnder(root, folder === '' ? '.gitignore' : `${folder}/.gitignore`));
    return stat !== undefined && !stat.isFile() && !stat.isDirectory() && !stat.isSymbolicLink();
  });

/** The entry at `file` without following a link; undefined when there is none or it cannot be seen. */
const lstatOrUndefined = (file: Buffer): Stats | undefined => {
  try {
    return lstatSync(file, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
};

/** Who writes, as git names its author (`Name <email>`, `GIT_AUTHOR_*` and the config included); undefined when git cannot say. */
export const gitAuthor = async (root: string): Promise<string | undefined> => {
  const ident = await runGit(root, ['var', 'GIT_AUTHOR_IDENT']);
  if (E.isLeft(ident)) return undefined;
  const match = /^(.*<[^>]*>) \d+ [+-]\d{4}$/u.exec(ident.right.trim());
  return match?.[1]?.trim() || undefined;
};

/** The names of the repository's branches (`refs/heads/`), as git names them; empty when git cannot list them. */
export const branchNames = async (root: string): Promise<ReadonlyArray<string>> => {
  const refs = await runGit(root, ['for-each-ref', '--format=%(refname)', 'refs/heads/']);
  return E.isRight(refs)
    ? refs.right
        .split('\n')
        .filter((ref) => ref.startsWith('refs/heads/'))
        .map((ref) => ref.slice('refs/heads/'.length))
    : [];
};

/**
 * The names the branch `name` had before `git branch -m` renamed it, the latest first, as its
 * reflog records them (`Branch: renamed refs/heads/OLD to refs/heads/NEW`); empty without one.
 */
export const branchRenamedFrom = async (root: string, name: string): Promise<ReadonlyArray<string>> => {
  const subjects = await runGit(root, ['reflog', 'show', '--format=%gs', `refs/heads/${name}`, '--']);
  return E.isRight(subjects)
    ? subjects.right.split('\n').flatMap((subject) => {
        // A branch name holds no space, so the two names are told apart where the subject says " to ".
        const match = /^Branch: renamed refs\/heads\/(\S+) to refs\/heads\/\S+$/u.exec(subject);
        return match === null ? [] : [match[1]!];
      })
    : [];
};
