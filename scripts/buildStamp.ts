/**
 * What `npm run build` (scripts/build.ts) was built from and what it wrote: a digest of its
 * inputs (the sources, the build's configuration and scripts, the locked packages, and the Node
 * that ran it, whose V8 alone reads the code caches) and one of its outputs (every file of
 * `dist/` but the stamp). A build whose stamp holds both digests as they are now has nothing to
 * do: `npm install` builds through `prepare`, and `npm test` would otherwise build the same
 * `dist/` again.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

/** Where the stamp is written, inside what it describes: a `dist/` removed takes its stamp along. */
export const STAMP = join('dist', '.build-stamp');

/** What a build reads, relative to the repository: folders are read whole. */
export const BUILD_INPUTS = [
  'src',
  'scripts/build.ts',
  'scripts/buildStamp.ts',
  'scripts/bundle.ts',
  'tsconfig.json',
  'tsconfig.build.json',
  'package.json',
  'package-lock.json',
];

/** Every file under `path` (itself when a file), relative to `root` with forward slashes, sorted. */
const filesUnder = (root: string, path: string): string[] => {
  const full = join(root, path);
  if (!existsSync(full)) return [];
  if (!statSync(full).isDirectory()) return [relative(root, full).split(sep).join('/')];
  return readdirSync(full, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)).split(sep).join('/'))
    .sort();
};

/** A digest of the files at `paths` under `root` (names and contents), and of `extra`. */
export const treeDigest = (root: string, paths: ReadonlyArray<string>, extra = ''): string => {
  const hash = createHash('sha256').update(extra);
  for (const file of paths.flatMap((path) => filesUnder(root, path))) {
    const contents = readFileSync(join(root, file));
    hash.update(`\0${file}\0${contents.length}\0`).update(contents);
  }
  return hash.digest('hex');
};

/** The Node and options a build runs under: another Node's V8 turns the code caches away. */
export const runtimeOf = (): string =>
  JSON.stringify([process.version, process.arch, process.env['NODE_OPTIONS'] ?? '']);

/** The stamp of the repository at `root` as it is now: its inputs' digest, then its outputs'. */
export const currentStamp = (root: string): string => {
  const outputs = filesUnder(root, 'dist').filter((file) => file !== STAMP.split(sep).join('/'));
  return `${treeDigest(root, BUILD_INPUTS, runtimeOf())}\n${treeDigest(root, outputs)}\n`;
};

/** True when `dist/` holds what a build of the inputs as they are now writes, as the stamp says. */
export const isBuilt = (root: string): boolean => {
  const stamp = join(root, STAMP);
  return existsSync(stamp) && readFileSync(stamp, 'utf8') === currentStamp(root);
};
