/**
 * The conformance suite of the session store port: what every adapter must do, run on each of
 * them (the files, memory, PostgreSQL). `open` gives a store over some storage; `reopen` another
 * handle on the same storage (another process's view of it), so what one appends the other reads.
 */
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import type {
  SessionStore,
  SessionStoreError,
  SnapshotFailure,
  StoredSnapshot,
  TailRead,
} from '../../../src/live/session/store.js';

/** An adapter under test: a fresh storage, and a second handle on it. */
export interface StoreUnderTest {
  readonly store: SessionStore;
  readonly reopen: () => SessionStore;
}

const right = <T>(either: E.Either<SessionStoreError | SnapshotFailure, T>): T => {
  if (E.isLeft(either)) throw new Error(either.left.message);
  return either.right;
};

const codeOf = <T>(either: E.Either<SessionStoreError, T>): string | undefined =>
  E.isLeft(either) ? either.left.code : undefined;

const line = (n: number, extra = ''): string => JSON.stringify({ type: 'compact', maxFacts: n, at: n, extra });

const texts = (read: TailRead): string[] => read.lines.map((entry) => entry.text);

/** Runs the conformance suite against the adapter `make` creates, once per test. */
export const describeSessionStore = (name: string, make: () => Promise<StoreUnderTest> | StoreUnderTest): void => {
  describe(`the session store port: ${name}`, () => {
    it('reads a session that does not exist as empty, and lists no session', async () => {
      const { store } = await make();
      expect(right(await store.read('absent', 0))).toEqual({
        exists: false,
        restarted: false,
        lines: [],
        position: 0,
        torn: false,
      });
      expect(right(await store.list())).toEqual([]);
      expect(right(await store.readSnapshot('absent'))).toBeUndefined();
      await store.close();
    });

    it('appends after the expected line, numbers lines from 1, and reads only what follows a position', async () => {
      const { store } = await make();
      expect(right(await store.append('s', 0, [line(1), line(2)])).position).toBe(2);
      expect(right(await store.append('s', 2, [line(3)])).position).toBe(3);
      const all = right(await store.read('s', 0));
      expect(all.exists).toBe(true);
      expect(all.position).toBe(3);
      expect(all.lines).toEqual([
        { line: 1, text: line(1) },
        { line: 2, text: line(2) },
        { line: 3, text: line(3) },
      ]);
      expect(texts(right(await store.read('s', 2)))).toEqual([line(3)]);
      expect(right(await store.read('s', 3)).lines).toEqual([]);
      expect(right(await store.list())).toEqual(['s']);
      await store.close();
    });

    it('refuses an append after a line that is not the last with conflict, and writes nothing', async () => {
      const { store } = await make();
      right(await store.append('s', 0, [line(1)]));
      for (const expected of [0, 2]) {
        const stale = await store.append('s', expected, [line(9)]);
        expect(E.isLeft(stale) && stale.left.code).toBe('conflict');
      }
      expect(texts(right(await store.read('s', 0)))).toEqual([line(1)]);
      await store.close();
    });

    it('answers an append or a snapshot at a line past 2^31 - 1 as at any line the log does not hold: conflict, and nothing kept', async () => {
      const { store, reopen } = await make();
      right(await store.append('s', 0, [line(1)]));
      right(await store.read('s', 0));
      right(await store.writeSnapshot('s', { position: 1, state: '{"at":1}' }));
      for (const [expected, appended] of [
        [2 ** 31, [line(2)]],
        [2 ** 31 - 1, [line(2), line(3)]],
        [Number.MAX_SAFE_INTEGER, [line(2)]],
      ] as const) {
        const answer = await store.append('s', expected, appended);
        expect([expected, codeOf(answer)]).toEqual([expected, 'conflict']);
      }
      for (const position of [2 ** 31, Number.MAX_SAFE_INTEGER])
        expect(await store.writeSnapshot('s', { position, state: '{"at":"far"}' })).toEqual(E.right(undefined));
      const other = reopen();
      // A reader that asks past the end starts over, as past any end.
      expect(right(await other.read('s', 2 ** 31))).toMatchObject({ restarted: true, position: 1 });
      expect(texts(right(await other.read('s', 0)))).toEqual([line(1)]);
      expect(right(await other.readSnapshot('s'))).toEqual({ position: 1, state: '{"at":1}' });
      expect(right(await store.append('s', 1, [line(2)])).position).toBe(2);
      await store.close();
    });

    it('lets exactly one of several writers that read the same position append there; the others get conflict', async () => {
      const { store, reopen } = await make();
      right(await store.append('s', 0, [line(1)]));
      const handles = [store, reopen(), reopen(), reopen()];
      for (const handle of handles) right(await handle.read('s', 0));
      const results = await Promise.all(handles.map((handle, i) => handle.append('s', 1, [line(10 + i)])));
      expect(results.filter(E.isRight)).toHaveLength(1);
      expect(results.filter(E.isLeft).map((result) => E.isLeft(result) && result.left.code)).toEqual([
        'conflict',
        'conflict',
        'conflict',
      ]);
      expect(right(await store.read('s', 0)).position).toBe(2);
      for (const handle of handles) await handle.close();
    });

    it('shows what one handle appends to another, in one order for every reader', async () => {
      const { store, reopen } = await make();
      const other = reopen();
      right(await store.append('s', 0, [line(1)]));
      expect(texts(right(await other.read('s', 0)))).toEqual([line(1)]);
      right(await other.append('s', 1, [line(2)]));
      expect(texts(right(await store.read('s', 1)))).toEqual([line(2)]);
      expect(right(await store.read('s', 0)).lines).toEqual(right(await other.read('s', 0)).lines);
      await other.close();
      await store.close();
    });

    it('keeps text exactly: unicode, quotes, backslashes, a line of a megabyte', async () => {
      const { store, reopen } = await make();
      const odd = [line(1, 'zß水🀄 "quoted" \\ back\\slash \u2028 \u0000'), line(2, 'x'.repeat(1_000_000))];
      right(await store.append('s', 0, odd));
      expect(texts(right(await reopen().read('s', 0)))).toEqual(odd);
      await store.close();
    });

    it('refuses a line holding a line break, which would forge a second line', async () => {
      const { store } = await make();
      const forged = await store.append('s', 0, [`${line(1)}\n${line(2)}`]);
      expect(E.isLeft(forged)).toBe(true);
      expect(right(await store.read('s', 0)).position).toBe(0);
      await store.close();
    });

    it('refuses lines that are not texts and a snapshot that is not one as a failure of the input, never a throw or internal, keeping nothing of them', async () => {
      const { store, reopen } = await make();
      right(await store.append('s', 0, [line(1), line(2)]));
      right(await store.read('s', 0));
      right(await store.writeSnapshot('s', { position: 2, state: '{"at":2}' }));
      for (const given of [null, undefined, line(3), [1, 2], [line(3), 4], [{ text: line(3) }], { 0: line(3) }]) {
        const appended = await store.append('s', 2, given as unknown as string[]);
        expect(E.isLeft(appended)).toBe(true);
        expect(codeOf(appended)).not.toBe('internal');
      }
      right(await store.append('s', 2, [line(3)]));
      right(await store.read('s', 2));
      for (const given of [
        null,
        3,
        '{"at":3}',
        { position: '3', state: '{}' },
        { position: 3 },
        { position: 3, state: 3 },
      ]) {
        const written = await store.writeSnapshot('s', given as unknown as StoredSnapshot);
        // A store may leave aside a snapshot it cannot vouch for (Right): it keeps none of it either way.
        expect(codeOf(written)).not.toBe('internal');
      }
      // Every later read of the session takes what the refused calls left as it was.
      const other = reopen();
      expect(texts(right(await other.read('s', 0)))).toEqual([line(1), line(2), line(3)]);
      expect(right(await other.readSnapshot('s'))).toEqual({ position: 2, state: '{"at":2}' });
      expect(right(await store.append('s', 3, [line(4)])).position).toBe(4);
      await store.close();
    });

    it('answers an exception nobody expected (a getter of the caller that throws) as internal, never a rejected promise', async () => {
      const { store } = await make();
      right(await store.append('s', 0, [line(1)]));
      const hostile = new Proxy([line(2)], {
        get: (target, key) => {
          if (key === Symbol.iterator) throw new Error('the iterator broke');
          return Reflect.get(target, key) as unknown;
        },
      });
      const snapshot = {
        get position(): number {
          throw new Error('the getter broke');
        },
        state: '{}',
      };
      for (const answer of [await store.append('s', 1, hostile), await store.writeSnapshot('s', snapshot)])
        expect(E.isLeft(answer) && answer.left).toEqual({
          code: 'internal',
          message: expect.stringMatching(/broke$/u),
        });
      expect(right(await store.read('s', 0)).position).toBe(1);
      await store.close();
    });

    it('answers a snapshot read given a follower that is no object with a Left, never a rejected promise', async () => {
      const { store } = await make();
      right(await store.append('s', 0, [line(1)]));
      right(await store.writeSnapshot('s', { position: 1, state: '{}' }));
      for (const follower of [null, 5, 'reader'])
        expect(E.isLeft(await store.readSnapshot('s', follower as never)), String(follower)).toBe(true);
      expect(right(await store.readSnapshot('s'))).toEqual({ position: 1, state: '{}' });
      await store.close();
    });

    it('refuses an id that is not one, without touching anything', async () => {
      const { store } = await make();
      for (const id of ['', '../escape', '.hidden', 'a/b', 'x'.repeat(500)]) {
        const read = await store.read(id, 0);
        expect(E.isLeft(read) && read.left.code).toBe('invalid_session_id');
        const appended = await store.append(id, 0, [line(1)]);
        expect(E.isLeft(appended) && appended.left.code).toBe('invalid_session_id');
      }
      expect(right(await store.list())).toEqual([]);
      await store.close();
    });

    it('keeps the newest snapshot at a position it holds, for another handle too, and never one past its end', async () => {
      const { store, reopen } = await make();
      right(await store.append('s', 0, [line(1), line(2), line(3)]));
      right(await store.read('s', 0));
      right(await store.writeSnapshot('s', { position: 3, state: '{"at":3}' }));
      expect(right(await reopen().readSnapshot('s'))).toEqual({ position: 3, state: '{"at":3}' });
      right(await store.append('s', 3, [line(4)]));
      right(await store.writeSnapshot('s', { position: 4, state: '{"at":4}' }));
      expect(right(await reopen().readSnapshot('s'))).toEqual({ position: 4, state: '{"at":4}' });
      right(await store.writeSnapshot('s', { position: 9, state: '{"at":9}' }));
      expect(right(await reopen().readSnapshot('s'))).toEqual({ position: 4, state: '{"at":4}' });
      await store.close();
    });

    it('answers with atMost the newest snapshot it keeps of at most that many lines, or none', async () => {
      const { store, reopen } = await make();
      right(await store.append('s', 0, [line(1), line(2), line(3)]));
      right(await store.read('s', 0));
      right(await store.writeSnapshot('s', { position: 3, state: '{"at":3}' }));
      right(await store.append('s', 3, [line(4), line(5)]));
      right(await store.writeSnapshot('s', { position: 5, state: '{"at":5}' }));
      const other = reopen();
      expect(right(await other.readSnapshot('s', undefined, 9))).toEqual({ position: 5, state: '{"at":5}' });
      expect(right(await other.readSnapshot('s', undefined, 5))).toEqual({ position: 5, state: '{"at":5}' });
      // The snapshot the newest replaced, where the store keeps it; none where it keeps only the newest.
      const earlier = right(await other.readSnapshot('s', undefined, 4));
      if (earlier !== undefined) expect(earlier).toEqual({ position: 3, state: '{"at":3}' });
      expect(right(await other.readSnapshot('s', undefined, 2))).toBeUndefined();
      expect(right(await other.readSnapshot('s'))).toEqual({ position: 5, state: '{"at":5}' });
      await store.close();
    });

    it('keeps the newest snapshot when a writer that lags behind writes one of fewer lines, and the previous it kept', async () => {
      const { store, reopen } = await make();
      const [leading, lagging] = [{}, {}];
      right(await store.append('s', 0, [line(1), line(2), line(3)], leading));
      right(await store.writeSnapshot('s', { position: 3, state: '{"at":3}' }, leading));
      right(await store.append('s', 3, [line(4)], leading));
      // The lagging writer read up to line 4; the leading one appends line 5 and keeps its state there.
      right(await store.read('s', 0, lagging));
      right(await store.append('s', 4, [line(5)], leading));
      right(await store.writeSnapshot('s', { position: 5, state: '{"at":5}' }, leading));
      right(await store.writeSnapshot('s', { position: 4, state: '{"late":4}' }, lagging));
      const other = reopen();
      expect(right(await other.readSnapshot('s'))).toEqual({ position: 5, state: '{"at":5}' });
      expect(right(await other.readSnapshot('s', undefined, 5))).toEqual({ position: 5, state: '{"at":5}' });
      // The previous is still the one the newest replaced (where the store keeps one), not the late one.
      const previous = right(await other.readSnapshot('s', undefined, 4));
      if (previous !== undefined) expect(previous).toEqual({ position: 3, state: '{"at":3}' });
      // A rewrite of the newest line replaces it and keeps the previous there was.
      right(await store.writeSnapshot('s', { position: 5, state: '{"again":5}' }, leading));
      expect(right(await other.readSnapshot('s'))).toEqual({ position: 5, state: '{"again":5}' });
      const kept = right(await other.readSnapshot('s', undefined, 4));
      if (kept !== undefined) expect(kept).toEqual({ position: 3, state: '{"at":3}' });
      expect(kept).toEqual(previous);
      await store.close();
    });

    it('counts less backlog once a snapshot covers the log', async () => {
      const { store } = await make();
      right(
        await store.append(
          's',
          0,
          Array.from({ length: 20 }, (_, i) => line(i)),
        ),
      );
      const before = await store.backlog('s');
      right(await store.read('s', 0));
      right(await store.writeSnapshot('s', { position: 20, state: '{}' }));
      expect(before).toBeGreaterThan(0);
      expect(await store.backlog('s')).toBe(0);
      expect(await store.backlog('absent')).toBeUndefined();
      await store.close();
    });

    it('deletes a session whole, for every handle: a reader past its end starts over, and a writer makes a new log', async () => {
      const { store, reopen } = await make();
      const other = reopen();
      right(await store.append('s', 0, [line(1), line(2)]));
      right(await store.append('kept', 0, [line(1)]));
      right(await store.writeSnapshot('s', { position: 2, state: '{}' }));
      right(await other.read('s', 0));
      expect(right(await store.delete('s'))).toBe(true);
      expect(right(await store.delete('s'))).toBe(false);
      expect(right(await store.delete('absent'))).toBe(false);
      expect(right(await store.list())).toEqual(['kept']);
      expect(right(await other.read('s', 2))).toMatchObject({ exists: false, lines: [], position: 0 });
      expect(right(await store.readSnapshot('s'))).toBeUndefined();
      expect(codeOf(await other.append('s', 2, [line(3)]))).toBe('conflict');
      right(await other.append('s', 0, [line(9)]));
      expect(texts(right(await store.read('s', 0)))).toEqual([line(9)]);
      expect(codeOf(await store.delete('../x'))).toBe('invalid_session_id');
      await store.close();
    });

    it('starts a reader without a place that asks past the end over, with every line from line 1', async () => {
      const { store, reopen } = await make();
      right(await store.append('s', 0, [line(1), line(2), line(3)]));
      const restarted = { exists: true, restarted: true, position: 3, torn: false };
      // Another process, which never read this log, and a follower of this store that never did.
      for (const read of [await reopen().read('s', 5), await store.read('s', 5, {})]) {
        expect(right(read)).toMatchObject(restarted);
        expect(right(read).lines).toEqual([
          { line: 1, text: line(1) },
          { line: 2, text: line(2) },
          { line: 3, text: line(3) },
        ]);
      }
      await store.close();
    });

    it('keeps a position per follower: a log made anew is read from its first line by each that read the old one', async () => {
      const { store, reopen } = await make();
      // Three followers of the log on one store instance (three sessions opened on it).
      const [ahead, behind, stale] = [{}, {}, {}];
      right(await store.append('s', 0, [line(1), line(2)], ahead));
      expect(texts(right(await store.read('s', 0, behind)))).toEqual([line(1), line(2)]);
      right(await store.append('s', 2, [line(3)], ahead));
      expect(texts(right(await store.read('s', 2, behind)))).toEqual([line(3)]);
      expect(right(await store.read('s', 0, stale)).position).toBe(3);
      // Another process deletes the log and makes it anew, as long, of other lines.
      const other = reopen();
      expect(right(await other.delete('s'))).toBe(true);
      right(await other.append('s', 0, [line(7), line(8), line(9)]));
      const anew = { exists: true, restarted: true, position: 3, torn: false };
      expect(right(await store.read('s', 3, ahead))).toMatchObject(anew);
      const read = right(await store.read('s', 3, behind));
      expect(read).toMatchObject(anew);
      expect(texts(read)).toEqual([line(7), line(8), line(9)]);
      // One that read the old log appends after none of its lines to the new one.
      expect(codeOf(await store.append('s', 3, [line(4)], stale))).toBe('conflict');
      expect(right(await store.read('s', 3, stale))).toMatchObject(anew);
      right(await store.append('s', 3, [line(10)], stale));
      for (const follower of [ahead, behind])
        expect(texts(right(await store.read('s', 3, follower)))).toEqual([line(10)]);
      await store.close();
    });

    it('has nothing to repair in a log written through it', async () => {
      const { store } = await make();
      right(await store.append('s', 0, [line(1)]));
      expect(right(await store.repair('s'))).toEqual([]);
      expect(right(await store.read('s', 0)).torn).toBe(false);
      await store.close();
    });
  });
};
