/**
 * The open sessions of a long-lived process (the MCP server): one shell per log, kept open
 * between calls, the least recently used closed past a bound; and the warm-up that opens the
 * session an agent most likely asks about first before it asks.
 */
import * as E from 'fp-ts/lib/Either.js';
import { parseSessionId } from './id.js';
import type { SessionError } from './model.js';
import {
  bytesToReplay,
  latestSessionId,
  type LiveSession,
  openSessionCalls,
  type SessionCalls,
  type SessionOptions,
} from './session.js';

/** Sessions kept open at once; the least recently used is closed past it (it reopens from its log). */
const OPEN_SESSIONS = 64;

/**
 * The most log a server replays before it reads its first message (see `serveMcp`): about a
 * third of a second of catching up, where a whole long log without its snapshot takes seconds.
 */
export const MAX_PREPARED_REPLAY_BYTES = 256 * 1024;

/** Where the pool's sessions are and how they run, and who hears about lines their logs could not apply. */
export interface SessionPoolOptions extends Pick<
  SessionOptions,
  'cwd' | 'directory' | 'store' | 'clock' | 'lockStaleMs' | 'countTokens' | 'tokenizer'
> {
  /** Told about lines a session's log could not apply, once per session opened. */
  readonly onWarning?: (message: string) => void;
}

/**
 * The open sessions: a lookup by id, and how many lookups it had. With `create`, the session's
 * calls may create its log; without, they answer `unknown_session` when it has none, also once a
 * session kept open was deleted since.
 */
export type SessionPool = ((sessionId: string, create: boolean) => Promise<E.Either<SessionError, LiveSession>>) & {
  readonly requests: () => number;
};

/**
 * The open sessions, by id, least recently used first; an id being opened is shared by the
 * calls that wait for it, so one process never holds two shells over one log.
 */
export const createSessionPool = (options: SessionPoolOptions): SessionPool => {
  const open = new Map<string, Promise<E.Either<SessionError, SessionCalls>>>();
  const settings: SessionOptions = {
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    ...(options.directory === undefined ? {} : { directory: options.directory }),
    ...(options.store === undefined ? {} : { store: options.store }),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.lockStaleMs === undefined ? {} : { lockStaleMs: options.lockStaleMs }),
    ...(options.countTokens === undefined ? {} : { countTokens: options.countTokens }),
    ...(options.tokenizer === undefined ? {} : { tokenizer: options.tokenizer }),
  };

  const warn = (session: LiveSession): void => {
    const { errors, errorsOmitted = 0, setAside } = session.report();
    const first = errors[0];
    // The report lists the first rejected lines only; the count is of them all.
    if (first !== undefined)
      options.onWarning?.(
        `session ${session.id}: ${errors.length + errorsOmitted} line(s) of ${session.file} not applied, first line ${first.line} (${first.code}: ${first.message})`,
      );
    for (const torn of setAside)
      options.onWarning?.(`session ${session.id}: a torn last line (line ${torn.line}) was set aside to ${torn.file}`);
  };

  let requests = 0;
  const lookup = async (sessionId: string, create: boolean): Promise<E.Either<SessionError, LiveSession>> => {
    requests += 1;
    const valid = parseSessionId(sessionId);
    if (E.isLeft(valid)) return valid;
    let known = open.get(sessionId);
    while (known !== undefined) {
      open.delete(sessionId);
      open.set(sessionId, known);
      const session = await known;
      if (E.isRight(session)) return E.right(session.right(create));
      if (!create) return session;
      // Another call that may create the log, waiting on the same opening that failed (one that
      // may not, finding none), may have opened it again already: that one is joined, else each
      // would hold a shell of its own, and a call sent again to this server would not find the
      // line its first sending wrote (`unconfirmed`), and write it twice.
      const next = open.get(sessionId);
      known = next === known ? undefined : next;
    }
    const opening = openSessionCalls(sessionId, { ...settings, create });
    open.set(sessionId, opening);
    const opened = await opening;
    if (E.isLeft(opened)) {
      if (open.get(sessionId) === opening) open.delete(sessionId);
      return opened;
    }
    const session = opened.right(create);
    warn(session);
    for (const oldest of open.keys()) {
      if (open.size <= OPEN_SESSIONS) break;
      open.delete(oldest);
    }
    return E.right(session);
  };
  // How many lookups the pool has had: a warm-up gives way to a call.
  return Object.assign(lookup, { requests: (): number => requests });
};

/**
 * The session whose log changed last in the folder `options` name, and whether it opens
 * quickly: its snapshot can be used and leaves at most `MAX_PREPARED_REPLAY_BYTES` of log to
 * replay (or the whole log is that small). Undefined when the folder holds no session, or when
 * the sessions are in a store of their own (a database shared by many agents: the session
 * changed last there is most likely another agent's).
 */
export const latestSession = async (
  options: Pick<SessionOptions, 'cwd' | 'directory' | 'store'>,
): Promise<{ readonly id: string; readonly quick: boolean } | undefined> => {
  if (options.store !== undefined) return undefined;
  const id = await latestSessionId(options);
  if (id === undefined) return undefined;
  const bytes = await bytesToReplay(id, options);
  return { id, quick: bytes !== undefined && bytes <= MAX_PREPARED_REPLAY_BYTES };
};

/**
 * Opens, in `pool`, the session `id` (by default the one whose log changed last in the
 * folder; never creating one), then runs its latest prompts' queries until `stop` says so (by
 * default, until the pool is asked for anything; see `LiveSession.warm`): a server started for
 * an agent session is most often asked about that session first, and finds it read and its
 * queries warm. The session it opened, if any; a failure is only a cache missed (the first call
 * opens the session as it would have).
 */
export const warmSessionPool = async (
  pool: SessionPool,
  options: Pick<SessionOptions, 'cwd' | 'directory' | 'store'>,
  warming: { readonly id?: string; readonly stop?: () => boolean } = {},
): Promise<E.Either<SessionError, LiveSession> | undefined> => {
  const id = warming.id ?? (options.store === undefined ? await latestSessionId(options) : undefined);
  if (id === undefined) return undefined;
  const opened = await pool(id, false);
  const asked = pool.requests();
  // Its latest prompts' queries run, until a call comes (it would wait for them).
  if (E.isRight(opened)) await opened.right.warm(warming.stop ?? (() => pool.requests() !== asked));
  return opened;
};
