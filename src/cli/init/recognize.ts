/**
 * Which hook commands are fact-tracker's, the ones `init` replaces. A command of the line is
 * fact-tracker's when its words run `fact-tracker hook` (the name, a path to it, or Node on an
 * entry point of this package, followed by the subcommand), whatever starts it (variables set
 * for it, a redirection, `sudo`, `npx --prefix DIR`, `direnv exec .`: no list of wrappers), or
 * when a script it is given as one word (`bash -c '...'`, `doppler run --command '...'`) is;
 * unless its program only shows or looks for text (`echo`, `logger`, `grep`, `command -v`,
 * ...), which merely names fact-tracker. A line whose other commands are the user's own work
 * (`fact-tracker hook; ./notify.sh`) is shared: kept as written, and the event gets no second hook.
 */
import { basename, dirname, join, resolve } from 'node:path';
import { isRecord } from '../../base/record.js';
import { readManifest } from './projectFile.js';
import type { Launcher, Ownership } from './settings.js';
import { shellCommands, type Word } from './shellWords.js';

/** How one simple command stands: runs the hook, runs it among the user's work, does nothing init must keep, or is the user's. */
type Kind = 'ours' | 'shared' | 'incidental' | 'other';

/** The last part of a path: a program's name. */
export const nameOf = (path: string): string => path.slice(path.lastIndexOf('/') + 1);

/** True for a word that names fact-tracker's program: its name (`fact-tracker.cmd` on Windows, the package's name, with a version or not) or a path ending in it. */
export const isFactTrackerName = (text: string): boolean =>
  /^(?:fact-tracker(?:\.cmd)?|session-fact-tracker(?:@[\w.^~<>=*-]+)?)$/u.test(nameOf(text));

/**
 * Programs that only show, log or look for the text they are given, whose name among a wrapper's
 * words still says so (`timeout 5 echo fact-tracker hook`).
 */
const INNER_MENTIONS: ReadonlySet<string> = new Set(
  'echo printf logger grep egrep fgrep rg notify-send osascript which whereis'.split(' '),
);

/** All the programs that only show, log, compare or look for text (`echo fact-tracker hook` runs no hook); `test` or `true` among a wrapper's words may be a value. */
const MENTIONS: ReadonlySet<string> = new Set([
  ...INNER_MENTIONS,
  ...'ag ack cat diff less more type hash terminal-notifier say wall test [ [[ true false :'.split(' '),
]);

/**
 * Commands around the hook that do no work of the user's init would lose by replacing the line
 * with its own hook: moving about, setting up the shell (`source ~/.nvm/nvm.sh`, `export PATH=...`,
 * which init's own command does not need), ending.
 */
const INCIDENTAL: ReadonlySet<string> = new Set([
  'cd',
  'pushd',
  'popd',
  'true',
  ':',
  'set',
  'wait',
  'exit',
  'source',
  '.',
  'export',
]);

/** Programs that run a script given as one word (`sh -c SCRIPT`): dropping them loses nothing of the user's. */
export const isShell = (name: string): boolean =>
  /^(?:sh|bash|dash|zsh|ksh|mksh|ash|fish|busybox|cmd|cmd\.exe|powershell|powershell\.exe|pwsh)$/u.test(name);

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/u;

/** The options of Node that run code given to it: the words after them are that code's arguments. */
const NODE_CODE: ReadonlySet<string> = new Set(['-e', '--eval', '-p', '--print']);

/** The index of a command's first word past the variables set for it. */
export const programIndex = (words: ReadonlyArray<Word>): number => {
  let at = 0;
  while (at < words.length && ASSIGNMENT.test(words[at]!.text)) at += 1;
  return at;
};

/**
 * True when a command's words (from `program`, its first word past assignments) only show or look
 * for text: its program is one of those, `command -v`, or one is named among a wrapper's words
 * before `end`.
 */
export const isMentionOnly = (words: ReadonlyArray<Word>, program: number, end = words.length): boolean => {
  const name = nameOf(words[program]?.text ?? '');
  if (MENTIONS.has(name)) return true;
  if (name === 'command' && /^-[vV]$/u.test(words[program + 1]?.text ?? '')) return true;
  return words.slice(program + 1, end).some((word) => INNER_MENTIONS.has(word.text));
};

/** True for a script path (one word, as written) of an installation of this package. */
export type IsEntryPoint = (script: Word) => boolean;

/** Programs that start the program named after them (`npx --no-install 'fact-tracker' hook`): a quoted name among their words is the program's. */
const STARTERS =
  /^(?:npx|pnpx|bunx|npm|pnpm|yarn|bun|node|nodejs|env|exec|sudo|doas|nice|nohup|timeout|time|command)(?:\.cmd)?$/u;

/**
 * True when word `at` of a command names fact-tracker as the program it runs: its name or a path
 * to it, unless it was quoted in full where it is text given to a program (`./notify.sh
 * 'fact-tracker' hook`): a quoted name counts as the command's program, a path, or among the
 * words of a program that starts another (`npx`, `env`, `sudo`).
 */
export const namesFactTrackerAt = (words: ReadonlyArray<Word>, program: number, at: number): boolean => {
  const word = words[at]!;
  if (!isFactTrackerName(word.text)) return false;
  return (
    word.quoted !== true ||
    at === program ||
    word.text.includes('/') ||
    STARTERS.test(nameOf(words[program]?.text ?? ''))
  );
};

/** The index of the word naming fact-tracker that `subcommand` follows in `words`, -1 when none does. */
const runIndex = (
  words: ReadonlyArray<Word>,
  program: number,
  subcommand: 'hook' | 'mcp',
  isEntryPoint: IsEntryPoint,
): number => {
  const name = nameOf(words[program]?.text ?? '');
  const node = /^(?:node|nodejs)$/u.test(name);
  const runner = /^(?:npx|pnpx|bunx|npm|pnpm|yarn|bun)(?:\.cmd)?$/u.test(name);
  for (let at = program; at + 1 < words.length; at += 1) {
    const word = words[at]!;
    // Node running code given to it runs no script: the words after it are the code's arguments.
    if (node && NODE_CODE.has(word.text)) return -1;
    // `npx -p fact-tracker hook` runs a program `hook` of a package named fact-tracker.
    if (runner && /^(?:-p|--package)$/u.test(words[at - 1]?.text ?? '')) continue;
    if (words[at + 1]!.text === subcommand && (namesFactTrackerAt(words, program, at) || isEntryPoint(word))) return at;
  }
  return -1;
};

/** The options after which a program takes a script as one word: a shell's `-c` (`-lc`, `-euc` too), `cmd /c`, PowerShell's `-Command`, `--command` (`doppler run`). */
const SCRIPT_OPTION = /^(?:-[A-Za-z]*c|\/[cCkK]|-[Cc]ommand|--command|-S|--split-string)$/u;

/** A script given to a program as one word, where it takes one: its index, the text, whether the shell expands it. */
export interface ScriptWord {
  readonly index: number;
  /** The index past its last word (`eval` joins all its words). */
  readonly end: number;
  readonly text: string;
  readonly expands: boolean;
}

/**
 * The words of a command (from `program`, its first word past assignments) that are scripts a
 * shell or runner runs: the word after `-c` (`bash -lc`, `su -c`, `npx -c`, `nix develop -c`),
 * `cmd /c`, `-Command`, `--command` or `--command=`, `env -S`, and the words of `eval`. A word
 * holding spaces given to any other program (`curl -d 'fact-tracker hook failed'`) is text.
 */
export const scriptWords = (words: ReadonlyArray<Word>, program: number): ReadonlyArray<ScriptWord> => {
  if (program >= words.length) return [];
  if (nameOf(words[program]!.text) === 'eval') {
    const rest = words.slice(program + 1);
    return rest.length === 0
      ? []
      : [
          {
            index: program + 1,
            end: words.length,
            text: rest.map(({ text }) => text).join(' '),
            expands: rest.some((w) => w.expands),
          },
        ];
  }
  const found: ScriptWord[] = [];
  for (let at = program + 1; at < words.length; at += 1) {
    const word = words[at]!;
    const glued = /^--command=(.*)$/su.exec(word.text);
    if (glued !== null) found.push({ index: at, end: at + 1, text: glued[1]!, expands: word.expands });
    if (!SCRIPT_OPTION.test(word.text)) continue;
    if (/^(?:-S|--split-string)$/u.test(word.text) && !words.slice(program, at).some((w) => nameOf(w.text) === 'env'))
      continue;
    const next = words[at + 1]?.text === '--' ? at + 2 : at + 1;
    const script = words[next];
    if (script !== undefined) found.push({ index: next, end: next + 1, text: script.text, expands: script.expands });
  }
  return found.filter(({ text }) => /\s/u.test(text));
};

/** Deeper than this, a script inside a script is read as no hook of fact-tracker (a line is never that deep by hand). */
const MAX_DEPTH = 8;

/** How the words of one simple command stand to fact-tracker. */
const commandKind = (words: ReadonlyArray<Word>, read: (script: string) => Kind): Kind => {
  const runsInside = words.some((word) => (word.scripts ?? []).some((script) => read(script) !== 'other'));
  const program = programIndex(words);
  if (program === words.length) return runsInside ? 'shared' : 'incidental';
  const name = nameOf(words[program]!.text);
  if (runsInside) return 'shared';
  return INCIDENTAL.has(name) ? 'incidental' : 'other';
};

/** How a script stands, from its commands' kinds: fact-tracker's, shared with the user's work, or the user's. */
const scriptKind = (kinds: ReadonlyArray<Kind>): Kind => {
  if (!kinds.some((kind) => kind === 'ours' || kind === 'shared')) return 'other';
  return kinds.every((kind) => kind === 'ours' || kind === 'incidental') ? 'ours' : 'shared';
};

/** How a command line stands to fact-tracker running `subcommand`. */
const lineKind = (line: string, subcommand: 'hook' | 'mcp', isEntryPoint: IsEntryPoint, depth: number): Kind => {
  if (depth > MAX_DEPTH) return 'other';
  const read = (script: string): Kind => lineKind(script, subcommand, isEntryPoint, depth + 1);
  return scriptKind(
    shellCommands(line).map(({ words }) => {
      const program = programIndex(words);
      const run = runIndex(words, program, subcommand, isEntryPoint);
      if (run !== -1 && !isMentionOnly(words, program, run)) return 'ours';
      if (program < words.length && !isMentionOnly(words, program)) {
        // A script given as one word where a shell or runner takes one (`bash -c '...'`, `doppler run --command '...'`, `eval "..."`): read as one.
        const scripts = scriptWords(words, program).map(({ text }) => read(text));
        if (scripts.includes('ours')) return 'ours';
        if (scripts.includes('shared')) return 'shared';
      }
      return commandKind(words, read);
    }),
  );
};

/**
 * True when a command line runs fact-tracker with `subcommand` in any of its commands (`cd DIR &&
 * fact-tracker hook` too, or among commands of the user's own); a script path of Node is the
 * package's entry point when `isEntryPoint` says so.
 */
export const runsFactTracker = (line: string, subcommand: 'hook' | 'mcp', isEntryPoint: IsEntryPoint): boolean =>
  lineKind(line, subcommand, isEntryPoint, 0) !== 'other';

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
    const manifest = readManifest(packageFolder);
    // No manifest to read (none, or one refused: a link to a device, a huge file): an installation
    // since moved is known by its folder's name, never by its absence.
    return manifest === undefined
      ? basename(packageFolder) === 'session-fact-tracker'
      : isRecord(manifest) && manifest['name'] === 'session-fact-tracker';
  };

/**
 * How a hook command stands to fact-tracker: the one `launcher` writes and one that runs
 * `fact-tracker hook` (by name, by path, through any wrapper) or Node on an entry point of this
 * package with `hook` are its own; one that runs it among commands of the user's own is shared;
 * any other is the user's, and stays.
 */
export const isFactTrackerHook =
  (project: string, launcher: Launcher) =>
  (command: string): Ownership => {
    if (command === launcher.hook) return true;
    const kind = lineKind(command, 'hook', isEntryPointIn(project), 0);
    return kind === 'ours' ? true : kind === 'shared' ? 'shared' : false;
  };
