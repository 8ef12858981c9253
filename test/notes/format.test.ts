import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { replayNotes, type NotesEvent } from '../../src/notes/events.js';
import {
  formatGlobalFacts,
  formatNotableFacts,
  formatNotesBlocks,
  GLOBAL_FACTS_HEADER,
  NOTED_FACTS_HEADER,
} from '../../src/notes/format.js';
import { emptyNotesLedger } from '../../src/notes/ledger.js';
import { normalizeFactText } from '../../src/notes/model.js';
import { CATEGORIES, hostileTextArb, SESSIONS } from './arbitraries.js';

/** Every character sequence that some renderer or model treats as a line break. */
const LINE_BREAK = /\r\n|[\n\r\u000b\u000c\u001c\u001d\u001e\u0085\u2028\u2029]/u;

describe('formatNotableFacts', () => {
  it('renders the header and [Category] groups in the configured order', () => {
    const block = formatNotableFacts([
      { category: 'Emotional', fact: 'Feeling unheard about childcare decisions' },
      { category: 'People', fact: "User's daughter Emma is 14" },
      { category: 'Logistics', fact: 'Partner works night shifts' },
      { category: 'People', fact: 'Partner is named Alex' },
    ]);
    expect(block).toBe(
      [
        'NOTED FACTS FROM THIS SESSION:',
        '[People]',
        "- User's daughter Emma is 14",
        '- Partner is named Alex',
        '[Logistics]',
        '- Partner works night shifts',
        '[Emotional]',
        '- Feeling unheard about childcare decisions',
      ].join('\n'),
    );
  });

  it('renders nothing for an empty list or facts that are empty once normalized: never a bare header', () => {
    expect(formatNotableFacts([])).toBe('');
    expect(
      formatNotableFacts([
        { category: 'People', fact: ' \n ' },
        { category: '[]', fact: 'x' },
      ]),
    ).toBe('');
    expect(formatGlobalFacts(undefined)).toBe('');
    expect(formatGlobalFacts({ facts: [], consolidatedAt: 0, sessionCount: 0 })).toBe('');
  });

  it('follows custom categories, putting unknown ones after them', () => {
    const block = formatNotableFacts(
      [
        { category: 'Hobbies', fact: 'Plays chess' },
        { category: 'money', fact: 'Saving for a house' },
      ],
      ['Money', 'People'],
    );
    expect(block).toBe('NOTED FACTS FROM THIS SESSION:\n[Money]\n- Saving for a house\n[Hobbies]\n- Plays chess');
  });
  it('strips zero-width spaces, direction marks and the Arabic letter mark from facts and categories', () => {
    const invisible = ['\u200B', '\u200E', '\u200F', '\u061C'];
    const block = formatNotableFacts(
      [
        { category: 'Peo\u200Bple', fact: `Partner${invisible.join('')} is Jordan` },
        { category: 'People', fact: `${invisible.join(' ')} Daughter\u200F Emma \u061Cis 14 \u200E` },
      ],
      ['People'],
    );
    expect(block).toBe('NOTED FACTS FROM THIS SESSION:\n[People]\n- Partner is Jordan\n- Daughter Emma is 14');
    for (const mark of invisible) expect(block).not.toContain(mark);
  });
});

describe('formatGlobalFacts', () => {
  it('renders a profile or a plain list under its own header', () => {
    const facts = [{ category: 'History', fact: 'Together for 5 years' }];
    const expected = 'ABOUT THIS USER (from previous sessions):\n[History]\n- Together for 5 years';
    expect(formatGlobalFacts({ facts, consolidatedAt: 1, sessionCount: 1 })).toBe(expected);
    expect(formatGlobalFacts(facts)).toBe(expected);
  });
});

describe('formatNotesBlocks', () => {
  const ledger = replayNotes([
    {
      type: 'notes/extracted',
      user: 'maya',
      session: 's1',
      facts: [{ category: 'History', fact: 'Together for 5 years' }],
      at: 1,
    },
    { type: 'notes/sessionConsolidated', user: 'maya', session: 's1', at: 2 },
    {
      type: 'notes/extracted',
      user: 'maya',
      session: 's2',
      facts: [{ category: 'People', fact: 'Partner is Alex' }],
      at: 3,
    },
    {
      type: 'notes/extracted',
      user: 'alex',
      session: 's2',
      facts: [{ category: 'People', fact: 'Partner is Maya' }],
      at: 4,
    },
  ]);

  it('puts the profile first and the session block after a blank line', () => {
    expect(formatNotesBlocks(ledger, 'maya', 's2')).toEqual({
      profile: 'ABOUT THIS USER (from previous sessions):\n[History]\n- Together for 5 years',
      session: 'NOTED FACTS FROM THIS SESSION:\n[People]\n- Partner is Alex',
      text: 'ABOUT THIS USER (from previous sessions):\n[History]\n- Together for 5 years\n\nNOTED FACTS FROM THIS SESSION:\n[People]\n- Partner is Alex',
    });
    expect(formatNotesBlocks(ledger, 'alex', 's2').text).toBe(
      'NOTED FACTS FROM THIS SESSION:\n[People]\n- Partner is Maya',
    );
    expect(formatNotesBlocks(ledger, 'sam', 's2')).toEqual({ profile: '', session: '', text: '' });
  });

  it('leaves out of the profile block a fact the session block says again, whatever its category', () => {
    const blocks = formatNotesBlocks(
      replayNotes([
        {
          type: 'notes/extracted',
          user: 'maya',
          session: 's1',
          facts: [
            { category: 'Logistics', fact: 'Jordan works night shifts' },
            { category: 'Logistics', fact: 'Jordan works three night shifts a week at the hospital' },
          ],
          at: 1,
        },
        { type: 'notes/sessionConsolidated', user: 'maya', session: 's1', at: 2 },
        {
          type: 'notes/extracted',
          user: 'maya',
          session: 's2',
          facts: [
            { category: 'Conflict', fact: 'Jordan works night shifts.' },
            { category: 'Conflict', fact: 'Jordan works four night shifts a week at the hospital' },
          ],
          at: 3,
        },
      ]),
      'maya',
      's2',
    );
    // The repeat goes, as the merge drops it (same factKey); a correction filed under another category stays: only one category's facts are compared by subject.
    expect(blocks.profile).toBe(
      'ABOUT THIS USER (from previous sessions):\n[Logistics]\n- Jordan works three night shifts a week at the hospital',
    );
    expect(blocks.session).toBe(
      'NOTED FACTS FROM THIS SESSION:\n[Conflict]\n- Jordan works night shifts.\n- Jordan works four night shifts a week at the hospital',
    );
  });

  it('never has an empty header and never a line from another user', () => {
    const mine = (text: string) => `maya: ${text}`;
    const theirs = (text: string) => `alex: ${text}`;
    const factsArb = (tag: (text: string) => string) =>
      fc.array(fc.record({ category: fc.constantFrom(...CATEGORIES), fact: hostileTextArb.map(tag) }), {
        maxLength: 5,
      });
    const eventArb = fc.oneof(
      fc.record({ user: fc.constant('maya'), session: fc.constantFrom(...SESSIONS), facts: factsArb(mine) }),
      fc.record({ user: fc.constant('alex'), session: fc.constantFrom(...SESSIONS), facts: factsArb(theirs) }),
      fc.record({ user: fc.constantFrom('maya', 'alex'), session: fc.constantFrom(...SESSIONS) }),
    );
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 8 }), fc.constantFrom(...SESSIONS), (steps, session) => {
        const events = steps.map((step, at): NotesEvent =>
          'facts' in step
            ? { type: 'notes/extracted', ...step, at }
            : { type: 'notes/sessionConsolidated', ...step, at },
        );
        const ledger = replayNotes(events, emptyNotesLedger());
        const allowed = new Set(
          events.flatMap((event) =>
            event.type === 'notes/extracted' && event.user === 'maya'
              ? event.facts.map((f) => `- ${normalizeFactText(f.fact)}`)
              : [],
          ),
        );
        const { text } = formatNotesBlocks(ledger, 'maya', session);
        if (text === '') return;
        const blocks = text.split('\n\n');
        for (const block of blocks) {
          const lines = block.split(LINE_BREAK);
          expect([NOTED_FACTS_HEADER, GLOBAL_FACTS_HEADER]).toContain(lines[0]);
          // A header with something under it: a bare one is an empty header too.
          expect(lines.length).toBeGreaterThan(1);
          lines.slice(1).forEach((line, i) => {
            if (line.startsWith('[')) {
              expect(line).toMatch(/^\[(People|Logistics|Conflict|Emotional|History)\]$/u);
              expect(lines[i + 2]?.startsWith('- ')).toBe(true);
            } else {
              expect(allowed.has(line)).toBe(true);
            }
          });
        }
      }),
      { numRuns: 100 },
    );
  });
});
