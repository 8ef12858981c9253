/**
 * `fact-tracker init claude|codex`: writes the hook and MCP settings of an agent into a
 * project, merged into the files already there, with commands that run this installation and
 * nothing else. Every file is read, merged and checked writable before any is written: a
 * malformed file, one that is a symbolic link, or one that cannot be written stops the command
 * with nothing written. The files are then written together (`writeTogether`). A file whose
 * content does not change is not touched. Runs on one project take turns, under a lock taken
 * before the first read.
 */
import { accessSync, constants, existsSync, lstatSync, realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as E from 'fp-ts/lib/Either.js';
import type * as TE from 'fp-ts/lib/TaskEither.js';
import type { Failure } from '../../base/failure.js';
import { escapeForLine, quoteText } from '../../base/text.js';
import { describeFileFailure } from '../../node/fileFailure.js';
import { type LockSettings, type StillLocked, withFileLock } from '../../node/lock.js';
import { resolveProjectDirectory, workingDirectory } from '../../live/session/project.js';
import type { InitCommand } from '../command.js';
import { isOutsideFailure } from '../boundary.js';
import { type CliIo, EXIT_OK } from '../io.js';
import type { InitHost } from '../init/hosts.js';
import { chooseVia, hasInstalledBinary, outsideFileWarning, selectOutsideFileSpec } from '../init/install.js';
import { isReadOnly } from '../../node/readOnly.js';
import { findDuplicateKey } from '../../base/jsonKeys.js';
import { markIndexKeys, unmarkIndexKeys } from '../init/jsonKeyOrder.js';
import { findInexactNumber } from '../init/jsonNumbers.js';
import { keepingLineEndings } from '../init/lineEndings.js';
import { readSettingsFile } from '../init/projectFile.js';
import { isFactTrackerHook } from '../init/recognize.js';
import {
  formatJson,
  hookEvents,
  isUnshowable,
  launcherFor,
  type Launcher,
  mergeCodexToml,
  mergeHooks,
  mergeMcpJson,
  parseJsonSettings,
  serverCommandLine,
  unsafeStore,
} from '../init/settings.js';
import {
  droppedWarning,
  keptAsWrittenNotes,
  keptSecretWarning,
  keptOptions,
  readCodexServer,
  readHooks,
  readMcpJsonServer,
  type ServerReading,
  storesOf,
  unreadStoreRefusal,
  sameStore,
} from '../init/existing.js';
import { type FileToWrite, removeStaleStaged, writeTogether } from '../init/writeTogether.js';
import { chooseStore, holdsPassword, STORE_VARIABLE } from '../store.js';

/**
 * The entry point of this installation, `dist/cli/main.js`: what the settings run. This code
 * is compiled in `dist/cli/commands/` and bundled in `dist/bundle/` (see `scripts/bundle.ts`).
 */
const thisMain = (): string => {
  const places = ['../main.js', '../cli/main.js'].map((path) => fileURLToPath(new URL(path, import.meta.url)));
  const main = places.find((place) => existsSync(place)) ?? places[0]!;
  try {
    return realpathSync(main);
  } catch (error) {
    if (!isOutsideFailure(error)) throw error;
    return main;
  }
};

/** One settings file and how its new content comes from its current one. */
interface SettingsFile {
  /** Relative to the project. */
  readonly path: string;
  readonly merge: (current: string | undefined) => E.Either<string, string>;
}

const jsonFile = (path: string, merge: (value: unknown) => E.Either<string, unknown>): SettingsFile => ({
  path,
  merge: (current) => {
    if (current === undefined) return E.map(formatJson)(merge(undefined));
    const parsed = parseJsonSettings(current);
    if (E.isLeft(parsed)) return parsed;
    const merged = merge(parsed.right);
    if (E.isLeft(merged)) return merged;
    // Unchanged content keeps its bytes: the user's layout is not rewritten for nothing.
    if (JSON.stringify(merged.right) === JSON.stringify(parsed.right)) return E.right(current);
    const inexact = findInexactNumber(current);
    if (inexact !== undefined)
      return E.left(`it holds the number ${inexact}, which would not be written back as it is`);
    // JSON.parse kept the last of a key given twice: a rewrite would drop the others unasked.
    const duplicate = findDuplicateKey(current);
    if (duplicate !== undefined)
      return E.left(
        `it gives the key ${quoteText(duplicate)} twice in one object, and a rewrite would keep only the last: remove one and run init again`,
      );
    // Merged again from the text with the keys that read as array indices marked, which an
    // object would put first: every key is written where the file had it.
    return E.map((ordered: unknown) => unmarkIndexKeys(formatJson(ordered, current)))(
      E.chain(merge)(parseJsonSettings(markIndexKeys(current))),
    );
  },
});

const filesOf = (project: string, host: InitHost, launcher: Launcher): ReadonlyArray<SettingsFile> => {
  const ours = isFactTrackerHook(project, launcher);
  return host === 'claude'
    ? [
        jsonFile(join('.claude', 'settings.json'), (value) => mergeHooks(value, 'claude', launcher, ours)),
        jsonFile('.mcp.json', (value) => mergeMcpJson(value, launcher)),
      ]
    : [
        jsonFile(join('.codex', 'hooks.json'), (value) => mergeHooks(value, 'codex', launcher, ours)),
        { path: CODEX_CONFIG, merge: (current) => mergeCodexToml(current, launcher) },
      ];
};

/**
 * Refuses a path that is, or passes through, a symbolic link inside the project, or passes
 * through something that is not a folder (a file `.claude`, which a clone may hold): the system
 * would refuse it later, once some files may be written.
 */
const checkPath = (project: string, path: string): E.Either<string, void> => {
  const parts = path.split(/[\\/]/u);
  let current = project;
  for (const [index, part] of parts.entries()) {
    current = join(current, part);
    let entry;
    try {
      entry = lstatSync(current, { throwIfNoEntry: false });
    } catch (error) {
      if (!isOutsideFailure(error)) throw error;
      return E.left(`cannot read ${relative(project, current)}: ${describeFileFailure(error)} (nothing was written)`);
    }
    if (entry === undefined) return E.right(undefined);
    if (entry.isSymbolicLink())
      return E.left(
        `${relative(project, current)} is a symbolic link; refusing to write through it (nothing was written)`,
      );
    if (index < parts.length - 1 && !entry.isDirectory())
      return E.left(`${relative(project, current)} is not a folder (nothing was written)`);
  }
  return E.right(undefined);
};

/** What one file will get. */
interface Planned extends FileToWrite {
  readonly changed: boolean;
}

/**
 * Refuses a file that will be written but cannot be, before any is: a file nobody may write
 * (read-only for root too, whom `access` lets write anything, as `replay --save` refuses one), a
 * file or a folder the running user may not write. Files are renamed into their folder, or their
 * folder is made in its parent, so that folder must be writable as well.
 */
const checkWritable = (project: string, path: string, mode: number | undefined): E.Either<string, void> => {
  const absolute = join(project, path);
  try {
    if (mode !== undefined && isReadOnly(absolute, mode))
      return E.left(`cannot write ${path}: it is read-only (nothing was written)`);
  } catch (error) {
    if (!isOutsideFailure(error)) throw error;
    return E.left(`cannot write ${path}: it is read-only (nothing was written)`);
  }
  let folder = dirname(absolute);
  while (statSync(folder, { throwIfNoEntry: false }) === undefined && dirname(folder) !== folder)
    folder = dirname(folder);
  try {
    accessSync(folder, constants.W_OK);
  } catch (error) {
    if (!isOutsideFailure(error)) throw error;
    return E.left(`cannot write ${path}: ${describeFileFailure(error)} (nothing was written)`);
  }
  return E.right(undefined);
};

const plan = (project: string, file: SettingsFile): E.Either<string, Planned> => {
  const absolute = join(project, file.path);
  const path = checkPath(project, file.path);
  if (E.isLeft(path)) return path;
  let current: string | undefined;
  let mode: number | undefined;
  try {
    const read = readSettingsFile(absolute);
    if (read === 'not-a-file') return E.left(`${file.path} is not a regular file (nothing was written)`);
    if (read === 'not-utf-8') return E.left(`${file.path} is not valid UTF-8 (nothing was written)`);
    if (read !== undefined) ({ text: current, mode } = read);
  } catch (error) {
    if (!isOutsideFailure(error)) throw error;
    return E.left(`cannot read ${file.path}: ${describeFileFailure(error)} (nothing was written)`);
  }
  // Every file keeps its byte-order mark and CRLF line endings, whatever its merge writes.
  const merged = keepingLineEndings(file.merge)(current);
  if (E.isLeft(merged)) return E.left(`${file.path}: ${merged.left}; nothing was written`);
  if (merged.right !== current) {
    const writable = checkWritable(project, file.path, mode);
    if (E.isLeft(writable)) return writable;
  }
  return E.right({
    path: file.path,
    absolute,
    text: merged.right,
    changed: merged.right !== current,
    ...(mode === undefined ? {} : { mode }),
  });
};

/** What to do next in the agent of `host`, whose subagents' results are recorded in `sessions`. */
const nextSteps = (host: InitHost, sessions: string): string =>
  host === 'claude'
    ? `Claude Code reads these files when a session starts in the project (approve the MCP server
when it asks). Subagents then get their [Session Context] in their prompt, and their results are
recorded in ${sessions} (see docs/hooks.md).`
    : `Codex runs a project's hooks and MCP servers once you trust the project: run /hooks in Codex to
review and trust these. Subagents get their [Session Context] when they start, and their results
are recorded in ${sessions} (see docs/hooks.md).`;

/**
 * The lock every run takes on a project before it reads its settings, so that two runs at once
 * (two terminals, a setup script run twice) take turns instead of each writing some files of
 * its own: its folder, `.fact-tracker-init.lock`, is in the project, where every process that
 * may write the settings sees it (one in the system's temporary folder would not be shared by
 * another user, container or TMPDIR); each run removes it, and one left by a killed run is an
 * empty folder, which git does not commit, taken over once stale.
 */
const INIT_LOCK_FILE = '.fact-tracker-init';

/**
 * A run holds the lock for well under a second of its own work, all of it synchronous, so the
 * lock is not refreshed meanwhile: on a machine loaded enough to stretch that past `staleMs`
 * the run counts its lock as lost and writes nothing. 30 s keeps that to a machine starved
 * beyond use (10 s was reached by short runs on a small machine under heavy load), at the cost
 * of the wait one killed while holding it leaves behind. The wait outlasts that and a queue of
 * live runs.
 */
const INIT_LOCK: LockSettings = { staleMs: 30_000, waitMs: 90_000, shown: INIT_LOCK_FILE };

/** Where a store to write came from, as messages name it. */
interface StoreSource {
  /** The store: `--store`, or the store kept from the settings. */
  readonly name: string;
  /** Its URL, for a URL refused. */
  readonly url: string;
}

const GIVEN: StoreSource = { name: '--store', url: 'the --store URL' };

/** A store the settings hold, which a run without `--store` keeps. */
const keptFrom = (file: string): StoreSource => ({
  name: `the store kept from ${file}`,
  url: `the store URL kept from ${file}`,
});

/**
 * A store to write into settings a team commits, checked: a folder, or a PostgreSQL URL
 * without a password (refused with the way to give one instead), and nothing a shell would read.
 */
const checkStore = (store: string, source: StoreSource): E.Either<string, string> => {
  if (store.trim() === '') return E.left(`${source.name} needs a folder or a postgres:// URL; nothing was written`);
  const choice = chooseStore({ store }, undefined);
  // The check names a store `--store`: one kept from the settings is named by where it was.
  if (E.isLeft(choice))
    return E.left(
      `${choice.left.code}: ${choice.left.message.replace(/^--store\b/u, source.name)}; nothing was written`,
    );
  if (choice.right.kind === 'postgres' && choice.right.address.secrets.length > 0)
    return E.left(
      `${source.url} holds a password, which would be written into settings meant to be committed; nothing was written. Set ${STORE_VARIABLE} to the URL in your environment (your shell profile, or your CI's secrets) and run init again with --store ${choice.right.address.location}${source === GIVEN ? ' (or without --store)' : ''}, or keep the password in PGPASSWORD or ~/.pgpass`,
    );
  const unsafe = unsafeStore(store);
  return unsafe === undefined ? E.right(store) : E.left(`${source.name} ${unsafe}; nothing was written`);
};

/** The settings file whose hooks name the store a run without `--store` keeps. */
const hooksFile = (host: InitHost): string =>
  host === 'claude' ? join('.claude', 'settings.json') : join('.codex', 'hooks.json');

/** Codex's configuration, where its MCP server is registered. */
const CODEX_CONFIG = join('.codex', 'config.toml');

/** A settings file of the project as text; undefined when there is none or it cannot be read as text, which the merge that follows refuses in its own words. */
const readTextSettings = (project: string, path: string): string | undefined => {
  try {
    const read = readSettingsFile(join(project, path));
    // No settings yet, or a pipe, a folder or bytes not UTF-8.
    return read === undefined || typeof read === 'string' ? undefined : read.text;
  } catch (error) {
    if (!isOutsideFailure(error)) throw error;
    return undefined;
  }
};

/** A JSON settings file of the project, parsed; undefined when there is none or it cannot be read as one, which the merge that follows refuses in its own words. */
const readJsonSettings = (project: string, path: string): unknown => {
  const text = readTextSettings(project, path);
  const parsed = text === undefined ? undefined : parseJsonSettings(text);
  return parsed !== undefined && E.isRight(parsed) ? parsed.right : undefined;
};

/** A PostgreSQL URL without its password, to name in a message; undefined when it is not one. */
const withoutPassword = (store: string): string | undefined => {
  const choice = chooseStore({ store }, undefined);
  return E.isRight(choice) && choice.right.kind === 'postgres' ? choice.right.address.location : undefined;
};

/** The file that registers the server of `host`. */
const serverFile = (host: InitHost): string => (host === 'claude' ? '.mcp.json' : CODEX_CONFIG);

/**
 * Refuses a run without `--store` that would lose a store the MCP server is given in
 * `.mcp.json` (Claude Code) or `.codex/config.toml` (Codex), set there by hand (`part` says
 * where: its `env`, or its command): one holding a password (which a committed file must not
 * keep, and which init must not drop unasked either), or another one than `kept` (named by
 * `keptWhere`), which would replace it. The user says which store to keep with `--store`.
 */
const checkMcpStore = (
  host: InitHost,
  part: 'env' | 'command',
  mcpStore: string,
  kept: { readonly store: string; readonly where: string } | undefined,
): E.Either<string, void> => {
  const where =
    host === 'claude'
      ? `.mcp.json (the fact-tracker server's ${part === 'env' ? 'env' : 'args'})`
      : `${CODEX_CONFIG} (the fact-tracker server's table)`;
  if (holdsPassword(mcpStore)) {
    const location = withoutPassword(mcpStore);
    return E.left(
      `the store URL in ${where} holds a password, which init neither keeps in settings meant to be committed nor drops unasked; nothing was written. Put the URL in ${STORE_VARIABLE} in your environment (your shell profile, or your CI's secrets) or the password in PGPASSWORD, PGPASSFILE or ~/.pgpass, then run init again with --store ${location === undefined ? 'and the URL without its password' : location}`,
    );
  }
  if (kept !== undefined && mcpStore !== kept.store)
    return E.left(
      `the fact-tracker server in ${serverFile(host)} is given another store than ${kept.where}, which would replace it; nothing was written. Run init again with --store and the store to keep in both`,
    );
  return E.right(undefined);
};

/**
 * The store a run without `--store` keeps: the one the hooks name, else the one the server's
 * command names (a store only in the server's `env` stays there as written), checked as a
 * `--store` is; and every store the server is given, checked against it. Right(undefined): none.
 */
const keptStore = (
  host: InitHost,
  hooksStores: ReadonlyArray<string>,
  server: ServerReading,
): E.Either<string, string | undefined> => {
  if (hooksStores.length > 1)
    return E.left(
      `the fact-tracker hooks of ${hooksFile(host)} name different stores, and init writes one; nothing was written. Run init again with --store and the store to keep`,
    );
  const commandStore = server.command?.store;
  const [hooksStore] = hooksStores;
  const store = hooksStore ?? commandStore;
  const source = hooksStore !== undefined ? hooksFile(host) : serverFile(host);
  const checked = store === undefined ? E.right(undefined) : checkStore(store, keptFrom(source));
  if (E.isLeft(checked)) return checked;
  const kept =
    store === undefined
      ? undefined
      : { store, where: hooksStore !== undefined ? `the hooks of ${hooksFile(host)}` : "the server's command" };
  for (const [part, given] of [
    ['env', server.envStore],
    ['command', hooksStore === undefined ? undefined : commandStore],
  ] as const)
    if (given !== undefined) {
      const consistent = checkMcpStore(host, part, given, kept);
      if (E.isLeft(consistent)) return consistent;
    }
  return checked;
};

/** Where `writeSettings` writes, and with what. */
interface InitPlace {
  readonly project: string;
  readonly main: string;
  readonly via: 'node' | 'npx';
  /** Fails once the project's init lock was lost. */
  readonly stillLocked: StillLocked;
}

/**
 * Reads, merges and writes the settings, holding the project's init lock: another run's
 * read-modify-write never interleaves with this one's. A file that cannot be merged stops it
 * with nothing written.
 */
const writeSettings = (
  command: InitCommand,
  io: CliIo,
  { project, main, via, stillLocked }: InitPlace,
): E.Either<string, number> => {
  // What the settings already give the commands: a store kept from them is checked as one
  // given (a password put there by hand would otherwise be printed and copied into the other files).
  const hooksSettings = readJsonSettings(project, hooksFile(command.host));
  const isOurs = isFactTrackerHook(project, launcherFor(main, via));
  const hooks = readHooks(hooksSettings, isOurs, hookEvents(command.host));
  const server =
    command.host === 'claude'
      ? readMcpJsonServer(readJsonSettings(project, '.mcp.json'))
      : readCodexServer(readTextSettings(project, CODEX_CONFIG) ?? '');
  const unread = unreadStoreRefusal(hooks, server, hooksFile(command.host), serverFile(command.host));
  const checked =
    command.store !== undefined
      ? checkStore(command.store, GIVEN)
      : unread === undefined
        ? keptStore(command.host, storesOf(hooks), server)
        : E.left(unread);
  if (E.isLeft(checked)) return checked;
  const store = checked.right;
  // A line kept as written goes on using its own store (the default when it names none, or when
  // init cannot read the one it names). One it names is compared as written, whatever may come
  // before; one a command before its hook may set is the one --store gives, as the refusal asked;
  // hooks of one line given different stores have no one store to compare.
  if (
    hooks.some(
      (reading) =>
        reading.kept === true &&
        (reading.severalStores === true ||
          ((reading.store !== undefined || reading.storeSetBefore !== true) && !sameStore(reading.store, store))),
    )
  )
    return E.left(
      `a fact-tracker hook command of ${hooksFile(command.host)} that init keeps as written uses another store than the one init would write for the other hooks and the server, which would split the sessions between them; nothing was written. Run init again with --store and the store that line uses, or edit the line`,
    );
  const hookOptions = keptOptions(hooks, command.layout !== undefined);
  const serverOptions = keptOptions(
    server.command === undefined
      ? server.exists
        ? [{ options: [], dropped: ['a command that runs no fact-tracker mcp init can read'] }]
        : []
      : [server.command],
    command.layout !== undefined,
  );
  const launcher = launcherFor(main, via, store, command.layout, { hook: hookOptions.words, mcp: serverOptions.words });
  const planned: Planned[] = [];
  for (const file of filesOf(project, command.host, launcher)) {
    const one = plan(project, file);
    if (E.isLeft(one)) return one;
    planned.push(one.right);
  }
  // Each path was checked (no link on the way): what a run killed mid-write left beside a file goes.
  removeStaleStaged(planned, Date.now(), INIT_LOCK.staleMs);
  for (const warning of [
    droppedWarning(`the fact-tracker hook commands of ${hooksFile(command.host)}`, true, hookOptions),
    droppedWarning(`the fact-tracker server of ${serverFile(command.host)}`, false, serverOptions),
    keptSecretWarning(hooks, hooksFile(command.host)),
  ])
    if (warning !== undefined) io.stderr(warning);
  // A run stopped (Ctrl-Z) past the lock's stale time, whose lock another run took over,
  // renames no file over that run's.
  const written = writeTogether(
    planned.filter((file) => file.changed),
    () => E.mapLeft((lost: Failure<'io'>) => lost.message)(stillLocked()),
  );
  if (E.isLeft(written)) return written;
  for (const file of planned) io.stdout(`${file.changed ? 'wrote      ' : 'unchanged  '}${file.path}\n`);
  const notes = keptAsWrittenNotes(hooksSettings, isOurs, hookEvents(command.host), hooksFile(command.host));
  if (notes !== '') io.stdout(notes);
  io.stdout(`\nThe hooks run: ${launcher.hook}\nThe MCP server runs: ${serverCommandLine(command.host, launcher)}\n`);
  if (store !== undefined)
    io.stdout(
      `\nThe sessions are in ${STORE_VARIABLE} when your environment sets it, else in ${store}${command.store === undefined ? ' (kept from the settings there: --store changes it)' : ''}. Keep a password out of these files: in ${STORE_VARIABLE}, PGPASSWORD or ~/.pgpass (see docs/team.md).\n`,
    );
  if (via === 'node')
    io.stdout(
      `\nThese settings hold this machine's path to fact-tracker: keep them out of git. For settings a team can commit, install the package in the project and run init again (see docs/hooks.md).\n`,
    );
  // After the files are written: a binary that cannot be reached (a file for node_modules, a
  // loop of links) is none, which the warning says, and the run that wrote stays a success.
  if (via === 'npx' && !hasInstalledBinary(project))
    io.stderr(
      `fact-tracker init: warning: ${shownProject(project)} has no node_modules/.bin/fact-tracker yet; npx --no-install runs only an installed copy (install the package in the project first)\n`,
    );
  // The portable form is meant to be committed: a clone must be able to install what it runs.
  const outside = via === 'npx' ? selectOutsideFileSpec(project) : undefined;
  if (outside !== undefined) io.stderr(`fact-tracker init: warning: ${outsideFileWarning(outside)}\n`);
  // The store was checked to hold no password (`checkStore`): naming it shows no secret.
  const sessions = store === undefined ? '.fact-tracker/sessions/' : `${store} unless ${STORE_VARIABLE} names another`;
  io.stdout(`\n${nextSteps(command.host, sessions)}\n`);
  return E.right(EXIT_OK);
};

/**
 * The project's path as a message names it: as it is, or quoted as a JSON string, its line
 * breaks and controls escaped, when it holds any (a folder may be named so), which would split
 * the message's line or drive the terminal.
 */
const shownProject = (project: string): string =>
  isUnshowable(project) ? escapeForLine(JSON.stringify(project)) : project;

/** True for a folder; false for anything else, and for a path that cannot be followed (through a file, a loop of links). */
const isDirectory = (path: string): boolean => {
  try {
    return statSync(path, { throwIfNoEntry: false })?.isDirectory() === true;
  } catch (error) {
    if (!isOutsideFailure(error)) throw error;
    return false;
  }
};

/**
 * The project to set up: `--project` (relative to the working directory), else the git work
 * tree of the working directory, else it; or why there is none (the working directory was
 * deleted, and the project is not given as an absolute path).
 */
const projectToSetUp = (command: InitCommand, io: CliIo): E.Either<Failure<'io'>, string> => {
  const named = command.project;
  if (named === undefined) return resolveProjectDirectory(io.cwd === undefined ? {} : { cwd: io.cwd });
  return isAbsolute(named)
    ? E.right(resolve(named))
    : E.map((cwd: string) => resolve(cwd, named))(workingDirectory(io.cwd));
};

/**
 * Writes the settings under the project's init lock, so that runs at once take turns; a file
 * that cannot be merged, or a lock not had in time, stops it with nothing written.
 */
export const runInit =
  (command: InitCommand, io: CliIo): TE.TaskEither<string, number> =>
  async () => {
    const found = projectToSetUp(command, io);
    if (E.isLeft(found)) return E.left(found.left.message);
    const project = found.right;
    if (!isDirectory(project)) return E.left(`the project ${shownProject(project)} is not a directory`);
    const main = thisMain();
    const via = chooseVia(project, command.via);
    if (via === 'node' && statSync(main, { throwIfNoEntry: false }) === undefined)
      return E.left(`this installation has no built entry point at ${main}: run npm run build first`);
    const locked = await withFileLock(join(project, INIT_LOCK_FILE), INIT_LOCK, (stillLocked, notices) => {
      for (const notice of notices) io.stderr(`fact-tracker init: warning: ${notice}\n`);
      return Promise.resolve(writeSettings(command, io, { project, main, via, stillLocked }));
    });
    // The lock's own failures come before anything is read: nothing was written.
    return E.mapLeft((reason: string | Failure<'io'>) =>
      typeof reason === 'string' ? reason : `${reason.message}; nothing was written`,
    )(locked);
  };
