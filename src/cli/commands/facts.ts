/** `fact-tracker facts FILE`: the facts of a history or of a saved state, as a table. */
import * as E from 'fp-ts/lib/Either.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import { pipe } from 'fp-ts/lib/function.js';
import { type ReplayError, replayHistory } from '../../history/replay.js';
import { selectFactsWhere } from '../../store/selectors.js';
import type { FactStore } from '../../store/state.js';
import type { FactsCommand } from '../args.js';
import type { CliIo } from '../io.js';
import { renderFacts } from '../render.js';
import { isSavedStateText, parseSavedState } from '../source.js';
import { createStyle } from '../style.js';
import { exitStatusFor, progressOnStderr, toJson } from './shared.js';

interface LoadedFacts {
  readonly store: FactStore;
  readonly errors: ReadonlyArray<ReplayError>;
}

/** A saved state is decoded whole or refused; a history is replayed up to `--as-of`. */
const loadStore = (io: CliIo, command: FactsCommand, text: string): E.Either<string, LoadedFacts> => {
  if (isSavedStateText(text))
    return pipe(
      parseSavedState(text),
      E.bimap(
        (reason) => `${command.file}: ${reason}`,
        (store) => ({ store, errors: [] }),
      ),
    );
  const progress = progressOnStderr(io);
  const { store, report } = replayHistory(text, {
    ...(command.asOf === undefined ? {} : { asOf: command.asOf }),
    ...(progress.onProgress === undefined ? {} : { onProgress: progress.onProgress }),
  });
  progress.finish();
  return E.right({ store, errors: report.errors });
};

/** Prints the selected facts; resolves to the exit status. */
export const runFacts = (command: FactsCommand, io: CliIo): TE.TaskEither<string, number> =>
  pipe(
    () => io.readText(command.file),
    TE.chainEitherK((text) => loadStore(io, command, text)),
    TE.map(({ store, errors }) => {
      const facts = selectFactsWhere(store, command);
      io.stdout(
        command.json
          ? toJson({ facts, errors })
          : `${renderFacts(facts, errors, command.all, createStyle(io.colour))}\n`,
      );
      return exitStatusFor(io, 'facts', errors);
    }),
  );
