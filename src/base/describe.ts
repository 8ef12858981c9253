/**
 * Text for values that arrive from code we do not control: a model call may reject with
 * anything (`Object.create(null)`, a Proxy, an object whose `toString` or `message` throws).
 * Describing such a value must never throw in turn: inside a rejection handler that would
 * become an unhandled rejection and bring the host process down.
 */
import { clipEnd } from './text.js';

/** The longest description kept: an error message ends up in an event, which must stay small. */
const MAX_LENGTH = 500;

const attempt = <T>(read: () => T): T | undefined => {
  try {
    return read();
  } catch {
    return undefined;
  }
};

/** `String(value)`, or a description of its type when it has no text form; clipped to 500 characters. Never throws. */
export const describeValue = (value: unknown): string => {
  const text = attempt(() => String(value));
  return clipEnd(typeof text === 'string' ? text : `an ${typeof value} with no text form`, MAX_LENGTH);
};

/** The kind of a value that is not the one expected, for a TypeError: `null`, `an array`, `an object`, `a number`. */
export const kindOf = (value: unknown): string =>
  value === null
    ? 'null'
    : Array.isArray(value)
      ? 'an array'
      : value === undefined
        ? 'undefined'
        : typeof value === 'object'
          ? 'an object'
          : `a ${typeof value}`;

/**
 * Throws the TypeError of an argument that is not of its kind, naming it and saying what it is
 * (`the ledger is null, not a notes ledger`): a programmer's mistake, said plainly rather than
 * as a failure deep inside ("Cannot read properties of null").
 */
export function refuseArgument(name: string, value: unknown, what: string): never {
  throw new TypeError(`${name} is ${kindOf(value)}, not ${what}`);
}

/**
 * Refuses the arguments of a log line's parser that are not of their kind (the line's text, its
 * number, the time of the event before it): a line that is no text is a programmer's mistake,
 * said plainly.
 */
export const refuseLineArguments = (text: unknown, line: unknown, previousAt: unknown): void => {
  if (typeof text !== 'string') refuseArgument('the line', text, 'a string');
  if (typeof line !== 'number') refuseArgument('the line number', line, 'a number');
  if (previousAt !== undefined && typeof previousAt !== 'number')
    refuseArgument('previousAt', previousAt, 'a number (or undefined)');
};

/** An error's message (any other value: `describeValue`), clipped to 500 characters. Never throws. */
export const describeError = (error: unknown): string => {
  const message = attempt(() => (error instanceof Error ? error.message : undefined));
  return typeof message === 'string' ? clipEnd(message, MAX_LENGTH) : describeValue(error);
};

/** True when `value` is a promise, or anything with a `then` method (what a caller's code may answer with). */
export const isPromiseLike = (value: unknown): value is PromiseLike<unknown> =>
  typeof value === 'object' && value !== null && typeof (value as PromiseLike<unknown>).then === 'function';
