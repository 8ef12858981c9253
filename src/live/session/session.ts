/**
 * A live session: a `SessionState` value and the I/O around it. Its log is kept by a session
 * store (the files under `.fact-tracker/sessions` by default): opening a session reads the
 * snapshot and the lines after it; every call first reads what other processes appended; a
 * change is planned on the state (`planEvent`, which runs `trackerTransition`), appended after
 * the line the state ends at, and only then taken as the new state. A writer that lost the race
 * reads what it missed and plans again. So a session answers exactly what `fact-tracker replay`
 * prints for its log, whoever wrote it.
 */
import * as E from 'fp-ts/lib/Either.js';
import { memoize } from '../../base/memo.js';
import { type Failure, internalFailure } from '../../base/failure.js';
import { isRecord, readInput } from '../../base/record.js';
import { quoteValue } from '../../base/schema.js';
import { redactSecretsIn } from '../../base/secrets.js';
import { isTokenizerName, TOKENIZER_NAMES } from '../../tokens/names.js';
import { explainRetrieval } from '../../core/prompt/retrieve.js';
import { emptyReport } from '../../core/store/compact.js';
import { selectLatestPrompts } from '../../core/store/write.js';
import { strictlyIncreasingNow } from '../../core/tracker/clock.js';
import { promptQuery, selectSessionContext, type TrackerEnvironment } from '../../core/tracker/transition.js';
import { namedTokenCounter, tokenCountFailure } from '../../tokens/checked.js';
import { checkedStore } from './checkedStore.js';
import { fileSessionStore, locateSession } from './files.js';
import { followedBy } from './follower.js';
import { parseSessionId } from './id.js';
import { checkedAccept, checkedSessionOptions } from './options.js';
import { checkCount, checkPrompt, dispatchFields, promptFields, timeOf } from './inputs.js';
import type {
  CompileOptions,
  ExplainContextInput,
  IngestOptions,
  Recorded,
  SessionError,
  SetAsideLine,
} from './model.js';
import { STORE_ACCESS_CODES, type StoreAccessCode } from './model.js';
import type { LiveSession, SessionOptions } from './liveSession.js';
import {
  applyLogLines,
  closedOf,
  compactionOf,
  decodeSnapshot,
  encodeSessionState,
  type EventPlan,
  extractionOf,
  holdsEvent,
  initialSessionState,
  parsePromptQuery,
  planClockedEvent,
  planEvent,
  type RecordedEvent,
  type SameResult,
  sectionOf,
  selectSessionStore,
  type SessionState,
} from './sessionState.js';
import { recordedPrompts } from './recordedPrompts.js';
import { CATCH_UP_LINES, turnOfTheLoop } from './turns.js';
import type { SnapshotUse } from './snapshot.js';
import type { SessionStore } from './store.js';
import { type SessionCounting, sessionCounting } from './tokenizer.js';

export {
  bytesToReplay,
  DEFAULT_LOCK_STALE_MS,
  DEFAULT_SESSIONS_DIRECTORY,
  latestSessionId,
  listSessionIds,
  locateSession,
  resolveSessionsDirectory,
  type SessionFiles,
} from './files.js';
export { DUPLICATE_WINDOW } from './sessionState.js';
export type { LiveSession, SessionOptions } from './liveSession.js';

/** A writer saves a snapshot once this many lines were read or written since the last one: no process replays more. */
export const SNAPSHOT_EVERY = 64;
/** A reader saves one only past this many. */
const SNAPSHOT_EVERY_READER = 4 * SNAPSHOT_EVERY;
/** Prompts whose queries a warm-up runs: the most recent, whose words the next prompt most likely shares. */
const WARM_QUERIES = 8;
/** Torn lines this process set aside that the report lists. */
const REPORTED_SET_ASIDE = 100;
/** The failures of a store that cannot be used at all, whatever is read from it. */
const STORE_ACCESS: ReadonlySet<string> = new Set(STORE_ACCESS_CODES);
const isStoreAccess = (failed: { readonly code: string }): failed is Failure<StoreAccessCode> =>
  STORE_ACCESS.has(failed.code);

/**
 * What a call's boundary answers for an exception: a token counter that answered no number of
 * tokens is the caller's setting at fault (`invalid_input`); anything else is a bug (`internal`).
 */
const boundaryFailure = (error: unknown): SessionError => tokenCountFailure(error) ?? internalFailure(error);
/** How many times a writer that keeps losing the race to others reads what it missed and tries again. */
const APPEND_ATTEMPTS = 1_000;

/** An event a call records: its line's fields, whether the caller gave its time, how a resent result is recognized. */
interface EventCall {
  readonly fields: Readonly<Record<string, unknown>>;
  /** False when the session's clock gave the time. */
  readonly timed: boolean;
  readonly sameResult?: SameResult;
  /** Says whether the event, as planned at the time `at`, may be written; a Left is the answer, nothing written. */
  readonly accept?: (planned: PlannedEvent) => Promise<E.Either<SessionError, unknown>>;
}

/** An event as planned: what it answers once written, the time its line is written with, and its key (`holdsEvent`). */
type PlannedEvent = Pick<Extract<EventPlan, { kind: 'append' }>, 'recorded' | 'at' | 'key'>;

/** Opens the session `sessionId` (validated) and reads its log; a torn last line is set aside and reported. */
export const openSession = async (
  sessionId: unknown,
  given: SessionOptions = {},
): Promise<E.Either<SessionError, LiveSession>> => {
  const options = E.map((read) => read as SessionOptions)(checkedSessionOptions(given));
  if (E.isLeft(options)) return options;
  const opened = await openSessionCalls(sessionId, options.right);
  return E.map((calls: SessionCalls) => calls(options.right.create !== false))(opened);
};

/**
 * One open session, its calls in two kinds over its one state: those that may create its log
 * (`create` true) and those that need it there, which answer `unknown_session` once it is gone.
 * For a process that serves calls of both kinds on a session it keeps open (the MCP server).
 */
export type SessionCalls = (create: boolean) => LiveSession;

/**
 * Opens the session `sessionId` as `openSession` does (`options.create` decides the opening
 * only), with its calls of both kinds.
 */
export const openSessionCalls = async (
  sessionId: unknown,
  given: SessionOptions = {},
): Promise<E.Either<SessionError, SessionCalls>> => {
  // Options that are none (null) read as none; one of the wrong kind is refused.
  const checked = checkedSessionOptions(given);
  if (E.isLeft(checked)) return checked;
  const options = checked.right as SessionOptions;
  const id = parseSessionId(sessionId);
  if (E.isLeft(id)) return id;
  try {
    let store = options.store;
    let file = `${store?.location ?? ''}#${id.right}`;
    if (store === undefined) {
      // The default files: the folder is checked (and made) before anything is read.
      const files = await locateSession(id.right, options);
      if (E.isLeft(files)) return files;
      file = files.right.file;
      store = fileSessionStore({
        ...(options.directory === undefined ? {} : { directory: options.directory }),
        ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
        ...(options.lockStaleMs === undefined ? {} : { lockStaleMs: options.lockStaleMs }),
        ...(options.clock === undefined ? {} : { clock: options.clock }),
      });
    }
    // The caller's counter says its exceptions are its own (`namedTokenCounter`).
    const { countTokens } = options;
    const counting = sessionCounting(
      countTokens === undefined ? options : { ...options, countTokens: namedTokenCounter(countTokens) },
    );
    // Every answer of the store is checked once here: a caller's adapter may answer anything.
    return E.isLeft(counting) ? counting : await open(id.right, file, checkedStore(store), options, counting.right);
  } catch (error) {
    return E.left(boundaryFailure(error));
  }
};

const open = async (
  id: string,
  file: string,
  shared: SessionStore,
  options: SessionOptions,
  counting: SessionCounting,
): Promise<E.Either<SessionError, SessionCalls>> => {
  // Where this session is in its log is its own, whoever else follows it on the same store.
  const store = followedBy(shared);
  // Calls of one session within one millisecond are still two instants, as the tracker's are.
  const clock = options.clock ?? strictlyIncreasingNow();
  const { env } = counting;

  /** The one value the session holds: its state after the lines of its log read so far. */
  let state = initialSessionState();
  /** The line the last snapshot written or read covers. */
  let snapshotAt = 0;
  /**
   * True once the store refused a snapshot for a privilege (a role that may only read, a
   * read-only server): asked again, it would refuse again, after the whole state was encoded
   * and sent. The log still answers every call; the process replays it from the last snapshot
   * a writer saved.
   */
  let snapshotRefused = false;
  let snapshotUse: SnapshotUse = { used: false, reason: 'not read yet' };
  const setAside: SetAsideLine[] = [];
  /** The store `snapshot` hands out, made once per state: selectors memoize by store identity. */
  const handedOut = memoize(1, selectSessionStore);

  const keepSetAside = (lines: ReadonlyArray<SetAsideLine>): void => {
    for (const line of lines) if (setAside.length < REPORTED_SET_ASIDE) setAside.push(line);
  };

  /**
   * Starts from the snapshot the store keeps when it can be trusted; otherwise the log is read
   * from its first line. A Left when the store cannot be used at all (its server unreachable, its
   * credentials refused...): reading the log would wait on it again, and fail the same way.
   */
  const resume = async (): Promise<E.Either<SessionError, void>> => {
    const read = await store.readSnapshot(id);
    if (E.isLeft(read)) {
      const failed = read.left;
      if (isStoreAccess(failed)) return E.left(failed);
      snapshotUse = { used: false, reason: failed.message };
      return E.right(undefined);
    }
    if (read.right === undefined) {
      snapshotUse = { used: false, reason: 'there is no snapshot' };
      return E.right(undefined);
    }
    const decoded = decodeSnapshot(read.right);
    if (E.isLeft(decoded)) {
      snapshotUse = { used: false, reason: decoded.left.message };
      return E.right(undefined);
    }
    state = decoded.right;
    snapshotAt = read.right.position;
    snapshotUse = { used: true, position: read.right.position };
    return E.right(undefined);
  };

  const prompts = recordedPrompts(shared, id, counting);

  /** Applies what other writers appended since the last read; a log replaced behind our back is read again from its start. */
  const catchUp = async (): Promise<E.Either<SessionError, { exists: boolean; torn: boolean }>> => {
    const read = await store.read(id, state.lines);
    if (E.isLeft(read)) return read;
    const { exists, restarted, lines, position, torn } = read.right;
    if (restarted) {
      state = initialSessionState();
      snapshotAt = 0;
    }
    prompts.notice(lines, restarted);
    for (let from = 0; from === 0 || from < lines.length; from += CATCH_UP_LINES) {
      if (from > 0) await turnOfTheLoop();
      const chunk = lines.slice(from, from + CATCH_UP_LINES);
      const last = from + CATCH_UP_LINES >= lines.length;
      state = applyLogLines(state, chunk, last ? position : chunk[chunk.length - 1]!.line, env);
    }
    return E.right({ exists, torn });
  };

  /**
   * Saves a snapshot when enough was read or written since the last one. A snapshot that cannot
   * be written is only a cache missed, and one the store refused for a privilege is not asked
   * for again; a Left only for `internal`, a bug, which no cache hides.
   */
  const saveSnapshotIfDue = async (threshold: number): Promise<E.Either<SessionError, void>> => {
    if (snapshotRefused || state.lines - snapshotAt < threshold || state.lines === 0) return E.right(undefined);
    const written = await store.writeSnapshot(id, { position: state.lines, state: encodeSessionState(state) });
    if (E.isRight(written)) snapshotAt = state.lines;
    else if (written.left.code === 'store_privilege') snapshotRefused = true;
    return E.isLeft(written) && written.left.code === 'internal' ? written : E.right(undefined);
  };

  // Calls of this process take turns, so a catch-up never runs twice over the same lines.
  let queue: Promise<unknown> = Promise.resolve();
  /** The shell's boundary: calls in turn, and an exception nobody expected becomes `internal`. */
  const serialize = <T>(work: () => Promise<E.Either<SessionError, T>>): Promise<E.Either<SessionError, T>> => {
    const guarded = async (): Promise<E.Either<SessionError, T>> => {
      try {
        return await work();
      } catch (error) {
        return E.left(boundaryFailure(error));
      }
    };
    const run = queue.then(guarded, guarded);
    queue = run;
    return run;
  };

  const unknownSession = (): E.Either<SessionError, never> =>
    E.left({ code: 'unknown_session', message: `there is no session ${id} (no log at ${file})` });

  /**
   * Catches up: the session as its log now is. Without `create`, a log that is not there (never
   * made, or deleted since it was read) is `unknown_session`, as it is to a process opening it.
   */
  const catchUpTo = async (create: boolean): Promise<E.Either<SessionError, { exists: boolean; torn: boolean }>> => {
    const caught = await catchUp();
    return E.isRight(caught) && !caught.right.exists && !create ? unknownSession() : caught;
  };

  /** Catches up, then answers from the state; a reader that had a long stretch to read saves a snapshot. */
  const read = <T>(
    create: boolean,
    answer: (state: SessionState) => E.Either<SessionError, T>,
  ): Promise<E.Either<SessionError, T>> =>
    serialize(async () => {
      const caught = await catchUpTo(create);
      if (E.isLeft(caught)) return caught;
      const saved = caught.right.exists ? await saveSnapshotIfDue(SNAPSHOT_EVERY_READER) : E.right(undefined);
      return E.isLeft(saved) ? saved : answer(state);
    });

  /**
   * The last event this process handed to the store whose call was answered with a failure (a
   * flush that failed once its line was written, an append whose outcome was lost), and the key
   * of that call: the same call sent again finds it in the log and is answered as that event.
   */
  let unconfirmed: { readonly call: string; readonly key: string; readonly recorded: RecordedEvent } | undefined;

  /**
   * The event `call` records as found in the log when the same call was answered with a
   * failure after its line was written (`unconfirmed`), made durable first: a caller that sends
   * a call again after a failure gets its one event, never a second line. Undefined when there
   * is none (and `unconfirmed` is forgotten once the log no longer holds its event).
   */
  const confirmed = async (call: () => string): Promise<E.Either<SessionError, RecordedEvent> | undefined> => {
    const own = unconfirmed;
    if (own === undefined) return undefined;
    if (!holdsEvent(state, own.key, own.recorded.line)) {
      unconfirmed = undefined;
      return undefined;
    }
    if (own.call !== call()) return undefined;
    const durable = store.flush === undefined ? E.right(undefined) : await store.flush(id);
    if (E.isLeft(durable)) return durable;
    unconfirmed = undefined;
    return E.right(own.recorded);
  };

  /**
   * Records the event whose line is `event.fields`, unless the log holds it already: catch up,
   * plan it on the state, append it after the state's last line, and take the planned state
   * only once it is in the log. A writer that lost the race reads what it missed and plans
   * again, a time the clock gave moved past the log's last event as it then stands
   * (`planClockedEvent`). Without `create`, a log that is gone is `unknown_session`.
   */
  const record = <T>(
    create: boolean,
    event: EventCall,
    answer: (recorded: RecordedEvent) => E.Either<SessionError, T>,
  ): Promise<E.Either<SessionError, T>> =>
    serialize(async () => {
      const { fields, sameResult } = event;
      // The same call sent again: its fields, and its time unless the clock gave it (written out only when needed).
      const call = (): string => JSON.stringify(event.timed ? fields : { ...fields, at: undefined });
      // Most of what others appended is read before taking the writer's turn, so little work waits on it.
      if (store.exclusive !== undefined) {
        const early = await catchUpTo(create);
        if (E.isLeft(early)) return early;
      }
      let handed: { readonly key: string; readonly recorded: RecordedEvent } | undefined;
      let resent: Extract<EventPlan, { kind: 'duplicate' }> | undefined;
      const attempt = async (): Promise<E.Either<SessionError, RecordedEvent>> => {
        // An append left `unanswered` may have landed all the same (a connection lost before the
        // answer): found on its line at the next read, it is this call's own event, not a resend.
        let unanswered: { readonly key: string; readonly recorded: RecordedEvent } | undefined;
        for (let tries = 1; ; tries += 1) {
          const caught = await catchUpTo(create);
          if (E.isLeft(caught)) return caught;
          const own = await confirmed(call);
          if (own !== undefined) return own;
          // Found by its key: a time the clock gave may have been moved past the log, then planned anew.
          if (unanswered !== undefined && holdsEvent(state, unanswered.key, unanswered.recorded.line))
            return E.right(unanswered.recorded);
          const plan = (event.timed ? planEvent : planClockedEvent)(state, fields, env, sameResult);
          if (E.isLeft(plan)) return plan;
          if (plan.right.kind === 'duplicate') {
            resent = plan.right;
            return E.right(resent.recorded);
          }
          const refused = await event.accept?.(plan.right);
          if (refused !== undefined && E.isLeft(refused)) return refused;
          handed = { key: plan.right.key, recorded: plan.right.recorded };
          const appended = await store.append(id, state.lines, [plan.right.text]);
          if (E.isLeft(appended)) {
            if (appended.left.unanswered === true) unanswered = handed;
            if (appended.left.code === 'conflict' && tries < APPEND_ATTEMPTS) continue;
            return appended;
          }
          keepSetAside(appended.right.setAside);
          state = plan.right.next;
          prompts.keep(plan.right.key, plan.right.recorded);
          prompts.notice([{ line: plan.right.recorded.line, text: plan.right.text }], false);
          return E.right(plan.right.recorded);
        }
      };
      const run = () => (store.exclusive === undefined ? attempt() : store.exclusive(id, attempt));
      let recorded = await run();
      // A prompt on a line of a log made anew before its section was read comes after it: planned again on it.
      while (E.isRight(recorded) && resent?.prompt !== undefined) {
        const section = await prompts.sectionAt(resent.key, resent.prompt);
        if (E.isLeft(section)) return section;
        if (section.right !== undefined) return answer({ ...recorded.right, output: section.right });
        [resent, recorded] = [undefined, await run()];
      }
      if (E.isLeft(recorded)) {
        // Its line may be in the log all the same (the files' flush fails after the write): the
        // same call again is then answered as this event (`confirmed`), not written twice.
        if (handed !== undefined) unconfirmed = { call: call(), ...handed };
        return recorded;
      }
      const saved = await saveSnapshotIfDue(SNAPSHOT_EVERY);
      if (E.isLeft(saved)) {
        // The event is in the log: the same call sent again is answered as it, not written twice.
        if (handed !== undefined) unconfirmed = { call: call(), ...handed };
        return E.left({
          ...saved.left,
          message: `${saved.left.message} (saving the snapshot, after the event was recorded on line ${recorded.right.line})`,
        });
      }
      return answer(recorded.right);
    });

  /** The prompt an input describes, checked and parsed as a history line, for a query that records nothing. */
  const promptOf = (input: ExplainContextInput) => {
    const checked = checkPrompt(input);
    return E.isLeft(checked) ? checked : parsePromptQuery(promptFields(input, 0));
  };

  /**
   * The environment a section is explained in: budgeted with the tokenizer it was (a recorded
   * prompt's line names it), as `fact-tracker explain --line` budgets it; else the session's.
   */
  const explainEnvOf = (tokenizer: unknown): E.Either<SessionError, TrackerEnvironment> => {
    if (tokenizer === undefined) return E.right(env);
    if (!isTokenizerName(tokenizer))
      return E.left({
        code: 'invalid_field',
        message: `tokenizer must be ${TOKENIZER_NAMES.join(' or ')}, not ${quoteValue(tokenizer)}`,
      });
    return E.mapLeft((): SessionError => ({
      code: 'invalid_input',
      message: `the section was budgeted with the tokenizer ${tokenizer}, which this session does not count with`,
    }))(counting.envOf({ line: 0, tokenizer }));
  };

  const recordedOf = ({ line, duplicate }: RecordedEvent): Recorded => ({ line, duplicate });

  /**
   * A call's boundary. Its arguments are read into plain data once first (`readInput`): what is
   * checked against the limits is then what is written, however a getter answers when asked
   * again, and one that throws is the caller's input at fault, `invalid_input`, as the tracker
   * answers it. An exception after that becomes a failure too (`boundaryFailure`: `internal`, or
   * `invalid_input` for a token counter that answered no number of tokens).
   */
  const atBoundary =
    <A extends ReadonlyArray<unknown>, T>(call: (...args: A) => Promise<E.Either<SessionError, T>>) =>
    async (...args: A): Promise<E.Either<SessionError, T>> => {
      try {
        const read = E.traverseReadonlyArrayWithIndex((i, arg: unknown) =>
          readInput(i === 0 ? 'input' : 'options', arg),
        )(args);
        if (E.isLeft(read)) return read;
        return await call(...(read.right as unknown as A));
      } catch (error) {
        return E.left(boundaryFailure(error));
      }
    };

  /** The session's calls; without `create`, they answer `unknown_session` once its log is gone. */
  const callsOf = (create: boolean): LiveSession => ({
    id,
    file,
    ingestResult: atBoundary(async (input, options?: IngestOptions) => {
      const fields = dispatchFields(input);
      if (E.isLeft(fields)) return fields;
      const given = input.at;
      const at = timeOf(given, clock);
      if (E.isLeft(at)) return at;
      const accept = checkedAccept(options, ({ recorded, at: planned }: PlannedEvent) => ({
        line: recorded.line,
        at: planned,
      }));
      if (E.isLeft(accept)) return accept;
      // Without a time, a resend gets the clock's: the same content as the task's last result is what makes it one.
      const byContent = given === undefined && !(isRecord(options) && options.byContent === false);
      return record(
        create,
        {
          fields: fields.right.line(at.right),
          timed: given !== undefined,
          ...(byContent ? { sameResult: fields.right.sameResult } : {}),
          ...(accept.right ? { accept: accept.right } : {}),
        },
        (recorded) => E.right({ ...recordedOf(recorded), ...extractionOf(recorded) }),
      );
    }),
    compileContext: atBoundary(async (input, options?: CompileOptions) => {
      const given = isRecord(input) ? input.at : undefined;
      const at = timeOf(given, clock);
      if (E.isLeft(at)) return at;
      const query = promptOf(input);
      if (E.isLeft(query)) return query;
      const section = (recorded: RecordedEvent) => ({ ...recordedOf(recorded), ...sectionOf(recorded) });
      const accept = checkedAccept(options, ({ recorded, key }: PlannedEvent) => ({ ...section(recorded), key }));
      if (E.isLeft(accept)) return accept;
      const fields = promptFields(input, at.right, counting.recorded);
      const call: EventCall = { fields, timed: given !== undefined, ...(accept.right ? { accept: accept.right } : {}) };
      return record(create, call, (recorded) => E.right(section(recorded)));
    }),
    previewContext: atBoundary(async (input) => {
      const query = promptOf(input);
      if (E.isLeft(query)) return query;
      return read(create, (current) => {
        const { sessionContext, facts } = selectSessionContext(current.tracker, query.right, env);
        return E.right({ sessionContext, facts });
      });
    }),
    explainContext: atBoundary(async (input) => {
      const query = promptOf(input);
      if (E.isLeft(query)) return query;
      const explainedEnv = explainEnvOf(isRecord(input) ? input.tokenizer : undefined);
      if (E.isLeft(explainedEnv)) return explainedEnv;
      return read(create, (current) =>
        E.right(explainRetrieval(current.tracker.store, promptQuery(current.tracker, query.right, explainedEnv.right))),
      );
    }),
    recordedPrompt: atBoundary(async (input) => {
      const query = promptOf(input);
      if (E.isLeft(query)) return query;
      return serialize(async () => {
        const caught = await catchUpTo(create);
        return E.isLeft(caught) ? caught : prompts.latest(query.right);
      });
    }),
    invalidateFact: atBoundary(async (input) => {
      const given = isRecord(input) ? input.at : undefined;
      const at = timeOf(given, clock);
      if (E.isLeft(at)) return at;
      const { subject, relation } = isRecord(input) ? input : { subject: undefined, relation: undefined };
      // Redacted before its line is written, as a prompt's text and a result are: the log holds no
      // secret. (Matching the pair is the transition's: it redacts the pair it closes, for every front door.)
      const fields = {
        type: 'invalidate',
        subject: redactSecretsIn(subject),
        relation: redactSecretsIn(relation),
        at: at.right,
      };
      return record(create, { fields, timed: given !== undefined }, (recorded) =>
        E.right({ ...recordedOf(recorded), closed: closedOf(recorded) }),
      );
    }),
    compact: atBoundary(async (input) => {
      const given = isRecord(input) ? input.at : undefined;
      const at = timeOf(given, clock);
      if (E.isLeft(at)) return at;
      const maxFacts = isRecord(input) ? input.maxFacts : undefined;
      const counted = checkCount('maxFacts', maxFacts);
      if (E.isLeft(counted)) return counted;
      const fields = { type: 'compact', maxFacts, at: at.right };
      return record(create, { fields, timed: given !== undefined }, (recorded) =>
        E.right({ ...recordedOf(recorded), report: compactionOf(recorded) ?? emptyReport() }),
      );
    }),
    snapshot: () => read(create, (current) => E.right(handedOut(current))),
    state: () => state,
    warm: async (stop = () => false) => {
      const { tracker } = state;
      try {
        for (const { taskId, prompt } of selectLatestPrompts(tracker.store, WARM_QUERIES)) {
          // One query at a time, each after a turn of the event loop that reads what has come
          // in: a call that came meanwhile goes first and ends the warm-up.
          await new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)));
          if (stop()) return;
          const query = parsePromptQuery(promptFields({ taskId, taskPrompt: prompt }, 0));
          if (E.isRight(query)) selectSessionContext(tracker, query.right, env);
        }
      } catch {
        // Only a warm-up, which answers nobody: the same query in a real call reports what failed.
      }
    },
    report: () => ({
      events: state.events,
      errors: [...state.errors],
      ...(state.errorsOmitted === 0 ? {} : { errorsOmitted: state.errorsOmitted }),
      setAside: [...setAside],
    }),
    snapshotUse: () => snapshotUse,
  });

  // Opening reads the log; a torn last line is set aside under the store's lock (a writer still
  // busy with it will have finished by then, and then there is nothing to move).
  const opened = await serialize(async () => {
    const resumed = await resume();
    if (E.isLeft(resumed)) return resumed;
    const caught = await catchUp();
    if (E.isLeft(caught)) return caught;
    if (!caught.right.exists && options.create === false) return unknownSession();
    if (!caught.right.torn) return caught;
    const repaired = await store.repair(id);
    if (E.isLeft(repaired)) return repaired;
    keepSetAside(repaired.right);
    return catchUp();
  });
  const calls = { creating: callsOf(true), existing: callsOf(false) };
  return E.map(() => (create: boolean) => (create ? calls.creating : calls.existing))(opened);
};
