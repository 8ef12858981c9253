/**
 * A model may note a token or a password a user pasted into a conversation: the ledger keeps
 * every fact with its secrets redacted (before it is clipped), so no block, profile or store
 * holds one, and a fact without one is kept as it was.
 */
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { formatNotableFacts } from '../../src/notes/format.js';
import { normalizeFactText } from '../../src/notes/model.js';
import { parseNotableFactsResponse } from '../../src/notes/parse.js';
import { HARMLESS, SECRETS, secretPart } from '../fixtures/secrets.js';

const answer = (...facts: ReadonlyArray<string>): string =>
  JSON.stringify({ notableFacts: facts.map((fact) => ({ category: 'Logistics', fact })) });

describe('the notes ledger', () => {
  it.each(SECRETS)('keeps %s out of the facts of an answer and of their block', (shape, secret) => {
    // Past the 200 characters a fact keeps: clipped first, a part of the secret would stay.
    const long = `${'The user shares the family budget spreadsheet every month and asked to keep it. '.repeat(3).slice(0, 190)} ${secret}`;
    const parsed = parseNotableFactsResponse(answer(`The user's home server login is ${secret}`, long));
    if (E.isLeft(parsed)) throw new Error(parsed.left.message);
    const block = formatNotableFacts(parsed.right);
    const own = secretPart(secret);
    expect(parsed.right.map(({ fact }) => fact.includes(own))).toEqual([false, false]);
    expect(block).not.toContain(own);
    expect(parsed.right[0]!.fact).toContain(`[redacted: ${shape}]`);
  });

  it('keeps a fact without a secret as it was, prose about tokens and keys included', () => {
    for (const text of HARMLESS) expect(normalizeFactText(text)).toBe(text);
  });
});
