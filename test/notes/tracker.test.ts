import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, expectTypeOf, it, vi } from 'vitest';
import { replayNotes } from '../../src/notes/events.js';
import { emptyNotesLedger, selectSessionFacts, selectSessions } from '../../src/notes/ledger.js';
import type { CompleteFn, CompleteOptions } from '../../src/notes/port.js';
import { MAX_REPLIES_PER_TURN } from '../../src/notes/conversation.js';
import { createNotableFactsTracker } from '../../src/notes/tracker.js';
import type {
  NotableFactsTracker,
  NotesContext,
  NotesTrackerFailure,
  RecordOutcome,
} from '../../src/notes/trackerTypes.js';
import { MAX_PROMPT_TURNS } from '../../src/notes/transition.js';
import { tempDir } from '../tempDirs.js';
import { UNUSABLE_CATEGORIES } from './unusableCategories.js';

const answer = (...facts: Array<[string, string]>): string =>
  JSON.stringify({ notableFacts: facts.map(([category, fact]) => ({ category, fact })) });

/** The latest user message of an extraction prompt. */
const latestMessage = (prompt: string): string => /Latest user message:\nUser: (.*)/u.exec(prompt)?.[1] ?? '';

/** A model whose calls stay open until the test answers them. */
const manualModel = () => {
  const calls: Array<{
    prompt: string;
    options: CompleteOptions;
    resolve: (text: string) => void;
    reject: (error: Error) => void;
  }> = [];
  const complete: CompleteFn = (prompt, options) =>
    new Promise((resolve, reject) => {
      calls.push({ prompt, options, resolve, reject });
    });
  return { calls, complete };
};

/** The value of a result that must have succeeded. */
const right = <T>(result: E.Either<{ readonly code: string; readonly message: string }, T>): T => {
  if (E.isLeft(result)) throw new Error(`expected a value, got ${result.left.code}: ${result.left.message}`);
  return result.right;
};

/** What `contextFor` gives for ids that are valid. */
const contextOf = (tracker: NotableFactsTracker, user: string, session: string): NotesContext =>
  right(tracker.contextFor(user, session));

/** Lets the microtasks that start model calls run. */
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('createNotableFactsTracker', () => {
  it('answers recording and reading synchronously: only ends of stage and settling are promises', () => {
    expectTypeOf<NotableFactsTracker['recordUserMessage']>().returns.toEqualTypeOf<
      E.Either<NotesTrackerFailure, RecordOutcome>
    >();
    expectTypeOf<NotableFactsTracker['contextFor']>().returns.toEqualTypeOf<
      E.Either<NotesTrackerFailure, NotesContext>
    >();
    expectTypeOf<NotableFactsTracker['settled']>().returns.toEqualTypeOf<
      Promise<E.Either<NotesTrackerFailure, void>>
    >();
  });

  it('serves facts from the next message on (N+1): the first message gets nothing', async () => {
    const tracker = createNotableFactsTracker({
      complete: async () => answer(['People', 'Partner is Jordan']),
      now: () => 1_000,
    });
    expect(tracker.recordUserMessage('maya', 's1', 'Hi, my partner Jordan and I keep fighting.')).toEqual(
      E.right('started'),
    );
    expect(contextOf(tracker, 'maya', 's1')).toEqual({
      profile: '',
      session: '',
      text: '',
      history: [{ role: 'user', content: 'Hi, my partner Jordan and I keep fighting.' }],
    });
    await tracker.settled();
    expect(contextOf(tracker, 'maya', 's1').text).toBe('NOTED FACTS FROM THIS SESSION:\n[People]\n- Partner is Jordan');
    expect(tracker.events()).toEqual([
      {
        type: 'notes/extracted',
        user: 'maya',
        session: 's1',
        facts: [{ category: 'People', fact: 'Partner is Jordan' }],
        at: 1_000,
        messagesAt: 1_000,
      },
    ]);
  });

  it('returns before the model is even called', async () => {
    const model = manualModel();
    const tracker = createNotableFactsTracker({ complete: model.complete });
    tracker.recordUserMessage('maya', 's1', 'Hello');
    expect(model.calls).toHaveLength(0);
    await tick();
    expect(model.calls).toHaveLength(1);
  });

  it('runs at most one extraction per user and session, and coalesces later messages into one follow-up', async () => {
    const model = manualModel();
    const tracker = createNotableFactsTracker({ complete: model.complete });
    expect(tracker.recordUserMessage('maya', 's1', 'first')).toEqual(E.right('started'));
    tracker.recordAssistantMessage('maya', 's1', 'reply one');
    expect(tracker.recordUserMessage('maya', 's1', 'second')).toEqual(E.right('coalesced'));
    tracker.recordAssistantMessage('maya', 's1', 'reply two');
    expect(tracker.recordUserMessage('maya', 's1', 'third')).toEqual(E.right('coalesced'));
    expect(tracker.recordUserMessage('jordan', 's1', 'partner')).toEqual(E.right('started'));
    await tick();
    expect(model.calls.map((call) => latestMessage(call.prompt))).toEqual(['first', 'partner']);
    model.calls[0]!.resolve(answer(['People', 'Partner is Jordan']));
    await tick();
    expect(model.calls).toHaveLength(3);
    const followUp = model.calls[2]!.prompt;
    expect(latestMessage(followUp)).toBe('third');
    expect(followUp).toContain('User: first\nAssistant: reply one\nUser: second\nAssistant: reply two\n');
    expect(followUp).toContain('{"category":"People","fact":"Partner is Jordan"}');
    model.calls[1]!.resolve(answer(['People', 'Partner is Maya']));
    model.calls[2]!.resolve(answer(['People', 'Partner is Jordan'], ['Logistics', 'Works nights']));
    await tracker.settled();
    expect(selectSessionFacts(tracker.getSnapshot(), 'maya', 's1')).toHaveLength(2);
    expect(selectSessionFacts(tracker.getSnapshot(), 'jordan', 's1')).toEqual([
      { category: 'People', fact: 'Partner is Maya' },
    ]);
  });

  it('keeps the facts when the model fails or answers nonsense, recording why', async () => {
    const answers = [
      async () => answer(['People', 'Partner is Jordan']),
      async () => Promise.reject(new Error('overloaded')),
      async () => 'Sorry, I cannot help.',
    ];
    const tracker = createNotableFactsTracker({ complete: () => answers.shift()!(), now: () => 5 });
    for (const text of ['one', 'two', 'three']) {
      tracker.recordUserMessage('maya', 's1', text);
      await tracker.settled();
    }
    expect(selectSessionFacts(tracker.getSnapshot(), 'maya', 's1')).toEqual([
      { category: 'People', fact: 'Partner is Jordan' },
    ]);
    expect(tracker.events().slice(1)).toEqual([
      {
        type: 'notes/extractionFailed',
        user: 'maya',
        session: 's1',
        code: 'model_error',
        message: 'overloaded',
        at: 5,
      },
      {
        type: 'notes/extractionFailed',
        user: 'maya',
        session: 's1',
        code: 'invalid_response',
        message: 'no_json: the response holds no JSON object or array',
        at: 5,
      },
    ]);
  });

  it('never blocks on a hanging model: the call times out, its signal aborts, and the next message still runs', async () => {
    const signals: AbortSignal[] = [];
    const tracker = createNotableFactsTracker({
      complete: (_prompt, { signal }) => {
        signals.push(signal);
        return new Promise<string>(() => undefined);
      },
      timeoutMs: 15,
    });
    expect(tracker.recordUserMessage('maya', 's1', 'hello')).toEqual(E.right('started'));
    expect(tracker.recordUserMessage('maya', 's1', 'again')).toEqual(E.right('coalesced'));
    expect(contextOf(tracker, 'maya', 's1').text).toBe('');
    // The calls came back before the timeout could even fire.
    expect(tracker.events()).toEqual([]);
    await tracker.settled();
    expect(signals).toHaveLength(2);
    expect(signals.every((signal) => signal.aborted)).toBe(true);
    expect(tracker.events().map((event) => event.type === 'notes/extractionFailed' && event.code)).toEqual([
      'timeout',
      'timeout',
    ]);
  });

  it('ends a stage once the running extraction has settled, merging into the profile', async () => {
    const model = manualModel();
    const tracker = createNotableFactsTracker({ complete: model.complete, now: () => 7 });
    tracker.recordUserMessage('maya', 's1', 'Jordan and I have been married three years');
    const stage = tracker.endStage('maya');
    await tick();
    model.calls[0]!.resolve(answer(['History', 'Married to Jordan for three years']));
    expect(right(await stage)).toEqual({
      user: 'maya',
      sessions: ['s1'],
      profile: {
        facts: [{ category: 'History', fact: 'Married to Jordan for three years', session: 's1', at: 7 }],
        consolidatedAt: 7,
        sessionCount: 1,
      },
      dropped: [],
    });
    expect(contextOf(tracker, 'maya', 's2').text).toBe(
      'ABOUT THIS USER (from previous sessions):\n[History]\n- Married to Jordan for three years',
    );
    expect(contextOf(tracker, 'jordan', 's1').text).toBe('');
    expect(right(await tracker.endStage('maya')).sessions).toEqual([]);
  });

  it('can have the model rewrite the merged profile through the same port', async () => {
    const prompts: string[] = [];
    const tracker = createNotableFactsTracker({
      complete: async (prompt) => {
        prompts.push(prompt);
        return prompts.length === 1
          ? answer(['People', 'Partner is Jordan'], ['People', 'Married to Jordan'])
          : answer(['People', 'Married to Jordan']);
      },
      consolidateWithModel: true,
    });
    tracker.recordUserMessage('maya', 's1', 'I married Jordan');
    await tracker.settled();
    await tracker.endStage('maya', 's1');
    await tracker.settled();
    expect(prompts[1]).toContain('Rewrite the profile:');
    expect(contextOf(tracker, 'maya', 's2').profile).toBe(
      'ABOUT THIS USER (from previous sessions):\n[People]\n- Married to Jordan',
    );
    expect(tracker.events().map((event) => event.type)).toEqual([
      'notes/extracted',
      'notes/sessionConsolidated',
      'notes/profileRewritten',
    ]);
  });

  it("takes consolidateWithModel 'auto', the default: a merge the rule decides asks the model nothing, false never asks", async () => {
    for (const mode of ['auto', false] as const) {
      const prompts: string[] = [];
      const tracker = createNotableFactsTracker({
        complete: async (prompt) => {
          prompts.push(prompt);
          return answer(['People', 'Married to Jordan']);
        },
        consolidateWithModel: mode,
      });
      tracker.recordUserMessage('maya', 's1', 'I married Jordan');
      await tracker.settled();
      await tracker.endStage('maya', 's1');
      await tracker.settled();
      expect(prompts.filter((prompt) => prompt.includes('Rewrite the profile:'))).toEqual([]);
      expect(tracker.events().map((event) => event.type)).toEqual(['notes/extracted', 'notes/sessionConsolidated']);
    }
  });

  it('reads historyTurns 0 as no history window, as the replay reads turns 0 (not as the default)', async () => {
    const tracker = createNotableFactsTracker({ complete: async () => answer(), historyTurns: 0 });
    tracker.recordUserMessage('maya', 's1', 'hello');
    tracker.recordAssistantMessage('maya', 's1', 'hi, how are you?');
    await tracker.settled();
    expect(E.isRight(tracker.contextFor('maya', 's1')) && tracker.contextFor('maya', 's1')).toMatchObject({
      right: { history: [] },
    });
    const withDefault = createNotableFactsTracker({ complete: async () => answer() });
    withDefault.recordUserMessage('maya', 's1', 'hello');
    await withDefault.settled();
    expect(E.isRight(withDefault.contextFor('maya', 's1')) && withDefault.contextFor('maya', 's1')).toMatchObject({
      right: { history: [{ role: 'user', content: 'hello' }] },
    });
  });

  it('notifies listeners of changes only, and survives a failing one', async () => {
    const answers = [answer(['People', 'Partner is Jordan']), 'nonsense'];
    const tracker = createNotableFactsTracker({ complete: async () => answers.shift()! });
    const seen: number[] = [];
    tracker.subscribe(() => {
      throw new Error('listener bug');
    });
    const unsubscribe = tracker.subscribe((next, previous) =>
      seen.push(selectSessionFacts(next, 'maya', 's1').length - selectSessionFacts(previous, 'maya', 's1').length),
    );
    tracker.recordUserMessage('maya', 's1', 'one');
    await tracker.settled();
    tracker.recordUserMessage('maya', 's1', 'two');
    await tracker.settled();
    expect(seen).toEqual([1]);
    unsubscribe();
  });

  it('answers bad input with invalid_input, reports a failing clock, and never throws, whatever it is given', async () => {
    const heard: string[] = [];
    const tracker = createNotableFactsTracker({
      complete: () => {
        throw new Error('synchronous failure');
      },
      now: () => {
        throw new Error('no clock');
      },
      categories: 'nope' as never,
      onError: (failure) => heard.push(`${failure.code}: ${failure.message}`),
    });
    const invalid = { _tag: 'Left', left: { code: 'invalid_input', message: expect.any(String) } };
    expect(tracker.recordUserMessage('', 's1', 'x')).toEqual(invalid);
    expect(tracker.recordUserMessage('maya', 's1', '   ')).toEqual(invalid);
    expect(tracker.recordUserMessage('maya', 's1', '\u200b\u2060')).toEqual(invalid);
    expect(tracker.recordAssistantMessage('maya', 's1', ' \u200d ')).toEqual(invalid);
    expect(tracker.recordUserMessage('\u200b', 's1', 'x')).toEqual(invalid);
    expect(tracker.recordUserMessage(null as never, undefined as never, 3 as never)).toEqual(invalid);
    expect(tracker.recordAssistantMessage('maya', 's1', 7 as never)).toEqual(invalid);
    expect(tracker.contextFor(undefined as never, {} as never)).toEqual(invalid);
    expect(await tracker.endStage(42 as never)).toEqual(invalid);
    expect(await tracker.load('maya', '')).toEqual(invalid);
    // The calls' bad input is the caller's to see; onError hears only the categories it could not use.
    expect(heard).toEqual([expect.stringMatching(/^invalid_input: the categories option was not used: /u)]);
    heard.length = 0;
    tracker.recordUserMessage('maya', 's1', 'fine');
    await tracker.settled();
    expect(tracker.events()).toEqual([
      {
        type: 'notes/extractionFailed',
        user: 'maya',
        session: 's1',
        code: 'model_error',
        message: 'synchronous failure',
        at: 0,
      },
    ]);
    expect(heard.length).toBeGreaterThan(0);
    expect(new Set(heard)).toEqual(new Set(['clock_failed: the clock failed: no clock']));
    // Only a tracker without its model is refused, where it is made (see arguments.test.ts).
    expect(() => createNotableFactsTracker(undefined as never)).toThrow(TypeError);
  });

  it('starts from a saved ledger', async () => {
    const initial = replayNotes([
      {
        type: 'notes/extracted',
        user: 'maya',
        session: 's1',
        facts: [{ category: 'People', fact: 'Partner is Jordan' }],
        at: 1,
      },
    ]);
    const tracker = createNotableFactsTracker({ complete: async () => '[]', initial });
    expect(tracker.getSnapshot()).toBe(initial);
    expect(contextOf(tracker, 'maya', 's1').session).toBe(
      'NOTED FACTS FROM THIS SESSION:\n[People]\n- Partner is Jordan',
    );
  });
});

/** Waits `ms` milliseconds of real time (a model that answers after a while). */
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('hostile and heavy use', () => {
  it('describes any rejection without throwing: a null-prototype object, a throwing toString, a Proxy, a huge message', async () => {
    const hostile: unknown[] = [
      Object.create(null),
      {
        toString() {
          throw new Error('no text form');
        },
      },
      new Proxy(
        {},
        {
          get: () => {
            throw new Error('trap');
          },
          getPrototypeOf: () => {
            throw new Error('trap');
          },
        },
      ),
      new Error('x'.repeat(1_000_000)),
    ];
    const rejections = [...hostile];
    const tracker = createNotableFactsTracker({ complete: () => Promise.reject(rejections.shift()), now: () => 3 });
    for (const [i] of hostile.entries()) {
      tracker.recordUserMessage('maya', 's1', `message ${i}`);
      await tracker.settled();
    }
    const failures = tracker.events().map((event) => event.type === 'notes/extractionFailed' && event);
    expect(failures.map((event) => event && event.code)).toEqual(Array(4).fill('model_error'));
    for (const event of failures) expect(event && event.message.length).toBeLessThanOrEqual(500);
    expect(failures[0] && failures[0].message).toBe('an object with no text form');
    await expect(tracker.endStage(Object.create(null) as never)).resolves.toMatchObject({
      left: { code: 'invalid_input' },
    });
    await expect(tracker.endStage(hostile[1] as never)).resolves.toMatchObject({ left: { code: 'invalid_input' } });
  });

  it('tells onError of categories it cannot use, as invalid_input naming why, and runs with the five defaults', async () => {
    const defaults = ['People', 'Logistics', 'Conflict', 'Emotional', 'History'];
    for (const [categories, reason] of UNUSABLE_CATEGORIES) {
      const heard: NotesTrackerFailure[] = [];
      const tracker = createNotableFactsTracker({
        complete: async () => answer(),
        categories: categories as never,
        onError: (failure) => heard.push(failure),
      });
      await tick();
      expect(heard).toEqual([
        {
          code: 'invalid_input',
          message: `the categories option was not used: ${reason}; the tracker uses the five default categories (${defaults.join(', ')})`,
        },
      ]);
      expect(tracker.getSnapshot().categories).toEqual(defaults);
    }
    for (const categories of [undefined, null, ['Health', { name: 'Work', description: 'the job' }]]) {
      const heard: NotesTrackerFailure[] = [];
      createNotableFactsTracker({
        complete: async () => answer(),
        categories: categories as never,
        onError: (failure) => heard.push(failure),
      });
      await tick();
      expect(heard).toEqual([]);
    }
  });

  it('takes ids of 1 to 200 characters as a reader counts them: an emoji is one, though two UTF-16 units', async () => {
    const tracker = createNotableFactsTracker({ complete: async () => answer(['People', 'Has a partner']) });
    const emoji = (count: number): string => '\u{1F600}'.repeat(count);
    // 200 characters each, 400 and 201 UTF-16 units.
    for (const id of [emoji(200), `${'x'.repeat(199)}\u{1F600}`]) {
      expect(tracker.recordUserMessage(id, id, 'hi')).toEqual(E.right('started'));
      await tracker.settled();
      expect(contextOf(tracker, id, id).session).toContain('Has a partner');
      expect(await tracker.endStage(id, id)).toMatchObject({ _tag: 'Right' });
      expect(await tracker.load(id, id)).toEqual(E.right(undefined));
    }
    const invalid = { _tag: 'Left', left: { code: 'invalid_input' } };
    for (const id of [emoji(201), `${'x'.repeat(200)}\u{1F600}`, 'x'.repeat(201)]) {
      expect(tracker.recordUserMessage(id, 's1', 'hi')).toMatchObject(invalid);
      expect(tracker.recordUserMessage('maya', id, 'hi')).toMatchObject(invalid);
      expect(tracker.contextFor(id, 's1')).toMatchObject(invalid);
    }
  });

  it('ends a stage and settles under continuous traffic: they wait for the extractions asked for before the call, not later ones', async () => {
    let calls = 0;
    const tracker = createNotableFactsTracker({
      complete: async (prompt) => {
        calls += 1;
        await sleep(4);
        return answer(['History', latestMessage(prompt)]);
      },
    });
    let n = 0;
    // A message every millisecond or so, for as long as the test runs: the session never goes idle.
    const traffic = setInterval(() => tracker.recordUserMessage('maya', 's1', `message ${(n += 1)}`), 1);
    try {
      tracker.recordUserMessage('maya', 's1', 'message 0');
      await sleep(10);
      const before = calls;
      const recorded = n;
      const stage = right(await tracker.endStage('maya'));
      expect(calls - before).toBeLessThanOrEqual(2);
      expect(stage.sessions).toEqual(['s1']);
      // The merged list answers a message recorded before the end of the stage was asked for, or later.
      const merged = Number(/message (\d+)/u.exec(stage.profile?.facts[0]?.fact ?? '')?.[1]);
      expect(merged).toBeGreaterThanOrEqual(recorded);
      const settling = calls;
      await tracker.settled();
      expect(calls - settling).toBeLessThanOrEqual(2);
    } finally {
      clearInterval(traffic);
    }
  });

  it('bounds the follow-up prompt of thousands of coalesced messages', async () => {
    const model = manualModel();
    const tracker = createNotableFactsTracker({ complete: model.complete });
    tracker.recordUserMessage('maya', 's1', 'first');
    // Two thousand: the bound does not depend on the count, and each coalesced message still
    // costs a check of every item in the lease's queue, which the store answers whole on every call.
    for (let i = 0; i < 2_000; i += 1) {
      tracker.recordAssistantMessage('maya', 's1', `reply ${i} ${'r'.repeat(900)}`);
      expect(tracker.recordUserMessage('maya', 's1', `message ${i} ${'m'.repeat(900)}`)).toEqual(E.right('coalesced'));
    }
    await tick();
    model.calls[0]!.resolve(answer(['People', 'Partner is Jordan']));
    await tick();
    const followUp = model.calls[1]!.prompt;
    expect(latestMessage(followUp)).toMatch(/^message 1999 m/u);
    expect(followUp.split('\nUser: ').length - 1).toBeLessThanOrEqual(MAX_PROMPT_TURNS + 1);
    expect(followUp.length).toBeLessThan(40_000);
  });

  it('keeps at most 20 parser warnings in an event, and one line counting the rest', async () => {
    const entries = [{ category: 'People', fact: 'Partner is Jordan' }, ...Array.from({ length: 30_000 }, () => 1)];
    const tracker = createNotableFactsTracker({ complete: async () => JSON.stringify({ notableFacts: entries }) });
    tracker.recordUserMessage('maya', 's1', 'hello');
    await tracker.settled();
    const [event] = tracker.events();
    expect(event?.type === 'notes/extracted' && event.warnings).toEqual([
      ...Array.from({ length: 20 }, (_, i) => `entry ${i + 1} dropped: expected { "category", "fact" }, not a number`),
      'and 29980 more warnings',
    ]);
  });

  it('keeps a bounded history window however many replies are recorded in a row', () => {
    const tracker = createNotableFactsTracker({ complete: async () => '[]' });
    tracker.recordUserMessage('maya', 's1', 'hello');
    for (let i = 0; i < 20_000; i += 1) tracker.recordAssistantMessage('maya', 's1', `reply ${i}`);
    const { history } = contextOf(tracker, 'maya', 's1');
    expect(history[0]).toEqual({ role: 'user', content: 'hello' });
    expect(history.length).toBe(1 + MAX_REPLIES_PER_TURN);
    expect(history.at(-1)).toEqual({ role: 'assistant', content: 'reply 19999' });
  });

  it('keeps its event log as a snapshot plus the last events, which rebuild the ledger', async () => {
    let n = 0;
    const tracker = createNotableFactsTracker({
      complete: async () => answer(['History', `event ${(n += 1)}`]),
      maxEvents: 10,
    });
    for (let i = 0; i < 60; i += 1) {
      tracker.recordUserMessage(`user ${i}`, 's1', `message ${i}`);
      await tracker.settled();
    }
    const log = tracker.eventLog();
    expect(log.events).toHaveLength(10);
    expect(tracker.events()).toEqual(log.events);
    expect(replayNotes(log.events, log.snapshot)).toEqual(tracker.getSnapshot());
    expect(selectSessions(log.snapshot)).toHaveLength(50);
    expect(selectSessions(tracker.getSnapshot())).toHaveLength(60);
  });

  it('times the model, not the host: an answer that arrived while the host was busy is not a timeout', async () => {
    // The model is a real process that answers after 50 ms (and then leaves a mark); the host stays
    // busy past the 100 ms timeout and until the mark is there, however loaded the machine: the
    // answer and the deadline are both due when the host is free.
    const answered = join(tempDir('model-'), 'answered');
    const tracker = createNotableFactsTracker({
      complete: () =>
        new Promise((resolve) => {
          const child = spawn('sh', ['-c', `sleep 0.05; echo answered; : > '${answered}'`], {
            stdio: ['ignore', 'pipe', 'ignore'],
          });
          child.stdout.once('data', () => resolve(answer(['People', 'Partner is Jordan'])));
        }),
      timeoutMs: 100,
    });
    tracker.recordUserMessage('maya', 's1', 'hello');
    // Busy in the check phase: the next turn of the event loop runs due timers before it reads input.
    await new Promise((resolve) => setImmediate(resolve));
    const busyUntil = performance.now() + 150;
    while (performance.now() < busyUntil || !existsSync(answered));
    await tracker.settled();
    expect(tracker.events().map((event) => event.type)).toEqual(['notes/extracted']);
  });

  it('clamps a timeout past what a timer can wait instead of firing at once', async () => {
    const tracker = createNotableFactsTracker({
      complete: async () => {
        await sleep(20);
        return answer(['People', 'Partner is Jordan']);
      },
      timeoutMs: 2 ** 31,
    });
    tracker.recordUserMessage('maya', 's1', 'hello');
    await tracker.settled();
    expect(tracker.events().map((event) => event.type)).toEqual(['notes/extracted']);
  });

  it('clamps a timeout of Infinity as it clamps any other past what a timer can wait, instead of waiting 15 s', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      let reply: (text: string) => void = () => undefined;
      const tracker = createNotableFactsTracker({
        complete: () => new Promise<string>((resolve) => (reply = resolve)),
        timeoutMs: Number.POSITIVE_INFINITY,
      });
      tracker.recordUserMessage('maya', 's1', 'hello');
      await vi.advanceTimersByTimeAsync(60_000);
      reply(answer(['People', 'Partner is Jordan']));
      await tracker.settled();
      expect(tracker.events().map((event) => event.type)).toEqual(['notes/extracted']);
    } finally {
      vi.useRealTimers();
    }
  });

  it('reports the profile an end of stage made even when the session was let go of as it merged', async () => {
    for (const cacheSize of [0, 1_000]) {
      const tracker = createNotableFactsTracker({
        complete: async () => answer(['People', 'Partner is Jordan']),
        cacheSize,
      });
      tracker.recordUserMessage('maya', 's1', 'My partner is Jordan.');
      tracker.release('maya', 's1');
      const stage = await tracker.endStage('maya');
      expect(E.isRight(stage) && stage.right.sessions).toEqual(['s1']);
      expect(E.isRight(stage) && stage.right.profile?.facts.map((fact) => fact.fact)).toEqual(['Partner is Jordan']);
    }
  });

  it('keeps zero-width and direction marks out of the blocks it serves', async () => {
    const tracker = createNotableFactsTracker({
      complete: async () => answer(['People', 'Part\u200Bner is \u200EJor\u200Fdan\u061C']),
    });
    tracker.recordUserMessage('maya', 's1', 'hello');
    await tracker.settled();
    expect(contextOf(tracker, 'maya', 's1').text).toBe('NOTED FACTS FROM THIS SESSION:\n[People]\n- Partner is Jordan');
  });
});

type Command =
  | { readonly kind: 'user'; readonly user: string; readonly session: string }
  | { readonly kind: 'assistant'; readonly user: string; readonly session: string }
  | { readonly kind: 'endStage'; readonly user: string; readonly session?: string }
  | { readonly kind: 'wait' };

type Behaviour = 'answer' | 'empty' | 'garbage' | 'reject' | 'hang';

describe('the shell under random use', () => {
  const users = ['maya', 'jordan'] as const;
  const sessions = ['s1', 's2'] as const;
  const commandArb: fc.Arbitrary<Command> = fc.oneof(
    {
      arbitrary: fc.record({
        kind: fc.constant('user' as const),
        user: fc.constantFrom(...users),
        session: fc.constantFrom(...sessions),
      }),
      weight: 5,
    },
    fc.record({
      kind: fc.constant('assistant' as const),
      user: fc.constantFrom(...users),
      session: fc.constantFrom(...sessions),
    }),
    fc
      .record({
        kind: fc.constant('endStage' as const),
        user: fc.constantFrom(...users),
        session: fc.option(fc.constantFrom(...sessions), { nil: undefined }),
      })
      .map(({ session, ...rest }): Command => (session === undefined ? rest : { ...rest, session })),
    fc.constant({ kind: 'wait' as const }),
  );

  it('never throws or blocks, keeps partners apart, and its event log replays to its state', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(commandArb, { maxLength: 14 }),
        fc.array(fc.constantFrom<Behaviour>('answer', 'answer', 'answer', 'empty', 'garbage', 'reject', 'hang'), {
          maxLength: 20,
        }),
        async (commands, behaviours) => {
          let time = 0;
          const script = [...behaviours];
          const complete: CompleteFn = async (prompt) => {
            const behaviour = script.shift() ?? 'answer';
            if (behaviour === 'hang') return new Promise<string>(() => undefined);
            if (behaviour === 'reject') throw new Error('model down');
            if (behaviour === 'garbage') return 'no idea';
            if (behaviour === 'empty') return '{"notableFacts": []}';
            // A profile rewrite gives the profile back as it was asked about.
            if (prompt.includes('Rewrite the profile:'))
              return `{"notableFacts": [${prompt.split('Profile (least recent first):\n')[1]!.split('\n\n')[0]!.split('\n').join(',')}]}`;
            const message = latestMessage(prompt);
            return answer(['People', message], ['History', `${message.split(' ')[0]} keeps a history`]);
          };
          const problems: string[] = [];
          const tracker = createNotableFactsTracker({
            complete,
            timeoutMs: 2,
            now: () => (time += 1),
            onError: (failure) => problems.push(failure.code),
          });
          const stages: Array<Promise<void>> = [];
          let n = 0;
          for (const command of commands) {
            if (command.kind === 'user')
              expect(
                right(tracker.recordUserMessage(command.user, command.session, `${command.user} said ${(n += 1)}`)),
              ).toMatch(/^(started|coalesced)$/u);
            else if (command.kind === 'assistant')
              expect(tracker.recordAssistantMessage(command.user, command.session, `reply ${n}`)).toEqual(
                E.right(undefined),
              );
            else if (command.kind === 'endStage')
              stages.push(
                tracker.endStage(command.user, command.session).then((result) => {
                  const report = right(result);
                  expect(report.user).toBe(command.user);
                  // A stage of one session merges that session alone, or nothing new.
                  for (const session of report.sessions) expect(command.session ?? session).toBe(session);
                  expect(new Set(report.sessions).size).toBe(report.sessions.length);
                }),
              );
            else await tracker.settled();
            for (const user of users)
              for (const session of sessions) {
                const { text, history } = contextOf(tracker, user, session);
                // Partners never meet: every line of a user's blocks and history is theirs.
                for (const line of text.split('\n').filter((l) => l.startsWith('- ')))
                  expect(line.startsWith(`- ${user} `)).toBe(true);
                for (const message of history)
                  if (message.role === 'user') expect(message.content.startsWith(`${user} said`)).toBe(true);
              }
          }
          await tracker.settled();
          await Promise.all(stages);
          expect(problems).toEqual([]);
          const snapshot = tracker.getSnapshot();
          expect(replayNotes(tracker.events(), emptyNotesLedger())).toEqual(snapshot);
          for (const { user, notes } of selectSessions(snapshot))
            for (const fact of notes.facts) expect(fact.fact.startsWith(`${user} `)).toBe(true);
          for (const user of users)
            for (const line of contextOf(tracker, user, 's1')
              .text.split('\n')
              .filter((line) => line.startsWith('- ')))
              expect(line.startsWith(`- ${user} `)).toBe(true);
        },
      ),
      { numRuns: 40 },
    );
  });
});
