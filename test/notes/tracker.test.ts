import fc from 'fast-check';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { replayNotes } from '../../src/notes/events.js';
import { emptyNotesLedger, selectSessionFacts, selectSessions } from '../../src/notes/ledger.js';
import type { CompleteFn, CompleteOptions } from '../../src/notes/port.js';
import {
  createNotableFactsTracker,
  type NotableFactsTracker,
  type NotesContext,
  type RecordOutcome,
} from '../../src/notes/tracker.js';

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

/** Lets the microtasks that start model calls run. */
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('createNotableFactsTracker', () => {
  it('answers recording and reading synchronously: only ends of stage and settling are promises', () => {
    expectTypeOf<NotableFactsTracker['recordUserMessage']>().returns.toEqualTypeOf<RecordOutcome>();
    expectTypeOf<NotableFactsTracker['contextFor']>().returns.toEqualTypeOf<NotesContext>();
    expectTypeOf<NotableFactsTracker['settled']>().returns.toEqualTypeOf<Promise<void>>();
  });

  it('serves facts from the next message on (N+1): the first message gets nothing', async () => {
    const tracker = createNotableFactsTracker({
      complete: async () => answer(['People', 'Partner is Jordan']),
      now: () => 1_000,
    });
    expect(tracker.recordUserMessage('maya', 's1', 'Hi, my partner Jordan and I keep fighting.')).toBe('started');
    expect(tracker.contextFor('maya', 's1')).toEqual({
      profile: '',
      session: '',
      text: '',
      history: [{ role: 'user', content: 'Hi, my partner Jordan and I keep fighting.' }],
    });
    await tracker.settled();
    expect(tracker.contextFor('maya', 's1').text).toBe('NOTED FACTS FROM THIS SESSION:\n[People]\n- Partner is Jordan');
    expect(tracker.events()).toEqual([
      {
        type: 'notes/extracted',
        user: 'maya',
        session: 's1',
        facts: [{ category: 'People', fact: 'Partner is Jordan' }],
        at: 1_000,
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
    expect(tracker.recordUserMessage('maya', 's1', 'first')).toBe('started');
    tracker.recordAssistantMessage('maya', 's1', 'reply one');
    expect(tracker.recordUserMessage('maya', 's1', 'second')).toBe('coalesced');
    tracker.recordAssistantMessage('maya', 's1', 'reply two');
    expect(tracker.recordUserMessage('maya', 's1', 'third')).toBe('coalesced');
    expect(tracker.recordUserMessage('jordan', 's1', 'partner')).toBe('started');
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
        reason: 'model_error',
        message: 'overloaded',
        at: 5,
      },
      {
        type: 'notes/extractionFailed',
        user: 'maya',
        session: 's1',
        reason: 'invalid_response',
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
    expect(tracker.recordUserMessage('maya', 's1', 'hello')).toBe('started');
    expect(tracker.recordUserMessage('maya', 's1', 'again')).toBe('coalesced');
    expect(tracker.contextFor('maya', 's1').text).toBe('');
    // The calls came back before the timeout could even fire.
    expect(tracker.events()).toEqual([]);
    await tracker.settled();
    expect(signals).toHaveLength(2);
    expect(signals.every((signal) => signal.aborted)).toBe(true);
    expect(tracker.events().map((event) => event.type === 'notes/extractionFailed' && event.reason)).toEqual([
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
    expect(await stage).toEqual({
      user: 'maya',
      sessions: ['s1'],
      profile: {
        facts: [{ category: 'History', fact: 'Married to Jordan for three years' }],
        consolidatedAt: 7,
        sessionCount: 1,
      },
      dropped: [],
    });
    expect(tracker.contextFor('maya', 's2').text).toBe(
      'ABOUT THIS USER (from previous sessions):\n[History]\n- Married to Jordan for three years',
    );
    expect(tracker.contextFor('jordan', 's1').text).toBe('');
    expect((await tracker.endStage('maya')).sessions).toEqual([]);
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
    expect(tracker.contextFor('maya', 's2').profile).toBe(
      'ABOUT THIS USER (from previous sessions):\n[People]\n- Married to Jordan',
    );
    expect(tracker.events().map((event) => event.type)).toEqual([
      'notes/extracted',
      'notes/sessionConsolidated',
      'notes/profileRewritten',
    ]);
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

  it('ignores bad input and never throws, whatever it is given', async () => {
    const tracker = createNotableFactsTracker({
      complete: () => {
        throw new Error('synchronous failure');
      },
      now: () => {
        throw new Error('no clock');
      },
      categories: 'nope' as never,
    });
    expect(tracker.recordUserMessage('', 's1', 'x')).toBe('ignored');
    expect(tracker.recordUserMessage('maya', 's1', '   ')).toBe('ignored');
    expect(tracker.recordUserMessage(null as never, undefined as never, 3 as never)).toBe('ignored');
    expect(tracker.contextFor(undefined as never, {} as never)).toEqual({
      profile: '',
      session: '',
      text: '',
      history: [],
    });
    expect(await tracker.endStage(42 as never)).toEqual({ user: '42', sessions: [], profile: undefined, dropped: [] });
    tracker.recordUserMessage('maya', 's1', 'fine');
    await tracker.settled();
    expect(tracker.events()).toEqual([
      {
        type: 'notes/extractionFailed',
        user: 'maya',
        session: 's1',
        reason: 'model_error',
        message: 'synchronous failure',
        at: 0,
      },
    ]);
    expect(createNotableFactsTracker(undefined as never).recordUserMessage('maya', 's1', 'x')).toBe('started');
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
    expect(tracker.contextFor('maya', 's1').session).toBe(
      'NOTED FACTS FROM THIS SESSION:\n[People]\n- Partner is Jordan',
    );
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
            const message = latestMessage(prompt);
            return answer(['People', message], ['History', `${message.split(' ')[0]} keeps a history`]);
          };
          const tracker = createNotableFactsTracker({ complete, timeoutMs: 2, now: () => (time += 1) });
          let n = 0;
          for (const command of commands) {
            if (command.kind === 'user')
              expect(
                typeof tracker.recordUserMessage(command.user, command.session, `${command.user} said ${(n += 1)}`),
              ).toBe('string');
            else if (command.kind === 'assistant')
              tracker.recordAssistantMessage(command.user, command.session, `reply ${n}`);
            else if (command.kind === 'endStage') void tracker.endStage(command.user, command.session);
            else await tracker.settled();
            for (const user of users)
              for (const session of sessions) expect(typeof tracker.contextFor(user, session).text).toBe('string');
          }
          await tracker.settled();
          const snapshot = tracker.getSnapshot();
          expect(replayNotes(tracker.events(), emptyNotesLedger())).toEqual(snapshot);
          for (const { user, notes } of selectSessions(snapshot))
            for (const fact of notes.facts) expect(fact.fact.startsWith(`${user} `)).toBe(true);
          for (const user of users)
            for (const line of tracker
              .contextFor(user, 's1')
              .text.split('\n')
              .filter((l) => l.startsWith('- ')))
              expect(line.startsWith(`- ${user} `)).toBe(true);
        },
      ),
      { numRuns: 40 },
    );
  });
});
