/**
 * The server's input, regrouped into whole lines before the SDK reads it: a line that is not
 * JSON is held back and reported (the server answers it with a parse error), whatever chunks
 * the lines arrive in; and its output, where answers a client lets wait share one wait for room.
 */
import { PassThrough, Readable } from 'node:stream';
import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { parseErrorResponse, serveMcp, wholeLines } from '../../../src/live/mcp/stdio.js';
import { tempDir } from '../../tempDirs.js';

/** What `wholeLines` passes on and reports for `input` cut at `cuts`. */
const regroup = async (
  input: string,
  cuts: ReadonlyArray<number>,
): Promise<{ passed: string; chunks: string[]; reasons: string[] }> => {
  const bytes = Buffer.from(input);
  const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
  const pieces = [0, ...points, bytes.length].flatMap((start, i, all) =>
    i + 1 < all.length && all[i + 1]! > start ? [bytes.subarray(start, all[i + 1])] : [],
  );
  const reasons: string[] = [];
  const chunks: string[] = [];
  for await (const chunk of Readable.from(pieces).pipe(wholeLines(1024, (reason) => reasons.push(reason))))
    chunks.push((chunk as Buffer).toString());
  return { passed: chunks.join(''), chunks, reasons };
};

const LINES = [
  '{"jsonrpc":"2.0","id":1,"method":"ping"}',
  '{"jsonrpc":"2.0","method":"notifications/initialized"}',
  '{"jsonrpc":"2.0","id":"a","result":{}}',
  'not json',
  '',
  '{"a": [1, 2',
  '  ',
  '[]',
  '{}',
  '42',
  'null',
  '{"jsonrpc":"2.0","id":7}',
  '{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}',
  '{"jsonrpc":"2.0","id":2,"method":"ping","params":[1]}',
  '{"jsonrpc":"2.0","id":3,"method":"ping","params":{"_meta":5}}',
  '{"jsonrpc":"2.0","id":"b","result":5}',
  '[{"jsonrpc":"2.0","id":5,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]',
];

/** The error code and id each bad line is answered with. */
const ANSWERS: Readonly<Record<string, readonly [number, string | number | null]>> = {
  'not json': [-32700, null],
  '{"a": [1, 2': [-32700, null],
  '[]': [-32600, null],
  '{}': [-32600, null],
  '42': [-32600, null],
  null: [-32600, null],
  '{"jsonrpc":"2.0","id":7}': [-32600, 7],
  '{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}': [-32600, null],
  '{"jsonrpc":"2.0","id":2,"method":"ping","params":[1]}': [-32600, 2],
  '{"jsonrpc":"2.0","id":3,"method":"ping","params":{"_meta":5}}': [-32600, 3],
  '{"jsonrpc":"2.0","id":"b","result":5}': [-32600, 'b'],
  '[{"jsonrpc":"2.0","id":5,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]': [-32600, 5],
};

describe('wholeLines', () => {
  it('passes on every JSON-RPC message or blank line whole, and answers each other line once (a parse error, or an invalid request with its id when usable), however the input is cut', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(...LINES), { maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        async (lines, cuts) => {
          const { passed, chunks, reasons } = await regroup(lines.map((line) => `${line}\n`).join(''), cuts);
          const messages = lines.filter((line) => ANSWERS[line] === undefined);
          expect(passed).toBe(messages.map((line) => `${line}\n`).join(''));
          expect(chunks.every((chunk) => chunk.endsWith('\n'))).toBe(true);
          const answered = reasons.map((response) => JSON.parse(response) as { id: unknown; error: { code: number } });
          expect(answered.map(({ error, id }) => [error.code, id])).toEqual(
            lines.flatMap((line) => (ANSWERS[line] === undefined ? [] : [ANSWERS[line]])),
          );
          expect(reasons.every((response) => response.endsWith('}\n') && !response.slice(0, -1).includes('\n'))).toBe(
            true,
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  it('reads no further chunk after answering a bad line until the answers have room', async () => {
    let release: () => void = () => undefined;
    const room = new Promise<void>((resolve) => (release = resolve));
    const reasons: string[] = [];
    const lines = wholeLines(
      1024,
      (reason) => reasons.push(reason),
      () => room,
    );
    const written = (chunk: string): Promise<void> => new Promise((resolve) => lines.write(chunk, () => resolve()));
    const both = Promise.all([written('not json\n'), written('also not json\n')]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    // The first bad line is answered; the next chunk waits until the answers have room.
    expect(reasons).toHaveLength(1);
    release();
    await both;
    expect(reasons).toHaveLength(2);
  });

  it('reads no further chunk after passing messages on until the output has room: a client that reads no answers cannot fill our memory', async () => {
    let release: () => void = () => undefined;
    const room = new Promise<void>((resolve) => (release = resolve));
    const lines = wholeLines(
      1024,
      () => undefined,
      () => room,
    );
    const passed: string[] = [];
    lines.on('data', (chunk: Buffer) => passed.push(chunk.toString()));
    const written = (chunk: string): Promise<void> => new Promise((resolve) => lines.write(chunk, () => resolve()));
    const both = Promise.all([
      written('{"jsonrpc":"2.0","id":1,"method":"ping"}\n'),
      written('{"jsonrpc":"2.0","id":2,"method":"ping"}\n'),
    ]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(passed).toEqual(['{"jsonrpc":"2.0","id":1,"method":"ping"}\n']);
    release();
    await both;
    expect(passed).toHaveLength(2);
  });

  it('reads a last line that ends without its newline as a line: passed on with one, or answered', async () => {
    const ping = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
    expect(await regroup(`${ping}\n${ping}`, [5, 50])).toMatchObject({ passed: `${ping}\n${ping}\n`, reasons: [] });
    const cut = await regroup(`${ping}\n{"jsonrpc":"2.0","id":2,"meth`, [3]);
    expect(cut.passed).toBe(`${ping}\n`);
    expect(cut.reasons.map((response) => (JSON.parse(response) as { error: { code: number } }).error.code)).toEqual([
      -32700,
    ]);
    expect(await regroup(`${ping}\n  `, [])).toMatchObject({ reasons: [] });
  });

  it('reads a byte order mark at the very start of the input as nothing, however the input is cut, and no other', async () => {
    const ping = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
    const codes = (reasons: string[]) =>
      reasons.map((response) => (JSON.parse(response) as { error: { code: number } }).error.code);
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat(), { maxLength: 4 }), async (cuts) => {
        expect(await regroup(`\uFEFF${ping}\n${ping}\n`, cuts)).toMatchObject({
          passed: `${ping}\n${ping}\n`,
          reasons: [],
        });
        // Without its newline, the first line is also the last.
        expect(await regroup(`\uFEFF${ping}`, cuts)).toMatchObject({ passed: `${ping}\n`, reasons: [] });
      }),
    );
    // One mark, at the start: a second one, or one that starts a later line, is text that is not JSON.
    const twice = await regroup(`\uFEFF\uFEFF${ping}\n${ping}\n`, []);
    expect([twice.passed, codes(twice.reasons)]).toEqual([`${ping}\n`, [-32700]]);
    const later = await regroup(`${ping}\n\uFEFF${ping}\n`, []);
    expect([later.passed, codes(later.reasons)]).toEqual([`${ping}\n`, [-32700]]);
  });

  it('answers a line that is not JSON with where the parser stopped, never the text: a token written there reaches no client', async () => {
    const token = `ghp_${'a1B2c3D4e5'.repeat(4).slice(0, 36)}`;
    const { passed, reasons } = await regroup(`{"jsonrpc":"2.0","id":1,"method":"ping","params": ${token}}\n`, []);
    expect(passed).toBe('');
    expect(reasons.map((response) => JSON.parse(response) as unknown)).toEqual([
      {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32700, message: "Parse error: Unexpected token 'g' (not valid JSON)" },
      },
    ]);
  });

  it('answers a parse error as JSON-RPC 2.0 says: code -32700 and a null id, on one line', () => {
    expect(JSON.parse(parseErrorResponse('Unexpected token'))).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: 'Parse error: Unexpected token' },
    });
    expect(parseErrorResponse('x').endsWith('}\n')).toBe(true);
  });
});

describe('serveMcp, to a client that lets its answers wait', () => {
  it('waits for room once for all of them: the output never holds more than one drain listener of the server, however many answers wait', async () => {
    const input = new PassThrough();
    // Nobody reads it until every answer is written: each write past the first few finds it full.
    const output = new PassThrough({ highWaterMark: 1024 });
    const pings = 5_000;
    let written = 0;
    let mostListeners = 0;
    const allWritten = new Promise<void>((resolve) => {
      const write = output.write.bind(output);
      output.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
        const room = write(chunk, ...rest);
        mostListeners = Math.max(mostListeners, output.listenerCount('drain'));
        written += 1;
        if (written === pings + 1) resolve();
        return room;
      }) as typeof output.write;
    });
    const serving = serveMcp({ input, output }, { cwd: tempDir('mcp-waiting-answers-'), version: '0.0.0-test' });
    input.write(
      `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"script","version":"1"}}}\n`,
    );
    for (let id = 1; id <= pings; id += 1) input.write(`{"jsonrpc":"2.0","id":${id},"method":"ping"}\n`);
    await allWritten;
    // One listener per waiting answer (the SDK's own send) made their removal quadratic in their number.
    expect(mostListeners).toBeLessThanOrEqual(1);
    let lines = 0;
    output.on('data', (chunk: Buffer) => {
      for (let at = chunk.indexOf(0x0a); at !== -1; at = chunk.indexOf(0x0a, at + 1)) lines += 1;
    });
    input.end();
    expect(E.isRight(await serving)).toBe(true);
    expect(lines).toBe(pings + 1);
  });
});
