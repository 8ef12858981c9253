/**
 * The conformance suite of the notes store port: what every adapter must do, whether it answers
 * at once (memory) or with promises (a database). Call `describeNotesStoreConformance` with a
 * name and a factory of fresh, empty stores; each test takes a store of its own.
 */
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import type {
  JsonValue,
  NotesRecords,
  NotesStore,
  NotesStoreFailure,
  NotesWrite,
  NotesWritten,
  StoreAnswer,
} from '../../src/notes/store.js';

/**
 * `store` answering later: every call's answer arrives on a later turn of the event loop, as a
 * database's would (without its leases; with its list of unmerged sessions, when it has one).
 */
export const answeringLater = (store: NotesStore): NotesStore => {
  const { unmergedSessions } = store;
  return {
    load: (user, session) => new Promise((resolve) => setTimeout(() => resolve(store.load(user, session)), 0)),
    save: (user, write) => new Promise((resolve) => setTimeout(() => resolve(store.save(user, write)), 0)),
    ...(unmergedSessions === undefined
      ? {}
      : {
          unmergedSessions: (user: string) =>
            new Promise((resolve) => setTimeout(() => resolve(unmergedSessions.call(store, user)), 0)),
        }),
  };
};

/** A store's answer, awaited whether it came at once or later. */
const answer = async <T>(result: StoreAnswer<T>): Promise<E.Either<NotesStoreFailure, T>> => result;

const loaded = async (store: NotesStore, user: string, session: string): Promise<NotesRecords> => {
  const result = await answer(store.load(user, session));
  if (E.isLeft(result)) throw new Error(`load failed: ${result.left.code}: ${result.left.message}`);
  return result.right;
};

const saved = async (store: NotesStore, user: string, write: NotesWrite): Promise<NotesWritten> => {
  const result = await answer(store.save(user, write));
  if (E.isLeft(result)) throw new Error(`save failed: ${result.left.code}: ${result.left.message}`);
  return result.right;
};

const sessionWrite = (session: string, value: JsonValue, expected = 0): NotesWrite => ({
  sessions: [{ session, value, expected }],
});

/** A notes record as the tracker writes one (a fact carried over from earlier messages keeps the time it was first told). */
const notes = (fact: string): JsonValue => ({
  facts: [
    { category: 'People', fact },
    { category: 'Logistics', fact: 'Works night shifts', at: 1_699_999_000_000 },
  ],
  updatedAt: 1_700_000_000_000,
  consolidated: false,
  messagesAt: 1_700_000_000_000,
});

/** Defines the conformance tests of the adapter `makeStore` makes (a fresh, empty store per call). */
export const describeNotesStoreConformance = (
  name: string,
  makeStore: () => NotesStore | Promise<NotesStore>,
): void => {
  describe(`the notes store conformance suite: ${name}`, () => {
    it('reads version 0 and no value for records never saved', async () => {
      const store = await makeStore();
      expect(await loaded(store, 'maya', 's1')).toEqual({ session: { version: 0 }, profile: { version: 0 } });
    });

    it('round trips a session record and a profile record, each version counting its saves from 1', async () => {
      const store = await makeStore();
      const profile: JsonValue = { facts: [], consolidatedAt: 5, sessionCount: 1 };
      expect(
        await saved(store, 'maya', {
          ...sessionWrite('s1', notes('Partner is Jordan')),
          profile: { value: profile, expected: 0 },
        }),
      ).toEqual({
        sessions: [{ session: 's1', version: 1 }],
        profile: 1,
      });
      expect(await loaded(store, 'maya', 's1')).toEqual({
        session: { value: notes('Partner is Jordan'), version: 1 },
        profile: { value: profile, version: 1 },
      });
      expect(await saved(store, 'maya', sessionWrite('s1', notes('Married to Jordan'), 1))).toEqual({
        sessions: [{ session: 's1', version: 2 }],
      });
      expect(await loaded(store, 'maya', 's1')).toEqual({
        session: { value: notes('Married to Jordan'), version: 2 },
        profile: { value: profile, version: 1 },
      });
    });

    it('answers a save against a stale version with a conflict, and writes nothing of it', async () => {
      const store = await makeStore();
      await saved(store, 'maya', sessionWrite('s1', notes('one')));
      const stale = await answer(store.save('maya', sessionWrite('s1', notes('two'), 0)));
      expect(E.isLeft(stale) && stale.left.code).toBe('conflict');
      const ahead = await answer(store.save('maya', sessionWrite('s1', notes('three'), 7)));
      expect(E.isLeft(ahead) && ahead.left.code).toBe('conflict');
      const notYet = await answer(store.save('maya', sessionWrite('s2', notes('four'), 1)));
      expect(E.isLeft(notYet) && notYet.left.code).toBe('conflict');
      expect((await loaded(store, 'maya', 's1')).session).toEqual({ value: notes('one'), version: 1 });
      expect((await loaded(store, 'maya', 's2')).session).toEqual({ version: 0 });
    });

    it('refuses a write it cannot read (a getter that throws) as invalid_input, never a rejected promise, and reads a write once', async () => {
      const store = await makeStore();
      const broken = {
        get sessions(): never {
          throw new Error('the getter broke');
        },
      } as unknown as NotesWrite;
      const refused = await answer(store.save('maya', broken));
      expect(E.isLeft(refused) && refused.left).toEqual({
        code: 'invalid_input',
        message: expect.stringMatching(/the getter broke/u),
      });
      // A write that answers once and breaks when asked again is saved as it answered.
      let reads = 0;
      const fickle = {
        get sessions() {
          reads += 1;
          if (reads > 1) throw new Error('the getter broke');
          return [{ session: 's1', value: notes('one'), expected: 0 }];
        },
      } as unknown as NotesWrite;
      expect(await saved(store, 'maya', fickle)).toEqual({ sessions: [{ session: 's1', version: 1 }] });
      expect((await loaded(store, 'maya', 's1')).session).toEqual({ value: notes('one'), version: 1 });
    });

    it('writes all of a save or none of it: a stale profile keeps its sessions unwritten too', async () => {
      const store = await makeStore();
      await saved(store, 'maya', { sessions: [], profile: { value: { facts: [] }, expected: 0 } });
      const mixed = await answer(
        store.save('maya', {
          sessions: [
            { session: 's1', value: notes('one'), expected: 0 },
            { session: 's2', value: notes('two'), expected: 0 },
          ],
          profile: { value: { facts: ['stale'] }, expected: 0 },
        }),
      );
      expect(E.isLeft(mixed) && mixed.left.code).toBe('conflict');
      expect(await loaded(store, 'maya', 's1')).toEqual({
        session: { version: 0 },
        profile: { value: { facts: [] }, version: 1 },
      });
      expect((await loaded(store, 'maya', 's2')).session).toEqual({ version: 0 });
    });

    it('keeps users and sessions apart, ids an empty object answers included', async () => {
      const store = await makeStore();
      const ids = ['maya', 'jordan', '__proto__', 'constructor', 'toString', 'a"b', 'ü 🐙'];
      for (const user of ids)
        for (const session of ['s1', 'constructor', '__proto__'])
          await saved(store, user, sessionWrite(session, notes(`${user} in ${session}`)));
      for (const user of ids)
        await saved(store, user, { sessions: [], profile: { value: `${user}'s profile`, expected: 0 } });
      for (const user of ids)
        for (const session of ['s1', 'constructor', '__proto__'])
          expect(await loaded(store, user, session)).toEqual({
            session: { value: notes(`${user} in ${session}`), version: 1 },
            profile: { value: `${user}'s profile`, version: 1 },
          });
      expect(await loaded(store, 'nobody', 's1')).toEqual({ session: { version: 0 }, profile: { version: 0 } });
      expect((await loaded(store, 'maya', 's2')).session).toEqual({ version: 0 });
    });

    it('lets exactly one of two saves against the same version through, however they interleave', async () => {
      const store = await makeStore();
      const results = await Promise.all([
        answer(store.save('maya', sessionWrite('s1', notes('first')))),
        answer(store.save('maya', sessionWrite('s1', notes('second')))),
      ]);
      expect(results.filter(E.isRight)).toHaveLength(1);
      expect(results.filter(E.isLeft).map((result) => E.isLeft(result) && result.left.code)).toEqual(['conflict']);
      const winner = results.findIndex(E.isRight) === 0 ? 'first' : 'second';
      expect((await loaded(store, 'maya', 's1')).session).toEqual({ value: notes(winner), version: 1 });
      // Ten writers racing from one version: one wins each round, and nothing is lost or doubled.
      for (let round = 1; round <= 3; round += 1) {
        const racing = await Promise.all(
          Array.from({ length: 10 }, (_, i) => answer(store.save('maya', sessionWrite('s1', notes(`w${i}`), round)))),
        );
        expect(racing.filter(E.isRight)).toHaveLength(1);
        expect((await loaded(store, 'maya', 's1')).session.version).toBe(round + 1);
      }
    });

    it('keeps JSON values as JSON: what is saved reads back equal, and later changes to it do not leak in', async () => {
      const store = await makeStore();
      const value = {
        text: 'quotes " and \\ backslashes, a line\nbreak, \u2028, emoji 🐙 and ü',
        numbers: [0, -1, 1.5, 1e21, Number.MAX_SAFE_INTEGER],
        flags: [true, false, null],
        nested: { deeper: { list: [[], {}, [{ a: 'b' }]] } },
        empty: '',
      };
      const given = structuredClone(value);
      await saved(store, 'maya', sessionWrite('s1', given));
      given.nested.deeper.list.push([]);
      given.text = 'changed';
      const first = await loaded(store, 'maya', 's1');
      expect(first.session.value).toEqual(value);
      (first.session.value as { text: string }).text = 'changed after reading';
      expect((await loaded(store, 'maya', 's1')).session.value).toEqual(value);
      for (const scalar of ['just text', 42, true, null] as const) {
        const fresh = await makeStore();
        await saved(fresh, 'maya', sessionWrite('s1', scalar));
        expect((await loaded(fresh, 'maya', 's1')).session).toEqual({ value: scalar, version: 1 });
      }
    });

    it('lists the sessions of a user whose records hold facts not merged yet, when it offers the list', async (context) => {
      const store = await makeStore();
      if (store.unmergedSessions === undefined) return context.skip('the adapter offers no unmergedSessions');
      const list = async (user: string): Promise<ReadonlyArray<string>> => {
        const result = await answer(store.unmergedSessions!(user));
        if (E.isLeft(result)) throw new Error(`list failed: ${result.left.code}: ${result.left.message}`);
        return [...result.right].sort();
      };
      expect(await list('maya')).toEqual([]);
      const record = (fields: Record<string, JsonValue>): JsonValue => ({ updatedAt: 1, ...fields });
      const fact = [{ category: 'People', fact: 'Partner is Jordan' }];
      await saved(store, 'maya', {
        sessions: [
          { session: 'new', value: record({ facts: fact, consolidated: false }), expected: 0 },
          { session: 'merged', value: record({ facts: fact, consolidated: true, mergedAt: 2 }), expected: 0 },
          // Changed since its merge, even to no fact at all: the profile still holds what it merged.
          { session: 'changed', value: record({ facts: [], consolidated: false, mergedAt: 2 }), expected: 0 },
          // Nothing noted and never merged: nothing to merge.
          { session: 'empty', value: record({ facts: [], consolidated: false }), expected: 0 },
          { session: 'constructor', value: record({ facts: fact, consolidated: false }), expected: 0 },
          { session: 'not notes', value: 'just text', expected: 0 },
        ],
      });
      await saved(store, 'jordan', sessionWrite('other', record({ facts: fact, consolidated: false })));
      expect(await list('maya')).toEqual(['changed', 'constructor', 'new']);
      expect(await list('jordan')).toEqual(['other']);
      expect(await list('nobody')).toEqual([]);
      // A merge saved makes it leave the list; an extraction after it brings it back.
      await saved(store, 'maya', sessionWrite('new', record({ facts: fact, consolidated: true, mergedAt: 3 }), 1));
      await saved(store, 'maya', sessionWrite('merged', record({ facts: fact, consolidated: false, mergedAt: 2 }), 1));
      expect(await list('maya')).toEqual(['changed', 'constructor', 'merged']);
    });

    it('keeps large values whole: a record of 2 MB and a user with 1,000 sessions', async () => {
      const store = await makeStore();
      const large = {
        facts: Array.from({ length: 25 }, (_, i) => ({ category: 'History', fact: `${i}`.padEnd(80_000, 'x') })),
      };
      await saved(store, 'maya', sessionWrite('big', large));
      expect((await loaded(store, 'maya', 'big')).session).toEqual({ value: large, version: 1 });
      for (let i = 0; i < 1_000; i += 1) await saved(store, 'jordan', sessionWrite(`s${i}`, notes(`fact ${i}`)));
      expect((await loaded(store, 'jordan', 's0')).session.value).toEqual(notes('fact 0'));
      expect((await loaded(store, 'jordan', 's999')).session.value).toEqual(notes('fact 999'));
    });
  });
};
