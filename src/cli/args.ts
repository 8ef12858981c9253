/**
 * The command line, parsed into one typed `Command` or a usage error: `parseArgs` on the
 * command's option table (`commandOptions.ts`), then each command's values checked
 * (`optionValues.ts`).
 */
import { parseArgs } from 'node:util';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import { isBlank } from '../base/text.js';
import { FACT_TAGS, type FactTag, isFactTag, isSourceRole } from '../core/fact.js';
import {
  COMMAND_NAMES,
  type Command,
  type CommandName,
  type ExplainCommand,
  type FactsCommand,
  type HookCommand,
  type InitCommand,
  isCommandName,
  type McpCommand,
  type NotesCommand,
  type ReplayCommand,
  type SchemaCommand,
} from './command.js';
import { COMMAND_OPTIONS } from './commandOptions.js';
import { parseContextCommand } from './contextArgs.js';
import { INIT_HOSTS, type InitHost } from './init/hosts.js';
import {
  asOfOption,
  fileOption,
  layoutOption,
  noPositionals,
  onePositional,
  optionalField,
  type OptionValues,
  retrievalOptions,
  stringOption,
  tokenizerOption,
  usageError,
  wholeNumberOption,
} from './optionValues.js';
import { type GivenOption, type OptionTable, parserOptions, repeatedOption, type UsageError } from './options.js';
import { historyInput, parseDb, parseSessions, sessionsPlace } from './storeArgs.js';

// The parser's result types, also where they were declared before command.ts held them.
export type {
  Command,
  CommandName,
  DbCommand,
  ExplainCommand,
  FactsCommand,
  HistoryInput,
  HookCommand,
  InfoCommand,
  InitCommand,
  McpCommand,
  NotesCommand,
  ReplayCommand,
  RetrievalOptions,
  SchemaCommand,
  SessionsCommand,
} from './command.js';
export type { UsageError } from './options.js';

/**
 * What a `parseArgs` error tells the user: its first sentence (the rest hints at `--`, which does
 * not apply here); for an option given no value, or a value that starts with a dash, how to
 * give one, with the value's name in `table`.
 */
const parseMessage = (error: Error, table: OptionTable): string => {
  const { message } = error;
  const ambiguous = /^Option '(--[^'\s]+)' argument is ambiguous/u.exec(message);
  if (ambiguous !== null)
    return `${ambiguous[1]} needs a value; a value that starts with a dash is written ${ambiguous[1]}=VALUE`;
  const missing = /^Option '(?:-[^-\s], )?--([^'\s]+) <value>' argument missing/u.exec(message);
  if (missing !== null) return `--${missing[1]} needs a value: --${missing[1]} ${table[missing[1]!]?.value ?? 'VALUE'}`;
  return message.split(/\.\s/u)[0]!.replace(/\.$/u, '');
};

/** True for what `parseArgs` throws about the arguments (`ERR_PARSE_ARGS_*`), not about its own configuration. */
const isArgumentError = (error: unknown): error is Error =>
  error instanceof Error && String((error as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS_');

/** Runs `parseArgs` strictly. */
const tokenize = (
  command: CommandName,
  args: ReadonlyArray<string>,
): E.Either<UsageError, { values: OptionValues; positionals: string[]; given: ReadonlyArray<GivenOption> }> => {
  try {
    const { values, positionals, tokens } = parseArgs({
      args: [...args],
      options: parserOptions(COMMAND_OPTIONS[command]),
      allowPositionals: true,
      strict: true,
      tokens: true,
    });
    return E.right({ values, positionals, given: tokens });
  } catch (error) {
    if (!isArgumentError(error)) throw error;
    return E.left({ message: parseMessage(error, COMMAND_OPTIONS[command]), command });
  }
};

/**
 * Nothing, when each option of `command` that takes one value was given at most once; else a
 * usage error naming the first one given again, which the parser would keep silently.
 */
const onceEach = (command: CommandName, given: ReadonlyArray<GivenOption>): E.Either<UsageError, void> => {
  const table = COMMAND_OPTIONS[command];
  const repeated = repeatedOption(table, given);
  return repeated === undefined
    ? E.right(undefined)
    : E.left(
        usageError(command, `--${repeated} is given more than once: it takes one ${table[repeated]?.value ?? 'value'}`),
      );
};

const parseReplay = (values: OptionValues, positionals: string[]): E.Either<UsageError, ReplayCommand> =>
  pipe(
    E.Do,
    E.apS('input', historyInput('replay', values, positionals, 'history FILE (- for standard input)')),
    E.apS('retrieval', retrievalOptions('replay', values)),
    E.apS('asOf', asOfOption('replay', values)),
    E.apS('save', fileOption('replay', values, 'save')),
    E.map(({ input, retrieval, asOf, save }) => ({
      name: 'replay' as const,
      input,
      json: values['json'] === true,
      ...retrieval,
      ...optionalField('asOf', asOf),
      ...optionalField('save', save),
    })),
  );

const parseTags = (values: OptionValues): E.Either<UsageError, ReadonlyArray<FactTag>> => {
  const given: unknown[] = Array.isArray(values['tag']) ? values['tag'] : [];
  const unknown = given.find((tag) => !isFactTag(tag));
  return unknown === undefined
    ? E.right(given.filter(isFactTag))
    : E.left(usageError('facts', `--tag ${JSON.stringify(unknown)} is not a tag: use one of ${FACT_TAGS.join(', ')}`));
};

/** `--subject S`, when given: a blank one (an unset variable) would match every fact, so it is refused. */
const subjectOption = (values: OptionValues): E.Either<UsageError, string | undefined> => {
  const subject = stringOption(values, 'subject');
  return subject !== undefined && isBlank(subject)
    ? E.left(usageError('facts', '--subject needs a subject (a path or a name): the value given is blank'))
    : E.right(subject);
};

const parseFacts = (values: OptionValues, positionals: string[]): E.Either<UsageError, FactsCommand> =>
  pipe(
    E.Do,
    E.apS('input', historyInput('facts', values, positionals, 'history or saved-state FILE (- for standard input)')),
    E.apS('subject', subjectOption(values)),
    E.apS('tags', parseTags(values)),
    E.apS('asOf', asOfOption('facts', values)),
    E.map(({ input, subject, tags, asOf }) => ({
      name: 'facts' as const,
      input,
      json: values['json'] === true,
      all: values['all'] === true,
      tags,
      ...optionalField('subject', subject),
      ...optionalField('asOf', asOf),
    })),
  );

const parseExplain = (values: OptionValues, positionals: string[]): E.Either<UsageError, ExplainCommand> =>
  pipe(
    E.Do,
    E.apS('input', historyInput('explain', values, positionals, 'history FILE (- for standard input)')),
    E.apS('line', wholeNumberOption('explain', values, 'line', 1)),
    E.chain((parsed) =>
      parsed.line === undefined
        ? E.left(usageError('explain', 'missing --line N: the line of the prompt event to explain'))
        : E.right({ ...parsed, line: parsed.line }),
    ),
    E.apS('retrieval', retrievalOptions('explain', values)),
    E.map(({ input, line, retrieval }) => ({
      name: 'explain' as const,
      input,
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
        : E.left(usageError('schema', `unknown role ${JSON.stringify(role)}: expected implementer or reviewer`)),
    ),
  );

const parseNotes = (values: OptionValues, positionals: string[]): E.Either<UsageError, NotesCommand> => {
  const [action, ...rest] = positionals;
  if (action !== 'replay')
    return E.left(
      usageError(
        'notes',
        action === undefined
          ? 'missing subcommand: replay'
          : `unknown subcommand ${JSON.stringify(action)}: expected replay`,
      ),
    );
  return pipe(
    E.Do,
    E.apS('file', onePositional('notes', rest, 'conversation log FILE (- for standard input)')),
    E.apS('tokenizer', tokenizerOption('notes', values)),
    E.apS('turns', wholeNumberOption('notes', values, 'turns', 1)),
    E.apS('save', fileOption('notes', values, 'save')),
    E.map(({ file, tokenizer: name, turns, save }) => ({
      name: 'notes' as const,
      action,
      file,
      json: values['json'] === true,
      tokenizer: name,
      ...optionalField('turns', turns),
      ...optionalField('save', save),
    })),
  );
};

const parseMcp = (values: OptionValues, positionals: string[]): E.Either<UsageError, McpCommand> =>
  pipe(
    E.Do,
    E.apS('none', noPositionals('mcp', positionals)),
    E.apS('maxAnswerTokens', wholeNumberOption('mcp', values, 'max-answer-tokens', 1_000)),
    E.apS('tokenizer', tokenizerOption('mcp', values)),
    E.apS('layout', layoutOption('mcp', values)),
    E.apS('place', sessionsPlace('mcp', values)),
    E.map(({ maxAnswerTokens, tokenizer: name, layout, place }) => ({
      name: 'mcp' as const,
      tokenizer: name,
      ...place,
      ...optionalField('maxAnswerTokens', maxAnswerTokens),
      ...optionalField('layout', layout),
    })),
  );

const pattern = (values: OptionValues): E.Either<UsageError, RegExp | undefined> => {
  const source = stringOption(values, 'reviewer-pattern');
  if (source === undefined) return E.right(undefined);
  // An empty pattern matches every agent type: every subagent's answer would be read as a review.
  if (source === '')
    return E.left(
      usageError(
        'hook',
        `--reviewer-pattern is empty, a pattern every agent type matches: give the words of your reviewers' types, or leave it out for "review" (but not "preview")`,
      ),
    );
  try {
    return E.right(new RegExp(source, 'iu'));
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    return E.left(usageError('hook', `--reviewer-pattern ${JSON.stringify(source)} is not a regular expression`));
  }
};

const parseHook = (values: OptionValues, positionals: string[]): E.Either<UsageError, HookCommand> =>
  pipe(
    E.Do,
    E.apS('none', noPositionals('hook', positionals)),
    E.apS('retrieval', retrievalOptions('hook', values)),
    E.apS('reviewerPattern', pattern(values)),
    E.apS('place', sessionsPlace('hook', values)),
    E.map(({ retrieval, reviewerPattern, place }) => ({
      name: 'hook' as const,
      ...retrieval,
      ...place,
      ...optionalField('reviewerPattern', reviewerPattern),
    })),
  );

/**
 * `--project DIR` of `init`, when given: an empty one (`--project "$DIR"` of an unset variable),
 * or one of invisible characters only (U+200B), names no folder.
 */
const projectOption = (values: OptionValues): E.Either<UsageError, string | undefined> => {
  const project = stringOption(values, 'project');
  return project !== undefined && isBlank(project)
    ? E.left(usageError('init', '--project needs a folder'))
    : E.right(project);
};

const parseInit = (values: OptionValues, positionals: string[]): E.Either<UsageError, InitCommand> =>
  pipe(
    projectOption(values),
    E.chain(() => layoutOption('init', values)),
    E.chain((layout) =>
      pipe(
        onePositional('init', positionals, `agent (${INIT_HOSTS.join(' or ')})`),
        E.map((host) => ({ host, layout })),
      ),
    ),
    E.chain(({ host, layout }) =>
      (INIT_HOSTS as ReadonlyArray<string>).includes(host)
        ? values['npx'] === true && values['node'] === true
          ? E.left(usageError('init', '--npx and --node choose two ways to run it: give one'))
          : E.right({
              name: 'init' as const,
              host: host as InitHost,
              ...(values['npx'] === true
                ? { via: 'npx' as const }
                : values['node'] === true
                  ? { via: 'node' as const }
                  : {}),
              ...optionalField('project', stringOption(values, 'project')),
              ...optionalField('store', stringOption(values, 'store')),
              ...optionalField('layout', layout),
            })
        : E.left(usageError('init', `unknown agent ${JSON.stringify(host)}: expected ${INIT_HOSTS.join(' or ')}`)),
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
  if (first === '--version' || first === '-V')
    return hasFlag(rest, '--help', '-h')
      ? E.right({ name: 'help' })
      : rest.length === 0
        ? E.right({ name: 'version' })
        : E.left({ message: `${first} takes no arguments (given ${JSON.stringify(rest[0])})` });
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
    // Every command alike: an option that takes one value, given twice, is refused before its values are read.
    E.chainFirst(({ given }) => onceEach(first, given)),
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
        case 'sessions':
          return parseSessions(values, positionals);
        case 'db':
          return parseDb(values, positionals);
      }
    }),
  );
};
