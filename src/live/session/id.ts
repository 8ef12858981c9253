/**
 * Session ids name files, so they are checked before anything else: an id is one path segment
 * that cannot climb out of the sessions folder, hide itself, or name a device. Claude Code's and
 * Codex's session ids (UUIDs) pass as they are.
 */
import * as E from 'fp-ts/lib/Either.js';
import { type Failure, failure } from '../../base/failure.js';
import { findSecret } from '../../base/secrets.js';
import { quoteText } from '../../base/text.js';
import { MAX_SESSION_ID_LENGTH } from './limits.js';

export { MAX_SESSION_ID_LENGTH };

const SESSION_ID = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/u;
/** Names Windows reserves for devices, with or without an extension. */
const DEVICE_NAME = /^(?:con|prn|aux|nul|com\d|lpt\d)(?:\..*)?$/iu;

/**
 * An id from a client (a session, agent, task or tool call id) quoted for a message
 * (`quoteText`): it can neither flood the message, break its line nor forge the separator of the
 * hook's notices.
 */
export const quoteId = (value: string): string => quoteText(value);

/** An id plain enough to be named bare: Claude Code's and Codex's ids, `7`, `task-2`, `toolu_01A2b3`. */
const PLAIN_ID = /^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,63}$/u;

/** An id from a client as a message names it: bare when it is plain, else quoted (`quoteId`). */
export const nameId = (value: string): string => (PLAIN_ID.test(value) ? value : quoteId(value));

const invalidId = (message: string): E.Either<Failure<'invalid_session_id'>, never> =>
  E.left(failure('invalid_session_id', message));

/**
 * Checks a session id: 1 to 128 letters, digits, `_`, `-` and `.`, not starting with `.` or
 * `-`, without `..`, not a device name, and holding no secret (`findSecret`: an id a model chose
 * may copy a token, as a task id may). The id comes back as given (never rewritten, so two ids
 * never meet in one file).
 */
export const parseSessionId = (value: unknown): E.Either<Failure<'invalid_session_id'>, string> => {
  if (typeof value !== 'string') return invalidId('the session id must be a string');
  if (value.length === 0) return invalidId('the session id is empty');
  if (value.length > MAX_SESSION_ID_LENGTH)
    return invalidId(`the session id is ${value.length} characters long; at most ${MAX_SESSION_ID_LENGTH} are allowed`);
  if (!SESSION_ID.test(value) || value.includes('..'))
    return invalidId(
      `the session id ${quoteId(value)} may hold only letters, digits, "_", "-" and "." (not first, and never "..")`,
    );
  if (DEVICE_NAME.test(value)) return invalidId(`the session id ${quoteId(value)} is a reserved device name`);
  // Not quoted: the message would repeat the secret.
  const secret = findSecret(value);
  if (secret !== undefined)
    return invalidId(
      `the session id holds what looks like ${secret}: it names the session's log file and shows in answers and listings, and no secret may be written; choose another id`,
    );
  return E.right(value);
};
