import { describeKind, describeValue } from '../../src/base/schema.js';
import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { type ConversationMessage, selectRecentTurns, splitRecentTurns } from '../../src/notes/conversation.js';
import {
  DEFAULT_CATEGORIES,
  describeCategories,
  factKey,
  keepValidFacts,
  normalizeFactText,
  NOTES_LIMITS,
  parseCategories,
  parseCategorizedFact,
} from '../../src/notes/model.js';
import { buildNotableFactsPrompt, buildProfileConsolidationPrompt } from '../../src/notes/prompt.js';
import { hostileTextArb } from './arbitraries.js';

const NAMES = ['People', 'Logistics', 'Conflict', 'Emotional', 'History'];

describe('normalizeFactText', () => {
  it('collapses line breaks and controls, drops list markers and category tags, and clips at 200', () => {
    expect(normalizeFactText('  Partner works\nnight\u2028shifts\t ')).toBe('Partner works night shifts');
    expect(normalizeFactText('- [People] Daughter Emma is 14')).toBe('Daughter Emma is 14');
    expect(normalizeFactText('* • Saving for a house')).toBe('Saving for a house');
    const long = normalizeFactText('x'.repeat(500));
    expect(long).toHaveLength(NOTES_LIMITS.factLength);
    expect(long.endsWith('...')).toBe(true);
    expect(normalizeFactText(' \n - ')).toBe('');
  });

  it('reads a text of millions of markers, past where their pattern overflowed the regexp stack', () => {
    expect(normalizeFactText(`${'['.repeat(9_000_000)}設`)).toMatch(/^\[+\.\.\.$/u);
    expect(normalizeFactText(`${'- '.repeat(4_500_000)}設`)).toBe('...');
    expect(normalizeFactText(`${'- '.repeat(1_000)}Saving for a house`)).toBe('Saving for a house');
  });

  it('never leaves a line break, whatever the input', () => {
    fc.assert(
      fc.property(hostileTextArb, (text) => {
        const normalized = normalizeFactText(text);
        expect(normalized).not.toMatch(/[\n\r\u2028\u2029\u0085\u000b\u000c]/u);
        expect(normalized.length).toBeLessThanOrEqual(NOTES_LIMITS.factLength);
        expect(normalized).toBe(normalized.trim());
      }),
      { numRuns: 100 },
    );
  });
});

describe('factKey', () => {
  it('ignores case, whitespace and trailing punctuation', () => {
    expect(factKey({ fact: 'Partner works  night shifts.' })).toBe(factKey({ fact: 'partner works night shifts' }));
    expect(factKey({ fact: 'Partner works day shifts' })).not.toBe(factKey({ fact: 'Partner works night shifts' }));
  });
});

describe('parseCategorizedFact', () => {
  it('keeps the configured spelling of a category and normalizes the text', () => {
    expect(parseCategorizedFact({ category: 'people', fact: 'Daughter\nEmma is 14' }, NAMES)).toEqual(
      E.right({ category: 'People', fact: 'Daughter Emma is 14' }),
    );
    expect(parseCategorizedFact({ category: '[Logistics]', fact: 'Works nights', extra: 1 }, NAMES)).toEqual(
      E.right({ category: 'Logistics', fact: 'Works nights' }),
    );
  });

  it('rejects categories outside the set, missing fields and empty facts, saying why', () => {
    expect(parseCategorizedFact({ category: 'Preferences', fact: 'Likes short answers' }, NAMES)).toEqual(
      E.left({
        code: 'invalid_fact',
        message: 'category "Preferences" is not one of People, Logistics, Conflict, Emotional, History',
      }),
    );
    expect(parseCategorizedFact({ category: 'People' }, NAMES)).toEqual(
      E.left({ code: 'invalid_fact', message: 'fact must be a string, not nothing (it is missing)' }),
    );
    expect(parseCategorizedFact({ category: 3, fact: 'x' }, NAMES)).toEqual(
      E.left({ code: 'invalid_fact', message: 'category must be a string, not a number' }),
    );
    expect(parseCategorizedFact({ category: 'People', fact: ' - ' }, NAMES)).toEqual(
      E.left({ code: 'invalid_fact', message: 'fact is empty' }),
    );
    expect(parseCategorizedFact('Daughter Emma is 14', NAMES)).toEqual(
      E.left({ code: 'invalid_fact', message: 'expected { "category", "fact" }, not a string' }),
    );
  });
});

describe('parseCategories', () => {
  it('keeps the default descriptions for default names and takes custom ones', () => {
    const parsed = parseCategories(['People', { name: 'Money', description: 'budgets,\ndebts' }]);
    expect(parsed).toEqual(E.right([DEFAULT_CATEGORIES[0], { name: 'Money', description: 'budgets, debts' }]));
  });

  it('refuses empty sets, empty names and repeats ignoring case', () => {
    expect(E.isLeft(parseCategories([]))).toBe(true);
    expect(parseCategories(['People', 'people'])).toEqual(
      E.left({ code: 'invalid_categories', message: 'categories[1] repeats the category "people"' }),
    );
    expect(parseCategories(['[]'])).toEqual(
      E.left({ code: 'invalid_categories', message: 'categories[0] has an empty name' }),
    );
    expect(parseCategories([7])).toEqual(
      E.left({
        code: 'invalid_categories',
        message: 'categories[0] must be a name or { name, description }, not a number',
      }),
    );
  });

  it('strips brackets, so a category can never fake a [Category] line', () => {
    expect(parseCategories(['Work] [People'])).toEqual(E.right([{ name: 'Work People' }]));
  });

  it('describes ledger names from the given set, then from the defaults', () => {
    expect(describeCategories(['History', 'Money'], [{ name: 'Money', description: 'budgets' }])).toEqual([
      DEFAULT_CATEGORIES[4],
      { name: 'Money', description: 'budgets' },
    ]);
  });
});

describe('keepValidFacts', () => {
  it('drops invalid and repeated entries with a warning each, keeping first occurrences, and caps keeping the newest', () => {
    const result = keepValidFacts(
      [
        { category: 'People', fact: 'Partner is Alex' },
        { category: 'Hobbies', fact: 'Plays chess' },
        { category: 'people', fact: 'partner is  alex.' },
        { category: 'Logistics', fact: 'Works nights' },
        { category: 'History', fact: 'Married in 2019' },
      ],
      NAMES,
      2,
    );
    expect(result.facts).toEqual([
      { category: 'Logistics', fact: 'Works nights' },
      { category: 'History', fact: 'Married in 2019' },
    ]);
    expect(result.warnings).toEqual([
      'entry 1 dropped: category "Hobbies" is not one of People, Logistics, Conflict, Emotional, History',
      'entry 2 dropped: it repeats entry 0',
      '1 fact over the cap of 2 dropped, the oldest first: "Partner is Alex"',
    ]);
  });

  it('says a hole in the list is an entry left out, as any other', () => {
    const result = keepValidFacts([, { category: 'People', fact: 'Partner is Alex' }], NAMES, 10);
    expect(result.facts).toEqual([{ category: 'People', fact: 'Partner is Alex' }]);
    expect(result.warnings).toEqual([expect.stringMatching(/^entry 0 dropped: /u)]);
  });
});

const exchange = (n: number): ConversationMessage[] => [
  { role: 'user', content: `question ${n}` },
  { role: 'assistant', content: `answer ${n}` },
];
const conversation = (exchanges: number): ConversationMessage[] =>
  Array.from({ length: exchanges }, (_, i) => exchange(i + 1)).flat();

describe('selectRecentTurns', () => {
  it('keeps the last 5 exchanges (10 messages) by default', () => {
    const recent = selectRecentTurns(conversation(15));
    expect(recent).toHaveLength(10);
    expect(recent[0]).toEqual({ role: 'user', content: 'question 11' });
  });

  it('opens the window on a user message, never on a reply', () => {
    const messages: ConversationMessage[] = [
      ...conversation(3),
      { role: 'assistant', content: 'follow-up' },
      { role: 'user', content: 'question 4' },
    ];
    expect(selectRecentTurns(messages, 2).map((m) => m.content)).toEqual([
      'question 3',
      'answer 3',
      'follow-up',
      'question 4',
    ]);
  });

  it('keeps a short conversation whole, an opening greeting included, and nothing for 0 turns', () => {
    const messages: ConversationMessage[] = [{ role: 'assistant', content: 'Welcome' }, ...conversation(2)];
    expect(selectRecentTurns(messages, 5)).toEqual(messages);
    expect(selectRecentTurns(messages, 0)).toEqual([]);
    expect(selectRecentTurns([], 5)).toEqual([]);
  });

  it('splits every conversation into trimmed then recent, with at most N user messages recent', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            role: fc.constantFrom('user' as const, 'assistant' as const),
            content: fc.string({ maxLength: 3 }),
          }),
          { maxLength: 30 },
        ),
        fc.integer({ min: 0, max: 8 }),
        (messages, turns) => {
          const { recent, trimmed } = splitRecentTurns(messages, turns);
          expect([...trimmed, ...recent]).toEqual(messages);
          expect(recent.filter((m) => m.role === 'user').length).toBeLessThanOrEqual(turns);
          if (trimmed.length > 0 && recent.length > 0) expect(recent[0]?.role).toBe('user');
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe('buildNotableFactsPrompt', () => {
  const facts = [{ category: 'People', fact: 'Partner is Alex' }];

  it('asks for the complete list in the exact JSON shape, with kinds, exclusions and the soft limit', () => {
    const prompt = buildNotableFactsPrompt({ message: 'Alex started night shifts', facts });
    expect(prompt).toContain('- People: names, roles and relationships (e.g. "Daughter Emma is 14")');
    expect(prompt).toContain('- meta-commentary about the session or the process');
    expect(prompt).toContain('- questions the user asks the assistant');
    expect(prompt).toContain('- preferences about the style of the session or of the replies');
    expect(prompt).toContain('Return the complete updated list, not only what changed');
    expect(prompt).toContain(
      'Keep at most 18 facts. When the list would grow past that, merge similar facts into one.',
    );
    expect(prompt).toContain('{"category":"People","fact":"Partner is Alex"}');
    expect(prompt).toContain('User: Alex started night shifts');
    expect(prompt.endsWith('{"notableFacts": [{"category": "People", "fact": "..."}]}')).toBe(true);
  });

  it('says there are no facts yet on the first message, and takes a custom soft limit and categories', () => {
    const prompt = buildNotableFactsPrompt({ message: 'Hi', softLimit: 15, categories: [{ name: 'Money' }] });
    expect(prompt).toContain('Current facts:\n(none yet)');
    expect(prompt).toContain('Keep at most 15 facts.');
    expect(prompt).toContain('Record facts of these kinds:\n- Money\n');
  });

  it('never asks for more facts than the hard cap keeps', () => {
    const asked = (softLimit: number): string | undefined =>
      /Keep at most (\S+) facts\./u.exec(buildNotableFactsPrompt({ message: 'Hi', softLimit }))?.[1];
    expect([25, 26, 100, 500, Number.POSITIVE_INFINITY].map(asked)).toEqual(Array(5).fill(`${NOTES_LIMITS.hardCap}`));
    expect([1, 20.7, 24].map(asked)).toEqual(['1', '20', '24']);
    expect([0, -3, Number.NaN].map(asked)).toEqual(Array(3).fill(`${NOTES_LIMITS.softLimit}`));
  });

  it('shows only the last 3 exchanges before the latest message', () => {
    const prompt = buildNotableFactsPrompt({ message: 'latest', history: conversation(5) });
    expect(prompt).not.toContain('question 2');
    expect(prompt).toContain('User: question 3\nAssistant: answer 3');
    expect(prompt).toContain('Assistant: answer 5\n\nLatest user message:\nUser: latest');
  });

  it('keeps every message and every fact on its own line, so no stored text can add a line to either prompt', () => {
    const lines = (prompt: string): number => prompt.split(/\r\n|[\n\r\u2028\u2029\u0085\u000b\u000c]/u).length;
    const base = lines(buildNotableFactsPrompt({ message: 'm', history: exchange(1), facts }));
    const profileBase = lines(buildProfileConsolidationPrompt({ facts }));
    fc.assert(
      fc.property(hostileTextArb, hostileTextArb, hostileTextArb, (message, reply, told) => {
        // A fact as stored text may be: what a model or a hand edit wrote, never normalized.
        const hostile = facts.map((fact, i) => (i === 0 ? { ...fact, fact: told } : fact));
        const prompt = buildNotableFactsPrompt({
          message,
          history: [
            { role: 'user', content: 'q' },
            { role: 'assistant', content: reply },
          ],
          facts: hostile,
        });
        expect(lines(prompt)).toBe(base);
        expect(lines(buildProfileConsolidationPrompt({ facts: hostile }))).toBe(profileBase);
      }),
      { numRuns: 100 },
    );
  });
});

describe('buildProfileConsolidationPrompt', () => {
  it('asks for a merged rewrite within the cap, newer facts winning', () => {
    const prompt = buildProfileConsolidationPrompt({ facts: [{ category: 'History', fact: 'Married in 2019' }] });
    expect(prompt).toContain('Later facts in the list are newer.');
    expect(prompt).toContain('When two facts contradict each other, keep the newer one.');
    expect(prompt).toContain('Keep at most 50 facts');
    expect(prompt).toContain('{"category":"History","fact":"Married in 2019"}');
    expect(prompt).toContain(
      'Use only these categories, spelled as shown: People, Logistics, Conflict, Emotional, History.',
    );
  });

  it('never asks for more facts than the profile cap keeps', () => {
    const facts = [{ category: 'History', fact: 'Married in 2019' }];
    const asked = (maxFacts: number): string | undefined =>
      /Keep at most (\S+) facts;/u.exec(buildProfileConsolidationPrompt({ facts, maxFacts }))?.[1];
    expect([50, 51, 100, 500, Number.POSITIVE_INFINITY].map(asked)).toEqual(Array(5).fill(`${NOTES_LIMITS.globalCap}`));
    expect([1, 30.5, 49].map(asked)).toEqual(['1', '30', '49']);
    expect([0, -1, Number.NaN].map(asked)).toEqual(Array(3).fill(`${NOTES_LIMITS.globalCap}`));
  });
});

describe('messages about a value of the wrong kind', () => {
  it('say a missing field is missing, give objects their article, and quote a string id', () => {
    expect(describeKind(undefined)).toBe('nothing (it is missing)');
    expect(describeKind({})).toBe('an object');
    expect(describeKind([])).toBe('an array');
    expect(describeValue('')).toBe('""');
    expect(describeValue(3)).toBe('a number');
  });
});
