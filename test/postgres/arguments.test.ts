/**
 * The PostgreSQL entry point given an argument that is not of its kind (null from an unset
 * variable, a number): the stores and `migrate` never throw at their caller and answer as for
 * a store of no valid address (`store_url`), options read null as none, and the URL predicate
 * names a text that is none. No server is needed: nothing is reached.
 */
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import {
  isPostgresUrl,
  migrate,
  parsePostgresUrl,
  postgresNotesStore,
  postgresSessionStore,
  schemaSql,
  schemaVersion,
} from '../../src/postgres/index.js';

const NO_ADDRESS = (kind: string) =>
  E.left({
    code: 'store_url',
    message: `a PostgreSQL store is given a URL (postgres://...) or a pg.Pool, not ${kind}`,
  });

describe('arguments that are not of their kind', () => {
  it('migrate, schemaVersion and the stores answer a store_url Left for an address that is neither a URL nor a pool', async () => {
    expect(await migrate(null as never)).toEqual(NO_ADDRESS('null'));
    expect(await schemaVersion(42 as never)).toEqual(NO_ADDRESS('a number'));
    expect(await migrate({} as never)).toEqual(NO_ADDRESS('an object without connect'));
    const sessions = postgresSessionStore(null as never);
    expect(sessions.location).toBe('PostgreSQL (no valid address)');
    expect(await sessions.list()).toEqual(NO_ADDRESS('null'));
    const notes = postgresNotesStore(42 as never, null as never);
    expect(notes.location).toBe('PostgreSQL (no valid address)');
    expect(await notes.load('maya', 's1')).toEqual(
      E.left({
        code: 'unavailable',
        message: 'store_url: a PostgreSQL store is given a URL (postgres://...) or a pg.Pool, not a number',
      }),
    );
  });

  it('options that are none read as none', async () => {
    expect(schemaSql(null as never)).toBe(schemaSql());
    expect(postgresSessionStore('postgres://u@127.0.0.1:1/db', null as never).location).toBe(
      'postgres://u@127.0.0.1:1/db',
    );
  });

  it('a schema option that is not a string is answered store_url by the stores, migrate and schemaVersion, never thrown', async () => {
    const url = 'postgres://u@127.0.0.1:1/db';
    for (const schema of [5, {}, ['x'], true]) {
      const options = { schema } as never;
      const message = `the schema name is ${Array.isArray(schema) ? 'an array' : typeof schema === 'object' ? 'an object' : `a ${typeof schema}`}, not a string`;
      expect(await postgresSessionStore(url, options).list()).toEqual(E.left({ code: 'store_url', message }));
      expect(await postgresNotesStore(url, options).load('maya', 's1')).toEqual(
        E.left({ code: 'unavailable', message: `store_url: ${message}` }),
      );
      expect(await migrate(url, options)).toEqual(E.left({ code: 'store_url', message }));
      expect(await schemaVersion(url, options)).toEqual(E.left({ code: 'store_url', message }));
    }
  });

  it('schemaSql refuses with a TypeError a schema name the stores refuse, so none is written into the script', () => {
    for (const schema of ['x\nDROP TABLE users; --', "x' || pg_sleep(1) || '", 'Upper', 'pg_own', 5, {}]) {
      expect(() => schemaSql({ schema } as never)).toThrow(
        expect.objectContaining({ name: 'TypeError', message: expect.stringMatching(/^the schema name /u) as unknown }),
      );
    }
    expect(schemaSql({ schema: 'team_facts' })).toMatch(/^-- session-fact-tracker: the schema team_facts, /u);
  });

  it('the URL predicate names a text that is none, and the parser refuses it as no URL', () => {
    expect(() => isPostgresUrl(null as never)).toThrow(
      expect.objectContaining({ name: 'TypeError', message: 'the text is null, not a string' }),
    );
    expect(parsePostgresUrl(42 as never)).toEqual(
      E.left({
        code: 'store_url',
        message: 'a PostgreSQL store is named by a URL of the form postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE',
      }),
    );
  });
});
