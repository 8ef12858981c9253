/**
 * Once for the whole run: a folder where the PostgreSQL test servers share the data folder the
 * first of them makes (see postgres/localServer.ts), removed when the run ends. Nothing is made
 * in it unless a PostgreSQL test runs.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEMPLATE_FOLDER_VARIABLE } from './postgres/localServer.js';

export default function setup(): () => void {
  const folder = mkdtempSync(join(tmpdir(), 'fact-tracker-pg-run-'));
  // The server's user makes its data folder in here.
  chmodSync(folder, 0o755);
  process.env[TEMPLATE_FOLDER_VARIABLE] = folder;
  // Node reads and parses every certificate of this file at the start of each process (some 40 ms
  // of CPU for a system bundle), and the suite starts hundreds of node processes that make no TLS
  // connection but to the test servers, whose certificates the tests hand over themselves.
  delete process.env['NODE_EXTRA_CA_CERTS'];
  return () => rmSync(folder, { recursive: true, force: true });
}
