/**
 * An administrator's transaction left open on rows of the stores (`SELECT ... FOR UPDATE` by
 * hand), for the tests of what a store does while a row it writes stays locked.
 */
import * as E from 'fp-ts/lib/Either.js';
import pg from 'pg';

/** What a test may ask while the rows are locked. */
export interface LockedRows {
  /** How many backends of the stores (by their application_name, or `application`) wait on a lock now. */
  readonly waitingBackends: (application?: string) => Promise<number>;
}

/** Locks the rows each of `selects` reads, runs `work`, then rolls the transaction back. */
export const withRowsLocked = async <T>(
  url: string,
  selects: ReadonlyArray<string>,
  work: (locked: LockedRows) => Promise<T>,
): Promise<T> => {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query('BEGIN');
    for (const select of selects) await admin.query(`${select} FOR UPDATE`);
    return await work({
      waitingBackends: async (application = 'session-fact-tracker') => {
        const { rows } = await admin.query<{ waiting: number }>(
          `SELECT count(*)::int AS waiting FROM pg_stat_activity
            WHERE application_name = $1 AND wait_event_type = 'Lock'`,
          [application],
        );
        return rows[0]?.waiting ?? 0;
      },
    });
  } finally {
    await admin.query('ROLLBACK').catch(() => undefined);
    await admin.end();
  }
};

/**
 * Runs `call` until it answers Right, at most `tries` times. A store bounded by a short
 * `queryTimeoutMs` makes its first statements (the schema's check, a first connection) before a
 * test locks rows, and a loaded machine may make one of them outlast the bound: what the test
 * checks is the locked call, not those.
 */
export const untilRight = async <L, R>(
  call: () => E.Either<L, R> | PromiseLike<E.Either<L, R>>,
  tries = 20,
): Promise<E.Either<L, R>> => {
  let answer = await call();
  for (let left = tries - 1; E.isLeft(answer) && left > 0; left -= 1) answer = await call();
  return answer;
};
