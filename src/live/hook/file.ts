/** The hooks file rewritten whole, for compaction: a new file renamed over the old one, so a reader sees one or the other. */
import { closeSync, constants, fdatasyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import * as E from 'fp-ts/lib/Either.js';
import { ioError } from '../session/logFile.js';
import type { SessionError } from '../session/model.js';

/**
 * Replaces `file` with `text`: written and flushed to a new file beside it (created exclusively,
 * so a link planted under that name is refused), then renamed over it. Call it holding the lock.
 */
export const writeHooksFile = (file: string, text: string): E.Either<SessionError, void> => {
  const temporary = `${file}.${process.pid}.compact`;
  try {
    const fd = openSync(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o644);
    try {
      const bytes = Buffer.from(text, 'utf8');
      for (let written = 0; written < bytes.length;) written += writeSync(fd, bytes, written, bytes.length - written);
      fdatasyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, file);
    return E.right(undefined);
  } catch (error) {
    try {
      rmSync(temporary, { force: true });
    } catch {
      // Nothing more to do (a folder turned read-only, a directory at that name): the failure to report is the rewrite's.
    }
    return E.left(ioError(`cannot rewrite ${file}`, error));
  }
};
