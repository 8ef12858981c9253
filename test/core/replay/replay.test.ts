import { readFileSync } from 'node:fs';
import * as E from 'fp-ts/lib/Either.js';
import * as O from 'fp-ts/lib/Option.js';
import { describe, expect, it } from 'vitest';
import {
  createFactTracker,
  decodeState,
  encodeState,
  explainPromptAt,
  parseHistory,
  replayHistory,
  selectAllFacts,
  selectValidFacts,
} from '../../../src/index.js';
import { REPLAY_SUMMARY_KEYS } from '../../fixtures/expected.js';
import { implementer, reviewer } from '../../fixtures/results.js';

const example = readFileSync(new URL('../../../examples/web-api-session.jsonl', import.meta.url), 'utf8');

const history = (...lines: ReadonlyArray<unknown>): string =>
  lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n');

describe('replayHistory', () => {
  it('rejects a prompt line whose task id no record can hold, as a live tracker refuses it', () => {
    const { report } = replayHistory(
      history(
        { type: 'dispatch', role: 'implementer', taskId: '1', result: implementer('1', ['src/a.ts']) },
        { type: 'prompt', taskId: 'x'.repeat(51), taskPrompt: 'change src/a.ts' },
        { type: 'prompt', taskId: '2', taskPrompt: 'change src/a.ts' },
      ),
    );
    expect(report.errors).toEqual([
      { line: 2, code: 'invalid_input', message: 'task id is longer than 50 characters' },
    ]);
    expect(report.prompts.map((prompt) => prompt.line)).toEqual([3]);
  });

  it('a history without times resumed from the saved store of its first lines gives what one replay of it gives', () => {
    const bare = example
      .trim()
      .split('\n')
      .map((line) => {
        const { at: _at, ...event } = JSON.parse(line) as Record<string, unknown>;
        return JSON.stringify(event);
      });
    const whole = replayHistory(bare.join('\n'));
    for (const cut of [1, 12, 20, 33]) {
      const first = replayHistory(bare.slice(0, cut).join('\n'));
      const saved = decodeState(JSON.parse(JSON.stringify(encodeState(first.store))));
      if (E.isLeft(saved)) throw new Error(saved.left.message);
      const rest = replayHistory(bare.slice(cut).join('\n'), { initial: saved.right });
      expect(rest.report.prompts.map((prompt) => prompt.sessionContext)).toEqual(
        whole.report.prompts.filter((prompt) => prompt.line > cut).map((prompt) => prompt.sessionContext),
      );
      expect(selectAllFacts(rest.store)).toEqual(selectAllFacts(whole.store));
    }
  });

  it('gives each prompt exactly what a live tracker fed the same dispatches would inject', () => {
    const { report } = replayHistory(example);
    let now = 0;
    const live = createFactTracker({ clock: () => now });
    const expected: string[] = [];
    for (const event of parseHistory(example).events) {
      now = event.at;
      if (event.type === 'dispatch')
        live.ingestOutput({ role: event.role, taskId: event.taskId, output: event.output });
      if (event.type === 'invalidate') live.invalidate(event.subject, event.relation, event.at);
      if (event.type === 'compact') live.compact(event.maxFacts);
      if (event.type === 'prompt')
        expected.push(
          live.compilePrompt({
            taskId: event.taskId,
            taskPrompt: event.taskPrompt,
            ...(event.tags ? { tags: event.tags } : {}),
          }).sessionContext,
        );
    }
    expect(report.prompts.map((prompt) => prompt.sessionContext)).toEqual(expected);
    expect(report.facts).toEqual(selectValidFacts(live.getSnapshot()));
    expect(report.errors).toEqual([]);
  });

  it('refuses a token counter that answers no number of tokens with a TypeError naming countTokens, not a report of NaN totals', () => {
    const text = history(
      { type: 'prompt', taskId: '1', taskPrompt: 'src/a.ts' },
      { type: 'dispatch', role: 'implementer', taskId: '1', result: implementer('1', ['src/a.ts']) },
    );
    for (const [answer, said] of [
      [Number.NaN, 'NaN'],
      ['12', 'a string'],
      [-1, '-1'],
    ] as const) {
      const countTokens = (() => answer) as unknown as (text: string) => number;
      expect(() => replayHistory(text, { countTokens })).toThrow(
        expect.objectContaining({
          name: 'TypeError',
          message: `countTokens answered ${said}, not a number of tokens (a finite number 0 or more)`,
        }),
      );
    }
  });

  it('summarizes with exactly the documented keys', () => {
    const { report, store } = replayHistory(example);
    expect(Object.keys(report)).toEqual(['prompts', 'errors', 'facts', 'summary']);
    expect(Object.keys(report.summary)).toEqual([...REPLAY_SUMMARY_KEYS]);
    expect(report.summary).toMatchObject({ events: 40, dispatches: 28, prompts: 11 });
    expect(report.summary.validFacts).toBe(report.facts.length);
    expect(report.summary.allFacts).toBe(selectAllFacts(store).length);
    expect(Object.keys(report.prompts[0]!)).toEqual([
      'line',
      'taskId',
      'sessionContext',
      'facts',
      'contextTokens',
      'historyTokens',
    ]);
  });

  it('budgets each prompt with the counter of the tokenizer its line names; countTokens, given, budgets every prompt', () => {
    const result = implementer('1', ['src/a.ts', 'src/b.ts', 'src/c.ts', 'src/d.ts']);
    const prompt = { type: 'prompt', taskId: '2', taskPrompt: 'change src/a.ts and src/d.ts', maxTokens: 30 };
    const text = history(
      { type: 'dispatch', role: 'implementer', taskId: '1', result },
      { ...prompt, tokenizer: 'o200k' },
      prompt,
      { ...prompt, tokenizer: 'estimate' },
    );
    // A stand-in for o200k that counts every character: it fits fewer facts in the budget.
    const strict = (section: string): number => section.length;
    const sections = (options: Parameters<typeof replayHistory>[1]): string[] =>
      replayHistory(text, options).report.prompts.map((entry) => entry.sessionContext);
    const [named, unnamed, estimated] = sections({ tokenCounters: { o200k: strict } });
    expect(named).not.toBe(unnamed);
    expect(named).toBe(sections({ countTokens: strict })[0]);
    expect([unnamed, estimated]).toEqual([sections({})[1], sections({})[1]]);
    // countTokens over every line's own; a name without a counter is budgeted with the estimate.
    expect(sections({ countTokens: strict, tokenCounters: { o200k: (section) => section.length / 100 } })).toEqual(
      sections({ countTokens: strict }),
    );
    expect(sections({})).toEqual([unnamed, unnamed, unnamed]);
    // The report's counts stay the replay's counter's, whatever budgeted the section.
    expect(replayHistory(text, { tokenCounters: { o200k: strict } }).report.prompts[0]!.contextTokens).toBe(
      Math.ceil(named!.length / 4),
    );
    // Counters that are none are refused where the replay starts, not taken for the estimate.
    const given = (tokenCounters: unknown) => () =>
      replayHistory(text, { tokenCounters } as unknown as Parameters<typeof replayHistory>[1]);
    expect(given(5)).toThrow(/^tokenCounters is a number, not counters by tokenizer name/u);
    expect(given({ o200k: 'x' })).toThrow(/^tokenCounters\.o200k is a string, not a function/u);
  });

  it('counts history tokens of every earlier dispatch output and context tokens of each section', () => {
    const result = implementer('1', ['src/a.ts']);
    const raw = `Done.\nBEGIN_DISPATCH_RESULT\n${JSON.stringify(implementer('2', ['src/b.ts']))}\nEND_DISPATCH_RESULT`;
    const text = history(
      { type: 'prompt', taskId: '1', taskPrompt: 'src/a.ts' },
      { type: 'dispatch', role: 'implementer', taskId: '1', result },
      { type: 'dispatch', role: 'implementer', taskId: '2', output: raw },
      { type: 'prompt', taskId: '3', taskPrompt: 'change src/a.ts and src/b.ts' },
    );
    const { report } = replayHistory(text, { countTokens: (section) => section.length });
    const [first, second] = report.prompts;
    expect(first).toMatchObject({ historyTokens: 0, contextTokens: 0, sessionContext: '', facts: [] });
    expect(second!.historyTokens).toBe(JSON.stringify(result).length + raw.length);
    expect(second!.contextTokens).toBe(second!.sessionContext.length);
    expect(second!.facts.length).toBeGreaterThan(0);
    expect(report.summary.historyTokens).toBe(second!.historyTokens);
    expect(report.summary.contextTokens).toBe(second!.contextTokens);
    expect(report.summary.contextToHistoryRatio).toBe(
      Math.round((second!.contextTokens / second!.historyTokens) * 1000) / 1000,
    );
  });

  it('reports rejected outputs with the contract codes and still applies the lines after them', () => {
    const text = history(
      { type: 'dispatch', role: 'implementer', taskId: '1', output: 'no markers here' },
      'garbage',
      { type: 'dispatch', role: 'reviewer', taskId: '1', output: 'BEGIN_DISPATCH_RESULT\n{oops\nEND_DISPATCH_RESULT' },
      { type: 'dispatch', role: 'reviewer', taskId: '1', result: { task_id: '1', assessment: 'great' } },
      { type: 'dispatch', role: 'implementer', taskId: '1', result: implementer('1', ['src/a.ts']) },
      { type: 'prompt', taskId: '2', taskPrompt: 'edit src/a.ts' },
    );
    const { report } = replayHistory(text);
    expect(report.errors.map((error) => [error.line, error.code])).toEqual([
      [1, 'marker_missing'],
      [2, 'invalid_json'],
      [3, 'json_parse_failed'],
      [4, 'schema_invalid'],
    ]);
    expect(report.errors[3]!.message).toContain('assessment');
    expect(report.prompts[0]!.facts.map((fact) => fact.subject)).toContain('src/a.ts');
    expect(report.summary).toMatchObject({ events: 5, dispatches: 4, prompts: 1 });
  });

  it('closes the issues of a task that its later review no longer raises', () => {
    const text = history(
      { type: 'dispatch', role: 'implementer', taskId: '1', result: implementer('1', ['src/a.ts']) },
      {
        type: 'dispatch',
        role: 'reviewer',
        taskId: '1',
        result: reviewer('1', 'needs_changes', [{ file: 'src/a.ts', message: 'leaks a handle' }]),
      },
      { type: 'prompt', taskId: '2', taskPrompt: 'src/a.ts handle' },
      { type: 'dispatch', role: 'reviewer', taskId: '1', result: reviewer('1', 'approved', []) },
      { type: 'prompt', taskId: '2', taskPrompt: 'src/a.ts handle' },
    );
    const { report } = replayHistory(text);
    const issues = (index: number) => report.prompts[index]!.facts.filter((fact) => fact.relation === 'issue');
    expect(issues(0)).toHaveLength(1);
    expect(issues(1)).toHaveLength(0);
  });

  it('applies invalidate and compact events at their times', () => {
    const dispatch = {
      type: 'dispatch',
      role: 'implementer',
      taskId: '1',
      at: 1000,
      result: implementer('1', ['src/a.ts', 'src/b.ts', 'src/c.ts']),
    };
    const invalidate = { type: 'invalidate', subject: 'src/a.ts', relation: 'modified_by', at: 2000 };
    const invalidated = replayHistory(history(dispatch, invalidate)).store;
    expect(selectAllFacts(invalidated).find((fact) => fact.subject === 'src/a.ts')?.validTo).toBe(2000);

    const compacted = replayHistory(history(dispatch, invalidate, { type: 'compact', maxFacts: 2, at: 3000 })).store;
    expect(selectValidFacts(compacted).length).toBeLessThanOrEqual(2);
    expect(selectAllFacts(compacted).every((fact) => fact.validTo === undefined)).toBe(true);
  });

  it('lets the options override every prompt budget', () => {
    const text = history(
      {
        type: 'dispatch',
        role: 'implementer',
        taskId: '1',
        result: implementer('1', ['src/a.ts', 'src/b.ts', 'src/c.ts']),
      },
      { type: 'prompt', taskId: '2', taskPrompt: 'src a b c', maxFacts: 1 },
    );
    expect(replayHistory(text).report.prompts[0]!.facts).toHaveLength(1);
    expect(replayHistory(text, { maxFacts: 2 }).report.prompts[0]!.facts).toHaveLength(2);
    expect(replayHistory(text, { maxTokens: 0 }).report.prompts[0]!.facts).toHaveLength(0);
  });

  it('stops at the first event after asOf, even when later lines go back in time', () => {
    const text = history(
      { type: 'dispatch', role: 'implementer', taskId: '1', at: 1000, result: implementer('1', ['src/a.ts']) },
      { type: 'dispatch', role: 'implementer', taskId: '2', at: 5000, result: implementer('2', ['src/b.ts']) },
      'bad line after the stop',
      { type: 'dispatch', role: 'implementer', taskId: '3', at: 2000, result: implementer('3', ['src/c.ts']) },
    );
    const { report } = replayHistory(text, { asOf: 4000 });
    expect(report.summary.events).toBe(1);
    expect(report.errors).toEqual([]);
    expect(new Set(report.facts.map((fact) => fact.sourceTaskId))).toEqual(new Set(['1']));
  });

  it('stops after untilLine and reports only the lines up to it', () => {
    const text = history('bad', { type: 'prompt', taskId: '1', taskPrompt: 'x' }, 'also bad', {
      type: 'prompt',
      taskId: '2',
      taskPrompt: 'y',
    });
    const { report } = replayHistory(text, { untilLine: 2 });
    expect(report.prompts.map((prompt) => prompt.line)).toEqual([2]);
    expect(report.errors.map((error) => error.line)).toEqual([1]);
  });

  it('is deterministic: the same text gives the same JSON', () => {
    expect(JSON.stringify(replayHistory(example).report)).toBe(JSON.stringify(replayHistory(example).report));
  });

  it('explains each prompt consistently with the facts it reported', () => {
    const result = replayHistory(example, { keepRetrievals: true });
    for (const prompt of result.report.prompts) {
      const decisions = explainPromptAt(result, prompt.line);
      expect(O.isSome(decisions)).toBe(true);
      if (O.isSome(decisions))
        expect(
          decisions.value.filter((decision) => decision.decision === 'included').map((decision) => decision.fact),
        ).toEqual(prompt.facts);
    }
    expect(O.isNone(explainPromptAt(result, 2))).toBe(true);
  });

  it('keeps no retrievals unless asked, and the same report either way', () => {
    const plain = replayHistory(example);
    const kept = replayHistory(example, { keepRetrievals: true });
    expect(plain.retrievals).toEqual([]);
    expect(kept.retrievals.map((retrieval) => retrieval.line)).toEqual(
      kept.report.prompts.map((prompt) => prompt.line),
    );
    expect(plain.report).toEqual(kept.report);
    expect(plain.store).toEqual(kept.store);
  });

  it('keeps the retrieval of the prompt on one line when keepRetrievals names that line', () => {
    const line = replayHistory(example).report.prompts[2]!.line;
    const kept = replayHistory(example, { keepRetrievals: line });
    expect(kept.retrievals.map((retrieval) => retrieval.line)).toEqual([line]);
    expect(O.isSome(explainPromptAt(kept, line))).toBe(true);
  });

  it('replays an empty history to an empty report', () => {
    const { report } = replayHistory('\n\n');
    expect(report).toEqual({
      prompts: [],
      errors: [],
      facts: [],
      summary: {
        events: 0,
        dispatches: 0,
        prompts: 0,
        validFacts: 0,
        allFacts: 0,
        historyTokens: 0,
        contextTokens: 0,
        contextToHistoryRatio: 0,
      },
    });
  });

  it('reports progress, ending with the number of events replayed', () => {
    const calls: [number, number][] = [];
    replayHistory(example, { onProgress: (done, total) => calls.push([done, total]) });
    expect(calls.at(-1)).toEqual([40, 40]);
  });
});
