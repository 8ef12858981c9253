/**
 * The repository part of a context key, taken from what the repository says about itself, so
 * that a clone under another name, a CI workspace and a `git worktree` all find the context
 * that was committed: the normalized `origin` URL, else the first commit's id, else the folder
 * name. A context file records the identity it was written under; a checkout that computes
 * another one uses the recorded identity and says so, rather than start a parallel context.
 */
import { kindOf, refuseArgument } from '../base/describe.js';
import { checkedContextFile, checkedText } from './arguments.js';
import {
  compareContextKeys,
  hasControlCharacters,
  isSameContextKey,
  normalizeKeyPart,
  sanitizeKeyPart,
} from './key.js';
import { CONTEXT_LIMITS, type ContextFile, type RepositoryIdentity, type SharedContext } from './model.js';

/** Where a repository identity came from, strongest first. */
export const REPOSITORY_SOURCES = Object.freeze(['origin', 'first_commit', 'folder'] as const);

const SCHEME_URL = /^([a-z][a-z0-9+.-]*):\/\/(?:[^@/?#]*@)?(\[[^\]]*\]|[^/:?#]*)(?::\d*)?([^?#]*)/iu;
const SCP_LIKE = /^(?:[^@/\s]+@)?([^/:\s]{2,}):(?!\/\/)([^?#]*)$/u;

/**
 * A remote URL as `host/path` (lowercase host; no credentials, port, scheme, query or `.git`),
 * so `https://user:token@GitHub.com/org/app.git` and `git@github.com:org/app` are both
 * `github.com/org/app`. Undefined for a local path or a `file://` URL: those name a folder on
 * one machine, not the repository.
 */
export const normalizeRemoteUrl = (url: string): string | undefined => {
  const trimmed = checkedText(url, 'the URL').trim();
  const scheme = SCHEME_URL.exec(trimmed);
  const scp = scheme === null ? SCP_LIKE.exec(trimmed) : null;
  const [host, rawPath] =
    scheme !== null
      ? scheme[1]!.toLowerCase() === 'file'
        ? ['', '']
        : [scheme[2]!, scheme[3]!]
      : scp !== null
        ? [scp[1]!, scp[2]!]
        : ['', ''];
  const path = rawPath
    .split('/')
    .filter((part) => part !== '' && part !== '.')
    .join('/')
    .replace(/\.git$/u, '');
  if (host === '' || path === '') return undefined;
  const id = `${host.toLowerCase()}/${path}`;
  // Normalized as every key part is, so the id matches the repo part of the keys a file holds.
  const normalized = normalizeKeyPart(id);
  return normalized.length <= CONTEXT_LIMITS.keyPart && !hasControlCharacters(id) ? normalized : undefined;
};

/** What the shell read from git about the repository. */
export interface RepositoryFacts {
  /** `remote.origin.url`, when set. */
  readonly origin?: string;
  /** The ids of the commits without parents reachable from HEAD (empty before the first commit). */
  readonly rootCommits: ReadonlyArray<string>;
  /** The name of the checkout's top-level folder. */
  readonly folder: string;
  /** True in a shallow clone: its history ends at a boundary, so it knows no first commit, and records no identity. */
  readonly shallow?: boolean;
  /**
   * The first commit a context file records, which this (full) repository has with parents: a
   * shallow clone recorded its boundary. The identity it names gives way to the one computed.
   */
  readonly misrecordedRoot?: string;
}

/** The identity of a repository: its normalized origin, else its first commit, else its folder's name. */
export const identifyRepository = (facts: RepositoryFacts): RepositoryIdentity => {
  if (
    typeof facts !== 'object' ||
    facts === null ||
    !Array.isArray(facts.rootCommits) ||
    typeof facts.folder !== 'string'
  )
    throw new TypeError(
      `the facts are ${kindOf(facts)}${typeof facts === 'object' && facts !== null ? ' without rootCommits (an array) and folder (a string)' : ''}, not repository facts ({ origin, rootCommits, folder })`,
    );
  const origin = facts.origin === undefined ? undefined : normalizeRemoteUrl(facts.origin);
  if (origin !== undefined) return { id: origin, source: 'origin' };
  // Several roots (unrelated histories merged): the smallest id, so every clone picks the same.
  const root = [...facts.rootCommits].filter((id) => /^[0-9a-f]{7,64}$/u.test(id)).sort()[0];
  if (root !== undefined) return { id: `first-commit:${root.slice(0, 12)}`, source: 'first_commit' };
  return { id: sanitizeKeyPart(facts.folder), source: 'folder' };
};

/** The repository key a checkout uses in a file, the file as it should be written, and what to tell the user. */
export interface RepositoryResolution {
  /** The repo part of every key this checkout reads and writes. */
  readonly repo: string;
  /** The file with its identity recorded and, on a migration, its contexts re-keyed; the same file when nothing changed. */
  readonly file: ContextFile;
  /** Set when the key used is not the one computed, or the file was re-keyed. */
  readonly note?: string;
}

const rekey = (file: ContextFile, from: string, to: RepositoryIdentity): ContextFile => {
  const moved = file.contexts.map((context): SharedContext =>
    context.key.repo === from ? { ...context, key: { ...context.key, repo: to.id } } : context,
  );
  // A context already stored under the new key stays; the old one keeps its key rather than be lost.
  const contexts = moved.map((context, i) =>
    context !== file.contexts[i] &&
    file.contexts.some((other) => other.key.repo !== from && isSameContextKey(other.key, context.key))
      ? file.contexts[i]!
      : context,
  );
  return { ...file, repository: to, contexts: contexts.sort((a, b) => compareContextKeys(a.key, b.key)) };
};

const recorded = (file: ContextFile, identity: RepositoryIdentity): ContextFile =>
  file.repository !== undefined && file.repository.id === identity.id && file.repository.source === identity.source
    ? file
    : { ...file, repository: identity };

const describe = (identity: RepositoryIdentity): string =>
  `${JSON.stringify(identity.id)} (${identity.source.replace('_', ' ')})`;

/** A repo key a checkout takes from its folder's name: neither a first commit nor an origin (`host/path`). */
const isFolderKey = (repo: string): boolean => !repo.startsWith('first-commit:') && !repo.includes('/');

/**
 * `resolution` with the contexts still keyed by a folder name re-keyed to `identity`, an origin
 * or a first commit the file records: a shallow clone's contexts that a merge brought in after
 * another checkout had re-keyed the file (git merges the two without a conflict), which no
 * checkout would read otherwise. A folder-named identity adopts none.
 */
const adoptFolderContexts = (resolution: RepositoryResolution, identity: RepositoryIdentity): RepositoryResolution => {
  if (identity.source === 'folder') return resolution;
  const folders = [
    ...new Set(resolution.file.contexts.map((context) => context.key.repo).filter((repo) => isFolderKey(repo))),
  ].filter((repo) => repo !== identity.id);
  if (folders.length === 0) return resolution;
  const adopted = `contexts recorded under the folder name ${folders.map((repo) => JSON.stringify(repo)).join(', ')} are keyed by ${describe(identity)} from now on`;
  return {
    ...resolution,
    file: folders.reduce((file, from) => rekey(file, from, identity), resolution.file),
    note: resolution.note === undefined ? adopted : `${resolution.note}; ${adopted}`,
  };
};

/**
 * Decides which repository key a checkout that computes `computed` uses in `file`:
 * - the file records `computed`, or holds no context yet: `computed`;
 * - the file records another identity: that one (the context is right there; this checkout
 *   only sees the repository differently, such as a fork's origin), said in a note; a
 *   recorded folder name gives way to an origin or a first commit, re-keying the contexts;
 * - the file records none (written before identities were recorded) and its contexts share
 *   one other repo, the folder name of the checkout that wrote it: they are re-keyed to
 *   `computed` (the migration), said in a note;
 * - the file records the first commit `misrecorded`, which is not one (a shallow clone
 *   recorded its boundary): the contexts are re-keyed to `computed`, said in a note.
 */
export const resolveRepositoryKey = (
  file: ContextFile,
  computed: RepositoryIdentity,
  given: {
    /** Record `computed` in the file (default true); a shallow clone, which knows no first commit, records nothing. */
    readonly record?: boolean;
    /** A first-commit identity the file may record that is known to be wrong (see `RepositoryFacts.misrecordedRoot`). */
    readonly misrecorded?: string;
  } = {},
): RepositoryResolution => {
  checkedContextFile(file);
  if (typeof computed !== 'object' || computed === null || typeof computed.id !== 'string')
    refuseArgument('the identity', computed, 'a repository identity ({ id, source }: identifyRepository gives one)');
  // Options that are none (null) read as none.
  const options = typeof given === 'object' && given !== null ? given : {};
  const resolution = resolveKey(file, computed, options.misrecorded);
  // Without recording, the file keeps the identity it had (contexts re-keyed to a stronger one stay so).
  if (options.record !== false || resolution.file.repository === file.repository) return resolution;
  const { repository: _, ...unrecorded } = resolution.file;
  return {
    ...resolution,
    file: file.repository === undefined ? unrecorded : { ...unrecorded, repository: file.repository },
  };
};

const resolveKey = (
  file: ContextFile,
  computed: RepositoryIdentity,
  misrecorded: string | undefined,
): RepositoryResolution => {
  const stored = file.repository;
  if (stored !== undefined) {
    if (stored.id === computed.id)
      return adoptFolderContexts({ repo: computed.id, file: recorded(file, computed) }, computed);
    if (stored.id === misrecorded && computed.source !== 'folder')
      return {
        repo: computed.id,
        file: rekey(file, stored.id, computed),
        note: `the identity recorded for the repository, ${describe(stored)}, is not its first commit (a shallow clone recorded where its history stopped): keyed by ${describe(computed)} from now on`,
      };
    if (stored.source === 'folder' && computed.source !== 'folder')
      return {
        repo: computed.id,
        file: rekey(file, stored.id, computed),
        note: `contexts recorded under the folder name ${describe(stored)} are keyed by ${describe(computed)} from now on`,
      };
    return adoptFolderContexts(
      {
        repo: stored.id,
        file,
        note: `using the context recorded for repository ${describe(stored)}; this checkout computes ${describe(computed)}`,
      },
      stored,
    );
  }
  const repos = [...new Set(file.contexts.map((context) => context.key.repo))];
  if (repos.length === 0 || repos.includes(computed.id)) return { repo: computed.id, file: recorded(file, computed) };
  if (repos.length === 1)
    return {
      repo: computed.id,
      file: rekey(file, repos[0]!, computed),
      note: `the contexts stored under repo ${JSON.stringify(repos[0])} (a folder name) are this repository's: keyed by ${describe(computed)} from now on`,
    };
  return {
    repo: computed.id,
    file: recorded(file, computed),
    note: `the file holds contexts of ${repos.length} other repository keys (${repos.map((repo) => JSON.stringify(repo)).join(', ')}); none is ${describe(computed)}`,
  };
};
