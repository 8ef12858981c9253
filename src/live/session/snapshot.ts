/**
 * The snapshot beside a session log (`{id}.jsonl.snapshot`): the session's state after the
 * first `offset` bytes of the log, so a process that opens the session replays only the lines
 * after them. It is a cache and nothing more: the log is the truth. A snapshot is used only when
 * it was written by this version of the package, for this very file (device and inode), no
 * longer than the log is now, and every byte of the log it covers still hashes the same (and
 * the session then refuses one whose state does not read as a session's state with a fact
 * store's outline: `decodeSessionState`); anything else (a missing, truncated, corrupt or
 * foreign file, a log replaced, cut or rewritten, one byte of it included) and the session is
 * rebuilt from the log's first line, and the next writer replaces the snapshot.
 *
 * The file is two lines: a header (what the snapshot covers, and a hash of the second line) and
 * the session's state as `encodeSessionState` writes it. The state is plain data, so parsing it
 * back gives exactly the state the log's replay built (index and all), several times faster
 * than rebuilding one from a saved state (`encodeState`), which validates and re-indexes every fact.
 *
 * Snapshots are written by a process holding the log's lock, to a temporary file renamed over
 * the old one: a writer killed halfway leaves the old snapshot (and a temporary file the next
 * writer removes), never half of one. The snapshot replaced stays as `{id}.jsonl.snapshot.previous`:
 * the section of a prompt sent again is computed on the state before its line, which the newest
 * snapshot may already be past (`readSnapshotAtMost`).
 */
import { constants as bufferConstants } from 'node:buffer';
import { createHash, type Hash } from 'node:crypto';
import {
  constants,
  fstatSync,
  linkSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { ioError, lastBytes, readFully, withFile } from './logFile.js';
import type { SessionError } from './model.js';

const { MAX_STRING_LENGTH } = bufferConstants;

/** Appended to a log's name for its snapshot. */
export const SNAPSHOT_EXTENSION = '.snapshot';
/** Appended to a snapshot's name for the one it replaced, kept for the section of a prompt sent again. */
const PREVIOUS_EXTENSION = '.previous';
/** The `format` tag of a snapshot. */
export const SNAPSHOT_FORMAT = 'session-fact-tracker/session-snapshot';
/** The layout of a snapshot this code reads and writes. */
export const SNAPSHOT_VERSION = 24;

/** A snapshot of a log: the state after its first `position` lines, which end at byte `offset` of the file `identity`. */
export interface FileSnapshot {
  /** Bytes of the log covered, up to the end of a complete line. */
  readonly offset: number;
  /** The log's device and inode. */
  readonly identity: string;
  /** Lines covered (blank ones included), as `replay` numbers them. */
  readonly position: number;
  /** The session's state, as `encodeSessionState` writes it. */
  readonly state: string;
  /**
   * A hash of the log's first `offset` bytes, not digested: those the state was read from, which
   * the header's fingerprint is of. A reader goes on hashing what it reads after them.
   */
  readonly hash: Hash;
  /**
   * The log's last bytes before `offset` (at most `CONTINUITY_BYTES`), as read: what a reader
   * going on from the snapshot checks before reading on, so a log made anew in the same file (a
   * freed inode taken again) and grown past the offset is not read on from it. Not written.
   */
  readonly last: Buffer;
}

/** What became of the snapshot when a session was opened. */
export type SnapshotUse =
  { readonly used: true; readonly position: number } | { readonly used: false; readonly reason: string };

/** Bytes of the log read at a time for its fingerprint: the memory hashing takes at any size. */
const HASH_PIECE_BYTES = 1024 * 1024;

/** The package's manifest, found from this module upward (the compiled modules and the bundle sit at different depths). */
const findManifest = (): unknown => {
  for (let folder = new URL('.', import.meta.url); ; folder = new URL('..', folder)) {
    try {
      const manifest = JSON.parse(readFileSync(new URL('package.json', folder), 'utf8')) as unknown;
      if (
        typeof manifest === 'object' &&
        manifest !== null &&
        (manifest as { name?: unknown }).name === 'session-fact-tracker'
      )
        return manifest;
    } catch {
      // No manifest of ours here: one folder up.
    }
    if (new URL('..', folder).href === folder.href) return undefined;
  }
};

/** The package's version: a snapshot written by another one is not read (its rules may give other facts). */
export const libraryVersion: () => string = (() => {
  const memo: { version?: string } = {};
  return () => {
    if (memo.version === undefined) {
      const manifest = findManifest();
      const version =
        typeof manifest === 'object' && manifest !== null ? (manifest as { version?: unknown }).version : '';
      memo.version = typeof version === 'string' ? version : '';
    }
    return memo.version;
  };
})();

/**
 * A hash of the first `offset` bytes of the log, every one of them, not digested yet: a change
 * anywhere in what a snapshot covers changes its fingerprint, where a hash of samples missed a
 * line rewritten between them and the snapshot was trusted over the log. It reads the bytes once,
 * a piece at a time: a millisecond or two a megabyte, where replaying them takes about a second.
 * A reader that starts from the snapshot goes on hashing from it what it reads after them.
 */
const logHashOf = (fd: number, offset: number): { readonly hash: Hash; readonly last: Buffer } => {
  const hash = createHash('sha256');
  let last: Buffer = Buffer.alloc(0);
  const piece = Buffer.allocUnsafe(Math.min(HASH_PIECE_BYTES, offset));
  for (let position = 0; position < offset;) {
    const read = readSync(fd, piece, 0, Math.min(piece.length, offset - position), position);
    // A log cut shorter meanwhile hashes fewer bytes: another fingerprint.
    if (read === 0) break;
    hash.update(piece.subarray(0, read));
    // A copy (`lastBytes` makes one): the piece is read into again.
    last = lastBytes(last, piece.subarray(0, read));
    position += read;
  }
  return { hash, last };
};

/**
 * The fingerprint of the log's first `offset` bytes that `hash` took in, with `offset` itself.
 * A writer's is of the bytes it read, its state's: the log as it is when the snapshot is
 * written may have been changed in place since, and the snapshot must not vouch for that.
 */
const fingerprintOf = (hash: Hash, offset: number): string => hash.copy().update(String(offset)).digest('hex');

/** The header of a snapshot, as written. */
interface Header {
  readonly format: typeof SNAPSHOT_FORMAT;
  readonly version: typeof SNAPSHOT_VERSION;
  readonly library: string;
  readonly log: { readonly identity: string; readonly offset: number; readonly fingerprint: string };
  readonly position: number;
  readonly state: { readonly length: number; readonly sha256: string };
}

const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;
const isText = (value: unknown): value is string => typeof value === 'string';
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A parsed header, checked field by field. */
const isHeader = (value: unknown): value is Header =>
  isObject(value) &&
  value['format'] === SNAPSHOT_FORMAT &&
  value['version'] === SNAPSHOT_VERSION &&
  isText(value['library']) &&
  isObject(value['log']) &&
  isText(value['log']['identity']) &&
  isCount(value['log']['offset']) &&
  value['log']['offset'] > 0 &&
  isText(value['log']['fingerprint']) &&
  isCount(value['position']) &&
  isObject(value['state']) &&
  isCount(value['state']['length']) &&
  isText(value['state']['sha256']);

/** The SHA-256 of a text's UTF-8 bytes (of the bytes themselves, given a buffer): the same digest either way. */
const sha256 = (data: string | Uint8Array): string => createHash('sha256').update(data).digest('hex');

/** A snapshot's first line as the header of a snapshot this version of the package wrote, or why it is not one. */
const parseHeader = (head: Buffer): E.Either<string, Header> => {
  let header: unknown;
  try {
    header = JSON.parse(head.toString('utf8'));
  } catch {
    return E.left('the snapshot is not JSON (cut short or corrupt)');
  }
  if (!isHeader(header)) return E.left('the snapshot is not a session snapshot of this layout');
  if (header.library !== libraryVersion())
    return E.left(`the snapshot was written by version ${header.library} of the package`);
  return E.right(header);
};

/** What checking a log against a snapshot's header found: the log's size, the hash of the bytes it covers and their last ones. */
interface CheckedLog {
  readonly size: number;
  readonly hash: Hash;
  readonly last: Buffer;
}

/**
 * Checks the log `file` against a snapshot's header: the same file (device and inode), at
 * least as long as the snapshot covers, and the bytes it covers unchanged.
 */
const checkLog = (file: string, header: Header): E.Either<string, CheckedLog> => {
  try {
    return withFile(file, constants.O_RDONLY, (fd): E.Either<string, CheckedLog> => {
      const stat = fstatSync(fd);
      if (`${stat.dev}:${stat.ino}` !== header.log.identity) return E.left('the log was replaced since the snapshot');
      if (stat.size < header.log.offset) return E.left('the log is shorter than the snapshot covers');
      const { hash, last } = logHashOf(fd, header.log.offset);
      if (fingerprintOf(hash, header.log.offset) !== header.log.fingerprint)
        return E.left('the log was rewritten since the snapshot');
      return E.right({ size: stat.size, hash, last });
    });
  } catch (error) {
    return E.left(
      `the log cannot be checked against the snapshot (${String((error as { code?: unknown }).code ?? 'error')})`,
    );
  }
};

/** The most of a snapshot's first line `snapshotTail` reads looking for its end. */
const MAX_HEADER_BYTES = 16 * 1024 * 1024;

/** The first line of the open file `fd` (without its line break), or undefined when it has none within `MAX_HEADER_BYTES`. */
const firstLine = (fd: number): Buffer | undefined => {
  const pieces: Buffer[] = [];
  for (let position = 0; position < MAX_HEADER_BYTES;) {
    const piece = readFully(fd, position, 256 * 1024);
    if (piece.length === 0) return undefined;
    const newline = piece.indexOf(0x0a);
    if (newline !== -1) return Buffer.concat([...pieces, piece.subarray(0, newline)]);
    pieces.push(piece);
    position += piece.length;
  }
  return undefined;
};

/**
 * The header of the snapshot of the log `file`, with the log's size, when its header says it can
 * be used (this version's, for this very log, which still holds the bytes it covered); undefined
 * when there is no such snapshot. Never throws.
 */
const usableHeader = (file: string): { readonly header: Header; readonly size: number } | undefined => {
  try {
    const head = withFile(snapshotFileOf(file), constants.O_RDONLY, firstLine);
    if (head === undefined) return undefined;
    const header = parseHeader(head);
    if (E.isLeft(header)) return undefined;
    const checked = checkLog(file, header.right);
    return E.isRight(checked) ? { header: header.right, size: checked.right.size } : undefined;
  } catch {
    return undefined;
  }
};

/**
 * How many bytes of the log `file` a process opening it would replay after its snapshot, when
 * the snapshot's header says it can be used (this version's, for this very log, which still
 * holds the bytes it covered); undefined when there is no such snapshot. Reads the header and
 * hashes the log's covered bytes, not the store's: no promise that the store itself is whole
 * (`readSnapshot` checks that). Never throws.
 */
export const snapshotTail = (file: string): number | undefined => {
  const usable = usableHeader(file);
  return usable === undefined ? undefined : usable.size - usable.header.log.offset;
};

/** The snapshot file of the log `file`. */
export const snapshotFileOf = (file: string): string => `${file}${SNAPSHOT_EXTENSION}`;

/** The file of the snapshot the log `file`'s snapshot replaced. */
const previousFileOf = (file: string): string => `${snapshotFileOf(file)}${PREVIOUS_EXTENSION}`;

/**
 * The snapshot of the log `file`, if there is one this process may trust: Left says why the one
 * there is not (Right(undefined) when there is none). Never throws.
 */
export const readSnapshot = (file: string): E.Either<string, FileSnapshot | undefined> =>
  readSnapshotFile(file, snapshotFileOf(file));

/**
 * The newest snapshot of the log `file` that covers at most `atMost` lines, of those kept (the
 * snapshot and the one it replaced), if this process may trust it; Right(undefined) when none
 * does. Only the headers of one past `atMost` are read. Never throws.
 */
export const readSnapshotAtMost = (file: string, atMost: number): E.Either<string, FileSnapshot | undefined> => {
  const candidates = [snapshotFileOf(file), previousFileOf(file)]
    .map((path) => ({ path, position: headerPosition(path) }))
    .filter((candidate): candidate is { path: string; position: number } => (candidate.position ?? Infinity) <= atMost)
    .sort((a, b) => b.position - a.position);
  let why: E.Either<string, FileSnapshot | undefined> = E.right(undefined);
  for (const { path } of candidates) {
    const read = readSnapshotFile(file, path);
    // Rewritten since its header was read: another position, which may be past `atMost`.
    if (E.isRight(read) && read.right !== undefined && read.right.position <= atMost) return read;
    if (E.isLeft(read)) why = read;
  }
  return why;
};

/** The position the header of the snapshot `path` gives, or undefined when it cannot be read as one. */
const headerPosition = (path: string): number | undefined => {
  try {
    const head = withFile(path, constants.O_RDONLY, firstLine);
    if (head === undefined) return undefined;
    const header = parseHeader(head);
    return E.isRight(header) ? header.right.position : undefined;
  } catch {
    return undefined;
  }
};

/** The snapshot `path` of the log `file`, as `readSnapshot` reads it. */
const readSnapshotFile = (file: string, path: string): E.Either<string, FileSnapshot | undefined> => {
  let bytes: Buffer | undefined;
  try {
    // A file longer than the longest string the engine makes cannot be parsed: it is not read.
    bytes = withFile(path, constants.O_RDONLY, (fd) =>
      fstatSync(fd).size > MAX_STRING_LENGTH ? undefined : readFileSync(fd),
    );
  } catch (error) {
    return (error as { code?: unknown }).code === 'ENOENT'
      ? E.right(undefined)
      : E.left(`the snapshot cannot be read (${String((error as { code?: unknown }).code ?? 'error')})`);
  }
  if (bytes === undefined) return E.left('the snapshot is too large to read');
  // The state's bytes are hashed as read (hashing the decoded text encodes it again, several times slower).
  const newline = bytes.indexOf(0x0a);
  const [head, body] =
    newline === -1 ? [bytes, bytes.subarray(bytes.length)] : [bytes.subarray(0, newline), bytes.subarray(newline + 1)];
  const parsed = parseHeader(head);
  if (E.isLeft(parsed)) return parsed;
  const header = parsed.right;
  const state = body.toString('utf8');
  if (sha256(body) !== header.state.sha256 || state.length !== header.state.length)
    return E.left('the snapshot is cut short or corrupt (its state does not match its hash)');
  const checked = checkLog(file, header);
  if (E.isLeft(checked)) return checked;
  const { offset, identity } = header.log;
  const { hash, last } = checked.right;
  return E.right({ offset, identity, position: header.position, state, hash, last });
};

/**
 * Keeps the snapshot `target` as the one it is about to be replaced by: a second name for the
 * same file, put in place by a rename, so a reader always finds a whole snapshot under either
 * name. A file system without hard links keeps none (a cache missed).
 */
const keepPrevious = (target: string, stamp: string): void => {
  const previous = `${target}${PREVIOUS_EXTENSION}`;
  const temporary = `${previous}.${stamp}.tmp`;
  try {
    linkSync(target, temporary);
    renameSync(temporary, previous);
  } catch {
    try {
      rmSync(temporary, { force: true });
    } catch {
      // Left for the next writer to remove.
    }
  }
};

/**
 * Temporary files of interrupted snapshot writes of `file`: `{snapshot}.{pid}.{stamp}.tmp` (and
 * `{snapshot}.previous.{pid}.{stamp}.tmp`, the replaced one's second name). The
 * files of sessions `{id}.jsonl.snapshot` and `{id}.jsonl.snapshot.x` start the same way, but
 * hold `.jsonl` again from the dot that ends that start: another session's snapshot being
 * written is never taken for a leftover.
 */
const removeLeftovers = (snapshotFile: string): void => {
  const prefix = `${basename(snapshotFile)}.`;
  for (const name of readdirSync(dirname(snapshotFile)))
    if (name.startsWith(prefix) && name.endsWith('.tmp') && !name.slice(prefix.length - 1).includes('.jsonl'))
      rmSync(join(dirname(snapshotFile), name), { force: true });
};

/**
 * Writes the snapshot of the log `file` at `snapshot.offset`. Call it holding the log's lock,
 * with the state the log's first `position` lines (its first `offset` bytes) give, and the hash of
 * those bytes as they were read: a log changed in place since fails its check, and the snapshot is
 * not used. The temporary files of writers killed before they renamed theirs are removed first
 * (no other writer can be busy: the lock is held).
 *
 * The newest snapshot wins, as in every store: one of fewer lines than the one kept (a writer
 * that lags behind another) replaces nothing, or the next process to open the session would
 * replay the lines between them, and a resent prompt would find no snapshot before its line.
 * The one replaced is kept as the previous when it covers fewer lines (a rewrite of the same
 * line keeps the previous there was); a snapshot that cannot be used is replaced whatever it covers.
 */
export const writeSnapshot = (file: string, snapshot: FileSnapshot): E.Either<SessionError, void> => {
  const target = snapshotFileOf(file);
  const stamp = `${process.pid}.${Date.now()}`;
  const temporary = `${target}.${stamp}.tmp`;
  const kept = usableHeader(file)?.header.position;
  if (kept !== undefined && kept > snapshot.position) return E.right(undefined);
  try {
    const fingerprint = fingerprintOf(snapshot.hash, snapshot.offset);
    const header: Header = {
      format: SNAPSHOT_FORMAT,
      version: SNAPSHOT_VERSION,
      library: libraryVersion(),
      log: { identity: snapshot.identity, offset: snapshot.offset, fingerprint },
      position: snapshot.position,
      state: { length: snapshot.state.length, sha256: sha256(snapshot.state) },
    };
    removeLeftovers(target);
    // No fsync: a snapshot lost to a crash is rebuilt from the log, which is flushed.
    writeFileSync(temporary, `${JSON.stringify(header)}\n${snapshot.state}`, { flag: 'wx', mode: 0o644 });
    if (kept !== undefined && kept < snapshot.position) keepPrevious(target, stamp);
    renameSync(temporary, target);
    return E.right(undefined);
  } catch (error) {
    try {
      rmSync(temporary, { force: true });
    } catch {
      // Left for the next writer to remove.
    }
    return E.left(ioError(`cannot write the snapshot ${target}`, error));
  }
};
