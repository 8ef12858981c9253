/**
 * The tracker without leases by orderings, under fake timers: one tracker (restarted after a
 * close, as a server is) over a store whose calls answer at once, fail, answer late (within
 * `timeoutMs` or past it) or never, driven through generated interleavings of messages (retries
 * of the same text and corrections among them), model calls that answer after a delay, fail or
 * hang past `timeoutMs`, loads, ends of stage with and without a session, releases, a cache of
 * one slot letting sessions go, closes and time passing. The invariants are docs/notes.md's: no
 * message lost once the store answers again (but those of a failed model call, and the changes
 * `close` gave up, as `onError` hears), no fact twice in a stored list or a block, a stored list
 * never going back, the correction told last winning, `settled`, `endStage` and `close` answered
 * within their bounds and never rejecting, and the events replaying to the ledger.
 */
import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { replayNotes } from '../../src/notes/events.js';
import { emptyNotesLedger } from '../../src/notes/ledger.js';
import type { CompleteFn } from '../../src/notes/port.js';
import {
  memoryNotesStore,
  type NotesStore,
  type NotesStoreFailure,
  type StoreAnswer,
  storeFailure,
} from '../../src/notes/store.js';
import { createNotableFactsTracker } from '../../src/notes/tracker.js';
import type { NotableFactsTracker, NotesTrackerFailure } from '../../src/notes/trackerTypes.js';
import {
  behaviour,
  COLOR,
  duplicates,
  extract,
  type Fact,
  fresh,
  lines,
  recordedOrder,
  TIMEOUT,
} from './leaseOrders.js';

const POLL = 20;

/** What the store does with one call: answer at once, fail, answer `delay` ms later, or never. */
type StoreBehaviour =
  | { readonly kind: 'now' }
  | { readonly kind: 'fail' }
  | { readonly kind: 'never' }
  | { readonly kind: 'late'; readonly delay: number };

const storeBehaviour: fc.Arbitrary<StoreBehaviour> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ kind: 'now' as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'fail' as const }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('late' as const), delay: fc.integer({ min: 1, max: 3 * TIMEOUT }) }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'never' as const }) },
);

/** One step of an ordering (s2 takes plain messages only, so the correction is s1's). */
const command = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({ kind: fc.constant('message' as const), color: fc.boolean(), other: fc.boolean() }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('retry' as const) }) },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 1_500 }) }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('close' as const), other: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('release' as const), other: fc.boolean() }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('stage' as const), named: fc.boolean(), other: fc.boolean() }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('load' as const), other: fc.boolean() }) },
);
type Command = typeof command extends fc.Arbitrary<infer T> ? T : never;

/** Runs the fake clock in steps until `promise` settles (or `ms` have passed), and gives its value. */
const until = async <T>(promise: Promise<T>, ms = 20 * TIMEOUT): Promise<{ value: T } | undefined> => {
  let outcome: { value: T } | undefined;
  promise.then(
    (value) => {
      outcome = { value };
    },
    (error: unknown) => {
      outcome = undefined;
      expect.unreachable(`a tracker promise rejected: ${String(error)}`);
    },
  );
  for (let waited = 0; outcome === undefined && waited < ms; waited += POLL) await vi.advanceTimersByTimeAsync(POLL);
  return outcome;
};

/** The newest color message a list notes (-Infinity: none): a blind extraction keeps the stored color beside its own. */
const newestColor = (facts: ReadonlyArray<string>): number =>
  Math.max(
    Number.NEGATIVE_INFINITY,
    ...facts.flatMap((fact) => {
      const color = COLOR.exec(fact);
      return color === null ? [] : [Number(color[1])];
    }),
  );

/** A profile rewrite keeps the profile its prompt shows as it is. */
const keepProfile = (prompt: string): string => {
  const shown = prompt.slice(prompt.indexOf('Profile (least recent first):\n')).split('\n');
  const facts = shown.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Fact);
  return JSON.stringify({ notableFacts: facts });
};

const sessionOf = (other: boolean): string => (other ? 's2' : 's1');

/**
 * Runs `commands` on `servers` trackers (with two, each serves a session of its own: s1 the first,
 * s2 the second), the model doing `modelPlan` and the store `storePlan` in turn, and checks the invariants.
 */
const runOrdering = async (
  servers: 1 | 2,
  commands: ReadonlyArray<Command>,
  modelPlan: ReadonlyArray<{ kind: 'answer' | 'fail'; delay: number } | { kind: 'hang' }>,
  storePlan: ReadonlyArray<StoreBehaviour>,
): Promise<void> => {
  const inner = memoryNotesStore({ now: () => Date.now() });
  const calls = [...modelPlan];
  const storeCalls = [...storePlan];
  const broken: string[] = [];
  /** Messages a model call that failed or never answered was to note: they may stay unnoted. */
  const unheard = new Set<string>();
  /** Messages recorded before a give-up `onError` heard as `closed`, `conflict` or `invalid_input`. */
  const givenUp = new Set<string>();
  let silent = false;
  const recorded: Array<{ readonly session: string; readonly text: string }> = [];
  const heard: NotesTrackerFailure[] = [];
  const onError = (failure: NotesTrackerFailure): void => {
    heard.push(failure);
    if (['closed', 'conflict', 'invalid_input'].includes(failure.code))
      for (const { text } of recorded) givenUp.add(text);
  };
  const complete: CompleteFn = (prompt) => {
    if (!prompt.includes('Latest user message:')) return Promise.resolve(keepProfile(prompt));
    const next = calls.shift() ?? { kind: 'answer', delay: 1 };
    if (next.kind !== 'answer') for (const text of fresh(prompt, recordedOrder)) unheard.add(text);
    if (next.kind === 'hang') return new Promise<string>(() => undefined);
    return new Promise((resolve, reject) =>
      setTimeout(
        () => (next.kind === 'fail' ? reject(new Error('the model is down')) : resolve(extract(prompt))),
        next.delay,
      ),
    );
  };
  /** The facts of each session's lists the store took, by the version it took them at. */
  const stored = new Map<string, Map<number, ReadonlyArray<string>>>();
  const follows = (before: ReadonlyArray<string>, after: ReadonlyArray<string>): void => {
    const lost = before.filter((fact) => !COLOR.test(fact) && !after.includes(fact));
    if (lost.length > 0) broken.push(`facts the stored list lost: ${lost}`);
    if (newestColor(after) < newestColor(before))
      broken.push(
        `the stored color went back: ${before.filter((f) => COLOR.test(f))} to ${after.filter((f) => COLOR.test(f))}`,
      );
  };
  const landed = (session: string, version: number, facts: ReadonlyArray<string>): void => {
    const twice = duplicates(facts);
    if (twice.length > 0) broken.push(`a fact twice in the stored list: ${twice}`);
    const lists = stored.get(session) ?? new Map<number, ReadonlyArray<string>>();
    stored.set(session, lists);
    lists.set(version, facts);
    const [before, after] = [lists.get(version - 1), lists.get(version + 1)];
    if (before !== undefined) follows(before, facts);
    if (after !== undefined) follows(facts, after);
  };
  let never = 0;
  /** The store's answer to a call, as the next behaviour says (the store does the call at once). */
  const answered = <T>(
    call: () => StoreAnswer<T>,
    look: (answer: E.Either<NotesStoreFailure, T>) => void = () => undefined,
  ): StoreAnswer<T> => {
    const next: StoreBehaviour = silent ? { kind: 'now' } : (storeCalls.shift() ?? { kind: 'now' });
    if (next.kind === 'fail') return E.left(storeFailure('unavailable', 'the store is down'));
    if (next.kind === 'never') {
      never += 1;
      return new Promise(() => undefined);
    }
    const answer = call() as E.Either<NotesStoreFailure, T>;
    look(answer);
    if (next.kind === 'now') return answer;
    return new Promise((resolve) => setTimeout(() => resolve(answer), next.delay));
  };
  const store: NotesStore = {
    load: (user, session) => answered(() => inner.load(user, session)),
    save: (user, write) =>
      answered(
        () => inner.save(user, write),
        (answer) => {
          if (E.isLeft(answer)) return;
          for (const record of write.sessions)
            landed(
              record.session,
              record.expected + 1,
              ((record.value as { facts?: Fact[] } | null)?.facts ?? []).map((fact) => fact.fact),
            );
        },
      ),
    unmergedSessions: (user) => answered(() => inner.unmergedSessions(user)),
  };
  const start = (): NotableFactsTracker =>
    createNotableFactsTracker({ complete, store, timeoutMs: TIMEOUT, leasePollMs: POLL, cacheSize: 1, onError });
  const live = Array.from({ length: servers }, start);
  const trackers = [...live];
  /** The tracker serving `session`. */
  const at = (session: string): number => (servers === 2 && session === 's2' ? 1 : 0);
  const serving = (session: string): NotableFactsTracker => live[at(session)]!;
  /** Each promise of the tracker, with the bound it is to settle within. */
  const pending: Array<{ readonly what: string; readonly done: () => boolean }> = [];
  const bounded = (what: string, promise: Promise<unknown>): void => {
    let done = false;
    promise.then(
      () => {
        done = true;
      },
      (error: unknown) => broken.push(`${what} rejected: ${String(error)}`),
    );
    pending.push({ what, done: () => done });
  };
  const check = (): void => {
    expect(broken).toEqual([]);
    for (const session of ['s1', 's2']) {
      const context = serving(session).contextFor('maya', session);
      if (E.isLeft(context)) continue;
      expect(duplicates(lines(context.right.session)), 'a fact twice in the session block').toEqual([]);
      expect(duplicates(lines(context.right.profile)), 'a fact twice in the profile block').toEqual([]);
    }
  };
  const record = (session: string, text: string): void => {
    if (E.isRight(serving(session).recordUserMessage('maya', session, text))) recorded.push({ session, text });
  };
  let closes = 0;
  for (const [index, next] of commands.entries()) {
    if (next.kind === 'message')
      record(sessionOf(next.other && !next.color), next.color ? `color c${index}` : `m${index}`);
    else if (next.kind === 'retry' && recorded.length > 0) record(recorded.at(-1)!.session, recorded.at(-1)!.text);
    else if (next.kind === 'advance') await vi.advanceTimersByTimeAsync(next.ms);
    else if (next.kind === 'close' && closes < 2) {
      closes += 1;
      const closed = sessionOf(next.other);
      const closing = serving(closed).close();
      bounded('close', closing);
      // Without leases, close resolves within twice timeoutMs of the store's silence, after the model calls (timeoutMs each).
      expect(await until(closing, 6 * TIMEOUT), 'close resolved within its bound').toBeDefined();
      live[at(closed)] = start();
      trackers.push(live[at(closed)]!);
    } else if (next.kind === 'release') serving(sessionOf(next.other)).release('maya', sessionOf(next.other));
    else if (next.kind === 'stage')
      bounded(
        'endStage',
        next.named
          ? serving(sessionOf(next.other)).endStage('maya', sessionOf(next.other))
          : serving(sessionOf(next.other)).endStage('maya'),
      );
    else if (next.kind === 'load') bounded('load', serving(sessionOf(next.other)).load('maya', sessionOf(next.other)));
    await vi.advanceTimersByTimeAsync(1);
    check();
  }
  // From here on the store answers at once and every model call answers: settle, end the stage, close.
  calls.length = 0;
  silent = true;
  const settled = await until(Promise.all(live.map((each) => each.settled())));
  expect(settled, 'settled').toBeDefined();
  // Every late answer has come by now: settled again, with nothing left unanswered but what never answers.
  await vi.advanceTimersByTimeAsync(4 * TIMEOUT);
  expect(
    await until(Promise.all(live.map((each) => each.settled()))),
    'settled once every late answer came',
  ).toBeDefined();
  // Once the store answers again, load brings what the store holds (unless a save was left unanswered).
  for (const session of never > 0 ? [] : ['s1', 's2']) {
    expect(await until(serving(session).load('maya', session))).toEqual({ value: E.right(undefined) });
    const records = await inner.load('maya', session);
    const storedFacts = E.isRight(records)
      ? ((records.right.session.value as { facts?: Fact[] } | undefined)?.facts ?? []).map((fact) => fact.fact)
      : [];
    const context = serving(session).contextFor('maya', session);
    const held = E.isRight(context) ? lines(context.right.session).map((line) => line.slice(2)) : [];
    // The tracker's list may be newer (a failed save waits for the next change or close), never older.
    expect(
      storedFacts.filter((fact) => !COLOR.test(fact) && !held.includes(fact)),
      `facts of ${session} the store holds and load did not bring`,
    ).toEqual([]);
    expect(newestColor(held), `the color of ${session} load brought`).toBeGreaterThanOrEqual(newestColor(storedFacts));
  }
  // An end of stage at each tracker (its save writes the changes a failed save left waiting), the first's last.
  for (const each of [...live].reverse())
    expect(await until(each.endStage('maya')), 'the last ends of stage').toMatchObject({ value: { _tag: 'Right' } });
  expect(await until(Promise.all(live.map((each) => each.close()))), 'the last close').toBeDefined();
  await vi.advanceTimersByTimeAsync(5 * TIMEOUT);
  for (const { what, done } of pending) expect(done(), `${what} answered`).toBe(true);
  check();

  // What a tracker started now reads: every message told but those given up, the last color, each once.
  const reader = createNotableFactsTracker({ complete, store: inner, timeoutMs: TIMEOUT });
  for (const session of ['s1', 's2']) {
    expect(await until(reader.load('maya', session))).toEqual({ value: E.right(undefined) });
    const context = reader.contextFor('maya', session);
    const facts = E.isRight(context) ? lines(context.right.session).map((line) => line.slice(2)) : [];
    expect(duplicates(facts)).toEqual([]);
    if (never > 0) continue;
    const kept = recorded.filter(
      (item) => item.session === session && !unheard.has(item.text) && !givenUp.has(item.text),
    );
    const said = kept.filter(({ text }) => !text.startsWith('color ')).map(({ text }) => `Said ${text}`);
    expect(
      said.filter((fact) => !facts.includes(fact)),
      `messages lost in ${session} (heard: ${heard.map((failure) => failure.code)})`,
    ).toEqual([]);
    const colors = kept.filter(({ text }) => text.startsWith('color ')).map(({ text }) => recordedOrder(text));
    if (colors.length > 0) expect(newestColor(facts), 'the last color').toBeGreaterThanOrEqual(Math.max(...colors));
  }
  // The last end of stage merged every session: the profile holds each session's facts, once.
  expect(await until(reader.load('maya', 's3'))).toEqual({ value: E.right(undefined) });
  const next = reader.contextFor('maya', 's3');
  const profile = E.isRight(next) ? lines(next.right.profile).map((line) => line.slice(2)) : [];
  expect(duplicates(profile)).toEqual([]);
  // Unless close gave up a save (as onError heard), or a save of it was never answered.
  for (const session of never > 0 || givenUp.size > 0 ? [] : ['s1', 's2']) {
    const records = await inner.load('maya', session);
    const facts = E.isRight(records)
      ? ((records.right.session.value as { facts?: Fact[] } | undefined)?.facts ?? [])
      : [];
    const plain = facts.map((fact) => fact.fact).filter((fact) => !COLOR.test(fact));
    expect(
      plain.filter((fact) => !profile.includes(fact)),
      `facts of ${session} the last end of stage did not merge`,
    ).toEqual([]);
    expect(newestColor(profile), "the profile's color").toBeGreaterThanOrEqual(
      newestColor(facts.map((fact) => fact.fact)),
    );
  }
  await until(reader.close());
  for (const each of trackers) expect(replayNotes(each.events(), emptyNotesLedger())).toEqual(each.getSnapshot());
};

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

/** Runs generated orderings on `servers` trackers. */
const sweep = (servers: 1 | 2): Promise<void> =>
  fc.assert(
    fc.asyncProperty(
      fc.array(command, { minLength: 1, maxLength: 20 }),
      fc.array(behaviour, { maxLength: 10 }),
      fc.array(storeBehaviour, { maxLength: 16 }),
      (commands, modelPlan, storePlan) => runOrdering(servers, commands, modelPlan, storePlan),
    ),
    // 150 runs a suite, each with a seed of its own: the sweeps that found the defects ran tens of
    // thousands, and the suite must stay within its time.
    { numRuns: 150 },
  );

describe('one tracker without leases, by orderings', () => {
  it('loses no message once the store answers, never goes back to an older list, says no fact twice and keeps the correction told last', () =>
    sweep(1));
});

describe('two trackers without leases, each serving a session of its own of one user, by orderings', () => {
  it('lose nothing of each other’s sessions or merges', () => sweep(2));
});
