/**
 * Making the folder a shell writes into, the one way every shell does it: one missing folder at
 * a time from its deepest existing ancestor, each existing one checked before anything is
 * created below it, so a symbolic link that leads out of the folder it must stay in (a hostile
 * repository may commit one) is refused before any folder is made at its target. One `mkdir`
 * per missing folder and no more: Node's recursive `mkdir` loops forever where the parent
 * refuses new entries in an odd way (procfs answers ENOENT for a folder that is there).
 */
import { lstatSync, mkdirSync, realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { type Failure, failure } from '../base/failure.js';
import { fileErrorCode, ioFailure } from './fileFailure.js';

/** Where a folder must be and whether to make it. */
export interface DirectoryOptions {
  /** The folder it must stay inside once links are resolved; undefined: anywhere. */
  readonly within?: string;
  /** Make it, and its missing parents, when it does not exist. */
  readonly create: boolean;
  /** How messages name it: `the sessions folder`. */
  readonly label: string;
}

/** What preparing a folder found and did. */
export interface PreparedDirectory {
  /** False when it does not exist and was not to be made: there is nothing in it. */
  readonly exists: boolean;
  /** The folders this call made, outermost first. */
  readonly created: ReadonlyArray<string>;
}

/** True when `inner` is `outer` or inside it. */
export const isWithin = (outer: string, inner: string): boolean => {
  const path = relative(outer, inner);
  return path === '' || (path !== '..' && !path.startsWith(`..${sep}`) && !isAbsolute(path));
};

/** The entry at `path` without following a link, or undefined when there is none. */
const entryAt = (path: string) => lstatSync(path, { throwIfNoEntry: false });

/**
 * Makes the missing folders of `directory`, outermost first, after `check` passed on the
 * deepest existing one; returns those it made.
 */
const makeFolders = (
  directory: string,
  within: string | undefined,
  label: string,
  check: (existing: string) => E.Either<Failure<'io'>, void>,
): E.Either<Failure<'io'>, string[]> => {
  const missing: string[] = [];
  let current = directory;
  for (;;) {
    const entry = entryAt(current);
    if (entry !== undefined) {
      const checked = check(current);
      if (E.isLeft(checked)) return checked;
      if (!entry.isDirectory() && !entry.isSymbolicLink())
        return E.left(failure('io', `cannot prepare ${label} ${directory}: ${current} is not a folder`));
      break;
    }
    const parent = dirname(current);
    if (parent === current || (within !== undefined && current === within)) break;
    missing.unshift(current);
    current = parent;
  }
  const created: string[] = [];
  for (const folder of missing) {
    try {
      mkdirSync(folder);
      created.push(folder);
    } catch (error) {
      if (fileErrorCode(error) !== 'EEXIST') throw error;
    }
    // Made by us or by a process racing us: either way it must be a plain folder now.
    const made = entryAt(folder);
    if (made === undefined || made.isSymbolicLink() || !made.isDirectory())
      return E.left(failure('io', `cannot prepare ${label} ${directory}: ${folder} is not a folder`));
  }
  return E.right(created);
};

/**
 * Makes `directory` exist when `options.create` and, when `options.within` is given, checks that
 * it is really inside that folder, every folder on the way checked from the top down, so the
 * first link out of it is the one named. A folder that does not exist and is not to be made is
 * fine: there is nothing in it.
 */
export const prepareDirectory = (
  directory: string,
  options: DirectoryOptions,
): E.Either<Failure<'io'>, PreparedDirectory> => {
  const { within, label } = options;
  const refuseLink = (link: string): Failure<'io'> =>
    failure(
      'io',
      `${label} ${directory} leads out of ${within} (through the symbolic link ${link}); refusing to ${options.create ? 'write there' : 'use it'}`,
    );
  try {
    const root = within === undefined ? undefined : realpathSync(within);
    // Each existing folder between `within` and `directory`: a link is fine while it stays inside.
    const stayInside = (existing: string): E.Either<Failure<'io'>, void> =>
      root === undefined || isWithin(root, realpathSync(existing)) ? E.right(undefined) : E.left(refuseLink(existing));
    if (within !== undefined && !isWithin(resolve(within), resolve(directory)))
      return E.left(failure('io', `${label} ${directory} is not inside ${within}; refusing to write there`));
    if (within !== undefined) {
      let current = resolve(within);
      for (const step of relative(current, resolve(directory))
        .split(sep)
        .filter((part) => part !== '')) {
        current = join(current, step);
        if (entryAt(current) === undefined) break;
        const inside = stayInside(current);
        if (E.isLeft(inside)) return inside;
      }
    }
    let created: ReadonlyArray<string> = [];
    if (options.create) {
      const made = makeFolders(directory, within === undefined ? undefined : resolve(within), label, stayInside);
      if (E.isLeft(made)) return made;
      created = made.right;
    } else if (!statSync(directory, { throwIfNoEntry: false })) return E.right({ exists: false, created: [] });
    if (root !== undefined && !isWithin(root, realpathSync(directory))) return E.left(refuseLink(directory));
    return E.right({ exists: true, created });
  } catch (error) {
    return E.left(ioFailure(`cannot prepare ${label} ${directory}`, error));
  }
};
