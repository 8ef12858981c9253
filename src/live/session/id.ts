/**
 * Session ids name files, so they are checked before anything else: an id is one path segment
 * that cannot climb out of the sessions folder, hide itself, or name a device. Claude Code's and
 * Codex's session ids (UUIDs) pass as they are.
 */
import * as E from 'fp-ts/lib/Either.js';
import { MAX_SESSION_ID_LENGTH } from './limits.js';

export { MAX_SESSION_ID_LENGTH };

const SESSION_ID = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/u;
/** Names Windows reserves for devices, with or without an extension. */
const DEVICE_NAME = /^(?:con|prn|aux|nul|com\d|lpt\d)(?:\..*)?$/iu;

/** A hostile id is quoted, clipped, in an error message: it must not flood or forge the message. */
const quote = (value: string): string => JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);

/**
 * Checks a session id: 1 to 128 letters, digits, `_`, `-` and `.`, not starting with `.` or
 * `-`, without `..`, and not a device name. The id comes back as given (never rewritten, so two
 * ids never meet in one file).
 */
export const parseSessionId = (value: unknown): E.Either<string, string> => {
  if (typeof value !== 'string') return E.left('the session id must be a string');
  if (value.length === 0) return E.left('the session id is empty');
  if (value.length > MAX_SESSION_ID_LENGTH)
    return E.left(`the session id is ${value.length} characters long; at most ${MAX_SESSION_ID_LENGTH} are allowed`);
  if (!SESSION_ID.test(value) || value.includes('..'))
    return E.left(
      `the session id ${quote(value)} may hold only letters, digits, "_", "-" and "." (not first, and never "..")`,
    );
  if (DEVICE_NAME.test(value)) return E.left(`the session id ${quote(value)} is a reserved device name`);
  return E.right(value);
};
