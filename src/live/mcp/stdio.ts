/** Serving the MCP server over a pair of streams (the process's standard input and output). */
import { PassThrough, type Readable, Transform, type Writable } from 'node:stream';
import {
  type JSONRPCMessage,
  parseJSONRPCMessage,
  serializeMessage,
  SUBSCRIPTION_ID_META_KEY,
} from '@modelcontextprotocol/server';
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import * as E from 'fp-ts/lib/Either.js';
import type { z } from 'zod';
import { MAX_MESSAGE_BYTES } from '../session/limits.js';
import { internalFailure } from '../../base/failure.js';
import { parseJson } from '../../base/json.js';
import { isRecord } from '../../base/record.js';
import { drained } from '../../node/drain.js';
import { describeIssue } from '../../base/schema.js';
import { clipEnd, collapseWhitespace } from '../../base/text.js';
import { createSessionPool, latestSession, type SessionPool, warmSessionPool } from '../session/pool.js';
import { createFactTrackerMcpServer, type FactTrackerMcpOptions } from './server.js';

export { MAX_MESSAGE_BYTES };

/** How long a server may spend on its latest session before it reads its first message. */
const PREPARE_MS = 1_000;
/** When a latest session that needs a long replay is opened, if the handshake has not ended by then. */
const SLOW_OPEN_AFTER_MS = 2_000;

/** What ends a line. */
const NEWLINE = Buffer.from('\n');

/** The byte order mark of UTF-8, which a Windows pipe may write before the first message. */
const BYTE_ORDER_MARK = Buffer.from('\uFEFF');

/** `line` without the byte order mark it starts with, if it does. */
const withoutMark = (line: Buffer): Buffer =>
  line.subarray(0, BYTE_ORDER_MARK.length).equals(BYTE_ORDER_MARK) ? line.subarray(BYTE_ORDER_MARK.length) : line;

/** Why the server stopped reading: a message over `MAX_MESSAGE_BYTES`. */
export class MessageTooLargeError extends Error {
  readonly code = 'message_too_large';
}

/** An error response as JSON-RPC 2.0 writes one, on one line. */
const errorResponse = (id: string | number | null, code: number, message: string): string =>
  `${JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } })}\n`;

/** What the server answers a line that is not JSON, as JSON-RPC 2.0 says: a parse error, with no id. */
export const parseErrorResponse = (reason: string): string => errorResponse(null, -32700, `Parse error: ${reason}`);

/** What the server answers JSON that is no JSON-RPC message: an invalid request, with its id when it has a usable one. */
const invalidRequestResponse = (id: string | number | null, reason: string): string =>
  errorResponse(id, -32600, `Invalid Request: ${reason}`);

/** An id a response can carry back: a string or an integer. */
const isRequestId = (id: unknown): id is string | number =>
  typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id));

/** The longest reason an invalid request error gives: a hostile key must not make a huge answer. */
const MAX_REASON_LENGTH = 200;

/**
 * The branch of the SDK's message schema (a union: request, notification, result, error) that
 * `message` means to be, by its members: the one whose issues say what is wrong with it.
 */
const branchOf = (message: Readonly<Record<string, unknown>>): number =>
  'method' in message ? ('id' in message ? 0 : 1) : 'error' in message ? 3 : 2;

/**
 * Why the SDK's own schema of a JSON-RPC message refuses `message`, in one line; none when it
 * takes it. The SDK drops such a message with a dump of the schema's errors on standard error,
 * and answers nothing, so a client waits forever for the answer to a request whose `_meta` is
 * not an object, whose `progressToken` is null, or that carries a member MCP does not define.
 */
const refusedBySchema = (message: Readonly<Record<string, unknown>>): string | undefined => {
  try {
    parseJSONRPCMessage(message);
    return undefined;
  } catch (error) {
    const issues = (error as { issues?: ReadonlyArray<z.core.$ZodIssue> } | null)?.issues;
    const [first] = issues ?? [];
    const issue = first?.code === 'invalid_union' ? (first.errors[branchOf(message)]?.[0] ?? first) : first;
    return clipEnd(
      collapseWhitespace(
        issue === undefined
          ? 'it is not a message as MCP defines one'
          : `it is not a message as MCP defines one: ${describeIssue([], issue)}`,
      ),
      MAX_REASON_LENGTH,
    );
  }
};

/** Why parsed JSON is not one JSON-RPC 2.0 message the server reads (a request, a notification or a response); none when it is. */
const notMessage = (value: unknown): string | undefined => {
  if (!isRecord(value)) return 'a message is one JSON object';
  if (value['jsonrpc'] !== '2.0') return 'its "jsonrpc" is not "2.0"';
  if ('id' in value && !isRequestId(value['id'])) return 'its "id" is not a string or an integer';
  if (typeof value['method'] === 'string')
    return 'params' in value && !isRecord(value['params']) ? 'its "params" is not an object' : refusedBySchema(value);
  return 'id' in value && ('result' in value || 'error' in value)
    ? refusedBySchema(value)
    : 'it has no "method", nor the "id" and "result" or "error" of a response';
};

/** Why a batch is refused: what a client that sends one can do instead. */
const BATCH_REASON = 'a batch (an array of messages) is not read: send each message on a line of its own';

/**
 * What the server answers a batch, which it does not read (MCP has none since its 2025-06-18
 * revision): an invalid request for each request in it, with its id, so that a client that sent
 * one (its 2025-03-26 revision had them) learns that each of its calls failed rather than wait
 * for their answers; a single one with a null id when the batch holds no request.
 */
const batchResponse = (batch: ReadonlyArray<unknown>): string => {
  const ids = batch.flatMap((message) =>
    isRecord(message) && typeof message['method'] === 'string' && isRequestId(message['id']) ? [message['id']] : [],
  );
  return ids.length === 0
    ? invalidRequestResponse(null, BATCH_REASON)
    : ids.map((id) => invalidRequestResponse(id, BATCH_REASON)).join('');
};

/**
 * A complete line (its newline included) as the server reads it: the message it holds, or the
 * answer to a line the server cannot read as a JSON-RPC message (a parse error for text that is
 * not JSON, an invalid request for JSON that is no message or that the SDK's message schema
 * refuses, which the SDK would drop with a dump of its schema's errors and answer nothing, one
 * for each request of a batch); neither for a blank line, which is passed on as it is.
 */
const readLine = (line: Buffer): { readonly message?: Readonly<Record<string, unknown>>; readonly answer?: string } => {
  const text = line.toString('utf8');
  if (text.trim() === '') return {};
  const parsed = parseJson(text);
  if (E.isLeft(parsed)) return { answer: parseErrorResponse(collapseWhitespace(parsed.left)) };
  const value = parsed.right;
  if (Array.isArray(value)) return { answer: batchResponse(value) };
  const reason = notMessage(value);
  if (reason === undefined) return { message: value as Readonly<Record<string, unknown>> };
  const id = isRecord(value) && isRequestId(value['id']) ? value['id'] : null;
  return { answer: invalidRequestResponse(id, reason) };
};

/**
 * Regroups a byte stream into chunks that end at a newline, and stops with a
 * `MessageTooLargeError` at a message (a line) over `limit` bytes. The SDK's read buffer copies
 * all it holds on every chunk it receives, so a message arriving in many small chunks costs time
 * quadratic in its size; as one chunk it is copied once. A line that is no JSON-RPC message is
 * not passed on (the SDK would drop it, at best without a word): `onBadLine` gets the error
 * response that answers it (`readLine`), and `onMessage` each message passed on. The next chunk
 * is read once `room` resolves (the answers have room in the output): a client that sends requests
 * or junk and reads no answer cannot fill our memory with them, as the SDK queues every answer
 * it writes. `onMessage` sees each message before it is passed on, and refuses one by returning
 * the answer to it, which goes to `onBadLine` as a bad line's does. One byte order mark at the
 * very start of the input is dropped (the hook reads its payload so too); elsewhere it is text.
 */
export const wholeLines = (
  limit = MAX_MESSAGE_BYTES,
  onBadLine: (response: string) => void = () => undefined,
  room: () => Promise<void> = () => Promise.resolve(),
  onMessage: (message: Readonly<Record<string, unknown>>) => string | undefined = () => undefined,
): Transform => {
  let held: Buffer[] = [];
  let heldBytes = 0;
  let first = true;
  /** `line` as it is read: the first without its byte order mark, whole lines being where it can be seen. */
  const read = (line: Buffer): Buffer => {
    if (!first) return line;
    first = false;
    return withoutMark(line);
  };
  /** Whether `line` (its newline included) goes on to the SDK: if not, its answer has been given. */
  const passes = (line: Buffer): boolean => {
    const { message, answer } = readLine(line);
    const refusal = answer ?? (message === undefined ? undefined : onMessage(message));
    if (refusal !== undefined) onBadLine(refusal);
    return refusal === undefined;
  };
  const tooLarge = (): MessageTooLargeError =>
    new MessageTooLargeError(
      `a JSON-RPC message over the limit of ${limit.toLocaleString('en-US')} bytes arrived; the server stops, as it cannot read it`,
    );
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      // Every line of the chunk but the last must fit, and so must what is held of the last.
      const lines: Buffer[] = [];
      let start = 0;
      for (let end = chunk.indexOf(0x0a); end !== -1; end = chunk.indexOf(0x0a, start)) {
        if (heldBytes + end - start > limit) return done(tooLarge());
        const piece = chunk.subarray(start, end + 1);
        const line = read(held.length === 0 ? piece : Buffer.concat([...held, piece]));
        held = [];
        heldBytes = 0;
        if (passes(line)) lines.push(line);
        start = end + 1;
      }
      if (heldBytes + chunk.length - start > limit) return done(tooLarge());
      if (start < chunk.length) {
        held.push(chunk.subarray(start));
        heldBytes += chunk.length - start;
      }
      if (lines.length > 0) this.push(lines.length === 1 ? lines[0] : Buffer.concat(lines));
      void room().then(() => done());
    },
    flush(done) {
      // The input ended inside a line: it is the last one, read as though its newline had come
      // (a client that writes its last message without one, then closes), else answered.
      const last = read(Buffer.concat([...held, NEWLINE]));
      held = [];
      heldBytes = 0;
      if (last.length > 1 && passes(last)) this.push(last);
      done();
    },
  });
};

/**
 * The most answers, in bytes, that wait in the server's memory for a client that does not read
 * them before the server stops reading its messages. Far past a pipe's 64 KiB: a client that
 * writes all its calls before it reads an answer (a script replaying a session) must have them
 * all read, or it would wait on its own write, and the server on it.
 */
const MAX_WAITING_ANSWER_BYTES = 16 * 1024 * 1024;

/** Resolves once the answers `output` holds for its reader are within `MAX_WAITING_ANSWER_BYTES`: at once when they are, else when it drains. */
const answersHaveRoom = (output: Writable): Promise<void> =>
  output.writableLength <= MAX_WAITING_ANSWER_BYTES ? Promise.resolve() : drained(output);

/**
 * How the transport sends a message on `output`: written at once, as the SDK's own `send` does,
 * so answers keep their order and count in what waits for the client (`answersHaveRoom`), and
 * resolved once the output has room. Every message sent while it has none waits on one shared
 * `drained`: the SDK's own puts a 'drain' and an 'error' listener on the output for each, and
 * each is removed in time linear in their number, so the 50,000 small answers a client let wait
 * (a script that writes all its calls before it reads one) kept the server busy for minutes
 * once it read them. A failed output ends the wait too; the transport reports the failure.
 */
const messageWriter = (output: Writable): ((message: JSONRPCMessage) => Promise<void>) => {
  let room: Promise<void> | undefined;
  return (message) => {
    if (output.write(serializeMessage(message))) return Promise.resolve();
    room ??= drained(output).finally(() => {
      room = undefined;
    });
    return room;
  };
};

/**
 * A warm-up, whose failure is only a cache missed: the server's boundary for work no call
 * waits for. An exception there (a bug) is told on standard error as `internal`, and the
 * server serves on.
 */
const warmInBackground = (
  pool: SessionPool,
  options: FactTrackerMcpOptions,
  warming: Parameters<typeof warmSessionPool>[2],
): Promise<unknown> =>
  warmSessionPool(pool, options, warming).catch((error: unknown) => {
    const { code, message } = internalFailure(error);
    options.onWarning?.(`${code}: warming a session: ${message}`);
  });

/**
 * Opens the session `id` and runs its latest queries before the server reads its first message:
 * the handshake, which an agent's host makes as it starts, bears that cost (docs/performance.md
 * has the figures) and the first call does not. Bounded by `PREPARE_MS`, past which the server
 * reads its messages: a session still opening then (its log held locked by a writer, say) is
 * shared with the first call that asks for it, and its queries are not run.
 */
const prepareBeforeServing = async (pool: SessionPool, options: FactTrackerMcpOptions, id: string): Promise<void> => {
  let expired = false;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    warmInBackground(pool, options, { id, stop: () => expired }),
    new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        expired = true;
        resolve();
      }, PREPARE_MS);
    }),
  ]);
  clearTimeout(timer);
};

/**
 * For a session that needs a long replay (no usable snapshot: a log of another version of the
 * package, say): `start` opens it and runs its queries until a call comes, at most once; the
 * server calls it when the handshake is over, and a timer after `SLOW_OPEN_AFTER_MS` if that
 * never comes. Opened before, its synchronous replay would hold the handshake up for seconds.
 */
const openAfterHandshake = (
  pool: SessionPool,
  options: FactTrackerMcpOptions,
  id: string,
): { readonly start: () => void; readonly cancel: () => void } => {
  let started = false;
  const start = (): void => {
    if (started) return;
    started = true;
    clearTimeout(timer);
    void warmInBackground(pool, options, { id });
  };
  const timer = setTimeout(start, SLOW_OPEN_AFTER_MS);
  return { start, cancel: () => clearTimeout(timer) };
};

/** How long a server whose input has ended still waits for the answers to the calls it read. */
const ANSWERS_AFTER_END_MS = 60_000;

/** The notification that tells a client its subscription is open, until it cancels it or the connection ends. */
const SUBSCRIPTION_ACKNOWLEDGED = 'notifications/subscriptions/acknowledged';

/** The subscription a notification's `params` are stamped with: the id of its `subscriptions/listen` request. */
const subscriptionIdOf = (params: Readonly<Record<string, unknown>>): unknown =>
  isRecord(params['_meta']) ? params['_meta'][SUBSCRIPTION_ID_META_KEY] : undefined;

/** Why a request is refused whose id is that of one read and not answered yet. */
const ID_IN_USE_REASON = 'request id already in use: its "id" is that of a request not answered yet';

/**
 * The requests read and not answered yet, by id: a client that writes its calls and closes its
 * input (a script, `printf ... | fact-tracker mcp`) gets every answer before the server stops,
 * as the SDK drops those still in flight when it closes. A request the client cancels is
 * answered by no one. A request that reuses the id of one in flight, which JSON-RPC forbids, is
 * refused (`read` returns its answer) and never reaches the SDK: with two requests under one id,
 * the first answer would count for both and the server could stop before the second (the SDK
 * runs both, and a cancellation would reach only the later one), and the client could not tell
 * which answer is which. A subscription (`subscriptions/listen`, MCP's 2026-07-28 revision) is
 * answered only when the connection ends: once acknowledged, it is not waited for, else a client
 * that closes its input with one open would hold the server up for the whole wait.
 */
const requestsInFlight = () => {
  const pending = new Set<string>();
  // The acknowledged subscriptions among `pending`: their answer is the server's end.
  const open = new Set<string>();
  let whenNone: (() => void) | undefined;
  // 1 and "1" are two ids.
  const key = (id: unknown): string => JSON.stringify(id) ?? '';
  const awaited = (): number => pending.size - open.size;
  const forget = (id: unknown): void => {
    pending.delete(key(id));
    open.delete(key(id));
    if (awaited() === 0) whenNone?.();
  };
  const opened = (id: unknown): void => {
    if (pending.has(key(id))) open.add(key(id));
    if (awaited() === 0) whenNone?.();
  };
  return {
    read: (message: Readonly<Record<string, unknown>>): string | undefined => {
      if (typeof message['method'] !== 'string') return undefined;
      const id = message['id'];
      if (isRequestId(id)) {
        if (pending.has(key(id))) return invalidRequestResponse(id, ID_IN_USE_REASON);
        pending.add(key(id));
      } else if (message['method'] === 'notifications/cancelled' && isRecord(message['params']))
        forget(message['params']['requestId']);
      return undefined;
    },
    answered: (message: unknown): void => {
      if (!isRecord(message)) return;
      if ('id' in message && !('method' in message)) forget(message['id']);
      else if (message['method'] === SUBSCRIPTION_ACKNOWLEDGED && isRecord(message['params']))
        opened(subscriptionIdOf(message['params']));
    },
    /** Resolves once every request read has its answer (a subscription, its acknowledgement), or after `ms`. */
    allAnswered: (ms: number): Promise<void> =>
      awaited() === 0
        ? Promise.resolve()
        : new Promise((resolve) => {
            const timer = setTimeout(resolve, ms);
            whenNone = () => {
              clearTimeout(timer);
              resolve();
            };
          }),
  };
};

/**
 * Serves MCP on `input` and `output` until the client closes `input` (Right), or until a message
 * over `MAX_MESSAGE_BYTES` arrives (Left, its code first): a server that stopped reading must not
 * stay alive and deaf. Either way it ends once every call it read is answered: those it read
 * before the message it could not are made all the same, and their answers must not be lost.
 */
export const serveMcp = async (
  streams: { readonly input: Readable; readonly output: Writable },
  options: FactTrackerMcpOptions,
): Promise<E.Either<string, void>> => {
  const pool = createSessionPool(options);
  // The session the agent most likely asks about first: prepared before the first message when
  // that is quick, else read once the handshake is over (see the two functions above).
  const latest = await latestSession(options);
  const later = latest === undefined || latest.quick ? undefined : openAfterHandshake(pool, options, latest.id);
  if (latest?.quick === true) await prepareBeforeServing(pool, options, latest.id);
  const inFlight = requestsInFlight();
  // A line that is not JSON gets its parse error, and the server reads on.
  const lines = wholeLines(
    MAX_MESSAGE_BYTES,
    (response) => streams.output.write(response),
    () => answersHaveRoom(streams.output),
    inFlight.read,
  );
  // The SDK closes its side as its input ends, dropping the answers still in flight: it reads
  // through a stream of its own that never ends, and is closed once they are written.
  const toSdk = new PassThrough();
  streams.input.pipe(lines).pipe(toSdk, { end: false });
  const transport = new StdioServerTransport(toSdk, streams.output, {
    // Past the bound `lines` enforces, so the SDK's own (which closes without a word) never trips first.
    maxBufferSize: 2 * MAX_MESSAGE_BYTES,
  });
  const write = messageWriter(streams.output);
  transport.send = async (message) => {
    try {
      return await write(message);
    } finally {
      inFlight.answered(message);
    }
  };
  const stopped = new Promise<E.Either<string, void>>((resolve) => {
    // Every line read, a last one without its newline too, has reached the SDK once `lines` ends.
    lines.once('end', () => resolve(E.right(undefined)));
    streams.input.once('close', () => {
      if (!streams.input.readableEnded) resolve(E.right(undefined));
    });
    lines.once('error', (error) => {
      streams.input.unpipe(lines);
      // Nothing more is read: let go of the input, so the process can end.
      streams.input.destroy();
      resolve(E.left(`${error instanceof MessageTooLargeError ? error.code : 'io'}: ${error.message}`));
    });
  });
  const handle = serveStdio(
    () => {
      const server = createFactTrackerMcpServer(options, pool);
      if (later !== undefined) server.server.oninitialized = later.start;
      return server;
    },
    {
      transport,
      // The message too large is reported once, as the reason the server stops.
      onerror: (error) => {
        if (!(error instanceof MessageTooLargeError)) options.onWarning?.(error.message);
      },
    },
  );
  const outcome = await stopped;
  await inFlight.allAnswered(ANSWERS_AFTER_END_MS);
  later?.cancel();
  await handle.close();
  return outcome;
};
