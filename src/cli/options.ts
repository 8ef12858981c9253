/**
 * Option tables: each option of the command line is declared once, with its help text, and
 * both the parser (`node:util` `parseArgs`) and the `--help` pages are generated from the same
 * table, so an option's name, shape and description cannot drift apart.
 */
import type { ParseArgsConfig } from 'node:util';

/** One option: its shape for the parser and its line in the help. */
export interface OptionSpec {
  readonly type: 'string' | 'boolean';
  readonly multiple?: boolean;
  readonly short?: string;
  /** How the help names the option's value (`N`, `FILE`, ...); string options only. */
  readonly value?: string;
  /** What the option does; a `\n` starts a continuation line. */
  readonly help: string;
}

/** The options of one command, by name. */
export type OptionTable = Readonly<Record<string, OptionSpec>>;

/** A command line that cannot run; `command` says whose help to point to. */
export interface UsageError {
  readonly message: string;
  readonly command?: string;
}

/** The `-h, --help` option every command has. */
export const HELP_OPTION = { help: { type: 'boolean', short: 'h', help: 'this help' } } as const satisfies OptionTable;

/** The table in the shape `parseArgs` takes. */
export const parserOptions = (table: OptionTable): NonNullable<ParseArgsConfig['options']> =>
  Object.fromEntries(
    Object.entries(table).map(([name, { type, multiple, short }]) => [
      name,
      { type, ...(multiple === true ? { multiple } : {}), ...(short === undefined ? {} : { short }) },
    ]),
  );

/** One option as the command line gave it: what `parseArgs` reports of it with `tokens: true`. */
export interface GivenOption {
  readonly kind: string;
  readonly name?: string;
}

/**
 * The first option of `table` that takes one value and was given more than once (`--summary a
 * --summary b`), when there is one: the parser keeps the last, so the other would be dropped
 * without a word. Options marked `multiple` take each; a flag given twice says the same thing.
 */
export const repeatedOption = (table: OptionTable, given: ReadonlyArray<GivenOption>): string | undefined => {
  const seen = new Set<string>();
  for (const { kind, name } of given) {
    const spec = name === undefined ? undefined : table[name];
    if (kind !== 'option' || spec === undefined || spec.type !== 'string' || spec.multiple === true) continue;
    if (seen.has(name!)) return name;
    seen.add(name!);
  }
  return undefined;
};

/** Where the descriptions start: wide enough for the longest option of the tool. */
const DESCRIPTION_COLUMN = 24;

const optionLabel = (name: string, { short, value, type }: OptionSpec): string =>
  `${short === undefined ? '' : `-${short}, `}--${name}${type === 'string' && value !== undefined ? ` ${value}` : ''}`;

/**
 * The help lines of `names` (default: the whole table, in its order), aligned in two columns;
 * `help` comes last, as every page ends with it.
 */
export const formatOptions = (table: OptionTable, names: ReadonlyArray<string> = Object.keys(table)): string => {
  const ordered = [...names.filter((name) => name !== 'help'), ...names.filter((name) => name === 'help')];
  return ordered
    .flatMap((name) => {
      const spec = table[name];
      if (spec === undefined) return [];
      const label = `  ${optionLabel(name, spec)}`;
      const [first = '', ...rest] = spec.help.split('\n');
      const pad = label.length <= DESCRIPTION_COLUMN - 2 ? ' '.repeat(DESCRIPTION_COLUMN - label.length) : '  ';
      return [`${label}${pad}${first}`, ...rest.map((line) => `${' '.repeat(DESCRIPTION_COLUMN)}${line}`)];
    })
    .join('\n');
};
