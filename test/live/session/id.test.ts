/**
 * Ids from clients as messages name them: plain ids bare, any other quoted and clipped, so that
 * a hostile id can neither flood a message, break its line, nor forge the separator of notices.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clipEnd, collapseWhitespace } from '../../../src/base/text.js';
import { nameId, quoteId } from '../../../src/live/session/id.js';

describe('quoteId and nameId', () => {
  it('names plain ids bare (Claude Code, Codex and orchestrator ids), and any other quoted', () => {
    for (const id of ['7', 'task-2', 'toolu_01A2b3C4d5E6f7G8h9I0j1K2', '3f2b8c1e-9d4a-4c6b-8e2f-1a2b3c4d5e6f'])
      expect(nameId(id)).toBe(id);
    expect(nameId('fix login')).toBe('"fix login"');
    expect(nameId('../../outside')).toBe('"../../outside"');
    expect(nameId(`agent-${'a'.repeat(60)}`)).toBe(`"agent-${'a'.repeat(34)}..."`);
  });

  it('escapes what could break, hide or forge a line: line breaks, separators, format characters, "|"', () => {
    expect(quoteId('a\nb\u2028c\u202ed\u200be | f\u0085')).toBe('"a\\nb\\u2028c\\u202ed\\u200be \\u007c f\\u0085"');
    expect(quoteId('tag \u{e0041}')).toBe('"tag \\udb40\\udc41"');
    expect(quoteId('blank \u3164 and \ufe0f')).toBe('"blank \\u3164 and \\ufe0f"');
  });

  it('reads back as JSON to the id clipped to 40 characters, and holds no "|" nor anything collapsing would change', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 80 }), (id) => {
        const quoted = quoteId(id);
        expect(JSON.parse(quoted)).toBe(clipEnd(id, 43));
        expect(quoted).not.toContain('|');
        expect(collapseWhitespace(quoted)).toBe(quoted);
        expect(quoted.length).toBeLessThanOrEqual(2 + 43 * 12);
      }),
    );
  });
});
