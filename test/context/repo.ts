/**
 * Real git repositories and directories for the context tests, made in the system's temporary
 * directory. Commits use a fixed identity on the command line, so no git configuration of the
 * machine is needed or touched.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { onTempDirsRemoved, tempDir as makeTempDir } from '../tempDirs.js';

/** Runs git in `cwd` and returns its output. */
export const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' },
  });

/** A new empty directory, removed after the test file that made it. */
export const tempDir = (prefix = 'context-'): string => makeTempDir(prefix);

let template: string | undefined;
// The template goes with the other directories after each test file.
onTempDirsRemoved(() => {
  template = undefined;
});

/**
 * A new repository on branch `main` with `src/parser.ts` committed: a copy of one template
 * made per test file (each git process costs tens of milliseconds; a copy costs almost none).
 */
export const makeRepo = (): string => {
  if (template === undefined) {
    template = tempDir('template-');
    git(template, 'init', '-q', '-b', 'main');
    writeFiles(template, { 'src/parser.ts': 'export const parse = (text: string) => text;\n' });
    commitAll(template, 'initial');
  }
  const dir = tempDir('repo-');
  cpSync(template, dir, { recursive: true });
  return dir;
};

/**
 * Calls of `make`'s repository, built at the first call of the test file and copied for each call
 * after (a copy costs almost nothing; the build may take dozens of git processes), so each test
 * may change its copy freely.
 */
export const copiesOf = (make: () => Promise<string>): (() => Promise<string>) => {
  let made: Promise<string> | undefined;
  onTempDirsRemoved(() => {
    made = undefined;
  });
  return async () => {
    const repo = await (made ??= make());
    const copy = tempDir('copy-');
    cpSync(repo, copy, { recursive: true });
    return copy;
  };
};

/** Writes files under `dir`, creating their directories. */
export const writeFiles = (dir: string, files: Readonly<Record<string, string>>): void => {
  for (const [path, text] of Object.entries(files)) {
    const parts = path.split('/');
    if (parts.length > 1) mkdirSync(join(dir, ...parts.slice(0, -1)), { recursive: true });
    writeFileSync(join(dir, ...parts), text);
  }
};

/** Commits everything in `dir`. */
export const commitAll = (dir: string, message: string): void => {
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', message);
};

/** Every file and directory below `dir` with its size and modification time: what "touched" would change. */
export const listing = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((entry) => !entry.startsWith('.git/') && entry !== '.git')
    .map((entry) => {
      const stat = statSync(join(dir, entry));
      return `${entry} ${stat.isDirectory() ? 'dir' : stat.size} ${stat.mtimeMs}`;
    })
    .sort();

/** The parsed JSON of a file. */
export const readJson = (file: string): unknown => JSON.parse(readFileSync(file, 'utf8'));
