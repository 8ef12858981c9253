import { describe, expect, it } from 'vitest';
import { parseHistory } from '../../src/index.js';

const history = (...lines: ReadonlyArray<unknown>): string =>
  lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n');

const implementerResult = {
  task_id: '1',
  status: 'completed',
  summary: 'Added src/a.ts',
  files_changed: ['src/a.ts'],
  tests: [],
  follow_up_actions: [],
};

describe('parseHistory', () => {
  it('reads every event type with its line number, skipping blank lines', () => {
    const parsed = parseHistory(
      history(
        { type: 'prompt', taskId: '1', taskPrompt: 'Add a', at: 5000 },
        '',
        '   ',
        { type: 'dispatch', role: 'implementer', taskId: '1', result: implementerResult },
        { type: 'dispatch', role: 'reviewer', taskId: '1', output: 'text' },
        { type: 'invalidate', subject: 'src/a.ts', relation: 'modified_by' },
        { type: 'compact', maxFacts: 100 },
      ),
    );
    expect(parsed.errors).toEqual([]);
    expect(parsed.events.map((event) => [event.line, event.type])).toEqual([
      [1, 'prompt'],
      [4, 'dispatch'],
      [5, 'dispatch'],
      [6, 'invalidate'],
      [7, 'compact'],
    ]);
    expect(parsed.events[1]).toEqual({
      type: 'dispatch',
      line: 4,
      at: 6000,
      role: 'implementer',
      taskId: '1',
      output: implementerResult,
    });
  });

  it('gives a missing at the previous event time plus one second, and the first event 0', () => {
    const parsed = parseHistory(
      history(
        { type: 'compact', maxFacts: 1 },
        { type: 'compact', maxFacts: 1 },
        { type: 'compact', maxFacts: 1, at: '2026-03-01T10:00:00Z' },
        { type: 'compact', maxFacts: 1 },
        { type: 'compact', maxFacts: 1, at: 1000 },
      ),
    );
    const tenOClock = Date.parse('2026-03-01T10:00:00Z');
    expect(parsed.events.map((event) => event.at)).toEqual([0, 1000, tenOClock, tenOClock + 1000, 1000]);
  });

  it('times a line without at from the last good event, skipping rejected lines', () => {
    const parsed = parseHistory(
      history({ type: 'compact', maxFacts: 1, at: 10_000 }, 'oops', { type: 'compact', maxFacts: 1 }),
    );
    expect(parsed.events.map((event) => event.at)).toEqual([10_000, 11_000]);
  });

  it('ignores unknown fields and keeps the optional prompt fields', () => {
    const parsed = parseHistory(
      history({
        type: 'prompt',
        taskId: '4',
        taskPrompt: 'x',
        tags: ['file_change'],
        maxFacts: 3,
        maxTokens: 90,
        note: 'hi',
        expect: [],
      }),
    );
    expect(parsed.events).toEqual([
      {
        type: 'prompt',
        line: 1,
        at: 0,
        taskId: '4',
        taskPrompt: 'x',
        tags: ['file_change'],
        maxFacts: 3,
        maxTokens: 90,
      },
    ]);
  });

  it('reports each kind of bad line with its number and goes on', () => {
    const parsed = parseHistory(
      history(
        '{not json',
        '[1, 2]',
        { taskId: '1' },
        { type: 'deploy' },
        { type: 'dispatch', taskId: '1', output: 'x' },
        { type: 'dispatch', role: 'tester', taskId: '1', output: 'x' },
        { type: 'dispatch', role: 'implementer', taskId: 3, output: 'x' },
        { type: 'dispatch', role: 'implementer', taskId: '1' },
        { type: 'dispatch', role: 'implementer', taskId: '1', output: 'x', result: {} },
        { type: 'dispatch', role: 'implementer', taskId: '1', result: 'x' },
        { type: 'prompt', taskId: '1' },
        { type: 'prompt', taskId: '1', taskPrompt: 'x', tags: ['urgent'] },
        { type: 'prompt', taskId: '1', taskPrompt: 'x', maxTokens: -1 },
        { type: 'invalidate', subject: 'a' },
        { type: 'compact' },
        { type: 'compact', maxFacts: 1, at: 'soon' },
        { type: 'compact', maxFacts: 1 },
      ),
    );
    expect(parsed.errors.map((error) => [error.line, error.code])).toEqual([
      [1, 'invalid_json'],
      [2, 'invalid_json'],
      [3, 'missing_field'],
      [4, 'unknown_type'],
      [5, 'missing_field'],
      [6, 'invalid_field'],
      [7, 'invalid_field'],
      [8, 'missing_field'],
      [9, 'invalid_field'],
      [10, 'invalid_field'],
      [11, 'missing_field'],
      [12, 'invalid_field'],
      [13, 'invalid_field'],
      [14, 'missing_field'],
      [15, 'missing_field'],
      [16, 'invalid_field'],
    ]);
    expect(parsed.errors[11]?.message).toContain('tags[0]');
    expect(parsed.errors[15]?.message).toContain('at ');
    expect(parsed.events.map((event) => event.line)).toEqual([17]);
  });

  it('accepts CRLF line ends and a byte-order mark', () => {
    const parsed = parseHistory(
      `\uFEFF${history({ type: 'compact', maxFacts: 1 })}\r\n${history({ type: 'compact', maxFacts: 2 })}\r\n`,
    );
    expect(parsed.errors).toEqual([]);
    expect(parsed.events.map((event) => event.line)).toEqual([1, 2]);
  });
});
