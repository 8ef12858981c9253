/** Serving the MCP server over a pair of streams (the process's standard input and output). */
import { type Readable, Transform, type Writable } from 'node:stream';
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { createFactTrackerMcpServer, createSessionPool, type FactTrackerMcpOptions } from './server.js';

/**
 * The largest message read, in bytes. The SDK's default (10 MB) closes the connection on a
 * larger one; a 10 MB agent output must instead reach `ingest_result`, which refuses it cleanly.
 */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/**
 * Regroups a byte stream into chunks that end at a newline. The SDK's read buffer copies all it
 * holds on every chunk it receives, so a message arriving in many small chunks costs time
 * quadratic in its size (seconds for a 10 MB message); as one chunk it is copied once.
 */
export const wholeLines = (): Transform => {
  let held: Buffer[] = [];
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const end = chunk.lastIndexOf(0x0a);
      if (end === -1) held.push(chunk);
      else {
        this.push(Buffer.concat([...held, chunk.subarray(0, end + 1)]));
        held = end + 1 < chunk.length ? [chunk.subarray(end + 1)] : [];
      }
      done();
    },
    flush(done) {
      if (held.length > 0) this.push(Buffer.concat(held));
      done();
    },
  });
};

/** Serves MCP on `input` and `output` until the client closes `input`. */
export const serveMcp = async (
  streams: { readonly input: Readable; readonly output: Writable },
  options: FactTrackerMcpOptions,
): Promise<void> => {
  const pool = createSessionPool(options);
  const transport = new StdioServerTransport(streams.input.pipe(wholeLines()), streams.output, {
    maxBufferSize: MAX_MESSAGE_BYTES,
  });
  const closed = new Promise<void>((resolve) => {
    streams.input.once('end', resolve);
    streams.input.once('close', resolve);
  });
  const handle = serveStdio(() => createFactTrackerMcpServer(options, pool), {
    transport,
    onerror: (error) => options.onWarning?.(error.message),
  });
  await closed;
  await handle.close();
};
