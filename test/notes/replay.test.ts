import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { selectGlobalFacts, selectSessionFacts } from '../../src/notes/ledger.js';
import { type NotesExtractionStep, type NotesMessageStep, replayConversationLog } from '../../src/notes/replay.js';
import { extraction, lines, user } from './logLines.js';

const EXAMPLE = readFileSync(new URL('../../examples/couples-coaching.jsonl', import.meta.url), 'utf8');

describe('replayConversationLog', () => {
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
