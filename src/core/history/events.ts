/**
 * A dispatch history is JSON Lines, one event per line. Parsing is line by line and never
 * stops: a bad line becomes a `HistoryLineError` with its line number and the other lines
 * still parse, so one typo in a long session does not hide the rest of it. Each line is
 * decoded by zod schemas (the envelope, then the event's fields), whose first issue becomes
 * the line's error.
 */
import * as A from 'fp-ts/lib/Array.js';
import * as E from 'fp-ts/lib/Either.js';
import * as O from 'fp-ts/lib/Option.js';
import { pipe } from 'fp-ts/lib/function.js';
import { z } from 'zod';
import { refuseLineArguments } from '../../base/describe.js';
import { exceedsJsonDepth, parseJson } from '../../base/json.js';
import { describeKind, formatPath, quoteValue } from '../../base/schema.js';
import { type Fields, isRecord } from '../../base/record.js';
import { redactedClipEnd } from '../../base/secrets.js';
import { isBlank } from '../../base/text.js';
import { parseEventTime, timeAfter } from '../../base/time.js';
import {
  FACT_TAGS,
  type FactTag,
  isFactTag,
  isSectionLayout,
  isSourceRole,
  SECTION_LAYOUTS,
  type SectionLayout,
  SOURCE_ROLES,
  type SourceRole,
} from '../fact.js';
import { isTokenizerName, TOKENIZER_NAMES, type TokenizerName } from '../../tokens/names.js';
import { HISTORY_LINE_LIMITS, type HistoryLine, linesOfText } from './lines.js';

/** A dispatch result, given as raw agent text (`output`) or as the result object (`result`). */
export interface HistoryDispatchEvent {
  readonly type: 'dispatch';
  readonly line: number;
  readonly at: number;
  readonly role: SourceRole;
  readonly taskId: string;
  /** The raw text, or the result object: exactly what `ingestOutput` takes. */
  readonly output: string | Readonly<Record<string, unknown>>;
}

/** The orchestrator is about to compile the prompt of a task. */
export interface HistoryPromptEvent {
  readonly type: 'prompt';
  readonly line: number;
  readonly at: number;
  readonly taskId: string;
  readonly taskPrompt: string;
  readonly tags?: ReadonlyArray<FactTag>;
  readonly maxFacts?: number;
  readonly maxTokens?: number;
  /** The section's layout for this prompt (default: the tracker's, `lines` unless set). */
  readonly layout?: SectionLayout;
  /**
   * The tokenizer the section was budgeted with, when it was a named one other than the
   * estimate (a live session counting with `o200k` records it; default: the replay's counter).
   */
  readonly tokenizer?: TokenizerName;
}

/** The orchestrator closed the valid facts of a (subject, relation) pair. */
export interface HistoryInvalidateEvent {
  readonly type: 'invalidate';
  readonly line: number;
  readonly at: number;
  readonly subject: string;
  readonly relation: string;
}

/** The orchestrator compacted the store to `maxFacts` valid facts. */
export interface HistoryCompactEvent {
  readonly type: 'compact';
  readonly line: number;
  readonly at: number;
  readonly maxFacts: number;
}

/** One line of a dispatch history, with its resolved time. */
export type HistoryEvent = HistoryDispatchEvent | HistoryPromptEvent | HistoryInvalidateEvent | HistoryCompactEvent;

/** The kinds of event a history line can hold. */
export const HISTORY_EVENT_TYPES = Object.freeze(['dispatch', 'prompt', 'invalidate', 'compact'] as const);

/**
 * Every field an event reads, whatever its type (the keys of the schemas below): a JSON object
 * opening with one is an event, never a saved state, whose fields are none of these.
 */
export const HISTORY_EVENT_FIELDS = Object.freeze([
  'type',
  'at',
  'role',
  'taskId',
  'output',
  'result',
  'taskPrompt',
  'tags',
  'maxFacts',
  'maxTokens',
  'layout',
  'tokenizer',
  'subject',
  'relation',
] as const);

/**
 * Why a history line could not be read as an event. `too_large`: the line is longer or nested
 * deeper than `HISTORY_LINE_LIMITS` allows, so it is not read at all.
 */
export type HistoryLineErrorCode = 'invalid_json' | 'unknown_type' | 'missing_field' | 'invalid_field' | 'too_large';

/** A line that is not a usable event. */
export interface HistoryLineError {
  readonly line: number;
  readonly code: HistoryLineErrorCode;
  readonly message: string;
}

/** The events of a history in file order, and the lines that were not events. */
export interface ParsedHistory {
  readonly events: ReadonlyArray<HistoryEvent>;
  readonly errors: ReadonlyArray<HistoryLineError>;
}

/** What is wrong with a line, told before its number is added. */
export type Problem = Omit<HistoryLineError, 'line'>;

/** Longest message of a line error: a message quotes the line's values, which may be any size. */
const MESSAGE_LIMIT = 300;

const EVENT_TYPE_LIST = HISTORY_EVENT_TYPES.join(', ');

/** A field's error message: `is missing: why` when it is absent, else what is wrong with its value. */
const fieldError =
  (whyNeeded: string, whatIsWrong: (value: unknown) => string) =>
  (issue: { readonly input?: unknown }): string =>
    issue.input === undefined ? `is missing: ${whyNeeded}` : whatIsWrong(issue.input);

const notAString = (value: unknown): string => `must be a string, not ${describeKind(value)}`;

/** Text that shows something: blank text, or text of invisible characters only (U+200B), is empty. */
const RequiredText = (whyNeeded: string) =>
  z.string({ error: fieldError(whyNeeded, notAString) }).refine((text) => !isBlank(text), 'is empty');

const notACount = (value: unknown): string => `must be a whole number 0 or more, not ${quoteValue(value)}`;

/** A whole number 0 or more (`whyNeeded` says what it is for, when it is required). */
const Count = (whyNeeded = 'a whole number 0 or more') =>
  z
    .number({ error: fieldError(whyNeeded, notACount) })
    .refine((value) => Number.isInteger(value) && value >= 0, { error: (issue) => notACount(issue.input) });

const Role = z.enum(SOURCE_ROLES, {
  error: fieldError(
    'expected implementer or reviewer',
    (value) => `must be implementer or reviewer, not ${quoteValue(value)}`,
  ),
});

const Layout = z.enum(SECTION_LAYOUTS, { error: () => `is not one of ${SECTION_LAYOUTS.join(', ')}` });

const Tokenizer = z.enum(TOKENIZER_NAMES, { error: () => `is not one of ${TOKENIZER_NAMES.join(', ')}` });

const Tags = z.array(z.enum(FACT_TAGS, { error: () => `is not one of ${FACT_TAGS.join(', ')}` }), {
  error: (issue) => `must be an array of tags, not ${describeKind(issue.input)}`,
});

/** Reports `message` on `field`, whose value is `input`. */
const fieldIssue = (field: string, input: unknown, message: string) => ({
  code: 'custom' as const,
  path: [field],
  message,
  input,
});

/** A dispatch carries exactly one of `output` (the raw text) and `result` (the object). */
const DispatchFields = z
  .object({
    role: Role,
    taskId: RequiredText('the task this dispatch worked on'),
    output: z.unknown().optional(),
    result: z.unknown().optional(),
  })
  .transform(({ role, taskId, output, result }, context) => {
    const problem =
      output !== undefined && result !== undefined
        ? fieldIssue('output', output, 'and result are both given: a dispatch has one or the other')
        : output !== undefined
          ? typeof output === 'string'
            ? undefined
            : fieldIssue('output', output, `must be the raw agent text (a string), not ${describeKind(output)}`)
          : result !== undefined
            ? isRecord(result)
              ? undefined
              : fieldIssue('result', result, `must be the result object, not ${describeKind(result)}`)
            : fieldIssue(
                'output',
                undefined,
                'is missing: a dispatch gives output (raw agent text) or result (the result object)',
              );
    if (problem !== undefined) {
      context.addIssue(problem);
      return z.NEVER;
    }
    return { role, taskId, output: (output ?? result) as string | Fields };
  });

const PromptFields = z.object({
  taskId: RequiredText('the task the prompt is for'),
  taskPrompt: z.string({ error: fieldError('the task description facts are chosen for', notAString) }),
  tags: Tags.optional(),
  maxFacts: Count().optional(),
  maxTokens: Count().optional(),
  layout: Layout.optional(),
  tokenizer: Tokenizer.optional(),
});

const InvalidateFields = z.object({
  subject: RequiredText('the subject whose facts are closed'),
  relation: RequiredText('the relation whose facts are closed'),
});

const CompactFields = z.object({ maxFacts: Count('how many valid facts to keep') });

/** The fields each type of event reads, in the order their problems are reported. */
const EVENT_FIELDS = {
  dispatch: DispatchFields,
  prompt: PromptFields,
  invalidate: InvalidateFields,
  compact: CompactFields,
} as const;

/** What every event has: its type, and its time when given. */
const Envelope = z.object({
  type: z.enum(HISTORY_EVENT_TYPES, {
    error: (issue) =>
      issue.input === undefined
        ? `is missing: expected one of ${EVENT_TYPE_LIST}`
        : `unknown event type ${quoteValue(issue.input)}: expected one of ${EVENT_TYPE_LIST}`,
  }),
  at: z
    .unknown()
    .transform((at, context) => {
      const time = parseEventTime(at);
      if (E.isRight(time)) return time.right;
      context.addIssue({ code: 'custom', input: at, message: `is not a time: ${time.left.message}` });
      return z.NEVER;
    })
    .optional(),
});

/**
 * The first issue of a failed decoding of `fields`, as a line problem: the field it names, then
 * what is wrong. The field's presence in the line decides between missing and invalid.
 */
const firstProblem = (error: z.ZodError, fields: Fields): Problem => {
  const issue = error.issues[0]!;
  const given = fields[String(issue.path[0])] !== undefined;
  if (issue.path[0] === 'type' && given) return { code: 'unknown_type', message: issue.message };
  return {
    code: given ? 'invalid_field' : 'missing_field',
    message: `${formatPath(issue.path)} ${issue.message}`,
  };
};

/** Decodes `fields` with `schema`, or gives its first problem. */
const decode = <T>(schema: z.ZodType<T>, fields: Fields): E.Either<Problem, T> => {
  const decoded = schema.safeParse(fields);
  return decoded.success ? E.right(decoded.data) : E.left(firstProblem(decoded.error, fields));
};

/** One line of JSON Lines as a JSON object, refusing first what is too long or nested too deep to read safely. */
export const readJsonObject = (text: string): E.Either<Problem, Fields> => {
  if (text.length > HISTORY_LINE_LIMITS.length)
    return E.left({ code: 'too_large', message: `the line is longer than ${HISTORY_LINE_LIMITS.length} characters` });
  // Checked before parsing: a line nested thousands deep would overflow whatever walks it later.
  if (exceedsJsonDepth(text, HISTORY_LINE_LIMITS.depth))
    return E.left({
      code: 'too_large',
      message: `the line nests arrays and objects more than ${HISTORY_LINE_LIMITS.depth} deep`,
    });
  return pipe(
    parseJson(text),
    E.mapLeft((reason): Problem => ({ code: 'invalid_json', message: `not JSON: ${reason}` })),
    E.filterOrElse(isRecord, (value): Problem => ({
      code: 'invalid_json',
      message: `expected a JSON object, not ${describeKind(value)}`,
    })),
  );
};

const isText = (value: unknown): value is string => typeof value === 'string' && !isBlank(value);
const isCount = (value: unknown): boolean => typeof value === 'number' && Number.isInteger(value) && value >= 0;
const isTags = (value: unknown): value is FactTag[] => Array.isArray(value) && value.every(isFactTag);

/**
 * The time of a line without `at`: one second after the event before it (held at the end of the
 * year 9999, the last time a line may give), or 0 for the first. A conversation log's lines
 * (`notes/log.ts`) are timed by it too.
 */
export const timeOfBareLine = (previousAt: number | undefined): number =>
  previousAt === undefined ? 0 : timeAfter(previousAt, 1000);

/**
 * The event of a dispatch or prompt line whose fields are plainly right, read without the
 * schemas (the lines of a history are nearly all such, and the schemas cost more than the JSON
 * parse); undefined for any other line, which the schemas then read, and report. Whatever it
 * returns, the schemas return too (a property test holds them to it).
 */
export const plainEvent = (
  fields: Fields,
  line: number,
  previousAt: number | undefined,
): HistoryDispatchEvent | HistoryPromptEvent | undefined => {
  const { type, taskId } = fields;
  if ((type !== 'dispatch' && type !== 'prompt') || !isText(taskId)) return undefined;
  let at: number;
  if (fields.at === undefined) at = timeOfBareLine(previousAt);
  else {
    const time = parseEventTime(fields.at);
    if (E.isLeft(time)) return undefined;
    at = time.right;
  }
  if (type === 'dispatch') {
    const { role, output, result } = fields;
    if (!isSourceRole(role)) return undefined;
    if (output !== undefined)
      return result === undefined && typeof output === 'string' ? { type, line, at, role, taskId, output } : undefined;
    return isRecord(result) ? { type, line, at, role, taskId, output: result } : undefined;
  }
  const { taskPrompt, tags, maxFacts, maxTokens, layout, tokenizer } = fields;
  if (
    typeof taskPrompt !== 'string' ||
    (tags !== undefined && !isTags(tags)) ||
    (maxFacts !== undefined && !isCount(maxFacts)) ||
    (maxTokens !== undefined && !isCount(maxTokens)) ||
    (layout !== undefined && !isSectionLayout(layout)) ||
    (tokenizer !== undefined && !isTokenizerName(tokenizer))
  )
    return undefined;
  return {
    type,
    line,
    at,
    taskId,
    taskPrompt,
    ...(tags === undefined ? {} : { tags }),
    ...(maxFacts === undefined ? {} : { maxFacts: maxFacts as number }),
    ...(maxTokens === undefined ? {} : { maxTokens: maxTokens as number }),
    ...(layout === undefined ? {} : { layout }),
    ...(tokenizer === undefined ? {} : { tokenizer }),
  };
};

/**
 * Parses one non-blank history line. `previousAt` is the time of the event before it (absent
 * for the first event): a line without `at` happens one second after it, or at 0.
 */
export const parseHistoryLine = (
  text: string,
  line: number,
  previousAt: number | undefined,
): E.Either<HistoryLineError, HistoryEvent> => {
  refuseLineArguments(text, line, previousAt);
  return pipe(
    readJsonObject(text),
    E.chain((fields): E.Either<Problem, HistoryEvent | Record<string, unknown>> => {
      const plain = plainEvent(fields, line, previousAt);
      return plain !== undefined ? E.right(plain) : decodeEvent(fields, line, previousAt);
    }),
    E.bimap(
      // A message quotes the line's values (a time as given, whole): a token there is redacted
      // before the clip, which could keep a part of it, as the report prints it and a session keeps it.
      (problem): HistoryLineError => ({
        line,
        code: problem.code,
        message: redactedClipEnd(problem.message, MESSAGE_LIMIT),
      }),
      (event) => event as HistoryEvent,
    ),
  );
};

/** A line's fields read by the schemas: its event, or its first problem. */
export const decodeEvent = (
  fields: Fields,
  line: number,
  previousAt: number | undefined,
): E.Either<Problem, Record<string, unknown>> =>
  pipe(
    decode(Envelope, fields),
    E.chain(({ type, at }) =>
      pipe(
        decode<Record<string, unknown>>(EVENT_FIELDS[type], fields),
        E.map((body) => ({ type, line, at: at ?? timeOfBareLine(previousAt), ...body })),
      ),
    ),
  );

/** True for a line with nothing but whitespace: skipped, as if it were not there. */
export const isBlankLine = (text: string): boolean => text.trim() === '';

/**
 * A reader of history lines in file order: each non-blank line becomes its event or its error
 * (blank lines give undefined), and a line without `at` is timed from the last event read.
 */
export const createHistoryLineReader = (
  startAt?: number,
): ((line: HistoryLine) => E.Either<HistoryLineError, HistoryEvent> | undefined) => {
  let previousAt: number | undefined = startAt;
  return ({ line, text }) => {
    if (isBlankLine(text)) return undefined;
    const parsed = parseHistoryLine(text, line, previousAt);
    if (E.isRight(parsed)) previousAt = parsed.right.at;
    return parsed;
  };
};

/**
 * Parses a JSON Lines history. Blank lines are skipped; line numbers count every line from 1.
 * A line without `at` happens one second after the previous event (the first event at 0), so
 * every replay of the same text gives the same times.
 */
export const parseHistory = (text: string): ParsedHistory => {
  const { left: errors, right: events } = A.separate(readLines(linesOfText(text)));
  return { events, errors };
};

/**
 * Each non-blank line read, in order (see `createHistoryLineReader`); a first line without `at`
 * happens one second after `startAt` when given (the latest time of a store the history resumes).
 */
export const readLines = (
  lines: Array<HistoryLine>,
  startAt?: number,
): Array<E.Either<HistoryLineError, HistoryEvent>> => {
  const read = createHistoryLineReader(startAt);
  return A.filterMap((line: HistoryLine) => O.fromNullable(read(line)))(lines);
};
