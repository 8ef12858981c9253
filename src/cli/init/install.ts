/**
 * Whether the package is installed in a project, which decides the settings `init` writes:
 * the copy in the project's `node_modules` runs the same on every machine, so its settings can
 * be committed; an installation elsewhere is reached by its absolute path, a path of this
 * machine only.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { isRecord } from '../../base/record.js';
import { isOutsideFailure } from '../boundary.js';
import { readManifest } from './projectFile.js';

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
