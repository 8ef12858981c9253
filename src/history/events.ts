/**
 * A dispatch history is JSON Lines, one event per line. Parsing is line by line and never
 * stops: a bad line becomes a `HistoryLineError` with its line number and the other lines
 * still parse, so one typo in a long session does not hide the rest of it.
 */
import * as E from 'fp-ts/lib/Either.js';
import { FACT_TAGS, type FactTag, isFactTag, isSourceRole, type SourceRole } from '../fact.js';
import { parseEventTime } from '../base/time.js';

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
export const HISTORY_EVENT_TYPES = ['dispatch', 'prompt', 'invalidate', 'compact'] as const;

/** Why a history line could not be read as an event. */
export type HistoryLineErrorCode = 'invalid_json' | 'unknown_type' | 'missing_field' | 'invalid_field';

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

type Fields = Readonly<Record<string, unknown>>;
type Problem = Omit<HistoryLineError, 'line'>;

const missing = (field: string, why: string): Problem => ({
  code: 'missing_field',
  message: `${field} is missing: ${why}`,
});
const invalid = (field: string, why: string): Problem => ({ code: 'invalid_field', message: `${field} ${why}` });

const isRecord = (value: unknown): value is Fields =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const describe = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;

const requiredText = (fields: Fields, field: string, why: string): E.Either<Problem, string> => {
  const value = fields[field];
  if (value === undefined) return E.left(missing(field, why));
  if (typeof value !== 'string') return E.left(invalid(field, `must be a string, not ${describe(value)}`));
  if (value.trim() === '') return E.left(invalid(field, 'is empty'));
  return E.right(value);
};

const optionalCount = (fields: Fields, field: string): E.Either<Problem, number | undefined> => {
  const value = fields[field];
  if (value === undefined) return E.right(undefined);
  return typeof value === 'number' && Number.isInteger(value) && value >= 0
    ? E.right(value)
    : E.left(invalid(field, `must be a whole number 0 or more, not ${JSON.stringify(value) ?? describe(value)}`));
};

const optionalTags = (fields: Fields): E.Either<Problem, ReadonlyArray<FactTag> | undefined> => {
  const value = fields['tags'];
  if (value === undefined) return E.right(undefined);
  if (!Array.isArray(value)) return E.left(invalid('tags', `must be an array of tags, not ${describe(value)}`));
  const unknown = value.findIndex((tag) => !isFactTag(tag));
  return unknown === -1
    ? E.right(value as FactTag[])
    : E.left(invalid(`tags[${unknown}]`, `is not one of ${FACT_TAGS.join(', ')}`));
};

/** Collects the fields of one event, stopping at the first problem. */
const gather = <T extends Record<string, unknown>>(parts: { [K in keyof T]: E.Either<Problem, T[K]> }): E.Either<
  Problem,
  T
> => {
  const out: Record<string, unknown> = {};
  for (const [key, part] of Object.entries(parts) as [string, E.Either<Problem, unknown>][]) {
    if (E.isLeft(part)) return part;
    if (part.right !== undefined) out[key] = part.right;
  }
  return E.right(out as T);
};

const parseDispatchFields = (fields: Fields) => {
  const role = fields['role'];
  const roleField: E.Either<Problem, SourceRole> =
    role === undefined
      ? E.left(missing('role', 'expected implementer or reviewer'))
      : isSourceRole(role)
        ? E.right(role)
        : E.left(invalid('role', `must be implementer or reviewer, not ${JSON.stringify(role) ?? describe(role)}`));
  const { output, result } = fields;
  const outputField: E.Either<Problem, string | Fields> =
    output !== undefined && result !== undefined
      ? E.left(invalid('output', 'and result are both given: a dispatch has one or the other'))
      : output !== undefined
        ? typeof output === 'string'
          ? E.right(output)
          : E.left(invalid('output', `must be the raw agent text (a string), not ${describe(output)}`))
        : result !== undefined
          ? isRecord(result)
            ? E.right(result)
            : E.left(invalid('result', `must be the result object, not ${describe(result)}`))
          : E.left(missing('output', 'a dispatch gives output (raw agent text) or result (the result object)'));
  return gather({
    role: roleField,
    taskId: requiredText(fields, 'taskId', 'the task this dispatch worked on'),
    output: outputField,
  });
};

const parsePromptFields = (fields: Fields) =>
  gather({
    taskId: requiredText(fields, 'taskId', 'the task the prompt is for'),
    taskPrompt:
      fields['taskPrompt'] === undefined
        ? E.left(missing('taskPrompt', 'the task description facts are chosen for'))
        : typeof fields['taskPrompt'] === 'string'
          ? E.right(fields['taskPrompt'])
          : E.left(invalid('taskPrompt', `must be a string, not ${describe(fields['taskPrompt'])}`)),
    tags: optionalTags(fields),
    maxFacts: optionalCount(fields, 'maxFacts'),
    maxTokens: optionalCount(fields, 'maxTokens'),
  });

const parseInvalidateFields = (fields: Fields) =>
  gather({
    subject: requiredText(fields, 'subject', 'the subject whose facts are closed'),
    relation: requiredText(fields, 'relation', 'the relation whose facts are closed'),
  });

const parseCompactFields = (fields: Fields) =>
  gather({
    maxFacts:
      fields['maxFacts'] === undefined
        ? E.left(missing('maxFacts', 'how many valid facts to keep'))
        : optionalCount(fields, 'maxFacts'),
  });

const parseEventFields = (
  type: (typeof HISTORY_EVENT_TYPES)[number],
  fields: Fields,
): E.Either<Problem, Record<string, unknown>> => {
  switch (type) {
    case 'dispatch':
      return parseDispatchFields(fields);
    case 'prompt':
      return parsePromptFields(fields);
    case 'invalidate':
      return parseInvalidateFields(fields);
    case 'compact':
      return parseCompactFields(fields);
  }
};

const isEventType = (value: unknown): value is (typeof HISTORY_EVENT_TYPES)[number] =>
  typeof value === 'string' && (HISTORY_EVENT_TYPES as ReadonlyArray<string>).includes(value);

const parseJsonLine = (text: string): E.Either<Problem, Fields> => {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return E.left({
      code: 'invalid_json',
      message: `not JSON: ${error instanceof Error ? error.message : String(error)}`,
    });
  }
  return isRecord(value)
    ? E.right(value)
    : E.left({ code: 'invalid_json', message: `expected a JSON object, not ${describe(value)}` });
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
  const located = E.mapLeft((problem: Problem): HistoryLineError => ({ line, ...problem }));
  const fields = parseJsonLine(text);
  if (E.isLeft(fields)) return located(fields);
  const { type, at } = fields.right;
  if (type === undefined) return located(E.left(missing('type', `expected one of ${HISTORY_EVENT_TYPES.join(', ')}`)));
  if (!isEventType(type))
    return located(
      E.left({
        code: 'unknown_type',
        message: `unknown event type ${JSON.stringify(type)}: expected one of ${HISTORY_EVENT_TYPES.join(', ')}`,
      }),
    );
  const time = at === undefined ? E.right(previousAt === undefined ? 0 : previousAt + 1000) : parseEventTime(at);
  if (E.isLeft(time)) return located(E.left(invalid('at', `is not a time: ${time.left}`)));
  const body = parseEventFields(type, fields.right);
  if (E.isLeft(body)) return located(body);
  return E.right({ type, line, at: time.right, ...body.right } as HistoryEvent);
};

const LINE_BREAK = /\r\n|\n|\r/u;

/**
 * Parses a JSON Lines history. Blank lines are skipped; line numbers count every line from 1.
 * A line without `at` happens one second after the previous event (the first event at 0), so
 * every replay of the same text gives the same times.
 */
export const parseHistory = (text: string): ParsedHistory => {
  const events: HistoryEvent[] = [];
  const errors: HistoryLineError[] = [];
  const lines = text.replace(/^\uFEFF/u, '').split(LINE_BREAK);
  let previousAt: number | undefined;
  lines.forEach((content, index) => {
    if (content.trim() === '') return;
    const parsed = parseHistoryLine(content, index + 1, previousAt);
    if (E.isLeft(parsed)) {
      errors.push(parsed.left);
      return;
    }
    events.push(parsed.right);
    previousAt = parsed.right.at;
  });
  return { events, errors };
};
