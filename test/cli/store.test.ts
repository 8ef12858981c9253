/** Naming the store: a mistyped PostgreSQL address holding a password is never taken for a folder, and a folder of an odd name still is. */
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { chooseStore, holdsPassword } from '../../src/cli/store.js';

const choose = (store: string) => chooseStore({ store }, undefined);

describe('chooseStore on addresses and folders', () => {
  it('refuses text holding USER:PASSWORD@HOST or a password= anywhere, quoted or not, never repeating it', () => {
    for (const store of [
      '//u:pw-S3cret@db.example/facts',
      '://u:pw-S3cret@db.example/facts',
      'postgres//u:pw-S3cret@db.example/facts',
      'postgres;//u:pw-S3cret@db.example/facts',
      "'postgres://u:pw-S3cret@db.example/facts'",
      '"postgres://u@db.example/facts"',
      'u:p/w-S3cret@db.example/facts',
      'dbname=facts password=pw-S3cret',
      'Password=pw-S3cret Host=db',
      'host=db dbname=facts',
      'a:b@c',
    ]) {
      const chosen = choose(store);
      expect([store, E.isLeft(chosen)]).toEqual([store, true]);
      if (E.isLeft(chosen)) {
        expect(chosen.left.message).toMatch(/^--store (?:is|holds) /u);
        expect(chosen.left.message).not.toContain('S3cret');
      }
      expect(chooseStore({}, { FACT_TRACKER_STORE: store })._tag).toBe('Left');
    }
    expect(E.isLeft(choose('team:dev@2024')) ? choose('team:dev@2024') : undefined).toMatchObject({
      left: { message: expect.stringContaining('./NAME') as unknown },
    });
  });

  it('takes for a folder a name with no password in it, and any name given as a path', () => {
    for (const store of [
      'host=foo',
      '/srv/my port=5432',
      'sessions options=x',
      'notes/user=alice',
      'postgres',
      'me@host',
      'u:@host',
      './a:b@c',
      './team:dev@2024',
      '/srv/a:b@c',
      '../x/postgres:x',
      'C:/Users/me:x@y',
    ])
      expect([store, choose(store)]).toEqual([store, E.right({ kind: 'folder', directory: store, from: 'option' })]);
  });

  it('refuses as --sessions-dir a PostgreSQL URL, and what --store refuses as a mistyped address, never repeating it; takes a folder', () => {
    for (const sessionsDir of [
      'postgres://user:pw-S3cret@db.example/facts',
      'postgresql://user@db.example/facts',
      'user:pw-S3cret@db.example/facts',
      'postgres:/user:pw-S3cret@db.example/facts',
      'dbname=facts password=pw-S3cret',
    ]) {
      const chosen = chooseStore({ sessionsDir }, undefined);
      expect([sessionsDir, E.isLeft(chosen) && chosen.left.code]).toEqual([sessionsDir, 'store_url']);
      expect(E.isLeft(chosen) && chosen.left.message).toMatch(/^--sessions-dir /u);
      expect(E.isLeft(chosen) && chosen.left.message).not.toContain('S3cret');
    }
    for (const sessionsDir of ['logs/sessions', './a:b@c', '/srv/postgres:x'])
      expect(chooseStore({ sessionsDir }, undefined)).toEqual(
        E.right({ kind: 'folder', directory: sessionsDir, from: 'option' }),
      );
  });

  it("says which stores hold a password: a URL's, or one of a mistyped address", () => {
    for (const store of [
      'postgres://app:pw@db/facts',
      'postgres:/app:pw@db/facts',
      '//app:pw@db/facts',
      'host=db password=pw dbname=facts',
      "'postgres://app:pw@db/facts'",
      'postgres://app@db/facts?Password=pw',
    ])
      expect([store, holdsPassword(store)]).toEqual([store, true]);
    for (const store of ['postgres://app@db/facts', 'host=db dbname=facts', '/srv/a:b@c', './facts', 'team-logs'])
      expect([store, holdsPassword(store)]).toEqual([store, false]);
  });
});
