/** `fact-tracker mcp`: the MCP server on standard input and output, until the client goes away. */
import * as E from 'fp-ts/lib/Either.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import { pipe } from 'fp-ts/lib/function.js';
import { collapseWhitespace } from '../../base/text.js';
import { serveMcp } from '../../live/mcp/stdio.js';
import { resolveProjectDirectory } from '../../live/session/project.js';
import type { McpCommand } from '../command.js';
import { type CliIo, EXIT_OK } from '../io.js';
import { tokenCounter } from './shared.js';

/** Serves until standard input closes; resolves to exit status 0. Standard output carries only the protocol. */
export const runMcp = (command: McpCommand, io: CliIo): TE.TaskEither<string, number> =>
  pipe(
    TE.Do,
    TE.apS('countTokens', tokenCounter(command.tokenizer)),
    TE.apS('version', TE.fromEither(io.version())),
    TE.chain(({ countTokens, version }) => async () => {
      if (io.stdio === undefined) return E.left('the MCP server needs the standard input and output streams');
      const served = await serveMcp(io.stdio, {
        version,
        countTokens,
        // The project's sessions, as the hooks find them: Claude Code names the project of a stdio
        // server in CLAUDE_PROJECT_DIR; else the git work tree of the working directory, else it.
        ...(io.cwd === undefined
          ? {}
          : {
              cwd: resolveProjectDirectory({
                cwd: io.cwd,
                ...(io.env?.['CLAUDE_PROJECT_DIR'] === undefined ? {} : { projectDir: io.env['CLAUDE_PROJECT_DIR'] }),
              }),
            }),
        ...(command.sessionsDir === undefined ? {} : { directory: command.sessionsDir }),
        ...(command.maxAnswerTokens === undefined ? {} : { maxAnswerTokens: command.maxAnswerTokens }),
        onWarning: (message) => io.stderr(`fact-tracker mcp: ${collapseWhitespace(message)}\n`),
      });
      return E.map(() => EXIT_OK)(served);
    }),
  );
