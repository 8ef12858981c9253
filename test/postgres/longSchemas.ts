/**
 * Two stores on schemas of 60 characters that begin alike, through one pool of the caller with
 * one connection: what PostgreSQL keys prepared statements by (their first 63 bytes) would make
 * their statements collide. Runs `exercise` on them, then checks every prepared statement's name
 * is one PostgreSQL keeps whole and that the driver never warned of a longer one.
 */
import pg from 'pg';
import { expect, vi } from 'vitest';

export const onOnePoolOfLongSchemas = async <S extends { close(): Promise<void> }>(
  url: string,
  open: (pool: pg.Pool, schema: string) => S,
  exercise: (stores: ReadonlyArray<S>) => Promise<void>,
): Promise<void> => {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  pool.on('error', () => undefined);
  // The driver says so on the console when a name is longer than PostgreSQL keeps.
  const warned: string[] = [];
  const warn = vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void warned.push(args.join(' ')));
  const schemas = ['alpha', 'betaa'].map((end) => `team_${'x'.repeat(49)}_${end}`);
  expect(schemas.map((schema) => schema.length)).toEqual([60, 60]);
  const stores = schemas.map((schema) => open(pool, schema));
  try {
    await exercise(stores);
    const { rows } = await pool.query<{ name: string }>('SELECT name FROM pg_prepared_statements');
    expect(rows.length).toBeGreaterThan(0);
    for (const { name } of rows) expect(Buffer.byteLength(name)).toBeLessThan(63);
    expect(warned.filter((message) => /63 characters/u.test(message))).toEqual([]);
  } finally {
    warn.mockRestore();
    await Promise.all(stores.map((store) => store.close()));
    await pool.end();
  }
};
