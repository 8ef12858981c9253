/**
 * A session kept in a store, read as a history: the lines of its log, numbered as the store
 * numbers them. A session in a folder is its log file, read as a stream like any FILE; one in
 * PostgreSQL is read in one statement (one moment of the log) and closed before the replay.
 */
import { lstatSync, type Stats } from 'node:fs';
import * as E from 'fp-ts/lib/Either.js';
import type { Failure } from '../../base/failure.js';
import { collapseWhitespace } from '../../base/text.js';
import { ioFailure } from '../../node/fileFailure.js';
import { parseSessionId } from '../../live/session/id.js';
import {
  deleteSessionFiles,
  fileSessionStore,
  locateSession,
  readLogBytes,
  resolveSessionsDirectory,
  type SessionsFolder,
} from '../../live/session/files.js';
import { workingDirectory } from '../../live/session/project.js';
import type { SessionStore, StoredLine } from '../../live/session/store.js';
import type { CliIo } from '../io.js';
import { openSource, type Source } from '../source.js';
import { projectOf, sessionsFolderIn } from '../project.js';
import { chooseStore, openPostgresStore, type StoreChoice } from '../store.js';

/** Lines per batch of a session read from a database, as a file's chunk gives about as many. */
const BATCH = 1_000;

/** A failure as a line: its code first. */
const line = ({ code, message }: { code: string; message: string }): string => `${code}: ${message}`;

/** The line that says `store` holds no session `id`. */
const unknownSession = (store: SessionStore, id: string): string =>
  `unknown_session: there is no session ${id} in ${store.location}`;

/**
 * Where the sessions of a folder `choice` are: one given on the command line is relative to the
 * working directory, as any path there; the environment's and the default one to the project,
 * so they name the same folder from wherever in the project a command runs.
 */
const folderOf = (
  io: CliIo,
  choice: StoreChoice & { readonly kind: 'folder' },
): E.Either<Failure<'io'>, SessionsFolder> =>
  sessionsFolderIn(choice.from === 'option' ? workingDirectory(io.cwd) : projectOf(io), choice.directory);

/** A store opened (a database is not connected yet), with its folder when it is one. */
interface OpenedStore {
  readonly store: SessionStore;
  readonly folder?: SessionsFolder;
}

/** The store `choice` names, opened; a folder that needs a working directory gone is one failure. */
const openChosen = async (io: CliIo, choice: StoreChoice): Promise<E.Either<Failure, OpenedStore>> =>
  choice.kind === 'postgres'
    ? E.map((store: SessionStore): OpenedStore => ({ store }))(await openPostgresStore(choice.address))
    : E.map((folder: SessionsFolder): OpenedStore => ({ store: fileSessionStore(folder), folder }))(
        folderOf(io, choice),
      );

/**
 * Runs `work` on the store `store` (or the environment's, or the project's folder) names, closed
 * after, given the folder too when the store is one.
 */
export const withStore = async <T>(
  io: CliIo,
  store: string | undefined,
  work: (opened: SessionStore, folder: SessionsFolder | undefined) => Promise<E.Either<string, T>>,
): Promise<E.Either<string, T>> => {
  const choice = chooseStore(store === undefined ? {} : { store }, io.env);
  if (E.isLeft(choice)) return E.left(line(choice.left));
  const opened = await openChosen(io, choice.right);
  if (E.isLeft(opened)) return E.left(line(opened.left));
  try {
    return await work(opened.right.store, opened.right.folder);
  } finally {
    await opened.right.store.close();
  }
};

/** Every line of session `id` in `store`; a session that is not there, or a store that fails, is one line. */
export const readSession = async (
  store: SessionStore,
  id: string,
): Promise<E.Either<string, ReadonlyArray<StoredLine>>> => {
  const read = await store.read(id, 0);
  if (E.isLeft(read)) return E.left(line(read.left));
  if (!read.right.exists) return E.left(unknownSession(store, id));
  return E.right(read.right.lines);
};

/** Bytes of a log per piece written: a long session is not copied whole again. */
const PIECE = 1 << 20;

/** `bytes` in pieces of about `PIECE` bytes, each ended by a line break (a line is never split). */
function* piecesOf(bytes: Buffer): Generator<Buffer> {
  for (let start = 0; start < bytes.length;) {
    const end = bytes.indexOf(0x0a, start + PIECE);
    yield bytes.subarray(start, end === -1 ? bytes.length : end + 1);
    start = end === -1 ? bytes.length : end + 1;
  }
}

/** `count` blank lines, in pieces of at most `PIECE`: a gap of a billion lines is never one text. */
function* blankLines(count: number): Generator<string> {
  const whole = '\n'.repeat(Math.max(0, Math.min(count, PIECE)));
  for (let left = count; left > 0; left -= PIECE) yield left >= PIECE ? whole : whole.slice(0, left);
}

/**
 * `lines` up to line `position` as the text of a history, a batch of lines a piece: blank
 * lines wherever the store numbers a line it does not list (however many a row edited by hand
 * leaves, each run of them in bounded pieces), so the text's lines are numbered as the store
 * numbers them.
 */
function* historyPieces(lines: ReadonlyArray<StoredLine>, position: number): Generator<string> {
  let previous = 0;
  for (let start = 0; start < lines.length; start += BATCH) {
    let piece = '';
    for (const { line, text } of lines.slice(start, start + BATCH)) {
      const gap = line - previous - 1;
      if (gap < PIECE) piece += '\n'.repeat(gap);
      else {
        if (piece !== '') yield piece;
        yield* blankLines(gap);
        piece = '';
      }
      piece += `${text}\n`;
      previous = line;
    }
    yield piece;
  }
  yield* blankLines(position - previous);
}

/**
 * Session `id` as a history file, in pieces: in a folder, its log's complete lines byte for byte
 * (`readLogBytes`, bytes that are not UTF-8 included); in another store, its lines as text,
 * numbered as the store numbers them. A session that is not there, or a store that fails, is one line.
 */
export const readSessionText = async (
  store: SessionStore,
  folder: SessionsFolder | undefined,
  id: string,
): Promise<E.Either<string, Iterable<string | Uint8Array>>> => {
  const missing = unknownSession(store, id);
  if (folder !== undefined) {
    const bytes = await readLogBytes(id, folder);
    if (E.isLeft(bytes)) return E.left(line(bytes.left));
    return bytes.right === undefined ? E.left(missing) : E.right(piecesOf(bytes.right));
  }
  const read = await store.read(id, 0);
  if (E.isLeft(read)) return E.left(line(read.left));
  if (!read.right.exists) return E.left(missing);
  return E.right(historyPieces(read.right.lines, read.right.position));
};

/**
 * Deletes session `id` from `store` and says what went, in one line: in a folder, the files a
 * session whose log is gone left beside it go too, and are named (`deleteSessionFiles`). A
 * session that is not there, or a store that fails, is one line.
 */
export const deleteStoredSession = async (
  store: SessionStore,
  folder: SessionsFolder | undefined,
  id: string,
): Promise<E.Either<string, string>> => {
  // The store's folder is the user's name for it, whatever it holds (a line break, an escape): one line, as every message.
  const deleted = `${collapseWhitespace(`deleted session ${id} from ${store.location}`)}\n`;
  const missing = unknownSession(store, id);
  if (folder !== undefined) {
    const removed = await deleteSessionFiles(id, folder);
    if (E.isLeft(removed)) return E.left(line(removed.left));
    const { log, sideFiles } = removed.right;
    if (log) return E.right(deleted);
    if (sideFiles.length === 0) return E.left(missing);
    return E.right(
      `${collapseWhitespace(`deleted the files session ${id} left beside its log, which was gone, from ${store.location}: ${sideFiles.join(', ')}`)}\n`,
    );
  }
  const removed = await store.delete(id);
  if (E.isLeft(removed)) return E.left(line(removed.left));
  return removed.right ? E.right(deleted) : E.left(missing);
};

/** The session `id` as a history source. */
export const openStoredSession = (
  io: CliIo,
  id: string,
  store: string | undefined,
): Promise<E.Either<string, Source>> =>
  withStore(io, store, async (opened, folder): Promise<E.Either<string, Source>> => {
    const valid = parseSessionId(id);
    if (E.isLeft(valid)) return E.left(line(valid.left));
    if (folder !== undefined) {
      // The log file itself, streamed as FILE is: any size, in bounded memory. As every other
      // reader of the folder, it reads a regular file inside it, never through a link out of it.
      const located = await locateSession(valid.right, { ...folder, create: false });
      if (E.isLeft(located)) return E.left(line(located.left));
      const { file } = located.right;
      let found: Stats | undefined;
      try {
        found = lstatSync(file, { throwIfNoEntry: false });
      } catch (error) {
        // A file where the folder should be (ENOTDIR), a loop of links: the user's to fix, in one line.
        return E.left(line(ioFailure(`cannot read ${file}`, error)));
      }
      if (found === undefined)
        return E.left(`unknown_session: there is no session ${id} in ${resolveSessionsDirectory(folder).directory}`);
      // A session's log is a history, whatever its first line holds: never taken for a saved state;
      // and, as a live session and `sessions export` read it, it ends at its last complete line.
      return openSource(io, file, { regularFile: true }, 'log');
    }
    const lines = await readSession(opened, valid.right);
    return E.map((read: ReadonlyArray<StoredLine>): Source => ({
      kind: 'history',
      batches: (async function* () {
        for (let start = 0; start < read.length; start += BATCH) yield read.slice(start, start + BATCH);
      })(),
      fractionRead: () => undefined,
      close: async () => undefined,
    }))(lines);
  });
