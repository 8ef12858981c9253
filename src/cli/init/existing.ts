/**
 * What the settings `init` is about to rewrite already say: the store and the options of the
 * fact-tracker commands there, however they were written (by an earlier `init`, or by hand with
 * the documented options of `hook` and `mcp`), so that a run keeps them, and the words it
 * cannot keep, so that it says which ones it drops.
 */
import { posix } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { isRecord } from '../../base/record.js';
import { quoteText } from '../../base/text.js';
import { isPostgresUrl } from '../../postgres/address.js';
import { isSectionLayout } from '../../core/retrieve/defaults.js';
import { handlerCommand, isUnshowable, type Ownership, SERVER_NAME } from './settings.js';
import { STORE_VARIABLE } from '../store.js';
import { isMentionOnly, namesFactTrackerAt, isShell, nameOf, programIndex, scriptWords } from './recognize.js';
import { type Command, shellCommands, type Word } from './shellWords.js';

/** What one fact-tracker command (`hook`, or `mcp`) is given. */
export interface CommandReading {
  /** The store it names: by `--store`, `--sessions-dir`, else a `FACT_TRACKER_STORE=` before it. */
  readonly store?: string;
  /** Its other options init keeps, by name (without `--`), in their order. */
  readonly options: ReadonlyArray<readonly [string, string]>;
  /** What it is given that init does not keep, named without a value (a value may be a secret). */
  readonly dropped: ReadonlyArray<string>;
  /** True when it mentions a store (`--store`, `--sessions-dir`, `FACT_TRACKER_STORE`) init cannot read. */
  readonly unreadStore?: true;
  /** True for a line kept as written whose hook runs after a command that may set its store (`source .env`, `export`, a `PATH=`), or through one (`dotenv --`). */
  readonly storeSetBefore?: true;
  /** True when it runs fact-tracker through a program that loads variables for it (`dotenv --`, `op run --`, `node --env-file`). */
  readonly loadsEnvironment?: true;
  /** True when its store is given as an option (`--store`, `--sessions-dir`), not by a variable. */
  readonly storeGiven?: true;
  /** For a line kept as written: its hooks are given different stores. */
  readonly severalStores?: true;
  /** For a line kept as written, the variables it sets that hold a secret (`PGPASSWORD=`), by name. */
  readonly keptSecrets?: ReadonlyArray<string>;
  /** True for a line kept as written (fact-tracker's hook among commands of the user's own). */
  readonly kept?: true;
}

/** What a command that names a store mentions: a store init cannot read when it reads none. */
const STORE_MENTION = /--store|--sessions-dir|FACT_TRACKER_STORE/u;

/** Words that start fact-tracker as init writes its own start (a launcher), which init replaces. */
const LAUNCHER = /^(?:exec|env|npx|pnpx|pnpm|yarn|bunx|node|nodejs|(?:\S*\/)?(?:node|nodejs|npx))$/u;

/** The options of `npx` that init's own launcher stands for. */
const LAUNCHER_FLAGS = /^(?:--no-install|--no|-y|--yes|-q|--quiet)$/u;

/** The options of the launchers that take the next word as their value (a folder, a package, a module to load). */
const LAUNCHER_VALUED =
  /^(?:--prefix|-C|--dir|--cwd|--filter|-F|-w|--workspace|--registry|--loglevel|-p|--package|-r|--require|--import|--loader|--env-file)$/u;

/** An option's name as a warning says it: `--name` or `-x`; anything else, a value glued to it, is named by what it is. */
const optionName = (word: string): string => {
  const option = /^(--[A-Za-z][A-Za-z0-9-]{0,40}|-[A-Za-z])(?:=|$)/u.exec(word);
  return option === null ? 'an unknown option' : option[1]!;
};

/** A command init does not keep, named when its name is a plain one (never a value). */
const commandName = (word: string): string => {
  const name = word.split('/').pop() ?? '';
  return /^[A-Za-z0-9._+-]{1,40}$/u.test(name) ? `\`${name}\`` : 'another command';
};

/** The options of `hook` and of `mcp` that take a value: all of them (see `commandOptions.ts`). */
const VALUE_OPTIONS = {
  hook: ['store', 'sessions-dir', 'reviewer-pattern', 'max-facts', 'max-tokens', 'tokenizer', 'layout'],
  mcp: ['store', 'sessions-dir', 'max-answer-tokens', 'tokenizer', 'layout'],
} as const;

/** `${FACT_TRACKER_STORE:-STORE}`, as `init --store` writes it, and its `STORE`. */
const STORE_REFERENCE = /^\$\{FACT_TRACKER_STORE:-([^}]*)\}$/su;

/** The store a value of `FACT_TRACKER_STORE` names: the fallback of init's reference, or the value. */
const storeOfValue = (value: string): string => STORE_REFERENCE.exec(value)?.[1] ?? value;

const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/su;

/** What follows a command (`rest`) as a warning names it: a `&` that ends the line, or what follows its first operator or redirection. */
const restDropped = (rest: string): string =>
  rest === '&' ? 'the "&" that ran it in the background' : `what follows its "${rest.replace(/^\d+/u, '')[0]}"`;

/**
 * Programs that load variables for the program they run from a file or a secrets manager, where
 * a store may be set (`FACT_TRACKER_STORE` in a `.env`): the hook a line runs through one of them
 * has a store init cannot read.
 */
const ENVIRONMENT_LOADERS: ReadonlySet<string> = new Set(
  [
    'dotenv dotenv-cli dotenvx env-cmd op doppler infisical aws-vault chamber envchain sops teller direnv pipenv',
    'envdir foreman honcho mise rtx',
  ]
    .join(' ')
    .split(' '),
);

/** Options of the wrappers before a hook that take the next word as their value (`sudo -u op`, `timeout -s KILL`); the launchers' are `LAUNCHER_VALUED`. */
const WRAPPER_VALUED = /^(?:-u|--user|-g|--group|-n|--adjustment|-s|--signal|-k|--kill-after|--timeout)$/u;

/** Node's options that load code or variables before the program (`-r dotenv/config`, `--env-file=.env`), as words or in `NODE_OPTIONS`. */
const NODE_PRELOAD = /^(?:-r|--require|--import|--loader|--experimental-loader|--env-file(?:-if-exists)?)(?:=|$)/u;

/**
 * True when `words`, those before fact-tracker's in a command, load variables for it: a program
 * of `ENVIRONMENT_LOADERS` among them (not a value of an option: `sudo -u op`), a preload or an
 * env file given to Node, or a `NODE_OPTIONS=` that gives one.
 */
const loadsEnvironmentIn = (words: ReadonlyArray<Word>): boolean =>
  words.some(({ text }, at) => {
    const assignment = ASSIGNMENT.exec(text);
    if (assignment !== null)
      return assignment[1] === 'NODE_OPTIONS' && assignment[2]!.split(/\s+/u).some((part) => NODE_PRELOAD.test(part));
    if (NODE_PRELOAD.test(text)) return true;
    const before = words[at - 1]?.text ?? '';
    if (LAUNCHER_VALUED.test(before) || WRAPPER_VALUED.test(before)) return false;
    // A path is a loader's only in a folder of programs (`/usr/local/bin/op`), not a file (`flock /tmp/op`).
    if (text.includes('/') && !/(?:^|\/)bin\/[^/]+$/u.test(text)) return false;
    return ENVIRONMENT_LOADERS.has(nameOf(text).replace(/\.(?:cmd|exe)$/u, ''));
  });

/**
 * True when `reading` gives fact-tracker its store as an option (`--store`, `--sessions-dir`) that
 * no variable can change: a folder written out (no `$`), not a PostgreSQL URL (the driver fills a
 * part it lacks from `PGHOST`, `PGDATABASE`, ...).
 */
const storeGivenWhole = (reading: CommandReading): boolean =>
  reading.storeGiven === true &&
  reading.store !== undefined &&
  !isPostgresUrl(reading.store) &&
  !/[$`]/u.test(reading.store);

/** A script given as one word (`bash -c SCRIPT`, `doppler run --command SCRIPT`) in `words` that runs `fact-tracker SUBCOMMAND`, read; undefined when none does. */
const readScriptWord = (
  words: ReadonlyArray<Word>,
  rest: string,
  subcommand: 'hook' | 'mcp',
): CommandReading | undefined => {
  const program = programIndex(words);
  if (program === words.length || isMentionOnly(words, program)) return undefined;
  for (const word of scriptWords(words, program)) {
    const reading = readCommandLine(word.text, subcommand);
    if (reading === undefined) continue;
    // A script the shell expands before it runs it is not the text init reads.
    if (word.expands) return unreadable(words.map(({ text }) => text).join(' '));
    const dropped = [...reading.dropped];
    const name = nameOf(words[program]!.text);
    if (!isShell(name)) dropped.unshift(`${commandName(name)}, which it runs fact-tracker through`);
    if (program > 0) dropped.unshift('variables set for the program that runs its script');
    // Words given to the script (`sh -c '... "$@"' _ --store X`) may be what it runs fact-tracker with.
    const given = words.slice(word.end).map(({ text }) => text);
    if (given.length > 0) dropped.push('the words given to its script');
    if (rest !== '') dropped.push(restDropped(rest));
    const mentioned = [...given, ...words.slice(0, program).map(({ text }) => text), rest].some((text) =>
      STORE_MENTION.test(text),
    );
    const loads = reading.loadsEnvironment === true || loadsEnvironmentIn(words.slice(0, word.index));
    return {
      ...(mentioned ? { options: reading.options, unreadStore: true as const } : reading),
      dropped,
      ...(loads ? { loadsEnvironment: true as const } : {}),
    };
  }
  return undefined;
};

/**
 * The store and options of a simple command (`words`, after `rest`, what follows it from its
 * first redirection or operator on) that runs `fact-tracker SUBCOMMAND`: undefined when it runs
 * no such subcommand (its word after a word naming fact-tracker or its `main.js`).
 */
export const readCommand = (
  words: ReadonlyArray<Word>,
  rest: string,
  subcommand: 'hook' | 'mcp',
): CommandReading | undefined => {
  const at = words.findIndex(
    (word, index) =>
      index > 0 &&
      word.text === subcommand &&
      (namesFactTrackerAt(words, programIndex(words), index - 1) || /main\.js$/u.test(words[index - 1]!.text)) &&
      !(index === 2 && /^(?:-p|--package)$/u.test(words[1]!.text) && /^(?:npx|pnpx|bunx)$/u.test(words[0]!.text)),
  );
  if (at === -1 || isMentionOnly(words, programIndex(words), at - 1)) return readScriptWord(words, rest, subcommand);
  const dropped: string[] = [];
  let assigned: string | undefined;
  let wrapper: string | undefined;
  let launched = false;
  // The words init reads no store or option in: a store they mention is one it cannot read.
  const unread: string[] = [rest];
  // An option of the launcher the word before may have given a value to (`npx --prefix DIR`).
  let valued = false;
  for (const word of words.slice(0, at - 1)) {
    const assignment = ASSIGNMENT.exec(word.text);
    if (wrapper !== undefined || assignment === null) unread.push(word.text);
    if (wrapper !== undefined) continue; // the wrapper's own words: a value of them may be a secret
    const value = valued && !word.text.startsWith('-');
    valued = launched && LAUNCHER_VALUED.test(word.text);
    if (value) continue; // named with its option, never itself
    if (assignment !== null) {
      if (assignment[1] === STORE_VARIABLE) assigned = storeOfValue(assignment[2]!);
      else dropped.push(`${assignment[1]}=`);
    } else if (LAUNCHER.test(word.text))
      launched = true; // init writes its own launcher
    else if (word.text.startsWith('-') && launched) {
      if (!LAUNCHER_FLAGS.test(word.text)) dropped.push(`the launcher's ${optionName(word.text)}`);
    } else wrapper = commandName(word.text);
  }
  // A wrapper (a secrets manager, `dotenv`, `timeout`) runs fact-tracker: init's command runs it directly.
  if (wrapper !== undefined) dropped.unshift(`${wrapper}, which it runs fact-tracker through`);
  // A relative path to a `fact-tracker` not of the package's `.bin`: a script of the project's own.
  const program = words[at - 1]!.text;
  if (/^(?!\/)\S*\/fact-tracker$/u.test(program) && !/(?:^|\/)node_modules\/\.bin\/fact-tracker$/u.test(program))
    dropped.unshift("a fact-tracker script of the project's own, which it runs instead of the package");
  const known: ReadonlyArray<string> = VALUE_OPTIONS[subcommand];
  const options: Array<readonly [string, string]> = [];
  const after = words.slice(at + 1);
  for (let i = 0; i < after.length; i += 1) {
    const word = after[i]!.text;
    const option = /^--([a-z-]+)(?:=(.*))?$/su.exec(word);
    const name = option?.[1];
    if (option === null || name === undefined || !known.includes(name)) {
      unread.push(word);
      dropped.push(word.startsWith('-') ? optionName(word) : 'a word that is no option');
      continue;
    }
    const value = option[2] === undefined ? after[i + 1] : { text: option[2], expands: after[i]!.expands };
    if (option[2] === undefined) i += 1;
    if (value === undefined) {
      unread.push(word);
      dropped.push(`--${name} (without its value)`);
    }
    // A store is checked as one given (a `$` in it refused); another value the shell expands cannot be kept as written.
    else if (value.expands && name !== 'store' && name !== 'sessions-dir')
      dropped.push(`--${name} (its value is expanded by the shell)`);
    // Written back, init would print it in the commands it configured: a clone's settings could
    // drive the terminal or forge a line of the report. (A store is checked as one given.)
    else if (isUnshowable(value.text) && name !== 'store' && name !== 'sessions-dir')
      dropped.push(`--${name} (its value holds a line break, a control or an invisible character)`);
    else options.push([name, value.text]);
  }
  if (rest !== '') dropped.push(restDropped(rest));
  // `--store` wins over `--sessions-dir`, wherever each is, as the commands choose (`chooseStore`).
  const named = options.find(([name]) => name === 'store') ?? options.find(([name]) => name === 'sessions-dir');
  const loads = loadsEnvironmentIn(words.slice(0, at - 1));
  const store = named?.[1] ?? assigned;
  return {
    ...(store === undefined ? {} : { store }),
    options: options.filter(([name]) => name !== 'store' && name !== 'sessions-dir'),
    dropped,
    ...(store === undefined && unread.some((text) => STORE_MENTION.test(text)) ? { unreadStore: true } : {}),
    ...(named === undefined ? {} : { storeGiven: true as const }),
    ...(loads ? { loadsEnvironment: true as const } : {}),
  };
};

/** What follows a command from its first redirection on, as one text: its redirections, then the operator that ends it and the commands after it. */
const restOf = (commands: ReadonlyArray<Command>, index: number): string => {
  const command = commands[index]!;
  const after = commands
    .slice(index + 1)
    .map(({ words, redirections, end }) => [...words.map(({ text }) => text), ...redirections, end].join(' '));
  // A `&` that ends the line runs the command in the background: no more a hook init writes.
  const end = after.length === 0 ? (command.end === '&' ? ['&'] : []) : [command.end, ...after];
  return [...command.redirections, ...end].join(' ');
};

/** True for a command before fact-tracker's that leaves what its words mean as they are (`set -e`, `true`, a comment's nothing). */
const leavesWordsAlone = ({ words }: Command): boolean =>
  words.length === 0 || /^(?:set|true|:)$/u.test(words[0]!.text);

/** `readCommand` of the first command of a shell command line that runs fact-tracker (a hook's, or the script of Codex's `sh -c`); undefined when none does, or another command runs before it that may change what its words mean (`cd DIR &&`). */
export function readCommandLine(line: string, subcommand: 'hook' | 'mcp'): CommandReading | undefined {
  const commands = shellCommands(line);
  for (const [index, command] of commands.entries()) {
    const reading = readCommand(command.words, restOf(commands, index), subcommand);
    if (reading === undefined) continue;
    return commands.slice(0, index).every(leavesWordsAlone) ? reading : undefined;
  }
  return undefined;
}

/**
 * The reading of the command that runs fact-tracker's hook in a line kept as written: the
 * commands before it stay, so they do not make it unreadable (how they may set its store is
 * `runsHookAfterEnvironment`'s question).
 */
const readKeptLine = (line: string): CommandReading | undefined => {
  const commands = shellCommands(line);
  const readings = commands.flatMap((command, index) => {
    const reading = readCommand(command.words, restOf(commands, index), 'hook');
    return reading === undefined ? [] : [reading];
  });
  const [first] = readings;
  // Hooks of one line given different stores (`a && hook --store x || hook --store y`): no one store to keep.
  if (first === undefined || readings.every((reading) => sameStore(reading.store, first.store))) return first;
  const { store: _store, storeGiven: _given, ...rest } = first;
  return { ...rest, unreadStore: true, severalStores: true };
};

/** A store as two readings compare it: a folder normalized (`./s` is `s`), a URL as written. */
const comparableStore = (store: string): string =>
  isPostgresUrl(store) ? store : posix.normalize(store.replaceAll('\\', '/'));

/** True when two stores as written are the same one (undefined: the default). */
export const sameStore = (a: string | undefined, b: string | undefined): boolean =>
  a === undefined || b === undefined ? a === b : comparableStore(a) === comparableStore(b);

/** What a command init cannot read at all is read as: nothing kept, and a store it mentions marked. */
const unreadable = (text: string): CommandReading => ({
  options: [],
  dropped: ['a command init cannot read'],
  ...(STORE_MENTION.test(text) ? { unreadStore: true } : {}),
});

/** The fact-tracker server of the settings: the store its `env` names, and what its command is given. */
export interface ServerReading {
  /** True when the settings register a fact-tracker server. */
  readonly exists: boolean;
  readonly envStore?: string;
  /** Its command, read; undefined when there is no server or its command runs no `fact-tracker mcp` that can be read. */
  readonly command?: CommandReading;
  /** True when its command mentions a store init cannot read. */
  readonly unreadStore?: true;
}

/** A server entry (of `.mcp.json`, or Codex's table), read. */
const readServer = (server: unknown): ServerReading => {
  if (!isRecord(server)) return { exists: false };
  const env = isRecord(server['env']) ? server['env'][STORE_VARIABLE] : undefined;
  const envStore = typeof env === 'string' && env !== '' ? storeOfValue(env) : undefined;
  const args = Array.isArray(server['args']) ? server['args'] : [];
  const words = [server['command'], ...args].filter((word): word is string => typeof word === 'string');
  const command = readCommand(
    words.map((text) => ({ text, expands: false })),
    '',
    'mcp',
  );
  return {
    exists: true,
    ...(envStore === undefined ? {} : { envStore }),
    ...(command === undefined ? {} : { command }),
    ...((command ?? unreadable(words.join(' '))).unreadStore === true ? { unreadStore: true } : {}),
  };
};

/** The fact-tracker server of a `.mcp.json` document, read. */
export const readMcpJsonServer = (document: unknown): ServerReading => {
  const servers = isRecord(document) ? document['mcpServers'] : undefined;
  return readServer(isRecord(servers) ? servers[SERVER_NAME] : undefined);
};

/** The fact-tracker server of Codex's `config.toml`, read; nothing when the text is not TOML, which the merge that follows refuses in its own words. */
export const readCodexServer = (text: string): ServerReading => {
  let parsed: unknown;
  try {
    parsed = parseToml(text, { integersAsBigInt: 'asNeeded' });
  } catch {
    return { exists: false };
  }
  const servers = isRecord(parsed) ? parsed['mcp_servers'] : undefined;
  return readServer(isRecord(servers) ? servers[SERVER_NAME] : undefined);
};

/** Each hook handler's command line in a settings document, with the event it is under. */
const hookCommands = (settings: unknown): ReadonlyArray<{ readonly event: string; readonly command: string }> => {
  const hooks = isRecord(settings) ? settings['hooks'] : undefined;
  const commands: Array<{ event: string; command: string }> = [];
  for (const [event, groups] of isRecord(hooks) ? Object.entries(hooks) : [])
    for (const group of Array.isArray(groups) ? groups : [])
      for (const handler of isRecord(group) && Array.isArray(group['hooks']) ? group['hooks'] : []) {
        const command = handlerCommand(handler);
        if (command !== undefined) commands.push({ event, command });
      }
  return commands;
};

/** Commands that may change the environment of the commands after them: a sourced file, an export, ... */
const SETS_ENVIRONMENT: ReadonlySet<string> = new Set(
  'source . export declare typeset local readonly unset eval alias'.split(' '),
);

/** True when a simple command may change what the commands after it are given (`. ./.env`, `export PATH=...`, `FACT_TRACKER_STORE=x`, `set -a`). */
const setsEnvironment = (words: ReadonlyArray<Word>): boolean => {
  const program = programIndex(words);
  if (program === words.length) return words.length > 0;
  const name = words[program]!.text;
  if (name === 'set') return words.slice(program + 1).some(({ text }) => /^-[A-Za-z]*a|^allexport$/u.test(text));
  return SETS_ENVIRONMENT.has(name);
};

/** Deeper than this, a script inside a script is not read (a line is never that deep by hand). */
const MAX_DEPTH = 8;

/**
 * True when a line runs fact-tracker's hook after a command that may set the store it reads (in
 * order, a script given as a word or substituted read at its command's place), or through a
 * program that may (`dotenv -- fact-tracker hook`): a store init cannot read.
 */
export const runsHookAfterEnvironment = (line: string, depth = 0): boolean => {
  if (depth > MAX_DEPTH) return false;
  let set = false;
  for (const { words } of shellCommands(line)) {
    const program = programIndex(words);
    const scripts = [
      ...words.flatMap((word) => word.scripts ?? []),
      ...scriptWords(words, program).map(({ text }) => text),
    ];
    if (scripts.some((script) => runsHookAfterEnvironment(script, depth + 1))) return true;
    const reading = readCommand(words, '', 'hook');
    // A folder given as an option wins over any variable set before or loaded: init reads it.
    if (reading !== undefined && (set || reading.loadsEnvironment === true) && !storeGivenWhole(reading)) return true;
    if (setsEnvironment(words)) set = true;
  }
  return false;
};

/** Variables whose value is a secret: a password, a token, a key. */
const SECRET_NAME = /PASS(?:WORD|WD)|SECRET|TOKEN|API_?KEY/iu;

/** The variables a line (its scripts too) sets to a secret written in it (`PGPASSWORD=s3cret`, not `PGPASSWORD="$PW"`), by name, each once. */
export const secretsSetIn = (line: string, depth = 0): ReadonlyArray<string> => {
  if (depth > MAX_DEPTH) return [];
  const names = shellCommands(line).flatMap(({ words }) => {
    const program = programIndex(words);
    const scripts = [
      ...words.flatMap((word) => word.scripts ?? []),
      ...scriptWords(words, program).map(({ text }) => text),
    ];
    const set = words.flatMap(({ text }) => {
      const assignment = ASSIGNMENT.exec(text);
      return assignment !== null && SECRET_NAME.test(assignment[1]!) && !/^(?:\$|$)/u.test(assignment[2]!)
        ? [assignment[1]!]
        : [];
    });
    return [...set, ...scripts.flatMap((script) => secretsSetIn(script, depth + 1))];
  });
  return [...new Set(names)];
};

/** A warning that hook lines init keeps as written set secrets in a file meant to be committed, naming the variables, never their values; undefined when none does. */
export const keptSecretWarning = (hooks: ReadonlyArray<CommandReading>, file: string): string | undefined => {
  const names = [...new Set(hooks.flatMap((reading) => reading.keptSecrets ?? []))];
  return names.length === 0
    ? undefined
    : `fact-tracker init: warning: a hook command of ${file} that init keeps as written sets ${names.map((name) => `${name}=`).join(', ')} to a secret written in the line, which a settings file meant to be committed must not hold: set it in your environment instead (for PostgreSQL, PGPASSWORD, PGPASSFILE or ~/.pgpass; see docs/team.md)\n`;
};

/** Every hook command of a settings document that `isOurs` recognizes, under `events` when given (those init rewrites), read. */
export const readHooks = (
  settings: unknown,
  isOurs: (command: string) => Ownership,
  events?: ReadonlyArray<string>,
): ReadonlyArray<CommandReading> =>
  hookCommands(settings).flatMap(({ event, command }) => {
    const ownership = events === undefined || events.includes(event) ? isOurs(command) : false;
    if (ownership === false) return [];
    // A shared handler is kept as written: nothing of it is dropped, its store and options still
    // read from the command that runs the hook, whatever comes before it; one whose store a
    // command before it may set (`source .env &&`) has a store init cannot read.
    const reading =
      (ownership === 'shared' ? readKeptLine(command) : readCommandLine(command, 'hook')) ?? unreadable(command);
    if (ownership !== 'shared') return [reading];
    const secrets = secretsSetIn(command);
    return [
      {
        ...reading,
        dropped: [],
        kept: true as const,
        ...(runsHookAfterEnvironment(command) ? { storeSetBefore: true as const } : {}),
        ...(secrets.length === 0 ? {} : { keptSecrets: secrets }),
      },
    ];
  });

/** An event's name as a message says it: as written when it is a plain name, else quoted (a key may hold anything, a terminal's control sequences too). */
const eventName = (event: string): string => (/^[A-Za-z0-9_.-]{1,64}$/u.test(event) ? event : quoteText(event));

/** The events (each once, as a message says them) of the hook commands of `settings` that `which` picks. */
const eventsWhere = (settings: unknown, which: (event: string, command: string) => boolean): ReadonlyArray<string> => [
  ...new Set(
    hookCommands(settings)
      .filter(({ event, command }) => which(event, command))
      .map(({ event }) => eventName(event)),
  ),
];

/** True for a command whose text holds the words `fact-tracker` and `hook`. */
const namesTheHook = (command: string): boolean =>
  /(?<![\w-])fact-tracker(?![\w-])/u.test(command) && /(?<![\w-])hook(?![\w-])/u.test(command);

/**
 * The notes on the hooks of `file` init leaves as written though they run or name fact-tracker's
 * hook, a line each: those under other events than `events` (those init writes) that `isOurs`
 * recognizes, which the user chose to add there; those it finds shared with commands of the
 * user's own, under whose events init writes no second hook; and those that name
 * `fact-tracker hook` but are the user's own, beside which it writes its hook. Empty when there
 * are none.
 */
export const keptAsWrittenNotes = (
  settings: unknown,
  isOurs: (command: string) => Ownership,
  events: ReadonlyArray<string>,
  file: string,
): string => {
  const list = (names: ReadonlyArray<string>): string =>
    `${names.join(', ')}, ${names.length === 1 ? 'an event' : 'events'}`;
  const others = eventsWhere(settings, (event, command) => !events.includes(event) && isOurs(command) !== false);
  const shared = eventsWhere(settings, (event, command) => events.includes(event) && isOurs(command) === 'shared');
  const mentions = eventsWhere(
    settings,
    (event, command) => events.includes(event) && isOurs(command) === false && namesTheHook(command),
  );
  return [
    others.length === 0
      ? ''
      : `\nKept as written: the fact-tracker hook commands of ${file} under ${list(others)} init writes no hook for.\n`,
    shared.length === 0
      ? ''
      : `\nKept as written: the hook commands of ${file} under ${list(shared)} where they run fact-tracker hook among commands of your own; init writes no second hook there (edit them to change its store or options).\n`,
    mentions.length === 0
      ? ''
      : `\nLeft as your own: the hook commands of ${file} under ${list(mentions)} where they name fact-tracker hook without running it as the hook; init writes its own beside them.\n`,
  ].join('');
};

/** The options to keep of some commands read, as words, and what cannot be kept, for a warning. */
export interface KeptOptions {
  readonly words: ReadonlyArray<string>;
  readonly dropped: ReadonlyArray<string>;
}

/**
 * The options commands `readings` are given to write back into each: an option all of them that
 * give it give one value, the layout (first) only when `init --layout` gives none and it names one;
 * `lines`, the default, needs no option.
 */
export const keptOptions = (readings: ReadonlyArray<CommandReading>, layoutGiven: boolean): KeptOptions => {
  const values = new Map<string, Set<string>>();
  for (const reading of readings)
    for (const [name, value] of reading.options) values.set(name, (values.get(name) ?? new Set()).add(value));
  const dropped = new Set(readings.flatMap((reading) => reading.dropped));
  const words: string[] = [];
  const layouts = values.get('layout');
  values.delete('layout');
  if (!layoutGiven && layouts !== undefined) {
    const [layout] = layouts;
    if (layouts.size > 1 || !isSectionLayout(layout)) dropped.add('--layout (not one layout init writes)');
    else if (layout !== 'lines') words.push('--layout', layout);
  }
  for (const [name, given] of values)
    if (given.size > 1) dropped.add(`--${name} (given different values)`);
    // A value that starts with a dash is read as one only in the `--name=value` form.
    else
      words.push(
        ...[...given].flatMap((value) => (value.startsWith('-') ? [`--${name}=${value}`] : [`--${name}`, value])),
      );
  return { words, dropped: [...dropped] };
};

/** The stores commands `readings` name, each once. */
export const storesOf = (readings: ReadonlyArray<CommandReading>): ReadonlyArray<string> => [
  ...new Set(readings.flatMap((reading) => (reading.store === undefined ? [] : [reading.store]))),
];

/**
 * A warning naming what `what` (`several`: more than one command) was given that the commands
 * init writes go without; undefined when there is nothing.
 */
export const droppedWarning = (what: string, several: boolean, kept: KeptOptions): string | undefined =>
  kept.dropped.length === 0
    ? undefined
    : `fact-tracker init: warning: ${what} ${several ? 'were' : 'was'} given ${kept.dropped.length === 1 ? 'this' : 'these'}, which init does not keep: ${kept.dropped.join(', ')}\n`;

/**
 * Why a run without `--store` stops on commands that mention a store init cannot read (through
 * a wrapper, after a `cd ... &&`, in a script): it would switch them to another store unasked.
 * Undefined when there is none. The store is never named (it may hold a password).
 */
export const unreadStoreRefusal = (
  hooks: ReadonlyArray<CommandReading>,
  server: ServerReading,
  hooksFile: string,
  serverFile: string,
): string | undefined => {
  if (hooks.some((reading) => reading.storeSetBefore === true))
    return `a fact-tracker hook command of ${hooksFile} that init keeps as written runs after or through a command that may set its store (a sourced file, an export, a PATH change, dotenv or a secrets manager), which init cannot read; nothing was written. Run init again with --store and the store that line uses, for the hooks and the server init writes`;
  const where = hooks.some((reading) => reading.unreadStore === true)
    ? `a fact-tracker hook command of ${hooksFile}`
    : server.unreadStore === true
      ? `the fact-tracker server of ${serverFile}`
      : undefined;
  return where === undefined
    ? undefined
    : `${where} names a store in a form init cannot read (a wrapper, a script, a word it does not read as an option); nothing was written. Run init again with --store and the store to keep`;
};
