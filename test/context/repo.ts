/**
 * Real git repositories and directories for the context tests, made in the system's temporary
 * directory. Commits use a fixed identity on the command line, so no git configuration of the
 * machine is needed or touched.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { treeCopier } from '../fixtures/tree.js';
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

/** New directories named `prefix...`, each holding what `dir` held when `copier` was called. */
const copier = (dir: string, prefix: string): (() => string) => {
  const write = treeCopier(dir);
  return () => {
    const copy = tempDir(prefix);
    write(copy);
    return copy;
  };
};

let template: (() => string) | undefined;
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
    const dir = tempDir('template-');
    git(dir, 'init', '-q', '-b', 'main');
    // git's sample hooks, a dozen files no test runs, are most of what each copy would write and remove.
    rmSync(join(dir, '.git', 'hooks'), { recursive: true });
    writeFiles(dir, { 'src/parser.ts': 'export const parse = (text: string) => text;\n' });
    commitAll(dir, 'initial');
    template = copier(dir, 'repo-');
  }
  return template();
};

/**
 * Calls of `make`'s repository, built at the first call of the test file and copied for each call
 * after (a copy costs almost nothing; the build may take dozens of git processes), so each test
 * may change its copy freely.
 */
export const copiesOf = (make: () => Promise<string>): (() => Promise<string>) => {
  let made: Promise<() => string> | undefined;
  onTempDirsRemoved(() => {
    made = undefined;
  });
  return async () => (await (made ??= make().then((repo) => copier(repo, 'copy-'))))();
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
