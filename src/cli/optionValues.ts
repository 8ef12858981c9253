/**
 * The values of options and arguments, checked where they enter: each reader takes what
 * `parseArgs` gave and returns the typed value, or a usage error naming the option and what it
 * accepts.
 */
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import { parseTimeArgument } from '../base/time.js';
import { isSectionLayout, SECTION_LAYOUTS, type SectionLayout } from '../core/retrieve/defaults.js';
import type { CommandName, RetrievalOptions } from './command.js';
import type { UsageError } from './options.js';
import { DEFAULT_TOKENIZER, isTokenizerName, TOKENIZER_NAMES, type TokenizerName } from '../tokens/names.js';

/** The option values `parseArgs` returns, by option name. */
export type OptionValues = Readonly<Record<string, unknown>>;

/** A usage error pointing to `command`'s help. */
export const usageError = (command: CommandName, message: string): UsageError => ({ command, message });

/** The value of a string option, when it was given. */
export const stringOption = (values: OptionValues, name: string): string | undefined => {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
};

/** `--name N`: a whole number of at least `least` (and a safe integer), when it was given. */
export const wholeNumberOption = (
  command: CommandName,
  values: OptionValues,
  name: string,
  least: number,
): E.Either<UsageError, number | undefined> => {
  const value = stringOption(values, name);
  if (value === undefined) return E.right(undefined);
  if (!/^\d+$/u.test(value) || Number(value) < least)
    return E.left(
      usageError(command, `--${name} must be a whole number ${least} or more, not ${JSON.stringify(value)}`),
    );
  return Number.isSafeInteger(Number(value))
    ? E.right(Number(value))
    : E.left(
        usageError(
          command,
          `--${name} ${value} is too large: it may be at most ${Number.MAX_SAFE_INTEGER.toLocaleString('en-US')}`,
        ),
      );
};

/** `--as-of TIME` in epoch milliseconds, when it was given. */
export const asOfOption = (command: CommandName, values: OptionValues): E.Either<UsageError, number | undefined> => {
  const value = stringOption(values, 'as-of');
  if (value === undefined) return E.right(undefined);
  return pipe(
    parseTimeArgument(value),
    E.mapLeft(({ message }) =>
      usageError(command, `--as-of: ${message}; give ISO-8601 (2026-03-02T10:00:00Z) or epoch milliseconds`),
    ),
  );
};

/**
 * `--NAME VALUE` for an option that takes one of `choices`, when it was given: a value not among
 * them is a usage error naming them.
 */
const choiceOption = <T extends string>(
  command: CommandName,
  values: OptionValues,
  name: string,
  choices: ReadonlyArray<T>,
  isChoice: (value: unknown) => value is T,
): E.Either<UsageError, T | undefined> => {
  const value = stringOption(values, name);
  if (value === undefined) return E.right(undefined);
  return isChoice(value)
    ? E.right(value)
    : E.left(usageError(command, `--${name} must be ${choices.join(' or ')}, not ${JSON.stringify(value)}`));
};

/** `--tokenizer NAME`, when it was given. */
export const givenTokenizerOption = (
  command: CommandName,
  values: OptionValues,
): E.Either<UsageError, TokenizerName | undefined> =>
  choiceOption(command, values, 'tokenizer', TOKENIZER_NAMES, isTokenizerName);

/** `--tokenizer NAME`, `estimate` when it was not given. */
export const tokenizerOption = (command: CommandName, values: OptionValues): E.Either<UsageError, TokenizerName> =>
  E.map((name: TokenizerName | undefined) => name ?? DEFAULT_TOKENIZER)(givenTokenizerOption(command, values));

/** `--layout LAYOUT`, when it was given. */
export const layoutOption = (
  command: CommandName,
  values: OptionValues,
): E.Either<UsageError, SectionLayout | undefined> =>
  choiceOption(command, values, 'layout', SECTION_LAYOUTS, isSectionLayout);

/** The one argument a command takes (`what` names it in the error when there is none, or more). */
export const onePositional = (
  command: CommandName,
  positionals: ReadonlyArray<string>,
  what: string,
): E.Either<UsageError, string> =>
  positionals.length === 1
    ? positionals[0]!.trim() === ''
      ? E.left(usageError(command, `missing ${what}: the argument given is empty`))
      : E.right(positionals[0]!)
    : E.left(
        usageError(
          command,
          positionals.length === 0
            ? `missing ${what}`
            : `expected one ${what}, got ${positionals.length}: ${positionals.join(' ')}`,
        ),
      );

/** Nothing, for a command that takes no arguments; else a usage error listing them. */
export const noPositionals = (command: CommandName, positionals: ReadonlyArray<string>): E.Either<UsageError, void> =>
  positionals.length === 0
    ? E.right(undefined)
    : E.left(usageError(command, `takes no arguments, got: ${positionals.join(' ')}`));

/** `{ [key]: value }`, or no field at all when the value is undefined (optional properties are exact). */
export const optionalField = <K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } =>
  (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };

/** `--max-facts`, `--max-tokens`, `--tokenizer` and `--layout`, for the commands that retrieve facts. */
export const retrievalOptions = (command: CommandName, values: OptionValues): E.Either<UsageError, RetrievalOptions> =>
  pipe(
    E.Do,
    E.apS('maxFacts', wholeNumberOption(command, values, 'max-facts', 0)),
    E.apS('maxTokens', wholeNumberOption(command, values, 'max-tokens', 0)),
    E.apS('tokenizer', givenTokenizerOption(command, values)),
    E.apS('layout', layoutOption(command, values)),
    E.map(({ maxFacts, maxTokens, tokenizer, layout }) => ({
      ...optionalField('maxFacts', maxFacts),
      ...optionalField('maxTokens', maxTokens),
      ...optionalField('tokenizer', tokenizer),
      ...optionalField('layout', layout),
    })),
  );

/**
 * `--name FILE`, when it was given: a file name, not an empty one, nor `-`, which names standard
 * input or output everywhere else on the command line (a file called `-` would be made instead).
 */
export const fileOption = (
  command: CommandName,
  values: OptionValues,
  name: string,
): E.Either<UsageError, string | undefined> => {
  const value = stringOption(values, name);
  return value === '-'
    ? E.left(usageError(command, `--${name} writes a file: give its name (- does not name one; ./- does)`))
    : value !== undefined && value.trim() === ''
      ? E.left(usageError(command, `--${name} needs a file name`))
      : E.right(value);
};
