/**
 * The conformance suite of the notes store's lease capability: what every adapter with leases
 * must do. `describeNotesLeaseConformance(name, makeStore, expire)` takes a factory of fresh
 * stores and a way to let a lease of `ttlMs` expire (advance a fake clock, or wait).
 */
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import type { LeaseAnswer, LeaseRequest, NotesLeases } from '../../src/notes/leases.js';
import type { NotesStore, NotesWrite } from '../../src/notes/store.js';

const TTL = 60_000;

const lease = async (
  leases: NotesLeases,
  user: string,
  session: string,
  request: LeaseRequest,
): Promise<LeaseAnswer> => {
  const answer = await leases.lease(user, session, request);
  if (E.isLeft(answer)) throw new Error(`lease failed: ${answer.left.code}: ${answer.left.message}`);
  return answer.right;
};

const message = (text: string, at = 1) => ({ kind: 'message' as const, text, at });

/** `length` ASCII letters and digits that no compression shortens, the same for one `seed`. */
const noise = (length: number, seed: number): string => {
  let state = seed;
  let text = '';
  for (let i = 0; i < length; i += 1) {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    text += 'abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ'[(state >>> 16) % 62];
  }
  return text;
};

/** Defines the lease conformance tests of the adapter `makeStore` makes. */
export const describeNotesLeaseConformance = (
  name: string,
  makeStore: () => NotesStore | Promise<NotesStore>,
  /** Lets the leases a store handed out with `ttlMs` expire. */
  expire: (store: NotesStore, ttlMs: number) => Promise<void>,
): void => {
  const leasesOf = async (): Promise<{ store: NotesStore; leases: NotesLeases }> => {
    const store = await makeStore();
    if (store.leases === undefined) throw new Error(`${name} has no leases`);
    return { store, leases: store.leases };
  };

  describe(`the notes lease conformance suite: ${name}`, () => {
    it('gives a free slot to whoever brings it work, with the queue; an empty slot to nobody', async () => {
      const { leases } = await leasesOf();
      expect(await lease(leases, 'maya', 's1', { holder: 'a', ttlMs: TTL })).toEqual({
        held: false,
        added: [],
        queue: [],
      });
      const first = await lease(leases, 'maya', 's1', { holder: 'a', ttlMs: TTL, add: [message('one', 5)] });
      expect(first).toMatchObject({ held: true, head: first.added[0], expiresInMs: TTL });
      expect(first.queue).toEqual([{ kind: 'message', text: 'one', at: 5, seq: first.added[0], origin: 'a' }]);
    });

    it('keeps the lease from others while it is live, numbering what they add after what was there', async () => {
      const { leases } = await leasesOf();
      const a = await lease(leases, 'maya', 's1', { holder: 'a', ttlMs: TTL, add: [message('one')] });
      const b = await lease(leases, 'maya', 's1', {
        holder: 'b',
        ttlMs: TTL,
        add: [message('two'), { kind: 'stage', at: 9 }],
      });
      expect(b.held).toBe(false);
      expect(b.queue).toEqual([]);
      expect(b.head).toBe(a.added[0]);
      expect(b.added).toHaveLength(2);
      expect(b.added[0]!).toBeGreaterThan(a.added[0]!);
      expect(b.added[1]!).toBeGreaterThan(b.added[0]!);
      expect(b.expiresInMs).toBeGreaterThan(0);
      expect(b.expiresInMs).toBeLessThanOrEqual(TTL);
      // The holder's next call sees everything, from both, in order.
      const again = await lease(leases, 'maya', 's1', { holder: 'a', ttlMs: TTL });
      expect(again.queue.map((item) => [item.kind, item.text, item.origin])).toEqual([
        ['message', 'one', 'a'],
        ['message', 'two', 'b'],
        ['stage', undefined, 'b'],
      ]);
      expect(again.queue[2]).toMatchObject({ at: 9 });
    });

    it('removes what the holder has done, renews while more waits, and frees the lease when nothing does', async () => {
      const { leases } = await leasesOf();
      const a = await lease(leases, 'maya', 's1', { holder: 'a', ttlMs: TTL, add: [message('one')] });
      const b = await lease(leases, 'maya', 's1', { holder: 'b', ttlMs: TTL, add: [message('two')] });
      const renewed = await lease(leases, 'maya', 's1', { holder: 'a', ttlMs: TTL, done: a.added[0]! });
      expect(renewed).toMatchObject({ held: true, head: b.added[0] });
      expect(renewed.queue.map((item) => item.text)).toEqual(['two']);
      const freed = await lease(leases, 'maya', 's1', { holder: 'a', ttlMs: TTL, done: b.added[0]! });
      expect(freed).toEqual({ held: false, added: [], queue: [] });
      // Free again: the next one with work takes it at once.
      expect((await lease(leases, 'maya', 's1', { holder: 'b', ttlMs: TTL, add: [message('three')] })).held).toBe(true);
    });

    it('hands an expired lease to the next one who asks, with the queue the crashed holder left', async () => {
      const { store, leases } = await leasesOf();
      await lease(leases, 'maya', 's1', { holder: 'crashed', ttlMs: 300, add: [message('one')] });
      await lease(leases, 'maya', 's1', { holder: 'b', ttlMs: TTL, add: [message('two')] });
      await expire(store, 300);
      const taken = await lease(leases, 'maya', 's1', { holder: 'b', ttlMs: TTL });
      expect(taken.held).toBe(true);
      expect(taken.queue.map((item) => item.text)).toEqual(['one', 'two']);
      // The crashed holder, back, finds it taken: what it says it has done still leaves the queue.
      const back = await lease(leases, 'maya', 's1', { holder: 'crashed', ttlMs: TTL, done: taken.queue[0]!.seq });
      expect(back.held).toBe(false);
      expect((await lease(leases, 'maya', 's1', { holder: 'b', ttlMs: TTL })).queue.map((item) => item.text)).toEqual([
        'two',
      ]);
    });

    it('fences a save by its lease: taken while the lease is held at its fence, refused whole as fenced once another took it over', async () => {
      const { store, leases } = await leasesOf();
      const record = (updatedAt: number) => ({ facts: [], updatedAt, consolidated: false });
      const a = await lease(leases, 'maya', 's1', { holder: 'a', ttlMs: 300, add: [message('one')] });
      expect(a.fence).toEqual(expect.any(Number));
      const underA = (updatedAt: number, expected: number): NotesWrite => ({
        sessions: [{ session: 's1', value: record(updatedAt), expected }],
        fences: [{ session: 's1', fence: a.fence! }],
      });
      expect(await store.save('maya', underA(1, 0))).toEqual(E.right({ sessions: [{ session: 's1', version: 1 }] }));
      // Renewed by its holder, a lease keeps its fence.
      expect((await lease(leases, 'maya', 's1', { holder: 'a', ttlMs: 300 })).fence).toBe(a.fence);
      await expire(store, 300);
      const b = await lease(leases, 'maya', 's1', { holder: 'b', ttlMs: TTL, add: [message('two')] });
      expect(b.held).toBe(true);
      expect(b.fence).toEqual(expect.any(Number));
      expect(b.fence).not.toBe(a.fence);
      // The holder that lost it saves nothing, the profile it writes with the session included.
      const stale = await store.save('maya', {
        ...underA(2, 1),
        profile: { value: { facts: [], consolidatedAt: 1, sessionCount: 1 }, expected: 0 },
      });
      expect(E.isLeft(stale) && stale.left.code).toBe('fenced');
      const after = await store.load('maya', 's1');
      expect(E.isRight(after) && after.right).toEqual({
        session: { value: record(1), version: 1 },
        profile: { version: 0 },
      });
      // The new holder's save goes; a save under no lease is not fenced.
      expect(
        E.isRight(
          await store.save('maya', {
            sessions: [{ session: 's1', value: record(3), expected: 1 }],
            fences: [{ session: 's1', fence: b.fence! }],
          }),
        ),
      ).toBe(true);
      expect(
        E.isRight(await store.save('maya', { sessions: [{ session: 's2', value: record(4), expected: 0 }] })),
      ).toBe(true);
      // Freed and taken again, even by its last holder, the lease has another fence.
      const done = b.queue[b.queue.length - 1]!.seq;
      expect((await lease(leases, 'maya', 's1', { holder: 'b', ttlMs: TTL, done })).held).toBe(false);
      const again = await lease(leases, 'maya', 's1', { holder: 'b', ttlMs: TTL, add: [message('three')] });
      expect(again.fence).not.toBe(b.fence);
      const refused = await store.save('maya', {
        sessions: [{ session: 's1', value: record(5), expected: 2 }],
        fences: [{ session: 's1', fence: b.fence! }],
      });
      expect(E.isLeft(refused) && refused.left.code).toBe('fenced');
    });

    it('keeps slots apart: users, sessions, and ids an empty object answers', async () => {
      const { leases } = await leasesOf();
      for (const [user, session] of [
        ['maya', 's1'],
        ['maya', 's2'],
        ['jordan', 's1'],
        ['__proto__', 'constructor'],
      ] as const)
        expect(
          (await lease(leases, user, session, { holder: user + session, ttlMs: TTL, add: [message(user + session)] }))
            .queue,
        ).toMatchObject([{ text: user + session }]);
    });

    it('adds an item whose key is still queued once, answering its number, as a call made again after a lost answer', async () => {
      const { leases } = await leasesOf();
      const call: LeaseRequest = {
        holder: 'b',
        ttlMs: TTL,
        add: [
          { ...message('one'), key: 'b1:0' },
          { ...message('two'), key: 'b1:1' },
          { kind: 'stage', at: 3, key: 'b1:2' },
        ],
      };
      await lease(leases, 'maya', 's1', { holder: 'a', ttlMs: TTL, add: [message('first')] });
      const sent = await lease(leases, 'maya', 's1', call);
      const again = await lease(leases, 'maya', 's1', call);
      expect(again.added).toEqual(sent.added);
      // Another key, or none, is another item; the same key in another slot is that slot's.
      const other = await lease(leases, 'maya', 's1', {
        holder: 'b',
        ttlMs: TTL,
        add: [{ ...message('one'), key: 'b1:3' }, message('one')],
      });
      const elsewhere = await lease(leases, 'maya', 's2', {
        holder: 'b',
        ttlMs: TTL,
        add: [{ ...message('one'), key: 'b1:0' }],
      });
      expect(elsewhere.queue).toMatchObject([{ text: 'one' }]);
      const queue = (await lease(leases, 'maya', 's1', { holder: 'a', ttlMs: TTL })).queue;
      expect(queue.map((item) => item.text ?? item.kind)).toEqual(['first', 'one', 'two', 'stage', 'one', 'one']);
      expect(queue.map((item) => item.seq)).toEqual([queue[0]!.seq, ...sent.added, ...other.added]);
      // Once done, the items are gone: their keys name nothing queued any more.
      const last = sent.added[sent.added.length - 1]!;
      const after = await lease(leases, 'maya', 's1', { holder: 'a', ttlMs: TTL, done: last });
      expect(after.queue.map((item) => item.seq)).toEqual(other.added);
    });

    it('refuses an item key past 800 bytes of UTF-8 as invalid_input, naming its length and never its text, and queues a key at the bound beside the longest ids', async () => {
      const { leases } = await leasesOf();
      const ok = { holder: 'h', ttlMs: TTL };
      // Text no compression shortens: PostgreSQL compresses an index row, so a repeated letter would fit.
      const long = noise(3_000, 1);
      for (const [key, bytes] of [
        [long, 3_000],
        [noise(801, 2), 801],
        ['\u00e9'.repeat(401), 802],
      ] as const) {
        const answer = await leases.lease('maya', 's1', { ...ok, add: [message('one'), { ...message('two'), key }] });
        expect(E.isLeft(answer) && answer.left.code).toBe('invalid_input');
        const said = E.isLeft(answer) ? answer.left.message : '';
        expect(said).toContain(`${bytes} bytes`);
        expect(said).toContain('800');
        expect(said).not.toContain(key.slice(0, 40));
      }
      expect(await lease(leases, 'maya', 's1', ok)).toEqual({ held: false, added: [], queue: [] });
      // 800 bytes each: the user and session ids PostgreSQL keeps, and the key.
      const [user, session] = [noise(800, 3), noise(800, 4)];
      const call: LeaseRequest = {
        ...ok,
        add: [
          { ...message('one'), key: noise(800, 5) },
          { ...message('two'), key: '\u{1F600}'.repeat(200) },
        ],
      };
      const first = await lease(leases, user, session, call);
      expect(first.held).toBe(true);
      expect(first.queue.map((item) => item.text)).toEqual(['one', 'two']);
      expect((await lease(leases, user, session, call)).added).toEqual(first.added);
    });

    it('answers a queue that later calls never change: the caller keeps it as it came', async () => {
      const { leases } = await leasesOf();
      const first = await lease(leases, 'maya', 's1', {
        holder: 'a',
        ttlMs: TTL,
        add: [message('one'), message('two')],
      });
      const kept = structuredClone(first.queue);
      await lease(leases, 'maya', 's1', { holder: 'a', ttlMs: TTL, add: [message('three')], done: first.added[0]! });
      await lease(leases, 'maya', 's1', { holder: 'b', ttlMs: TTL, add: [message('four')] });
      expect(first.queue).toEqual(kept);
    });

    it('answers a lease call built wrong as invalid_input, never throwing, and queues nothing of it', async () => {
      const { leases } = await leasesOf();
      const ok = { holder: 'h', ttlMs: TTL };
      const throwing = Object.defineProperty({ ...ok }, 'add', {
        enumerable: true,
        get: () => {
          throw new Error('no items today');
        },
      });
      const calls: ReadonlyArray<readonly [string, () => unknown]> = [
        ['no request', () => leases.lease('maya', 's1', null as never)],
        ['add that is no list', () => leases.lease('maya', 's1', { ...ok, add: 5 as never })],
        ['an item that is none', () => leases.lease('maya', 's1', { ...ok, add: [null as never] })],
        ['a good item, then none', () => leases.lease('maya', 's1', { ...ok, add: [message('one'), null as never] })],
        ['a hole', () => leases.lease('maya', 's1', { ...ok, add: [message('one'), , message('two')] as never })],
        ['a kind of no item', () => leases.lease('maya', 's1', { ...ok, add: [{ kind: 'note' as never }] })],
        [
          'text that is none',
          () => leases.lease('maya', 's1', { ...ok, add: [{ kind: 'message', text: 5 as never }] }),
        ],
        ['a time that is none', () => leases.lease('maya', 's1', { ...ok, add: [{ kind: 'stage', at: Number.NaN }] })],
        [
          'a key that is no text',
          () => leases.lease('maya', 's1', { ...ok, add: [{ kind: 'stage', key: 5 as never }] }),
        ],
        ['ttlMs NaN', () => leases.lease('maya', 's1', { ...ok, ttlMs: Number.NaN, add: [message('one')] })],
        ['ttlMs 0', () => leases.lease('maya', 's1', { ...ok, ttlMs: 0, add: [message('one')] })],
        ['ttlMs Infinity', () => leases.lease('maya', 's1', { ...ok, ttlMs: Infinity, add: [message('one')] })],
        ['ttlMs past 2^31 - 1', () => leases.lease('maya', 's1', { ...ok, ttlMs: 2 ** 31, add: [message('one')] })],
        ['a holder that is none', () => leases.lease('maya', 's1', { ...ok, holder: 5 as never })],
        ['done that is no count', () => leases.lease('maya', 's1', { ...ok, done: 1.5 })],
        ['a user that is none', () => leases.lease(null as never, 's1', { ...ok, add: [message('one')] })],
        ['a session that is none', () => leases.lease('maya', 5 as never, { ...ok, add: [message('one')] })],
        ['a getter that throws', () => leases.lease('maya', 's1', throwing)],
      ];
      for (const [name, call] of calls) {
        let code: string;
        try {
          const answer = (await call()) as E.Either<{ readonly code: string }, unknown>;
          code = E.isLeft(answer) ? answer.left.code : 'accepted';
        } catch (error) {
          code = `threw ${String(error)}`;
        }
        expect([name, code]).toEqual([name, 'invalid_input']);
      }
      expect(await lease(leases, 'maya', 's1', ok)).toEqual({ held: false, added: [], queue: [] });
    });

    it('gives a free slot to exactly one of many callers at once, and loses none of their items', async () => {
      const { leases } = await leasesOf();
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          lease(leases, 'maya', 's1', { holder: `h${i}`, ttlMs: TTL, add: [message(`m${i}`)] }),
        ),
      );
      expect(answers.filter((answer) => answer.held)).toHaveLength(1);
      const winner = answers.findIndex((answer) => answer.held);
      const all = await lease(leases, 'maya', 's1', { holder: `h${winner}`, ttlMs: TTL });
      expect(all.queue.map((item) => item.text).sort()).toEqual(Array.from({ length: 8 }, (_, i) => `m${i}`).sort());
      expect(new Set(answers.flatMap((answer) => answer.added)).size).toBe(8);
    });
  });
};
