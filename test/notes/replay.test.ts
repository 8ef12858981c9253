import { readFileSync } from 'node:fs';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { selectGlobalFacts, selectSessionFacts } from '../../src/notes/ledger.js';
import { replayConversationLog } from '../../src/notes/replay.js';
import type { NotesExtractionStep, NotesMessageStep } from '../../src/notes/replayReport.js';
import { createNotableFactsTracker } from '../../src/notes/tracker.js';
import { extraction, lines, user } from './logLines.js';
import { UNUSABLE_CATEGORIES } from './unusableCategories.js';

const EXAMPLE = readFileSync(new URL('../../examples/couples-coaching.jsonl', import.meta.url), 'utf8');

describe('replayConversationLog', () => {
  it('replays with the defaults when the options are null, as a JavaScript caller may pass them', () => {
    const text = lines(user('maya', 'Jordan works nights.'));
    expect(replayConversationLog(text, null as never).report).toEqual(replayConversationLog(text).report);
  });

  it('refuses a token counter that answers no number of tokens, naming it, instead of reporting NaN tokens', () => {
    const text = lines(user('maya', 'Jordan works nights.'), extraction('maya', [['History', 'Jordan works nights']]));
    for (const answer of [Number.NaN, '12', undefined, -1, Infinity])
      expect(() => replayConversationLog(text, { countTokens: () => answer as number })).toThrow(
        /^countTokens answered .*, not a number of tokens/u,
      );
  });

  it('refuses categories it cannot use with a TypeError naming them and why, as the tracker tells them to onError', () => {
    const text = lines(user('maya', 'Jordan works nights.'));
    for (const [categories, reason] of UNUSABLE_CATEGORIES) {
      const replay = (): unknown => replayConversationLog(text, { categories: categories as never });
      expect(replay).toThrow(TypeError);
      expect(replay).toThrow(`the categories option cannot be used: ${reason}`);
    }
    // None given (undefined, or null as options read it) is the five defaults; a usable set is taken.
    expect(replayConversationLog(text, { categories: null as never }).ledger.categories).toEqual(
      replayConversationLog(text).ledger.categories,
    );
    expect(replayConversationLog(text, { categories: ['Health', 'Work'] }).ledger.categories).toEqual([
      'Health',
      'Work',
    ]);
  });

  it('gives each message the facts of the extractions before it (N+1), per user', () => {
    const { report, ledger } = replayConversationLog(
      lines(
        user('maya', 'Jordan and I married in 2019'),
        user('jordan', 'Maya and I married in 2019'),
        extraction('maya', [['History', 'Married Jordan in 2019']]),
        user('maya', 'He works nights now'),
        extraction('jordan', [['History', 'Married Maya in 2019']]),
      ),
    );
    const messages = report.steps.filter((step): step is NotesMessageStep => step.kind === 'message');
    expect(messages.map((step) => [step.user, step.turn, step.facts.length, step.blocks])).toEqual([
      ['maya', 1, 0, ''],
      ['jordan', 1, 0, ''],
      ['maya', 2, 1, 'NOTED FACTS FROM THIS SESSION:\n[History]\n- Married Jordan in 2019'],
    ]);
    expect(selectSessionFacts(ledger, 'jordan', 's1')).toEqual([{ category: 'History', fact: 'Married Maya in 2019' }]);
    expect(report.summary).toMatchObject({
      users: 2,
      sessions: 1,
      userMessages: 3,
      extractions: 2,
      failedExtractions: 0,
    });
  });

  it('keeps the list on a failed extraction and says why', () => {
    const { report } = replayConversationLog(
      lines(
        user('maya', 'one'),
        extraction('maya', [['People', 'Partner is Jordan']]),
        user('maya', 'two'),
        { type: 'extraction', user: 'maya', session: 's1', error: 'timeout' },
        user('maya', 'three'),
        { type: 'extraction', user: 'maya', session: 's1', response: 'I am not sure.' },
      ),
    );
    const extractions = report.steps.filter((step): step is NotesExtractionStep => step.kind === 'extraction');
    expect(extractions.map((step) => [step.outcome, step.failure?.code, step.facts.length])).toEqual([
      ['applied', undefined, 1],
      ['failed', 'timeout', 1],
      ['failed', 'invalid_response', 1],
    ]);
  });

  it('keeps every time of a log whose lines without "at" follow the year 9999 within it', () => {
    const latest = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
    const { ledger } = replayConversationLog(
      lines(
        user('maya', 'Jordan works nights.', { at: latest }),
        extraction('maya', [['Logistics', 'Jordan works nights']]),
        { type: 'endStage', user: 'maya' },
      ),
    );
    expect(selectSessionFacts(ledger, 'maya', 's1').map((fact) => fact.fact)).toEqual(['Jordan works nights']);
    expect(selectGlobalFacts(ledger, 'maya')?.consolidatedAt).toBe(latest);
  });

  it('rejects an extraction with no message to answer', () => {
    const { report } = replayConversationLog(lines(extraction('maya', [['People', 'x']])));
    expect(report.errors).toEqual([
      { line: 1, code: 'no_message', message: 'no message of "maya" in "s1" comes before this extraction' },
    ]);
  });

  it('replays the example conversation: a timeout, a conflict the newer fact wins, two profiles', () => {
    const { report, ledger } = replayConversationLog(EXAMPLE);
    expect(report.errors).toEqual([]);
    expect(report.summary).toEqual({
      users: 2,
      sessions: 2,
      userMessages: 17,
      assistantMessages: 17,
      extractions: 17,
      failedExtractions: 1,
      stages: 2,
      blockTokens: expect.any(Number),
      windowTokens: expect.any(Number),
      trimmedTokens: expect.any(Number),
    });
    const logistics =
      selectGlobalFacts(ledger, 'maya')
        ?.facts.filter((fact) => fact.category === 'Logistics')
        .map((fact) => fact.fact) ?? [];
    expect(logistics).toContain('Jordan works four night shifts a week since his rota changed in January');
    expect(logistics.some((fact) => fact.includes('three nights'))).toBe(false);
    expect(report.profiles.map(({ user: id, profile }) => [id, profile.sessionCount])).toEqual([
      ['jordan', 1],
      ['maya', 1],
    ]);
    const last = report.steps
      .filter(
        (step): step is NotesMessageStep => step.kind === 'message' && step.user === 'maya' && step.session === 's1',
      )
      .at(-1)!;
    expect(last.trimmedMessages).toBeGreaterThan(0);
    expect(last.blockTokens).toBeLessThan(last.trimmedTokens);
    for (const step of report.steps)
      if (step.kind === 'message' && step.user === 'jordan') expect(step.blocks).not.toContain('Partner is Jordan');
  });
});

describe('an end of stage in a replay (item 5)', () => {
  it('waits for the extractions of the messages before it, as live: user, user, endStage, extraction, extraction merges both', async () => {
    const log = lines(
      user('maya', 'Jordan and I married in 2019.', { at: 1_000 }),
      user('maya', 'We moved to Portland.', { at: 2_000 }),
      { type: 'endStage', user: 'maya', at: 3_000 },
      extraction('maya', [['History', 'Married Jordan in 2019']], { at: 4_000 }),
      extraction(
        'maya',
        [
          ['History', 'Married Jordan in 2019'],
          ['History', 'Moved to Portland'],
        ],
        { at: 5_000 },
      ),
    );
    const { report, ledger } = replayConversationLog(log);
    expect(report.errors).toEqual([]);
    expect(selectGlobalFacts(ledger, 'maya')?.facts.map((fact) => fact.fact)).toEqual([
      'Married Jordan in 2019',
      'Moved to Portland',
    ]);
    const stage = report.steps.find((step) => step.kind === 'stage');
    expect(stage).toMatchObject({ line: 3, user: 'maya', sessions: ['s1'], profileFacts: 2 });

    // The live tracker fed the same messages and answers, the end of stage asked for before they came.
    const calls: Array<(text: string) => void> = [];
    let clock = 1_000;
    const tracker = createNotableFactsTracker({
      complete: () => new Promise((resolve) => calls.push(resolve)),
      now: () => clock,
    });
    tracker.recordUserMessage('maya', 's1', 'Jordan and I married in 2019.');
    clock = 2_000;
    tracker.recordUserMessage('maya', 's1', 'We moved to Portland.');
    clock = 3_000;
    const live = tracker.endStage('maya');
    await new Promise((resolve) => setTimeout(resolve, 0));
    clock = 4_000;
    calls[0]!(JSON.stringify({ notableFacts: [{ category: 'History', fact: 'Married Jordan in 2019' }] }));
    await new Promise((resolve) => setTimeout(resolve, 0));
    clock = 5_000;
    calls[1]!(
      JSON.stringify({
        notableFacts: [
          { category: 'History', fact: 'Married Jordan in 2019' },
          { category: 'History', fact: 'Moved to Portland' },
        ],
      }),
    );
    const result = await live;
    expect(E.isRight(result) && result.right.sessions).toEqual(['s1']);
    expect(tracker.getSnapshot()).toEqual(ledger);
  });

  it('reports an end of stage still waiting when the log ends before the answers it waits for', () => {
    const { report, ledger } = replayConversationLog(
      lines(user('maya', 'Jordan and I married in 2019.'), { type: 'endStage', user: 'maya' }),
    );
    expect(report.steps.find((step) => step.kind === 'stage')).toMatchObject({ line: 2, waiting: true, sessions: [] });
    expect(selectGlobalFacts(ledger, 'maya')).toBeUndefined();
  });
});

describe('a profile rewrite in a replay', () => {
  it('answers the rewrite an unsure merge asks for with the recorded `rewrite` line, as live', async () => {
    const rewritten = JSON.stringify({
      notableFacts: [{ category: 'Logistics', fact: 'Moved from Portland to Seattle' }],
    });
    const log = lines(
      user('maya', 'We live in Portland.', { at: 1_000 }),
      extraction('maya', [['Logistics', 'Lives in Portland']], { at: 2_000 }),
      { type: 'endStage', user: 'maya', session: 's1', at: 3_000 },
      user('maya', 'We moved to Seattle.', { session: 's2', at: 4_000 }),
      extraction('maya', [['Logistics', 'Lives in Seattle']], { session: 's2', at: 5_000 }),
      { type: 'endStage', user: 'maya', session: 's2', at: 6_000 },
      { type: 'rewrite', user: 'maya', response: rewritten, at: 7_000 },
      { type: 'rewrite', user: 'maya', response: rewritten, at: 8_000 },
    );
    const { report, ledger } = replayConversationLog(log);
    expect(report.errors).toEqual([
      {
        line: 8,
        code: 'no_rewrite',
        message: 'no rewrite of the profile of "maya" is running: an end of stage asks for one',
      },
    ]);
    expect(report.steps.filter((step) => step.kind === 'rewrite')).toEqual([
      { kind: 'rewrite', line: 7, at: 7_000, user: 'maya', outcome: 'applied', profileFacts: 1, warnings: [] },
    ]);
    expect(selectGlobalFacts(ledger, 'maya')?.facts.map((fact) => fact.fact)).toEqual([
      'Moved from Portland to Seattle',
    ]);

    let clock = 0;
    const answers: Record<string, string> = {
      'We live in Portland.': JSON.stringify({ notableFacts: [{ category: 'Logistics', fact: 'Lives in Portland' }] }),
      'We moved to Seattle.': JSON.stringify({ notableFacts: [{ category: 'Logistics', fact: 'Lives in Seattle' }] }),
    };
    const live = createNotableFactsTracker({
      complete: async (prompt) => {
        clock += 1_000;
        return prompt.includes('Rewrite the profile:')
          ? rewritten
          : answers[/Latest user message:\nUser: (.*)/u.exec(prompt)?.[1] ?? '']!;
      },
      now: () => clock,
    });
    clock = 1_000;
    live.recordUserMessage('maya', 's1', 'We live in Portland.');
    await live.settled();
    clock = 3_000;
    await live.endStage('maya', 's1');
    clock = 4_000;
    live.recordUserMessage('maya', 's2', 'We moved to Seattle.');
    await live.settled();
    clock = 6_000;
    await live.endStage('maya', 's2');
    await live.settled();
    expect(live.getSnapshot()).toEqual(ledger);
  });
});
