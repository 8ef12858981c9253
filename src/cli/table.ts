/**
 * Aligned plain-text tables. Cells are measured before styling, so colour never shifts a
 * column, and the last column is not padded, so lines carry no trailing spaces. A cell is
 * measured by the columns a terminal gives it (`displayWidth`), not by its UTF-16 units, so
 * paths in any script keep the columns aligned.
 */
import { eastAsianWidth } from 'get-east-asian-width';
import type { Paint } from './style.js';

/** One column: its heading, and how it aligns (numbers read best right-aligned). */
export interface Column {
  readonly heading: string;
  readonly align?: 'left' | 'right';
}

/** A table row: one cell per column, and an optional paint for the whole row. */
export interface Row {
  readonly cells: ReadonlyArray<string>;
  readonly paint?: Paint;
}

/** Characters a terminal draws over the one before (combining marks) or not at all (format characters, controls). */
const ZERO_WIDTH = /[\p{Mn}\p{Me}\p{Cf}\p{Cc}]/u;

/**
 * The columns a terminal gives `text`: two for an East Asian wide or fullwidth character (CJK,
 * most emoji; `get-east-asian-width` keeps the Unicode data), none for a combining mark or a
 * format character, one for any other. A sequence joined into one emoji counts each of its parts:
 * cells are paths and ids, where those are rare, and measuring graphemes exactly
 * (`Intl.Segmenter`) cost every command line a few tens of milliseconds to start.
 */
export const displayWidth = (text: string): number => {
  let width = 0;
  for (const character of text) width += characterWidth(character);
  return width;
};

/** The columns a terminal gives one character (a code point), as `displayWidth` counts them. */
const characterWidth = (character: string): number => {
  const code = character.codePointAt(0)!;
  if (code >= 0x20 && code < 0x7f) return 1;
  return ZERO_WIDTH.test(character) ? 0 : eastAsianWidth(code);
};

const ELLIPSIS = '...';

/**
 * `text` in at most `max` terminal columns, its end replaced by `...` when it is wider: a cell
 * clipped by its UTF-16 units would be twice as wide in CJK as in ASCII. A combining mark stays
 * with the character it is drawn over: the cut falls before both.
 */
export const clipColumnsEnd = (text: string, max: number): string => {
  if (displayWidth(text) <= max) return text;
  const characters = [...text];
  let kept = 0;
  for (let width = characterWidth(characters[0]!); width <= max - ELLIPSIS.length;) {
    kept += 1;
    width += characterWidth(characters[kept]!);
  }
  while (kept > 0 && characterWidth(characters[kept]!) === 0) kept -= 1;
  return characters.slice(0, kept).join('') + ELLIPSIS;
};

/** `text` in at most `max` terminal columns, its start replaced by `...` when it is wider (a path's file name matters most). */
export const clipColumnsStart = (text: string, max: number): string => {
  if (displayWidth(text) <= max) return text;
  const characters = [...text];
  let start = characters.length;
  for (let width = characterWidth(characters[start - 1]!); width <= max - ELLIPSIS.length;) {
    start -= 1;
    width += characterWidth(characters[start - 1]!);
  }
  // A mark whose character was cut off is not drawn over the ellipsis.
  while (start < characters.length && characterWidth(characters[start]!) === 0) start += 1;
  return ELLIPSIS + characters.slice(start).join('');
};

const GAP = '  ';

const pad = (text: string, width: number, align: 'left' | 'right'): string => {
  const fill = ' '.repeat(Math.max(0, width - displayWidth(text)));
  return align === 'right' ? `${fill}${text}` : `${text}${fill}`;
};

/** Renders `rows` under `columns`, each column as wide as its widest cell; the heading row gets `headingPaint`. */
export const renderTable = (columns: ReadonlyArray<Column>, rows: ReadonlyArray<Row>, headingPaint: Paint): string => {
  const widths = columns.map((column, index) =>
    Math.max(displayWidth(column.heading), ...rows.map((row) => displayWidth(row.cells[index] ?? ''))),
  );
  const line = (cells: ReadonlyArray<string>): string =>
    columns
      .map((column, index) => {
        const cell = cells[index] ?? '';
        return index === columns.length - 1 && column.align !== 'right'
          ? cell
          : pad(cell, widths[index] ?? 0, column.align ?? 'left');
      })
      .join(GAP)
      .trimEnd();
  return [
    headingPaint(line(columns.map((column) => column.heading))),
    ...rows.map((row) => (row.paint ?? ((text: string) => text))(line(row.cells))),
  ].join('\n');
};
