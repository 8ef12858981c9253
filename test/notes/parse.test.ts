import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { NOTES_LIMITS } from '../../src/notes/model.js';
import { parseNotableFactsResponse, parseNotableFactsResponseWithWarnings } from '../../src/notes/parse.js';
import { factListArb, hostileTextArb } from './arbitraries.js';

const list = [
  { category: 'People', fact: 'Partner is Alex' },
  { category: 'Logistics', fact: 'Alex works night shifts' },
];

const factsOf = (text: string, options = {}) => {
  const result = parseNotableFactsResponseWithWarnings(text, options);
  if (E.isLeft(result)) throw new Error(`expected a list, got ${result.left.code}: ${result.left.message}`);
  return result.right;
};

const codeOf = (text: string): string | undefined => {
  const result = parseNotableFactsResponse(text);
  return E.isLeft(result) ? result.left.code : undefined;
};

describe('parseNotableFactsResponse', () => {
  it('reads the documented object, a bare array, the facts key, a code fence and JSON inside prose', () => {
    const json = JSON.stringify({ notableFacts: list });
    expect(factsOf(json).facts).toEqual(list);
    expect(factsOf(JSON.stringify(list)).facts).toEqual(list);
    expect(factsOf(JSON.stringify({ facts: list })).facts).toEqual(list);
    expect(
      factsOf(
        `Here is the updated list:\n\`\`\`json\n${JSON.stringify({ notableFacts: list }, null, 2)}\n\`\`\`\nDone.`,
      ).facts,
    ).toEqual(list);
    expect(factsOf(`Sure [updated]: ${json} (the rest still holds)`).facts).toEqual(list);
    expect(
      factsOf(JSON.stringify({ memoryIntent: { remember: false }, topicContext: 'a {brace}', notableFacts: list }))
        .facts,
    ).toEqual(list);
  });

  it('accepts an empty list: nothing notable yet', () => {
    expect(factsOf('{"notableFacts": []}')).toEqual({ facts: [], warnings: [] });
  });

  it('drops invalid entries with a warning instead of failing the whole list', () => {
    const result = factsOf(
      JSON.stringify({
        notableFacts: [
          list[0],
          { category: 'Preferences', fact: 'Likes short replies' },
          'Alex is 40',
          { category: 'Logistics', fact: '' },
          list[1],
        ],
      }),
    );
    expect(result.facts).toEqual(list);
    expect(result.warnings).toEqual([
      'entry 1 dropped: category "Preferences" is not one of People, Logistics, Conflict, Emotional, History',
      'entry 2 dropped: expected { "category", "fact" }, not a string',
      'entry 3 dropped: fact is empty',
    ]);
  });

  it('de-duplicates ignoring case and whitespace, keeping the first wording', () => {
    const result = factsOf(JSON.stringify([list[0], { category: 'people', fact: '  partner IS   alex ' }]));
    expect(result.facts).toEqual([list[0]]);
    expect(result.warnings).toEqual(['entry 1 dropped: it repeats entry 0']);
  });

  it('enforces the hard cap of 25, keeping the newest (the last listed) and naming what it drops', () => {
    const many = Array.from({ length: 30 }, (_, i) => ({ category: 'History', fact: `Event number ${i}` }));
    const result = factsOf(JSON.stringify(many));
    expect(result.facts).toHaveLength(NOTES_LIMITS.hardCap);
    expect(result.facts[0]?.fact).toBe('Event number 5');
    expect(result.facts[24]?.fact).toBe('Event number 29');
    expect(result.warnings).toEqual([
      '5 facts over the cap of 25 dropped, the oldest first: "Event number 0", "Event number 1", "Event number 2", "Event number 3", "Event number 4"',
    ]);
  });

  it('takes the ledger categories and a cap as options', () => {
    const result = factsOf(JSON.stringify([{ category: 'money', fact: 'Saving for a house' }, list[0]]), {
      categories: ['Money'],
      maxFacts: 5,
    });
    expect(result.facts).toEqual([{ category: 'Money', fact: 'Saving for a house' }]);
  });

  it('reads with the defaults when the options are null, as a JavaScript caller may pass them', () => {
    const answer = JSON.stringify({ notableFacts: [list[0]] });
    expect(parseNotableFactsResponse(answer, null as never)).toEqual(E.right([list[0]]));
    expect(parseNotableFactsResponseWithWarnings(answer, null as never)).toEqual(
      E.right({ facts: [list[0]], warnings: [] }),
    );
  });

  it('fails precisely when there is no usable list', () => {
    expect(codeOf('   ')).toBe('empty_response');
    expect(codeOf('\u200b \u2060\u{E0020}')).toBe('empty_response');
    expect(codeOf('I could not find any facts.')).toBe('no_json');
    expect(codeOf('{"notableFacts": [{"category": "People", "fact": "Partner is')).toBe('truncated');
    expect(codeOf('{"notableFacts": [{"category": "People" "fact": "Partner is Jordan"}]}')).toBe('invalid_json');
    expect(codeOf('{"summary": "nothing"}')).toBe('no_fact_list');
    expect(codeOf('{"notableFacts": null}')).toBe('no_fact_list');
    expect(codeOf('[{"category": "Hobbies", "fact": "Chess"}]')).toBe('no_valid_facts');
    expect(parseNotableFactsResponse('{"notableFacts": [1, 2]}')).toEqual(
      E.left({
        code: 'no_valid_facts',
        message:
          'none of the 2 entries is a usable fact (entry 0 dropped: expected { "category", "fact" }, not a number; entry 1 dropped: expected { "category", "fact" }, not a number)',
      }),
    );
  });

  it('prefers the answer object over any bracket in prose: a stray [] or [1] never wipes or hides the list', () => {
    const full = JSON.stringify({ notableFacts: list });
    expect(factsOf(`No changes []. Full list:\n${full}`).facts).toEqual(list);
    expect(factsOf(`Based on message [1]:\n${full}`).facts).toEqual(list);
    expect(factsOf(`Based on message [1]:\n${JSON.stringify(list)}`).facts).toEqual(list);
    expect(factsOf(`Old: [1, 2]. New: ${JSON.stringify({ facts: list })}`).facts).toEqual(list);
    expect(factsOf(`\`\`\`json\n${JSON.stringify(list)}\n\`\`\`\nSee ${full}`).facts).toEqual(list);
    // An empty array in prose is not an answer; an empty documented object or a whole [] is.
    expect(codeOf('No changes []. Nothing to add.')).toBe('no_fact_list');
    expect(factsOf('Nothing new: {"notableFacts": []}').facts).toEqual([]);
    expect(factsOf('[]').facts).toEqual([]);
  });

  it('refuses an answer over the documented limit as too_large before reading it', () => {
    const huge = [
      '['.repeat(5_000_000),
      '{"a":'.repeat(1_000_000),
      `${JSON.stringify({ notableFacts: list })}${' '.repeat(NOTES_LIMITS.responseLength)}`,
    ];
    for (const text of huge) expect(codeOf(text)).toBe('too_large');
    expect(parseNotableFactsResponse('x'.repeat(NOTES_LIMITS.responseLength + 1))).toEqual(
      E.left({
        code: 'too_large',
        message: 'the response holds 100001 characters, more than the 100000 an answer may have',
      }),
    );
    expect(codeOf(`${JSON.stringify({ notableFacts: list })}${' '.repeat(1000)}`)).toBeUndefined();
  });

  it('reads answers at the limit made only of openings, nesting or quotes, giving precise errors', () => {
    const size = NOTES_LIMITS.responseLength;
    expect(codeOf('['.repeat(size))).toBe('invalid_json');
    expect(codeOf('{"a":'.repeat(size / 5))).toBe('invalid_json');
    expect(codeOf('"['.repeat(size / 2))).toBe('no_json');
    const deep = parseNotableFactsResponse(`${'['.repeat(size / 2 - 10)}1${']'.repeat(size / 2 - 10)}`);
    expect(deep).toEqual(
      E.left({
        code: 'invalid_json',
        message: 'the JSON in the response does not parse: it nests deeper than 32 levels',
      }),
    );
    expect(factsOf(`${'[ "'.repeat(size / 4)} ${JSON.stringify({ notableFacts: list })}`).facts).toEqual(list);
  });

  it('refuses an answer nested too deep as a whole, never reading a list out of its nested parts', () => {
    const nested = (depth: number, inner: string): string => `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`;
    const tooDeep = E.left({
      code: 'invalid_json',
      message: 'the JSON in the response does not parse: it nests deeper than 32 levels',
    });
    const stray = JSON.stringify({ category: 'People', fact: 'Stray fact' });
    const entry = JSON.stringify({ ...list[1], sources: 'MARK' }).replace('"MARK"', nested(40, stray));
    const answer = `{"notableFacts":[${JSON.stringify(list[0])},${entry}]}`;
    expect(parseNotableFactsResponse(answer)).toEqual(tooDeep);
    expect(parseNotableFactsResponse(`\`\`\`json\n${answer}\n\`\`\``)).toEqual(tooDeep);
    expect(parseNotableFactsResponse(nested(40, '1'))).toEqual(tooDeep);
    // Brackets nested too deep in prose hide nothing that follows them.
    expect(factsOf(`Scratch ${nested(40, '1')} then ${JSON.stringify({ notableFacts: list })}`).facts).toEqual(list);
  });

  it('refuses an answer that gives a key twice in one object as a whole, never keeping one of the two or reading a list out of them', () => {
    const twice = (key: string) =>
      E.left({
        code: 'invalid_json',
        message: `the JSON in the response does not parse: it gives the key "${key}" twice in one object`,
      });
    // JSON.parse keeps the last: the empty list would clear every fact, and the first list read
    // alone from prose would pass for the answer.
    const answer = `{"notableFacts":${JSON.stringify(list)},"notableFacts":[]}`;
    expect(parseNotableFactsResponse(answer)).toEqual(twice('notableFacts'));
    expect(parseNotableFactsResponse(`Here it is:\n\`\`\`json\n${answer}\n\`\`\``)).toEqual(twice('notableFacts'));
    expect(parseNotableFactsResponse(`{"notableFacts":[{"category":"People","fact":"a","fact":"b"}]}`)).toEqual(
      twice('fact'),
    );
    // A key in untrusted text stays on the line of the message.
    expect(parseNotableFactsResponse('{"a\\nb":1,"a\\nb":2}')).toEqual(twice('a\\nb'));
    // The same key in two objects is no repeat.
    expect(factsOf(JSON.stringify({ notableFacts: list })).facts).toEqual(list);
  });

  it('reads a list the same whatever prose surrounds it: an opening in prose never reads as a list cut short', () => {
    // Prose of braces, brackets, quotes and the list's own keys, but whose every opening is
    // followed by a word, so none of it begins JSON.
    const proseArb = fc
      .array(fc.constantFrom('{ by', '[ each', '}', ']', '"', '"category"', '"notableFacts"', ':', ',', 'as', '\n'), {
        maxLength: 12,
      })
      .map((words) => words.join(' '));
    fc.assert(
      fc.property(factListArb, proseArb, proseArb, (facts, before, after) => {
        const answer = JSON.stringify({ notableFacts: facts });
        expect(parseNotableFactsResponseWithWarnings(`${before}\n${answer}\n${after}`)).toEqual(
          parseNotableFactsResponseWithWarnings(answer),
        );
      }),
      { numRuns: 200 },
    );
  });

  it('finds a list cut short wherever it was cut inside its list, after any list and prose', () => {
    const proseArb = fc
      .array(fc.constantFrom('{ by', '[ each', '}', ']', '"category"', ':', ',', 'as'), { maxLength: 8 })
      .map((words) => words.join(' '));
    // Fact text with escapes (a quote, a control as \u0001), so that cuts fall inside them too.
    const answerArb = fc
      .tuple(factListArb, fc.boolean())
      .map(([facts, pretty]) =>
        JSON.stringify(
          { notableFacts: facts.map((fact) => ({ ...fact, fact: `${fact.fact} "\u0001` })) },
          null,
          pretty ? 2 : 0,
        ),
      );
    fc.assert(
      fc.property(
        fc.option(answerArb),
        proseArb,
        answerArb,
        fc.double({ min: 0, max: 1, noNaN: true }),
        (previous, prose, answer, where) => {
          // From the end of the key to the list's closing bracket (excluded: the list whole is read).
          const from = answer.indexOf('"notableFacts"') + '"notableFacts"'.length;
          const cut = answer.slice(0, from + Math.floor(where * (answer.lastIndexOf(']') - from)));
          const result = parseNotableFactsResponse(`${previous ?? ''}\n${prose}\n${cut}`);
          expect(E.isLeft(result) && result.left.code).toBe('truncated');
        },
      ),
      { numRuns: 200 },
    );
  });

  it('never throws, and every fact it returns is in a known category, on one line, within the limits', () => {
    const answer = fc.oneof(
      fc.string({ maxLength: 60 }),
      factListArb.map((facts) => JSON.stringify({ notableFacts: facts })),
      fc
        .array(fc.record({ category: fc.constantFrom('People', 'Other'), fact: hostileTextArb }))
        .map((facts) => `ok ${JSON.stringify(facts)}`),
    );
    fc.assert(
      fc.property(answer, (text) => {
        const result = parseNotableFactsResponseWithWarnings(text);
        if (E.isLeft(result)) return;
        expect(parseNotableFactsResponse(text)).toEqual(E.right(result.right.facts));
        expect(result.right.facts.length).toBeLessThanOrEqual(NOTES_LIMITS.hardCap);
        for (const fact of result.right.facts) {
          expect(['People', 'Logistics', 'Conflict', 'Emotional', 'History']).toContain(fact.category);
          expect(fact.fact).not.toMatch(/[\n\r\u2028\u2029\u0085]/u);
          expect(fact.fact.length).toBeGreaterThan(0);
          expect(fact.fact.length).toBeLessThanOrEqual(NOTES_LIMITS.factLength);
        }
      }),
      { numRuns: 100 },
    );
  });
});
