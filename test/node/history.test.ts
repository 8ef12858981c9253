/** `session-fact-tracker/history/node`: histories read from files and streams, line by line. */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { parseHistory, replayHistory } from '../../src/index.js';
import { type ReadHistoryLine, readHistoryEvents, replayHistoryFile } from '../../src/node/history.js';
import { BAD_LINES } from '../fixtures/expected.js';
import { tempDir } from '../tempDirs.js';

const path = (file: string): string => new URL(`../../${file}`, import.meta.url).pathname;

describe('readHistoryEvents', () => {
  it('gives each non-blank line of a file as its event or its error, as parseHistory does', async () => {
    const read: ReadHistoryLine[] = [];
    for await (const line of readHistoryEvents(path(BAD_LINES))) read.push(line);
    const { events, errors } = parseHistory(readFileSync(path(BAD_LINES), 'utf8'));
    expect(read.filter(E.isRight).map((line) => line.right)).toEqual(events);
    expect(read.filter(E.isLeft).map((line) => line.left)).toEqual(errors);
  });

  it('reads a stream of text or bytes, and throws when the file cannot be read', async () => {
    const lines = [];
    for await (const line of readHistoryEvents(Readable.from(['{"type":"compact",', '"maxFacts":1}\n\n{}'])))
      lines.push(line);
    expect(lines.map((line) => (E.isRight(line) ? line.right.line : line.left.code))).toEqual([1, 'missing_field']);
    await expect(async () => {
      for await (const line of readHistoryEvents(join(tempDir('node-'), 'missing.jsonl'))) expect(line).toBeUndefined();
    }).rejects.toThrow(/ENOENT/u);
  });
});

describe('replayHistoryFile', () => {
  it('replays a file as replayHistory replays its text, and a stream as well', async () => {
    for (const file of ['examples/web-api-session.jsonl', BAD_LINES]) {
      const text = readFileSync(path(file), 'utf8');
      const expected = replayHistory(text);
      const fromFile = await replayHistoryFile(path(file));
      expect(E.isRight(fromFile) && fromFile.right.report).toEqual(expected.report);
      const fromStream = await replayHistoryFile(Readable.from([Buffer.from(text)]), { asOf: 1_772_442_000_000 });
      expect(E.isRight(fromStream) && fromStream.right.report).toEqual(
        replayHistory(text, { asOf: 1_772_442_000_000 }).report,
      );
    }
  });

  it("throws a callback's own exception as it is, never as a file that cannot be read, and closes the file", async () => {
    const failure = new TypeError('the caller failed');
    const stream = Readable.from([Buffer.from(readFileSync(path('examples/web-api-session.jsonl'), 'utf8'))]);
    await expect(
      replayHistoryFile(stream, {
        onPrompt: () => {
          throw failure;
        },
      }),
    ).rejects.toBe(failure);
    expect(stream.destroyed).toBe(true);
  });

  it('says in one line why a file cannot be read', async () => {
    const dir = tempDir('node-');
    writeFileSync(join(dir, 'a.jsonl'), '');
    expect(await replayHistoryFile(join(dir, 'missing.jsonl'))).toEqual(
      E.left({
        code: 'io',
        message: expect.stringMatching(/^cannot read .*missing\.jsonl: ENOENT/u) as unknown as string,
      }),
    );
    expect(E.isLeft(await replayHistoryFile(dir))).toBe(true);
  });

  it('names a source that is neither a path nor a stream: a Left of replayHistoryFile, a TypeError of the iteration', async () => {
    expect(await replayHistoryFile(null as never)).toEqual(
      E.left({
        code: 'invalid_input',
        message: 'the history source is null, not a file path or a stream of chunks (an async iterable)',
      }),
    );
    expect(await replayHistoryFile(42 as never)).toEqual(
      E.left({
        code: 'invalid_input',
        message: 'the history source is a number, not a file path or a stream of chunks (an async iterable)',
      }),
    );
    expect(await replayHistoryFile({} as never, null as never)).toEqual(
      E.left({
        code: 'invalid_input',
        message: 'the history source is an object, not a file path or a stream of chunks (an async iterable)',
      }),
    );
    expect(await replayHistoryFile('a\u0000b')).toEqual(
      E.left({ code: 'invalid_input', message: 'the history source is a path holding U+0000, which no file name can' }),
    );
    const lines = readHistoryEvents(null as never);
    await expect(lines.next()).rejects.toThrow(
      expect.objectContaining({
        name: 'TypeError',
        message: 'the history source is null, not a file path or a stream of chunks (an async iterable)',
      }),
    );
  });
  it('answers io, never a rejection, for a stream that fails with a value that has no text form', async () => {
    const line = '{"type":"compact","maxFacts":1}\n';
    const failingWith = (error: unknown): AsyncIterable<string> => ({
      async *[Symbol.asyncIterator]() {
        yield line;
        throw error;
      },
    });
    const noMessage = new Error('unread');
    Object.defineProperty(noMessage, 'message', {
      get: () => {
        throw new Error('no message either');
      },
    });
    const noText = {
      toString: () => {
        throw new Error('no text');
      },
    };
    for (const error of [Object.create(null), noText, noMessage])
      expect(await replayHistoryFile(failingWith(error))).toEqual(
        E.left({ code: 'io', message: 'cannot read the history stream: an object with no text form' }),
      );
    // A source whose every field throws is no stream: said as such, not thrown at the caller.
    const unreadable = new Proxy(
      {},
      {
        get: () => {
          throw new Error('no field');
        },
      },
    );
    expect(await replayHistoryFile(unreadable as never)).toEqual(
      E.left({
        code: 'invalid_input',
        message: 'the history source is an object, not a file path or a stream of chunks (an async iterable)',
      }),
    );
  });
});
