/**
 * The driver's client as the pools a store makes use it: a connect that fails always ends, its
 * socket with it. The driver leaves two failures half done: one thrown while it starts the
 * connect (a setting the socket refuses) leaves the client counted by its pool, whose `end` then
 * waits on it forever; and one met during the TLS handshake (a client key that is no key) leaves
 * the socket open, which keeps the process alive until the server gives the handshake up.
 * It also looks a password up in the password file (`~/.pgpass`) itself, as the driver would.
 */
import pg from 'pg';
import pgpass, { type PasswordFileTarget } from 'pgpass';

type ConnectCallback = (error: Error | null, client?: pg.Client) => void;

/** Ends the socket of a client whose connect failed: the server would keep its side open until its own timeout. */
const destroySocket = (client: pg.Client): void => {
  const connection = (client as { connection?: { stream?: { destroy?: () => void } } }).connection;
  connection?.stream?.destroy?.();
};

/** The password the password file (`PGPASSFILE`, else `~/.pgpass`) gives the connection `target`, or undefined. */
const passwordFileEntry = (target: PasswordFileTarget): Promise<string | undefined> =>
  new Promise((resolve) => pgpass(target, resolve));

/**
 * A `pg.Client` whose failed connect is always reported to its callback, and its socket closed;
 * and that reads the password file when neither the URL nor `PGPASSWORD` gives a password.
 */
export class EndingClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super(config);
    // The driver's own lookup prints a DeprecationWarning (pg 8.x) on every process that uses it,
    // the hook's and the MCP server's included, about code the user cannot change; a password
    // given as a function is the lookup it asks for instead, made with the same module.
    const client = this as { password?: unknown };
    if (client.password === null || client.password === undefined) client.password = passwordFileEntry;
  }

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
