/**
 * A session store of the caller's own that answers outside the port: a session answers every
 * call with a `{ code, message }` failure, `internal` for the store's bug, and writes nothing.
 */
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { memorySessionStore, openSession, type SessionStore } from '../../../src/live/session/index.js';

const result = { task_id: '1', status: 'completed', summary: 'done' };

/** A memory store whose `call`, once armed (from the start: `armed`), answers `answer`, or throws it when it is an Error. */
const faulty = (call: 'read' | 'append' | 'readSnapshot', answer: unknown, armed = false) => {
  const base = memorySessionStore();
  const store = {
    ...base,
    [call]: (...args: never[]) =>
      armed
        ? answer instanceof Error
          ? Promise.reject(answer)
          : Promise.resolve(answer)
        : (base[call] as (...a: never[]) => unknown)(...args),
  } as SessionStore;
  return { base, store, arm: () => (armed = true) };
};

describe('a session over a store that answers outside the port', () => {
  it.each([
    ['append', null, "the store's append failed with null, not a { code, message }"],
    ['append', 'disk full', "the store's append failed with a string, not a { code, message }"],
    ['append', { code: 42 }, "the store's append failed with an object, not a { code, message }"],
    ['read', null, "the store's read failed with null, not a { code, message }"],
  ] as const)(
    'a failure that is no { code, message } from %s (%j) is answered as internal',
    async (call, left, said) => {
      const { base, store, arm } = faulty(call, E.left(left));
      const opened = await openSession('faulty', { store });
      if (E.isLeft(opened)) throw new Error(opened.left.message);
      arm();
      const answer = await opened.right.ingestResult({ role: 'implementer', taskId: '1', output: result, at: 1_000 });
      expect(answer).toEqual(
        E.left({ code: 'internal', message: `unexpected failure (a bug; please report it): ${said}` }),
      );
      expect(await base.read('faulty', 0)).toMatchObject(E.right({ exists: false, lines: [] }));
    },
  );

  it('an answer that is no Either is internal, naming the call', async () => {
    const { store, arm } = faulty('read', 'lines');
    const opened = await openSession('faulty', { store });
    if (E.isLeft(opened)) throw new Error(opened.left.message);
    arm();
    expect(await opened.right.snapshot()).toEqual(
      E.left({
        code: 'internal',
        message: "unexpected failure (a bug; please report it): the store's read answered a string, not an Either",
      }),
    );
  });

  it('a call that throws is internal, naming the call', async () => {
    const { store, arm } = faulty('append', new Error('disk gone'));
    const opened = await openSession('faulty', { store });
    if (E.isLeft(opened)) throw new Error(opened.left.message);
    arm();
    expect(await opened.right.ingestResult({ role: 'implementer', taskId: '1', output: result, at: 1_000 })).toEqual(
      E.left({
        code: 'internal',
        message: "unexpected failure (a bug; please report it): the store's append threw: disk gone",
      }),
    );
  });

  it('a snapshot read that throws is read past as a cache, its reason in snapshotUse()', async () => {
    const { store } = faulty('readSnapshot', new Error('no snapshot table'), true);
    const opened = await openSession('faulty', { store });
    if (E.isLeft(opened)) throw new Error(opened.left.message);
    expect(opened.right.snapshotUse()).toEqual({
      used: false,
      reason: "unexpected failure (a bug; please report it): the store's readSnapshot threw: no snapshot table",
    });
    expect(await opened.right.ingestResult({ role: 'implementer', taskId: '1', output: result, at: 1_000 })).toEqual(
      E.right(expect.objectContaining({ line: 1 })),
    );
  });

  it("a store's own failure is the call's answer as it gave it", async () => {
    const { store, arm } = faulty('append', E.left({ code: 'io', message: 'no space left on the device' }));
    const opened = await openSession('faulty', { store });
    if (E.isLeft(opened)) throw new Error(opened.left.message);
    arm();
    expect(await opened.right.ingestResult({ role: 'implementer', taskId: '1', output: result, at: 1_000 })).toEqual(
      E.left({ code: 'io', message: 'no space left on the device' }),
    );
  });
  it.each([
    ['read', E.right(null), "the store's read answered a Right of null, not a tail read"],
    ['read', E.right({ exists: true, lines: 5 }), "the store's read answered a Right of an object, not a tail read"],
    ['append', E.right(null), "the store's append answered a Right of null, not an append's result"],
    ['append', E.right({ position: 1 }), "the store's append answered a Right of an object, not an append's result"],
  ] as const)('a %s answering %j is internal, naming the call', async (call, answer, said) => {
    const { store, arm } = faulty(call, answer);
    const opened = await openSession('faulty', { store });
    if (E.isLeft(opened)) throw new Error(opened.left.message);
    arm();
    expect(await opened.right.ingestResult({ role: 'implementer', taskId: '1', output: result, at: 1_000 })).toEqual(
      E.left({ code: 'internal', message: `unexpected failure (a bug; please report it): ${said}` }),
    );
  });

  it('a failure or an answer whose fields cannot be read is internal, naming the call', async () => {
    const unreadable = new Proxy(
      {},
      {
        get: () => {
          throw new Error('no field');
        },
      },
    );
    for (const [answer, said] of [
      [E.left(unreadable), "the store's read failed with an object, not a { code, message }"],
      [E.right(unreadable), "the store's read answered a Right of an object, not a tail read"],
    ] as const) {
      const { store, arm } = faulty('read', answer);
      const opened = await openSession('faulty', { store });
      if (E.isLeft(opened)) throw new Error(opened.left.message);
      arm();
      expect(await opened.right.snapshot()).toEqual(
        E.left({ code: 'internal', message: `unexpected failure (a bug; please report it): ${said}` }),
      );
    }
  });

  it('a snapshot read answering a Right that is no snapshot is read past as a cache, its reason in snapshotUse()', async () => {
    for (const answer of [E.right(null), E.right(42), E.right({ position: 'one', state: '{}' })]) {
      const { store } = faulty('readSnapshot', answer, true);
      const opened = await openSession('faulty', { store });
      if (E.isLeft(opened)) throw new Error(opened.left.message);
      expect(opened.right.snapshotUse()).toEqual({
        used: false,
        reason: expect.stringMatching(
          /^unexpected failure \(a bug; please report it\): the store's readSnapshot answered a Right of (null|a number|an object), not a snapshot or undefined$/u,
        ),
      });
      expect(await opened.right.ingestResult({ role: 'implementer', taskId: '1', output: result, at: 1_000 })).toEqual(
        E.right(expect.objectContaining({ line: 1 })),
      );
    }
  });
});
