/**
 * What a model's answer can do to a user's list: the final list of an answer counts, not one it
 * quotes (item 3); an echoed template or placeholder is no fact (item 4); a lone surrogate never
 * reaches the blocks (item 7); past the cap the newest facts stay (item 9); a cut answer is a
 * failure of its own, `truncated` (items 10 and 12).
 */
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { anthropicComplete, type MessagesClient, type MessagesRequest } from '../../src/notes/anthropic.js';
import { selectGlobalFacts, selectSessionFacts } from '../../src/notes/ledger.js';
import { NOTES_LIMITS } from '../../src/notes/model.js';
import { parseNotableFactsResponse, parseNotableFactsResponseWithWarnings } from '../../src/notes/parse.js';
import { buildNotableFactsPrompt, buildProfileConsolidationPrompt } from '../../src/notes/prompt.js';
import { createNotableFactsTracker } from '../../src/notes/tracker.js';
import { estimateTokens } from '../../src/tokens/estimate.js';
import { countO200kTokens } from '../../src/tokens/o200k.js';

const list = (...facts: Array<[string, string]>): string =>
  JSON.stringify({ notableFacts: facts.map(([category, fact]) => ({ category, fact })) });

const factsOf = (text: string): ReadonlyArray<string> =>
  E.getOrElseW(() => ['(no list)'])(
    E.map((facts: ReadonlyArray<{ fact: string }>) => facts.map((f) => f.fact))(parseNotableFactsResponse(text)),
  );

/** No lone surrogate: with the `u` flag a well-formed pair is one code point and never matches. */
const isWellFormed = (text: string): boolean => !/[\uD800-\uDFFF]/u.test(text);

/** The last line of a prompt: the shape the model is asked to reply in. */
const templateOf = (prompt: string): string => prompt.split('\n').slice(-2).join('\n');

describe('the list an answer gives (item 3)', () => {
  it('is the last complete list of the documented shape, not a list the answer quotes before it', () => {
    expect(
      factsOf(`The format is {"notableFacts": []}. Here is mine: ${list(['People', 'Partner is Jordan'])}`),
    ).toEqual(['Partner is Jordan']);
    expect(
      factsOf(
        `Previous list: ${list(['Logistics', 'Works three nights'])}\nUpdated list: ${list(['Logistics', 'Works four nights'])}`,
      ),
    ).toEqual(['Works four nights']);
    expect(
      factsOf(
        `\`\`\`json\n${list(['Logistics', 'Works three nights'])}\n\`\`\`\nCorrected:\n\`\`\`json\n${list(['Logistics', 'Works four nights'])}\n\`\`\``,
      ),
    ).toEqual(['Works four nights']);
  });

  it('never applies an empty list found in prose while a non-empty one follows', () => {
    expect(
      factsOf(
        `Nothing new, so {"notableFacts": []} would do, but: [{"category": "People", "fact": "Partner is Jordan"}]`,
      ),
    ).toEqual(['Partner is Jordan']);
  });
});

describe('an echoed template (item 4)', () => {
  it('is no list: the answer that repeats the extraction prompt’s own shape fails and the list stays', async () => {
    const template = templateOf(buildNotableFactsPrompt({ message: 'hi' }));
    expect(template).toContain('"fact": "..."');
    const parsed = parseNotableFactsResponse(template);
    expect(E.isLeft(parsed) && parsed.left.code).toBe('no_valid_facts');
    let calls = 0;
    const tracker = createNotableFactsTracker({
      complete: async () => ((calls += 1) === 1 ? list(['People', 'Partner is Jordan']) : template),
    });
    tracker.recordUserMessage('maya', 's1', 'My partner is Jordan.');
    await tracker.settled();
    tracker.recordUserMessage('maya', 's1', 'Anyway.');
    await tracker.settled();
    expect(selectSessionFacts(tracker.getSnapshot(), 'maya', 's1')).toEqual([
      { category: 'People', fact: 'Partner is Jordan' },
    ]);
  });

  it('drops placeholder facts with a warning: only punctuation or ellipses, or the template’s sample text', () => {
    const parsed = parseNotableFactsResponseWithWarnings(
      JSON.stringify({
        notableFacts: [
          { category: 'People', fact: '...' },
          { category: 'People', fact: '…' },
          { category: 'History', fact: ' - . - ' },
          { category: 'People', fact: 'Partner is Jordan' },
        ],
      }),
    );
    expect(parsed).toEqual(
      E.right({
        facts: [{ category: 'People', fact: 'Partner is Jordan' }],
        warnings: [
          'entry 0 dropped: fact is a placeholder, not a fact',
          'entry 1 dropped: fact is a placeholder, not a fact',
          'entry 2 dropped: fact is a placeholder, not a fact',
        ],
      }),
    );
  });

  it('leaves the profile as it was when the model echoes the rewrite prompt’s shape', async () => {
    let calls = 0;
    const tracker = createNotableFactsTracker({
      complete: async (prompt) => ((calls += 1) === 1 ? list(['People', 'Partner is Jordan']) : templateOf(prompt)),
      consolidateWithModel: true,
    });
    expect(templateOf(buildProfileConsolidationPrompt({ facts: [] }))).toContain('"fact": "..."');
    tracker.recordUserMessage('maya', 's1', 'My partner is Jordan.');
    await tracker.settled();
    await tracker.endStage('maya');
    await tracker.settled();
    expect(selectGlobalFacts(tracker.getSnapshot(), 'maya')?.facts.map((fact) => fact.fact)).toEqual([
      'Partner is Jordan',
    ]);
  });
});

describe('a lone surrogate (item 7)', () => {
  it('is replaced where a fact enters, so the blocks are well-formed Unicode the API accepts', async () => {
    const tracker = createNotableFactsTracker({
      complete: async () =>
        '{"notableFacts": [{"category": "Emotional", "fact": "Feels \\ud83d about it \\udc00 and 🙂"}]}',
    });
    tracker.recordUserMessage('maya', 's1', 'hello');
    await tracker.settled();
    const context = tracker.contextFor('maya', 's1');
    const blocks = E.isRight(context) ? context.right.text : '';
    expect(blocks).toBe('NOTED FACTS FROM THIS SESSION:\n[Emotional]\n- Feels \uFFFD about it \uFFFD and 🙂');
    expect(isWellFormed(blocks)).toBe(true);
  });

  it('quotes no history in a prompt of turns 0, and the last exchanges by default', () => {
    const history = [
      { role: 'user' as const, content: 'the earlier question' },
      { role: 'assistant' as const, content: 'the earlier answer' },
    ];
    expect(buildNotableFactsPrompt({ message: 'now', history, turns: 0 })).not.toContain('the earlier question');
    expect(buildNotableFactsPrompt({ message: 'now', history })).toContain('the earlier question');
  });

  it('is replaced in the text a prompt quotes, and a cut at the fact length never splits a pair', () => {
    const prompt = buildNotableFactsPrompt({
      message: `broken \ud800 message`,
      history: [{ role: 'assistant', content: 'x\udfff' }],
    });
    expect(isWellFormed(prompt)).toBe(true);
    const clipped = factsOf(list(['People', `${'a'.repeat(196)}🙂🙂🙂`]))[0]!;
    expect(isWellFormed(clipped)).toBe(true);
  });
});

describe('the reply shape of a prompt', () => {
  it('names the first category as the list of kinds shows it, on its one line, whatever the name a caller gave holds', () => {
    const name = 'Peo\u2028ple\u0085 \n\ud800 and more words past the forty characters a name may have';
    const extraction = buildNotableFactsPrompt({ message: 'hi', categories: [{ name }] });
    const shown = /^Record facts of these kinds:\n- (.*)$/mu.exec(extraction)?.[1];
    expect(shown).toBe('Peo ple \ufffd and more words past the for...');
    for (const prompt of [extraction, buildProfileConsolidationPrompt({ facts: [], categories: [{ name }] })]) {
      const lines = prompt.split(/\r\n|[\n\r\u0085\u2028\u2029]/u);
      expect(lines.at(-1)).toBe(`{"notableFacts": [{"category": ${JSON.stringify(shown)}, "fact": "..."}]}`);
    }
  });
});

describe('past the cap of 25 (item 9)', () => {
  it('keeps the newest facts: those the answer adds, dropping the oldest kept ones, and says which', async () => {
    const old = Array.from({ length: 25 }, (_, i): [string, string] => ['History', `Old fact ${i + 1}`]);
    const fresh = Array.from({ length: 3 }, (_, i): [string, string] => ['History', `New fact ${i + 1}`]);
    let calls = 0;
    const tracker = createNotableFactsTracker({
      complete: async () => ((calls += 1) === 1 ? list(...old) : list(...old, ...fresh)),
    });
    tracker.recordUserMessage('maya', 's1', 'one');
    await tracker.settled();
    tracker.recordUserMessage('maya', 's1', 'two');
    await tracker.settled();
    const facts = selectSessionFacts(tracker.getSnapshot(), 'maya', 's1').map((fact) => fact.fact);
    expect(facts).toHaveLength(25);
    expect(facts.slice(-3)).toEqual(['New fact 1', 'New fact 2', 'New fact 3']);
    expect(facts).not.toContain('Old fact 1');
    expect(facts[0]).toBe('Old fact 4');
    const event = tracker.events().at(-1);
    expect(event?.type === 'notes/extracted' && event.warnings).toEqual([
      '3 facts over the cap of 25 dropped, the oldest first: "Old fact 1", "Old fact 2", "Old fact 3"',
    ]);
  });
});

describe('a cut answer (items 10 and 12)', () => {
  it('is truncated, not no_fact_list, when the answer ends inside its list', () => {
    const cut = list(['People', 'Partner is Jordan'], ['History', 'Married three years']).slice(0, -30);
    const parsed = parseNotableFactsResponse(`Here you go:\n${cut}`);
    expect(E.isLeft(parsed) && parsed.left.code).toBe('truncated');
    const stale = parseNotableFactsResponse(`Previous: ${list(['People', 'Works three nights'])}\nUpdated: ${cut}`);
    expect(E.isLeft(stale) && stale.left.code).toBe('truncated');
  });

  it('is only JSON cut short: prose after a complete list holding an open { and a "category" keeps the list', async () => {
    const answer = `${list(['People', 'Partner is Jordan'])}\nI grouped them { by "category", as you asked.`;
    expect(factsOf(answer)).toEqual(['Partner is Jordan']);
    expect(factsOf(`${answer}\nEach entry is { "category", "fact" }, as in { "category": People`)).toEqual([
      'Partner is Jordan',
    ]);
    // Prose before a list cut short does not hide the cut.
    const cut = list(['People', 'Partner is Jordan']).slice(0, -10);
    const stale = parseNotableFactsResponse(`${list(['History', 'Old'])}\nScratch { by "category" [ then ${cut}`);
    expect(E.isLeft(stale) && stale.left.code).toBe('truncated');
    const tracker = createNotableFactsTracker({ complete: async () => answer });
    tracker.recordUserMessage('maya', 's1', 'My partner is Jordan.');
    await tracker.settled();
    expect(selectSessionFacts(tracker.getSnapshot(), 'maya', 's1')).toEqual([
      { category: 'People', fact: 'Partner is Jordan' },
    ]);
  });

  it('fits 25 facts of 200 characters in the default answer budget of anthropicComplete', async () => {
    const bodies: MessagesRequest[] = [];
    const client: MessagesClient = {
      messages: {
        create: async (body) => {
          bodies.push(body);
          return { content: [{ type: 'text', text: list() }], stop_reason: 'end_turn' };
        },
      },
    };
    await anthropicComplete(client, { model: 'm' })('prompt', { signal: new AbortController().signal });
    const longest = `Here is the updated list.\n\`\`\`json\n${JSON.stringify(
      {
        notableFacts: Array.from({ length: NOTES_LIMITS.hardCap }, (_, i) => ({
          category: 'Logistics',
          fact: `${i} ${'Jordan works four night shifts a week since the rota changed '.repeat(4)}`.slice(
            0,
            NOTES_LIMITS.factLength,
          ),
        })),
      },
      null,
      2,
    )}\n\`\`\``;
    expect(countO200kTokens(longest)).toBeLessThanOrEqual(bodies[0]!.max_tokens);
    expect(estimateTokens(longest)).toBeLessThanOrEqual(bodies[0]!.max_tokens);
  });

  it('is recorded as its own failure, truncated, when the answer stopped at max_tokens', async () => {
    const client: MessagesClient = {
      messages: {
        create: async () => ({
          content: [{ type: 'text', text: list(['People', 'Partner is Jordan']).slice(0, -10) }],
          stop_reason: 'max_tokens',
        }),
      },
    };
    const tracker = createNotableFactsTracker({ complete: anthropicComplete(client, { model: 'm', maxTokens: 50 }) });
    tracker.recordUserMessage('maya', 's1', 'hello');
    await tracker.settled();
    expect(tracker.events()).toEqual([
      expect.objectContaining({
        type: 'notes/extractionFailed',
        code: 'truncated',
        message: 'the answer stopped at the limit of 50 tokens before it was complete',
      }),
    ]);
  });
});
