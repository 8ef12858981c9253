import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as E from 'fp-ts/lib/Either.js';
import { hasWantedTag, shareTags } from '../../src/core/fact.js';
import { clipEnd, clipStart, collapseWhitespace } from '../../src/base/text.js';
import {
  addFacts,
  createExtractor,
  createFactId,
  emptyFactStore,
  FACT_LIMITS,
  FACT_TAGS,
  type FactTag,
  makeFact,
  parseNewFact,
  retrieveFacts,
  selectValidCount,
  type SessionFact,
} from '../../src/index.js';

const reference = (s: string, r: string, o: string): string =>
  createHash('sha256').update(`${s}\u001f${r}\u001f${o}`, 'utf8').digest('hex').slice(0, 16);

describe('createFactId', () => {
  it('is the first 16 hex characters of SHA-256 over subject, relation and object joined by U+001F', () => {
    expect(createFactId('src/a.ts', 'modified_by', 'task:1')).toBe(reference('src/a.ts', 'modified_by', 'task:1'));
    expect(createFactId('', '', '')).toBe(reference('', '', ''));
    expect(createFactId('ünïcödé 🚀', 'r', 'x'.repeat(2000))).toBe(reference('ünïcödé 🚀', 'r', 'x'.repeat(2000)));
  });

  it('agrees with a reference SHA-256 for any strings', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.string(), fc.string({ maxLength: 600 }), (s, r, o) => {
        expect(createFactId(s, r, o)).toBe(reference(s, r, o));
      }),
    );
  });
});

describe('hashing', () => {
  it('the portable SHA-256 gives the same hex prefix as the native one, for any text and length', async () => {
    const { portableSha256HexPrefix, sha256HexPrefix } = await import('../../src/base/hash.js');
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 400 }), fc.constantFrom(1, 4, 8, 16, 32), (text, bytes) => {
        expect(sha256HexPrefix(text, bytes)).toHaveLength(bytes * 2);
        expect(portableSha256HexPrefix(text, bytes)).toBe(sha256HexPrefix(text, bytes));
      }),
    );
  });
});

describe('shareTags', () => {
  it('gives one frozen list for each list of tags, repeats dropped and order kept, whatever array it is given', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...FACT_TAGS), { minLength: 1, maxLength: 3 }), (tags) => {
        const shared = shareTags(tags);
        expect(shared).toEqual([...new Set(tags)]);
        expect(Object.isFrozen(shared)).toBe(true);
        expect(shareTags([...tags])).toBe(shared);
      }),
    );
  });
});

describe('hasWantedTag', () => {
  it("is true exactly when one of the fact's tags, frozen or not, is among the wanted ones", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...FACT_TAGS), { maxLength: 3 }),
        fc.array(fc.constantFrom<string>(...FACT_TAGS, 'nope'), { maxLength: 4 }),
        fc.boolean(),
        (tags, wanted, frozen) => {
          const fact = { tags: frozen ? Object.freeze([...tags]) : [...tags] } as unknown as SessionFact;
          const set = new Set(wanted);
          expect(hasWantedTag(fact, set)).toBe(tags.some((tag) => set.has(tag)));
        },
      ),
    );
  });
});

describe('one check of a fact', () => {
  /** Field text as rules propose it: blank, short, long, with line breaks. */
  const textArb = fc.oneof(
    fc.constantFrom('', '   ', 'a\nb'),
    fc.string({ maxLength: 30 }),
    fc.string({ minLength: 190, maxLength: 260 }),
  );
  const tagsArb = fc.oneof(
    fc.array(fc.constantFrom(...FACT_TAGS), { maxLength: 4 }),
    fc.array(fc.constantFrom<string>('file_change', 'nope'), { minLength: 1, maxLength: 2 }),
  );

  it('every fact the extractor makes is one parseNewFact takes as it is, and a draft it refuses is refused for the reason parseNewFact gives', () => {
    fc.assert(
      fc.property(textArb, textArb, textArb, tagsArb, (subject, relation, object, tags) => {
        const draft = { subject, relation, object, tags: tags as FactTag[] };
        const extractor = createExtractor({
          implementerRules: [{ name: 'draft', extract: () => [draft] }],
          reviewerRules: [],
        });
        const { facts, warnings } = extractor.extractFromImplementer({ status: 'completed' } as never, '7', 1_000);
        if (facts.length === 1) {
          expect(parseNewFact(facts[0])).toEqual(E.right(facts[0]));
          return;
        }
        const reason = warnings.find((warning) => warning.startsWith('rule draft proposed a malformed fact: '));
        expect(reason).toBeDefined();
        // The same fields, as the extractor normalized them, refused by the store's own check.
        const fields = {
          subject: clipStart(collapseWhitespace(subject), FACT_LIMITS.subject),
          relation: clipEnd(collapseWhitespace(relation), FACT_LIMITS.relation),
          object: clipEnd(collapseWhitespace(object), FACT_LIMITS.object),
        };
        const normalized = {
          id: createFactId(fields.subject, fields.relation, fields.object),
          ...fields,
          tags,
          validFrom: 1_000,
          sourceTaskId: '7',
          sourceRole: 'implementer',
          confidence: 1,
        };
        const checked = parseNewFact(normalized);
        expect(
          E.isLeft(checked) && checked.left.code === 'invalid_fact' && reason!.endsWith(checked.left.message),
        ).toBe(true);
      }),
    );
  });
});

describe('text that shows nothing', () => {
  /** Characters that render as nothing: invisible format characters, and whitespace and controls. */
  const INVISIBLE = [
    '\u200B',
    '\u200C',
    '\u200D',
    '\u2060',
    '\uFEFF',
    '\u00AD',
    '\u200E',
    '\u061C',
    '\u180E',
    '\u{E0041}',
    '\u3164',
    '\u1160',
    '\uFFA0',
    '\uFE0F',
    '\u034F',
  ];
  const invisibleArb = fc
    .array(fc.constantFrom(...INVISIBLE, ' ', '\t', '\n', '\u0007'), { minLength: 1, maxLength: 8 })
    .map((chars) => chars.join(''))
    .filter((text) => text.trim() !== '');
  const fields = { subject: 'src/a.ts', relation: 'modified_by', object: 'task:1' } as const;
  const factWith = (field: keyof typeof fields, text: string) =>
    makeFact({
      ...fields,
      [field]: text,
      tags: ['file_change'],
      validFrom: 1,
      sourceTaskId: '1',
      sourceRole: 'implementer',
      confidence: 1,
    });

  it('a subject, relation or object of invisible characters only (U+200B, U+2060, U+FEFF, ...) is refused as blank text is, and never stored', () => {
    fc.assert(
      fc.property(invisibleArb, fc.constantFrom('subject', 'relation', 'object' as const), (text, field) => {
        expect(parseNewFact(factWith(field, text))).toEqual(
          E.left({ code: 'invalid_fact', message: `${field} is missing or empty` }),
        );
        expect(parseNewFact(factWith(field, text))).toEqual(parseNewFact(factWith(field, '   ')));
        expect(selectValidCount(addFacts(emptyFactStore(), [factWith(field, text)]))).toBe(0);
      }),
    );
  });

  it("stores a task id with its whitespace collapsed, as a query takes it, so the query's own task leaves its facts out", () => {
    const fact = makeFact({
      ...fields,
      tags: ['file_change'],
      validFrom: 1,
      sourceTaskId: ' 3\t ',
      sourceRole: 'implementer',
      confidence: 1,
    });
    expect(E.map((parsed: SessionFact) => parsed.sourceTaskId)(parseNewFact(fact))).toEqual(E.right('3'));
    const store = addFacts(emptyFactStore(), [fact]);
    const query = { taskDescription: `${fields.subject} ${fields.object}`, maxFacts: 10, maxTokens: 500 };
    expect(retrieveFacts(store, { ...query, taskId: 'other' })).toHaveLength(1);
    expect(retrieveFacts(store, { ...query, taskId: ' 3\t ' })).toEqual([]);
  });

  it('text with one visible character among invisible ones is text', () => {
    fc.assert(
      fc.property(
        invisibleArb,
        invisibleArb,
        fc.constantFrom('a', '7', '\u{1F680}', '\u00E9'),
        (before, after, visible) => {
          const fact = factWith('subject', `${before}${visible}${after}`);
          expect(parseNewFact(fact)).toEqual(E.right(fact));
        },
      ),
    );
  });
});
