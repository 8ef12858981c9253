/**
 * The lease state machine by orderings on the memory store, under fake timers: two trackers (app
 * servers) on one store with leases, through the generated interleavings and invariants of
 * `leaseOrders.ts`. The orderings it found broken are kept as examples first.
 */
import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { CompleteFn } from '../../src/notes/port.js';
import { replayNotes } from '../../src/notes/events.js';
import { emptyNotesLedger } from '../../src/notes/ledger.js';
import type { NotesLeases } from '../../src/notes/leases.js';
import { memoryNotesStore, type NotesStore } from '../../src/notes/store.js';
import { storeFailure } from '../../src/notes/storeAnswer.js';
import type { NotableFactsTracker } from '../../src/notes/trackerTypes.js';
import { behaviour, command, extract, type Fact, LEASE, lines, POLL, runOrdering, server } from './leaseOrders.js';

/** Runs the fake clock in steps until `promise` settles (or `ms` have passed), and gives its value. */
const until = async <T>(promise: Promise<T>, ms = 20 * LEASE): Promise<T | undefined> => {
  let outcome: { value: T } | undefined;
  void promise.then((value) => {
    outcome = { value };
  });
  for (let waited = 0; outcome === undefined && waited < ms; waited += POLL) await vi.advanceTimersByTimeAsync(POLL);
  return outcome?.value;
};

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

/**
 * Server b extracts "m0" past its lease; a, where "m1" is recorded, takes the queue over once it
 * has expired, and its model fails, so the store holds no list of the session. `written` holds
 * every save the store took; with `failFirstSave`, the first save fails.
 */
const overtaken = async (
  failFirstSave = false,
): Promise<{ a: NotableFactsTracker; b: NotableFactsTracker; written: string[] }> => {
  const inner = memoryNotesStore({ now: () => Date.now() });
  const written: string[] = [];
  let saves = 0;
  const store: NotesStore = {
    ...inner,
    save: (user, write) => {
      saves += 1;
      if (failFirstSave && saves === 1) return E.left(storeFailure('unavailable', 'the connection dropped'));
      const answer = inner.save(user, write);
      if (E.isRight(answer as E.Either<unknown, unknown>)) written.push(JSON.stringify(write));
      return answer;
    },
  };
  const outcomes: Array<(prompt: string) => Promise<string>> = [
    (prompt) => new Promise((resolve) => setTimeout(() => resolve(extract(prompt)), LEASE + 26)),
    () => new Promise((_, reject) => setTimeout(() => reject(new Error('the model is down')), 1)),
  ];
  const complete: CompleteFn = (prompt) => (outcomes.shift() ?? ((text) => Promise.resolve(extract(text))))(prompt);
  const a = server(complete, store, 'a');
  const b = server(complete, store, 'b');
  b.recordUserMessage('maya', 's1', 'm0');
  await vi.advanceTimersByTimeAsync(1);
  a.recordUserMessage('maya', 's1', 'm1');
  return { a, b, written };
};

describe('two trackers on one store with leases, by orderings', () => {
  it('shows the next holder every message of its own it takes over, however many came while another held the lease', async () => {
    // Server a extracts "m1" (told at b) slowly, past its lease; b meanwhile records five more,
    // more than the turns its transcript keeps for messages another holder has, then takes the queue over.
    const store = memoryNotesStore({ now: () => Date.now() });
    const delays = [1, LEASE + 50];
    const prompts: string[] = [];
    const complete: CompleteFn = (prompt) => {
      prompts.push(prompt);
      return new Promise((resolve) => setTimeout(() => resolve(extract(prompt)), delays.shift() ?? 1));
    };
    const [a, b] = ['a', 'b'].map((holder) => server(complete, store, holder));
    a!.recordUserMessage('maya', 's1', 'm0');
    await vi.advanceTimersByTimeAsync(0);
    b!.recordUserMessage('maya', 's1', 'm1');
    await vi.advanceTimersByTimeAsync(2);
    expect(prompts.at(-1)).toMatch(/Latest user message:\nUser: m1\n/u);
    for (const text of ['m2', 'm3', 'm4', 'm5', 'm6']) b!.recordUserMessage('maya', 's1', text);
    await until(Promise.all([a!.settled(), b!.settled()]));
    await until(Promise.all([a!.close(), b!.close()]));
    // b's extraction, made once a's lease expired, covers m1 with the rest.
    expect(prompts).toHaveLength(3);
    expect(prompts[2]).toMatch(/User: m1\n[\s\S]*Latest user message:\nUser: m6\n/u);
    const records = await store.load('maya', 's1');
    const facts = E.isRight(records) ? (records.right.session.value as unknown as { facts: Fact[] }).facts : [];
    expect(facts.map((fact) => fact.fact)).toEqual([
      'Said m0',
      'Said m1',
      'Said m2',
      'Said m3',
      'Said m4',
      'Said m5',
      'Said m6',
    ]);
  });

  it('writes nothing of a holder’s work fenced by another, not even in an end of stage of every session asked there', async () => {
    // b's late work is refused as fenced, and its end of stage of every session must not write it either.
    const { a, b, written } = await overtaken();
    await vi.advanceTimersByTimeAsync(LEASE + 23);
    const stage = b.endStage('maya');
    await until(Promise.all([a.settled(), b.settled()]));
    const report = await until(stage);
    await until(Promise.all([a.close(), b.close()]));
    expect(written.filter((write) => write.includes('Said m0'))).toEqual([]);
    // The end of stage is answered, and merged nothing of the dropped work.
    const merged = report !== undefined && E.isRight(report) ? (report.right.profile?.facts ?? []) : undefined;
    expect(merged?.map((fact) => fact.fact)).toEqual([]);
  });

  it('keeps nothing of a holder’s fenced merge in its profile when the store holds none, nor writes it with a later merge', async () => {
    // b's first save fails, so its late extraction of "m0" counts as settled there and its end of
    // stage of every session merges it; that merge's save is refused as fenced. The store holds no
    // profile, so the load that follows finds none to put in place of the merge.
    const { a, b, written } = await overtaken(true);
    await vi.advanceTimersByTimeAsync(LEASE + 26);
    const stage = b.endStage('maya');
    await until(Promise.all([a.settled(), b.settled()]));
    await until(stage);
    expect(b.contextFor('maya', 's2')).toEqual(E.right(expect.objectContaining({ profile: '' })));
    // A later merge in b saves the profile: without the dropped merge.
    b.recordUserMessage('maya', 's2', 'm2');
    await until(b.settled());
    await until(b.endStage('maya', 's2'));
    await until(Promise.all([a.close(), b.close()]));
    expect(written.filter((write) => write.includes('Said m0'))).toEqual([]);
    expect(replayNotes(b.events(), emptyNotesLedger())).toEqual(b.getSnapshot());
  });

  it('queues a message recorded while a lease call of a store that answers later ran, as the extraction starts', async () => {
    // As on PostgreSQL: server a records m0 and m1 at once, so m1 waits for the answer of the
    // call that adds m0 and takes the lease. a's model never answers and a is closed; b, where a
    // stage ends, takes the queue over once a's lease has expired, and must find m1 there.
    const inner = memoryNotesStore({ now: () => Date.now() });
    const store: NotesStore = {
      ...inner,
      leases: {
        lease: (...call) => new Promise((resolve) => setTimeout(() => resolve(inner.leases.lease(...call)), 1)),
      },
    };
    const prompts: string[] = [];
    const a = server((prompt) => (prompts.push(prompt), new Promise<string>(() => undefined)), store, 'a');
    const b = server((prompt) => Promise.resolve(extract(prompt)), store, 'b');
    a.recordUserMessage('maya', 's1', 'm0');
    a.recordUserMessage('maya', 's1', 'm1');
    await vi.advanceTimersByTimeAsync(5);
    expect(prompts).toHaveLength(1);
    await until(a.close());
    const stage = await until(b.endStage('maya', 's1'));
    expect(stage !== undefined && E.isRight(stage)).toBe(true);
    await until(b.close());
    const records = await inner.load('maya', 's1');
    const facts = E.isRight(records) ? (records.right.session.value as unknown as { facts: Fact[] }).facts : [];
    expect(facts.map((fact) => fact.fact)).toEqual(['Said m0', 'Said m1']);
  });

  it.each([
    ['hangs, and a is closed while it runs', false],
    ['answers after the retry', true],
  ])(
    'queues again what the failed lease call at the start of an extraction was to add, while that extraction runs, when a’s model %s',
    async (_, answers) => {
      // Server a records m0 and m1 at once: m1 waits for the answer of the call that adds m0 and
      // takes the lease, then goes with the call a makes as it starts extracting m0, which fails.
      // m1 is counted as settled there, not lost: a adds it again after leasePollMs, as that
      // extraction still runs. Then m2 comes to a, a stage ends at b, and a is closed; its model
      // never answers (b takes the queue over once a's lease has expired) or answers itself.
      const inner = memoryNotesStore({ now: () => Date.now() });
      const queued: string[] = [];
      const prompts: string[] = [];
      let failedAfter: number | undefined;
      /** The store's answer, but the call that adds m1 first fails; the items each answered call added are kept in `queued`. */
      const answer: NotesLeases['lease'] = async (user, session, request) => {
        if (failedAfter === undefined && request.add?.some((item) => item.text === 'm1') === true) {
          failedAfter = prompts.length;
          return E.left(storeFailure('unavailable', 'the connection dropped'));
        }
        const answered = await inner.leases.lease(user, session, request);
        if (E.isRight(answered)) queued.push(...(request.add ?? []).map((item) => item.text ?? item.kind));
        return answered;
      };
      const store: NotesStore = {
        ...inner,
        leases: { lease: (...call) => new Promise((resolve) => setTimeout(() => resolve(answer(...call)), 1)) },
      };
      const heard: Record<'a' | 'b', string[]> = { a: [], b: [] };
      const model: CompleteFn = (prompt) => {
        prompts.push(prompt);
        if (!answers) return new Promise<string>(() => undefined);
        return new Promise((resolve) => setTimeout(() => resolve(extract(prompt)), 3 * POLL));
      };
      const a = server(model, store, 'a', 1, (failure) => heard.a.push(failure.code));
      const b = server(
        (prompt) => Promise.resolve(extract(prompt)),
        inner,
        'b',
        1,
        (failure) => heard.b.push(failure.code),
      );
      a.recordUserMessage('maya', 's1', 'm0');
      a.recordUserMessage('maya', 's1', 'm1');
      await vi.advanceTimersByTimeAsync(5);
      // The call that failed is the one made as the extraction of m0 started.
      expect(failedAfter).toBe(1);
      expect(prompts[0]).toMatch(/Latest user message:\nUser: m0\n/u);
      expect(heard.a).toEqual(['unavailable']);
      await vi.advanceTimersByTimeAsync(POLL + 5);
      expect(queued).toEqual(['m0', 'm1']);
      a.recordUserMessage('maya', 's1', 'm2');
      await vi.advanceTimersByTimeAsync(2);
      expect(queued).toEqual(['m0', 'm1', 'm2']);
      const stage = b.endStage('maya', 's1');
      await vi.advanceTimersByTimeAsync(2);
      await until(a.close());
      const report = await until(stage);
      const merged = report !== undefined && E.isRight(report) ? (report.right.profile?.facts ?? []) : undefined;
      expect(merged?.map((fact) => fact.fact).sort(), 'the end of stage at b').toEqual([
        'Said m0',
        'Said m1',
        'Said m2',
      ]);
      await until(b.close());
      const reader = server((prompt) => Promise.resolve(extract(prompt)), inner, 'reader');
      expect(await until(reader.load('maya', 's1'))).toEqual(E.right(undefined));
      expect(await until(reader.load('maya', 's2'))).toEqual(E.right(undefined));
      const [session, profile] = [reader.contextFor('maya', 's1'), reader.contextFor('maya', 's2')].map((context) =>
        E.isRight(context) ? lines(context.right.session || context.right.profile) : [],
      );
      // Every message noted once, in the session and in the profile the end of stage merged.
      expect(session).toEqual(['- Said m0', '- Said m1', '- Said m2']);
      expect([...profile!].sort()).toEqual(session);
      // The failure was heard once, and no message was reported lost.
      expect(heard).toEqual({ a: ['unavailable'], b: [] });
      await until(reader.close());
      for (const tracker of [a, b])
        expect(replayNotes(tracker.events(), emptyNotesLedger())).toEqual(tracker.getSnapshot());
    },
  );

  it('loads the notes again after taking the lease when its load ran before: a load read before the last holder saved would undo that save', async () => {
    // As on PostgreSQL, where each server has a pool of its own: b's load reads the store before
    // a saves the extraction of m0, and answers only after b's lease call, made with it and run
    // after a freed the lease, has given b the lease. The notes b works from must be read after
    // that: else its extraction of m2 replaces the list holding m0, once its save's conflict has
    // it applied again over the newer record.
    const inner = memoryNotesStore({ now: () => Date.now() });
    const later = <T>(ms: number, answer: () => T): Promise<Awaited<T>> =>
      new Promise((resolve) => setTimeout(() => resolve(answer() as Awaited<T>), ms));
    const slow: NotesStore = {
      ...inner,
      // Read at once, answered after 10 ms.
      load: (user, session) => {
        const read = inner.load(user, session);
        return later(10, () => read);
      },
      // Run after 5 ms.
      leases: { lease: (...call) => later(5, () => inner.leases.lease(...call)) },
    };
    const a = server((prompt) => later(2, () => extract(prompt)), inner, 'a');
    const b = server((prompt) => Promise.resolve(extract(prompt)), slow, 'b');
    a.recordUserMessage('maya', 's1', 'm0');
    await vi.advanceTimersByTimeAsync(1);
    b.recordUserMessage('maya', 's1', 'm2');
    expect(await until(Promise.all([a.settled(), b.settled()]))).toBeDefined();
    await until(Promise.all([a.close(), b.close()]));
    const records = await inner.load('maya', 's1');
    const facts = E.isRight(records) ? (records.right.session.value as unknown as { facts: Fact[] }).facts : [];
    expect(facts.map((fact) => fact.fact)).toEqual(['Said m0', 'Said m2']);
  });

  it('lose no message, never go back to an older list, say no fact twice and keep the correction told last', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(command, { minLength: 1, maxLength: 24 }),
        fc.array(behaviour, { maxLength: 12 }),
        async (commands, plan) => {
          const store = memoryNotesStore({ now: () => Date.now() });
          await runOrdering(
            {
              store: () => store,
              pass: (ms) => vi.advanceTimersByTimeAsync(ms).then(() => undefined),
              until,
              scale: 1,
              order: 'recorded',
            },
            commands,
            plan,
          );
        },
      ),
      { numRuns: 60 },
    );
  });

  it('lose no message, never go back to an older list, say no fact twice and keep the correction told last, whatever the order in which calls asked together run and answer', async () => {
    // As each server's pool on PostgreSQL: every call of the store runs after a delay and answers
    // after another, each up to a quarter of the lease (so a call takes at most half of it), and a
    // call asked after another may run or answer first. The messages count in the queue's order.
    // Such orderings found the load a new holder had asked before it took the lease (the example
    // above); 200 runs take under a second.
    await fc.assert(
      fc.asyncProperty(
        fc.array(command, { minLength: 1, maxLength: 24 }),
        fc.array(behaviour, { maxLength: 12 }),
        fc.array(fc.tuple(fc.nat(LEASE / 4), fc.nat(LEASE / 4)), { minLength: 1, maxLength: 40 }),
        async (commands, plan, delays) => {
          const inner = memoryNotesStore({ now: () => Date.now() });
          let calls = 0;
          const later = <T>(answer: () => T): Promise<Awaited<T>> => {
            const [runs, answers] = delays[calls++ % delays.length]!;
            return new Promise<Awaited<T>>((resolve) => setTimeout(() => resolve(answer() as Awaited<T>), runs)).then(
              (value) => new Promise((resolve) => setTimeout(() => resolve(value), answers)),
            );
          };
          const store: NotesStore = {
            load: (user, session) => later(() => inner.load(user, session)),
            save: (user, write) => later(() => inner.save(user, write)),
            unmergedSessions: (user) => later(() => inner.unmergedSessions(user)),
            leases: { lease: (...call) => later(() => inner.leases.lease(...call)) },
          };
          const pass = (ms: number): Promise<void> => vi.advanceTimersByTimeAsync(ms).then(() => undefined);
          await runOrdering({ store: () => store, pass, until, scale: 1, order: 'queued' }, commands, plan);
        },
      ),
      { numRuns: 200 },
    );
  });
});
