/**
 * What reaches the main model stays true under corrections: a property over random
 * conversations in which users correct facts within a session and across sessions, and the
 * example conversation replayed against a live tracker fed the same answers.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { parseNotesLog } from '../../src/notes/log.js';
import type { CompleteFn } from '../../src/notes/port.js';
import { replayConversationLog } from '../../src/notes/replay.js';
import type { NotesMessageStep } from '../../src/notes/replayReport.js';
import { createNotableFactsTracker } from '../../src/notes/tracker.js';
import type { NotableFactsTracker } from '../../src/notes/trackerTypes.js';

/** Facts about one thing each, told with a value that a correction changes. */
const SUBJECTS = [
  ['Logistics', (value: string) => `Jordan works ${value} night shifts a week`],
  ['People', (value: string) => `Daughter Lily is ${value} years old`],
  ['History', (value: string) => `They have been together ${value} years`],
  ['Logistics', (value: string) => `Lives ${value} miles from her sister`],
  ['Conflict', (value: string) => `They argue about Sunday lunch ${value} times a month`],
] as const;
const VALUES = ['two', 'three', 'four', 'five', '6', '7'] as const;
const USERS = ['maya', 'jordan'] as const;
const SESSIONS = ['s1', 's2', 's3'] as const;

/** The subject a rendered fact line tells of, and its value; undefined for a line that is no fact of the set. */
const subjectOf = (line: string): { subject: number; value: string } | undefined => {
  for (const [subject, [, tell]] of SUBJECTS.entries())
    for (const value of VALUES) if (line === `- ${tell(value)}`) return { subject, value };
  return undefined;
};

type Command =
  | {
      readonly kind: 'tell';
      readonly user: number;
      readonly session: number;
      readonly subject: number;
      readonly value: number;
    }
  | { readonly kind: 'say'; readonly user: number; readonly session: number }
  | { readonly kind: 'endStage'; readonly user: number; readonly session: number | undefined }
  | { readonly kind: 'wait' };

const commandArb: fc.Arbitrary<Command> = fc.oneof(
  {
    arbitrary: fc.record({
      kind: fc.constant('tell' as const),
      user: fc.nat(USERS.length - 1),
      session: fc.nat(SESSIONS.length - 1),
      subject: fc.nat(SUBJECTS.length - 1),
      value: fc.nat(VALUES.length - 1),
    }),
    weight: 5,
  },
  { arbitrary: fc.record({ kind: fc.constant('say' as const), user: fc.nat(1), session: fc.nat(2) }), weight: 2 },
  {
    arbitrary: fc.record({
      kind: fc.constant('endStage' as const),
      user: fc.nat(1),
      session: fc.option(fc.nat(2), { nil: undefined }),
    }),
    weight: 2,
  },
  fc.constant({ kind: 'wait' as const }),
);

/** The message text a user sends: their id and session first, so the model knows whose list it keeps. */
const messageText = (user: string, session: string, n: number): string => `${user}@${session} says message ${n}`;

describe('corrections', () => {
  it('no rendered block ever states two facts of one user that a later extraction replaced, whatever the conversation', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(commandArb, { minLength: 1, maxLength: 30 }), async (commands) => {
        /** What each (user, session) list says now: subject -> value, as a model that takes corrections keeps it. */
        const lists = new Map<string, Map<number, string>>();
        const listOf = (user: string, session: string): Map<number, string> => {
          const key = `${user}@${session}`;
          const found = lists.get(key) ?? new Map<number, string>();
          lists.set(key, found);
          return found;
        };
        const complete: CompleteFn = async (prompt) => {
          const [, user = '', session = ''] = /Latest user message:\nUser: (\w+)@(\w+) says/u.exec(prompt) ?? [];
          const facts = [...listOf(user, session)].map(([subject, value]) => ({
            category: SUBJECTS[subject]![0],
            fact: SUBJECTS[subject]![1](value),
          }));
          return JSON.stringify({ notableFacts: facts });
        };
        let clock = 0;
        const tracker = createNotableFactsTracker({ complete, now: () => (clock += 1_000) });
        const stages: Array<Promise<unknown>> = [];
        let n = 0;
        const check = (): void => {
          for (const user of USERS)
            for (const session of SESSIONS) {
              const context = tracker.contextFor(user, session);
              expect(E.isRight(context)).toBe(true);
              const told = new Map<number, string>();
              for (const line of E.isRight(context) ? context.right.text.split('\n') : []) {
                const fact = subjectOf(line);
                if (fact === undefined) continue;
                expect({ user, session, told: told.get(fact.subject) ?? fact.value }).toEqual({
                  user,
                  session,
                  told: fact.value,
                });
                told.set(fact.subject, fact.value);
              }
            }
        };
        for (const command of commands) {
          if (command.kind === 'tell' || command.kind === 'say') {
            const user = USERS[command.user]!;
            const session = SESSIONS[command.session]!;
            if (command.kind === 'tell') listOf(user, session).set(command.subject, VALUES[command.value]!);
            expect(E.isRight(tracker.recordUserMessage(user, session, messageText(user, session, (n += 1))))).toBe(
              true,
            );
          } else if (command.kind === 'endStage')
            stages.push(
              tracker.endStage(
                USERS[command.user]!,
                command.session === undefined ? undefined : SESSIONS[command.session],
              ),
            );
          else await tracker.settled();
          check();
        }
        await tracker.settled();
        await Promise.all(stages);
        check();
      }),
      { numRuns: 60 },
    );
  });
});

describe('the example conversation', () => {
  const EXAMPLE = readFileSync(new URL('../../examples/couples-coaching.jsonl', import.meta.url), 'utf8');
  const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

  it('gives the same blocks in `notes replay` as a live tracker fed the same answers, ends of stage included', async () => {
    const { entries, errors } = parseNotesLog(EXAMPLE);
    expect(errors).toEqual([]);
    const replayed = replayConversationLog(EXAMPLE);
    const replayBlocks = replayed.report.steps
      .filter((step): step is NotesMessageStep => step.kind === 'message')
      .map((step) => step.blocks);

    let clock = 0;
    const open: Array<{ prompt: string; resolve: (text: string) => void; reject: (error: Error) => void }> = [];
    const tracker: NotableFactsTracker = createNotableFactsTracker({
      complete: (prompt) => new Promise((resolve, reject) => open.push({ prompt, resolve, reject })),
      now: () => clock,
    });
    /** Whose message each text is: an extraction line answers the call open for that user and session. */
    const owner = new Map<string, string>();
    const liveBlocks: string[] = [];
    const stages: Array<Promise<unknown>> = [];
    for (const entry of entries) {
      clock = entry.at;
      if (entry.type === 'user') {
        owner.set(entry.text, `${entry.user}@${entry.session}`);
        tracker.recordUserMessage(entry.user, entry.session, entry.text);
        await tick();
        const context = tracker.contextFor(entry.user, entry.session);
        liveBlocks.push(E.isRight(context) ? context.right.text : 'a failure');
      } else if (entry.type === 'assistant') tracker.recordAssistantMessage(entry.user, entry.session, entry.text);
      else if (entry.type === 'endStage') stages.push(tracker.endStage(entry.user, entry.session));
      else if (entry.type === 'extraction') {
        const index = open.findIndex((call) => {
          const latest = /Latest user message:\nUser: (.*)/u.exec(call.prompt)?.[1] ?? '';
          return [...owner].some(
            ([text, who]) =>
              who === `${entry.user}@${entry.session}` && text.startsWith(latest.replace(/\.\.\.$/u, '')),
          );
        });
        expect(index).toBeGreaterThanOrEqual(0);
        const [call] = open.splice(index, 1);
        if (E.isRight(entry.outcome)) call!.resolve(entry.outcome.right);
        else call!.reject(new Error(entry.outcome.left.message));
        await tick();
      }
    }
    await Promise.all(stages);
    await tracker.settled();
    expect(open).toEqual([]);
    expect(liveBlocks).toEqual(replayBlocks);
    expect(tracker.getSnapshot()).toEqual(replayed.ledger);
  });
});
