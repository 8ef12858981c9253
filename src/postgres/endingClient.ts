/**
 * The driver's client as the pools a store makes use it: a connect that fails always ends, its
 * socket with it. The driver leaves two failures half done: one thrown while it starts the
 * connect (a setting the socket refuses) leaves the client counted by its pool, whose `end` then
 * waits on it forever; and one met during the TLS handshake (a client key that is no key) leaves
 * the socket open, which keeps the process alive until the server gives the handshake up.
 */
import pg from 'pg';

type ConnectCallback = (error: Error | null, client?: pg.Client) => void;

/** Ends the socket of a client whose connect failed: the server would keep its side open until its own timeout. */
const destroySocket = (client: pg.Client): void => {
  const connection = (client as { connection?: { stream?: { destroy?: () => void } } }).connection;
  connection?.stream?.destroy?.();
};

/** A `pg.Client` whose failed connect is always reported to its callback, and its socket closed. */
export class EndingClient extends pg.Client {
  override connect(): Promise<pg.Client>;
  override connect(callback: ConnectCallback): void;
  override connect(callback?: ConnectCallback): Promise<pg.Client> | void {
    if (callback === undefined)
      return new Promise((resolve, reject) => {
        this.connect((error, client) => (error === null ? resolve(client!) : reject(error)));
      });
    const ended = (error: unknown): void => {
      clearTimeout((this as { connectionTimeoutHandle?: NodeJS.Timeout }).connectionTimeoutHandle);
      destroySocket(this);
      callback(error instanceof Error ? error : new Error(String(error)));
    };
    try {
      super.connect((error: Error | null) => (error ? ended(error) : callback(null, this)));
    } catch (error) {
      // Thrown before the driver listens to its socket: reported as its other failures are, later.
      process.nextTick(() => ended(error));
    }
  }
}
