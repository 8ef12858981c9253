/**
 * `fact-tracker context SUBCOMMAND`: the shared context of the repository in the working
 * directory, through the library's context shell. Stored text is untrusted, so every field
 * printed goes through `collapseWhitespace` and stays on its line.
 */
import { statSync } from 'node:fs';
import { relative, resolve, sep } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import * as O from 'fp-ts/lib/Option.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import { pipe } from 'fp-ts/lib/function.js';
import { buildContextBundle } from '../../context/bundle.js';
import type { StaleReason } from '../../context/checkpoint.js';
import { CONTEXT_CONFIG_FILE, SHARED_CONTEXT_ENV, type SharedContextFlag } from '../../context/flag.js';
import type { ContextError } from '../../context/model.js';
import { isMergedMove, moveContext, resolveContext, updateContext, writeContext } from '../../context/node/edit.js';
import { checkRegularFile } from '../../context/node/files.js';
import { type LoadedContext, loadContext } from '../../context/node/load.js';
import { type ContextOptions, isContextEnabled } from '../../context/node/scope.js';
import { CONTEXT_LIMITS } from '../../context/model.js';
import { droppedNotice, relatedNotice } from '../../context/notices.js';
import { splitParagraphs } from '../../context/paragraphs.js';
import { pinnedRuleLines } from '../../context/pinned.js';
import { recordContextClaim } from '../../context/update.js';
import type { FactStore } from '../../core/store/state.js';
import { collapseWhitespace, isBlank } from '../../base/text.js';
import type { CheckpointRequest, ContextCommand } from '../contextArgs.js';
import { type CliIo, EXIT_OK, EXIT_REJECTED_LINES } from '../io.js';
import { count, number } from '../render.js';
import { createStyle, type Style } from '../style.js';
import { toJson } from './shared.js';

type Loaded = O.Option<LoadedContext>;

const safe = (text: string): string => collapseWhitespace(text);
const short = (hash: string | undefined): string =>
  hash === undefined || hash === '' ? 'no commit' : hash.slice(0, 7);
const time = (at: number | undefined): string => (at === undefined ? 'unknown time' : new Date(at).toISOString());

const OFF = `shared context is off: set ${SHARED_CONTEXT_ENV}=true, or put {"sharedContext": {"enabled": true}} in ${CONTEXT_CONFIG_FILE} at the repository root`;

const SOURCES: Readonly<Record<SharedContextFlag['source'], string>> = {
  option: 'by option',
  env: `by ${SHARED_CONTEXT_ENV}`,
  config: `by ${CONTEXT_CONFIG_FILE}`,
  default: 'by default',
};

const REASONS: Readonly<Record<StaleReason, string>> = {
  not_a_git_repository: 'not a git repository, nothing can be verified',
  no_checkpoint: 'no checkpoint recorded yet',
  head_moved: 'HEAD moved',
  files_changed: 'tracked files changed',
  summary_changed: 'summary edited after the checkpoint',
  unverified: 'not verified against the repository',
};

/** A path of the context, relative to the repository root, with forward slashes. */
const shown = (loaded: LoadedContext, file: string): string => relative(loaded.paths.root, file).split(sep).join('/');

/** The files a write wrote: the JSON, and the dashboard unless it could not be written (a warning says why). */
const wroteFiles = (loaded: LoadedContext): string =>
  loaded.dashboardWritten
    ? `${shown(loaded, loaded.paths.json)} and ${shown(loaded, loaded.paths.dashboard)}`
    : shown(loaded, loaded.paths.json);

const checkpointLine = ({ context, status }: LoadedContext, style: Style): string => {
  const checkpoint = context.checkpoint === undefined ? 'none' : short(context.checkpoint.gitHead);
  const head = status.repository === 'git' ? ` · HEAD ${short(status.head)}` : '';
  return status.stale
    ? `checkpoint: ${checkpoint}${head} · ${style.red(`STALE: ${status.reasons.map((reason) => REASONS[reason]).join(', ')}`)}`
    : `checkpoint: ${checkpoint}${head} · ${style.green('summary verified')}`;
};

/** `context show` as text. */
const renderShow = (loaded: LoadedContext, style: Style): string => {
  const { context, status, key } = loaded;
  const lines = [
    `shared context: on (${SOURCES[loaded.flag.source]})`,
    style.bold(
      `${loaded.kind} context · repo ${safe(key.repo)} · branch ${safe(key.branch)} · workstream ${safe(key.workstreamId)}`,
    ),
    `file: ${shown(loaded, loaded.paths.json)}${loaded.stored ? '' : ' (nothing stored yet for this workstream)'} · dashboard: ${shown(loaded, loaded.paths.dashboard)}`,
    checkpointLine(loaded, style),
  ];
  for (const note of loaded.notes) lines.push(`note: ${safe(note)}`);
  if (status.note !== undefined) lines.push(`note: ${safe(status.note)}`);
  if (status.changes.length > 0)
    lines.push(
      `changed since checkpoint (${number(status.changes.length)}):`,
      ...status.changes.map(
        (change) =>
          `  ${change.status} ${safe(change.from === undefined ? change.path : `${change.from} -> ${change.path}`)}`,
      ),
    );
  lines.push(`feature request: ${isBlank(context.featureRequest) ? '(none)' : safe(context.featureRequest)}`);
  const paragraphs = splitParagraphs(context.workingSummary.text);
  lines.push(
    paragraphs.length === 0
      ? 'summary: (none yet)'
      : `summary (updated ${time(context.workingSummary.updatedAt)})${status.stale ? style.red(' STALE') : ''}:`,
    ...paragraphs.map((line) => `  ${line}`),
  );
  const rules = pinnedRuleLines(context);
  lines.push(`pinned rules (${number(rules.length)}):`, ...rules.map((rule) => `  ${safe(rule)}`));
  if (context.openDecisions.length > 0)
    lines.push(
      'decisions:',
      ...context.openDecisions.map((decision) => `  ${decision.id} [${decision.status}] ${safe(decision.text)}`),
    );
  if (context.checklist.length > 0)
    lines.push('checklist:', ...context.checklist.map((step) => `  [${step.done ? 'x' : ' '}] ${safe(step.text)}`));
  lines.push(`evidence ledger: ${count(context.evidenceLedger.length, 'claim', 'claims')}`);
  for (const claim of context.evidenceLedger) {
    const evidence = [...claim.files.map((file) => `${file.path}:${file.lines}`), ...claim.symbols];
    lines.push(`  ${safe(claim.claim)}${evidence.length === 0 ? '' : ` · ${safe(evidence.join(', '))}`}`);
  }
  for (const missing of status.missingEvidence)
    lines.push(style.red(`  MISSING ${safe(missing.path)} (cited by: ${safe(missing.claim)})`));
  for (const past of status.pastEndEvidence ?? [])
    lines.push(
      style.red(
        `  PAST END ${safe(`${past.path}:${past.lines}`)}: the file has ${count(past.length, 'line', 'lines')} (cited by: ${safe(past.claim)})`,
      ),
    );
  for (const related of loaded.related) lines.push(safe(relatedNotice(key, related, loaded.kind)));
  const run = context.lastRun;
  lines.push(
    run === undefined
      ? 'last run: none recorded'
      : run.status === 'succeeded'
        ? `last run: succeeded at ${time(run.at)}`
        : `last run: ${style.red('failed')} at ${time(run.at)} in ${safe(run.failedStep)}: ${safe(run.error)} · next: ${safe(run.nextAction)}`,
  );
  if (context.recentFailures.length > 0)
    lines.push(
      'recent failures:',
      ...context.recentFailures.map(
        (failure) =>
          `  ${time(failure.at)} ${safe(failure.failedStep)}: ${safe(failure.error)} · next: ${safe(failure.nextAction)}`,
      ),
    );
  const tools = Object.entries(loaded.sessions);
  lines.push(
    `tool sessions: ${tools.length === 0 ? 'none' : tools.map(([tool, session]) => `${safe(tool)} ${safe(session.id)}`).join(', ')} (in ${shown(loaded, loaded.paths.sessions)}: local to this machine; ${loaded.sessionsIgnoredBy === undefined ? `git does not ignore it yet: the next write that saves tool sessions adds *.local.json to ${shown(loaded, loaded.paths.gitignore)}` : `git ignores it: ${safe(loaded.sessionsIgnoredBy)}`})`,
  );
  return `${lines.join('\n')}\n`;
};

/** The JSON view of a loaded context: everything `show` prints, paths relative to the repository. */
const jsonView = (loaded: LoadedContext): unknown => ({
  enabled: true,
  kind: loaded.kind,
  key: loaded.key,
  flag: loaded.flag,
  stored: loaded.stored,
  files: {
    json: shown(loaded, loaded.paths.json),
    dashboard: shown(loaded, loaded.paths.dashboard),
    sessions: shown(loaded, loaded.paths.sessions),
  },
  status: loaded.status,
  context: loaded.context,
  sessions: loaded.sessions,
  warnings: loaded.warnings,
  notes: loaded.notes,
  ...(loaded.mergedConflict === undefined ? {} : { mergedConflict: loaded.mergedConflict }),
  dropped: loaded.dropped,
  elsewhere: loaded.elsewhere,
  related: loaded.related,
  ...(loaded.branchesPresent === undefined ? {} : { branchesPresent: loaded.branchesPresent }),
  ...(loaded.renamedFrom === undefined ? {} : { renamedFrom: loaded.renamedFrom }),
  dashboardWritten: loaded.dashboardWritten,
  dashboardRegenerated: loaded.dashboardRegenerated,
  ...(loaded.sessionsIgnoredBy === undefined ? {} : { sessionsIgnoredBy: loaded.sessionsIgnoredBy }),
});

const fromShell =
  (run: () => Promise<E.Either<ContextError, Loaded>>): TE.TaskEither<string, Loaded> =>
  async () =>
    E.mapLeft((error: ContextError) => error.message)(await run());

/** How a subcommand prints a context: as text, and as JSON (by default the full view). */
interface Output {
  readonly text: (loaded: LoadedContext) => string;
  readonly json?: (loaded: LoadedContext) => unknown;
}

/** Prints what a command did with a context, or that the feature is off. */
const report =
  (io: CliIo, command: ContextCommand, output: Output) =>
  (loaded: Loaded): number => {
    if (O.isNone(loaded)) {
      if (command.json) io.stdout(toJson({ enabled: false }));
      else if (command.action === 'show') io.stdout(`${OFF}\n`);
      else io.stderr(`fact-tracker context: ${OFF}; nothing was read or written\n`);
      return EXIT_OK;
    }
    for (const warning of loaded.value.warnings) io.stderr(`fact-tracker context: warning: ${safe(warning)}\n`);
    // `show` prints its notes with the context; the other commands say them on stderr.
    if (command.action !== 'show' && !command.json)
      for (const note of [...loaded.value.notes, ...loaded.value.dropped.map(droppedNotice)])
        io.stderr(`fact-tracker context: note: ${safe(note)}\n`);
    io.stdout(command.json ? toJson((output.json ?? jsonView)(loaded.value)) : output.text(loaded.value));
    return EXIT_OK;
  };

/** A fact store for the retrieved tier, and how many lines of its history were rejected on the way. */
interface LoadedFacts {
  readonly store: FactStore;
  readonly rejected: number;
  readonly firstRejected?: number;
}

/** The most a `--facts` file may hold: a history of many sessions fits, a device or a runaway file does not. */
const FACTS_MAX_BYTES = 1024 * 1024 * 1024;

/**
 * A fact store for the retrieved tier: a saved state, or the store a history replays to (the
 * replay is loaded only then). Only a regular file is read, and inside the repository at `root`
 * only one reached without a link out of it: a committed link to a device never hangs a bundle.
 */
const loadFacts = (io: CliIo, file: string, root: string): TE.TaskEither<string, LoadedFacts> =>
  pipe(
    async () =>
      // `-` is standard input, as for every command that reads a history: no file to check.
      file === '-'
        ? E.right(undefined)
        : E.mapLeft((error: ContextError) => `--facts ${file}: ${error.message}`)(
            await checkRegularFile(resolve(io.cwd ?? root, file), root, FACTS_MAX_BYTES),
          ),
    TE.chain(() => async () => E.right((await import('./history.js')).loadStore(io, file))),
    TE.chain((load) => load),
    TE.map(({ store, rejected }) => ({
      store,
      rejected: rejected.errors.length + (rejected.errorsOmitted ?? 0),
      ...(rejected.errors[0] === undefined ? {} : { firstRejected: rejected.errors[0].line }),
    })),
  );

/**
 * Says on stderr that lines of the `--facts` history were rejected, as `facts` and `replay` do
 * (never quoting them: the file may hold anything), and gives their exit status.
 */
const factsStatus = (io: CliIo, file: string, facts: LoadedFacts | undefined, status: number): number => {
  if (facts === undefined || facts.rejected === 0 || status !== EXIT_OK) return status;
  io.stderr(
    `${collapseWhitespace(`fact-tracker context: --facts ${file}: ${count(facts.rejected, 'line was', 'lines were')} rejected, the first at line ${facts.firstRejected ?? '?'} (is it a dispatch history? fact-tracker facts ${file} lists them); the bundle holds the facts of the other lines`)}\n`,
  );
  return EXIT_REJECTED_LINES;
};

/**
 * The most bytes `--summary-file` may have: a summary holds at most `CONTEXT_LIMITS.summary`
 * UTF-16 units, at most three bytes of UTF-8 each (a four-byte character is two units), so
 * four bytes a unit leaves room for surrounding blank lines and a summary a little over, which
 * is then refused with its length rather than as a file too large.
 */
const SUMMARY_FILE_MAX_BYTES = CONTEXT_LIMITS.summary * 4 + 1024;

/**
 * True when `file` is a named pipe: reading it would wait for a writer that may never come, so
 * it is refused as the context's own files are, where a device (`/dev/zero`) is read bounded.
 */
const isNamedPipe = (io: CliIo, file: string): boolean => {
  try {
    return file !== '-' && statSync(resolve(io.cwd ?? '.', file)).isFIFO();
  } catch {
    // Missing or unreadable: the read says why, in its own words.
    return false;
  }
};

/** The summary a checkpoint records: `--summary`, or the text of `--summary-file` (a bounded read). */
const summaryOf = (io: CliIo, request: CheckpointRequest): TE.TaskEither<string, string | undefined> => {
  const file = request.summaryFile;
  if (file !== undefined && isNamedPipe(io, file))
    return TE.left(
      `--summary-file ${file} is a FIFO (named pipe), not a regular file: give a file, or - for standard input`,
    );
  return file === undefined
    ? TE.right(request.summary)
    : pipe(
        () => io.readText(file, SUMMARY_FILE_MAX_BYTES),
        TE.mapLeft((reason) => `${reason} (a summary holds at most ${number(CONTEXT_LIMITS.summary)} characters)`),
        // A binary file given by mistake would be stored as replacement characters.
        TE.filterOrElse(
          (text) => !BINARY.test(text),
          () => `${file} is not text: it holds a NUL or bytes that are not UTF-8`,
        ),
      );
};

/** What no text file holds: a NUL, or the replacement character that bytes which are not UTF-8 decode to. */
const BINARY = /[\u0000\uFFFD]/u;

/**
 * The summary of a checkpoint, read only once the flag is known to be on (`None` when it is
 * off): off means off, so a summary file is never opened, nor standard input read, for a
 * checkpoint that would write nothing. The flag is the shell's own decision, asked first.
 */
const summaryWhenEnabled = (
  io: CliIo,
  options: ContextOptions,
  request: CheckpointRequest,
): TE.TaskEither<string, O.Option<string | undefined>> =>
  pipe(
    async () => E.mapLeft((error: ContextError) => error.message)(await isContextEnabled(options)),
    TE.chain((enabled) =>
      enabled ? TE.map((summary: string | undefined) => O.some(summary))(summaryOf(io, request)) : TE.right(O.none),
    ),
  );

/** Runs one `context` subcommand; resolves to the exit status. */
export const runContext = (command: ContextCommand, io: CliIo): TE.TaskEither<string, number> => {
  const { cwd } = io;
  if (cwd === undefined)
    return TE.left('the current directory no longer exists (was it deleted?): cd into the repository and run it again');
  const options: ContextOptions = {
    kind: command.kind,
    cwd,
    env: io.env ?? {},
    ...(command.workstream === undefined ? {} : { workstreamId: command.workstream }),
    ...(command.branch === undefined ? {} : { branch: command.branch }),
  };
  const style = createStyle(io.colour);
  switch (command.action) {
    case 'show':
      return pipe(
        fromShell(() => loadContext(options)),
        TE.map(report(io, command, { text: (loaded) => renderShow(loaded, style) })),
      );
    case 'bundle':
      return pipe(
        fromShell(() => loadContext(options)),
        TE.chain((loaded): TE.TaskEither<string, { loaded: Loaded; facts?: LoadedFacts }> =>
          O.isNone(loaded) || command.facts === undefined
            ? TE.right({ loaded })
            : pipe(
                loadFacts(io, command.facts, loaded.value.paths.root),
                TE.map((facts) => ({ loaded, facts })),
              ),
        ),
        TE.map(({ loaded, facts }) => {
          const bundleOf = (context: LoadedContext) =>
            buildContextBundle(context, {
              kind: command.kind,
              ...(facts === undefined
                ? {}
                : { facts: { store: facts.store, ...(command.query === undefined ? {} : { query: command.query }) } }),
            });
          const status = report(io, command, { text: (context) => `${bundleOf(context).text}\n`, json: bundleOf })(
            loaded,
          );
          return factsStatus(io, command.facts ?? '', facts, status);
        }),
      );
    case 'checkpoint':
      return pipe(
        summaryWhenEnabled(io, options, command),
        TE.chain((summary) =>
          O.isNone(summary)
            ? TE.right<string, Loaded>(O.none)
            : fromShell(() =>
                writeContext(options, {
                  status: 'succeeded',
                  ...(summary.value === undefined ? {} : { summary: summary.value }),
                  ...(command.featureRequest === undefined ? {} : { featureRequest: command.featureRequest }),
                  pinRules: command.pinRules,
                  unpinRules: command.unpinRules,
                  decisions: command.decisions,
                  settle: command.settle,
                  ...(command.steps === undefined ? {} : { checklist: command.steps }),
                }),
              ),
        ),
        TE.map(
          report(io, command, {
            text: (loaded) => {
              const checkpoint = loaded.context.checkpoint;
              return `checkpoint recorded: ${loaded.kind} context · workstream ${safe(loaded.key.workstreamId)} · HEAD ${short(checkpoint?.gitHead)} · summary ${checkpoint?.summaryHash.slice(0, 8) ?? ''}\nwrote ${wroteFiles(loaded)}\n`;
            },
          }),
        ),
      );
    case 'claim':
      return pipe(
        fromShell(() => updateContext(options, (context, at) => recordContextClaim(context, { ...command.claim, at }))),
        TE.map(
          report(io, command, {
            text: (loaded) =>
              `claim recorded (${count(loaded.context.evidenceLedger.length, 'claim', 'claims')} in the ledger): ${safe(command.claim.claim)}\n`,
          }),
        ),
      );
    case 'resolve':
      return pipe(
        fromShell(() => resolveContext(options)),
        TE.map(
          report(io, command, {
            text: (loaded) => {
              const file = shown(loaded, loaded.paths.json);
              const merged = loaded.mergedConflict;
              const dashboard = shown(loaded, loaded.paths.dashboard);
              if (merged === undefined)
                return loaded.dashboardRegenerated
                  ? `nothing to resolve in ${file}; the dashboard ${dashboard} was out of step with it and is regenerated: git add it\n`
                  : `nothing to resolve: ${file} has no merge conflict markers\n`;
              const identity =
                merged.identity === undefined
                  ? ''
                  : `; the sides identified the repository differently: the contexts of ${safe(merged.identity.rekeyed.id)} are merged into those of ${safe(merged.identity.kept.id)}`;
              const kept =
                loaded.dropped.length === 0
                  ? 'decisions, claims, failures, pinned rules and steps of both kept'
                  : `decisions, claims, failures, pinned rules and steps of both kept but ${number(loaded.dropped.length)} over a cap (listed above)`;
              return `resolved ${file}: merged ours (${count(merged.ours.length, 'workstream', 'workstreams')}) and theirs (${number(merged.theirs.length)})${merged.withAncestor === true ? ' against their common ancestor (what a side removed stays removed)' : ''}${identity}; ${kept}, the newer summary won\nwrote ${wroteFiles(loaded)}; git add ${loaded.dashboardWritten ? 'them' : 'it'} to mark the conflict resolved\n`;
            },
          }),
        ),
      );
    case 'move':
      return pipe(
        fromShell(() => moveContext(options, command.from, { removeSource: command.removeSource })),
        TE.map(
          report(io, command, {
            text: (loaded) => {
              const what = `the ${loaded.kind} context of workstream ${safe(loaded.key.workstreamId)} from branch ${safe(command.from)}`;
              const source = command.removeSource
                ? ''
                : ` (branch ${safe(command.from)} keeps its own; --remove-source takes it away)`;
              const done = isMergedMove(loaded)
                ? `merged ${what} into the one on branch ${safe(loaded.key.branch)}${command.removeSource ? `, and removed it from branch ${safe(command.from)}` : source}`
                : `${command.removeSource ? 'moved' : 'copied'} ${what} to branch ${safe(loaded.key.branch)}${source}`;
              return `${done}\nwrote ${wroteFiles(loaded)}\n`;
            },
          }),
        ),
      );
    case 'record-failure':
      return pipe(
        fromShell(() => writeContext(options, command.failure)),
        TE.map(
          report(io, command, {
            text: (loaded) =>
              `failure recorded at step ${safe(command.failure.failedStep)}; the last good summary is kept${loaded.context.checkpoint === undefined ? '' : ` (checkpoint ${short(loaded.context.checkpoint.gitHead)})`}\n`,
          }),
        ),
      );
  }
};
