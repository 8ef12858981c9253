import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { parseTimeArgument } from '../../src/base/time.js';
import { parseEventTime, parseIsoTime } from '../../src/index.js';

const right = <A>(either: E.Either<{ readonly message: string }, A>): A => {
  if (E.isLeft(either)) throw new Error(`expected a time, got: ${either.left.message}`);
  return either.right;
};

describe('parseIsoTime', () => {
  it('reads UTC, offsets and fractions exactly as Date does for well-formed ISO text', () => {
    expect(right(parseIsoTime('2026-03-01T10:00:00Z'))).toBe(Date.parse('2026-03-01T10:00:00Z'));
    expect(right(parseIsoTime('2026-03-01T10:00:00+01:00'))).toBe(Date.parse('2026-03-01T09:00:00Z'));
    expect(right(parseIsoTime('2026-03-01T10:00:00.57Z'))).toBe(Date.parse('2026-03-01T10:00:00.570Z'));
    expect(right(parseIsoTime('2026-03-01'))).toBe(Date.parse('2026-03-01T00:00:00Z'));
  });

  it('reads a date-time without offset as UTC, whatever the machine time zone', () => {
    expect(right(parseIsoTime('2026-03-01T10:00'))).toBe(Date.parse('2026-03-01T10:00:00Z'));
  });

  it('rejects dates and times that do not exist instead of rolling them over', () => {
    expect(E.isLeft(parseIsoTime('2026-02-30T00:00:00Z'))).toBe(true);
    expect(E.isLeft(parseIsoTime('2026-03-01T24:00:00Z'))).toBe(true);
    expect(E.isLeft(parseIsoTime('yesterday'))).toBe(true);
    expect(E.isLeft(parseIsoTime('March 1, 2026'))).toBe(true);
  });

  it('rejects an offset whose minutes are past 59 instead of rolling them over into its hours', () => {
    for (const text of ['2026-03-01T10:00:00+05:60', '2026-03-01T10:00:00+05:99', '2026-03-01T10:00-0575'])
      expect(parseIsoTime(text)).toEqual(
        E.left(expect.objectContaining({ message: `${JSON.stringify(text)} has no such time of day` })),
      );
    expect(right(parseIsoTime('2026-03-01T10:00:00+05:59'))).toBe(Date.parse('2026-03-01T04:01:00Z'));
  });

  it('February 29 is a date exactly in the years the Gregorian calendar makes leap years, 0000 among them', () => {
    const isLeap = (year: number): boolean => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
    fc.assert(
      fc.property(fc.oneof(fc.constantFrom(0, 100, 400, 1900, 2000), fc.integer({ min: 0, max: 9999 })), (year) => {
        const text = `${String(year).padStart(4, '0')}-02-29T00:00:00Z`;
        expect(E.isRight(parseIsoTime(text))).toBe(isLeap(year));
      }),
    );
    // The leap day of the year 0000 is taken as epoch milliseconds too: the two forms take the same instants.
    const leapDay = right(parseEventTime(right(parseIsoTime('0000-03-01T00:00:00Z')) - 86_400_000));
    expect(right(parseIsoTime('0000-02-29T00:00:00Z'))).toBe(leapDay);
  });

  it('refuses an offset after a date without a time of day, which reads as a date and an hour (2026-03-01-05)', () => {
    for (const text of ['2026-03-01-05', '2026-03-01+05', '2026-03-01 -05:00', '2026-03-01+0530'])
      expect(parseIsoTime(text)).toEqual(
        E.left(
          expect.objectContaining({
            message: `${JSON.stringify(text)} is not an ISO-8601 time: an offset needs a time of day`,
          }),
        ),
      );
    // A date alone in UTC says the one instant it says without the Z.
    expect(right(parseIsoTime('2026-03-01Z'))).toBe(right(parseIsoTime('2026-03-01')));
    expect(right(parseIsoTime('2026-03-01T05:00-05'))).toBe(Date.parse('2026-03-01T10:00:00Z'));
  });
});

describe('parseEventTime and parseTimeArgument', () => {
  it('take epoch milliseconds as a number or as digits', () => {
    expect(right(parseEventTime(1772359200000))).toBe(1772359200000);
    expect(right(parseTimeArgument('1772359200000'))).toBe(1772359200000);
    expect(right(parseTimeArgument('2026-03-01T10:00:00Z'))).toBe(Date.parse('2026-03-01T10:00:00Z'));
  });

  it('take a number as whole milliseconds, its fraction dropped as the ISO-8601 form drops the digits past the millisecond', () => {
    const ten = Date.parse('2026-03-01T10:00:00Z');
    expect(right(parseEventTime(ten + 0.6))).toBe(ten);
    expect(right(parseEventTime(ten + 0.6))).toBe(right(parseEventTime('2026-03-01T10:00:00.0006Z')));
    expect(right(parseEventTime(-0.4))).toBe(right(parseEventTime('1969-12-31T23:59:59.9996Z')));
    expect(Object.is(right(parseEventTime(-0)), 0)).toBe(true);
    const latest = Date.parse('9999-12-31T23:59:59.999Z');
    expect(right(parseEventTime(latest + 0.5))).toBe(latest);
    expect(E.isLeft(parseEventTime(right(parseIsoTime('0000-01-01T00:00:00Z')) - 0.5))).toBe(true);
  });

  it('take digits with a fraction as parseEventTime takes the number (--as-of, asOf as text): the fraction dropped, not called no ISO-8601 time', () => {
    const ten = Date.parse('2026-03-01T10:00:00Z');
    expect(right(parseTimeArgument(`${ten}.6`))).toBe(ten);
    expect(right(parseTimeArgument(`${ten}.6`))).toBe(right(parseEventTime(ten + 0.6)));
    expect(right(parseTimeArgument('-0.4'))).toBe(right(parseEventTime(-0.4)));
    expect(Object.is(right(parseTimeArgument('-0.0')), 0)).toBe(true);
    const latest = Date.parse('9999-12-31T23:59:59.999Z');
    expect(right(parseTimeArgument(`${latest}.5`))).toBe(latest);
    expect(parseTimeArgument(`${latest + 1}.5`)).toEqual(
      E.left({ code: 'invalid_time', message: '253402300800000.5 milliseconds is outside the years 0000 to 9999' }),
    );
    for (const text of ['1.', '.5', '1e3', '1.5.5']) expect(E.isLeft(parseTimeArgument(text))).toBe(true);
  });

  it('reject anything else', () => {
    expect(E.isLeft(parseEventTime(true))).toBe(true);
    expect(E.isLeft(parseEventTime(null))).toBe(true);
    expect(E.isLeft(parseEventTime(Number.POSITIVE_INFINITY))).toBe(true);
  });

  it('take epoch milliseconds only within the years an ISO-8601 time can say (0000 to 9999)', () => {
    const latest = Date.parse('9999-12-31T23:59:59.999Z');
    const earliest = right(parseIsoTime('0000-01-01T00:00:00Z'));
    expect(right(parseEventTime(latest))).toBe(latest);
    expect(right(parseEventTime(earliest))).toBe(earliest);
    expect(right(parseEventTime(0))).toBe(0);
    expect(parseEventTime(latest + 1)).toEqual(
      E.left({ code: 'invalid_time', message: '253402300800000 milliseconds is outside the years 0000 to 9999' }),
    );
    expect(E.isLeft(parseEventTime(earliest - 1))).toBe(true);
    expect(E.isLeft(parseEventTime(9e15))).toBe(true);
    expect(E.isLeft(parseTimeArgument('9000000000000000'))).toBe(true);
  });

  it('every time parseEventTime reads as ISO-8601 text it reads as epoch milliseconds too: the two forms take the same instants', () => {
    const pad = (value: number, width: number): string => String(value).padStart(width, '0');
    const isoArb = fc
      .record({
        year: fc.constantFrom(0, 1, 1970, 9998, 9999),
        month: fc.constantFrom(1, 12),
        day: fc.constantFrom(1, 31),
        hour: fc.constantFrom(0, 12, 23),
        offset: fc.integer({ min: -18 * 60, max: 18 * 60 }),
      })
      .map(({ year, month, day, hour, offset }) => {
        const zone = `${offset < 0 ? '-' : '+'}${pad(Math.floor(Math.abs(offset) / 60), 2)}:${pad(Math.abs(offset) % 60, 2)}`;
        return `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}T${pad(hour, 2)}:59:59.999${zone}`;
      });
    fc.assert(
      fc.property(isoArb, (text) => {
        const fromText = parseEventTime(text);
        if (E.isRight(fromText)) expect(parseEventTime(fromText.right)).toEqual(fromText);
      }),
    );
    expect(E.isLeft(parseEventTime('9999-12-31T23:59:59-01:00'))).toBe(true);
    expect(E.isLeft(parseEventTime('0000-01-01T00:00:00+01:00'))).toBe(true);
    expect(right(parseEventTime('9999-12-31T23:59:59+01:00'))).toBe(Date.parse('9999-12-31T22:59:59Z'));
  });
});
