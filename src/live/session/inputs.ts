/**
 * The inputs a live session takes, checked before anything is read or written: the limits of
 * live use (`limits.ts`), and each input turned into the fields of its history line, in the
 * order the history format documents them.
 */
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import { describeError, describeValue, kindOf } from '../../base/describe.js';
import { exceedsValueDepth } from '../../base/json.js';
import { isRecord } from '../../base/record.js';
import { quoteValue } from '../../base/schema.js';
import { redactSecretsIn, withoutSecrets } from '../../base/secrets.js';
import { collapseWhitespace, isBlank } from '../../base/text.js';
import { parseEventTime, type TimeFailure } from '../../base/time.js';
import { normalizeTaskId } from '../../core/extract/extractor.js';
import { redactedOutput } from '../../core/extract/redact.js';
import { isSectionLayout, SECTION_LAYOUTS } from '../../core/retrieve/defaults.js';
import type { TokenizerName } from '../../tokens/names.js';
import { MAX_OUTPUT_DEPTH, MAX_OUTPUT_LENGTH, MAX_PROMPT_LENGTH, MAX_TASK_ID_LENGTH } from './limits.js';
import type { CompileContextInput, IngestResultInput, SessionError } from './model.js';
import { resultKey, type SameResult } from './sessionState.js';

const invalidInput = (message: string): SessionError => ({ code: 'invalid_input', message });
const invalidField = (message: string): SessionError => ({ code: 'invalid_field', message });

/**
 * A task id as the session records it: text as facts carry it (`normalizeTaskId`: whitespace
 * collapsed), so the log, the facts and the hook name one task alike; any other value as given,
 * for the history's own checks to take (an integer) or refuse (an empty id).
 */
export const recordedTaskId = (taskId: unknown): unknown =>
  typeof taskId === 'string' ? E.getOrElse((): unknown => taskId)(normalizeTaskId(taskId)) : taskId;

/**
 * A task id the session takes: what facts can carry once its whitespace is collapsed, the same
 * for prompts and results, checked before its line is written (a prompt's line would be written
 * even though its id records nothing).
 */
const checkTaskId = (taskId: unknown): E.Either<SessionError, void> => {
  // An object, a BigInt or a function is no id, and one JSON cannot write (a cycle) must not reach the log.
  if (taskId !== null && ['object', 'bigint', 'function', 'symbol'].includes(typeof taskId))
    return E.left({ code: 'invalid_field', message: `taskId is ${kindOf(taskId)}, not text or a whole number` });
  // A blank id is left to the history's checks, which name the field.
  if (typeof taskId !== 'string' || isBlank(taskId)) return E.right(undefined);
  const { length } = collapseWhitespace(taskId);
  if (length > MAX_TASK_ID_LENGTH)
    return E.left({
      code: 'invalid_field',
      message: `taskId is ${length} characters long${length === taskId.length ? '' : ' once whitespace is collapsed'}; at most ${MAX_TASK_ID_LENGTH} are allowed`,
    });
  // Whatever else the core refuses of an id (one holding a secret: `normalizeTaskId`), in its words.
  return E.bimap(invalidField, (): void => undefined)(normalizeTaskId(taskId));
};

/**
 * A count that JSON can write: Infinity and NaN would reach the log as null, so they are refused
 * by name here rather than as the null the log line would hold.
 */
export const checkCount = (name: string, value: unknown): E.Either<SessionError, void> =>
  (typeof value === 'number' && !Number.isFinite(value)) || typeof value === 'bigint'
    ? E.left({
        code: 'invalid_field',
        message: `${name} must be a whole number 0 or more, not ${typeof value === 'bigint' ? `the BigInt ${value}n` : String(value)}`,
      })
    : E.right(undefined);

/**
 * A prompt the session takes: a task id facts can carry, a prompt of at most
 * `MAX_PROMPT_LENGTH` characters, finite counts.
 */
export const checkPrompt = (input: unknown): E.Either<SessionError, void> => {
  const { taskId, taskPrompt, maxFacts, maxTokens, layout } = isRecord(input) ? input : ({} as Record<string, unknown>);
  if (layout !== undefined && !isSectionLayout(layout))
    return E.left({
      code: 'invalid_field',
      message: `layout must be ${SECTION_LAYOUTS.join(' or ')}, not ${quoteValue(layout)}`,
    });
  if (typeof taskPrompt === 'string' && taskPrompt.length > MAX_PROMPT_LENGTH)
    return E.left({
      code: 'prompt_too_large',
      message: `taskPrompt is ${taskPrompt.length} characters long; at most ${MAX_PROMPT_LENGTH} are taken`,
    });
  return pipe(
    checkTaskId(taskId),
    E.chain(() => checkCount('maxFacts', maxFacts)),
    E.chain(() => checkCount('maxTokens', maxTokens)),
  );
};

/** An output object as its log line holds it, or why JSON cannot hold it (a BigInt, a toJSON that throws). */
const outputJson = (output: Readonly<Record<string, unknown>>): E.Either<SessionError, string> => {
  try {
    return E.right(JSON.stringify(output));
  } catch (error) {
    return E.left(invalidInput(`output cannot be written to the log as JSON: ${describeError(error)}`));
  }
};

/** An output the session takes: text or a result object of at most `MAX_OUTPUT_LENGTH` characters, nested at most `MAX_OUTPUT_DEPTH` deep. */
const checkOutput = (output: unknown): E.Either<SessionError, void> => {
  if (isRecord(output) && exceedsValueDepth(output, MAX_OUTPUT_DEPTH))
    return E.left({ code: 'too_large', message: `output nests arrays and objects more than ${MAX_OUTPUT_DEPTH} deep` });
  const json = isRecord(output) ? outputJson(output) : E.right(typeof output === 'string' ? output : '');
  if (E.isLeft(json)) return json;
  const size = json.right.length;
  return size > MAX_OUTPUT_LENGTH
    ? E.left({
        code: 'output_too_large',
        message: `output is ${size} characters; at most ${MAX_OUTPUT_LENGTH} are taken (a dispatch result is a few KB: send the final message, not a transcript)`,
      })
    : E.right(undefined);
};

/**
 * The time of a call: `at`, or the clock's, as a number of epoch milliseconds within the years a
 * history can hold (0000 to 9999), so that what is written reads back. A clock that throws or
 * answers no such time is the caller's, and is named as such.
 */
export const timeOf = (at: unknown, clock: () => number): E.Either<SessionError, number> => {
  if (at !== undefined && at !== null)
    return typeof at === 'number' && Number.isFinite(at)
      ? E.mapLeft(({ message }: TimeFailure) => invalidField(`at is not a time: ${message}`))(parseEventTime(at))
      : E.left(invalidInput(`the time must be a finite number of epoch milliseconds, not ${quoteValue(at)}`));
  let now: unknown;
  try {
    now = clock();
  } catch (error) {
    return E.left(invalidInput(`the clock failed: ${describeError(error)}`));
  }
  return typeof now === 'number'
    ? E.mapLeft(({ message }: TimeFailure) => invalidInput(`the clock answered no time: ${message}`))(
        parseEventTime(now),
      )
    : E.left(invalidInput(`the clock answered no time: ${describeValue(now)} is not a number of epoch milliseconds`));
};

/**
 * The fields of a prompt line, in the order the history format documents them; `tokenizer` is
 * the session's named counter, when it records one.
 */
export const promptFields = (
  input: Omit<CompileContextInput, 'at'>,
  at: number,
  tokenizer?: TokenizerName,
): Readonly<Record<string, unknown>> => {
  const { taskId, taskPrompt, tags, maxFacts, maxTokens, layout } = isRecord(input)
    ? (input as Partial<CompileContextInput>)
    : ({} as Partial<CompileContextInput>);
  return {
    type: 'prompt',
    taskId: recordedTaskId(taskId),
    // What the log keeps holds no secret (`base/secrets.ts`): a replay of it gives what the session gave.
    taskPrompt: redactSecretsIn(taskPrompt),
    ...(tags === undefined ? {} : { tags }),
    ...(maxFacts === undefined ? {} : { maxFacts }),
    ...(maxTokens === undefined ? {} : { maxTokens }),
    ...(layout === undefined ? {} : { layout }),
    ...(tokenizer === undefined ? {} : { tokenizer }),
    at,
  };
};

/** A dispatch to record: the fields of its line at a time, and the task and content key a resend is recognized by. */
export interface DispatchFields {
  readonly line: (at: number) => Readonly<Record<string, unknown>>;
  readonly sameResult: SameResult;
}

/**
 * The fields of a dispatch line, in the documented order: raw text goes in `output`, a result
 * object in `result`, each with its secrets redacted, as extraction would redact them.
 */
export const dispatchFields = (input: IngestResultInput): E.Either<SessionError, DispatchFields> => {
  if (!isRecord(input)) return E.left(invalidInput('the input is not an object'));
  const { role, taskId, output } = input;
  // A role is a name (which the contract then checks): one of another kind could not be written, nor keyed.
  if (typeof role !== 'string')
    return E.left(invalidField(`role must be implementer or reviewer, not ${quoteValue(role)}`));
  if (typeof output !== 'string' && !isRecord(output))
    return E.left(invalidInput('output must be the raw agent text (a string) or the result object'));
  const limited = pipe(
    checkTaskId(taskId),
    E.chain(() => checkOutput(output)),
  );
  if (E.isLeft(limited)) return limited;
  const recorded = recordedTaskId(taskId);
  // Keyed as written: the key a line of the log gives back is that of its redacted output.
  const kept = typeof output === 'string' ? redactedOutput(output) : withoutSecrets(output);
  return E.right({
    line: (at) => ({
      type: 'dispatch',
      role,
      taskId: recorded,
      at,
      ...(typeof kept === 'string' ? { output: kept } : { result: kept }),
    }),
    sameResult: { taskId: String(recorded), key: resultKey(recorded, role, kept) },
  });
};
