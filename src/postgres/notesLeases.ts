/**
 * The notes store's leases on PostgreSQL: one call of the schema's `notes_lease` function, which
 * locks the (user, session)'s lease row, updates its queue and decides the lease in one
 * statement, by the server's clock, so trackers on machines whose clocks differ still agree on
 * when a lease expires.
 */
import * as E from 'fp-ts/lib/Either.js';
import type pg from 'pg';
import { parseLeaseRequest } from '../notes/leaseRequest.js';
import type { LeaseAnswer, NotesLeases, QueuedItem } from '../notes/leases.js';
import { wellFormed } from '../base/text.js';
import { type NotesStoreFailure, storeFailure } from '../notes/store.js';
import { unstorableId } from './keptText.js';
import { type Database, sqlSchema, statementName } from './database.js';

interface LeaseRow {
  readonly held: boolean;
  readonly expires_in_ms: number | null;
  readonly added: ReadonlyArray<string>;
  readonly head: string | null;
  readonly fence: string | null;
  readonly queue: ReadonlyArray<{
    seq: number;
    kind: 'message' | 'stage';
    text: string | null;
    at: number | null;
    origin: string;
  }>;
}

/** PostgreSQL text holds no NUL: a message keeps its place and length with U+FFFD there (a prompt collapses control characters anyway). */
const storable = (text: string | undefined): string | null =>
  text === undefined ? null : wellFormed(text.replaceAll('\u0000', '\uFFFD'));

const item = ({ seq, kind, text, at, origin }: LeaseRow['queue'][number]): QueuedItem => ({
  seq: Number(seq),
  kind,
  ...(text === null ? {} : { text }),
  ...(at === null ? {} : { at }),
  origin,
});

/** The leases of the store on `db`; `call` checks the ids, readies the schema and runs the work once. */
export const postgresLeases = (
  db: Database,
  call: <T>(
    ids: ReadonlyArray<string>,
    work: (client: pg.PoolClient) => Promise<T>,
  ) => Promise<E.Either<NotesStoreFailure, T>>,
): NotesLeases => {
  const statement = {
    name: statementName('notes_lease', db.schema),
    text: `SELECT held, expires_in_ms, added, head, queue, fence FROM ${sqlSchema(db.schema)}.notes_lease($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
  };
  return {
    lease: async (user, session, given) => {
      const parsed = parseLeaseRequest(user, session, given, unstorableId);
      if (E.isLeft(parsed)) return E.left(storeFailure('invalid_input', `the lease call was refused: ${parsed.left}`));
      const request = parsed.right;
      const add = request.add ?? [];
      const answered = await call([user, session, request.holder], async (client) => {
        const { rows } = await client.query<LeaseRow>({
          ...statement,
          values: [
            user,
            session,
            request.holder,
            request.ttlMs,
            request.done ?? null,
            add.map((entry) => entry.kind),
            add.map((entry) => storable(entry.text)),
            add.map((entry) => entry.at ?? null),
            add.map((entry) => entry.key ?? null),
          ],
        });
        return rows[0]!;
      });
      return E.map((row: LeaseRow): LeaseAnswer => ({
        held: row.held,
        added: row.added.map(Number),
        ...(row.head === null ? {} : { head: Number(row.head) }),
        queue: row.queue.map(item),
        ...(row.expires_in_ms === null ? {} : { expiresInMs: Math.max(0, row.expires_in_ms) }),
        ...(row.held && row.fence !== null ? { fence: Number(row.fence) } : {}),
      }))(answered);
    },
  };
};
