/**
 * `npm run build`: the compiled library and its declarations (`tsc -p tsconfig.build.json`),
 * then the bundle the binary runs from (scripts/bundle.ts); nothing when `dist/` already holds
 * what they would write from the inputs as they are (see buildStamp.ts). `npm install` builds
 * through `prepare`, so `npm test` after it, or a second build, takes a second instead of
 * building the same files again. `--force` builds whatever the stamp says.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { currentStamp, isBuilt, STAMP } from './buildStamp.js';

const root = fileURLToPath(new URL('..', import.meta.url));

/** What `tsc` writes for a source `X.ts`: `X.js`, `X.d.ts` and their maps. */
const COMPILED = /(?:\.d)?\.(?:js|ts)(?:\.map)?$/u;

/**
 * Removes the files of `dist/` that no source compiles to any more (a module since removed), so
 * that none is packed; the bundle, which the bundler writes anew, is left to it.
 */
const removeOrphans = (root: string): void => {
  const walk = (folder: string): void => {
    for (const entry of readdirSync(join(root, 'dist', folder), { withFileTypes: true })) {
      const path = folder === '' ? entry.name : join(folder, entry.name);
      if (entry.isDirectory()) {
        if (path !== 'bundle') walk(path);
      } else if (COMPILED.test(entry.name) && !existsSync(join(root, 'src', path.replace(COMPILED, '.ts'))))
        rmSync(join(root, 'dist', path));
    }
  };
  walk('');
};

/** Runs `node ARGS` in the repository; exits with its status when it fails. */
const node = (args: ReadonlyArray<string>): void => {
  const { status, signal } = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
  if (status !== 0) process.exit(status ?? (signal === null ? 1 : 128));
};

if (!process.argv.includes('--force') && isBuilt(root)) {
  // On stderr: `npm pack --json` builds through `prepare`, and its standard output is the JSON.
  process.stderr.write('dist/ is up to date with its sources: nothing to build\n');
} else {
  // A build cut short leaves no stamp: the next one builds again. The files are written over in
  // place, so a binary run from this checkout meanwhile (a hook, a server) still finds them.
  rmSync(join(root, STAMP), { force: true });
  node([join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json']);
  removeOrphans(root);
  node(['--import', 'tsx', join(root, 'scripts', 'bundle.ts')]);
  writeFileSync(join(root, STAMP), currentStamp(root));
}
