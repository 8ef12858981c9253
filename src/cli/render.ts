/**
 * The human-readable output of each command, as pure functions of the replay data. Fact text
 * comes from model output, so every field printed outside a `[Session Context]` section (which
 * `formatSessionFacts` already sanitizes) goes through `collapseWhitespace`: a fact can neither
 * break a table row nor smuggle terminal escapes.
 */
import type { RetrievalDecision } from '../core/retrieve/retrieve.js';
import type { FactQuery } from '../core/retrieve/retrieve.js';
import type { SessionFact } from '../core/fact.js';
import type { PromptReport, ReplayError, ReplayReport } from '../core/replay/replay.js';
import { count, number } from '../base/count.js';
import { clipEndRedacted, redactingCut } from '../base/secrets.js';
import { collapseWhitespace } from '../base/text.js';
import type { Style } from './style.js';
import { clipColumnsEnd, clipColumnsStart, type Column, renderTable, type Row } from './table.js';

const SUBJECT_WIDTH = 36;
const RELATION_WIDTH = 16;
const OBJECT_WIDTH = 50;
const SEPARATOR = ' · ';

const safe = (text: string): string => collapseWhitespace(text);

// A cell's cut can make a secret of a field holding none (a token's glued `_suffix` cut off): it is redacted.
const clipCellEnd = redactingCut(clipColumnsEnd);
const clipCellStart = redactingCut(clipColumnsStart);

/** Counts grouped as in every message (see base/count.ts), for the commands that render through here. */
export { count, number };

/** `n` tokens, thousands grouped (`1 context token`, `1,024 context tokens`). */
export const tokenCount = (n: number, what: string): string => `${number(n)} ${what}${n === 1 ? 'token' : 'tokens'}`;

/** An epoch-ms time as ISO-8601 UTC, without milliseconds when they are zero. */
export const formatTime = (at: number): string => {
  const date = new Date(at);
  return Number.isNaN(date.getTime()) ? String(at) : date.toISOString().replace('.000Z', 'Z');
};

const formatScore = (score: number): string => (Number.isInteger(score) ? String(score) : score.toFixed(3));

const factCells = (fact: SessionFact): string[] => [
  clipCellStart(safe(fact.subject), SUBJECT_WIDTH),
  clipCellEnd(safe(fact.relation), RELATION_WIDTH),
  clipCellEnd(safe(fact.object), OBJECT_WIDTH),
  fact.tags.join(','),
  clipCellEnd(safe(fact.sourceTaskId), 12),
];

const FACT_COLUMNS: ReadonlyArray<Column> = [
  { heading: 'SUBJECT' },
  { heading: 'RELATION' },
  { heading: 'OBJECT' },
  { heading: 'TAGS' },
  { heading: 'TASK' },
];

/** Facts as an aligned table; `intervals` adds when each became valid and, for closed ones, when it stopped. */
export const renderFactTable = (
  facts: ReadonlyArray<SessionFact>,
  style: Style,
  intervals: 'since' | 'since-until' | 'none',
): string => {
  if (facts.length === 0) return style.dim('(no facts)');
  const columns: Column[] = [...FACT_COLUMNS];
  if (intervals !== 'none') columns.push({ heading: 'VALID FROM' });
  if (intervals === 'since-until') columns.push({ heading: 'VALID TO' });
  const rows: Row[] = facts.map((fact) => {
    const cells = factCells(fact);
    if (intervals !== 'none') cells.push(formatTime(fact.validFrom));
    if (intervals === 'since-until') cells.push(fact.validTo === undefined ? 'valid' : formatTime(fact.validTo));
    return fact.validTo === undefined ? { cells } : { cells, paint: style.dim };
  });
  return renderTable(columns, rows, style.bold);
};

/** One rejected line, on one line. */
export const renderError = (error: ReplayError, style: Style): string =>
  style.red(`line ${error.line}${SEPARATOR}rejected (${error.code}): ${safe(error.message)}`);

/** One prompt's header and the section it would get. */
export const renderPrompt = (prompt: PromptReport, style: Style): string => {
  const header = [
    `line ${prompt.line}`,
    `task ${safe(prompt.taskId)}`,
    count(prompt.facts.length, 'fact', 'facts'),
    tokenCount(prompt.contextTokens, 'context '),
    tokenCount(prompt.historyTokens, 'history '),
  ].join(SEPARATOR);
  const body =
    prompt.sessionContext === ''
      ? // Not only for want of facts: a budget or a tag filter may have left every one out.
        style.dim(`(no section: no fact was chosen; explain --line ${prompt.line} says why)`)
      : prompt.sessionContext
          .split('\n')
          .map((line, index) => (index === 0 ? style.cyan(line) : line))
          .join('\n');
  return `${style.bold(header)}\n${body}`;
};

/** The rejected lines of a replay: those listed, and how many more there were. */
export type RejectedLines = Pick<ReplayReport, 'errors' | 'errorsOmitted'>;

/** The rejected lines a report counts but does not list, in one line (nothing when it lists them all). */
const renderOmittedErrors = (report: RejectedLines, style: Style): string[] =>
  report.errorsOmitted === undefined
    ? []
    : [
        style.red(
          `${count(report.errorsOmitted, 'more line was', 'more lines were')} rejected (not listed: the report lists the first ${number(report.errors.length)})`,
        ),
      ];

/** The rejected lines, one a line, and how many more were not listed. */
const renderRejectedLines = (rejected: RejectedLines, style: Style): string =>
  [...rejected.errors.map((error) => renderError(error, style)), ...renderOmittedErrors(rejected, style)].join('\n');

/**
 * The end of the human report of `replay`: the valid facts and the token summary, after the
 * prompts and rejected lines. `carried` is the sum of the prompts' history tokens.
 */
export const renderReplayEnd = (report: ReplayReport, carried: number, tokenizer: string, style: Style): string => {
  const { summary } = report;
  const figures = [number(summary.historyTokens), number(summary.contextTokens), number(carried)];
  const width = Math.max(...figures.map((figure) => figure.length));
  const [history, context, unmasked] = figures.map((figure) => figure.padStart(width));
  const tokens = [
    style.bold(`Tokens (${tokenizer})`),
    `  history   ${history}  in ${count(summary.dispatches, 'dispatch output', 'dispatch outputs')}`,
    `  context   ${context}  injected over ${count(summary.prompts, 'prompt', 'prompts')} (ratio to history ${summary.contextToHistoryRatio})`,
    `  unmasked  ${unmasked}  what the same prompts would carry with every earlier output in full`,
    [
      count(summary.events, 'event', 'events'),
      count(summary.dispatches, 'dispatch', 'dispatches'),
      count(summary.prompts, 'prompt', 'prompts'),
      count(summary.validFacts, 'valid fact', 'valid facts'),
      `${number(summary.allFacts)} in all`,
      count(report.errors.length + (report.errorsOmitted ?? 0), 'rejected line', 'rejected lines'),
    ].join(SEPARATOR),
  ].join('\n');
  return [
    ...renderOmittedErrors(report, style),
    `${style.bold(`Valid facts at the end (${number(report.facts.length)})`)}\n${renderFactTable(report.facts, style, 'none')}`,
    tokens,
  ].join('\n\n');
};

/** The human output of `facts`: the table, then any rejected history lines. */
export const renderFacts = (
  facts: ReadonlyArray<SessionFact>,
  rejected: RejectedLines,
  withClosed: boolean,
  style: Style,
): string => {
  const valid = facts.filter((fact) => fact.validTo === undefined).length;
  const title = withClosed
    ? `${count(facts.length, 'fact', 'facts')} (${number(valid)} valid, ${number(facts.length - valid)} closed)`
    : count(facts.length, 'valid fact', 'valid facts');
  const parts = [`${style.bold(title)}\n${renderFactTable(facts, style, withClosed ? 'since-until' : 'since')}`];
  if (rejected.errors.length > 0) parts.push(renderRejectedLines(rejected, style));
  return parts.join('\n\n');
};

/** What `explain` shows about one prompt. */
export interface ExplainView {
  readonly line: number;
  readonly taskPrompt: string;
  readonly query: FactQuery;
  readonly decisions: ReadonlyArray<RetrievalDecision>;
  readonly rejected: RejectedLines;
}

/** The human output of `explain`: the prompt, then every fact with its score and decision, ranked candidates first. */
export const renderExplain = (view: ExplainView, style: Style): string => {
  const { query, decisions } = view;
  const included = decisions.filter((decision) => decision.decision === 'included').length;
  const header = [
    `line ${view.line}`,
    `task ${safe(query.taskId)}`,
    `${count(included, 'fact', 'facts')} included of ${number(decisions.length)}`,
    `max ${count(query.maxFacts, 'fact', 'facts')}`,
    tokenCount(query.maxTokens, ''),
    ...(query.tags === undefined || query.tags.length === 0 ? [] : [`tags ${query.tags.join(',')}`]),
  ].join(SEPARATOR);
  const columns: Column[] = [{ heading: 'SCORE', align: 'right' }, { heading: 'DECISION' }, ...FACT_COLUMNS];
  const rows: Row[] = decisions.map((decision) => ({
    cells: [
      formatScore(decision.score),
      decision.decision === 'included' ? 'included' : (decision.reason ?? 'excluded'),
      ...factCells(decision.fact),
    ],
    paint: decision.decision === 'included' ? style.green : style.dim,
  }));
  const parts = [
    `${style.bold(header)}\n${style.dim(`task prompt: ${clipEndRedacted(safe(view.taskPrompt), 200)}`)}`,
    decisions.length === 0 ? style.dim('(no facts yet)') : renderTable(columns, rows, style.bold),
  ];
  if (view.rejected.errors.length > 0) parts.push(renderRejectedLines(view.rejected, style));
  return parts.join('\n\n');
};
