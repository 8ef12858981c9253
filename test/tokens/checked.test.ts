/**
 * A token counter's answers, checked: a number of tokens passes as it is, anything else is a
 * TypeError naming `countTokens` that a shell can tell from a bug, and no other exception,
 * however hostile, passes for one.
 */
import { describe, expect, it } from 'vitest';
import { checkedTokenCount, tokenCountFailure } from '../../src/tokens/checked.js';

const thrown = (run: () => unknown): unknown => {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected an exception');
};

describe('checkedTokenCount', () => {
  it('passes a finite number 0 or more, whole or not, as it is', () => {
    for (const count of [0, 1, 12.5, Number.MAX_VALUE]) expect(checkedTokenCount(count)).toBe(count);
  });

  it('refuses any other answer by its kind, quoting no text of it, with a failure a shell reads back', () => {
    const said: ReadonlyArray<readonly [unknown, string]> = [
      [Number.NaN, 'NaN'],
      [-1, '-1'],
      [Number.NEGATIVE_INFINITY, '-Infinity'],
      [Number.POSITIVE_INFINITY, 'Infinity'],
      ['12\n- forged line', 'a string'],
      [undefined, 'undefined'],
      [null, 'null'],
      [12n, 'a bigint'],
      [{ valueOf: () => 3 }, 'an object'],
    ];
    for (const [answer, kind] of said) {
      const message = `countTokens answered ${kind}, not a number of tokens (a finite number 0 or more)`;
      const error = thrown(() => checkedTokenCount(answer));
      expect(error).toBeInstanceOf(TypeError);
      expect((error as TypeError).message).toBe(message);
      expect(tokenCountFailure(error)).toEqual({ code: 'invalid_input', message });
    }
  });

  it('reads no other exception as a refused count, a Proxy whose traps throw or lie included, and never throws', () => {
    const lying = new Proxy(new TypeError('x'), { get: () => ({ code: 'invalid_input', message: 42 }) });
    const throwing = new Proxy(
      {},
      {
        get: () => {
          throw new Error('trap');
        },
      },
    );
    for (const error of [new TypeError('countTokens answered NaN'), 'text', undefined, null, lying, throwing])
      expect(tokenCountFailure(error)).toBeUndefined();
  });
});
