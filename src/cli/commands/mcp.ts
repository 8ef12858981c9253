/** `fact-tracker mcp`: the MCP server on standard input and output, until the client goes away. */
import * as E from 'fp-ts/lib/Either.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import { pipe } from 'fp-ts/lib/function.js';
import { collapseWhitespace } from '../../base/text.js';
import { serveMcp } from '../../live/mcp/stdio.js';
import type { Failure } from '../../base/failure.js';
import { checkSessionsFolder, type SessionsFolder } from '../../live/session/files.js';
import type { SessionStore } from '../../live/session/store.js';
import type { McpCommand } from '../command.js';
import { type CliIo, EXIT_OK } from '../io.js';
import { projectOf, sessionsFolderIn } from '../project.js';
import { chooseStore, openPostgresStore } from '../store.js';
import { tokenCounter } from './shared.js';

/** A failure as the one line the router prints: its code first. */
const oneLine = ({ code, message }: { code: string; message: string }): string => `${code}: ${message}`;

/** A sessions folder, or a store of their own. */
type SessionsPlace = SessionsFolder | { readonly store: SessionStore };

/**
 * Where the server keeps sessions: a folder (as `--sessions-dir` always did, relative to the
 * `project`), or a PostgreSQL store. A store named by `--store`, `--sessions-dir` or
 * `FACT_TRACKER_STORE` is checked before the server reads its first message: a server that
 * cannot use it says so in one line and exits 1, rather than fail every call. So is a folder
 * relative to a project there is none of (the working directory was deleted).
 */
const sessionsPlace = (
  command: McpCommand,
  io: CliIo,
  project: E.Either<Failure<'io'>, string>,
): TE.TaskEither<string, SessionsPlace> =>
  pipe(
    TE.fromEither(E.mapLeft(oneLine)(chooseStore(command, io.env))),
    TE.chain((choice) => async (): Promise<E.Either<string, SessionsPlace>> => {
      if (choice.kind === 'folder') {
        const folder = sessionsFolderIn(project, choice.directory);
        if (E.isLeft(folder) || choice.from === 'default') return E.mapLeft(oneLine)(folder);
        const checked = await checkSessionsFolder(folder.right);
        return E.isLeft(checked) ? E.left(oneLine(checked.left)) : folder;
      }
      const opened = await openPostgresStore(choice.address);
      if (E.isLeft(opened)) return E.left(oneLine(opened.left));
      const checked = await opened.right.list();
      if (E.isRight(checked)) return E.right({ store: opened.right });
      await opened.right.close();
      return E.left(oneLine(checked.left));
    }),
  );

/** Serves until standard input closes; resolves to exit status 0. Standard output carries only the protocol. */
export const runMcp = (command: McpCommand, io: CliIo): TE.TaskEither<string, number> => {
  // The project's sessions, as the hooks find them: Claude Code names the project of a stdio
  // server in CLAUDE_PROJECT_DIR; else the git work tree of the working directory, else it.
  const project = projectOf(io);
  return pipe(
    TE.Do,
    TE.apS('countTokens', tokenCounter(command.tokenizer)),
    TE.apS('version', TE.fromEither(io.version())),
    TE.bind('place', () => sessionsPlace(command, io, project)),
    TE.chain(({ countTokens, version, place }) => async () => {
      if (io.stdio === undefined) {
        if ('store' in place) await place.store.close();
        return E.left('the MCP server needs the standard input and output streams');
      }
      // A folder reads as an input that ends at once: the server would stop without a word.
      if (io.stdinIsFolder === true) {
        if ('store' in place) await place.store.close();
        return E.left(
          'cannot read standard input: it is a folder (the server reads JSON-RPC messages there, one a line)',
        );
      }
      const served = await serveMcp(io.stdio, {
        version,
        countTokens,
        tokenizer: command.tokenizer,
        ...(E.isLeft(project) ? {} : { cwd: project.right }),
        ...place,
        ...(command.maxAnswerTokens === undefined ? {} : { maxAnswerTokens: command.maxAnswerTokens }),
        ...(command.layout === undefined ? {} : { layout: command.layout }),
        onWarning: (message) => io.stderr(`fact-tracker mcp: ${collapseWhitespace(message)}\n`),
      });
      if ('store' in place) await place.store.close();
      return E.map(() => EXIT_OK)(served);
    }),
  );
};
