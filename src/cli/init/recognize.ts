/**
 * Which hook commands are fact-tracker's, the ones `init` replaces: those whose program is
 * fact-tracker with the subcommand, read past the words that only start it (variables set for
 * it, `exec`, `env`, `npx`, `npm exec`, `node` on an entry point, `op run --`, `dotenv --`, a
 * shell's `-c` script), in any command of the line. A program that only names fact-tracker in its
 * arguments (`echo fact-tracker hook ran`, `logger "fact-tracker hook"`) is the user's own.
 */
import { readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { isOutsideFailure } from '../boundary.js';
import type { Launcher } from './settings.js';
import { shellScript, shellWords, type Word } from './shellWords.js';

/** A program that runs the command that follows its own words. */
interface Wrapper {
  /** The word one of which follows the program (`npm exec`, `op run`). */
  readonly verbs?: ReadonlyArray<string>;
  /** True when the program runs a command without one of `verbs` too (`yarn fact-tracker`). */
  readonly verbOptional?: true;
  /** Its options that take the next word as their value. */
  readonly valued?: ReadonlyArray<string>;
  /** The words it takes after its options, before the command (`timeout`'s duration). */
  readonly operands?: number;
  /** True when the command follows a `--` (`op run ... -- COMMAND`): whatever options come before it. */
  readonly separated?: true;
}

const PACKAGE_RUNNER: Wrapper = { valued: ['-p', '--package', '-c', '--call'] };

/** The wrappers known to run the command after them, by program name. */
const WRAPPERS: ReadonlyMap<string, Wrapper> = new Map<string, Wrapper>([
  ['exec', { valued: ['-a'] }],
  ['env', { valued: ['-u', '--unset', '-C', '--chdir'] }],
  ['command', {}],
  ['nohup', {}],
  ['time', { valued: ['-f', '--format', '-o', '--output'] }],
  ['nice', { valued: ['-n', '--adjustment'] }],
  ['timeout', { valued: ['-s', '--signal', '-k', '--kill-after'], operands: 1 }],
  ['npx', PACKAGE_RUNNER],
  ['pnpx', PACKAGE_RUNNER],
  ['bunx', PACKAGE_RUNNER],
  ['npm', { ...PACKAGE_RUNNER, verbs: ['exec', 'x'] }],
  ['pnpm', { verbs: ['exec', 'dlx'], verbOptional: true }],
  ['yarn', { verbs: ['exec', 'dlx', 'run'], verbOptional: true }],
  ['op', { verbs: ['run'], separated: true }],
  ['doppler', { verbs: ['run'], separated: true }],
  ['infisical', { verbs: ['run'], separated: true }],
  ['dotenvx', { verbs: ['run'], separated: true }],
  ['dotenv', { valued: ['-e', '-v', '-c', '-p'], separated: true }],
]);

/** Words of the shell's grammar that may come before a command (`then fact-tracker hook`). */
const RESERVED: ReadonlySet<string> = new Set(['!', '{', 'if', 'then', 'elif', 'else', 'while', 'until', 'do']);

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/u;

const NODE = /^(?:node|nodejs)$/u;

/** The options of Node that take the next word as their value. */
const NODE_VALUED = ['-r', '--require', '--import', '--loader', '--experimental-loader', '-C', '--conditions'];

/** The options of Node that run code given to it, not a script. */
const NODE_CODE = ['-e', '--eval', '-p', '--print'];

/** The last part of a path: a program's name. */
const nameOf = (path: string): string => path.slice(path.lastIndexOf('/') + 1);

/** True for a script path (one word, as written) of an installation of this package. */
export type IsEntryPoint = (script: Word) => boolean;

/** The words after a wrapper's own (`words` follow its name): the command it runs, empty when they are not of its form. */
const afterWrapper = (words: ReadonlyArray<Word>, wrapper: Wrapper): ReadonlyArray<Word> => {
  let at = 0;
  if (wrapper.verbs?.includes(words[0]?.text ?? '') === true) at = 1;
  else if (wrapper.verbs !== undefined && wrapper.verbOptional !== true) return [];
  const separator =
    wrapper.separated === true ? words.findIndex((word, index) => index >= at && word.text === '--') : -1;
  if (separator !== -1) return words.slice(separator + 1);
  while (at < words.length && words[at]!.text.startsWith('-')) {
    const option = words[at]!.text;
    at += 1;
    if (option === '--') break;
    if (wrapper.valued?.includes(option) === true) at += 1;
  }
  return words.slice(at + (wrapper.operands ?? 0));
};

/** True when `words` (after `node`) run an entry point of this package with the subcommand. */
const nodeRuns = (words: ReadonlyArray<Word>, subcommand: 'hook' | 'mcp', isEntryPoint: IsEntryPoint): boolean => {
  let at = 0;
  while (at < words.length && words[at]!.text.startsWith('-')) {
    const option = words[at]!.text;
    at += 1;
    if (NODE_CODE.includes(option)) return false;
    if (option === '--') break;
    if (NODE_VALUED.includes(option)) at += 1;
  }
  const script = words[at];
  return (
    script !== undefined &&
    words[at + 1]?.text === subcommand &&
    (nameOf(script.text) === 'fact-tracker' || isEntryPoint(script))
  );
};

/** True when the simple command `words` runs fact-tracker with the subcommand, through the wrappers it knows. */
const commandRuns = (words: ReadonlyArray<Word>, subcommand: 'hook' | 'mcp', isEntryPoint: IsEntryPoint): boolean => {
  let at = 0;
  while (at < words.length && (ASSIGNMENT.test(words[at]!.text) || RESERVED.has(words[at]!.text))) at += 1;
  const program = words[at];
  if (program === undefined) return false;
  const name = nameOf(program.text);
  const after = words.slice(at + 1);
  if (name === 'fact-tracker') return after[0]?.text === subcommand;
  if (NODE.test(name)) return nodeRuns(after, subcommand, isEntryPoint);
  const script = shellScript(words.slice(at));
  if (script !== undefined) return runsFactTracker(script.text, subcommand, isEntryPoint);
  const wrapper = WRAPPERS.get(name);
  return wrapper !== undefined && commandRuns(afterWrapper(after, wrapper), subcommand, isEntryPoint);
};

/** A shell operator at the start of a text: a redirection (whose target word follows), another one, or a comment. */
const OPERATOR = /^(?:(?<redirection>&>>?|[<>]+[&|]?)|(?<comment>#)|&&|\|\||;;|[;&|()])/u;

/**
 * True when a command line runs fact-tracker with `subcommand` in any of its commands (`cd DIR &&
 * fact-tracker hook` too), through the wrappers this module knows; a script path of Node is the
 * package's entry point when `isEntryPoint` says so.
 */
export function runsFactTracker(line: string, subcommand: 'hook' | 'mcp', isEntryPoint: IsEntryPoint): boolean {
  let text = line;
  // After a redirection, the words go on with the same command: its target, then more arguments.
  let startsCommand = true;
  for (;;) {
    const { words, rest } = shellWords(text);
    if (startsCommand && commandRuns(words, subcommand, isEntryPoint)) return true;
    const operator = OPERATOR.exec(rest);
    if (operator === null || operator.groups?.['comment'] !== undefined) return false;
    startsCommand = operator.groups?.['redirection'] === undefined;
    text = rest.slice(operator[0].length);
  }
}

/** `$CLAUDE_PROJECT_DIR` and `${CLAUDE_PROJECT_DIR}`, which Claude Code sets to the project for its hooks. */
const PROJECT_DIR_VARIABLE = /\$(?:\{CLAUDE_PROJECT_DIR\}|CLAUDE_PROJECT_DIR(?![A-Za-z0-9_]))/gu;

/**
 * True for the `dist/cli/main.js` of an installation of this package (the same one, another
 * copy, or a moved one whose folder is named after the package), its path read as the agent runs
 * it: relative to the project, with `$CLAUDE_PROJECT_DIR` the project.
 */
const isEntryPointIn =
  (project: string): IsEntryPoint =>
  (script) => {
    const path = script.expands ? script.text.replace(PROJECT_DIR_VARIABLE, () => project) : script.text;
    if (!path.endsWith(join('dist', 'cli', 'main.js'))) return false;
    const packageFolder = resolve(project, dirname(path), '..', '..');
    try {
      const manifest = JSON.parse(readFileSync(join(packageFolder, 'package.json'), 'utf8')) as unknown;
      return (
        typeof manifest === 'object' &&
        manifest !== null &&
        'name' in manifest &&
        manifest.name === 'session-fact-tracker'
      );
    } catch (error) {
      if (!(error instanceof SyntaxError || isOutsideFailure(error))) throw error;
      // No manifest to read: an installation since moved is known by its folder's name, never by its absence.
      return basename(packageFolder) === 'session-fact-tracker';
    }
  };

/**
 * True for a hook command of fact-tracker: the one `launcher` writes, or one that runs
 * `fact-tracker hook` (by name, by path, through npx) or Node on an entry point of this package
 * with `hook`. A command not recognized this way is the user's, and stays.
 */
export const isFactTrackerHook =
  (project: string, launcher: Launcher) =>
  (command: string): boolean =>
    command === launcher.hook || runsFactTracker(command, 'hook', isEntryPointIn(project));
