/**
 * The command-line values that name live sessions and their store: what `replay`, `facts` and
 * `explain` read (a FILE, or `--session ID` from a store), where `mcp` and `hook` keep sessions
 * (`--store` or `--sessions-dir`, not both), and the `sessions` and `db` commands.
 */
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import type { CommandName, DbCommand, HistoryInput, SessionsCommand } from './command.js';
import { onePositional, optionalField, type OptionValues, stringOption, usageError } from './optionValues.js';
import type { UsageError } from './options.js';

/** The store `--store` names, when given (and not empty). */
const storeValue = (command: CommandName, values: OptionValues): E.Either<UsageError, string | undefined> => {
  const store = stringOption(values, 'store');
  return store !== undefined && store.trim() === ''
    ? E.left(usageError(command, '--store needs a folder or a postgres:// URL'))
    : E.right(store);
};

/**
 * What a reading command reads: its FILE argument, or `--session ID` (from `--store`, else the
 * environment's store, else the project's folder). `--store` without `--session` is refused: a
 * FILE is read as it is, wherever the sessions are.
 */
export const historyInput = (
  command: CommandName,
  values: OptionValues,
  positionals: ReadonlyArray<string>,
  what: string,
): E.Either<UsageError, HistoryInput> =>
  pipe(
    storeValue(command, values),
    E.chain((store) => {
      const id = stringOption(values, 'session');
      if (id === undefined)
        return store === undefined
          ? E.map((file: string): HistoryInput => ({ kind: 'file', file }))(onePositional(command, positionals, what))
          : E.left(
              usageError(command, '--store names where --session ID is read from: give --session ID, or a FILE alone'),
            );
      if (positionals.length > 0)
        return E.left(usageError(command, `give a FILE or --session ID, not both (got ${positionals.join(' ')})`));
      return E.right({ kind: 'session', id, ...optionalField('store', store) });
    }),
  );

/** `--store` and `--sessions-dir` of `mcp` and `hook`: at most one of them. */
export const sessionsPlace = (
  command: CommandName,
  values: OptionValues,
): E.Either<UsageError, { readonly store?: string; readonly sessionsDir?: string }> =>
  pipe(
    storeValue(command, values),
    E.chain((store) => {
      const sessionsDir = stringOption(values, 'sessions-dir');
      if (sessionsDir !== undefined && sessionsDir.trim() === '')
        return E.left(usageError(command, '--sessions-dir needs a folder'));
      return store !== undefined && sessionsDir !== undefined
        ? E.left(usageError(command, '--store and --sessions-dir both say where the sessions are: give one'))
        : E.right({ ...optionalField('store', store), ...optionalField('sessionsDir', sessionsDir) });
    }),
  );

const SESSIONS_ACTIONS = ['list', 'export', 'delete'] as const;

/** `fact-tracker sessions list|export ID|delete ID [--store STORE]`. */
export const parseSessions = (
  values: OptionValues,
  positionals: ReadonlyArray<string>,
): E.Either<UsageError, SessionsCommand> => {
  const [action, ...rest] = positionals;
  if (action === undefined || !(SESSIONS_ACTIONS as ReadonlyArray<string>).includes(action))
    return E.left(
      usageError(
        'sessions',
        action === undefined
          ? `missing subcommand: ${SESSIONS_ACTIONS.join(', ')}`
          : `unknown subcommand ${JSON.stringify(action)}: expected ${SESSIONS_ACTIONS.join(', ')}`,
      ),
    );
  return pipe(
    storeValue('sessions', values),
    E.chain((store): E.Either<UsageError, SessionsCommand> => {
      if (action === 'list')
        return rest.length === 0
          ? E.right({ name: 'sessions', action, ...optionalField('store', store) })
          : E.left(usageError('sessions', `list takes no arguments, got: ${rest.join(' ')}`));
      return E.map((id: string): SessionsCommand => ({
        name: 'sessions',
        action: action as 'export' | 'delete',
        id,
        ...optionalField('store', store),
      }))(onePositional('sessions', rest, 'session ID'));
    }),
  );
};

/** `fact-tracker db migrate [--store URL] [--print]`. */
export const parseDb = (values: OptionValues, positionals: ReadonlyArray<string>): E.Either<UsageError, DbCommand> => {
  const [action, ...rest] = positionals;
  if (action !== 'migrate')
    return E.left(
      usageError(
        'db',
        action === undefined
          ? 'missing subcommand: migrate'
          : `unknown subcommand ${JSON.stringify(action)}: expected migrate`,
      ),
    );
  if (rest.length > 0) return E.left(usageError('db', `migrate takes no arguments, got: ${rest.join(' ')}`));
  return E.map((store: string | undefined): DbCommand => ({
    name: 'db',
    action,
    print: values['print'] === true,
    ...optionalField('store', store),
  }))(storeValue('db', values));
};
