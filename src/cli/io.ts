/**
 * What the commands may do to the outside world, as one interface. Only `nodeIo.ts` implements
 * it with `process` and `fs`; the commands receive it, so they never reach for globals.
 */
import type { Readable, Writable } from 'node:stream';
import type * as E from 'fp-ts/lib/Either.js';

/** Every line of the history applied. */
export const EXIT_OK = 0;
/** Usage error, unreadable file or unreadable saved state. */
export const EXIT_FAILURE = 1;
/** Some history lines were rejected; the full report was still printed. */
export const EXIT_REJECTED_LINES = 2;

/**
 * A read that failed half-way (the file, the pipe), its message a one-line reason. Anything
 * else a stream throws is a bug, which the commands let through to the router.
 */
export class ReadFailure extends Error {}

/** A file's bytes as they are read, with its size when it is known. */
export interface ByteStream {
  /** The bytes, chunk by chunk. A failure half-way throws a `ReadFailure`. */
  readonly chunks: AsyncIterable<Uint8Array>;
  /** Bytes in all, for a regular file (not for a pipe or a terminal). */
  readonly size?: number;
}

/** How `CliIo.openStream` opens a file. */
export interface OpenOptions {
  /**
   * FILE must be a regular file itself: a symbolic link is not followed and anything else (a
   * pipe, a device) is refused, as for a session's log in a store's folder.
   */
  readonly regularFile?: boolean;
}

/** The command line's access to files, streams and the terminal. */
export interface CliIo {
  /**
   * The text of FILE, or of standard input for `-`; on failure a one-line reason. With
   * `maxBytes`, a longer input (or a device that never ends, such as `/dev/zero`) is refused
   * after reading `maxBytes + 1` bytes.
   */
  readonly readText: (file: string, maxBytes?: number) => Promise<E.Either<string, string>>;
  /**
   * FILE, or standard input for `-`, opened to be read as a stream (histories of any size); on
   * failure a one-line reason. Optional, so in-memory fakes need not set it: without it the
   * commands read the file whole with `readText`.
   */
  readonly openStream?: (file: string, options?: OpenOptions) => Promise<E.Either<string, ByteStream>>;
  /** Writes FILE whole: through a temporary file and a rename, so a failure never leaves half a file. */
  readonly writeText: (file: string, text: string) => Promise<E.Either<string, void>>;
  /**
   * Rewrites FILE under its lock, so processes updating one file take turns: `update` gets its
   * text (undefined when it does not exist) and says what to write, or why not. Optional, so
   * in-memory fakes need not set it: without it the commands read and write the file unlocked.
   */
  readonly updateText?: (
    file: string,
    update: (current: string | undefined) => E.Either<string, string>,
  ) => Promise<E.Either<string, void>>;
  readonly stdout: (text: string) => void;
  /**
   * Writes bytes to standard output as they are (a log's bytes that are not UTF-8 included).
   * Optional, so in-memory fakes need not set it: without it the commands write them as UTF-8 text.
   */
  readonly stdoutBytes?: (bytes: Uint8Array) => void;
  readonly stderr: (text: string) => void;
  /**
   * Resolves once standard output and standard error have room again (optional, so in-memory
   * fakes need not set it): a command that writes in batches waits for it between them, so its
   * memory does not depend on how fast its output is read.
   */
  readonly drain?: () => Promise<void>;
  /**
   * Asks that the command run to its end even when the reader of standard output closes it
   * early (`| head`), its output dropped from then on, because it writes a file too (optional,
   * so in-memory fakes need not set it). Without it such a process ends quietly at once.
   */
  readonly outliveReader?: () => void;
  /**
   * Sets the exit status a process that ends quietly because the reader of standard output
   * closed it early (`| head`) ends with: a command that has already met rejected lines says so
   * (2) even then (optional, so in-memory fakes need not set it; 0 until set).
   */
  readonly statusIfCut?: (status: number) => void;
  /** Standard output is a terminal and NO_COLOR is not set. */
  readonly colour: boolean;
  /** Standard error is a terminal, so progress can be drawn on it. */
  readonly stderrIsTty: boolean;
  /**
   * Standard output is a terminal, where a report written as it goes meets the progress drawn
   * on stderr (optional, so in-memory fakes need not set it: false when absent).
   */
  readonly stdoutIsTty?: boolean;
  /**
   * Standard input is a terminal: someone at a keyboard, not the agent that runs a hook
   * (optional: false when absent).
   */
  readonly stdinIsTty?: boolean;
  /** Standard input is a folder (`< /`), which reads as an empty stream (optional: false when absent). */
  readonly stdinIsFolder?: boolean;
  /** The package version, from package.json. */
  readonly version: () => E.Either<string, string>;
  /**
   * The working directory: the repository `fact-tracker context` works on (optional, so
   * in-memory fakes need not set it; undefined when the process's directory was deleted).
   */
  readonly cwd?: string;
  /** The environment, for `SHARED_CONTEXT_ENABLED`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The standard streams themselves, for a protocol spoken over them (`fact-tracker mcp`). */
  readonly stdio?: { readonly input: Readable; readonly output: Writable };
}
