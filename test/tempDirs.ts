/**
 * Temporary directories for tests, in the system's temporary directory, all removed after the
 * test file that made them (test/setup.ts registers the clean-up for every file).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made: string[] = [];
const cleanUps: Array<() => void> = [];

/** A new empty directory named `fact-tracker-{prefix}...`. */
export const tempDir = (prefix: string): string => {
  const dir = mkdtempSync(join(tmpdir(), `fact-tracker-${prefix}`));
  made.push(dir);
  return dir;
};

/** Runs `cleanUp` with the next removal (to forget what lived in the removed directories). */
export const onTempDirsRemoved = (cleanUp: () => void): void => {
  cleanUps.push(cleanUp);
};

/** Removes every directory made so far. */
export const removeTempDirs = (): void => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
  for (const cleanUp of cleanUps) cleanUp();
};
