/**
 * Pinned rules are untrusted text used as keys of the record of who pinned them: a rule named
 * like a member every object inherits (`constructor`, `toString`, `__proto__`) is a rule like
 * any other, marked with its own pinner, never with what the prototype holds.
 */
import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PINNED_RULES } from '../../src/context/model.js';
import { pinnedRuleLines, pinnedRuleTexts } from '../../src/context/pinned.js';
import { validateSuccess } from '../../src/context/runInput.js';
import { decodeContextFile, encodeContextFile } from '../../src/context/schema.js';
import { contextArb } from './arbitraries.js';

const INHERITED = ['constructor', 'toString', '__proto__', 'hasOwnProperty'];

describe('pinned rules named like inherited members', () => {
  it('are marked as pinned by a user when nobody is recorded, in bundles and in full', () => {
    const texts = pinnedRuleTexts(INHERITED, {});
    expect(texts.slice(DEFAULT_PINNED_RULES.length)).toEqual(INHERITED.map((rule) => `[pinned by a user] ${rule}`));
    const lines = pinnedRuleLines({ pinnedRules: INHERITED, pinnedBy: {} });
    expect(lines.slice(DEFAULT_PINNED_RULES.length)).toEqual(INHERITED.map((rule) => `${rule} (pinned by a user)`));
  });

  it('keep the pinner a run records for them, `__proto__` included', () => {
    const [sample] = fc.sample(contextArb, { seed: 7, numRuns: 1 });
    const context = { ...sample!, pinnedRules: DEFAULT_PINNED_RULES, pinnedBy: {} };
    const validated = validateSuccess(
      context,
      { status: 'succeeded', summary: 'Pinned two rules.', pinRules: ['__proto__', 'constructor'], pinnedBy: 'Ada' },
      1_000,
    );
    if (E.isLeft(validated)) throw new Error(validated.left.message);
    expect(validated.right.pinnedRules.slice(DEFAULT_PINNED_RULES.length)).toEqual(['__proto__', 'constructor']);
    expect(Object.entries(validated.right.pinnedBy)).toEqual([
      ['__proto__', 'Ada'],
      ['constructor', 'Ada'],
    ]);
    expect(Object.getPrototypeOf(validated.right.pinnedBy)).toBe(Object.prototype);
    expect(pinnedRuleTexts(validated.right.pinnedRules, validated.right.pinnedBy).slice(-2)).toEqual([
      '[pinned by Ada] __proto__',
      '[pinned by Ada] constructor',
    ]);
  });

  it('keep their pinners through the context file, written and read again', () => {
    const [sample] = fc.sample(contextArb, { seed: 11, numRuns: 1 });
    // Two of them: the rendered rules must fit a bundle.
    const rules = ['__proto__', 'constructor'];
    // As a parsed file gives it: `__proto__` an entry of its own.
    const pinnedBy = JSON.parse('{"__proto__":"Ada","constructor":"Bo"}') as Record<string, string>;
    const context = { ...sample!, pinnedRules: [...DEFAULT_PINNED_RULES, ...rules], pinnedBy };
    const text = JSON.stringify(encodeContextFile({ kind: 'planning', contexts: [context] }));
    expect(text).toContain('"__proto__":"Ada"');
    const read = decodeContextFile(JSON.parse(text), 'planning');
    if (E.isLeft(read)) throw new Error(read.left.message);
    const [back] = read.right.contexts;
    expect(Object.entries(back!.pinnedBy ?? {})).toEqual(Object.entries(pinnedBy));
    expect(Object.getPrototypeOf(back!.pinnedBy)).toBe(Object.prototype);
    expect(pinnedRuleTexts(back!.pinnedRules, back!.pinnedBy).slice(-2)).toEqual([
      '[pinned by Ada] __proto__',
      '[pinned by Bo] constructor',
    ]);
  });

  it('refuse a file whose record of pinners holds a malformed entry, naming its place, not its text', () => {
    const [sample] = fc.sample(contextArb, { seed: 11, numRuns: 1 });
    const context = { ...sample!, pinnedRules: [...DEFAULT_PINNED_RULES, 'secret-rule'], pinnedBy: {} };
    const document = JSON.parse(JSON.stringify(encodeContextFile({ kind: 'planning', contexts: [context] })));
    document.contexts[0].pinned_by = { 'secret-rule': '' };
    const read = decodeContextFile(document, 'planning');
    const problem = E.isLeft(read) ? read.left.message : (read.right.quarantined?.[0]?.problem ?? 'decoded');
    expect(problem).toMatch(/pinned_by.*entry 1: its value/u);
    expect(problem).not.toContain('secret-rule');
  });
});
