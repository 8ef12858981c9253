/**
 * `fact-tracker sessions list|export|delete`: the sessions of a store (`--store`, else
 * `FACT_TRACKER_STORE`, else the project's `.fact-tracker/sessions`). `export` prints a session's
 * log as the dispatch history it is, which `fact-tracker replay -` reads.
 */
import * as E from 'fp-ts/lib/Either.js';
import type * as TE from 'fp-ts/lib/TaskEither.js';
import { parseSessionId } from '../../live/session/id.js';
import type { SessionsCommand } from '../command.js';
import { type CliIo, EXIT_OK } from '../io.js';
import { readSession, withStore } from './storedSession.js';

/** Lists, exports or deletes; resolves to exit status 0, or a one-line failure. */
export const runSessions =
  (command: SessionsCommand, io: CliIo): TE.TaskEither<string, number> =>
  () =>
    withStore(io, command.store, async (store) => {
      if (command.action === 'list') {
        const listed = await store.list();
        if (E.isLeft(listed)) return E.left(`${listed.left.code}: ${listed.left.message}`);
        io.stdout(listed.right.map((id) => `${id}\n`).join(''));
        return E.right(EXIT_OK);
      }
      const id = parseSessionId(command.id);
      if (E.isLeft(id)) return E.left(`invalid_session_id: ${id.left}`);
      if (command.action === 'export') {
        const lines = await readSession(store, id.right);
        if (E.isLeft(lines)) return lines;
        // In pieces: a long session is not held twice over as one string.
        for (let start = 0; start < lines.right.length; start += 1_000)
          io.stdout(
            lines.right
              .slice(start, start + 1_000)
              .map((line) => `${line.text}\n`)
              .join(''),
          );
        return E.right(EXIT_OK);
      }
      const deleted = await store.delete(id.right);
      if (E.isLeft(deleted)) return E.left(`${deleted.left.code}: ${deleted.left.message}`);
      if (!deleted.right) return E.left(`unknown_session: there is no session ${id.right} in ${store.location}`);
      io.stdout(`deleted session ${id.right} from ${store.location}\n`);
      return E.right(EXIT_OK);
    });
