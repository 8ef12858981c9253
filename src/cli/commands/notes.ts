/**
 * `fact-tracker notes replay FILE`: a recorded conversation through the notable-facts ledger,
 * message by message, with what the blocks cost against the history they stand in for.
 */
import * as E from 'fp-ts/lib/Either.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import { pipe } from 'fp-ts/lib/function.js';
import { DEFAULT_HISTORY_TURNS } from '../../notes/conversation.js';
import { formatGlobalFacts, GLOBAL_FACTS_HEADER, NOTED_FACTS_HEADER } from '../../notes/format.js';
import type { CategorizedFact } from '../../notes/model.js';
import { NOTES_LOG_FIELDS, type NotesLogError } from '../../notes/log.js';
import { encodeProfile } from '../../notes/persist.js';
import { replayConversationLog } from '../../notes/replay.js';
import type {
  NotesExtractionStep,
  NotesMessageStep,
  NotesReplayReport,
  NotesReplayResult,
  NotesRewriteStep,
  NotesStageStep,
} from '../../notes/replayReport.js';
import { clipEndRedacted } from '../../base/secrets.js';
import { collapseWhitespace } from '../../base/text.js';
import type { NotesCommand } from '../args.js';
import type { CliIo } from '../io.js';
import { saveSection } from '../saveSection.js';
import { count, formatTime, number, tokenCount } from '../render.js';
import { createStyle, type Style } from '../style.js';
import {
  afterFirstLineOf,
  firstLineOf,
  isHistoryEventField,
  isHistoryEventStart,
  isSavedStateStart,
  isSpreadLines,
} from '../source.js';
import { exitStatusFor, tokenCounter, toJson } from './shared.js';

/** True for a field of a conversation log's line or of a dispatch history's event, which no saved state's top level has. */
const isLogLineField = (key: unknown): boolean =>
  (NOTES_LOG_FIELDS as ReadonlyArray<unknown>).includes(key) || isHistoryEventField(key);

/**
 * Why `file` is read as another kind of file than a conversation log, when its first lines say
 * so: a log pretty-printed over several lines, a saved state, or a dispatch history, each
 * pointed to what reads it rather than reported as a log of bad lines.
 */
const otherKindOfFile = (text: string, file: string): string | undefined => {
  const first = firstLineOf(text);
  // Named as every message names `-`, standard input; the command to run takes `-` as it was given.
  const name = file === '-' ? 'standard input' : file;
  // A log pretty-printed (`jq .`), each line over several, as `isSpreadLines` tells it from a saved state.
  if (first.trimEnd() === '{' && isSpreadLines(afterFirstLineOf(text), isLogLineField))
    return `${name} is written over several lines (pretty-printed, as jq . writes it), not one JSON object a line: write it with jq -c . and read that`;
  if (isSavedStateStart(first))
    return `${name} is a saved state, not a conversation log: read its facts with fact-tracker facts ${file}`;
  if (isHistoryEventStart(first))
    return `${name} is a dispatch history, not a conversation log: replay it with fact-tracker replay ${file}`;
  return undefined;
};

const SEPARATOR = ' · ';

const safe = (text: string): string => collapseWhitespace(text);

/**
 * `text` on one line, clipped to `max` by the redacting clip: a cut can make a token shape of a
 * text that held none whole (`ghp_` and 300 letters kept to their first 100, a glued `_suffix`
 * cut off), and the report prints none.
 */
const clipped = (text: string, max: number): string => clipEndRedacted(safe(text), max);

const factLine = (sign: string, fact: CategorizedFact): string => `${sign} [${safe(fact.category)}] ${safe(fact.fact)}`;

const HEADERS: ReadonlySet<string> = new Set([NOTED_FACTS_HEADER, GLOBAL_FACTS_HEADER]);

/** The blocks with their header lines in cyan (a fact line can never equal a header: it starts with "- "). */
const paintBlocks = (blocks: string, style: Style): string =>
  blocks
    .split('\n')
    .map((line) => (HEADERS.has(line) ? style.cyan(line) : line))
    .join('\n');

const renderMessage = (step: NotesMessageStep, previous: NotesMessageStep | undefined, style: Style): string => {
  const header = [
    `line ${step.line}`,
    safe(step.user),
    safe(step.session),
    `message ${step.turn}`,
    count(step.facts.length, 'session fact', 'session facts'),
    ...(step.profileFacts === 0 ? [] : [count(step.profileFacts, 'profile fact', 'profile facts')]),
    tokenCount(step.blockTokens, 'block '),
    `window ${count(step.windowMessages, 'message', 'messages')} (${tokenCount(step.windowTokens, '')})`,
    `trimmed ${count(step.trimmedMessages, 'message', 'messages')} (${tokenCount(step.trimmedTokens, '')})`,
  ].join(SEPARATOR);
  const quote = style.dim(`> ${clipped(step.text, 100)}`);
  const body =
    step.blocks === ''
      ? style.dim('(no blocks yet: facts from an extraction serve from the next message on)')
      : previous !== undefined && previous.blocks === step.blocks
        ? style.dim(`(blocks unchanged since line ${previous.line})`)
        : paintBlocks(step.blocks, style);
  return `${style.bold(header)}\n${quote}\n${body}`;
};

const renderExtraction = (step: NotesExtractionStep, style: Style): string => {
  const where = [`line ${step.line}`, safe(step.user), safe(step.session)];
  if (step.failure !== undefined)
    return style.red(
      [
        ...where,
        `extraction failed (${step.failure.code}): ${clipped(step.failure.message, 120)}`,
        `facts unchanged (${number(step.facts.length)})`,
      ].join(SEPARATOR),
    );
  const header = [
    ...where,
    'extraction',
    `${count(step.facts.length, 'fact', 'facts')} (+${number(step.added.length)} -${number(step.removed.length)})`,
    tokenCount(step.promptTokens, 'prompt '),
  ].join(SEPARATOR);
  const lines = [
    ...step.added.map((fact) => style.green(factLine('+', fact))),
    ...step.removed.map((fact) => style.red(factLine('-', fact))),
    ...step.warnings.map((warning) => style.dim(`! ${clipped(warning, 160)}`)),
  ];
  return [style.bold(header), ...lines].join('\n');
};

const mergedWhat = (step: NotesStageStep): string => {
  if (step.waiting === true) return 'waiting: the log ends before the extractions it waits for';
  const when = step.mergedAt === undefined ? '' : ` at line ${step.mergedAt}, once the extractions before it settled`;
  return step.sessions.length === 0
    ? `nothing new to merge${when}`
    : `merged ${step.sessions.map(safe).join(', ')}${when}`;
};

const renderStage = (step: NotesStageStep, style: Style): string => {
  const header = [
    `line ${step.line}`,
    safe(step.user),
    'end of stage',
    mergedWhat(step),
    `profile ${count(step.profileFacts, 'fact', 'facts')} from ${count(step.sessionCount, 'session', 'sessions')}`,
    `${number(step.dropped.length)} dropped`,
  ].join(SEPARATOR);
  return [style.bold(header), ...step.dropped.map((fact) => style.red(factLine('-', fact)))].join('\n');
};

const renderRewrite = (step: NotesRewriteStep, style: Style): string => {
  const where = [`line ${step.line}`, safe(step.user), 'profile rewrite'];
  if (step.failure !== undefined)
    return style.red(
      [
        ...where,
        `failed (${step.failure.code}): ${clipped(step.failure.message, 120)}`,
        `profile unchanged (${number(step.profileFacts)})`,
      ].join(SEPARATOR),
    );
  const what =
    step.outcome === 'stale'
      ? 'answered a profile that changed since: not applied'
      : `profile ${count(step.profileFacts, 'fact', 'facts')}`;
  return [
    style.bold([...where, what].join(SEPARATOR)),
    ...step.warnings.map((warning) => style.dim(`! ${clipped(warning, 160)}`)),
  ].join('\n');
};

const renderError = (error: NotesLogError, style: Style): string =>
  style.red(`line ${error.line}${SEPARATOR}rejected (${error.code}): ${safe(error.message)}`);

const renderProfiles = (report: NotesReplayReport, style: Style): string => {
  const title = style.bold(`Profiles (${number(report.profiles.length)})`);
  if (report.profiles.length === 0) return `${title}\n${style.dim('(none: no stage ended)')}`;
  return [
    title,
    ...report.profiles.map(({ user, profile }) =>
      [
        style.bold(
          [
            safe(user),
            count(profile.facts.length, 'fact', 'facts'),
            count(profile.sessionCount, 'session', 'sessions'),
            `consolidated ${formatTime(profile.consolidatedAt)}`,
          ].join(SEPARATOR),
        ),
        paintBlocks(formatGlobalFacts(profile), style),
      ].join('\n'),
    ),
  ].join('\n\n');
};

const ratio = (part: number, whole: number): string => (whole === 0 ? 'n/a' : (part / whole).toFixed(2));

const renderSummary = (report: NotesReplayReport, tokenizer: string, turns: number, style: Style): string => {
  const { summary } = report;
  const figures = [summary.blockTokens, summary.trimmedTokens, summary.windowTokens].map(number);
  const width = Math.max(...figures.map((figure) => figure.length));
  const [blocks, trimmed, window] = figures.map((figure) => figure.padStart(width));
  return [
    style.bold(`Tokens (${tokenizer}), summed over ${count(summary.userMessages, 'user message', 'user messages')}`),
    `  blocks   ${blocks}  the notes given to the main prompt`,
    `  trimmed  ${trimmed}  older history the blocks stand in for (blocks / trimmed ${ratio(summary.blockTokens, summary.trimmedTokens)})`,
    `  window   ${window}  recent history kept (the last ${count(turns, 'exchange', 'exchanges')})`,
    [
      count(summary.users, 'user', 'users'),
      count(summary.sessions, 'session', 'sessions'),
      count(summary.userMessages + summary.assistantMessages, 'message', 'messages'),
      `${count(summary.extractions, 'extraction', 'extractions')} (${number(summary.failedExtractions)} failed)`,
      count(summary.stages, 'end of stage', 'ends of stage'),
      count(report.errors.length, 'rejected line', 'rejected lines'),
    ].join(SEPARATOR),
  ].join('\n');
};

/** The human report of `notes replay`: steps and rejected lines in line order, the profiles, the token summary. */
export const renderNotesReplay = (
  report: NotesReplayReport,
  tokenizer: string,
  turns: number,
  style: Style,
): string => {
  const previous = new Map<string, NotesMessageStep>();
  const entries = [
    ...report.steps.map((step) => {
      if (step.kind === 'extraction') return { line: step.line, text: renderExtraction(step, style) };
      if (step.kind === 'stage') return { line: step.line, text: renderStage(step, style) };
      if (step.kind === 'rewrite') return { line: step.line, text: renderRewrite(step, style) };
      const key = JSON.stringify([step.user, step.session]);
      const text = renderMessage(step, previous.get(key), style);
      previous.set(key, step);
      return { line: step.line, text };
    }),
    ...report.errors.map((error) => ({ line: error.line, text: renderError(error, style) })),
  ].sort((a, b) => a.line - b.line);
  return [
    ...entries.map((entry) => entry.text),
    renderProfiles(report, style),
    renderSummary(report, tokenizer, turns, style),
  ].join('\n\n');
};

/** Why a log whose lines made no step saves nothing, as the line says it. */
const nothingToSave = ({ errors, summary }: NotesReplayReport): string =>
  summary.assistantMessages > 0
    ? 'the conversation log holds no user message, extraction, end of stage or rewrite, only assistant messages'
    : errors.length > 0
      ? 'no line of the conversation log could be applied'
      : 'the conversation log holds no line';

/**
 * Saves the ledger into FILE, unless no line of the log made a step: a log of rejected lines
 * only (a file given by mistake), of no line at all (nothing piped in, a blank file) or of the
 * assistant's replies alone would save an empty ledger over the notes there.
 */
const save = (
  io: CliIo,
  file: string | undefined,
  result: NotesReplayResult,
): TE.TaskEither<string, NotesReplayResult> =>
  file === undefined
    ? TE.right(result)
    : result.report.steps.length === 0
      ? TE.left(`nothing saved into ${file}: ${nothingToSave(result.report)}`)
      : pipe(
          saveSection(io, file, { kind: 'notes', ledger: result.ledger }),
          TE.map(() => result),
        );

/**
 * The most of a conversation log the command reads: it replays the log as one text, so an
 * endless input (`/dev/zero`, a stream that never ends) would be read until memory ran out.
 * Far above any conversation's log, and well below the longest text the engine can hold.
 */
const MAX_LOG_BYTES = 256 * 1024 * 1024;

/** Replays the conversation log, prints the report and saves the ledger when asked; resolves to the exit status. */
export const runNotes = (command: NotesCommand, io: CliIo): TE.TaskEither<string, number> => {
  // The save is what was asked for, whoever reads the report: `notes replay log --save s | head` saves too.
  if (command.save !== undefined) io.outliveReader?.();
  return pipe(
    TE.Do,
    TE.apS(
      'text',
      pipe(
        () => io.readText(command.file, MAX_LOG_BYTES),
        TE.chainEitherK((text) => {
          const other = otherKindOfFile(text, command.file);
          return other === undefined ? E.right(text) : E.left(other);
        }),
      ),
    ),
    TE.apS('countTokens', tokenCounter(command.tokenizer)),
    TE.map(({ text, countTokens }) =>
      replayConversationLog(text, { countTokens, ...(command.turns === undefined ? {} : { turns: command.turns }) }),
    ),
    // The report is printed before the save, as `replay` prints its own: a save refused or failed
    // still leaves the report of what the log held, and says why on stderr.
    TE.chainFirst(({ report }) =>
      TE.fromIO(() => {
        const turns = command.turns ?? DEFAULT_HISTORY_TURNS;
        io.stdout(
          command.json
            ? // A profile leaves the library as it is stored: its time an ISO string (docs/notes.md).
              toJson({
                ...report,
                profiles: report.profiles.map(({ user, profile }) => ({ user, profile: encodeProfile(profile) })),
              })
            : `${renderNotesReplay(report, command.tokenizer, turns, createStyle(io.colour))}\n`,
        );
      }),
    ),
    TE.chain((result) => save(io, command.save, result)),
    TE.map(({ report }) => exitStatusFor(io, 'notes', report.errors)),
  );
};
