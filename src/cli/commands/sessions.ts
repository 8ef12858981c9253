/**
 * `fact-tracker sessions list|export|delete`: the sessions of a store (`--store`, else
 * `FACT_TRACKER_STORE`, else the project's `.fact-tracker/sessions`). `export` prints a session's
 * log as the dispatch history it is, which `fact-tracker replay -` reads with its lines numbered
 * alike (a folder's log byte for byte).
 */
import * as E from 'fp-ts/lib/Either.js';
import type * as TE from 'fp-ts/lib/TaskEither.js';
import { parseSessionId } from '../../live/session/id.js';
import type { SessionsCommand } from '../command.js';
import { type CliIo, EXIT_OK } from '../io.js';
import { deleteStoredSession, readSessionText, withStore } from './storedSession.js';

/** Lists, exports or deletes; resolves to exit status 0, or a one-line failure. */
export const runSessions =
  (command: SessionsCommand, io: CliIo): TE.TaskEither<string, number> =>
  () =>
    withStore(io, command.store, async (store, folder) => {
      if (command.action === 'list') {
        const listed = await store.list();
        if (E.isLeft(listed)) return E.left(`${listed.left.code}: ${listed.left.message}`);
        io.stdout(listed.right.map((id) => `${id}\n`).join(''));
        return E.right(EXIT_OK);
      }
      const id = parseSessionId(command.id);
      if (E.isLeft(id)) return E.left(`${id.left.code}: ${id.left.message}`);
      if (command.action === 'export') {
        const text = await readSessionText(store, folder, id.right);
        if (E.isLeft(text)) return text;
        // In pieces, each once the output has room: a long session is not held twice over.
        for (const piece of text.right) {
          if (typeof piece === 'string') io.stdout(piece);
          else if (io.stdoutBytes !== undefined) io.stdoutBytes(piece);
          else io.stdout(Buffer.from(piece).toString('utf8'));
          await io.drain?.();
        }
        return E.right(EXIT_OK);
      }
      const deleted = await deleteStoredSession(store, folder, id.right);
      if (E.isLeft(deleted)) return deleted;
      io.stdout(deleted.right);
      return E.right(EXIT_OK);
    });
