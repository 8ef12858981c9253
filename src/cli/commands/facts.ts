/** `fact-tracker facts FILE`: the facts of a history or of a saved state, as a table. */
import * as TE from 'fp-ts/lib/TaskEither.js';
import { pipe } from 'fp-ts/lib/function.js';
import { selectFactsWhere } from '../../core/store/selectors.js';
import type { FactsCommand } from '../command.js';
import type { CliIo } from '../io.js';
import { renderFacts } from '../render.js';
import { createStyle } from '../style.js';
import { loadStore } from './history.js';
import { printReport, toJson } from './shared.js';

/** Prints the selected facts; resolves to the exit status. */
export const runFacts = (command: FactsCommand, io: CliIo): TE.TaskEither<string, number> =>
  pipe(
    loadStore(io, command.input, command.asOf),
    TE.chain(({ store, rejected }) => {
      const facts = selectFactsWhere(store, command);
      return TE.fromTask(
        printReport(
          io,
          'facts',
          command.json
            ? toJson({ facts, ...rejected })
            : `${renderFacts(facts, rejected, command.all, createStyle(io.colour))}\n`,
          rejected.errors,
          rejected.errorsOmitted,
        ),
      );
    }),
  );
