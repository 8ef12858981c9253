/** Serving the MCP server over a pair of streams (the process's standard input and output). */
import { type Readable, Transform, type Writable } from 'node:stream';
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import * as E from 'fp-ts/lib/Either.js';
import { MAX_MESSAGE_BYTES } from '../session/limits.js';
import {
  createFactTrackerMcpServer,
  createSessionPool,
  type FactTrackerMcpOptions,
  latestSession,
  warmSessionPool,
} from './server.js';

export { MAX_MESSAGE_BYTES };

/** How long a server may spend on its latest session before it reads its first message. */
const PREPARE_MS = 1_000;
/** When a latest session that needs a long replay is opened, if the handshake has not ended by then. */
const SLOW_OPEN_AFTER_MS = 2_000;

/** Why the server stopped reading: a message over `MAX_MESSAGE_BYTES`. */
export class MessageTooLargeError extends Error {
  readonly code = 'message_too_large';
}

/**
 * Regroups a byte stream into chunks that end at a newline, and stops with a
 * `MessageTooLargeError` at a message (a line) over `limit` bytes. The SDK's read buffer copies
 * all it holds on every chunk it receives, so a message arriving in many small chunks costs time
 * quadratic in its size (seconds for a 10 MB message); as one chunk it is copied once.
 */
export const wholeLines = (limit = MAX_MESSAGE_BYTES): Transform => {
  let held: Buffer[] = [];
  let heldBytes = 0;
  const tooLarge = (): MessageTooLargeError =>
    new MessageTooLargeError(
      `a JSON-RPC message over the limit of ${limit.toLocaleString('en-US')} bytes arrived; the server stops, as it cannot read it`,
    );
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      // Every line of the chunk but the last must fit, and so must what is held of the last.
      let start = 0;
      for (let end = chunk.indexOf(0x0a); end !== -1; end = chunk.indexOf(0x0a, start)) {
        if (heldBytes + end - start > limit) return done(tooLarge());
        heldBytes = 0;
        start = end + 1;
      }
      if (heldBytes + chunk.length - start > limit) return done(tooLarge());
      const end = chunk.lastIndexOf(0x0a);
      if (end === -1) held.push(chunk);
      else {
        this.push(Buffer.concat([...held, chunk.subarray(0, end + 1)]));
        held = end + 1 < chunk.length ? [chunk.subarray(end + 1)] : [];
      }
      heldBytes += chunk.length - start;
      done();
    },
    flush(done) {
      if (held.length > 0) this.push(Buffer.concat(held));
      done();
    },
  });
};

/**
 * Serves MCP on `input` and `output` until the client closes `input` (Right), or until a
 * message over `MAX_MESSAGE_BYTES` arrives (Left, its code first): a server that stopped
 * reading must not stay alive and deaf.
 */
export const serveMcp = async (
  streams: { readonly input: Readable; readonly output: Writable },
  options: FactTrackerMcpOptions,
): Promise<E.Either<string, void>> => {
  const pool = createSessionPool(options);
  // The session the agent most likely asks about first is read, and its latest queries run,
  // before the first message is read, when that is quick (its snapshot usable, little log
  // after it): the handshake, which an agent's host makes as it starts, bears that cost (150 to
  // 210 ms at 3,000 dispatches) and the first call does not. Bounded in time: past the bound
  // the server reads its messages, and a session still opening (its log held locked by a
  // writer, say) is shared with the first call that asks for it. A session that needs a long
  // replay (no usable snapshot: a log from another version of the package, say) is read once
  // the handshake is over (or `SLOW_OPEN_AFTER_MS` after the start, whichever comes first), so
  // the handshake is never held up for seconds and a call made later finds it open.
  const latest = await latestSession(options);
  let startSlowOpen = (): void => undefined;
  let slowOpenTimer: NodeJS.Timeout | undefined;
  if (latest?.quick === true) {
    let expired = false;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      warmSessionPool(pool, options, () => expired, latest.id),
      new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          expired = true;
          resolve();
        }, PREPARE_MS);
      }),
    ]);
    clearTimeout(timer);
  } else if (latest !== undefined) {
    let started = false;
    startSlowOpen = () => {
      if (started) return;
      started = true;
      clearTimeout(slowOpenTimer);
      void warmSessionPool(pool, options, undefined, latest.id);
    };
    slowOpenTimer = setTimeout(startSlowOpen, SLOW_OPEN_AFTER_MS);
  }
  const lines = wholeLines();
  const transport = new StdioServerTransport(streams.input.pipe(lines), streams.output, {
    // Past the bound `lines` enforces, so the SDK's own (which closes without a word) never trips first.
    maxBufferSize: 2 * MAX_MESSAGE_BYTES,
  });
  const stopped = new Promise<E.Either<string, void>>((resolve) => {
    streams.input.once('end', () => resolve(E.right(undefined)));
    streams.input.once('close', () => resolve(E.right(undefined)));
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
      server.server.oninitialized = startSlowOpen;
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
  clearTimeout(slowOpenTimer);
  await handle.close();
  return outcome;
};
