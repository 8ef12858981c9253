/**
 * The command line, parsed into one typed `Command` or a usage error. Every value is checked
 * here, where input enters, so the commands themselves never meet a malformed option.
 */
import { parseArgs } from 'node:util';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import { FACT_TAGS, type FactTag, isFactTag, isSourceRole, type SourceRole } from '../core/fact.js';
import { parseTimeArgument } from '../base/time.js';
import {
  DEFAULT_MAX_FACTS,
  DEFAULT_MAX_TOKENS,
  SECTION_LAYOUTS,
  type SectionLayout,
} from '../core/retrieve/defaults.js';
import { CONTEXT_OPTIONS, type ContextCommand, parseContextCommand } from './contextArgs.js';
import { INIT_HOSTS, type InitHost } from './init/hosts.js';
import { HELP_OPTION, type OptionTable, parserOptions, type UsageError } from './options.js';
import { isTokenizerName, TOKENIZER_NAMES, type TokenizerName } from './tokenizer.js';

/** The commands, in the order the help lists them. */
export const COMMAND_NAMES = [
  'replay',
  'facts',
  'explain',
  'schema',
  'notes',
  'context',
  'mcp',
  'hook',
  'init',
] as const;
/** One command name. */
export type CommandName = (typeof COMMAND_NAMES)[number];

/** Options shared by the commands that retrieve facts for prompts. */
export interface RetrievalOptions {
  readonly maxFacts?: number;
  readonly maxTokens?: number;
  readonly tokenizer: TokenizerName;
  readonly layout?: SectionLayout;
}

/** `fact-tracker replay FILE`. */
export interface ReplayCommand extends RetrievalOptions {
  readonly name: 'replay';
  readonly file: string;
  readonly json: boolean;
  readonly asOf?: number;
  readonly save?: string;
}

/** `fact-tracker facts FILE`. */
export interface FactsCommand {
  readonly name: 'facts';
  readonly file: string;
  readonly json: boolean;
  readonly all: boolean;
  readonly tags: ReadonlyArray<FactTag>;
  readonly subject?: string;
  readonly asOf?: number;
}

/** `fact-tracker explain FILE --line N`. */
export interface ExplainCommand extends RetrievalOptions {
  readonly name: 'explain';
  readonly file: string;
  readonly line: number;
  readonly json: boolean;
}

/** `fact-tracker schema implementer|reviewer`. */
export interface SchemaCommand {
  readonly name: 'schema';
  readonly role: SourceRole;
}

/** `fact-tracker notes replay FILE`: a conversation log through the notable-facts ledger. */
export interface NotesCommand {
  readonly name: 'notes';
  readonly action: 'replay';
  readonly file: string;
  readonly json: boolean;
  readonly tokenizer: TokenizerName;
  /** Exchanges the main prompt keeps. */
  readonly turns?: number;
  readonly save?: string;
}

/** `fact-tracker mcp`: the MCP server over standard input and output. */
export interface McpCommand {
  readonly name: 'mcp';
  /** The sessions folder (default `.fact-tracker/sessions` under the working directory). */
  readonly sessionsDir?: string;
  readonly maxAnswerTokens?: number;
  readonly tokenizer: TokenizerName;
}

/** `fact-tracker hook`: one Claude Code or Codex hook event on standard input. */
export interface HookCommand extends RetrievalOptions {
  readonly name: 'hook';
  readonly sessionsDir?: string;
  /** Agent types matching it (ignoring case) are reviewers; default `review`. */
  readonly reviewerPattern?: RegExp;
}

/** `fact-tracker init claude|codex`: writes an agent's hook and MCP settings into a project. */
export interface InitCommand {
  readonly name: 'init';
  readonly host: InitHost;
  /** The project (default: the git work tree of the working directory, else the working directory). */
  readonly project?: string;
  /**
   * How the settings start this installation: Node on its entry point, or `npx --no-install`;
   * absent, `npx` when the package is installed in the project, else Node.
   */
  readonly via?: 'node' | 'npx';
}

/** `--help` (of a command, or of the whole tool) and `--version`. */
export type InfoCommand = { readonly name: 'help'; readonly topic?: CommandName } | { readonly name: 'version' };

/** A parsed command line. */
export type Command =
  | ReplayCommand
  | FactsCommand
  | ExplainCommand
  | SchemaCommand
  | NotesCommand
  | ContextCommand
  | McpCommand
  | HookCommand
  | InitCommand
  | InfoCommand;

export type { UsageError } from './options.js';

const isCommandName = (value: string | undefined): value is CommandName =>
  value !== undefined && (COMMAND_NAMES as ReadonlyArray<string>).includes(value);

const TOKENIZER_OPTION = {
  tokenizer: {
    type: 'string',
    value: 'NAME',
    help: "estimate: ceil(characters / 4) (default); o200k: GPT-4o's BPE tokenizer",
  },
} as const satisfies OptionTable;

const RETRIEVAL_OPTIONS = {
  'max-facts': {
    type: 'string',
    value: 'N',
    help: `facts per prompt, over the prompt's own maxFacts (default ${DEFAULT_MAX_FACTS})`,
  },
  'max-tokens': {
    type: 'string',
    value: 'N',
    help: `token budget per prompt, over the prompt's own maxTokens (default ${DEFAULT_MAX_TOKENS})`,
  },
  ...TOKENIZER_OPTION,
  layout: {
    type: 'string',
    value: 'NAME',
    help: "lines: one line per fact (default); grouped: a task's files on one line",
  },
} as const satisfies OptionTable;

const jsonOption = (shape: string): OptionTable => ({ json: { type: 'boolean', help: `one JSON document: ${shape}` } });

/** Every command's options, each declared once: the parser and the help pages are made from this table. */
export const COMMAND_OPTIONS: Readonly<Record<CommandName, OptionTable>> = {
  replay: {
    ...jsonOption('{"prompts", "errors", "facts", "summary"}'),
    ...RETRIEVAL_OPTIONS,
    'as-of': { type: 'string', value: 'TIME', help: 'stop the replay at the first event after TIME' },
    save: {
      type: 'string',
      value: 'STATE.json',
      help: 'write the final store as a saved state (read it with: fact-tracker facts)',
    },
    ...HELP_OPTION,
  },
  facts: {
    all: { type: 'boolean', help: 'closed facts too, with their valid-time interval' },
    tag: {
      type: 'string',
      multiple: true,
      value: 'TAG',
      help: `only facts carrying TAG (repeat for any of several):\n${FACT_TAGS.join(', ')}`,
    },
    subject: { type: 'string', value: 'TEXT', help: 'only facts whose subject contains TEXT (ignoring case)' },
    'as-of': { type: 'string', value: 'TIME', help: 'the facts valid at TIME (a history is replayed up to TIME)' },
    ...jsonOption('{"facts", "errors"}'),
    ...HELP_OPTION,
  },
  explain: {
    line: { type: 'string', value: 'N', help: 'the line of the prompt event (required)' },
    ...RETRIEVAL_OPTIONS,
    ...jsonOption('{"line", "taskId", "taskPrompt", "maxFacts", "maxTokens",\n"decisions", "errors"}'),
    ...HELP_OPTION,
  },
  schema: { ...HELP_OPTION },
  notes: {
    ...jsonOption('{"steps", "errors", "profiles", "summary"}'),
    turns: { type: 'string', value: 'N', help: 'exchanges of history the main prompt keeps (default 5)' },
    ...TOKENIZER_OPTION,
    save: { type: 'string', value: 'STATE.json', help: 'write the ledger as the "notes" section of a saved state' },
    ...HELP_OPTION,
  },
  context: CONTEXT_OPTIONS,
  mcp: {
    'sessions-dir': {
      type: 'string',
      value: 'DIR',
      help: 'where the session logs are (default .fact-tracker/sessions under\nthe working directory)',
    },
    'max-answer-tokens': {
      type: 'string',
      value: 'N',
      help: 'the largest answer of any tool, in tokens (default 8000, at least 1000)',
    },
    tokenizer: {
      type: 'string',
      value: 'NAME',
      help: 'estimate (default) or o200k; replay a session log with the same one',
    },
    ...HELP_OPTION,
  },
  hook: {
    'sessions-dir': {
      type: 'string',
      value: 'DIR',
      help: 'where the session logs are, relative to the project (default\n.fact-tracker/sessions)',
    },
    'reviewer-pattern': {
      type: 'string',
      value: 'RE',
      help: 'agent types whose results are reviews (default "review", ignoring case)',
    },
    'max-facts': { type: 'string', value: 'N', help: `facts per section (default ${DEFAULT_MAX_FACTS})` },
    'max-tokens': { type: 'string', value: 'N', help: `token budget per section (default ${DEFAULT_MAX_TOKENS})` },
    ...TOKENIZER_OPTION,
    ...HELP_OPTION,
  },
  init: {
    project: {
      type: 'string',
      value: 'DIR',
      help: 'the project to set up (default: the git work tree of the working\ndirectory, else the working directory)',
    },
    npx: {
      type: 'boolean',
      help: 'run "npx --no-install fact-tracker" (the copy installed in the\nproject): settings to commit. The default when the package is\ninstalled in the project',
    },
    node: {
      type: 'boolean',
      help: "run Node on this installation's absolute path: settings of this\nmachine only. The default when the package is not installed in\nthe project",
    },
    ...HELP_OPTION,
  },
};

type Values = Readonly<Record<string, unknown>>;

/**
 * What a `parseArgs` error tells the user: its first sentence (the rest hints at `--`, which does
 * not apply here), or, for an option followed by a value that starts with a dash, how to give
 * such a value.
 */
const parseMessage = (error: unknown): string => {
  const message = error instanceof Error ? error.message : String(error);
  const ambiguous = /^Option '(--[^'\s]+)' argument is ambiguous/u.exec(message);
  if (ambiguous !== null)
    return `${ambiguous[1]} needs a value; a value that starts with a dash is written ${ambiguous[1]}=VALUE`;
  return message.split(/\.\s/u)[0]!.replace(/\.$/u, '');
};

/** Runs `parseArgs` strictly. */
const tokenize = (
  command: CommandName,
  args: ReadonlyArray<string>,
): E.Either<UsageError, { values: Values; positionals: string[] }> =>
  E.tryCatch(
    () =>
      parseArgs({
        args: [...args],
        options: parserOptions(COMMAND_OPTIONS[command]),
        allowPositionals: true,
        strict: true,
      }),
    (error) => ({ message: parseMessage(error), command }),
  );

const usage = (command: CommandName, message: string): UsageError => ({ command, message });

const text = (values: Values, name: string): string | undefined => {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
};

const wholeNumber = (
  command: CommandName,
  values: Values,
  name: string,
  least: number,
): E.Either<UsageError, number | undefined> => {
  const value = text(values, name);
  if (value === undefined) return E.right(undefined);
  return /^\d+$/u.test(value) && Number(value) >= least && Number.isSafeInteger(Number(value))
    ? E.right(Number(value))
    : E.left(usage(command, `--${name} must be a whole number ${least} or more, not ${JSON.stringify(value)}`));
};

const time = (command: CommandName, values: Values): E.Either<UsageError, number | undefined> => {
  const value = text(values, 'as-of');
  if (value === undefined) return E.right(undefined);
  return pipe(
    parseTimeArgument(value),
    E.mapLeft((reason) =>
      usage(command, `--as-of: ${reason}; give ISO-8601 (2026-03-02T10:00:00Z) or epoch milliseconds`),
    ),
  );
};

const tokenizer = (command: CommandName, values: Values): E.Either<UsageError, TokenizerName> => {
  const value = text(values, 'tokenizer') ?? 'estimate';
  return isTokenizerName(value)
    ? E.right(value)
    : E.left(usage(command, `--tokenizer must be ${TOKENIZER_NAMES.join(' or ')}, not ${JSON.stringify(value)}`));
};

const layoutOption = (command: CommandName, values: Values): E.Either<UsageError, SectionLayout | undefined> => {
  const value = text(values, 'layout');
  if (value === undefined) return E.right(undefined);
  return (SECTION_LAYOUTS as ReadonlyArray<string>).includes(value)
    ? E.right(value as SectionLayout)
    : E.left(usage(command, `--layout must be ${SECTION_LAYOUTS.join(' or ')}, not ${JSON.stringify(value)}`));
};

const onePositional = (
  command: CommandName,
  positionals: ReadonlyArray<string>,
  what: string,
): E.Either<UsageError, string> =>
  positionals.length === 1
    ? E.right(positionals[0]!)
    : E.left(
        usage(
          command,
          positionals.length === 0
            ? `missing ${what}`
            : `expected one ${what}, got ${positionals.length}: ${positionals.join(' ')}`,
        ),
      );

const optional = <K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } =>
  (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };

const retrievalOptions = (command: CommandName, values: Values): E.Either<UsageError, RetrievalOptions> =>
  pipe(
    E.Do,
    E.apS('maxFacts', wholeNumber(command, values, 'max-facts', 0)),
    E.apS('maxTokens', wholeNumber(command, values, 'max-tokens', 0)),
    E.apS('tokenizer', tokenizer(command, values)),
    E.apS('layout', layoutOption(command, values)),
    E.map(({ maxFacts, maxTokens, tokenizer: name, layout }) => ({
      ...optional('maxFacts', maxFacts),
      ...optional('maxTokens', maxTokens),
      tokenizer: name,
      ...optional('layout', layout),
    })),
  );

const parseReplay = (values: Values, positionals: string[]): E.Either<UsageError, ReplayCommand> =>
  pipe(
    E.Do,
    E.apS('file', onePositional('replay', positionals, 'history FILE (- for standard input)')),
    E.apS('retrieval', retrievalOptions('replay', values)),
    E.apS('asOf', time('replay', values)),
    E.map(({ file, retrieval, asOf }) => ({
      name: 'replay' as const,
      file,
      json: values['json'] === true,
      ...retrieval,
      ...optional('asOf', asOf),
      ...optional('save', text(values, 'save')),
    })),
  );

const parseTags = (values: Values): E.Either<UsageError, ReadonlyArray<FactTag>> => {
  const given: unknown[] = Array.isArray(values['tag']) ? values['tag'] : [];
  const unknown = given.find((tag) => !isFactTag(tag));
  return unknown === undefined
    ? E.right(given.filter(isFactTag))
    : E.left(usage('facts', `--tag ${JSON.stringify(unknown)} is not a tag: use one of ${FACT_TAGS.join(', ')}`));
};

const parseFacts = (values: Values, positionals: string[]): E.Either<UsageError, FactsCommand> =>
  pipe(
    E.Do,
    E.apS('file', onePositional('facts', positionals, 'history or saved-state FILE (- for standard input)')),
    E.apS('tags', parseTags(values)),
    E.apS('asOf', time('facts', values)),
    E.map(({ file, tags, asOf }) => ({
      name: 'facts' as const,
      file,
      json: values['json'] === true,
      all: values['all'] === true,
      tags,
      ...optional('subject', text(values, 'subject')),
      ...optional('asOf', asOf),
    })),
  );

const parseExplain = (values: Values, positionals: string[]): E.Either<UsageError, ExplainCommand> =>
  pipe(
    E.Do,
    E.apS('file', onePositional('explain', positionals, 'history FILE (- for standard input)')),
    E.apS('line', wholeNumber('explain', values, 'line', 1)),
    E.chain((parsed) =>
      parsed.line === undefined
        ? E.left(usage('explain', 'missing --line N: the line of the prompt event to explain'))
        : E.right({ ...parsed, line: parsed.line }),
    ),
    E.apS('retrieval', retrievalOptions('explain', values)),
    E.map(({ file, line, retrieval }) => ({
      name: 'explain' as const,
      file,
      line,
      json: values['json'] === true,
      ...retrieval,
    })),
  );

const parseSchema = (positionals: string[]): E.Either<UsageError, SchemaCommand> =>
  pipe(
    onePositional('schema', positionals, 'role (implementer or reviewer)'),
    E.chain((role) =>
      isSourceRole(role)
        ? E.right({ name: 'schema' as const, role })
        : E.left(usage('schema', `unknown role ${JSON.stringify(role)}: expected implementer or reviewer`)),
    ),
  );

const parseNotes = (values: Values, positionals: string[]): E.Either<UsageError, NotesCommand> => {
  const [action, ...rest] = positionals;
  if (action !== 'replay')
    return E.left(
      usage(
        'notes',
        action === undefined
          ? 'missing subcommand: replay'
          : `unknown subcommand ${JSON.stringify(action)}: expected replay`,
      ),
    );
  return pipe(
    E.Do,
    E.apS('file', onePositional('notes', rest, 'conversation log FILE (- for standard input)')),
    E.apS('tokenizer', tokenizer('notes', values)),
    E.apS('turns', wholeNumber('notes', values, 'turns', 1)),
    E.map(({ file, tokenizer: name, turns }) => ({
      name: 'notes' as const,
      action,
      file,
      json: values['json'] === true,
      tokenizer: name,
      ...optional('turns', turns),
      ...optional('save', text(values, 'save')),
    })),
  );
};

const noPositionals = (command: CommandName, positionals: ReadonlyArray<string>): E.Either<UsageError, void> =>
  positionals.length === 0
    ? E.right(undefined)
    : E.left(usage(command, `takes no arguments, got: ${positionals.join(' ')}`));

const parseMcp = (values: Values, positionals: string[]): E.Either<UsageError, McpCommand> =>
  pipe(
    E.Do,
    E.apS('none', noPositionals('mcp', positionals)),
    E.apS('maxAnswerTokens', wholeNumber('mcp', values, 'max-answer-tokens', 1_000)),
    E.apS('tokenizer', tokenizer('mcp', values)),
    E.map(({ maxAnswerTokens, tokenizer: name }) => ({
      name: 'mcp' as const,
      tokenizer: name,
      ...optional('sessionsDir', text(values, 'sessions-dir')),
      ...optional('maxAnswerTokens', maxAnswerTokens),
    })),
  );

const pattern = (values: Values): E.Either<UsageError, RegExp | undefined> => {
  const source = text(values, 'reviewer-pattern');
  if (source === undefined) return E.right(undefined);
  return E.tryCatch(
    () => new RegExp(source, 'iu'),
    () => usage('hook', `--reviewer-pattern ${JSON.stringify(source)} is not a regular expression`),
  );
};

const parseHook = (values: Values, positionals: string[]): E.Either<UsageError, HookCommand> =>
  pipe(
    E.Do,
    E.apS('none', noPositionals('hook', positionals)),
    E.apS('retrieval', retrievalOptions('hook', values)),
    E.apS('reviewerPattern', pattern(values)),
    E.map(({ retrieval, reviewerPattern }) => ({
      name: 'hook' as const,
      ...retrieval,
      ...optional('sessionsDir', text(values, 'sessions-dir')),
      ...optional('reviewerPattern', reviewerPattern),
    })),
  );

const parseInit = (values: Values, positionals: string[]): E.Either<UsageError, InitCommand> =>
  pipe(
    onePositional('init', positionals, `agent (${INIT_HOSTS.join(' or ')})`),
    E.chain((host) =>
      (INIT_HOSTS as ReadonlyArray<string>).includes(host)
        ? values['npx'] === true && values['node'] === true
          ? E.left(usage('init', '--npx and --node choose two ways to run it: give one'))
          : E.right({
              name: 'init' as const,
              host: host as InitHost,
              ...(values['npx'] === true
                ? { via: 'npx' as const }
                : values['node'] === true
                  ? { via: 'node' as const }
                  : {}),
              ...optional('project', text(values, 'project')),
            })
        : E.left(usage('init', `unknown agent ${JSON.stringify(host)}: expected ${INIT_HOSTS.join(' or ')}`)),
    ),
  );

/** True when `flag` appears before a `--` terminator. */
const hasFlag = (args: ReadonlyArray<string>, ...flags: string[]): boolean => {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((arg) => flags.includes(arg));
};

/** Parses the arguments after the program name. `--help` wins over everything else on its line. */
export const parseCommandLine = (argv: ReadonlyArray<string>): E.Either<UsageError, Command> => {
  const [first, ...rest] = argv;
  if (first === undefined) return E.left({ message: `missing command: one of ${COMMAND_NAMES.join(', ')}` });
  if (first === '--version' || first === '-V') return E.right({ name: 'version' });
  if (first === '--help' || first === '-h') return E.right({ name: 'help' });
  if (first === 'help') {
    const topic = rest[0];
    if (topic === undefined) return E.right({ name: 'help' });
    return isCommandName(topic)
      ? E.right({ name: 'help', topic })
      : E.left({ message: `no help for unknown command ${JSON.stringify(topic)}` });
  }
  if (!isCommandName(first))
    return E.left({ message: `unknown command ${JSON.stringify(first)}: expected one of ${COMMAND_NAMES.join(', ')}` });
  if (hasFlag(rest, '--help', '-h')) return E.right({ name: 'help', topic: first });
  return pipe(
    tokenize(first, rest),
    E.chain(({ values, positionals }): E.Either<UsageError, Command> => {
      switch (first) {
        case 'replay':
          return parseReplay(values, positionals);
        case 'facts':
          return parseFacts(values, positionals);
        case 'explain':
          return parseExplain(values, positionals);
        case 'schema':
          return parseSchema(positionals);
        case 'notes':
          return parseNotes(values, positionals);
        case 'context':
          return parseContextCommand(values, positionals);
        case 'mcp':
          return parseMcp(values, positionals);
        case 'hook':
          return parseHook(values, positionals);
        case 'init':
          return parseInit(values, positionals);
      }
    }),
  );
};
