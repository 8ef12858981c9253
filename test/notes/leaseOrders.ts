/**
 * The lease state machine by orderings, for every store with leases: two trackers (app servers)
 * on one store, driven through generated interleavings of messages recorded at either (a message
 * recorded twice, as a client's retry, among them), model calls that answer after a delay, fail
 * or never answer, trackers closed or released in the middle of an extraction (a closed one
 * replaced by a new one, as a restarted server), ends of stage, and time moved past a lease.
 * After every step and at the end, the invariants docs/notes.md promises are checked through the
 * public API: each message counted once (its fact enters the stored list in one save and never
 * leaves it), none lost (an extraction that fails leaves its messages to the next one; a holder
 * closed or overtaken leaves its work in the queue for the next holder), no second extraction
 * while the lease of the first holds, no fact twice in a list or a block, the correction told
 * last winning, and every tracker's events replaying to its ledger.
 *
 * A world says where it runs: the store each app server is given (one memory store shared, or a
 * PostgreSQL store of its own on a shared database, as separate pools), how time passes (a fake
 * clock advanced, or real time waited where the database's clock expires the leases), and how
 * much shorter its times are than the memory store's.
 */
import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { expect } from 'vitest';
import { replayNotes } from '../../src/notes/events.js';
import { emptyNotesLedger } from '../../src/notes/ledger.js';
import type { LeaseAnswer, NotesLeases } from '../../src/notes/leases.js';
import type { CompleteFn } from '../../src/notes/port.js';
import type { NotesStore, NotesStoreFailure, NotesWritten, StoreAnswer } from '../../src/notes/store.js';
import { createNotableFactsTracker } from '../../src/notes/tracker.js';
import type { NotableFactsTracker, NotesTrackerFailure } from '../../src/notes/trackerTypes.js';

/** The model timeout, lease and poll of the memory store's orderings (a world's `scale` shortens them). */
export const TIMEOUT = 1_000;
export const LEASE = 400;
export const POLL = 20;

/** What the model does with one call. */
export type Behaviour = { readonly kind: 'answer' | 'fail'; readonly delay: number } | { readonly kind: 'hang' };

export interface Fact {
  readonly category: string;
  readonly fact: string;
}

export const COLOR = /^Favorite color is c(\d+)$/u;

/** The facts of a prompt's list: the lines of JSON between `from` and the blank line after it. */
const listed = (prompt: string, from: string): Fact[] => {
  const start = prompt.indexOf(`${from}\n`);
  if (start < 0) return [];
  const lines = prompt.slice(start + from.length + 1).split('\n');
  return lines
    .slice(0, lines.indexOf(''))
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Fact);
};

/**
 * Where a message stands in the order it was told (later is larger). In the order recorded, a
 * message's number: a store that answers at once queues each message as it is recorded. In the
 * order queued, the number the store gave it: on one that answers later, a message one server
 * records may reach the queue after one another server recorded later, and the queue's order is
 * the one its holders tell the model.
 */
export type Rank = (text: string) => number;

/** The order recorded: the step a message was recorded at, which its text names. */
export const recordedOrder: Rank = (text) => Number(/\d+$/u.exec(text)?.[0] ?? Number.NaN);

/** The message a fact of the color notes. */
const colorMessage = (fact: string): string | undefined => {
  const color = COLOR.exec(fact);
  return color === null ? undefined : `color c${color[1]}`;
};

/** The rank of the color message a list of facts notes (-Infinity: none). */
export const colorRank = (facts: ReadonlyArray<string>, rank: Rank): number => {
  const message = facts.map(colorMessage).find((found) => found !== undefined);
  return message === undefined ? Number.NEGATIVE_INFINITY : rank(message);
};

/** Whether `facts` already note the message `text`. */
const notes = (facts: ReadonlyArray<Fact>, text: string, rank: Rank): boolean =>
  text.startsWith('color ')
    ? colorRank(
        facts.map((fact) => fact.fact),
        rank,
      ) >= rank(text)
    : facts.some((fact) => fact.fact === `Said ${text}`);

/**
 * A model that knows the order messages were told in (`rank`): it notes the messages its prompt
 * shows after the last one its list already notes (never one the list skipped, so a message the
 * tracker lost stays lost), and a color message only over an older color. So any fact lost or
 * any correction undone is the tracker's doing.
 */
/**
 * The messages a prompt shows told after the last one its list notes: those its extraction is to
 * note. By the order told, not where the prompt shows them: on a store that answers later, a
 * message one server recorded may be queued after one another server recorded later, and a
 * client's retry, counted as its first, after messages queued meanwhile.
 */
export const fresh = (prompt: string, rank: Rank): string[] => {
  const facts = listed(prompt, 'Current facts:');
  const told = [...prompt.matchAll(/^User: (.*)$/gmu)].map((match) => match[1]!);
  const newest = Math.max(Number.NEGATIVE_INFINITY, ...told.filter((text) => notes(facts, text, rank)).map(rank));
  return told.filter((text) => rank(text) > newest);
};

/** The model's answer to an extraction prompt: the list with the fresh messages noted. */
export const extract = (prompt: string, rank: Rank = recordedOrder): string => {
  let facts = listed(prompt, 'Current facts:');
  for (const text of fresh(prompt, rank)) {
    if (notes(facts, text, rank)) continue;
    const color = /^color (c\d+)$/u.exec(text);
    facts =
      color === null
        ? [...facts, { category: 'History', fact: `Said ${text}` }]
        : [
            ...facts.filter((fact) => !COLOR.test(fact.fact)),
            { category: 'Logistics', fact: `Favorite color is ${color[1]}` },
          ];
  }
  return JSON.stringify({ notableFacts: facts });
};

/** A profile rewrite keeps the profile as it is. */
const rewrite = (prompt: string): string =>
  JSON.stringify({ notableFacts: listed(prompt, 'Profile (least recent first):') });

/** One step of an ordering (times in the memory store's milliseconds). */
export const command = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('message' as const), at: fc.nat(1), color: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('retry' as const), at: fc.nat(1) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 600 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('close' as const), at: fc.nat(1) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('release' as const), at: fc.nat(1) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('stage' as const), at: fc.nat(1), named: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('load' as const), at: fc.nat(1) }) },
);

/** One step of an ordering. */
export type Command = typeof command extends fc.Arbitrary<infer T> ? T : never;

/** What the model does with each extraction, in turn (times in the memory store's milliseconds). */
export const behaviour: fc.Arbitrary<Behaviour> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({ kind: fc.constant('answer' as const), delay: fc.integer({ min: 1, max: 700 }) }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('fail' as const), delay: fc.integer({ min: 1, max: 300 }) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'hang' as const }) },
);

/** The fact lines of a block. */
export const lines = (block: string): string[] => block.split('\n').filter((line) => line.startsWith('- '));

/** The items that repeat one before them. */
export const duplicates = (items: ReadonlyArray<string>): string[] =>
  items.filter((item, index) => items.indexOf(item) !== index);

/**
 * An app server's tracker on `store`, named `holder`, with the orderings' short model timeout and
 * lease (shortened by `scale`), telling `onError` what it reports (default: nothing heard).
 */
export const server = (
  complete: CompleteFn,
  store: NotesStore,
  holder: string,
  scale = 1,
  onError: (failure: NotesTrackerFailure) => void = () => undefined,
): NotableFactsTracker =>
  createNotableFactsTracker({
    complete,
    store,
    holder,
    timeoutMs: TIMEOUT * scale,
    leaseMs: LEASE * scale,
    leasePollMs: POLL * scale,
    onError,
  });

/** Where an ordering runs. */
export interface OrderingWorld {
  /** The store of a new app server. */
  readonly store: () => NotesStore;
  /** Lets `ms` pass. */
  readonly pass: (ms: number) => Promise<void>;
  /** The value of `promise` once it settles, or undefined when `ms` pass first. */
  readonly until: <T>(promise: Promise<T>, ms: number) => Promise<T | undefined>;
  /** This world's times over the memory store's: its lease lasts `LEASE * scale`, and so on. */
  readonly scale: number;
  /** The order messages count as told in (`Rank`): as recorded, or as the store queued them. */
  readonly order: 'recorded' | 'queued';
}

/** `answer`, seen by `look` once it comes: at once when the store answered at once, so its timing is unchanged. */
const seen = <T>(answer: StoreAnswer<T>, look: (value: E.Either<NotesStoreFailure, T>) => void): StoreAnswer<T> => {
  if (!('then' in answer)) {
    look(answer);
    return answer;
  }
  return Promise.resolve(answer).then((value) => {
    look(value);
    return value;
  });
};

/** Runs the ordering `commands`, the model doing `plan` in turn, in `world`, and checks the invariants. */
export const runOrdering = async (
  world: OrderingWorld,
  commands: ReadonlyArray<Command>,
  plan: ReadonlyArray<Behaviour>,
): Promise<void> => {
  const { scale } = world;
  const ms = (given: number): number => Math.max(1, Math.round(given * scale));
  const lease = LEASE * scale;
  const until = <T>(promise: Promise<T>): Promise<T | undefined> => world.until(promise, 20 * lease);
  const calls = [...plan];
  /** The messages a call that failed or never answered was to note: the next message's extraction may not reach them. */
  const unheard = new Set<string>();
  /** What broke an invariant as it happened (a throw in a store or model call would be taken for its failure). */
  const broken: string[] = [];
  /** When each holder last asked for the lease and was given it: its lease holds for `lease` from then at least. */
  const leased = new Map<string, number>();
  /** The number the store gave each message in its queue, where it was first queued. */
  const queued = new Map<string, number>();
  const enqueued = (text: string | undefined, seq: number): void => {
    if (text !== undefined) queued.set(text, Math.min(seq, queued.get(text) ?? seq));
  };
  const rank: Rank =
    world.order === 'recorded' ? recordedOrder : (text) => queued.get(text) ?? Number.POSITIVE_INFINITY;
  /** The extractions still running, by their holder. */
  const running = new Set<{ readonly holder: string }>();
  const complete =
    (holder: string): CompleteFn =>
    (prompt, { signal }) => {
      if (!prompt.includes('Latest user message:')) return Promise.resolve(rewrite(prompt));
      const next = calls.shift() ?? { kind: 'answer', delay: 1 };
      const unqueued = [...prompt.matchAll(/^User: (.*)$/gmu)].filter(([, text]) => rank(text!) === Infinity);
      if (unqueued.length > 0)
        broken.push(`a prompt shows messages no queue held: ${unqueued.map(([, text]) => text)}`);
      // A second extraction at once only once the lease of the first one's holder has expired.
      for (const other of running) {
        const since = Date.now() - (leased.get(other.holder) ?? Number.NEGATIVE_INFINITY);
        if (since < lease) broken.push(`a second extraction ${since} ms into the lease of the holder of one`);
      }
      const call = { holder };
      running.add(call);
      signal.addEventListener('abort', () => running.delete(call));
      if (next.kind !== 'hang') setTimeout(() => running.delete(call), ms(next.delay));
      if (next.kind !== 'answer') for (const text of fresh(prompt, rank)) unheard.add(text);
      if (next.kind === 'hang') return new Promise<string>(() => undefined);
      return new Promise((resolve, reject) =>
        setTimeout(
          () => (next.kind === 'fail' ? reject(new Error('the model is down')) : resolve(extract(prompt, rank))),
          ms(next.delay),
        ),
      );
    };
  /** The facts of each list of s1 the store took, by the version it took it at (saves may answer out of order). */
  const stored = new Map<number, ReadonlyArray<string>>();
  /** Each fact entering the stored list counts its message, so each enters once and never leaves, and the color never goes back. */
  const follows = (before: ReadonlyArray<string>, after: ReadonlyArray<string>): void => {
    const lost = before.filter((fact) => !COLOR.test(fact) && !after.includes(fact));
    if (lost.length > 0) broken.push(`facts the stored list lost: ${lost}`);
    if (colorRank(after, rank) < colorRank(before, rank))
      broken.push(
        `the stored color went back: ${before.find((fact) => COLOR.test(fact))} to ${after.find((fact) => COLOR.test(fact))}`,
      );
  };
  const landed = (version: number, facts: ReadonlyArray<string>): void => {
    const twice = duplicates(facts);
    if (twice.length > 0) broken.push(`a fact twice in the stored list: ${twice}`);
    stored.set(version, facts);
    const [before, after] = [stored.get(version - 1), stored.get(version + 1)];
    if (before !== undefined) follows(before, facts);
    if (after !== undefined) follows(facts, after);
  };
  /** An app server's store, its saves of s1 and the leases it is given watched. */
  const watched = (store: NotesStore): NotesStore => {
    const save: NotesStore['save'] = (user, write) =>
      seen(store.save(user, write), (answer: E.Either<NotesStoreFailure, NotesWritten>) => {
        const written = write.sessions.find((record) => record.session === 's1');
        if (E.isRight(answer) && written !== undefined)
          landed(
            written.expected + 1,
            ((written.value as { facts?: Fact[] } | null)?.facts ?? []).map((fact) => fact.fact),
          );
      });
    const { leases } = store;
    if (leases === undefined) return { ...store, save };
    const watchedLeases: NotesLeases = {
      lease: (user, session, request) => {
        const asked = Date.now();
        return seen(leases.lease(user, session, request), (answer: E.Either<NotesStoreFailure, LeaseAnswer>) => {
          if (E.isLeft(answer)) return;
          answer.right.added.forEach((seq, index) => enqueued(request.add?.[index]?.text, seq));
          for (const item of answer.right.queue) enqueued(item.text, item.seq);
          if (answer.right.held) leased.set(request.holder, Math.max(asked, leased.get(request.holder) ?? asked));
        });
      },
    };
    return { ...store, save, leases: watchedLeases };
  };
  const check = (): void => {
    expect(broken).toEqual([]);
    for (const tracker of live) {
      const context = tracker.contextFor('maya', 's1');
      if (E.isLeft(context)) continue;
      expect(duplicates(lines(context.right.session)), 'a fact twice in the session block').toEqual([]);
      expect(duplicates(lines(context.right.profile)), 'a fact twice in the profile block').toEqual([]);
    }
  };
  let made = 0;
  const start = (): NotableFactsTracker => {
    const holder = `server-${(made += 1)}`;
    return server(complete(holder), watched(world.store()), holder, scale);
  };
  const live = [start(), start()];
  const everyTracker = [...live];
  const pending: Array<Promise<unknown>> = [];
  /** Each message recorded (its text) and the step it was recorded at. */
  const recorded: Array<{ readonly text: string }> = [];
  let closes = 0;
  const record = (at: number, text: string): void => {
    if (E.isRight(live[at]!.recordUserMessage('maya', 's1', text))) recorded.push({ text });
  };
  for (const [index, next] of commands.entries()) {
    if (next.kind === 'message') record(next.at, next.color ? `color c${index}` : `m${index}`);
    else if (next.kind === 'retry' && recorded.length > 0) record(next.at, recorded.at(-1)!.text);
    else if (next.kind === 'advance') await world.pass(ms(next.ms));
    else if (next.kind === 'close' && closes < 2) {
      closes += 1;
      pending.push(live[next.at]!.close());
      live[next.at] = start();
      everyTracker.push(live[next.at]!);
    } else if (next.kind === 'release') live[next.at]!.release('maya', 's1');
    else if (next.kind === 'stage')
      pending.push(next.named ? live[next.at]!.endStage('maya', 's1') : live[next.at]!.endStage('maya'));
    else if (next.kind === 'load') pending.push(live[next.at]!.load('maya', 's1'));
    await world.pass(1);
    check();
  }
  // From here on, every model call answers: let everything settle, then end the stage.
  calls.length = 0;
  const settled = await until(Promise.all(live.map((tracker) => tracker.settled())));
  expect(settled, 'settled').toBeDefined();
  await until(Promise.all(pending));
  const stage = await until(live[0]!.endStage('maya', 's1'));
  expect(stage !== undefined && E.isRight(stage), 'the last end of stage').toBe(true);
  await until(Promise.all(everyTracker.map((tracker) => tracker.close())));
  check();

  // What a server started now reads: every message told since the last failed call, the last color, each once.
  const reader = start();
  expect(await until(reader.load('maya', 's1'))).toEqual(E.right(undefined));
  const context = reader.contextFor('maya', 's1');
  const session = E.isRight(context) ? lines(context.right.session).map((line) => line.slice(2)) : [];
  expect(duplicates(session)).toEqual([]);
  const kept = recorded.filter(({ text }) => !unheard.has(text));
  const said = kept.filter(({ text }) => !text.startsWith('color ')).map(({ text }) => `Said ${text}`);
  expect(
    said.filter((fact) => !session.includes(fact)),
    'messages lost',
  ).toEqual([]);
  const colors = kept.filter(({ text }) => text.startsWith('color ')).map(({ text }) => rank(text));
  if (colors.length > 0) expect(colorRank(session, rank), 'the last color').toBeGreaterThanOrEqual(Math.max(...colors));
  // The profile holds the session's list as the last end of stage merged it, each fact once.
  expect(await until(reader.load('maya', 's2'))).toEqual(E.right(undefined));
  const next = reader.contextFor('maya', 's2');
  const profile = E.isRight(next) ? lines(next.right.profile).map((line) => line.slice(2)) : [];
  expect(duplicates(profile)).toEqual([]);
  expect([...profile].sort()).toEqual([...session].sort());
  await until(reader.close());
  for (const tracker of [...everyTracker, reader])
    expect(replayNotes(tracker.events(), emptyNotesLedger())).toEqual(tracker.getSnapshot());
};
