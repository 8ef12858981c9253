/**
 * The lease state machine by orderings: two trackers (app servers) on one memory store with
 * leases, driven through generated interleavings of messages recorded at either (a message
 * recorded twice, as a client's retry, among them), model calls that answer after a delay, fail
 * or never answer, trackers closed or released in the middle of an extraction (a closed one
 * replaced by a new one, as a restarted server), ends of stage, and a clock moved past a lease.
 * After every step and at the end, the invariants docs/notes.md promises are checked through the
 * public API: each message counted once (its fact enters the stored list in one save and never
 * leaves it), none lost (an extraction that fails leaves its messages to the next one; a holder
 * closed or overtaken leaves its work in the queue for the next holder), no second extraction
 * while the lease of the first holds, no fact twice in a list or a block, the correction told
 * last winning, and every tracker's events replaying to its ledger. The orderings it found broken
 * are kept as examples first.
 */
import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { replayNotes } from '../../src/notes/events.js';
import { emptyNotesLedger } from '../../src/notes/ledger.js';
import type { CompleteFn } from '../../src/notes/port.js';
import { memoryNotesStore, type NotesStore } from '../../src/notes/store.js';
import { createNotableFactsTracker } from '../../src/notes/tracker.js';
import type { NotableFactsTracker } from '../../src/notes/trackerTypes.js';

const TIMEOUT = 1_000;
const LEASE = 400;
const POLL = 20;

/** What the model does with one call. */
type Behaviour = { readonly kind: 'answer' | 'fail'; readonly delay: number } | { readonly kind: 'hang' };

interface Fact {
  readonly category: string;
  readonly fact: string;
}

const COLOR = /^Favorite color is c(\d+)$/u;

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

/** The number of the color a list holds (-1: none). */
const colorOf = (facts: ReadonlyArray<Fact>): number =>
  Number(facts.map((fact) => COLOR.exec(fact.fact)?.[1]).find((found) => found !== undefined) ?? -1);

/** Whether `facts` already note the message `text`. */
const notes = (facts: ReadonlyArray<Fact>, text: string): boolean => {
  const color = /^color c(\d+)$/u.exec(text);
  return color === null ? facts.some((fact) => fact.fact === `Said ${text}`) : colorOf(facts) >= Number(color[1]);
};

/**
 * A model that knows the order messages were told in (their number): it notes the messages its
 * prompt shows after the last one its list already notes (never one the list skipped, so a
 * message the tracker lost stays lost), and a color message only over an older color. So any
 * fact lost or any correction undone is the tracker's doing.
 */
/** The messages a prompt shows after the last one its list notes: those its extraction is to note. */
const fresh = (prompt: string): string[] => {
  const facts = listed(prompt, 'Current facts:');
  const told = [...prompt.matchAll(/^User: (.*)$/gmu)].map((match) => match[1]!);
  return told.slice(told.map((text) => notes(facts, text)).lastIndexOf(true) + 1);
};

const extract = (prompt: string): string => {
  let facts = listed(prompt, 'Current facts:');
  for (const text of fresh(prompt)) {
    if (notes(facts, text)) continue;
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

const command = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('message' as const), at: fc.nat(1), color: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('retry' as const), at: fc.nat(1) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 600 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('close' as const), at: fc.nat(1) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('release' as const), at: fc.nat(1) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('stage' as const), at: fc.nat(1), named: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('load' as const), at: fc.nat(1) }) },
);

const behaviour: fc.Arbitrary<Behaviour> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({ kind: fc.constant('answer' as const), delay: fc.integer({ min: 1, max: 700 }) }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('fail' as const), delay: fc.integer({ min: 1, max: 300 }) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'hang' as const }) },
);

/** Runs the fake clock in steps until `promise` settles (or `ms` have passed), and gives its value. */
const until = async <T>(promise: Promise<T>, ms = 20 * LEASE): Promise<T | undefined> => {
  let outcome: { value: T } | undefined;
  void promise.then((value) => {
    outcome = { value };
  });
  for (let waited = 0; outcome === undefined && waited < ms; waited += POLL) await vi.advanceTimersByTimeAsync(POLL);
  return outcome?.value;
};

const lines = (block: string): string[] => block.split('\n').filter((line) => line.startsWith('- '));

const duplicates = (items: ReadonlyArray<string>): string[] =>
  items.filter((item, index) => items.indexOf(item) !== index);

/** An app server's tracker on `store`, named `holder`, with this file's short model timeout and lease. */
const server = (complete: CompleteFn, store: NotesStore, holder: string): NotableFactsTracker =>
  createNotableFactsTracker({
    complete,
    store,
    holder,
    timeoutMs: TIMEOUT,
    leaseMs: LEASE,
    leasePollMs: POLL,
    onError: () => undefined,
  });

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

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
    // Server b extracts "m0" past its lease; a takes the queue over and its model fails. b's late
    // work is refused as fenced, and its end of stage of every session must not write it either.
    const inner = memoryNotesStore({ now: () => Date.now() });
    const written: string[] = [];
    const store: NotesStore = {
      ...inner,
      save: (user, write) => {
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
    const [a, b] = ['a', 'b'].map((holder) => server(complete, store, holder));
    b!.recordUserMessage('maya', 's1', 'm0');
    await vi.advanceTimersByTimeAsync(1);
    a!.recordUserMessage('maya', 's1', 'm1');
    await vi.advanceTimersByTimeAsync(LEASE + 23);
    const stage = b!.endStage('maya');
    await until(Promise.all([a!.settled(), b!.settled()]));
    const report = await until(stage);
    await until(Promise.all([a!.close(), b!.close()]));
    expect(written.filter((write) => write.includes('Said m0'))).toEqual([]);
    // The end of stage is answered, and merged nothing of the dropped work.
    const merged = report !== undefined && E.isRight(report) ? (report.right.profile?.facts ?? []) : undefined;
    expect(merged?.map((fact) => fact.fact)).toEqual([]);
  });

  it('lose no message, never go back to an older list, say no fact twice and keep the correction told last', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(command, { minLength: 1, maxLength: 24 }),
        fc.array(behaviour, { maxLength: 12 }),
        async (commands, plan) => {
          const store = memoryNotesStore({ now: () => Date.now() });
          const calls = [...plan];
          /** The messages a call that failed or never answered was to note: the next message's extraction may not reach them. */
          const unheard = new Set<string>();
          /** What broke an invariant as it happened (a throw in a store or model call would be taken for its failure). */
          const broken: string[] = [];
          /** When each extraction still running began. */
          const running = new Set<{ readonly at: number }>();
          const complete: CompleteFn = (prompt, { signal }) => {
            if (!prompt.includes('Latest user message:')) return Promise.resolve(rewrite(prompt));
            const next = calls.shift() ?? { kind: 'answer', delay: 1 };
            // A second extraction at once only once the first has outlasted the lease it began under.
            for (const other of running)
              if (Date.now() - other.at < LEASE)
                broken.push(`a second extraction ${Date.now() - other.at} ms into one`);
            const call = { at: Date.now() };
            running.add(call);
            signal.addEventListener('abort', () => running.delete(call));
            if (next.kind !== 'hang') setTimeout(() => running.delete(call), next.delay);
            if (next.kind !== 'answer') for (const text of fresh(prompt)) unheard.add(text);
            if (next.kind === 'hang') return new Promise<string>(() => undefined);
            return new Promise((resolve, reject) =>
              setTimeout(
                () => (next.kind === 'fail' ? reject(new Error('the model is down')) : resolve(extract(prompt))),
                next.delay,
              ),
            );
          };
          /** The facts of the list the store last took, and the highest color it held. */
          let stored: string[] = [];
          let storedColor = -1;
          /** Each fact entering the stored list counts its message, so each enters once and never leaves. */
          const landed = (facts: ReadonlyArray<string>): void => {
            const twice = duplicates(facts);
            if (twice.length > 0) broken.push(`a fact twice in the stored list: ${twice}`);
            const lost = stored.filter((fact) => !COLOR.test(fact) && !facts.includes(fact));
            if (lost.length > 0) broken.push(`facts the stored list lost: ${lost}`);
            const color = Number(facts.map((fact) => COLOR.exec(fact)?.[1]).find((found) => found !== undefined) ?? -1);
            if (color < storedColor) broken.push(`the stored color went back from c${storedColor} to c${color}`);
            storedColor = Math.max(color, storedColor);
            stored = [...facts];
          };
          const save: NotesStore['save'] = (user, write) => {
            const answer = store.save(user, write);
            const written = write.sessions.find((record) => record.session === 's1');
            if (E.isRight(answer as E.Either<unknown, unknown>) && written !== undefined)
              landed(((written.value as { facts?: Fact[] } | null)?.facts ?? []).map((fact) => fact.fact));
            return answer;
          };
          const shared: NotesStore = { ...store, save };
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
          const start = (): NotableFactsTracker => server(complete, shared, `server-${(made += 1)}`);
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
            else if (next.kind === 'advance') await vi.advanceTimersByTimeAsync(next.ms);
            else if (next.kind === 'close' && closes < 2) {
              closes += 1;
              pending.push(live[next.at]!.close());
              live[next.at] = start();
              everyTracker.push(live[next.at]!);
            } else if (next.kind === 'release') live[next.at]!.release('maya', 's1');
            else if (next.kind === 'stage')
              pending.push(next.named ? live[next.at]!.endStage('maya', 's1') : live[next.at]!.endStage('maya'));
            else if (next.kind === 'load') pending.push(live[next.at]!.load('maya', 's1'));
            await vi.advanceTimersByTimeAsync(1);
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
          const colors = kept.filter(({ text }) => text.startsWith('color ')).map(({ text }) => Number(text.slice(7)));
          const sessionColor = session.map((fact) => COLOR.exec(fact)?.[1]).find((found) => found !== undefined);
          if (colors.length > 0) expect(Number(sessionColor)).toBeGreaterThanOrEqual(Math.max(...colors));
          // The profile holds the session's list as the last end of stage merged it, each fact once.
          expect(await until(reader.load('maya', 's2'))).toEqual(E.right(undefined));
          const next = reader.contextFor('maya', 's2');
          const profile = E.isRight(next) ? lines(next.right.profile).map((line) => line.slice(2)) : [];
          expect(duplicates(profile)).toEqual([]);
          expect([...profile].sort()).toEqual([...session].sort());
          await until(reader.close());
          for (const tracker of [...everyTracker, reader])
            expect(replayNotes(tracker.events(), emptyNotesLedger())).toEqual(tracker.getSnapshot());
        },
      ),
      { numRuns: 60 },
    );
  });
});
