/**
 * Histories read line by line (issue 14, items 5 and 6): the lines of a stream are the lines
 * of the whole text whatever the chunks, a line is never held past the limit, a replay fed in
 * batches is the replay of the whole text, and one hostile line is one rejected line.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { addFacts, emptyFactStore, parseHistory, parseHistoryLine, replayHistory } from '../../src/index.js';
import { HISTORY_LINE_LIMITS, type HistoryLine, lineBatches, linesOfText } from '../../src/core/history/lines.js';
import { MAX_REPORTED_ERRORS, startHistoryReplay } from '../../src/core/replay/replay.js';
import { BAD_LINES } from '../fixtures/expected.js';
import { implementer } from '../fixtures/results.js';
import { isDeepFrozen } from '../core/store/invariants.js';

const read = (file: string): string => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');
const example = read('examples/web-api-session.jsonl');

/** `bytes` cut at the given offsets (in any order, repeats allowed). */
const chunked = (bytes: Uint8Array, cuts: ReadonlyArray<number>): Uint8Array[] => {
  const at = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
  return [0, ...at].map((start, i) => bytes.subarray(start, at[i] ?? bytes.length)).filter((chunk) => chunk.length > 0);
};

async function* asStream<T>(items: ReadonlyArray<T>): AsyncGenerator<T> {
  yield* items;
}

const collect = async (chunks: ReadonlyArray<Uint8Array | string>, maxLength?: number): Promise<HistoryLine[]> => {
  const lines: HistoryLine[] = [];
  for await (const batch of lineBatches(asStream(chunks), maxLength)) lines.push(...batch);
  return lines;
};

const nonBlank = (lines: ReadonlyArray<HistoryLine>): HistoryLine[] => lines.filter((line) => line.text.trim() !== '');

describe('lineBatches', () => {
  it('gives the lines of the whole text, whatever the chunks: breaks \\r\\n, \\n, \\r, a BOM, multi-byte characters', async () => {
    const piece = fc.constantFrom('a', '{"x":1}', '\n', '\r', '\r\n', 'é', '💡', ' ', '\u2028', '\uFEFF');
    await fc.assert(
      fc.asyncProperty(
        fc.boolean(),
        fc.array(piece, { maxLength: 30 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        async (bom, pieces, cuts) => {
          const text = `${bom ? '\uFEFF' : ''}${pieces.join('')}`;
          const expected = nonBlank(linesOfText(text));
          expect(nonBlank(await collect(chunked(new TextEncoder().encode(text), cuts)))).toEqual(expected);
          // The line numbers are those of a split at every break.
          expect(expected.map((line) => line.text)).toEqual(
            text
              .replace(/^\uFEFF/u, '')
              .split(/\r\n|\n|\r/u)
              .filter((line) => line.trim() !== ''),
          );
        },
      ),
    );
  });

  it('reads bytes that start with a UTF-16 byte-order mark as UTF-16 (PowerShell >), whatever the chunks', async () => {
    const piece = fc.constantFrom('a', '{"x":1}', '\n', '\r\n', 'é', '💡', ' ');
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('le', 'be'),
        fc.array(piece, { maxLength: 30 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        async (endian, pieces, cuts) => {
          const text = pieces.join('');
          const le = Buffer.from(`\uFEFF${text}`, 'utf16le');
          const bytes = endian === 'le' ? le : le.swap16();
          expect(await collect(chunked(bytes, cuts))).toEqual(linesOfText(text));
        },
      ),
    );
  });

  it('reads UTF-16 without a byte-order mark (iconv -t utf-16le) as UTF-16 when it starts with two ASCII characters, whatever the chunks', async () => {
    const start = fc.constantFrom('{"', '\n{', '\r\n', '  ', 'ab');
    const piece = fc.constantFrom('a', '{"x":1}', '\n', '\r\n', 'é', '💡', ' ');
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('le', 'be'),
        start,
        fc.array(piece, { maxLength: 30 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        async (endian, first, pieces, cuts) => {
          const text = `${first}${pieces.join('')}`;
          const le = Buffer.from(text, 'utf16le');
          const bytes = endian === 'le' ? le : le.swap16();
          expect(await collect(chunked(bytes, cuts))).toEqual(linesOfText(text));
        },
      ),
    );
  });

  it('reads as UTF-8 bytes whose zeros are not those of two UTF-16 characters at the start', async () => {
    for (const text of ['{\0\0\0"a"', '\0\0\0{', '{"\0\0', '{\0\n', 'é\0', '{"a":"\0b\0"}'])
      expect(await collect([Buffer.from(text, 'utf8')])).toEqual(linesOfText(text));
  });

  it('holds at most the limit and one character of a line, so the parser rejects it as too large', async () => {
    const long = `${'x'.repeat(1_000)}\n{"type":"compact","maxFacts":1}\n`;
    const lines = await collect(chunked(new TextEncoder().encode(long), [7, 300, 301, 900]), 10);
    expect(lines.map((line) => [line.line, line.text.length])).toEqual([
      [1, 11],
      [2, 11],
    ]);
    const tooLong = parseHistoryLine('x'.repeat(HISTORY_LINE_LIMITS.length + 1), 4, undefined);
    expect(tooLong).toEqual(
      E.left({ line: 4, code: 'too_large', message: 'the line is longer than 16777216 characters' }),
    );
  });
});

describe('one deeply nested line (issue 14, item 5)', () => {
  const deep = `${'['.repeat(5_000)}${']'.repeat(5_000)}`;
  const good = JSON.stringify({
    type: 'dispatch',
    role: 'implementer',
    taskId: '1',
    result: implementer('1', ['src/a.ts']),
  });
  const nested = good.replace('"result":{', `"result":{"extra":${deep},`);
  const text = [good, nested, JSON.stringify({ type: 'prompt', taskId: '2', taskPrompt: 'src/a.ts' })].join('\n');

  it('is a rejected line like any other, and the good lines still apply', () => {
    // Before: JSON.stringify of the result overflowed the stack and the whole replay threw.
    const { report } = replayHistory(text);
    expect(report.errors).toEqual([
      { line: 2, code: 'too_large', message: 'the line nests arrays and objects more than 100 deep' },
    ]);
    expect(report.summary).toMatchObject({ events: 2, dispatches: 1, prompts: 1 });
    expect(report.prompts[0]?.facts.map((fact) => fact.subject)).toContain('src/a.ts');
  });

  it('counts brackets in strings as text, and takes 100 levels', () => {
    const inString = JSON.stringify({ type: 'prompt', taskId: '1', taskPrompt: `${'['.repeat(500)}\\"` });
    expect(E.isRight(parseHistoryLine(inString, 1, undefined))).toBe(true);
    const hundred = `{"type":"compact","maxFacts":1,"x":${'['.repeat(99)}${']'.repeat(99)}}`;
    expect(E.isRight(parseHistoryLine(hundred, 1, undefined))).toBe(true);
    const more = `{"type":"compact","maxFacts":1,"x":${'['.repeat(100)}${']'.repeat(100)}}`;
    expect(E.isLeft(parseHistoryLine(more, 1, undefined))).toBe(true);
  });
});

describe('startHistoryReplay', () => {
  const feedAll = (text: string, sizes: ReadonlyArray<number>, options = {}) => {
    const replay = startHistoryReplay(options);
    const lines = linesOfText(text);
    let at = 0;
    for (let i = 0; at < lines.length; i += 1) {
      const size = sizes.length === 0 ? lines.length : (sizes[i % sizes.length]! % 7) + 1;
      if (!replay.feed(lines.slice(at, at + size))) break;
      at += size;
    }
    return replay.finish();
  };

  it('fed in batches of any size, gives the replay of the whole text', () => {
    const bad = read(BAD_LINES);
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 5 }), fc.constantFrom(example, bad), (sizes, text) => {
        const whole = replayHistory(text);
        const fed = feedAll(text, sizes);
        expect(fed.report).toEqual(whole.report);
        expect(fed.store).toEqual(whole.store);
      }),
      { numRuns: 20 },
    );
  });

  it('stops at --as-of and at a line as replayHistory does, and says so', () => {
    const asOf = Date.parse('2026-03-02T09:30:00Z');
    const stopped = startHistoryReplay({ asOf });
    expect(stopped.feed(linesOfText(example))).toBe(false);
    expect(stopped.finish().report).toEqual(replayHistory(example, { asOf }).report);
    expect(feedAll(example, [3], { untilLine: 12 }).report).toEqual(replayHistory(example, { untilLine: 12 }).report);
  });

  it('hands prompts and listed errors out as they come, keeping no prompt, and keeps one retrieval when asked', () => {
    const bad = read(BAD_LINES);
    const prompts: number[] = [];
    const errors: number[] = [];
    const replay = startHistoryReplay({
      onPrompt: (prompt) => prompts.push(prompt.line),
      onError: (error) => errors.push(error.line),
      keepRetrievals: 13,
    });
    replay.feed(linesOfText(bad));
    const { report, retrievals } = replay.finish();
    const whole = replayHistory(bad);
    expect(report.prompts).toEqual([]);
    expect(prompts).toEqual(whole.report.prompts.map((prompt) => prompt.line));
    expect(errors).toEqual(whole.report.errors.map((error) => error.line));
    expect(retrievals.map((retrieval) => retrieval.line)).toEqual([13]);
  });

  it('writes its store in place from batch to batch, yet hands out only frozen facts and a frozen store, and what its callbacks write stays persistent', () => {
    // A compaction half-way makes summary facts, which the replay itself creates (to 15 facts:
    // at 3 it keeps the open review items, which never merge, and drops the summaries first).
    const lines = example.split('\n');
    const half = Math.floor(lines.length / 2);
    const text = [
      ...lines.slice(0, half),
      JSON.stringify({ type: 'compact', maxFacts: 15 }),
      ...lines.slice(half),
    ].join('\n');
    const whole = replayHistory(text);
    expect(whole.report.prompts.some((prompt) => prompt.facts.some((fact) => fact.relation === 'summary_of'))).toBe(
      true,
    );

    let own = emptyFactStore();
    const handedOut: Array<{ store: typeof own; json: string }> = [];
    const reported: unknown[] = [];
    const replay = startHistoryReplay({
      onPrompt: (prompt) => {
        expect(prompt.facts.every(isDeepFrozen)).toBe(true);
        reported.push(prompt);
        // The callback's own writes: each store it hands itself must never change afterwards.
        const fact = prompt.facts[0];
        if (fact === undefined) return;
        own = addFacts(own, [{ ...fact, sourceTaskId: `copy-${prompt.line}` }]);
        expect(isDeepFrozen(own)).toBe(true);
        handedOut.push({ store: own, json: JSON.stringify(own) });
      },
    });
    const all = linesOfText(text);
    for (let at = 0; at < all.length; at += 3) replay.feed(all.slice(at, at + 3));
    const result = replay.finish();
    expect(reported).toEqual(whole.report.prompts);
    expect(result.store).toEqual(whole.store);
    expect(isDeepFrozen(result.store)).toBe(true);
    expect(handedOut.length).toBeGreaterThan(1);
    for (const { store, json } of handedOut) expect(JSON.stringify(store)).toBe(json);
  });

  it('two replays fed alternately, each keeping its store unfrozen between batches, give each the replay of its own text', () => {
    const bad = read(BAD_LINES);
    const left = startHistoryReplay();
    const right = startHistoryReplay();
    const leftLines = linesOfText(example);
    const rightLines = linesOfText(bad);
    for (let at = 0; at < Math.max(leftLines.length, rightLines.length); at += 2) {
      left.feed(leftLines.slice(at, at + 2));
      right.feed(rightLines.slice(at, at + 2));
    }
    const [leftResult, rightResult] = [left.finish(), right.finish()];
    expect(leftResult.report).toEqual(replayHistory(example).report);
    expect(leftResult.store).toEqual(replayHistory(example).store);
    expect(rightResult.report).toEqual(replayHistory(bad).report);
    expect(isDeepFrozen(leftResult.store) && isDeepFrozen(rightResult.store)).toBe(true);
  });

  it('a result finish() handed out is the replay of the lines fed before it, and stays so while more lines are fed', () => {
    const lines = linesOfText(read(BAD_LINES));
    fc.assert(
      fc.property(fc.nat({ max: lines.length }), (cut) => {
        const replay = startHistoryReplay({ keepRetrievals: true });
        replay.feed(lines.slice(0, cut));
        const early = replay.finish();
        const json = JSON.stringify(early);
        replay.feed(lines.slice(cut));
        replay.finish();
        expect(JSON.stringify(early)).toBe(json);
        expect(early.report).toEqual(
          replayHistory(
            lines
              .slice(0, cut)
              .map((line) => line.text)
              .join('\n'),
            { keepRetrievals: true },
          ).report,
        );
      }),
      { numRuns: 20 },
    );
  });

  it('lists the first 1,000 rejected lines and counts the rest, in a replay fed in batches too', () => {
    const junk = Array.from({ length: 2_500 }, (_, i) => (i % 2 === 0 ? 'x' : '{"type":"oops"}'));
    const text = [...junk, JSON.stringify({ type: 'compact', maxFacts: 1 })].join('\n');
    const { report } = replayHistory(text);
    expect(report.errors).toHaveLength(MAX_REPORTED_ERRORS);
    expect(report.errorsOmitted).toBe(1_500);
    expect(report.errors.at(-1)?.line).toBe(1_000);
    expect(report.summary.events).toBe(1);
    expect(feedAll(text, [5, 900]).report).toEqual(report);
    // parseHistory itself still reads every line.
    expect(parseHistory(text).errors).toHaveLength(2_500);
  });
});
