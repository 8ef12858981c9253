/** `fact-tracker schema implementer|reviewer`: the JSON Schema of a dispatch result contract. */
import * as E from 'fp-ts/lib/Either.js';
import type * as TE from 'fp-ts/lib/TaskEither.js';
import { dispatchResultJsonSchema } from '../../core/extract/contract.js';
import type { SchemaCommand } from '../command.js';
import { type CliIo, EXIT_OK } from '../io.js';
import { toJson } from './shared.js';

/** Prints the schema generated from the validating zod schema, never a hand-written copy. */
export const runSchema =
  (command: SchemaCommand, io: CliIo): TE.TaskEither<string, number> =>
  async () => {
    io.stdout(toJson(dispatchResultJsonSchema(command.role)));
    return E.right(EXIT_OK);
  };
