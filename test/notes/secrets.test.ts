/**
 * A model may note a token or a password a user pasted into a conversation: the ledger keeps
 * every fact with its secrets redacted (once its text is collapsed, and before it is clipped),
 * so no block, profile, event or store holds one, and a fact without one is kept as it was.
 */
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { formatNotableFacts } from '../../src/notes/format.js';
import { findSecret } from '../../src/base/secrets.js';
import { normalizeFactText, NOTES_LIMITS } from '../../src/notes/model.js';
import { parseNotableFactsResponse, parseNotableFactsResponseWithWarnings } from '../../src/notes/parse.js';
import { memoryNotesStore } from '../../src/notes/store.js';
import { createNotableFactsTracker } from '../../src/notes/tracker.js';
import { settleExtraction, settleProfileRewrite } from '../../src/notes/port.js';
import { failure } from '../../src/base/failure.js';
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

  it.each(SECRETS)(
    'says where %s was when a fact opens with it, stripping the list markers before it',
    (shape, secret) => {
      const marker = `[redacted: ${shape}]`;
      for (const text of [`${secret} is what the user pasted`, `- [Logistics] ${secret} is what the user pasted`]) {
        const fact = normalizeFactText(text);
        expect(fact).toContain(marker);
        expect(fact).not.toContain(secretPart(secret));
      }
      // A bracket opened before the secret and closed after it is no tag to strip: it would take the marker with it.
      expect(normalizeFactText(`[note ${secret}] is what the user pasted`)).toContain(marker);
      const parsed = parseNotableFactsResponse(answer(`${secret} is what the user pasted`));
      if (E.isLeft(parsed)) throw new Error(parsed.left.message);
      expect(parsed.right.map(({ fact }) => fact.includes(marker))).toEqual([true]);
    },
  );
});

describe('a category a model wrote', () => {
  it.each(SECRETS)('is quoted with %s redacted in the warning that refuses it', async (_, secret) => {
    const text = JSON.stringify({
      notableFacts: [
        { category: secret, fact: 'Keeps the deploy credentials' },
        { category: 'Logistics', fact: 'Deploys on Fridays' },
      ],
    });
    const parsed = parseNotableFactsResponseWithWarnings(text);
    if (E.isLeft(parsed)) throw new Error(parsed.left.message);
    expect(parsed.right.warnings).toHaveLength(1);
    expect(parsed.right.warnings[0]).toMatch(/^entry 0 dropped: category ".*" is not one of /u);
    expect(parsed.right.warnings[0]).not.toContain(secretPart(secret));
    const tracker = createNotableFactsTracker({ complete: async () => text });
    tracker.recordUserMessage('maya', 's1', 'Here is what the deploy needs.');
    await tracker.settled();
    expect(tracker.events().map((event) => event.type)).toEqual(['notes/extracted']);
    expect(JSON.stringify(tracker.events())).not.toContain(secretPart(secret));
    // Clipped to 40 after the redaction: the marker may lose its end, never the secret its start.
    expect(JSON.stringify(tracker.events())).toContain('[redacted: ');
    await tracker.close();
  });
});

/** The code units `collapseWhitespace` turns into a space and the secret shapes' `\s` does not match, `from` to `to`. */
const units = (from: number, to: number): ReadonlyArray<string> =>
  Array.from({ length: to - from + 1 }, (_, index) => String.fromCharCode(from + index));

/** C0 and C1 controls (U+0085, the next line, among them) and the direction embeddings, overrides and isolates. */
const SEPARATORS = [
  ...units(0x00, 0x08),
  ...units(0x0e, 0x1f),
  ...units(0x7f, 0x9f),
  ...units(0x202a, 0x202e),
  ...units(0x2066, 0x2069),
].map((unit) => [`U+${unit.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`, unit] as const);

/** A key's base64 body and a Bearer token, assembled so that no scanner mistakes this file for a leak. */
const KEY_BODY = `MIIEvQIBADANBgkqhkiG9w0B${'AQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj'}`;
const TOKEN = `abcd1234${'efgh5678ijkl'}`;

/** The ends of the key's body and the token: none may stay anywhere, whole or in part. */
const OWN_PARTS = [KEY_BODY.slice(0, 10), KEY_BODY.slice(-10), TOKEN.slice(0, 10), TOKEN.slice(-10)];

const keyFact = (separator: string): string =>
  `Deploy key is -----BEGIN ${'PRIVATE KEY'}-----${separator}${KEY_BODY}${separator}-----END ${'PRIVATE KEY'}-----`;
const bearerFact = (separator: string): string => `Server auth header is Bearer${separator}${TOKEN}`;

/** The parts of the key's body and the token that `text` holds (none, once redacted). */
const secretPartsIn = (text: string): ReadonlyArray<string> => OWN_PARTS.filter((part) => text.includes(part));

describe('a secret split by a control or direction character that collapsing turns into a space', () => {
  it.each(SEPARATORS)(
    'is redacted around %s in the text, the answer, the store, the blocks and the events',
    async (_, separator) => {
      const redacted = [
        'Deploy key is [redacted: a private key block]',
        'Server auth header is [redacted: a Bearer token]',
      ];
      expect([normalizeFactText(keyFact(separator)), normalizeFactText(bearerFact(separator))]).toEqual(redacted);
      const text = answer(keyFact(separator), bearerFact(separator));
      const parsed = parseNotableFactsResponse(text);
      if (E.isLeft(parsed)) throw new Error(parsed.left.message);
      expect(parsed.right.map(({ fact }) => fact)).toEqual(redacted);

      const store = memoryNotesStore();
      const tracker = createNotableFactsTracker({ complete: async () => text, store });
      tracker.recordUserMessage('maya', 's1', 'Here is what the deploy needs.');
      await tracker.settled();
      const context = tracker.contextFor('maya', 's1');
      if (E.isLeft(context)) throw new Error(context.left.message);
      expect(context.right.text).toContain(redacted[0]);
      expect(context.right.text).toContain(redacted[1]);
      const stage = await tracker.endStage('maya', 's1');
      if (E.isLeft(stage)) throw new Error(stage.left.message);
      const records = await store.load('maya', 's1');
      if (E.isLeft(records)) throw new Error(records.left.message);
      expect(records.right.session.value).toBeDefined();
      expect(records.right.profile.value).toBeDefined();
      const seen = {
        blocks: context.right.text,
        'profile block': tracker.contextFor('maya', 's2'),
        'end of stage': stage.right,
        store: records.right,
        ledger: tracker.getSnapshot(),
        events: tracker.events(),
      };
      for (const [where, value] of Object.entries(seen))
        expect(secretPartsIn(typeof value === 'string' ? value : JSON.stringify(value)), where).toEqual([]);
      await tracker.close();
    },
  );
});

describe('an answer that is not valid JSON', () => {
  it.each(SECRETS)(
    'is refused without quoting its text, so %s written where a string belonged reaches no event',
    (_shape, secret) => {
      const parsed = parseNotableFactsResponse(`{"notableFacts": [{"category": "Logistics", "fact": ${secret}}]}`);
      expect(E.isLeft(parsed) && parsed.left.code).toBe('invalid_json');
      expect(JSON.stringify(parsed)).not.toContain(secret.slice(0, 6));
    },
  );
});

describe('a text a clip cuts', () => {
  const generated = 'a1B2c3D4e5'.repeat(30);
  // No shape matches these whole (more characters after the token than a token has, or a word
  // character glued after it), and each clip of them would: it cuts what made them no token.
  const longToken = `The deploy key is ghp_${generated}`;
  const gluedKey = (length: number): string => `sk_live_${generated.slice(0, length)}_prod`;
  const secretIn = (value: unknown): string | undefined =>
    findSecret(typeof value === 'string' ? value : JSON.stringify(value));

  it('makes no secret of a fact, a refused category or a fact dropped past the cap', async () => {
    for (const text of [longToken, gluedKey(40), gluedKey(60)]) expect(findSecret(text)).toBeUndefined();
    const kept = Array.from(
      { length: NOTES_LIMITS.hardCap - 1 },
      (_, index) => `The user moved house in year ${index}`,
    );
    const text = JSON.stringify({
      notableFacts: [
        { category: 'Logistics', fact: `The user pasted ${gluedKey(60)}` },
        { category: gluedKey(40), fact: 'Keeps the deploy credentials' },
        ...kept.map((fact) => ({ category: 'History', fact })),
        { category: 'Logistics', fact: longToken },
      ],
    });
    const tracker = createNotableFactsTracker({ complete: async () => text });
    tracker.recordUserMessage('maya', 's1', 'Here is what the deploy needs.');
    await tracker.settled();
    const context = tracker.contextFor('maya', 's1');
    if (E.isLeft(context)) throw new Error(context.left.message);
    expect(context.right.text).toContain('[redacted: a GitHub token]');
    const events = tracker.events();
    expect(JSON.stringify(events)).toContain('over the cap');
    expect(JSON.stringify(events)).toContain('is not one of');
    for (const [where, value] of Object.entries({ context: context.right.text, events, ledger: tracker.getSnapshot() }))
      expect(secretIn(value), where).toBeUndefined();
    await tracker.close();
  });

  it('makes no secret of the warnings an answer without a usable fact is refused with', () => {
    // The warnings are joined and clipped to 240: for some of these answers the cut falls inside
    // the last category quoted, after more than 20 characters of the key.
    const answers = [0, 1, 2, 3].flatMap((empty) =>
      Array.from({ length: 33 }, (_, pad) =>
        JSON.stringify({
          notableFacts: [
            { category: `Unknown ${'x'.repeat(pad)}`, fact: 'Keeps the deploy credentials' },
            ...Array.from({ length: empty }, () => ({ category: 'Logistics', fact: ' ' })),
            { category: gluedKey(25), fact: 'Keeps the deploy credentials' },
          ],
        }),
      ),
    );
    const messages = answers.map((text) => {
      const parsed = parseNotableFactsResponse(text);
      return E.isLeft(parsed) ? parsed.left.message : '';
    });
    expect(messages.every((message) => /^none of the \d entries is a usable fact/u.test(message))).toBe(true);
    expect(messages.map((message) => findSecret(message))).toEqual(messages.map(() => undefined));
  });
});

describe('a model call that fails', () => {
  // An HTTP client may quote the request it failed on (a key in its URL or header, the prompt
  // holding a token the user pasted): the failure it rejects with is what the event keeps.
  it.each(SECRETS)('is recorded with %s redacted in its message', async (shape, secret) => {
    const complete = async (): Promise<string> => {
      throw new Error(`request failed (401): ${secret} was refused`);
    };
    const tracker = createNotableFactsTracker({ complete, consolidateWithModel: true });
    tracker.recordUserMessage('maya', 's1', 'Here is what the deploy needs.');
    await tracker.settled();
    const failed = tracker.events().filter((event) => event.type === 'notes/extractionFailed');
    expect(failed.map((event) => event.code)).toEqual(['model_error']);
    expect(failed[0]!.message).toContain(`[redacted: ${shape}]`);
    expect(JSON.stringify(tracker.events())).not.toContain(secretPart(secret));
    await tracker.close();
  });

  it('keeps no secret a cut of its message makes', () => {
    // A word character glued after it makes it no key; the clip to 500 cuts that end off.
    const message = `${'request failed '.repeat(30)}sk_live_${'a1B2c3D4e5'.repeat(4)}_prod`;
    expect(message.length).toBeGreaterThan(NOTES_LIMITS.messageLength);
    expect(findSecret(message)).toBeUndefined();
    const failed = E.left(failure('model_error', message));
    const event = settleExtraction({ user: 'maya', session: 's1' }, failed, 0, ['Logistics']);
    const rewrite = settleProfileRewrite('maya', failed, 0, ['Logistics']);
    for (const value of [event, rewrite]) expect(findSecret(JSON.stringify(value))).toBeUndefined();
  });
});
