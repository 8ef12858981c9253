/** The replay report written as the replay goes is the report rendered whole, byte for byte. */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FACT_TAGS, type PromptReport, replayHistory, type ReplayReport, type SessionFact } from '../../src/index.js';
import { jsonReplayOutput, textReplayOutput } from '../../src/cli/replayOutput.js';
import { createStyle } from '../../src/cli/style.js';
import { BAD_LINES } from '../fixtures/expected.js';

const read = (file: string): string => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');

/** Writes `report` through `output` as a streaming replay would: prompts and errors in line order, then the end. */
const streamed = (
  report: ReplayReport,
  make: (write: (text: string) => void) => ReturnType<typeof jsonReplayOutput>,
) => {
  let text = '';
  const output = make((piece) => (text += piece));
  const entries = [
    ...report.prompts.map((prompt) => ({ line: prompt.line, emit: () => output.prompt(prompt) })),
    ...report.errors.map((error) => ({ line: error.line, emit: () => output.error(error) })),
  ].sort((a, b) => a.line - b.line);
  entries.forEach((entry, i) => {
    entry.emit();
    if (i % 3 === 0) output.flush();
  });
  output.end({ ...report, prompts: [] });
  return text;
};

describe('jsonReplayOutput', () => {
  it.each([
    ['a session', read('examples/web-api-session.jsonl')],
    ['bad lines', read(BAD_LINES)],
    ['no prompt', '{"type":"compact","maxFacts":1}'],
    ['more than 1,000 rejected lines', 'x\n'.repeat(1_200)],
  ])('writes %s as JSON.stringify(report, null, 2) does', (_, text) => {
    const { report } = replayHistory(text);
    expect(streamed(report, jsonReplayOutput)).toBe(`${JSON.stringify(report, null, 2)}\n`);
  });
});

/** Any text a model may write: quotes, backslashes, control characters, lone surrogates, emoji. */
const textArb = fc.string({ unit: 'binary', maxLength: 40 });

/** A fact as a prompt holds it: frozen as the store's are, or a plain copy, with or without an end. */
const factArb: fc.Arbitrary<SessionFact> = fc
  .record(
    {
      id: fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 16, maxLength: 16 }),
      subject: textArb,
      relation: textArb,
      object: textArb,
      tags: fc.array(fc.constantFrom(...FACT_TAGS), { maxLength: 3 }),
      validFrom: fc.integer({ min: 0, max: 2 ** 40 }),
      validTo: fc.integer({ min: 0, max: 2 ** 40 }),
      sourceTaskId: textArb,
      sourceRole: fc.constantFrom('implementer' as const, 'reviewer' as const),
      confidence: fc.double({ min: 0, max: 1, noNaN: true }),
    },
    {
      requiredKeys: [
        'id',
        'subject',
        'relation',
        'object',
        'tags',
        'validFrom',
        'sourceTaskId',
        'sourceRole',
        'confidence',
      ],
    },
  )
  .chain((fact) => fc.constantFrom(Object.freeze(fact), { ...fact }));

const promptsArb: fc.Arbitrary<PromptReport[]> = fc.array(factArb, { minLength: 1, maxLength: 6 }).chain((facts) =>
  fc.array(
    fc.record({
      line: fc.nat(),
      taskId: textArb,
      sessionContext: textArb,
      // Drawn from a few facts, so the same fact object is in several prompts.
      facts: fc.array(fc.constantFrom(...facts), { maxLength: 5 }),
      contextTokens: fc.nat(),
      historyTokens: fc.nat(),
    }),
    { maxLength: 6 },
  ),
);

describe('jsonReplayOutput on any prompts', () => {
  it('writes every report as JSON.stringify(report, null, 2) does, whatever its texts and however often a fact recurs', () => {
    const { report } = replayHistory('');
    fc.assert(
      fc.property(promptsArb, (prompts) => {
        const whole = { ...report, prompts: prompts.map((prompt, i) => ({ ...prompt, line: i + 1 })) };
        expect(streamed(whole, jsonReplayOutput)).toBe(`${JSON.stringify(whole, null, 2)}\n`);
      }),
    );
  });
});

describe('textReplayOutput', () => {
  it('prints prompts and rejected lines in line order, then the facts, the omitted lines and the summary', () => {
    const { report } = replayHistory(`${read(BAD_LINES)}\n${'x\n'.repeat(1_200)}`);
    const text = streamed(report, (write) => textReplayOutput(write, 'estimate', createStyle(false)));
    const lines = [...text.matchAll(/^line (\d+) · /gmu)].map((match) => Number(match[1]));
    expect(lines).toEqual([...lines].sort((a, b) => a - b));
    expect(text).toContain(
      '\n\n208 more lines were rejected (not listed: the report lists the first 1,000)\n\nValid facts at the end',
    );
    expect(text).toMatch(/· 1,208 rejected lines\n$/u);
  });
});

describe('the report as it is written', () => {
  it('goes out in runs of about 64 KiB as prompts come, without waiting for a flush, the same text in the end', () => {
    const { report } = replayHistory(read('examples/web-api-session.jsonl'));
    // Enough prompts, each a few KiB, for several runs between two flushes.
    const prompts = Array.from({ length: 200 }, (_, i) => ({
      ...report.prompts[i % report.prompts.length]!,
      sessionContext: `${'x'.repeat(1_000 + i)}`,
      line: i + 1,
    }));
    const whole = { ...report, prompts };
    const writes: string[] = [];
    const output = jsonReplayOutput((text) => writes.push(text));
    for (const prompt of prompts) output.prompt(prompt);
    const beforeEnd = writes.length;
    output.end({ ...whole, prompts: [] });
    expect(writes.join('')).toBe(`${JSON.stringify(whole, null, 2)}\n`);
    expect(beforeEnd).toBeGreaterThan(2);
    const largestPrompt = Math.max(...prompts.map((prompt) => JSON.stringify(prompt, null, 4).length));
    for (const text of writes.slice(0, beforeEnd)) {
      expect(text.length).toBeGreaterThanOrEqual(64 * 1024);
      expect(text.length).toBeLessThan(64 * 1024 + largestPrompt + 16);
    }
  });
});
