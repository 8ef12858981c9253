/**
 * The hooks file rewritten whole, for compaction: a new file renamed over the old one, so a
 * reader sees one or the other; and what a rewrite killed halfway leaves beside it, removed.
 */
import { basename, dirname } from 'node:path';
import type * as E from 'fp-ts/lib/Either.js';
import { removeStaleTemporaries, TEMPORARY_SHAPE, writeFileAtomic } from '../../node/atomicWrite.js';
import type { SessionError } from '../session/model.js';

/** The temporary file of a rewrite by an earlier release, `FILE.PID.compact`, past `FILE.`. */
const EARLIER_TEMPORARY = /^\d+\.compact$/u;

/**
 * Replaces `file` with `text`: written and flushed to a new file beside it (`writeFileAtomic`:
 * created exclusively under a name no one can guess), then renamed over it. Call it holding the lock.
 */
export const writeHooksFile = (file: string, text: string): E.Either<SessionError, void> => writeFileAtomic(file, text);

/**
 * Removes the temporary files rewrites of `file` killed halfway left beside it, once older than
 * the lock's stale time `staleMs` at `now` (a live rewrite renames its own within milliseconds,
 * holding the lock): this release's and an earlier one's. Call it holding the lock; best effort.
 */
export const removeHooksFileLeftovers = (file: string, now: number, staleMs: number): void =>
  removeStaleTemporaries(dirname(file), [basename(file)], now, staleMs, [TEMPORARY_SHAPE, EARLIER_TEMPORARY]);
