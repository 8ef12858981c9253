import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { selectGlobalFacts, selectSessionFacts } from '../../src/notes/ledger.js';
import type { CompleteFn } from '../../src/notes/port.js';
import { replayConversationLog } from '../../src/notes/replay.js';
import { createNotableFactsTracker } from '../../src/notes/tracker.js';
import type { NotesEffect, NotesInput } from '../../src/notes/inputs.js';
import { memoryNotesStore, type NotesStore } from '../../src/notes/store.js';
import { callStore, isPending } from '../../src/notes/storeCall.js';
import { initialNotesState, type NotesState, selectConversation } from '../../src/notes/machine.js';
import { MAX_PROMPT_TURNS, notesTransition } from '../../src/notes/transition.js';

const answer = (...facts: Array<[string, string]>): string =>
  JSON.stringify({ notableFacts: facts.map(([category, fact]) => ({ category, fact })) });

const latestMessage = (prompt: string): string => /Latest user message:\nUser: (.*)/u.exec(prompt)?.[1] ?? '';

const isExtractionPrompt = (text: string): boolean => text.startsWith('You keep a short list of notable facts');

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

/**
 * Runs inputs through the machine, answering its loads and saves from a store in memory (which
 * answers at once), and collects every other effect.
 */
const run = (
  state: NotesState,
  inputs: ReadonlyArray<NotesInput>,
  store: NotesStore = memoryNotesStore(),
): [NotesState, NotesEffect[]] => {
  const queue = [...inputs];
  const effects: NotesEffect[] = [];
  let current = state;
  for (let input = queue.shift(); input !== undefined; input = queue.shift()) {
    const [next, more] = notesTransition(current, input);
    current = next;
    for (const effect of more)
      if (effect.type === 'load' || effect.type === 'save') {
        const answer = callStore(store, effect);
        if (!isPending(answer)) queue.push(answer);
      } else effects.push(effect);
  }
  return [current, effects];
};

describe('notesTransition', () => {
  it('the live tracker and the replay of its log ask the very same prompts, and end with the same ledger', async () => {
    const options = {
      categories: ['People', { name: 'Money', description: 'budgets, debts and savings' }, 'History'],
      softLimit: 7,
    };
    let clock = Date.UTC(2026, 1, 3, 19);
    const calls: Array<{ prompt: string; resolve: (text: string) => void; reject: (error: Error) => void }> = [];
    const complete: CompleteFn = (prompt) => new Promise((resolve, reject) => calls.push({ prompt, resolve, reject }));
    const tracker = createNotableFactsTracker({ ...options, complete, now: () => clock });
    const log: unknown[] = [];
    const livePrompts: string[] = [];

    const say = (user: string, text: string, session = 's1'): void => {
      clock += 60_000;
      log.push({ type: 'user', user, session, at: clock, text: `${user}: ${text}` });
      tracker.recordUserMessage(user, session, `${user}: ${text}`);
    };
    const reply = (user: string, text: string, session = 's1'): void => {
      clock += 60_000;
      log.push({ type: 'assistant', user, session, at: clock, text });
      tracker.recordAssistantMessage(user, session, text);
    };
    /** Answers the open call for `user` (found by its latest message), as the log records it. */
    const respond = async (user: string, outcome: { response: string } | { error: string }, session = 's1') => {
      await tick();
      const index = calls.findIndex((call) => latestMessage(call.prompt).startsWith(`${user}:`));
      const [call] = calls.splice(index, 1);
      livePrompts.push(call!.prompt);
      clock += 60_000;
      log.push({ type: 'extraction', user, session, at: clock, ...outcome });
      if ('response' in outcome) call!.resolve(outcome.response);
      else call!.reject(new Error(outcome.error));
      await tick();
    };

    say('maya', 'Jordan and I have been married three years.');
    say('maya', 'We are saving for a house.');
    reply('maya', 'That sounds like a big goal.');
    say('maya', 'And his mother visits every Sunday.');
    say('jordan', 'I work nights as a nurse.');
    await respond('maya', { response: answer(['History', 'Married to Jordan for three years']) });
    reply('maya', 'How do the Sundays go?');
    say('maya', 'Badly, most weeks.');
    await respond('jordan', { error: 'overloaded' });
    await respond('maya', {
      response: `Updated:\n\`\`\`json\n${answer(['History', 'Married to Jordan for three years'], ['Money', 'Saving for a house'])}\n\`\`\``,
    });
    say('jordan', 'Maya finds the Sundays hard.');
    await respond('maya', {
      response: answer(['Money', 'Saving for a house'], ['People', 'Mother visits on Sundays']),
    });
    await respond('jordan', { response: answer(['People', 'Works nights as a nurse']) });
    await tracker.settled();
    clock += 60_000;
    log.push({ type: 'endStage', user: 'maya', at: clock });
    await tracker.endStage('maya');
    say('maya', 'A new week, a calmer Sunday.', 's2');
    await respond('maya', { response: answer(['History', 'Had a calmer Sunday']) }, 's2');
    await tracker.settled();
    expect(calls).toEqual([]);

    const replayPrompts: string[] = [];
    const { report, ledger } = replayConversationLog(log.map((line) => JSON.stringify(line)).join('\n'), {
      ...options,
      countTokens: (text) => {
        if (isExtractionPrompt(text)) replayPrompts.push(text);
        return text.length;
      },
    });
    expect(report.errors).toEqual([]);
    expect(livePrompts).toHaveLength(6);
    expect(replayPrompts).toEqual(livePrompts);
    expect(livePrompts[0]).toContain('Keep at most 7 facts.');
    expect(livePrompts[0]).toContain('- Money: budgets, debts and savings');
    // The follow-up folds the two messages recorded while the first extraction ran.
    expect(latestMessage(livePrompts[2]!)).toBe('maya: And his mother visits every Sunday.');
    expect(ledger).toEqual(tracker.getSnapshot());
  });

  it('shows a follow-up one more exchange per folded message, up to MAX_PROMPT_TURNS', () => {
    const state = initialNotesState();
    const messages: NotesInput[] = Array.from({ length: 30 }, (_, i) => ({
      type: 'notes/userMessageRecorded',
      user: 'maya',
      session: 's1',
      text: `message ${i}`,
    }));
    const [running, first] = run(state, messages.slice(0, 1));
    expect(first.map((effect) => effect.type)).toEqual(['extract']);
    // Two folded messages: both earlier ones shown; twenty-nine: only the last MAX_PROMPT_TURNS of them.
    for (const [folded, shown] of [
      [2, 2],
      [29, MAX_PROMPT_TURNS],
    ] as const) {
      const [waiting, none] = run(running, messages.slice(1, 1 + folded));
      expect(none).toEqual([]);
      const [, effects] = run(waiting, [
        {
          type: 'notes/extractionSettled',
          user: 'maya',
          session: 's1',
          outcome: { _tag: 'Right', right: '{"notableFacts": []}' },
          at: 5,
        },
      ]);
      const followUp = effects.find((effect) => effect.type === 'extract');
      expect(followUp?.type === 'extract' && latestMessage(followUp.prompt)).toBe(`message ${folded}`);
      const history =
        followUp?.type === 'extract' ? followUp.prompt.split('(oldest first):\n')[1]!.split('\n\n')[0]! : '';
      expect(history.split('\n')).toHaveLength(shown);
    }
  });

  it('leaves the very same state for what it cannot use: bad ids, blank text, an answer nothing waits for', () => {
    const state = initialNotesState();
    const unusable: NotesInput[] = [
      { type: 'notes/userMessageRecorded', user: '', session: 's1', text: 'hello' },
      { type: 'notes/userMessageRecorded', user: 'maya', session: 's1', text: '   ' },
      // Invisible characters only (zero-width space, word joiner, tag characters) are as blank as spaces.
      { type: 'notes/userMessageRecorded', user: 'maya', session: 's1', text: '\u200b \u2060' },
      { type: 'notes/assistantMessageRecorded', user: 'maya', session: 's1', text: '\u{E0068}\u{E0069}' },
      { type: 'notes/userMessageRecorded', user: '\u200b', session: 's1', text: 'hello' },
      { type: 'notes/userMessageRecorded', user: 'maya', session: '\u200d\u00ad', text: 'hello' },
      { type: 'notes/assistantMessageRecorded', user: 'maya', session: 'x'.repeat(201), text: 'hi' },
      { type: 'notes/extractionRequested', user: 'maya', session: 's1' },
      {
        type: 'notes/extractionSettled',
        user: 'maya',
        session: 's1',
        outcome: { _tag: 'Right', right: '[]' },
        at: 1,
      },
      { type: 'notes/profileRewriteSettled', user: 'maya', outcome: { _tag: 'Right', right: '[]' }, at: 1 },
      { type: 'notes/unknown' } as never,
      null as never,
    ];
    for (const input of unusable) expect(notesTransition(state, input)).toEqual([state, []]);
    for (const input of unusable) expect(notesTransition(state, input)[0]).toBe(state);
  });

  it('settles an extraction into the ledger and records the event it applied', () => {
    const [state] = run(initialNotesState(), [
      { type: 'notes/userMessageRecorded', user: 'maya', session: 's1', text: 'Jordan is my partner' },
    ]);
    const [next, effects] = notesTransition(state, {
      type: 'notes/extractionSettled',
      user: 'maya',
      session: 's1',
      outcome: { _tag: 'Right', right: answer(['People', 'Partner is Jordan']) },
      at: 9,
    });
    expect(effects.slice(0, 1)).toEqual([
      {
        type: 'record',
        event: {
          type: 'notes/extracted',
          user: 'maya',
          session: 's1',
          facts: [{ category: 'People', fact: 'Partner is Jordan' }],
          at: 9,
        },
      },
    ]);
    // The change goes to the store, against the version loaded (none: a record it creates).
    expect(effects.slice(1)).toEqual([
      {
        type: 'save',
        user: 'maya',
        write: {
          sessions: [
            {
              session: 's1',
              value: { facts: [{ category: 'People', fact: 'Partner is Jordan' }], updatedAt: 9, consolidated: false },
              expected: 0,
            },
          ],
        },
      },
    ]);
    expect(selectSessionFacts(next.ledger, 'maya', 's1')).toEqual([{ category: 'People', fact: 'Partner is Jordan' }]);
    expect(selectConversation(next, 'maya', 's1')).toMatchObject({ requested: 1, started: 1, settled: 1 });
    expect(Object.isFrozen(next) && Object.isFrozen(next.settings)).toBe(true);
  });

  it('asks the store for the unmerged sessions at an end of stage without one, loads those it does not hold, merges, and lets them go once saved', () => {
    const [asked, listing] = notesTransition(initialNotesState(), {
      type: 'notes/stageEnded',
      user: 'maya',
      at: 5,
      id: 1,
    });
    expect(listing).toEqual([{ type: 'listUnmerged', user: 'maya', call: 1 }]);
    // Ids no session may have are left out; the session is loaded for the stage.
    const [loading, loads] = notesTransition(asked, {
      type: 'notes/unmergedListed',
      user: 'maya',
      call: 1,
      outcome: E.right(['s1', '', 's1']),
    });
    expect(loads).toEqual([{ type: 'load', user: 'maya', session: 's1' }]);
    const record = { facts: [{ category: 'People', fact: 'Partner is Jordan' }], updatedAt: 2, consolidated: false };
    const [merged, effects] = notesTransition(loading, {
      type: 'notes/loaded',
      user: 'maya',
      session: 's1',
      outcome: E.right({ session: { value: record, version: 1 }, profile: { version: 0 } }),
    });
    // The merge is answered once its save has landed, with the profile that save wrote.
    expect(effects.map((effect) => effect.type)).toEqual(['record', 'record', 'save']);
    const save = effects[2] as Extract<NotesEffect, { type: 'save' }>;
    const [saved, released] = notesTransition(merged, {
      type: 'notes/saved',
      user: 'maya',
      outcome: E.right({ sessions: save.write.sessions.map(({ session }) => ({ session, version: 2 })), profile: 1 }),
    });
    expect(released).toEqual([
      {
        type: 'merged',
        user: 'maya',
        sessions: ['s1'],
        dropped: [],
        profile: selectGlobalFacts(merged.ledger, 'maya'),
        stage: 1,
      },
      { type: 'record', event: { type: 'notes/released', user: 'maya', session: 's1' } },
      { type: 'record', event: { type: 'notes/released', user: 'maya' } },
    ]);
    expect(selectSessionFacts(saved.ledger, 'maya', 's1')).toEqual([]);
  });
});
