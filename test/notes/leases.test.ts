/**
 * Trackers sharing a store with leases take turns on each (user, session), as processes sharing
 * a database do: never two extractions of one (user, session) at once, messages recorded at
 * either meanwhile folded into one follow-up, an end of stage merged once by whoever holds the
 * lease, and a holder that stops answering taken over once its lease expires.
 */
import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { replayNotes } from '../../src/notes/events.js';
import { emptyNotesLedger, selectGlobalFacts, selectSessionFacts } from '../../src/notes/ledger.js';
import type { CompleteFn } from '../../src/notes/port.js';
import type { NotesLeases } from '../../src/notes/leases.js';
import { memoryNotesStore, type NotesStore, type NotesWrite, storeFailure } from '../../src/notes/store.js';
import { createNotableFactsTracker } from '../../src/notes/tracker.js';
import type { NotableFactsTracker } from '../../src/notes/trackerTypes.js';

const answer = (...facts: string[]): string =>
  JSON.stringify({ notableFacts: facts.map((fact) => ({ category: 'History', fact })) });

/** Every message a prompt shows (the latest and those before it), and the facts it lists. */
const told = (prompt: string): string[] => [
  ...[...prompt.matchAll(/"fact":"([^"]*)"/gu)].map((match) => match[1]!),
  ...[...prompt.matchAll(/^User: (.*)$/gmu)].map((match) => `Said ${match[1]}`),
];

/** A model whose calls stay open until the test answers them, counting the calls running at once. */
const sharedModel = () => {
  const calls: Array<{ prompt: string; resolve: (text: string) => void }> = [];
  let running = 0;
  let most = 0;
  const complete: CompleteFn = (prompt) => {
    running += 1;
    most = Math.max(most, running);
    return new Promise((resolve) => {
      calls.push({
        prompt,
        resolve: (text) => {
          running -= 1;
          resolve(text);
        },
      });
    });
  };
  /** Answers the oldest open call with everything its prompt told. */
  const answerNext = async (): Promise<string> => {
    const next = calls.shift();
    if (next === undefined) throw new Error('no model call is open');
    next.resolve(answer(...new Set(told(next.prompt))));
    await new Promise((resolve) => setTimeout(resolve, 0));
    return next.prompt;
  };
  return { complete, calls, answerNext, most: () => most };
};

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `store` as a tracker cut off from it sees it: its saves and lease calls fail while `saves()` and `calls()` say so. */
const failing = (
  store: ReturnType<typeof memoryNotesStore>,
  down: { readonly saves?: () => boolean; readonly calls?: () => boolean },
): NotesStore =>
  ({
    ...store,
    save: (user: string, write: NotesWrite) =>
      down.saves?.() === true ? E.left(storeFailure('unavailable', 'saves down')) : store.save(user, write),
    leases: {
      lease: (...call: Parameters<NotesLeases['lease']>) =>
        down.calls?.() === true ? E.left(storeFailure('unavailable', 'leases down')) : store.leases.lease(...call),
    },
  }) as NotesStore;

/** The facts the store holds for maya in `session`, sorted. */
const storedFacts = async (store: NotesStore, session: string): Promise<string[]> => {
  const records = await store.load('maya', session);
  const value = E.isRight(records) ? (records.right.session.value as { facts?: Array<{ fact: string }> }) : {};
  return (value?.facts ?? []).map((fact) => fact.fact).sort();
};

/** `promise`, or a failure naming `what` when it has not settled within 3 s. */
const within = <T>(promise: Promise<T>, what: string): Promise<T> =>
  Promise.race([
    promise,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} did not settle`)), 3_000)),
  ]);

/** `store` as a database answers it: a load (and, with `saves`, a save) a moment later, never within the call. */
const answeringLater = (store: ReturnType<typeof memoryNotesStore>, saves = false): NotesStore => ({
  ...store,
  load: async (user, session) => {
    await sleep(5);
    return store.load(user, session);
  },
  ...(saves
    ? {
        save: async (user: string, write: NotesWrite) => {
          await sleep(5);
          return store.save(user, write);
        },
      }
    : {}),
});

/** A model that notes everything its prompt told, at once. */
const noteAll: CompleteFn = (prompt) => Promise.resolve(answer(...new Set(told(prompt))));

/** The record of maya in `session` edited in `store` into a shape no tracker can read. */
const makeUnreadable = async (store: NotesStore, session: string): Promise<void> => {
  const records = await store.load('maya', session);
  const version = E.isRight(records) ? records.right.session.version : 0;
  await store.save('maya', { sessions: [{ session, expected: version, value: { facts: 5 } }] });
};

/**
 * Two trackers on one store with leases (looking again every `leasePollMs` while an end of stage
 * of theirs waits), and `a` holding the lease of (maya, s1) with an extraction of "one" running.
 */
const holding = async (leasePollMs?: number) => {
  const store = memoryNotesStore();
  const model = sharedModel();
  const poll = leasePollMs === undefined ? {} : { leasePollMs };
  const a = createNotableFactsTracker({ complete: model.complete, store, holder: 'a', ...poll });
  const b = createNotableFactsTracker({ complete: model.complete, store, holder: 'b', ...poll });
  a.recordUserMessage('maya', 's1', 'one');
  await tick();
  return { store, model, a, b };
};

describe('trackers sharing a store with leases', () => {
  it('never extract one session at once: the other tracker’s messages fold into the holder’s one follow-up', async () => {
    const { store, model, a, b } = await holding();
    expect(model.calls).toHaveLength(1);
    // Meanwhile, at both trackers: no second extraction starts.
    b.recordUserMessage('maya', 's1', 'two');
    a.recordUserMessage('maya', 's1', 'three');
    b.recordUserMessage('maya', 's1', 'four');
    await tick();
    expect(model.calls).toHaveLength(1);
    await model.answerNext();
    await tick();
    // One follow-up, at the holder, covering all three.
    expect(model.calls).toHaveLength(1);
    const followUp = await model.answerNext();
    expect(followUp).toMatch(/User: one\nUser: two\nUser: three\n\nLatest user message:\nUser: four/u);
    await Promise.all([a.settled(), b.settled()]);
    expect(model.calls).toHaveLength(0);
    expect(model.most()).toBe(1);
    const records = await store.load('maya', 's1');
    const stored = E.isRight(records) ? (records.right.session.value as { facts: Array<{ fact: string }> }).facts : [];
    expect(stored.map((fact) => fact.fact).sort()).toEqual(['Said four', 'Said one', 'Said three', 'Said two']);
    // The other tracker reads the holder's facts when it loads.
    await b.load('maya', 's1');
    expect(
      selectSessionFacts(b.getSnapshot(), 'maya', 's1')
        .map((fact) => fact.fact)
        .sort(),
    ).toEqual(['Said four', 'Said one', 'Said three', 'Said two']);
  });

  it('merges an end of stage asked for at the other tracker once, after the holder’s extraction, and answers it there', async () => {
    const { store, model, a, b } = await holding(10);
    const stage = b.endStage('maya', 's1');
    b.recordUserMessage('maya', 's1', 'after the stage');
    await tick();
    await model.answerNext();
    // The holder merged the stage, then extracts the message that came after it.
    expect(model.calls).toHaveLength(1);
    const report = await stage;
    expect(E.isRight(report) && report.right).toMatchObject({ user: 'maya', sessions: ['s1'] });
    expect(E.isRight(report) && report.right.profile?.facts.map((fact) => fact.fact)).toEqual(['Said one']);
    await model.answerNext();
    await Promise.all([a.settled(), b.settled()]);
    const records = await store.load('maya', 's1');
    expect(E.isRight(records) && records.right.profile.value).toMatchObject({
      sessionCount: 1,
      facts: [{ category: 'History', fact: 'Said one', session: 's1' }],
    });
    expect(selectGlobalFacts(a.getSnapshot(), 'maya')?.sessionCount).toBe(1);
  });

  it('takes over the queue of a holder that stopped answering once its lease has expired', async () => {
    const store = memoryNotesStore();
    const stuck: CompleteFn = () => new Promise(() => undefined);
    const model = sharedModel();
    const crashed = createNotableFactsTracker({
      complete: stuck,
      store,
      holder: 'crashed',
      timeoutMs: 60_000,
      leaseMs: 150,
    });
    const b = createNotableFactsTracker({ complete: model.complete, store, holder: 'b', leaseMs: 150 });
    crashed.recordUserMessage('maya', 's1', 'one');
    await tick();
    b.recordUserMessage('maya', 's1', 'two');
    await tick();
    expect(model.calls).toHaveLength(0);
    // b looks again once the lease would expire, and takes the whole queue.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(model.calls).toHaveLength(1);
    const prompt = await model.answerNext();
    expect(prompt).toMatch(/User: one[\s\S]*Latest user message:\nUser: two/u);
    await b.settled();
    const records = await store.load('maya', 's1');
    expect(
      E.isRight(records) &&
        (records.right.session.value as { facts: Array<{ fact: string }> }).facts.map((f) => f.fact),
    ).toEqual(['Said one', 'Said two']);
  });

  it('keeps the list of the holder that took over: the one paused past its lease does not put back its older list', async () => {
    const store = memoryNotesStore();
    const paused = sharedModel();
    const model = sharedModel();
    const a = createNotableFactsTracker({
      complete: paused.complete,
      store,
      holder: 'a',
      timeoutMs: 60_000,
      leaseMs: 150,
    });
    const b = createNotableFactsTracker({ complete: model.complete, store, holder: 'b', leaseMs: 150 });
    a.recordUserMessage('maya', 's1', 'one');
    await new Promise((resolve) => setTimeout(resolve, 5));
    b.recordUserMessage('maya', 's1', 'two');
    // a's model call outlasts its lease: b takes the queue over (within 3 s) and extracts both messages.
    for (let waited = 0; waited < 300 && model.calls.length === 0; waited += 1)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(model.calls).toHaveLength(1);
    expect(await model.answerNext()).toMatch(/User: one[\s\S]*Latest user message:\nUser: two/u);
    await within(b.settled(), 'b');
    // Then a's extraction of "one" alone comes back; its save meets b's.
    expect(await paused.answerNext()).toMatch(/Latest user message:\nUser: one/u);
    await within(a.settled(), 'a');
    const records = await store.load('maya', 's1');
    const facts = E.isRight(records) ? (records.right.session.value as { facts: Array<{ fact: string }> }).facts : [];
    expect(facts.map((fact) => fact.fact).sort()).toEqual(['Said one', 'Said two']);
    expect(
      selectSessionFacts(a.getSnapshot(), 'maya', 's1')
        .map((fact) => fact.fact)
        .sort(),
    ).toEqual(['Said one', 'Said two']);
  });

  it('fences the saves of a holder paused past its lease: once another took it over, nothing of its work is written, and it leaves the queue to that holder', async () => {
    const store = memoryNotesStore();
    const saves: string[] = [];
    /** The store as the tracker `name` sees it, noting the outcome of each of its saves. */
    const seenBy = (name: string): NotesStore => ({
      ...store,
      save: (user, write) => {
        const answer = store.save(user, write);
        // The memory store answers at once.
        const outcome = answer as E.Either<{ readonly code: string }, unknown>;
        saves.push(`${name}: ${E.isRight(outcome) ? 'saved' : outcome.left.code}`);
        return answer;
      },
    });
    const paused = sharedModel();
    const model = sharedModel();
    const heard: string[] = [];
    const a = createNotableFactsTracker({
      complete: paused.complete,
      store: seenBy('a'),
      holder: 'a',
      timeoutMs: 60_000,
      leaseMs: 150,
      onError: (failure) => heard.push(failure.code),
    });
    const b = createNotableFactsTracker({ complete: model.complete, store: seenBy('b'), holder: 'b', leaseMs: 150 });
    a.recordUserMessage('maya', 's1', 'one');
    await new Promise((resolve) => setTimeout(resolve, 5));
    b.recordUserMessage('maya', 's1', 'two');
    for (let waited = 0; waited < 300 && model.calls.length === 0; waited += 1)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(model.calls).toHaveLength(1);
    // a's extraction of "one" comes back while b's runs: under a lease b holds now, a writes nothing.
    expect(await paused.answerNext()).toMatch(/Latest user message:\nUser: one/u);
    await within(a.settled(), 'a');
    expect(saves).toEqual(['a: fenced']);
    expect(heard).toEqual(['fenced']);
    expect(await model.answerNext()).toMatch(/User: one[\s\S]*Latest user message:\nUser: two/u);
    await within(b.settled(), 'b');
    await within(a.settled(), 'a');
    expect(saves).toEqual(['a: fenced', 'b: saved']);
    const records = await store.load('maya', 's1');
    const facts = E.isRight(records) ? (records.right.session.value as { facts: Array<{ fact: string }> }).facts : [];
    expect(facts.map((fact) => fact.fact)).toEqual(['Said one', 'Said two']);
    // a reads what b saved once it loads again; nothing of it waits in a, and the lease is free.
    expect(E.isRight(await a.load('maya', 's1'))).toBe(true);
    expect(selectSessionFacts(a.getSnapshot(), 'maya', 's1').map((fact) => fact.fact)).toEqual([
      'Said one',
      'Said two',
    ]);
    // It hears that b did its message at b's lease's expiry at the latest.
    for (let waited = 0; waited < 100 && a.retained().inFlight > 0; waited += 1)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(a.retained().inFlight).toBe(0);
    expect(saves).toEqual(['a: fenced', 'b: saved']);
    expect(await store.leases.lease('maya', 's1', { holder: 'c', ttlMs: 1_000 })).toEqual(
      E.right({ held: false, added: [], queue: [] }),
    );
  });

  it('settles only once its work is reported to the store: nothing in flight after settled(), the lease free', async () => {
    const store = memoryNotesStore();
    const model = sharedModel();
    const tracker = createNotableFactsTracker({ complete: model.complete, store, holder: 'a' });
    tracker.recordUserMessage('maya', 's1', 'one');
    await tick();
    await model.answerNext();
    await tracker.settled();
    expect(tracker.retained().inFlight).toBe(0);
    // The lease is free: another tracker takes it at once.
    const other = await store.leases!.lease('maya', 's1', { holder: 'b', ttlMs: 1_000, add: [{ kind: 'message' }] });
    expect(E.isRight(other) && other.right).toMatchObject({ held: true, queue: [{ kind: 'message', origin: 'b' }] });
  });

  it('closes as a server shuts down: refuses new work, and resolves once its own work, the items added meanwhile included, is saved and the lease free', async () => {
    const { store, model, a, b } = await holding();
    // At b while a holds the lease: the item waits in the shared queue for a.
    b.recordUserMessage('maya', 's1', 'two');
    await tick();
    let closed = false;
    const closing = a.close().then(() => {
      closed = true;
    });
    expect(a.close()).toBe(a.close());
    expect(a.recordUserMessage('maya', 's1', 'three')).toEqual(
      E.left({ code: 'closed', message: 'the tracker is closed: it takes no more work' }),
    );
    expect(a.recordAssistantMessage('maya', 's1', 'noted')).toMatchObject(E.left({ code: 'closed' }));
    expect(await a.load('maya', 's2')).toMatchObject(E.left({ code: 'closed' }));
    expect(await a.endStage('maya', 's1')).toMatchObject(E.left({ code: 'closed' }));
    // What it holds still answers.
    expect(E.isRight(a.contextFor('maya', 's1'))).toBe(true);
    await model.answerNext();
    await tick();
    expect(closed).toBe(false);
    // The follow-up of b's message, taken from the queue a held, runs before a closes.
    expect(model.calls).toHaveLength(1);
    expect(model.calls[0]!.prompt).toContain('two');
    await model.answerNext();
    await within(closing, 'close');
    expect(a.retained().inFlight).toBe(0);
    expect(selectSessionFacts(a.getSnapshot(), 'maya', 's1').map(({ fact }) => fact)).toEqual(['Said one', 'Said two']);
    const other = await store.leases!.lease('maya', 's1', { holder: 'c', ttlMs: 1_000, add: [{ kind: 'message' }] });
    expect(E.isRight(other) && other.right).toMatchObject({ held: true, queue: [{ kind: 'message', origin: 'c' }] });
    // b closes at once: its item was a's to do.
    await within(b.close(), 'close of b');
  });

  it('closes at twice leaseMs even while its model call runs: the message stays queued, the next holder extracts it, and the late answer is not taken', async () => {
    const store = memoryNotesStore();
    const model = sharedModel();
    const saved: string[] = [];
    const saving = (name: string): NotesStore =>
      ({
        ...store,
        save: (user: string, write: NotesWrite) => {
          saved.push(name);
          return store.save(user, write);
        },
      }) as NotesStore;
    // A model call may take timeoutMs (15 s by default), far past twice leaseMs.
    const options = { complete: model.complete, leaseMs: 100, leasePollMs: 10 };
    const a = createNotableFactsTracker({ ...options, store: saving('a'), holder: 'a' });
    const b = createNotableFactsTracker({ ...options, store: saving('b'), holder: 'b' });
    a.recordUserMessage('maya', 's1', 'one');
    await tick();
    expect(model.calls).toHaveLength(1);
    const started = Date.now();
    await within(a.close(), 'close');
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(model.calls).toHaveLength(1);
    // a's lease has expired unrenewed: b takes it over with the whole queue, "one" included.
    b.recordUserMessage('maya', 's1', 'two');
    for (let waited = 0; waited < 300 && model.calls.length < 2; waited += 1) await sleep(10);
    await model.answerNext();
    expect(await model.answerNext()).toMatch(/User: one\n\nLatest user message:\nUser: two/u);
    await within(b.settled(), 'b');
    expect(await storedFacts(store, 's1')).toEqual(['Said one', 'Said two']);
    expect(saved.every((name) => name === 'b')).toBe(true);
    await within(b.close(), 'close of b');
  });

  it('merges an end of stage without a session once the extraction it waits for is done under the lease', async () => {
    const store = memoryNotesStore();
    const model = sharedModel();
    const tracker = createNotableFactsTracker({ complete: model.complete, store, holder: 'a' });
    tracker.recordUserMessage('maya', 's1', 'one');
    const stage = tracker.endStage('maya');
    await tick();
    await model.answerNext();
    const report = await within(stage, 'the end of stage without a session');
    expect(E.isRight(report) && report.right).toMatchObject({ user: 'maya', sessions: ['s1'] });
    expect(E.isRight(report) && report.right.profile?.facts.map((fact) => fact.fact)).toEqual(['Said one']);
    await within(tracker.close(), 'close');
  });

  it('closes only once an end of stage asked for there and merged by the other holder is answered', async () => {
    const { model, a, b } = await holding(10);
    const stage = b.endStage('maya', 's1');
    await tick();
    let closed = false;
    const closing = b.close().then(() => {
      closed = true;
    });
    await tick();
    // The end of stage waits in a's queue: b is not done with it yet.
    expect(closed).toBe(false);
    await model.answerNext();
    const report = await within(stage, 'the end of stage asked for at b');
    expect(E.isRight(report) && report.right).toMatchObject({ user: 'maya', sessions: ['s1'] });
    await within(closing, 'close of b');
    await within(a.close(), 'close of a');
  });

  it('keeps the report of finished work that waits for its save when a call only adds items: nothing is worked twice', async () => {
    const inner = memoryNotesStore();
    const saves: Array<() => void> = [];
    // Saves wait until the test lets them through; loads and leases answer at once.
    const store = {
      load: inner.load,
      leases: inner.leases!,
      save: (user: string, write: NotesWrite) =>
        new Promise<ReturnType<typeof inner.save>>((resolve) => saves.push(() => resolve(inner.save(user, write)))),
    } as NotesStore;
    const model = sharedModel();
    const tracker = createNotableFactsTracker({ complete: model.complete, store, holder: 'a' });
    tracker.recordUserMessage('maya', 's1', 'one');
    const stage = tracker.endStage('maya', 's1');
    await tick();
    const prompts = [await model.answerNext()];
    // The extraction of "one" is saving; a message comes meanwhile, and goes to the queue.
    tracker.recordUserMessage('maya', 's1', 'two');
    await tick();
    for (let round = 0; round < 10 && (saves.length > 0 || model.calls.length > 0); round += 1) {
      saves.splice(0).forEach((release) => release());
      await tick();
      if (model.calls.length > 0) prompts.push(await model.answerNext());
    }
    const settled = tracker.settled();
    for (let round = 0; round < 10; round += 1) {
      saves.splice(0).forEach((release) => release());
      await tick();
    }
    await settled;
    expect(E.isRight(await stage)).toBe(true);
    const latest = prompts.map((prompt) => /Latest user message:\nUser: (.*)/u.exec(prompt)?.[1]);
    expect(latest).toEqual(['one', 'two']);
  });

  /**
   * Two trackers on one store, `a` failing its first `failing` saves (unavailable) and noting
   * the outcome of each save, `a` holding the lease of (maya, s1) with its extraction of "one"
   * answered and its save failed.
   */
  const failingSave = async (failing: number, leaseMs?: number) => {
    const store = memoryNotesStore();
    const saves: string[] = [];
    let failed = 0;
    const save = (name: string, user: string, write: NotesWrite) => {
      if (name === 'a' && failed < failing) {
        failed += 1;
        saves.push(`${name}: unavailable`);
        return E.left(storeFailure('unavailable', 'the connection was lost'));
      }
      const outcome = store.save(user, write) as E.Either<{ readonly code: string }, unknown>;
      saves.push(`${name}: ${E.isRight(outcome) ? 'saved' : outcome.left.code}`);
      return outcome;
    };
    const model = sharedModel();
    const heard: string[] = [];
    const options = { complete: model.complete, leasePollMs: 10, ...(leaseMs === undefined ? {} : { leaseMs }) };
    const a = createNotableFactsTracker({
      ...options,
      store: { ...store, save: (user, write) => save('a', user, write) } as NotesStore,
      holder: 'a',
      onError: (failure) => heard.push(failure.code),
    });
    const b = createNotableFactsTracker({
      ...options,
      store: { ...store, save: (user, write) => save('b', user, write) } as NotesStore,
      holder: 'b',
    });
    a.recordUserMessage('maya', 's1', 'one');
    await tick();
    await model.answerNext();
    expect(saves).toEqual(['a: unavailable']);
    const facts = async (): Promise<string[]> => {
      const records = await store.load('maya', 's1');
      return E.isRight(records)
        ? (records.right.session.value as { facts: Array<{ fact: string }> }).facts.map((fact) => fact.fact).sort()
        : [];
    };
    return { store, model, a, b, saves, heard, facts };
  };

  it('says finished work done only once its save has landed: a failed save is tried again, and a message that comes meanwhile does not take its place', async () => {
    const { model, a, b, saves, heard, facts } = await failingSave(1);
    // Another tracker's message comes while a's save waits to be tried again: it joins a's queue.
    b.recordUserMessage('maya', 's1', 'two');
    for (let waited = 0; waited < 300 && model.calls.length === 0; waited += 1)
      await new Promise((resolve) => setTimeout(resolve, 10));
    // The extraction of "two" starts from the list that holds "one", saved by then.
    const prompt = await model.answerNext();
    await within(Promise.all([a.settled(), b.settled()]), 'the trackers');
    expect(await facts()).toEqual(['Said one', 'Said two']);
    expect(prompt).toMatch(/"fact":"Said one"[\s\S]*Latest user message:\nUser: two/u);
    expect(saves).toEqual(['a: unavailable', 'a: saved', 'a: saved']);
    expect(heard).toEqual(['unavailable']);
    expect(model.calls).toHaveLength(0);
  });

  it('keeps its lease while its saves fail for longer than the lease lasts: it renews it and goes on with the queue, no other tracker extracts the session, and all is saved once the store takes it', async () => {
    const { model, a, b, saves, facts } = await failingSave(6, 150);
    // settled() does not wait for a failed save to be tried again, as without leases.
    await within(a.settled(), 'a');
    b.recordUserMessage('maya', 's1', 'two');
    // "two" joins a's queue, and a extracts it from what it holds, while its saves still fail.
    for (let waited = 0; waited < 300 && model.calls.length === 0; waited += 1)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await model.answerNext()).toMatch(/"fact":"Said one"[\s\S]*Latest user message:\nUser: two/u);
    // The retries outlast the lease (10, 20, 40, then 50 ms each); a saves both once the store takes it.
    for (let waited = 0; waited < 300 && !saves.includes('a: saved'); waited += 1)
      await new Promise((resolve) => setTimeout(resolve, 10));
    await within(Promise.all([a.settled(), b.settled()]), 'the trackers');
    expect(await facts()).toEqual(['Said one', 'Said two']);
    expect(saves).toEqual([...Array(6).fill('a: unavailable'), 'a: saved']);
    expect(model.most()).toBe(1);
    expect(model.calls).toHaveLength(0);
    for (let waited = 0; waited < 100 && b.retained().inFlight > 0; waited += 1)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect([a.retained().inFlight, b.retained().inFlight]).toEqual([0, 0]);
  });

  it('closes once a failed save has been tried again and landed, when the store comes back within the lease’s time', async () => {
    const { a, saves, facts } = await failingSave(3, 1_000);
    await within(a.close(), 'close');
    expect(saves).toEqual(['a: unavailable', 'a: unavailable', 'a: unavailable', 'a: saved']);
    expect(await facts()).toEqual(['Said one']);
  });

  it('closes once a save that keeps failing has been tried for the lease’s time: its lease expires, and the next holder redoes the work from the queue', async () => {
    const { model, a, b, saves, facts } = await failingSave(Number.POSITIVE_INFINITY, 150);
    await within(a.close(), 'close');
    const tried = saves.length;
    b.recordUserMessage('maya', 's1', 'two');
    for (let waited = 0; waited < 300 && model.calls.length === 0; waited += 1)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await model.answerNext()).toMatch(/User: one[\s\S]*Latest user message:\nUser: two/u);
    await within(b.settled(), 'b');
    expect(await facts()).toEqual(['Said one', 'Said two']);
    // Closed, a tries nothing more.
    expect(saves.slice(tried)).toEqual(['b: saved']);
  });

  it('closes while every lease call fails: what waits to be queued is given up after the lease’s time, and heard as unavailable', async () => {
    const heard: string[] = [];
    const tracker = createNotableFactsTracker({
      complete: sharedModel().complete,
      store: failing(memoryNotesStore(), { calls: () => true }),
      holder: 'a',
      leaseMs: 150,
      leasePollMs: 10,
      onError: (failure) => heard.push(failure.code),
    });
    tracker.recordUserMessage('maya', 's1', 'one');
    await tick();
    await within(tracker.close(), 'close');
    expect(heard).toContain('unavailable');
  });

  it('closes when the store never answers a lease call: an end of stage asked meanwhile is answered as closed, not left waiting', async () => {
    const store = memoryNotesStore();
    const tracker = createNotableFactsTracker({
      complete: sharedModel().complete,
      store: { ...store, leases: { lease: () => new Promise<never>(() => undefined) } } as unknown as NotesStore,
      holder: 'a',
      leaseMs: 150,
      leasePollMs: 10,
    });
    tracker.recordUserMessage('maya', 's1', 'one');
    const stage = tracker.endStage('maya', 's1');
    await tick();
    await within(tracker.close(), 'close');
    expect(await within(stage, 'the end of stage')).toEqual(E.left(expect.objectContaining({ code: 'closed' })));
  });

  it('refuses ids no store can keep (U+0000, an unpaired surrogate) where they enter, instead of trying their saves forever', async () => {
    const tracker = createNotableFactsTracker({ complete: sharedModel().complete, store: memoryNotesStore() });
    for (const id of ['ma\u0000ya', 'ma\ud800ya', 'maya\udc00'])
      for (const refused of [
        tracker.recordUserMessage(id, 's1', 'one'),
        tracker.recordUserMessage('maya', id, 'one'),
        tracker.recordAssistantMessage(id, 's1', 'two'),
        await tracker.endStage(id, 's1'),
        await tracker.endStage('maya', id),
      ])
        expect(refused).toEqual(E.left(expect.objectContaining({ code: 'invalid_input' })));
    expect(tracker.retained().inFlight).toBe(0);
    // A well-formed pair of surrogates is text like any other.
    expect(tracker.recordUserMessage('maya \ud83d\ude00', 's1', 'one')).toEqual(E.right('started'));
  });

  it('keeps every message of a tracker cut off from the store past its leases: a session whose save was fenced with another is saved when its extraction is redone', async () => {
    const store = memoryNotesStore();
    let cut = false;
    const saves: string[] = [];
    const save = (user: string, write: NotesWrite) => {
      if (cut) return E.left(storeFailure('unavailable', 'cut off'));
      const outcome = store.save(user, write) as E.Either<{ readonly code: string }, unknown>;
      saves.push(E.isRight(outcome) ? 'saved' : outcome.left.code);
      return outcome;
    };
    const leases: NotesLeases = {
      lease: async (user, session, request) =>
        cut ? E.left(storeFailure('unavailable', 'cut off')) : store.leases.lease(user, session, request),
    };
    const model = sharedModel();
    const options = { complete: model.complete, leasePollMs: 5, leaseMs: 150 };
    const a = createNotableFactsTracker({
      ...options,
      store: { ...store, save, leases } as NotesStore,
      holder: 'a',
      onError: () => {},
    });
    const b = createNotableFactsTracker({ ...options, store, holder: 'b' });
    a.recordUserMessage('maya', 's1', 'one');
    a.recordUserMessage('maya', 's2', 'two');
    await tick();
    expect(model.calls).toHaveLength(2);
    // a is cut off from the store with both extractions answered: nothing of them is saved.
    cut = true;
    await model.answerNext();
    await model.answerNext();
    // b takes s2 over once a's lease has expired, and extracts both its messages.
    b.recordUserMessage('maya', 's2', 'three');
    for (let waited = 0; waited < 300 && model.calls.length === 0; waited += 1)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await model.answerNext()).toMatch(/User: two[\s\S]*Latest user message:\nUser: three/u);
    await within(b.settled(), 'b');
    // a comes back: its save of both sessions is refused (s2 is b's now), and it redoes s1 from the queue.
    cut = false;
    for (
      let round = 0;
      round < 150 && (saves.filter((outcome) => outcome === 'saved').length < 2 || model.calls.length > 0);
      round += 1
    ) {
      while (model.calls.length > 0) await model.answerNext();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await within(Promise.all([a.close(), b.close()]), 'close');
    const facts = async (session: string): Promise<string[]> => {
      const records = await store.load('maya', session);
      return E.isRight(records)
        ? (records.right.session.value as { facts: Array<{ fact: string }> }).facts.map((fact) => fact.fact).sort()
        : [];
    };
    expect(await facts('s1')).toEqual(['Said one']);
    expect(await facts('s2')).toEqual(['Said three', 'Said two']);
    expect(saves[0]).toBe('fenced');
  });

  it('starts no new work on a lease whose last call failed: a holder cut off from the store never extracts a session while another tracker does', async () => {
    const store = memoryNotesStore();
    let cut = false;
    const running = new Map<string, number>();
    let most = 0;
    /** A model that answers each call 200 ms later (shorter than the lease), counting the extractions of a session at once. */
    const slow: CompleteFn = (prompt) => {
      const session = /Latest user message:\nUser: (s\d)-/u.exec(prompt)?.[1] ?? '?';
      running.set(session, (running.get(session) ?? 0) + 1);
      most = Math.max(most, running.get(session)!);
      return new Promise((resolve) =>
        setTimeout(() => {
          running.set(session, running.get(session)! - 1);
          resolve(answer(...new Set(told(prompt))));
        }, 200),
      );
    };
    const away = () => E.left(storeFailure('unavailable', 'cut off'));
    const cutOff = {
      ...store,
      save: (user: string, write: NotesWrite) => (cut ? away() : store.save(user, write)),
      load: (user: string, session: string) => (cut ? away() : store.load(user, session)),
      leases: { lease: (...call: Parameters<NotesLeases['lease']>) => (cut ? away() : store.leases.lease(...call)) },
    } as NotesStore;
    const options = { complete: slow, leasePollMs: 10, leaseMs: 300, onError: () => undefined };
    const a = createNotableFactsTracker({ ...options, store: cutOff, holder: 'a' });
    const b = createNotableFactsTracker({ ...options, store, holder: 'b' });
    for (const session of ['s1', 's2']) a.recordUserMessage('maya', session, `${session}-one`);
    await new Promise((resolve) => setTimeout(resolve, 5));
    // What follows joins a's queues; a is cut off while it extracts "one".
    for (const session of ['s1', 's2']) a.recordUserMessage('maya', session, `${session}-two`);
    await new Promise((resolve) => setTimeout(resolve, 30));
    cut = true;
    // b waits for a's leases to expire, then takes both queues over.
    for (const session of ['s1', 's2']) b.recordUserMessage('maya', session, `${session}-three`);
    await new Promise((resolve) => setTimeout(resolve, 900));
    cut = false;
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    await within(Promise.all([a.close(), b.close()]), 'close');
    expect(most).toBe(1);
    for (const session of ['s1', 's2']) {
      const records = await store.load('maya', session);
      const facts = E.isRight(records) ? (records.right.session.value as { facts: Array<{ fact: string }> }).facts : [];
      expect(facts.map((fact) => fact.fact).sort()).toEqual(
        ['one', 'three', 'two'].map((word) => `Said ${session}-${word}`),
      );
    }
  });

  it('neither loops nor replaces the stored list when its loads fail and its saves work: the holder works only on notes it has read', async () => {
    const store = memoryNotesStore();
    const model = sharedModel();
    const b = createNotableFactsTracker({ complete: model.complete, store, holder: 'b' });
    b.recordUserMessage('maya', 's1', 'zero');
    await tick();
    await model.answerNext();
    await within(b.close(), 'b');
    let saves = 0;
    let loadsFail = true;
    const a = createNotableFactsTracker({
      complete: model.complete,
      store: {
        ...store,
        save: (user, write) => {
          saves += 1;
          // The code before this fix saved and loaded here without yielding: let it end.
          if (saves === 200) loadsFail = false;
          return store.save(user, write);
        },
        load: (user, session) =>
          loadsFail ? E.left(storeFailure('unavailable', 'loads fail')) : store.load(user, session),
      } as NotesStore,
      holder: 'a',
      leasePollMs: 10,
      leaseMs: 300,
      onError: () => undefined,
    });
    a.recordUserMessage('maya', 's1', 'one');
    await new Promise((resolve) => setTimeout(resolve, 300));
    // No extraction from notes it could not read, no save; the load is tried again about every 100 ms.
    expect([model.calls.length, saves]).toEqual([0, 0]);
    await within(a.settled(), 'a');
    loadsFail = false;
    for (let waited = 0; waited < 300 && model.calls.length === 0; waited += 1)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await model.answerNext()).toMatch(/"fact":"Said zero"[\s\S]*Latest user message:\nUser: one/u);
    await within(a.close(), 'a');
    const records = await store.load('maya', 's1');
    const facts = E.isRight(records) ? (records.right.session.value as { facts: Array<{ fact: string }> }).facts : [];
    expect(facts.map((fact) => fact.fact).sort()).toEqual(['Said one', 'Said zero']);
  });

  it('keeps a message whose extraction meets the holder’s own save as a conflict, when its answer was lost and another tracker’s clock runs behind', async () => {
    const store = memoryNotesStore();
    let answersLost = true;
    const model = sharedModel();
    const options = {
      complete: model.complete,
      // The saves land, but while answersLost their answers do not come back.
      store: {
        ...store,
        save: (user, write) => {
          const outcome = store.save(user, write);
          return answersLost ? E.left(storeFailure('unavailable', 'the answer was lost')) : outcome;
        },
      } as NotesStore,
      leasePollMs: 10,
      leaseMs: 300,
      onError: () => undefined,
    };
    const a = createNotableFactsTracker({ ...options, holder: 'a' });
    const b = createNotableFactsTracker({ ...options, holder: 'b', now: () => Date.now() - 5_000 });
    a.recordUserMessage('maya', 's1', 'one');
    await tick();
    await model.answerNext();
    // "two", told at b with b's clock 5 s behind, joins a's queue; a extracts it from its list.
    b.recordUserMessage('maya', 's1', 'two');
    for (let waited = 0; waited < 300 && model.calls.length === 0; waited += 1)
      await new Promise((resolve) => setTimeout(resolve, 10));
    await model.answerNext();
    await new Promise((resolve) => setTimeout(resolve, 100));
    // The answers come back: a's save meets its own earlier one as a conflict, and applies "two" again over it.
    answersLost = false;
    for (let waited = 0; waited < 100 && a.retained().inFlight > 0; waited += 1)
      await new Promise((resolve) => setTimeout(resolve, 10));
    await within(Promise.all([a.close(), b.close()]), 'close');
    const records = await store.load('maya', 's1');
    const facts = E.isRight(records) ? (records.right.session.value as { facts: Array<{ fact: string }> }).facts : [];
    expect(facts.map((fact) => fact.fact).sort()).toEqual(['Said one', 'Said two']);
  });

  it('takes a lease turn it got again after another holder’s as a new turn: it reads the notes again before it works', async () => {
    const store = memoryNotesStore();
    const model = sharedModel();
    let callsFail = false;
    const aStore = failing(store, { calls: () => callsFail });
    const options = { complete: model.complete, leasePollMs: 20, leaseMs: 300, onError: () => undefined };
    const a = createNotableFactsTracker({ ...options, store: aStore, holder: 'a' });
    const b = createNotableFactsTracker({ ...options, store, holder: 'b' });
    a.recordUserMessage('maya', 's1', 'one');
    for (let waited = 0; waited < 100 && model.calls.length === 0; waited += 1) await sleep(5);
    // a's save lands; its call saying so fails, and its lease calls keep failing past its lease.
    callsFail = true;
    await model.answerNext();
    await sleep(30);
    b.recordUserMessage('maya', 's1', 'two');
    for (let waited = 0; waited < 100 && model.calls.length === 0; waited += 1) await sleep(10);
    await model.answerNext();
    await sleep(100);
    a.recordUserMessage('maya', 's1', 'three');
    await sleep(50);
    // a's calls work again: it gets the lease back under another fence, and reads b's list first.
    callsFail = false;
    for (let waited = 0; waited < 100 && model.calls.length === 0; waited += 1) await sleep(10);
    while (model.calls.length > 0) await model.answerNext();
    await sleep(300);
    while (model.calls.length > 0) await model.answerNext();
    await within(Promise.all([a.close(), b.close()]), 'close');
    expect(await storedFacts(store, 's1')).toEqual(['Said one', 'Said three', 'Said two']);
  });

  /**
   * Tracker a extracts "one" in its first lease turn, and is then cut off from the store (its saves
   * and lease calls fail, while `down` says so); b takes the queue over at a's expiry with "two",
   * and stores both. `complete` wraps the model for a; `between` runs once a is cut off.
   */
  const earlierTurn = async (
    complete: (model: ReturnType<typeof sharedModel>, down: { saves: boolean; calls: boolean }) => CompleteFn,
    between: (a: NotableFactsTracker) => void = () => undefined,
  ) => {
    const store = memoryNotesStore();
    const model = sharedModel();
    const down = { saves: false, calls: false };
    const options = { leasePollMs: 20, leaseMs: 300, onError: () => undefined };
    const aStore = failing(store, { saves: () => down.saves, calls: () => down.calls });
    const a = createNotableFactsTracker({ ...options, complete: complete(model, down), store: aStore, holder: 'a' });
    const b = createNotableFactsTracker({ ...options, complete: model.complete, store, holder: 'b' });
    a.recordUserMessage('maya', 's1', 'one');
    for (let waited = 0; waited < 100 && model.calls.length === 0; waited += 1) await sleep(5);
    down.saves = true;
    down.calls = true;
    await model.answerNext();
    await sleep(30);
    b.recordUserMessage('maya', 's1', 'two');
    between(a);
    for (let waited = 0; waited < 100 && model.calls.length === 0; waited += 1) await sleep(10);
    await model.answerNext();
    await sleep(150);
    return { store, model, down, a, b };
  };

  it('never applies an unsaved extraction of an earlier lease turn over a newer list: its save is refused as fenced', async () => {
    const { store, model, down, a, b } = await earlierTurn(
      (model) => model.complete,
      (a) => void a.endStage('maya', 's1'),
    );
    // a's calls work again first (a new turn, where it merges its end of stage), then its saves.
    down.calls = false;
    await sleep(200);
    down.saves = false;
    await sleep(500);
    while (model.calls.length > 0) await model.answerNext();
    await within(Promise.all([a.close(), b.close()]), 'close');
    expect(await storedFacts(store, 's1')).toEqual(['Said one', 'Said two']);
  });

  it('publishes what is recorded at a holder whose loads fail, and renews its lease meanwhile', async () => {
    const store = memoryNotesStore();
    const model = sharedModel();
    const aStore = { ...store, load: () => E.left(storeFailure('unavailable', 'loads down')) } as NotesStore;
    const options = { complete: model.complete, leasePollMs: 20, leaseMs: 300, onError: () => undefined };
    const a = createNotableFactsTracker({ ...options, store: aStore, holder: 'a' });
    a.recordUserMessage('maya', 's1', 'one');
    await sleep(50);
    a.recordUserMessage('maya', 's1', 'two');
    await sleep(100);
    await within(a.close(), 'a');
    // Both messages are in the shared queue: the next holder extracts them with its own.
    const b = createNotableFactsTracker({ ...options, store, holder: 'b' });
    await sleep(400);
    b.recordUserMessage('maya', 's1', 'three');
    for (let waited = 0; waited < 100 && model.calls.length === 0; waited += 1) await sleep(10);
    while (model.calls.length > 0) await model.answerNext();
    await within(b.close(), 'b');
    expect(await storedFacts(store, 's1')).toEqual(['Said one', 'Said three', 'Said two']);
  });

  it('goes on once the store is back when its load and its lease calls failed together', async () => {
    const store = memoryNotesStore();
    const model = sharedModel();
    let down = false;
    let calls = 0;
    const aStore = {
      ...store,
      load: (user: string, session: string) =>
        down ? E.left(storeFailure('unavailable', 'down')) : store.load(user, session),
      leases: {
        lease: (...call: Parameters<NotesLeases['lease']>) => {
          calls += 1;
          const answer = store.leases.lease(...call);
          // The store goes down right after it gave the lease: the load and the next calls fail.
          if (calls === 1) down = true;
          return down && calls > 1 ? E.left(storeFailure('unavailable', 'down')) : answer;
        },
      },
    } as NotesStore;
    const a = createNotableFactsTracker({
      complete: model.complete,
      store: aStore,
      holder: 'a',
      leasePollMs: 20,
      leaseMs: 300,
      onError: () => undefined,
    });
    a.recordUserMessage('maya', 's1', 'one');
    await sleep(500);
    down = false;
    a.recordUserMessage('maya', 's1', 'two');
    for (let round = 0; round < 5; round += 1) {
      for (let waited = 0; waited < 50 && model.calls.length === 0; waited += 1) await sleep(10);
      if (model.calls.length === 0) break;
      await model.answerNext();
    }
    await within(a.close(), 'a');
    expect(await storedFacts(store, 's1')).toEqual(['Said one', 'Said two']);
  });

  it('goes on when a failed load is tried again and the lease call made meanwhile fails: no message is lost, and the end of stage answers', async () => {
    const store = memoryNotesStore();
    let loads = 0;
    let calls = 0;
    // Answered a turn later, as a store over the network answers.
    const flaky = {
      ...store,
      load: async (user: string, session: string) =>
        (loads += 1) === 1 ? E.left(storeFailure('unavailable', 'load down')) : store.load(user, session),
      leases: {
        lease: async (...call: Parameters<NotesLeases['lease']>) =>
          (calls += 1) === 2 ? E.left(storeFailure('unavailable', 'lease down')) : store.leases.lease(...call),
      },
    } as NotesStore;
    const complete: CompleteFn = async (prompt) => answer(...new Set(told(prompt)));
    const a = createNotableFactsTracker({
      complete,
      store: flaky,
      holder: 'a',
      leasePollMs: 20,
      leaseMs: 400,
      onError: () => undefined,
    });
    a.recordUserMessage('maya', 's1', 'first');
    await sleep(50);
    a.recordUserMessage('maya', 's1', 'second');
    await within(a.settled(), 'settled');
    a.recordUserMessage('maya', 's1', 'third');
    await within(a.endStage('maya', 's1'), 'the end of stage');
    await within(a.close(), 'a');
    // Not vacuous: the first load and the second lease call did fail.
    expect([loads > 1, calls > 2]).toEqual([true, true]);
    expect(await storedFacts(store, 's1')).toEqual(['Said first', 'Said second', 'Said third']);
  });

  it('starts no work of a new lease turn from notes that hold unsaved work of an earlier turn', async () => {
    // The store takes saves again while a extracts "three": the save of that work would land.
    const { store, model, down, a, b } = await earlierTurn((model, down) => (prompt, call) => {
      if (prompt.includes('User: three')) down.saves = false;
      return model.complete(prompt, call);
    });
    // a gets the lease back in a new turn while its saves still fail, and "three" comes to it.
    down.calls = false;
    await sleep(150);
    a.recordUserMessage('maya', 's1', 'three');
    await sleep(200);
    for (let round = 0; round < 20; round += 1) {
      if (round === 4) down.saves = false;
      while (model.calls.length > 0) await model.answerNext();
      await sleep(50);
    }
    await within(Promise.all([a.close(), b.close()]), 'close');
    expect(await storedFacts(store, 's1')).toEqual(['Said one', 'Said three', 'Said two']);
    expect(model.most()).toBe(1);
  });

  it('adds a message once when the answer to the call that added it was lost: the call is made again under the same keys', async () => {
    const inner = memoryNotesStore();
    let lost = 0;
    let again = 0;
    // Tracker b's first call that adds items reaches the store, but its answer never comes back.
    const leases: NotesLeases = {
      lease: async (user, session, request) => {
        const answered = await inner.leases.lease(user, session, request);
        if (lost > 0 && request.add !== undefined) again += 1;
        if (lost > 0 || request.add === undefined) return answered;
        lost += 1;
        return E.left(storeFailure('unavailable', 'the connection was lost before the answer'));
      },
    };
    const failures: string[] = [];
    const model = sharedModel();
    const a = createNotableFactsTracker({ complete: model.complete, store: inner, holder: 'a' });
    const b = createNotableFactsTracker({
      complete: model.complete,
      store: { ...inner, leases },
      holder: 'b',
      leasePollMs: 5,
      onError: (failure) => failures.push(failure.code),
    });
    a.recordUserMessage('maya', 's1', 'one');
    await tick();
    b.recordUserMessage('maya', 's1', 'two');
    // b's call failed; it makes it again once it has waited (within 3 s).
    for (let waited = 0; waited < 600 && again === 0; waited += 1)
      await new Promise((resolve) => setTimeout(resolve, 5));
    expect(lost).toBe(1);
    expect(again).toBe(1);
    expect(failures).toEqual(['unavailable']);
    await model.answerNext();
    await tick();
    // a's follow-up shows b's message once, in the queue's order.
    const followUp = await model.answerNext();
    expect([...followUp.matchAll(/^User: two$/gmu)]).toHaveLength(1);
    await within(Promise.all([a.settled(), b.settled()]), 'the trackers');
    expect(model.calls).toHaveLength(0);
  });

  it('answers load once it has read what the holder saved, when the store answers later: the context that follows holds it, or the record found unreadable', async () => {
    const store = memoryNotesStore();
    const later = answeringLater(store);
    const [a, b] = ['a', 'b'].map((holder) =>
      createNotableFactsTracker({ complete: noteAll, store: later, holder, leasePollMs: 5 }),
    );
    a!.recordUserMessage('maya', 's1', 'one');
    await within(a!.settled(), 'a');
    b!.recordUserMessage('maya', 's1', 'two');
    await within(b!.settled(), 'b');
    expect(await storedFacts(store, 's1')).toEqual(['Said one', 'Said two']);
    // a read s1 before b's save: its load reads the store again, and answers once it has.
    expect(await within(a!.load('maya', 's1'), 'the load')).toEqual(E.right(undefined));
    expect(E.map((context: { session: string }) => context.session)(a!.contextFor('maya', 's1'))).toEqual(
      E.right('NOTED FACTS FROM THIS SESSION:\n[History]\n- Said one\n- Said two'),
    );
    // A record made unreadable since a read it: its load says so, rather than answer with what it held.
    await makeUnreadable(store, 's1');
    expect(await within(a!.load('maya', 's1'), 'the load')).toMatchObject(E.left({ code: 'invalid_notes' }));
    await within(Promise.all([a!.close(), b!.close()]), 'close');
  });

  it('closes with the changes kept from a record the store holds unreadable reported as closed: said done and out of the queue, they are not lost silently', async () => {
    const store = memoryNotesStore();
    const heard: Array<{ code: string; message: string }> = [];
    const tracker = createNotableFactsTracker({
      complete: noteAll,
      store: answeringLater(store, true),
      holder: 'a',
      leasePollMs: 5,
      onError: (problem) => heard.push(problem),
    });
    tracker.recordUserMessage('maya', 's1', 'one');
    await within(tracker.settled(), 'the first message');
    // The row edited by hand into a shape no tracker can read.
    await makeUnreadable(store, 's1');
    for (const text of ['two', 'three', 'four', 'five']) {
      tracker.recordUserMessage('maya', 's1', text);
      await within(tracker.settled(), `message ${text}`);
    }
    expect(heard.map(({ code }) => code)).toEqual(['invalid_notes']);
    await within(tracker.close(), 'close');
    // The work was said done: no other holder redoes it, so close says what it drops.
    const queue = await store.leases!.lease('maya', 's1', { holder: 'b', ttlMs: 1_000 });
    expect(E.isRight(queue) && queue.right.queue).toEqual([]);
    expect(heard.slice(1)).toEqual([
      {
        code: 'closed',
        message:
          'the tracker closed with 4 changes to the notes of "maya" (session "s1") the store did not take: they are lost with the tracker',
      },
    ]);
  });

  it('closes with the messages it could never add to a lease queue reported as closed, not only the failed calls: no holder has them', async () => {
    const store = memoryNotesStore();
    const heard: Array<{ code: string; message: string }> = [];
    const down: NotesStore = {
      ...store,
      leases: { lease: () => E.left(storeFailure('unavailable', 'the database is down')) },
    };
    const tracker = createNotableFactsTracker({
      complete: noteAll,
      store: down,
      holder: 'a',
      leaseMs: 200,
      leasePollMs: 5,
      onError: (problem) => heard.push(problem),
    });
    tracker.recordUserMessage('maya', 's1', 'one');
    tracker.recordUserMessage('maya', 's1', 'two');
    tracker.recordUserMessage('maya', 's2', 'three');
    await within(tracker.close(), 'close');
    expect(heard.filter(({ code }) => code !== 'unavailable')).toEqual([
      {
        code: 'closed',
        message:
          'the tracker closed with 2 messages of "maya" in session "s1" it could not add to the queue of that session\'s lease: no holder has them, and they are lost with the tracker, never extracted',
      },
      {
        code: 'closed',
        message:
          'the tracker closed with 1 message of "maya" in session "s2" it could not add to the queue of that session\'s lease: no holder has them, and they are lost with the tracker, never extracted',
      },
    ]);
  });

  it('counts each session once when two trackers end the stage of every session of a user at once', async () => {
    const store = memoryNotesStore();
    const complete: CompleteFn = (prompt) => Promise.resolve(answer(...new Set(told(prompt))));
    // One clock for both: each merge carries the same time, so neither can tell the other's from its own by it.
    const [a, b] = ['a', 'b'].map((holder) =>
      createNotableFactsTracker({ complete, store, holder, leasePollMs: 5, now: () => 10 }),
    );
    for (const session of ['s1', 's2', 's3']) a!.recordUserMessage('maya', session, `in ${session}`);
    await within(a!.settled(), 'the extractions');
    // b knows the three sessions too, unmerged: each end of stage asks for all three.
    for (const session of ['s1', 's2', 's3'])
      E.getOrElseW(() => expect.fail(`b loads ${session}`))(await b!.load('maya', session));
    const reports = await within(Promise.all([a!.endStage('maya'), b!.endStage('maya')]), 'both ends of stage');
    await within(Promise.all([a!.settled(), b!.settled()]), 'settled');
    expect(reports.map((report) => E.isRight(report) && report.right.sessions)).toEqual([
      ['s1', 's2', 's3'],
      ['s1', 's2', 's3'],
    ]);
    const records = await store.load('maya', 's1');
    const profile = (E.isRight(records) ? records.right.profile.value : undefined) as
      { facts: Array<{ fact: string }>; sessionCount: number } | undefined;
    expect(profile?.facts.map(({ fact }) => fact).sort()).toEqual(['Said in s1', 'Said in s2', 'Said in s3']);
    expect(profile?.sessionCount).toBe(3);
    for (const tracker of [a!, b!]) {
      expect(selectGlobalFacts(tracker.getSnapshot(), 'maya')?.sessionCount).toBe(3);
      expect(replayNotes(tracker.events(), emptyNotesLedger())).toEqual(tracker.getSnapshot());
    }
    await within(Promise.all([a!.close(), b!.close()]), 'close');
  });

  it('never run two extractions of one session at once, and lose no message and no end of stage, however two trackers interleave and their saves fail for a while', async () => {
    const command = fc.oneof(
      fc.record({
        kind: fc.constant('message' as const),
        at: fc.constantFrom(0, 1),
        session: fc.constantFrom('s1', 's2'),
      }),
      fc.record({ kind: fc.constant('answer' as const), pick: fc.nat() }),
      fc.record({
        kind: fc.constant('stage' as const),
        at: fc.constantFrom(0, 1),
        session: fc.constantFrom('s1', 's2'),
      }),
    );
    // Each tracker's saves in turn: true fails (unavailable), up to four failures in all.
    const failures = fc.array(fc.boolean(), { maxLength: 8 }).map((pattern) => {
      let left = 4;
      return pattern.map((fails) => fails && (left -= 1) >= 0);
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(command, { maxLength: 30 }),
        fc.tuple(failures, failures),
        async (commands, patterns) => {
          const store = memoryNotesStore();
          const open: Array<{ session: string; prompt: string; resolve: (text: string) => void }> = [];
          const running = new Map<string, number>();
          let overlaps = 0;
          const complete: CompleteFn = (prompt) => {
            const session = /User: (s\d)-/u.exec(prompt.slice(prompt.lastIndexOf('Latest user message:')))?.[1] ?? '?';
            running.set(session, (running.get(session) ?? 0) + 1);
            if (running.get(session)! > 1) overlaps += 1;
            return new Promise((resolve) => open.push({ session, prompt, resolve }));
          };
          const trackers = ['a', 'b'].map((holder, index) => {
            const left = [...patterns[index]!];
            const save = (user: string, write: NotesWrite) =>
              left.shift() === true
                ? E.left(storeFailure('unavailable', 'the store is away'))
                : store.save(user, write);
            return createNotableFactsTracker({
              complete,
              store: { ...store, save } as NotesStore,
              holder,
              leasePollMs: 5,
              onError: () => undefined,
            });
          });
          const answerOne = (pick: number): void => {
            const [call] = open.splice(pick % open.length, 1);
            running.set(call!.session, running.get(call!.session)! - 1);
            call!.resolve(answer(...new Set(told(call!.prompt))));
          };
          const sent = new Map<string, string[]>([
            ['s1', []],
            ['s2', []],
          ]);
          const stages: Array<Promise<unknown>> = [];
          /** Per session, whether its latest command was an end of stage (it then waits for every message before it). */
          const endedLast = new Map<string, boolean>();
          for (const [i, step] of commands.entries()) {
            if (step.kind === 'message' && sent.get(step.session)!.length < 8) {
              const text = `${step.session}-m${i}`;
              sent.get(step.session)!.push(text);
              trackers[step.at]!.recordUserMessage('maya', step.session, text);
              endedLast.set(step.session, false);
            } else if (step.kind === 'stage') {
              stages.push(trackers[step.at]!.endStage('maya', step.session));
              endedLast.set(step.session, true);
            } else if (step.kind === 'answer' && open.length > 0) answerOne(step.pick);
            await tick();
          }
          // Answer every call until both trackers have settled with none open (a follow-up opens one as another ends).
          const settled = within(Promise.all(trackers.map((tracker) => tracker.settled())), 'settled');
          for (let idle = 0; idle < 3;) {
            if (open.length > 0) {
              while (open.length > 0) answerOne(0);
              idle = 0;
            } else idle += 1;
            await new Promise((resolve) => setTimeout(resolve, 5));
          }
          await settled;
          /** Per session: the facts stored, what was said, and, when an end of stage came last, the facts merged into the profile. */
          const outcome = () =>
            Promise.all(
              [...sent].map(async ([session, texts]) => {
                const records = await store.load('maya', session);
                const value = E.isRight(records)
                  ? (records.right.session.value as { facts?: Array<{ fact: string }> })
                  : {};
                const profile = E.isRight(records)
                  ? (records.right.profile.value as { facts?: Array<{ fact: string; session?: string }> } | undefined)
                  : undefined;
                const facts = (value?.facts ?? []).map((fact) => fact.fact).sort();
                const merged = (profile?.facts ?? [])
                  .filter((fact) => fact.session === session)
                  .map((fact) => fact.fact);
                return {
                  facts,
                  said: texts.map((text) => `Said ${text}`).sort(),
                  merged: endedLast.get(session) === true ? merged.sort() : facts,
                };
              }),
            );
          // settled() does not wait for a failed save to be tried again: the saves land within a few retries.
          for (let waited = 0; waited < 600; waited += 1) {
            const now = await outcome();
            const landed = now.every(
              ({ facts, said, merged }) => `${facts}` === `${said}` && `${merged}` === `${facts}`,
            );
            if (landed && open.length === 0) break;
            while (open.length > 0) answerOne(0);
            await new Promise((resolve) => setTimeout(resolve, 5));
          }
          const reports = await within(Promise.all(stages), 'stages');
          expect(overlaps).toBe(0);
          expect(reports.every((report) => E.isRight(report as E.Either<unknown, unknown>))).toBe(true);
          for (const { facts, said, merged } of await outcome()) {
            expect(facts).toEqual(said);
            // An end of stage after the last message merged all of them, once.
            expect(merged).toEqual(facts);
          }
        },
      ),
      { numRuns: 40, interruptAfterTimeLimit: 50_000 },
    );
  });
});
