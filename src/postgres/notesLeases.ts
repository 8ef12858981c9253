/**
 * The notes store's leases on PostgreSQL: one call of the schema's `notes_lease` function, which
 * locks the (user, session)'s lease row, updates its queue and decides the lease in one
 * statement, by the server's clock, so trackers on machines whose clocks differ still agree on
 * when a lease expires.
 */
import * as E from 'fp-ts/lib/Either.js';
import type pg from 'pg';
import type { LeaseAnswer, NotesLeases, QueuedItem } from '../notes/leases.js';
import { wellFormed } from '../base/text.js';
import { type NotesStoreFailure, storeFailure } from '../notes/store.js';
import { kindOf } from '../base/describe.js';
import { isRecord } from '../base/record.js';
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

/** Why `request` is no lease request the store can carry out (a caller's of the wrong kind), or undefined. */
const malformedLease = (request: unknown): string | undefined => {
  if (!isRecord(request)) return `the request is ${kindOf(request)}, not an object`;
  const { holder, ttlMs, add, done } = request;
  if (typeof holder !== 'string') return `the holder is ${kindOf(holder)}, not text`;
  if (typeof ttlMs !== 'number' || !(ttlMs > 0) || !Number.isFinite(ttlMs))
    return `ttlMs is ${kindOf(ttlMs)}, not a number of milliseconds above 0`;
  if (done !== undefined && !Number.isSafeInteger(done)) return `done is ${kindOf(done)}, not a whole number`;
  if (add === undefined) return undefined;
  if (!Array.isArray(add)) return `add is ${kindOf(add)}, not a list`;
  for (const [index, entry] of Array.from(add as unknown[]).entries()) {
    if (!isRecord(entry)) return `item ${index + 1} is ${kindOf(entry)}, not an item`;
    const { kind, text, at, key } = entry;
    if (kind !== 'message' && kind !== 'stage')
      return `item ${index + 1} is of kind ${kindOf(kind)}, not message or stage`;
    if (text !== undefined && typeof text !== 'string')
      return `the text of item ${index + 1} is ${kindOf(text)}, not text`;
    if (at !== undefined && (typeof at !== 'number' || !Number.isFinite(at)))
      return `the time of item ${index + 1} is ${kindOf(at)}, not epoch milliseconds`;
    if (key !== undefined && (typeof key !== 'string' || unstorableId(key) !== undefined))
      return `the key of item ${index + 1} is ${typeof key === 'string' ? `text that ${unstorableId(key)}` : kindOf(key)}`;
  }
  return undefined;
};

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
    lease: async (user, session, request) => {
      const malformed = malformedLease(request);
      if (malformed !== undefined)
        return E.left(storeFailure('invalid_input', `the lease call was refused: ${malformed}`));
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
