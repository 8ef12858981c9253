/**
 * `--save`: one section of a saved state written into its file under the file's lock, the other
 * section kept (`replay --save` and `notes replay --save` write into one file, in either order,
 * even at once). A file that holds something else is left as it is, and said.
 */
import * as E from 'fp-ts/lib/Either.js';
import type * as TE from 'fp-ts/lib/TaskEither.js';
import { pipe } from 'fp-ts/lib/function.js';
import { parseJson } from '../base/json.js';
import { repeatedKeyReason } from '../base/jsonKeys.js';
import { collapseWhitespace } from '../base/text.js';
import { type SavedSection, withSavedSection } from '../saved/savedSection.js';
import type { CliIo } from './io.js';

/** What the file holds, parsed: undefined for a missing or blank file. */
const parseCurrent = (current: string | undefined): E.Either<string, unknown> => {
  if (current === undefined || current.trim() === '') return E.right(undefined);
  return pipe(
    parseJson(current.replace(/^\uFEFF/u, '')),
    E.mapLeft((reason) => `it is not JSON (${collapseWhitespace(reason)})`),
    // JSON.parse kept the last of a key given twice: the rewrite would drop the others unasked.
    E.chainFirst(() => {
      const repeated = repeatedKeyReason(current);
      return repeated === undefined
        ? E.right(undefined)
        : E.left(`${repeated}, of which a rewrite would keep only the last`);
    }),
  );
};

/** The text to write in place of `current`, or why `current` must be kept. */
const updated =
  (file: string, section: SavedSection) =>
  (current: string | undefined): E.Either<string, string> =>
    pipe(
      parseCurrent(current),
      E.chain((value) => E.mapLeft(({ message }: { message: string }) => message)(withSavedSection(value, section))),
      E.bimap(
        (reason) => `cannot save into ${file}: it holds no saved state, which --save would lose: ${reason}`,
        (state) => `${JSON.stringify(state)}\n`,
      ),
    );

/** Writes `section` into the saved state FILE, keeping the other section it holds. */
export const saveSection =
  (io: CliIo, file: string, section: SavedSection): TE.TaskEither<string, void> =>
  async () => {
    const update = updated(file, section);
    if (io.updateText !== undefined) return io.updateText(file, update);
    // An in-memory fake: one process, so no lock; a file it cannot read is one it does not have.
    const read = await io.readText(file);
    const next = update(E.isRight(read) ? read.right : undefined);
    return E.isLeft(next) ? next : io.writeText(file, next.right);
  };
