/**
 * A session counting with a named tokenizer records its name in each prompt's line, so a replay
 * of the log budgets each section as the session did; a prompt sent again answers its line's
 * section, budgeted with the tokenizer that line names.
 */
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { replayHistory } from '../../../src/index.js';
import { memorySessionStore, openSession } from '../../../src/live/session/index.js';
import { sessionCounting } from '../../../src/live/session/tokenizer.js';
import { countO200kTokens } from '../../../src/tokens/o200k.js';
import { implementer } from '../../fixtures/results.js';

const right = <T>(either: E.Either<{ message: string }, T>): T => {
  if (E.isLeft(either)) throw new Error(either.left.message);
  return either.right;
};

const files = ['a', 'b', 'c', 'd', 'e'].map((name) => `src/server/${name}.ts`);
const prompt = { taskId: '2', taskPrompt: 'change src/server/a.ts and src/server/e.ts', maxTokens: 40, at: 2_000 };

const logOf = async (store: ReturnType<typeof memorySessionStore>, id: string): Promise<string[]> =>
  right(await store.read(id, 0)).lines.map((line) => line.text);

describe('a session given a named tokenizer', () => {
  it("records it in each prompt's line, and a replay given its counter gives the very section; sent again, the prompt gets it too", async () => {
    const store = memorySessionStore();
    const writer = right(await openSession('t', { store, tokenizer: 'o200k', countTokens: countO200kTokens }));
    right(await writer.ingestResult({ role: 'implementer', taskId: '1', output: implementer('1', files), at: 1_000 }));
    const compiled = right(await writer.compileContext(prompt));
    const log = await logOf(store, 't');
    expect(JSON.parse(log[1]!)).toMatchObject({ type: 'prompt', tokenizer: 'o200k' });
    expect(log[0]).not.toContain('tokenizer');
    const replayed = (options: Parameters<typeof replayHistory>[1]) =>
      replayHistory(log.join('\n'), options).report.prompts[0]!.sessionContext;
    expect(compiled.sessionContext).toBe(replayed({ tokenCounters: { o200k: countO200kTokens } }));
    // Not vacuous: the estimate fits another section in this budget.
    expect(compiled.sessionContext).not.toBe(replayed({}));
    // Another process, which never kept the section, answers the prompt sent again from its line.
    const reader = right(await openSession('t', { store, tokenizer: 'o200k', countTokens: countO200kTokens }));
    const again = right(await reader.compileContext(prompt));
    expect([again.line, again.duplicate, again.sessionContext]).toEqual([2, true, compiled.sessionContext]);
  });

  it('explains a recorded section budgeted as its line says, or says it cannot count as that line did', async () => {
    const store = memorySessionStore();
    const o200k = { tokenizer: 'o200k' as const, countTokens: countO200kTokens };
    const explained = async (
      recording: Parameters<typeof openSession>[1],
      explaining: typeof recording,
      id: string,
    ) => {
      const writer = right(await openSession(id, { ...recording, store }));
      right(
        await writer.ingestResult({ role: 'implementer', taskId: '1', output: implementer('1', files), at: 1_000 }),
      );
      const compiled = right(await writer.compileContext(prompt));
      const reader = right(await openSession(id, { ...explaining, store }));
      const recorded = right(await reader.recordedPrompt(prompt));
      if (recorded._tag === 'None') throw new Error('the prompt was recorded');
      const { line: _line, ...asked } = recorded.value;
      const decisions = await reader.explainContext(asked);
      return { compiled, decisions };
    };
    // Recorded with the estimate, explained by a process counting with o200k: as the line was budgeted.
    const { compiled, decisions } = await explained({}, o200k, 'estimate-line');
    const included = right(decisions).filter((decision) => decision.decision === 'included');
    expect(included.map((decision) => decision.fact.id)).toEqual(compiled.facts.map((fact) => fact.id));
    // Not vacuous: o200k fits another section in this budget.
    expect(compiled.facts.length).not.toBe(
      right(await right(await openSession('estimate-line', { ...o200k, store })).previewContext(prompt)).facts.length,
    );
    // Recorded with o200k, asked of a process that cannot count so: refused, never a wrong explanation.
    expect((await explained(o200k, {}, 'o200k-line')).decisions).toEqual(
      E.left({
        code: 'invalid_input',
        message: 'the section was budgeted with the tokenizer o200k, which this session does not count with',
      }),
    );
  });

  it('records nothing for the estimate, nor for a counter of the caller’s own', async () => {
    const store = memorySessionStore();
    for (const [id, options] of [
      ['estimate', { tokenizer: 'estimate' as const }],
      ['own', { countTokens: (text: string) => text.length }],
    ] as const) {
      const session = right(await openSession(id, { store, ...options }));
      right(await session.compileContext(prompt));
      expect(await logOf(store, id)).toEqual([
        JSON.stringify({ type: 'prompt', taskId: '2', taskPrompt: prompt.taskPrompt, maxTokens: 40, at: 2_000 }),
      ]);
    }
  });

  it('refuses a tokenizer that is not one, and a named one without its counter, naming it', async () => {
    const openWith = (options: Parameters<typeof openSession>[1]) =>
      openSession('t', { store: memorySessionStore(), ...options });
    expect(await openWith({ tokenizer: 'cl100k' as 'o200k', countTokens: countO200kTokens })).toEqual(
      E.left({ code: 'invalid_input', message: 'tokenizer must be estimate or o200k, not "cl100k"' }),
    );
    expect(await openWith({ tokenizer: 'o200k' })).toEqual(
      E.left({
        code: 'invalid_input',
        message:
          'tokenizer o200k names countTokens, which is not given (countO200kTokens from session-fact-tracker/o200k)',
      }),
    );
  });
});

describe('sessionCounting', () => {
  const line = (tokenizer?: 'estimate' | 'o200k') =>
    ({
      type: 'prompt',
      line: 3,
      at: 0,
      taskId: '1',
      taskPrompt: 'x',
      ...(tokenizer === undefined ? {} : { tokenizer }),
    }) as const;
  const own = (text: string): number => text.length;
  const estimate = right(sessionCounting({}));
  const o200k = right(sessionCounting({ tokenizer: 'o200k', countTokens: countO200kTokens }));
  const mine = right(sessionCounting({ countTokens: own }));
  const counterOf = (counting: typeof estimate, tokenizer?: 'estimate' | 'o200k') =>
    right(counting.envOf(line(tokenizer))).countTokens;

  it("draws a recorded prompt with the tokenizer its line names; a line naming none, with the estimate, or the caller's own counter", () => {
    expect([o200k.recorded, estimate.recorded, mine.recorded]).toEqual(['o200k', undefined, undefined]);
    expect(counterOf(o200k, 'o200k')).toBe(countO200kTokens);
    expect(counterOf(mine)).toBe(own);
    // The estimate is the transition's default: no counter at all.
    expect([counterOf(o200k), counterOf(o200k, 'estimate'), counterOf(mine, 'estimate'), counterOf(estimate)]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });

  it('refuses a line naming a tokenizer the session does not count with, rather than draw it with another', () => {
    for (const counting of [estimate, mine])
      expect(counting.envOf(line('o200k'))).toEqual(
        E.left({
          code: 'invalid_input',
          message: 'the prompt on line 3 was budgeted with the tokenizer o200k, which this session does not count with',
        }),
      );
  });
});
