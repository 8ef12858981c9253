/**
 * A recorded conversation as JSON Lines: user and assistant messages, the model's recorded
 * answers to the extractions, and ends of stage. Lines are split and each is read as a JSON
 * object by the history's own reader (`core/history`: one line is at most 16 Mi characters and
 * 100 levels deep), then decoded by zod schemas; a bad line becomes a tagged error with its
 * number, and the rest is read.
 */
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import { z } from 'zod';
import { refuseLineArguments } from '../base/describe.js';
import { failure } from '../base/failure.js';
import type { Fields } from '../base/record.js';
import { isBlank } from '../base/text.js';
import { parseEventTime } from '../base/time.js';
import { readJsonObject, timeOfBareLine } from '../core/history/events.js';
import { linesOfText } from '../core/history/lines.js';
import { describeValue } from '../base/schema.js';
import { isNotesId, isStorableNotesId, NOTES_LIMITS } from './model.js';
import type { ModelOutcome } from './port.js';

/** The kinds of line a conversation log holds. */
export const NOTES_LOG_TYPES = Object.freeze(['user', 'assistant', 'extraction', 'endStage', 'rewrite'] as const);

/** The fields a line of a conversation log may hold. */
export const NOTES_LOG_FIELDS = Object.freeze(['type', 'at', 'user', 'session', 'text', 'response', 'error'] as const);

/** A message of the user or of the assistant. */
export interface NotesLogMessage {
  readonly type: 'user' | 'assistant';
  readonly line: number;
  readonly at: number;
  readonly user: string;
  readonly session: string;
  readonly text: string;
}

/** The recorded outcome of the extraction for the user's latest message in the session. */
export interface NotesLogExtraction {
  readonly type: 'extraction';
  readonly line: number;
  readonly at: number;
  readonly user: string;
  readonly session: string;
  /** The model's text, or why there was none. */
  readonly outcome: ModelOutcome;
}

/** The recorded outcome of the model's rewrite of a user's merged profile (`consolidateWithModel`). */
export interface NotesLogRewrite {
  readonly type: 'rewrite';
  readonly line: number;
  readonly at: number;
  readonly user: string;
  /** The model's text, or why there was none. */
  readonly outcome: ModelOutcome;
}

/** The end of a stage for a user: one session, or every session with unmerged facts. */
export interface NotesLogEndStage {
  readonly type: 'endStage';
  readonly line: number;
  readonly at: number;
  readonly user: string;
  readonly session?: string;
}

/** One line of a conversation log, with its resolved time. */
export type NotesLogEntry = NotesLogMessage | NotesLogExtraction | NotesLogEndStage | NotesLogRewrite;

/** Why a log line was rejected. */
export type NotesLogErrorCode =
  'invalid_json' | 'too_large' | 'unknown_type' | 'missing_field' | 'invalid_field' | 'no_message' | 'no_rewrite';

/** A rejected log line. */
export interface NotesLogError {
  readonly line: number;
  readonly code: NotesLogErrorCode;
  readonly message: string;
}

type Problem = Omit<NotesLogError, 'line'>;

/** Why `field` of a line is unusable: missing, or there but wrong. */
const fieldProblem = (fields: Fields, field: PropertyKey, message: string): Problem => ({
  code: typeof field === 'string' && fields[field] === undefined ? 'missing_field' : 'invalid_field',
  message,
});

const ID = `an id of 1 to ${NOTES_LIMITS.idLength} characters`;

/** An id as the tracker takes it (`isStorableNotesId`): one no store could keep is refused here too. */
const idSchema = (field: 'user' | 'session') =>
  z.custom<string>(isStorableNotesId, {
    error: (issue) =>
      issue.input === undefined
        ? `${field} is missing: the ${field} id`
        : isNotesId(issue.input)
          ? `${field} must be an id a store can keep, without U+0000 or an unpaired surrogate, not ${describeValue(issue.input)}`
          : `${field} must be ${ID}, not ${describeValue(issue.input)}`,
  });

const textSchema = z.custom<string>((value) => typeof value === 'string' && !isBlank(value), {
  error: (issue) =>
    issue.input === undefined ? 'text is missing' : `text must be non-empty text, not ${describeValue(issue.input)}`,
});

/** An extraction holds `response` (the recorded text) or `error` (`"timeout"`, or the call's error message). */
const outcomeSchema = z
  .object({ response: z.unknown(), error: z.unknown() })
  .superRefine(({ response, error }, context) => {
    const problem =
      response !== undefined && error !== undefined
        ? 'response and error are both given: an extraction has one or the other'
        : response === undefined && error === undefined
          ? 'response is missing: the recorded model text (or error: "timeout" or a message)'
          : response !== undefined
            ? typeof response === 'string'
              ? undefined
              : 'response must be text'
            : typeof error === 'string' && !isBlank(error)
              ? undefined
              : 'error must be text';
    if (problem !== undefined)
      context.addIssue({ code: 'custom', path: [response === undefined ? 'error' : 'response'], message: problem });
  })
  .transform(({ response, error }): ModelOutcome => {
    if (typeof response === 'string') return E.right(response);
    return E.left(
      error === 'timeout' ? failure('timeout', 'no answer in time') : failure('model_error', String(error)),
    );
  });

const messageSchema = z.object({ user: idSchema('user'), session: idSchema('session'), text: textSchema });

/** The fields of each kind of line, after `type` and `at`. */
const LINE_SCHEMAS = {
  user: messageSchema,
  assistant: messageSchema,
  extraction: z.object({ user: idSchema('user'), session: idSchema('session'), outcome: outcomeSchema }),
  rewrite: z.object({ user: idSchema('user'), outcome: outcomeSchema }),
  endStage: z.object({ user: idSchema('user'), session: idSchema('session').optional() }),
} as const;

const typeSchema = z.enum(NOTES_LOG_TYPES, {
  error: (issue) =>
    `${issue.input === undefined ? 'type is missing' : `unknown type ${JSON.stringify(issue.input)}`}: expected one of ${NOTES_LOG_TYPES.join(', ')}`,
});

/** A line's `at`, or nothing when it has none (it then follows the line before). */
const atSchema = z.unknown().transform((at, context) =>
  at === undefined
    ? undefined
    : pipe(
        parseEventTime(at),
        E.getOrElseW(({ message }) => {
          context.addIssue({ code: 'custom', message: `at is not a time: ${message}` });
          return z.NEVER;
        }),
      ),
);

const headerSchema = z.object({ type: typeSchema, at: atSchema.optional() });

/** The first issue of a failed parse, as a problem of the line `fields`. */
const problemOf = (fields: Fields, issues: ReadonlyArray<z.core.$ZodIssue>): Problem => {
  const issue = issues[0]!;
  const field = issue.path[0] ?? '';
  if (field === 'type')
    return { code: fields['type'] === undefined ? 'missing_field' : 'unknown_type', message: issue.message };
  return fieldProblem(fields, field === 'outcome' ? (issue.path[1] ?? field) : field, issue.message);
};

const validate = <T>(schema: z.ZodType<T>, fields: Fields): E.Either<Problem, T> => {
  const parsed = schema.safeParse(fields);
  return parsed.success ? E.right(parsed.data) : E.left(problemOf(fields, parsed.error.issues));
};

const parseFields = (
  fields: Fields,
  type: NotesLogEntry['type'],
): E.Either<Problem, Omit<NotesLogEntry, 'line' | 'at'>> =>
  type === 'rewrite'
    ? pipe(
        validate(LINE_SCHEMAS.rewrite, {
          ...fields,
          outcome: { response: fields['response'], error: fields['error'] },
        }),
        E.map(({ user, outcome }) => ({ type, user, outcome })),
      )
    : type === 'extraction'
      ? pipe(
          validate(LINE_SCHEMAS.extraction, {
            ...fields,
            outcome: { response: fields['response'], error: fields['error'] },
          }),
          E.map(({ user, session, outcome }) => ({ type, user, session, outcome })),
        )
      : type === 'endStage'
        ? pipe(
            validate(LINE_SCHEMAS.endStage, fields),
            E.map(({ user, session }) => ({ type, user, ...(session === undefined ? {} : { session }) })),
          )
        : pipe(
            validate(LINE_SCHEMAS[type], fields),
            E.map(({ user, session, text }) => ({ type, user, session, text })),
          );

/** Parses one non-blank log line; a line without `at` happens one second after `previousAt` (or at 0), at the latest at the end of the year 9999. */
export const parseNotesLogLine = (
  text: string,
  line: number,
  previousAt: number | undefined,
): E.Either<NotesLogError, NotesLogEntry> => {
  refuseLineArguments(text, line, previousAt);
  return pipe(
    readJsonObject(text),
    E.bindTo('fields'),
    E.bind('header', ({ fields }) => validate(headerSchema, fields)),
    E.bind('entry', ({ fields, header }) => parseFields(fields, header.type)),
    E.map(({ header, entry }) => ({ ...entry, line, at: header.at ?? timeOfBareLine(previousAt) }) as NotesLogEntry),
    E.mapLeft((problem) => ({ line, ...problem })),
  );
};

/** Parses a conversation log (JSON Lines; blank lines skipped, line numbers from 1); bad lines become errors. */
export const parseNotesLog = (
  text: string,
): { readonly entries: ReadonlyArray<NotesLogEntry>; readonly errors: ReadonlyArray<NotesLogError> } => {
  const entries: NotesLogEntry[] = [];
  const errors: NotesLogError[] = [];
  let previousAt: number | undefined;
  for (const { line, text: content } of linesOfText(text)) {
    if (content.trim() === '') continue;
    const parsed = parseNotesLogLine(content, line, previousAt);
    if (E.isLeft(parsed)) errors.push(parsed.left);
    else {
      entries.push(parsed.right);
      previousAt = parsed.right.at;
    }
  }
  return { entries, errors };
};
