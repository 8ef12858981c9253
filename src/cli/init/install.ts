/**
 * Whether the package is installed in a project, which decides the settings `init` writes:
 * the copy in the project's `node_modules` runs the same on every machine, so its settings can
 * be committed; an installation elsewhere is reached by its absolute path, a path of this
 * machine only.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isRecord } from '../../base/record.js';

/** The name the package is installed under. */
const PACKAGE_NAME = 'session-fact-tracker';

/** The package's manifest in `project`'s `node_modules`, read; undefined when there is none or it cannot be read. */
const installedManifest = (project: string): unknown => {
  try {
    return JSON.parse(readFileSync(join(project, 'node_modules', PACKAGE_NAME, 'package.json'), 'utf8')) as unknown;
  } catch {
    // No installation there (or an unreadable one): the settings take the absolute path.
    return undefined;
  }
};

/** True when `project` has this package installed, with its `fact-tracker` binary where `npx --no-install` finds it. */
export const isInstalledIn = (project: string): boolean => {
  const manifest = installedManifest(project);
  return (
    isRecord(manifest) &&
    manifest['name'] === PACKAGE_NAME &&
    statSync(join(project, 'node_modules', '.bin', 'fact-tracker'), { throwIfNoEntry: false }) !== undefined
  );
};

/** How the settings run the package: as asked, else the portable `npx` where it is installed in the project. */
export const chooseVia = (project: string, asked: 'node' | 'npx' | undefined): 'node' | 'npx' =>
  asked ?? (isInstalledIn(project) ? 'npx' : 'node');
