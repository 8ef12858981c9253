/**
 * The PostgreSQL server of one test file: started before its first test, stopped and removed
 * after its last (see localServer.ts). Where no server can be had, the file's Postgres tests
 * say why in one line and are skipped; the rest of the suite runs.
 */
import { afterAll, beforeAll } from 'vitest';
import { postgresUnavailable, type ServerOptions, startPostgresServer, type TestServer } from './localServer.js';

export { PASSWORD, postgresUnavailable, type TestServer } from './localServer.js';

if (postgresUnavailable !== undefined) console.warn(`PostgreSQL tests skipped: ${postgresUnavailable}`);

/**
 * A server for the test file that calls it: started before its first test, stopped after its
 * last. Use it inside `describe.skipIf(postgresUnavailable !== undefined)`.
 */
export const usePostgres = (options: ServerOptions = {}): { readonly server: () => TestServer } => {
  let server: TestServer | undefined;
  beforeAll(async () => {
    if (postgresUnavailable === undefined) server = await startPostgresServer(options);
  }, 120_000);
  afterAll(() => server?.stop());
  return {
    server: () => {
      if (server === undefined) throw new Error('the PostgreSQL test server is not running');
      return server;
    },
  };
};
