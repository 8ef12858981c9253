/**
 * `fact-tracker db migrate`: a PostgreSQL store's schema, created or brought up to date ahead
 * of first use (by a role that may, so the agents' role needs only to read and write), or
 * with `--print` the SQL that does it, connecting to nothing.
 */
import * as E from 'fp-ts/lib/Either.js';
import type * as TE from 'fp-ts/lib/TaskEither.js';
import type { DbCommand } from '../command.js';
import { type CliIo, EXIT_OK } from '../io.js';
import { chooseStore, STORE_VARIABLE } from '../store.js';

/** What migrating did, in words. */
const said = (schema: string, from: number, to: number, location: string): string =>
  from === to
    ? `the schema ${schema} at ${location} is at version ${to}: nothing to do\n`
    : from === 0
      ? `created the schema ${schema} at ${location} (version ${to})\n`
      : `migrated the schema ${schema} at ${location} from version ${from} to ${to}\n`;

/** Prints the SQL, or migrates and says what it did; resolves to exit status 0, or a one-line failure. */
export const runDb =
  (command: DbCommand, io: CliIo): TE.TaskEither<string, number> =>
  async () => {
    const { DEFAULT_SCHEMA } = await import('../../postgres/database.js');
    const { migrate, schemaSql } = await import('../../postgres/schema.js');
    if (command.print) {
      io.stdout(schemaSql());
      return E.right(EXIT_OK);
    }
    const choice = chooseStore(command.store === undefined ? {} : { store: command.store }, io.env);
    if (E.isLeft(choice)) return E.left(`${choice.left.code}: ${choice.left.message}`);
    if (choice.right.kind !== 'postgres')
      return E.left(
        `db migrate needs a PostgreSQL store: give --store postgres://... or set ${STORE_VARIABLE} (a folder needs no schema)`,
      );
    const migrated = await migrate(choice.right.address.url);
    if (E.isLeft(migrated)) return E.left(`${migrated.left.code}: ${migrated.left.message}`);
    const { from, to, location } = migrated.right;
    io.stdout(said(DEFAULT_SCHEMA, from, to, location));
    return E.right(EXIT_OK);
  };
