/**
 * `parseJson`: the one place a refusal of JSON is worded, which a user, a log, a store or a
 * model sees, so it must never carry the text it refused.
 */
import * as E from 'fp-ts/lib/Either.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseJson } from '../../src/base/json.js';
import { SECRETS } from '../fixtures/secrets.js';

describe('parseJson', () => {
  it('reads JSON text as JSON.parse does', () => {
    expect(parseJson('{"a":[1,"x",null]}')).toEqual(E.right({ a: [1, 'x', null] }));
  });

  it('a refusal of text holding a secret where a value belonged never holds the start of the secret', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...SECRETS.map(([, secret]) => secret)),
        fc.constantFrom('', '{"a": ', '[1, 2, ', '{"env": {"TOKEN": ', '{\n  "k":\n    ', `${'1,'.repeat(40)}`),
        fc.constantFrom('', '}', ']', '"}'),
        (secret, before, after) => {
          const parsed = parseJson(`${before}${secret}${after}`);
          expect(E.isLeft(parsed)).toBe(true);
          expect(E.isLeft(parsed) && parsed.left).not.toContain(secret.slice(0, 4));
        },
      ),
    );
  });
});
