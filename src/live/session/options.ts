/**
 * The options of `openSession` as a caller passes them: read once, each field, and checked by
 * kind, so that a getter that throws, a Proxy or a field of the wrong kind is a clear
 * `invalid_input` naming it rather than an exception at the caller or an `internal`.
 */
import * as E from 'fp-ts/lib/Either.js';
import { describeError, kindOf } from '../../base/describe.js';
import { isEither } from '../../base/failure.js';
import type { SessionError } from './model.js';

/** The kind each plain option must be of. */
const OPTION_KINDS: Readonly<Record<string, 'string' | 'number' | 'boolean' | 'function'>> = {
  directory: 'string',
  cwd: 'string',
  lockStaleMs: 'number',
  create: 'boolean',
  clock: 'function',
  countTokens: 'function',
};

/** The calls a session store must answer (see `SessionStore`). */
const STORE_CALLS = ['list', 'read', 'append', 'repair', 'readSnapshot', 'writeSnapshot', 'delete', 'backlog', 'close'];

const invalidOption = (message: string): E.Either<SessionError, never> => E.left({ code: 'invalid_input', message });

/**
 * The options as given, each field read once: one that is none (undefined, null) reads as
 * none, one of the wrong kind is refused by name. Options that are no object read as none.
 */
export const checkedSessionOptions = (given: unknown): E.Either<SessionError, Readonly<Record<string, unknown>>> => {
  if (typeof given !== 'object' || given === null) return E.right({});
  const read: Record<string, unknown> = {};
  try {
    for (const key of Object.keys(given)) read[key] = (given as Record<string, unknown>)[key];
  } catch (error) {
    return invalidOption(`the session options could not be read: ${describeError(error)}`);
  }
  const options: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(read)) {
    if (value === undefined || value === null) continue;
    const kind = OPTION_KINDS[key];
    if (kind !== undefined && typeof value !== kind)
      return invalidOption(`the session option ${key} is ${kindOf(value)}, not a ${kind}`);
    options[key] = value;
  }
  const { store } = options;
  if (
    store !== undefined &&
    (typeof store !== 'object' ||
      STORE_CALLS.some((call) => typeof (store as Record<string, unknown>)[call] !== 'function'))
  )
    return invalidOption(`the session option store is no session store (it answers ${STORE_CALLS.join(', ')})`);
  return E.right(options);
};

/**
 * The `accept` of `compileContext`'s or `ingestResult`'s options, as the step that records the
 * event calls it: with what `sectionOf` draws of the planned event (a prompt's section, a
 * result's line and time). None when the options or the field are none (undefined, null), else a
 * function whose answers are checked once they settle: one that is no `Either` is an
 * `invalid_input` naming it, as an `accept` that is no function is.
 */
export const checkedAccept = <P, S>(
  options: unknown,
  sectionOf: (planned: P) => S,
): E.Either<SessionError, ((planned: P) => Promise<E.Either<SessionError, unknown>>) | undefined> => {
  if (typeof options !== 'object' || options === null) return E.right(undefined);
  let accept: unknown;
  try {
    accept = (options as Record<string, unknown>)['accept'];
  } catch (error) {
    return invalidOption(`the options could not be read: ${describeError(error)}`);
  }
  if (accept === undefined || accept === null) return E.right(undefined);
  if (typeof accept !== 'function') return invalidOption(`accept is ${kindOf(accept)}, not a function`);
  return E.right(async (planned) => {
    const answer: unknown = await (accept as (section: S) => unknown)(sectionOf(planned));
    return isEither(answer)
      ? (answer as E.Either<SessionError, unknown>)
      : invalidOption(`accept answered ${kindOf(answer)}, not an Either`);
  });
};
