/** `fact-tracker facts FILE`: the facts of a history or of a saved state, as a table. */
import * as E from 'fp-ts/lib/Either.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import { pipe } from 'fp-ts/lib/function.js';
import type { SessionFact } from '../../fact.js';
import { selectAllFacts, selectFactsValidAt, selectValidFacts } from '../../store/selectors.js';
import type { FactStore } from '../../store/state.js';
import type { FactsCommand } from '../args.js';
import type { CliIo } from '../io.js';
import { type RejectedLines, renderFacts } from '../render.js';
import { openSource, parseSavedState, type Source } from '../source.js';
import { createStyle } from '../style.js';
import { exitStatusFor, replaySource, toJson } from './shared.js';

interface LoadedFacts {
  readonly store: FactStore;
  readonly rejected: RejectedLines;
}

/** A saved state is decoded whole or refused; a history is replayed (as it is read) up to `--as-of`. */
const loadStore = (io: CliIo, command: FactsCommand, source: Source): TE.TaskEither<string, LoadedFacts> =>
  source.kind === 'state'
    ? pipe(
        TE.tryCatch(source.text, (error) => (error instanceof Error ? error.message : `cannot read ${command.file}`)),
        TE.chainEitherK((text) =>
          pipe(
            parseSavedState(text),
            E.bimap(
              (reason) => `${command.file}: ${reason}`,
              (store): LoadedFacts => ({ store, rejected: { errors: [] } }),
            ),
          ),
        ),
      )
    : pipe(
        replaySource(io, source, {
          // Only the facts are shown: no prompt report is kept.
          onPrompt: () => undefined,
          ...(command.asOf === undefined ? {} : { asOf: command.asOf }),
        }),
        TE.map(({ store, report: { errors, errorsOmitted } }) => ({
          store,
          rejected: errorsOmitted === undefined ? { errors } : { errors, errorsOmitted },
        })),
      );

const selectFacts = (store: FactStore, command: FactsCommand): ReadonlyArray<SessionFact> => {
  const { asOf, all } = command;
  const facts =
    asOf === undefined
      ? all
        ? selectAllFacts(store)
        : selectValidFacts(store)
      : all
        ? selectAllFacts(store).filter((fact) => fact.validFrom <= asOf)
        : selectFactsValidAt(store, asOf);
  const subject = command.subject?.toLowerCase();
  return facts.filter(
    (fact) =>
      (command.tags.length === 0 || fact.tags.some((tag) => command.tags.includes(tag))) &&
      (subject === undefined || fact.subject.toLowerCase().includes(subject)),
  );
};

/** Prints the selected facts; resolves to the exit status. */
export const runFacts = (command: FactsCommand, io: CliIo): TE.TaskEither<string, number> =>
  pipe(
    () => openSource(io, command.file),
    TE.chain((source) => loadStore(io, command, source)),
    TE.map(({ store, rejected }) => {
      const facts = selectFacts(store, command);
      io.stdout(
        command.json
          ? toJson({ facts, ...rejected })
          : `${renderFacts(facts, rejected, command.all, createStyle(io.colour))}\n`,
      );
      return exitStatusFor(io, 'facts', rejected.errors, rejected.errorsOmitted);
    }),
  );
