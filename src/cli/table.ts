/**
 * Aligned plain-text tables. Cells are measured before styling, so colour never shifts a
 * column, and the last column is not padded, so lines carry no trailing spaces. A cell is
 * measured by the columns a terminal gives it (`string-width`: a CJK character takes two, a
 * combining mark none), not by its UTF-16 units, so paths in any script keep the columns aligned.
 */
import stringWidth from 'string-width';
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

const GAP = '  ';

const pad = (text: string, width: number, align: 'left' | 'right'): string => {
  const fill = ' '.repeat(Math.max(0, width - stringWidth(text)));
  return align === 'right' ? `${fill}${text}` : `${text}${fill}`;
};

/** Renders `rows` under `columns`, each column as wide as its widest cell; the heading row gets `headingPaint`. */
export const renderTable = (columns: ReadonlyArray<Column>, rows: ReadonlyArray<Row>, headingPaint: Paint): string => {
  const widths = columns.map((column, index) =>
    Math.max(stringWidth(column.heading), ...rows.map((row) => stringWidth(row.cells[index] ?? ''))),
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
