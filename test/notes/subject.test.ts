/**
 * The rule that lets a newer fact replace an older one about the same thing, measured on 60
 * hand-labelled pairs of profile facts (test/notes/fixtures/supersede-pairs.json): the figures
 * docs/notes.md gives for the default are these.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { relateSubjects, SAME_SUBJECT, subjectTerms } from '../../src/notes/subject.js';

type Pair = readonly [category: string, older: string, newer: string, label: 'replaces' | 'keeps'];

const { pairs } = JSON.parse(readFileSync(new URL('./fixtures/supersede-pairs.json', import.meta.url), 'utf8')) as {
  pairs: ReadonlyArray<Pair>;
};

const relation = ([category, older, newer]: Pair) =>
  relateSubjects({ category, fact: newer }, { category, fact: older });

describe('facts about the same thing', () => {
  it('holds the labelled pairs the rule is measured on: 26 corrections and 34 pairs that both hold', () => {
    expect(pairs.filter((pair) => pair[3] === 'replaces')).toHaveLength(26);
    expect(pairs.filter((pair) => pair[3] === 'keeps')).toHaveLength(34);
  });

  it(`replaces 14 of the 26 corrections and none of the pairs that both hold at ${SAME_SUBJECT} (precision 1.00, recall 0.54)`, () => {
    const same = pairs.filter((pair) => relation(pair) === 'same');
    expect(same.filter((pair) => pair[3] === 'keeps')).toEqual([]);
    expect(same.filter((pair) => pair[3] === 'replaces')).toHaveLength(14);
  });

  it('leaves every correction it misses to the model: each shares words with what it corrects', () => {
    const missed = pairs.filter((pair) => pair[3] === 'replaces' && relation(pair) !== 'same');
    expect(missed).toHaveLength(12);
    expect(missed.filter((pair) => relation(pair) === 'other')).toEqual([]);
  });

  it('tells facts of two categories apart, and a value alone (numbers in words or digits) is no subject', () => {
    expect(
      relateSubjects(
        { category: 'People', fact: 'Daughter Lily is 5' },
        { category: 'History', fact: 'Daughter Lily is 6' },
      ),
    ).toBe('other');
    expect([...subjectTerms({ fact: 'Works three nights, 4 days and twice on Sundays' })]).toEqual([
      'work',
      'night',
      'dai',
      'sundai',
    ]);
  });
});
