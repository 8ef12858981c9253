/** The replay report written as the replay goes is the report rendered whole, byte for byte. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { replayHistory, type ReplayReport } from '../../src/index.js';
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

describe('textReplayOutput', () => {
  it('prints prompts and rejected lines in line order, then the facts, the omitted lines and the summary', () => {
    const { report } = replayHistory(`${read(BAD_LINES)}\n${'x\n'.repeat(1_200)}`);
    const text = streamed(report, (write) => textReplayOutput(write, 'estimate', createStyle(false)));
    const lines = [...text.matchAll(/^line (\d+) · /gmu)].map((match) => Number(match[1]));
    expect(lines).toEqual([...lines].sort((a, b) => a - b));
    expect(text).toContain(
      '\n\n208 more lines were rejected (not listed: the report lists the first 1000)\n\nValid facts at the end',
    );
    expect(text).toMatch(/· 1208 rejected lines\n$/u);
  });
});
