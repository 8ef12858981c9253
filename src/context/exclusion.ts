/**
 * What the checkpoint leaves out of the repository's state as the context's own, so that writing
 * or committing the context never makes its summary stale: the real `data/context` folder whole;
 * a folder reached through a symbolic link (`data/context -> ../ctx`) only for the context's own
 * files in it, so that a committed link cannot hide another folder's changes
 * (`data/context -> ../src` would otherwise leave all of `src/` out).
 */
import { checkedText } from './arguments.js';
import { CONTEXT_DIRECTORY, contextFileNames } from './layout.js';
import { CONTEXT_KINDS } from './model.js';

/**
 * A folder left out whole (repository-relative, with `/`; `''` leaves nothing out), or a folder
 * of which only the context's own files are left out.
 */
export type ContextExclusion = string | { readonly folder: string; readonly onlyContextFiles: true };

/** The names of the files the context keeps in its folder, of every kind, and its `.gitignore`. */
const CONTEXT_FILE_NAMES: ReadonlyArray<string> = [
  '.gitignore',
  ...CONTEXT_KINDS.flatMap((kind) => Object.values(contextFileNames(kind))),
];

/** True for one of the context's own file names, or a leftover named after one (`.lock`, `.tmp`, `.corrupt`). */
const isContextFileName = (name: string): boolean =>
  CONTEXT_FILE_NAMES.some((own) => name === own || name.startsWith(`${own}.`));

/** True for a path inside `directory` (both repository-relative, with forward slashes). */
export const isInside = (directory: string, path: string): boolean =>
  path === directory || path.startsWith(`${directory}/`);

/**
 * What the checkpoint leaves out when the context folder is `folder` as git names it: the folder
 * whole when it is `data/context` itself, else (a link on the way led elsewhere) only the
 * context's own files in it.
 */
export const contextExclusion = (folder: string): ContextExclusion =>
  checkedText(folder, 'the context folder') === CONTEXT_DIRECTORY ? folder : { folder, onlyContextFiles: true };

/** `excluded` once checked to be an exclusion, else a TypeError naming it. */
export const checkedExclusion = (excluded: ContextExclusion): ContextExclusion => {
  if (typeof excluded === 'object' && excluded !== null) checkedText(excluded.folder, 'the excluded folder');
  else checkedText(excluded, 'the excluded directory');
  return excluded;
};

/** True for a repository-relative path the checkpoint leaves out as the context's own. */
export const isExcluded = (excluded: ContextExclusion, path: string): boolean => {
  if (typeof excluded === 'string') return excluded !== '' && isInside(excluded, path);
  const slash = path.lastIndexOf('/');
  return (slash === -1 ? '' : path.slice(0, slash)) === excluded.folder && isContextFileName(path.slice(slash + 1));
};
