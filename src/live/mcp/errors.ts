/**
 * How the server fails: every failure is a tool error (`isError`) whose text starts with its
 * code, so a caller can branch on it, and the server goes on serving. Failures are values
 * (`Failure`) up to here; only the boundary around each tool turns an exception, which is a
 * bug, into one, of code `internal`.
 */
import * as E from 'fp-ts/lib/Either.js';
import { type Failure, failure, INTERNAL, internalFailure } from '../../base/failure.js';
import { clipEnd, collapseWhitespace } from '../../base/text.js';
import { parseEventTime, parseTimeArgument as parseTimeText } from '../../base/time.js';
import { tokenCountFailure } from '../../tokens/checked.js';

/** What a tool hands back. */
export interface ToolAnswer {
  [key: string]: unknown;
  content: Array<{ type: 'text'; text: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** A failure as a tool error: the code first, so a caller can branch on it. */
export const failureAnswer = ({ code, message }: Failure): ToolAnswer => ({
  content: [{ type: 'text', text: `${code}: ${message}` }],
  isError: true,
});

const SDK_INPUT_ERROR = /^Input validation error: Invalid arguments for tool [\w.-]+: /u;
const SDK_ARGUMENTS_ERROR = /^Invalid arguments for tool [\w.-]+: /u;
/** A code some bound of the input schemas starts its message with, after the argument's path. */
const BOUND_CODE = /^[\w.]+: ((?:invalid_field|invalid_session_id|output_too_large|prompt_too_large)): /u;

/**
 * The most characters of the SDK's own message a tool error keeps: its message lists every
 * argument it refuses, and the arguments, their names too, are the caller's, of any size.
 */
export const MAX_TOOL_ERROR_LENGTH = 1_000;

/**
 * The tool error of a failure the SDK met before or around a tool (arguments that do not match
 * the schema, an answer that does not match its own), with a code first like every other: the
 * code a bound names, else `invalid_arguments`, else `internal`.
 */
export const codedToolError = (sdkMessage: string): ToolAnswer => {
  // One line, bounded: an argument's name may hold line breaks, and a call may pass thousands.
  const message = clipEnd(collapseWhitespace(sdkMessage), MAX_TOOL_ERROR_LENGTH);
  const input = SDK_INPUT_ERROR.exec(message) ?? SDK_ARGUMENTS_ERROR.exec(message);
  if (input === null) return failureAnswer(failure(INTERNAL, message));
  const detail = message.slice(input[0].length);
  const bound = BOUND_CODE.exec(detail);
  return bound === null
    ? failureAnswer(failure('invalid_arguments', detail))
    : failureAnswer(failure(bound[1]!, detail.replace(`${bound[1]!}: `, '')));
};

/**
 * The server's outermost boundary around one tool: what the tool answers, or, when it throws
 * (a bug), a tool error of code `internal` that says so, and the server goes on serving. A
 * token counter of the server's options that answered no number of tokens is the caller's
 * setting at fault: `invalid_input`, naming it.
 */
export const atBoundary =
  <A, X extends unknown[]>(tool: (args: A, ...extra: X) => Promise<ToolAnswer>) =>
  async (args: A, ...extra: X): Promise<ToolAnswer> => {
    try {
      return await tool(args, ...extra);
    } catch (error) {
      return failureAnswer(tokenCountFailure(error) ?? internalFailure(error));
    }
  };

/**
 * A time argument (ISO-8601, or epoch milliseconds as a number or as digits in a string, as
 * `--as-of` takes them: a model often quotes a number), or why it is not one.
 */
export const parseTimeArgument = (
  value: string | number | undefined,
  name: string,
): E.Either<Failure, number | undefined> => {
  if (value === undefined) return E.right(undefined);
  const parsed = typeof value === 'string' ? parseTimeText(value) : parseEventTime(value);
  return E.isLeft(parsed)
    ? E.left(
        failure('invalid_field', `${name} is not a time: ${parsed.left.message}; give ISO-8601 or epoch milliseconds`),
      )
    : E.right(parsed.right);
};
