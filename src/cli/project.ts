/**
 * The folders a command run by hand finds its sessions from: its project and its working
 * directory. Either may be gone (a shell still in a folder another removed), and then only
 * what is relative to it is refused, in one line: an absolute folder needs neither.
 */
import { isAbsolute } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import type { Failure } from '../base/failure.js';
import type { SessionsFolder } from '../live/session/files.js';
import { resolveProjectDirectory } from '../live/session/project.js';
import type { CliIo } from './io.js';

/** The project of a command: the one Claude Code names, else the git work tree of the working directory, else it. */
export const projectOf = (io: CliIo): E.Either<Failure<'io'>, string> =>
  resolveProjectDirectory({
    ...(io.cwd === undefined ? {} : { cwd: io.cwd }),
    ...(io.env?.['CLAUDE_PROJECT_DIR'] === undefined ? {} : { projectDir: io.env['CLAUDE_PROJECT_DIR'] }),
  });

/**
 * The sessions folder `directory` (absent: the default one) under `base`, or why `base` is
 * needed and missing. An absolute folder is read without it.
 */
export const sessionsFolderIn = (
  base: E.Either<Failure<'io'>, string>,
  directory: string | undefined,
): E.Either<Failure<'io'>, SessionsFolder> =>
  directory !== undefined && isAbsolute(directory)
    ? E.right({ directory })
    : E.map((cwd: string) => ({ cwd, ...(directory === undefined ? {} : { directory }) }))(base);
