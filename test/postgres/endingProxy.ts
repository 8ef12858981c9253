/**
 * A TCP proxy in front of a test server that can have a connection ended by the server the
 * moment it is made: the backend is terminated (`pg_terminate_backend`) as it says it is ready,
 * and its ReadyForQuery and the FATAL error of its end reach the client in one chunk, as they do
 * when a server ends a connection just made (a restart, an administrator ending a role's
 * connections) and the client reads both at once.
 */
import { type AddressInfo, createServer, Socket } from 'node:net';
import type { TestServer } from './localServer.js';

/** A running proxy. */
export interface EndingProxy {
  /** `url` (of the server) through the proxy. */
  readonly through: (url: string) => string;
  /** The backend process ids of the connections made through the proxy so far. */
  readonly pids: () => ReadonlyArray<number>;
  /** Has the next connection made through the proxy ended by the server as soon as it is ready. */
  readonly endNext: () => void;
  /** The backend process ids of the connections the server ended so. */
  readonly ended: () => ReadonlyArray<number>;
  readonly close: () => Promise<void>;
}

/** The header of a message from the server: its type, and its length with the type's byte. */
const HEADER_BYTES = 5;

export const startEndingProxy = async (server: TestServer): Promise<EndingProxy> => {
  const pids: number[] = [];
  const ended: number[] = [];
  let toEnd = 0;
  const sockets = new Set<Socket>();
  const proxy = createServer((client) => {
    const backend = new Socket();
    backend.connect(server.port, '127.0.0.1');
    for (const socket of [client, backend]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        sockets.delete(socket);
        client.destroy();
        backend.destroy();
      });
    }
    client.pipe(backend);
    const ending = toEnd > 0;
    if (ending) toEnd -= 1;
    // The messages of the startup are read one by one, until the first ReadyForQuery.
    let state: 'startup' | 'ending' | 'through' = 'startup';
    let held = Buffer.alloc(0);
    backend.on('data', (chunk: Buffer) => {
      if (state === 'through') return void client.write(chunk);
      held = Buffer.concat([held, chunk]);
      // What the server said when it ended the backend goes out with the ReadyForQuery held.
      if (state === 'ending') {
        state = 'through';
        return void client.write(held);
      }
      let at = 0;
      while (state === 'startup' && at + HEADER_BYTES <= held.length) {
        const type = String.fromCharCode(held[at]!);
        const length = held.readInt32BE(at + 1);
        if (at + 1 + length > held.length) break;
        if (type === 'K') pids.push(held.readInt32BE(at + HEADER_BYTES));
        if (type === 'Z') {
          if (ending) {
            state = 'ending';
            ended.push(pids.at(-1)!);
            void server.admin('SELECT pg_terminate_backend($1)', [pids.at(-1)]);
            break;
          }
          state = 'through';
          at = held.length;
          break;
        }
        at += 1 + length;
      }
      client.write(held.subarray(0, at));
      held = held.subarray(at);
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const { port } = proxy.address() as AddressInfo;
  return {
    through: (url) => url.replace(`@127.0.0.1:${server.port}/`, `@127.0.0.1:${port}/`),
    pids: () => [...pids],
    endNext: () => {
      toEnd += 1;
    },
    ended: () => [...ended],
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => proxy.close(resolve));
    },
  };
};
