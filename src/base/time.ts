/**
 * Event times of a dispatch history: an ISO-8601 string or epoch milliseconds. Parsing is
 * strict and independent of the machine's time zone, so a replay gives the same times
 * everywhere: `Date.parse` accepts non-ISO formats, rolls 30 February over into March and
 * reads a date-time without an offset as local time, and none of that may leak into a replay.
 */
import * as E from 'fp-ts/lib/Either.js';
import { refuseArgument } from './describe.js';
import { type Failure, failure } from './failure.js';
import { redactSecrets } from './secrets.js';
import { escapeForLine } from './text.js';

/** Why a value is not a time: one line naming it. */
export type TimeFailure = Failure<'invalid_time'>;

const notTime = (message: string): E.Either<TimeFailure, never> => E.left(failure('invalid_time', message));

/**
 * A text given as a time, quoted for its message: JSON, and on one line whatever it holds
 * (`escapeForLine`), with a secret in it redacted first, as `quoteValue` quotes a value: JSON
 * writes a key block's line breaks and a tab after `Bearer` as escapes, which no shape matches
 * once quoted, so a redaction of the message alone would leave the rest of the key in it.
 */
const quoteTime = (text: string): string => escapeForLine(JSON.stringify(redactSecrets(text)));

const ISO_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?$/u;

/** Epoch milliseconds as digits, with a fraction of a millisecond (dropped, as `parseEventTime` drops a number's). */
const EPOCH_MS_TEXT = /^-?\d+(?:\.\d+)?$/u;

/** The days of `month` (1 to 12) in `year`, 0000 to 9999: `Date.UTC` would read the years 0 to 99 as 1900 to 1999, and 1900 is no leap year. */
const daysInMonth = (year: number, month: number): number => {
  const date = new Date(0);
  date.setUTCFullYear(year, month, 0);
  return date.getUTCDate();
};

/** An offset in minutes east of UTC, or undefined when its minutes are past 59 (`+05:99` would roll over into `+06:39`). */
const offsetMinutes = (zone: string | undefined): number | undefined => {
  if (zone === undefined || zone === 'Z' || zone === 'z') return 0;
  const sign = zone.startsWith('-') ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  const minutes = Number(digits.slice(2) || '0');
  return minutes > 59 ? undefined : sign * (Number(digits.slice(0, 2)) * 60 + minutes);
};

/** The first and last milliseconds an ISO-8601 time of four-digit years can say: 0000-01-01 to 9999-12-31. */
const EARLIEST_TIME = -62_167_219_200_000;
const LATEST_TIME = 253_402_300_799_999;

/** True for a time within the years 0000 to 9999 (UTC): what an ISO-8601 time can say, and so every time a history holds. */
export const isWithinYears = (time: number): boolean => time >= EARLIEST_TIME && time <= LATEST_TIME;

/**
 * `time` with -0 read as 0 (`time + 0`): JSON writes -0 as 0, so a store that kept a -0 a caller
 * computed (`Math.round(-0.4)`, a line's `"at":-0`) would not deep-equal its own round trip.
 */
export const plainTime = (time: number): number => time + 0;

/** `plainTime` of a number; any other value as it is, for the check that follows to refuse. */
export const plainTimeOf = (value: unknown): unknown => (typeof value === 'number' ? plainTime(value) : value);

/** `time` plus `ms`, held at the last millisecond of the year 9999, past which no time is taken. */
export const timeAfter = (time: number, ms: number): number => Math.min(time + ms, LATEST_TIME);

/**
 * Parses an ISO-8601 date or date-time; one without an offset is read as UTC, so the same
 * history gives the same times on every machine. An offset may not carry the instant outside the
 * years 0000 to 9999 (UTC), where epoch milliseconds are refused too.
 */
export const parseIsoTime = (text: string): E.Either<TimeFailure, number> => {
  // Text that is no string (null) is a programmer's mistake, not a time to refuse: said plainly.
  if (typeof text !== 'string') refuseArgument('the time', text, 'a string');
  const match = ISO_TIME.exec(text.trim());
  if (match === null) return notTime(`${quoteTime(text)} is not an ISO-8601 time`);
  // An offset belongs to a time of day: after a date alone, "-05" reads as the hour of a date
  // written another way (2026-03-01-05) and would move the time by hours. A Z there says what
  // the date alone says: midnight UTC.
  if (match[4] === undefined && match[8] !== undefined && !/^[Zz]$/u.test(match[8]))
    return notTime(`${quoteTime(text)} is not an ISO-8601 time: an offset needs a time of day`);
  const [, y, mo, d, h = '0', mi = '0', s = '0', fraction = '', zone] = match;
  const [year, month, day, hour, minute, second] = [y, mo, d, h, mi, s].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const offset = offsetMinutes(zone);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month))
    return notTime(`${quoteTime(text)} has no such date`);
  if (hour > 23 || minute > 59 || second > 59 || offset === undefined || Math.abs(offset) > 18 * 60)
    return notTime(`${quoteTime(text)} has no such time of day`);
  const millis = Number(`${fraction}000`.slice(0, 3));
  const utc = new Date(0);
  // Date.UTC maps years 0..99 to 1900..1999; setUTCFullYear does not.
  utc.setUTCFullYear(year, month - 1, day);
  utc.setUTCHours(hour, minute, second, millis);
  const time = utc.getTime() - offset * 60_000;
  return isWithinYears(time) ? E.right(time) : notTime(`${quoteTime(text)} is outside the years 0000 to 9999 (UTC)`);
};

/**
 * An event's `at`: an ISO-8601 string or a finite number of epoch milliseconds within the years
 * an ISO-8601 string can say (0000 to 9999), so that every time a history holds can be shown as one.
 * A number's fraction of a millisecond is dropped, as an ISO-8601 time's digits past the
 * millisecond are (`1772359200000.6` is `2026-03-01T10:00:00.0006Z`, both 1772359200000): every
 * front door shows a time and takes one to ask about in whole milliseconds, and two results
 * within one millisecond are then asserted at one time whichever form gave it.
 */
export const parseEventTime = (value: unknown): E.Either<TimeFailure, number> => {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return notTime(`${String(value)} is not a finite number of milliseconds`);
    const time = Math.floor(value);
    return isWithinYears(time)
      ? E.right(plainTime(time))
      : notTime(`${String(value)} milliseconds is outside the years 0000 to 9999`);
  }
  if (typeof value === 'string') return parseIsoTime(value);
  return notTime('expected an ISO-8601 string or epoch milliseconds');
};

/**
 * A time given on the command line: epoch milliseconds as digits (a fraction after a point dropped,
 * as the ISO-8601 form drops the digits past the millisecond), or an ISO-8601 string. Digits
 * out of range are quoted as they were typed: past 2^53 the number they read as is rounded
 * (`99999999999999999` reads as 100000000000000000), a value the user never gave.
 */
export const parseTimeArgument = (text: string): E.Either<TimeFailure, number> => {
  const digits = text.trim();
  if (!EPOCH_MS_TEXT.test(digits)) return parseIsoTime(text);
  const time = plainTime(Math.floor(Number(digits)));
  return isWithinYears(time) ? E.right(time) : notTime(`${digits} milliseconds is outside the years 0000 to 9999`);
};
