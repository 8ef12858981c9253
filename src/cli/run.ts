/**
 * The command router: parses the command line, runs one command against a `CliIo`, and folds
 * every expected failure into one line on stderr and exit status 1. No stack trace reaches the
 * user for a mistake of theirs. It is also the commands' outermost boundary: an exception none
 * of them expected (a bug) becomes one line saying it is an internal error, never an empty
 * answer.
 */
import * as E from 'fp-ts/lib/Either.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import { pipe } from 'fp-ts/lib/function.js';
import { collapseWhitespace } from '../base/text.js';
import { parseCommandLine } from './args.js';
import type { Command } from './command.js';
import { helpText } from './help.js';
import { uncaughtLine } from './boundary.js';
import { type CliIo, EXIT_FAILURE, EXIT_OK } from './io.js';
import type { UsageError } from './options.js';

const PROGRAM = 'fact-tracker';

const usageLine = (error: UsageError): string =>
  `${PROGRAM}${error.command === undefined ? '' : ` ${error.command}`}: ${collapseWhitespace(error.message)} (see ${PROGRAM}${error.command === undefined ? '' : ` ${error.command}`} --help)\n`;

/**
 * The commands are imported on demand: the core and its dependencies (zod, immer, stopwords)
 * take most of a start-up, and `--help` or `--version` need none of them.
 */
const execute = (command: Command, io: CliIo): TE.TaskEither<string, number> => {
  switch (command.name) {
    case 'replay':
      return async () => (await import('./commands/replay.js')).runReplay(command, io)();
    case 'facts':
      return async () => (await import('./commands/facts.js')).runFacts(command, io)();
    case 'explain':
      return async () => (await import('./commands/explain.js')).runExplain(command, io)();
    case 'schema':
      return async () => (await import('./commands/schema.js')).runSchema(command, io)();
    case 'notes':
      return async () => (await import('./commands/notes.js')).runNotes(command, io)();
    case 'context':
      return async () => (await import('./commands/context.js')).runContext(command, io)();
    case 'mcp':
      return async () => (await import('./commands/mcp.js')).runMcp(command, io)();
    case 'hook':
      return async () => (await import('./commands/hook.js')).runHookCommand(command, io)();
    case 'init':
      return async () => (await import('./commands/init.js')).runInit(command, io)();
    case 'sessions':
      return async () => (await import('./commands/sessions.js')).runSessions(command, io)();
    case 'db':
      return async () => (await import('./commands/db.js')).runDb(command, io)();
    case 'help':
      return async () => {
        io.stdout(helpText(command.topic));
        return E.right(EXIT_OK);
      };
    case 'version':
      return pipe(
        TE.fromEither(io.version()),
        TE.map((version) => {
          io.stdout(`${version}\n`);
          return EXIT_OK;
        }),
      );
  }
};

/** Runs the command line `argv` (without the program name) and resolves to the exit status. */
export const run = async (argv: ReadonlyArray<string>, io: CliIo): Promise<number> => {
  // An agent's hook must never fail the agent's work: even a mistake of ours exits 0 there.
  const failed = argv[0] === 'hook' ? EXIT_OK : EXIT_FAILURE;
  try {
    const command = parseCommandLine(argv);
    if (E.isLeft(command)) {
      if (argv[0] !== 'hook') {
        io.stderr(usageLine(command.left));
        return failed;
      }
      // A hook's problem starts with its code, as every other of its lines. An agent keeps a
      // hook's stderr in its debug log: a hook given a wrong option would fail every event
      // unseen, so the user is told where the agent shows it too.
      const said = `invalid_option: ${collapseWhitespace(command.left.message)} (see ${PROGRAM} hook --help)`;
      io.stderr(`${PROGRAM} hook: ${said}\n`);
      io.stdout(`${JSON.stringify({ systemMessage: `${PROGRAM}: ${said}` })}\n`);
      return failed;
    }
    const outcome = await execute(command.right, io)();
    if (E.isRight(outcome)) return outcome.right;
    io.stderr(`${PROGRAM} ${command.right.name}: ${collapseWhitespace(outcome.left)}\n`);
    return failed;
  } catch (error) {
    // A bug (or standard output gone), not a user mistake: still one line, so the report stays readable.
    io.stderr(uncaughtLine(error));
    return failed;
  }
};
