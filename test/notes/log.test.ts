import { describe, expect, it } from 'vitest';
import { parseNotesLog } from '../../src/notes/log.js';
import { lines, user } from './logLines.js';

describe('parseNotesLog', () => {
  it('reads every kind of line, giving lines without "at" the previous time plus a second', () => {
    const { entries, errors } = parseNotesLog(
      lines(
        user('maya', 'hi', { at: '2026-02-03T19:00:00Z' }),
        { type: 'assistant', user: 'maya', session: 's1', text: 'hello' },
        { type: 'extraction', user: 'maya', session: 's1', error: 'timeout' },
        { type: 'endStage', user: 'maya' },
      ),
    );
    expect(errors).toEqual([]);
    const start = Date.UTC(2026, 1, 3, 19);
    expect(entries.map((entry) => [entry.type, entry.at])).toEqual([
      ['user', start],
      ['assistant', start + 1000],
      ['extraction', start + 2000],
      ['endStage', start + 3000],
    ]);
    expect(entries[2]).toMatchObject({ outcome: { _tag: 'Left', left: { code: 'timeout' } } });
  });

  it('holds a line without "at" at the last millisecond of the year 9999, as a dispatch history does', () => {
    const { entries, errors } = parseNotesLog(
      lines(
        user('maya', 'hi', { at: '9999-12-31T23:59:59.500Z' }),
        { type: 'assistant', user: 'maya', session: 's1', text: 'hello' },
        { type: 'endStage', user: 'maya' },
      ),
    );
    expect(errors).toEqual([]);
    const latest = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
    expect(entries.map((entry) => entry.at)).toEqual([latest - 499, latest, latest]);
  });

  it('rejects bad lines one by one, with their line numbers, and reads the rest', () => {
    const { entries, errors } = parseNotesLog(
      [
        '{nope',
        JSON.stringify({ type: 'shout', user: 'maya' }),
        JSON.stringify({ user: 'maya' }),
        JSON.stringify({ type: 'user', session: 's1', text: 'x' }),
        JSON.stringify({ type: 'user', user: 'maya', session: 's1', text: '' }),
        JSON.stringify({ type: 'extraction', user: 'maya', session: 's1' }),
        JSON.stringify({ type: 'extraction', user: 'maya', session: 's1', response: '[]', error: 'x' }),
        JSON.stringify({ type: 'user', user: 'maya', session: 's1', text: 'x', at: 'yesterday' }),
        '',
        JSON.stringify(user('maya', 'fine')),
      ].join('\n'),
    );
    expect(errors.map((error) => [error.line, error.code])).toEqual([
      [1, 'invalid_json'],
      [2, 'unknown_type'],
      [3, 'missing_field'],
      [4, 'missing_field'],
      [5, 'invalid_field'],
      [6, 'missing_field'],
      [7, 'invalid_field'],
      [8, 'invalid_field'],
    ]);
    expect(entries).toHaveLength(1);
  });

  it('takes ids of up to 200 characters, an emoji counting as one, and refuses 201', () => {
    const emoji = (count: number): string => '\u{1F600}'.repeat(count);
    const { entries, errors } = parseNotesLog(
      lines(
        user(emoji(200), 'hi', { session: emoji(200) }),
        { type: 'endStage', user: `${'x'.repeat(199)}\u{1F600}` },
        user(emoji(201), 'hi'),
        user('maya', 'hi', { session: `${'x'.repeat(200)}\u{1F600}` }),
      ),
    );
    expect(entries.map((entry) => entry.line)).toEqual([1, 2]);
    expect(errors.map((error) => [error.line, error.code])).toEqual([
      [3, 'invalid_field'],
      [4, 'invalid_field'],
    ]);
  });

  it('says what an empty or blank text is, not that it is no string', () => {
    const { errors } = parseNotesLog(
      lines(
        { type: 'user', user: 'maya', session: 's1', text: '' },
        { type: 'assistant', user: 'maya', session: 's1', text: ' \n ' },
        { type: 'user', user: 'maya', session: 's1', text: 5 },
        { type: 'user', user: 'maya', session: 's1', text: '\u200b\u2060' },
        { type: 'extraction', user: 'maya', session: 's1', error: ' \u200b ' },
        { type: 'user', user: '\u200d', session: 's1', text: 'hi' },
        { type: 'user', user: 'a\u0000b', session: 's1', text: 'hi' },
        { type: 'extraction', user: 'maya', session: 's\ud83d', response: '{"notableFacts":[]}' },
        { type: 'endStage', user: '\udc00' },
      ),
    );
    expect(errors.map((error) => error.message)).toEqual([
      'text must be non-empty text, not ""',
      'text must be non-empty text, not " \\n "',
      'text must be non-empty text, not a number',
      // Invisible characters are quoted as their escapes: shown raw, the quote would look empty.
      'text must be non-empty text, not "\\u200b\\u2060"',
      'error must be text',
      'user must be an id of 1 to 200 characters, not "\\u200d"',
      // Ids the tracker refuses where they enter (no store could keep them): refused here too.
      'user must be an id a store can keep, without U+0000 or an unpaired surrogate, not "a\\u0000b"',
      'session must be an id a store can keep, without U+0000 or an unpaired surrogate, not "s\\ud83d"',
      'user must be an id a store can keep, without U+0000 or an unpaired surrogate, not "\\udc00"',
    ]);
    expect(errors.slice(-3).map((error) => error.code)).toEqual(['invalid_field', 'invalid_field', 'invalid_field']);
  });
});
