/**
 * Whether the package is installed in a project, which decides the settings `init` writes:
 * the copy in the project's `node_modules` runs the same on every machine, so its settings can
 * be committed; an installation elsewhere is reached by its absolute path, a path of this
 * machine only.
 */
import { statSync } from 'node:fs';
import { basename, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { isRecord } from '../../base/record.js';
import { quoteText } from '../../base/text.js';
import { isOutsideFailure } from '../boundary.js';
import { readManifest } from './projectFile.js';
import { isUnshowable } from './settings.js';

/** The name the package is installed under. */
const PACKAGE_NAME = 'session-fact-tracker';

/**
 * True when `project`'s `node_modules/.bin/fact-tracker` leads to something, where `npx
 * --no-install` finds it; a path that cannot be followed (a file where a folder should be, a loop
 * of links) leads nowhere, as npx finds.
 */
export const hasInstalledBinary = (project: string): boolean => {
  try {
    return statSync(join(project, 'node_modules', '.bin', 'fact-tracker'), { throwIfNoEntry: false }) !== undefined;
  } catch (error) {
    if (!isOutsideFailure(error)) throw error;
    return false;
  }
};

/**
 * True when `project` has this package installed, with its `fact-tracker` binary where `npx
 * --no-install` finds it. A manifest that cannot be read safely (a link to a device, a huge file:
 * a cloned repository may hold either) is none: the settings then take the absolute path.
 */
export const isInstalledIn = (project: string): boolean => {
  const manifest = readManifest(join(project, 'node_modules', PACKAGE_NAME));
  return isRecord(manifest) && manifest['name'] === PACKAGE_NAME && hasInstalledBinary(project);
};

/** How the settings run the package: as asked, else the portable `npx` where it is installed in the project. */
export const chooseVia = (project: string, asked: 'node' | 'npx' | undefined): 'node' | 'npx' =>
  asked ?? (isInstalledIn(project) ? 'npx' : 'node');

/** The dependency fields of a manifest that may name the package. */
const DEPENDENCY_FIELDS = ['dependencies', 'devDependencies', 'optionalDependencies'] as const;

/**
 * The `file:` spec `project`'s `package.json` installs this package from, when its file lies
 * outside the project (`file:../tools/session-fact-tracker-0.1.0.tgz`, an absolute or a `~`
 * path): no clone elsewhere has that file, so its `npm install` fails and committed settings run
 * nothing there. Undefined for a spec inside the project, any other spec, or no manifest.
 */
export const selectOutsideFileSpec = (project: string): string | undefined => {
  const manifest = readManifest(project);
  if (!isRecord(manifest)) return undefined;
  for (const field of DEPENDENCY_FIELDS) {
    const dependencies = manifest[field];
    const spec = isRecord(dependencies) ? dependencies[PACKAGE_NAME] : undefined;
    if (typeof spec !== 'string' || !spec.startsWith('file:')) continue;
    const path = spec.slice('file:'.length);
    const inside = relative(project, resolve(project, path));
    if (path.startsWith('~') || isAbsolute(inside) || inside === '..' || inside.startsWith(`..${sep}`)) return spec;
  }
  return undefined;
};

/**
 * What `init` tells a project whose package.json installs the package from `spec`, outside it.
 * The spec is a clone's text: one that cannot be shown on a line of the terminal (a control
 * character could drive it, a line break forge a line) is quoted, and names no tarball.
 */
export const outsideFileWarning = (spec: string): string => {
  const showable = !isUnshowable(spec);
  const file = basename(spec.slice('file:'.length));
  const tarball = showable && /\.(tgz|tar\.gz)$/u.test(file) ? file : 'session-fact-tracker-VERSION.tgz';
  return `package.json installs ${PACKAGE_NAME} from ${showable ? spec : quoteText(spec)}, outside the project: a clone elsewhere cannot install it, so these settings would run nothing there. Copy the tarball into the project, commit it and install it from there (npm install --save-dev ./vendor/${tarball})`;
};
