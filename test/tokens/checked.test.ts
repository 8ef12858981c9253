/**
 * A token counter's answers, checked: a number of tokens passes as it is, anything else is a
 * TypeError naming `countTokens` that a shell can tell from a bug, and no other exception,
 * however hostile, passes for one.
 */
import { describe, expect, it } from 'vitest';
import { checkedTokenCount, namedTokenCounter, tokenCountFailure } from '../../src/tokens/checked.js';
import { estimateTokens } from '../../src/tokens/estimate.js';

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

describe('namedTokenCounter', () => {
  const throwing = (error: unknown) => () => {
    throw error;
  };

  it("answers the counter's answer, and keeps the library's estimate as it is", () => {
    expect(namedTokenCounter((text) => text.length)('abc')).toBe(3);
    expect(namedTokenCounter(estimateTokens)).toBe(estimateTokens);
    // A value that is no function goes through as it is, for the core to read as the estimate.
    expect(namedTokenCounter('x' as never)).toBe('x');
  });

  it("says an exception the counter threw is the token counter's, whatever was thrown", () => {
    const cause = new RangeError('counter bug');
    const error = thrown(() => namedTokenCounter(throwing(cause))('x'));
    expect((error as Error).message).toBe('the token counter (countTokens) threw: counter bug');
    expect((error as Error).cause).toBe(cause);
    expect(tokenCountFailure(error)).toBeUndefined();
    const trap = new Proxy(
      {},
      {
        get: () => {
          throw new Error('trap');
        },
      },
    );
    expect((thrown(() => namedTokenCounter(throwing(trap))('x')) as Error).message).toMatch(
      /^the token counter \(countTokens\) threw: /u,
    );
  });

  it('lets a refused count through as it is: still invalid_input naming countTokens', () => {
    const refused = thrown(() => checkedTokenCount(Number.NaN));
    expect(thrown(() => namedTokenCounter(throwing(refused))('x'))).toBe(refused);
  });
});
