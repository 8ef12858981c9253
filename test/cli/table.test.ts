/**
 * Tables line their columns up as a terminal shows them: a cell is as wide as the columns it
 * takes there (a CJK character two, a combining mark none), not as its UTF-16 units.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { renderFactTable } from '../../src/cli/render.js';
import { createStyle } from '../../src/cli/style.js';
import { clipColumnsEnd, clipColumnsStart, displayWidth, renderTable } from '../../src/cli/table.js';
import { createFactId, type SessionFact } from '../../src/index.js';

const plain = (text: string): string => text;

/** Where each column after the first starts on each line, in terminal columns. */
const columnStarts = (table: string, marker: string): number[] =>
  table.split('\n').map((line) => displayWidth(line.slice(0, line.indexOf(marker))));

describe('an aligned table', () => {
  it('measures a cell in terminal columns: two for a wide character, none for a combining mark or a format character', () => {
    expect(
      ['src/a.ts', '日本語', 'ｆｕｌｌ', 'e\u0301\u0301x', 'a\u200bb', '🙂', 'ü', '\u00e9'].map(displayWidth),
    ).toEqual([8, 6, 8, 2, 2, 2, 1, 1]);
  });

  it('starts every column at the same terminal column whatever the script of the cells before it', () => {
    const table = renderTable(
      [{ heading: 'PATH' }, { heading: 'KIND' }],
      ['src/plain.ts', 'src/日本語ファイル名前.ts', 'src/e\u0301\u0301\u0301x.ts', 'src/🙂.ts'].map((path) => ({
        cells: [path, 'file'],
      })),
      plain,
    );
    const starts = table.split('\n').map((line) => displayWidth(line.slice(0, line.search(/(KIND|file)$/u))));
    expect(new Set(starts).size).toBe(1);
  });

  it('lines up the columns of a fact table holding wide paths', () => {
    const fact = (subject: string): SessionFact =>
      Object.freeze({
        id: createFactId(subject, 'modified_by', 'task:1'),
        subject,
        relation: 'modified_by',
        object: 'task:1',
        tags: Object.freeze(['file_change' as const]),
        sourceTaskId: '1',
        sourceRole: 'implementer' as const,
        confidence: 1,
        validFrom: 1,
      });
    const table = renderFactTable([fact('src/日本語.ts'), fact('src/plain.ts')], createStyle(false), 'none');
    expect(new Set(columnStarts(table, 'modified_by').slice(1)).size).toBe(1);
  });
});

describe('a clipped cell', () => {
  const cellText = fc
    .array(fc.constantFrom('a', '/', '中', 'ｆ', '\u0301', '\u200b', '🙂', 'é'), { maxLength: 80 })
    .map((parts) => parts.join(''));

  it('takes at most its columns in a terminal, whatever the script of its text', () => {
    fc.assert(
      fc.property(cellText, fc.integer({ min: 3, max: 60 }), (text, max) => {
        expect(displayWidth(clipColumnsEnd(text, max))).toBeLessThanOrEqual(max);
        expect(displayWidth(clipColumnsStart(text, max))).toBeLessThanOrEqual(max);
      }),
    );
  });

  it('keeps a text that fits as it is, and never parts a combining mark from its character', () => {
    fc.assert(
      fc.property(cellText, fc.integer({ min: 3, max: 60 }), (text, max) => {
        if (displayWidth(text) <= max)
          expect([clipColumnsEnd(text, max), clipColumnsStart(text, max)]).toEqual([text, text]);
        const end = clipColumnsEnd(text, max);
        const start = clipColumnsStart(text, max);
        // What is kept is the text's own start or end, cut where no mark follows the cut.
        if (end !== text)
          expect(text.startsWith(end.slice(0, -3)) && !/^[\u0301\u200b]/u.test(text.slice(end.length - 3))).toBe(true);
        if (start !== text)
          expect(text.endsWith(start.slice(3)) && !/^[\u0301\u200b]/u.test(start.slice(3))).toBe(true);
      }),
    );
  });

  it("cuts a fact table's CJK text to the columns of an ASCII one", () => {
    const fact: SessionFact = Object.freeze({
      id: createFactId('src/a.ts', 'issue', '中'.repeat(80)),
      subject: 'src/a.ts',
      relation: 'issue',
      object: '中'.repeat(80),
      tags: Object.freeze(['error' as const]),
      sourceTaskId: '1',
      sourceRole: 'reviewer' as const,
      confidence: 1,
      validFrom: 1,
    });
    const table = renderFactTable([fact], createStyle(false), 'none');
    const row = table.split('\n')[1]!;
    const object = row.slice(row.indexOf('中'), row.indexOf('...') + 3);
    expect(displayWidth(object)).toBeLessThanOrEqual(50);
    expect(object).toBe(`${'中'.repeat(23)}...`);
  });
});
