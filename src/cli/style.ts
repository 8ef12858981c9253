/**
 * Terminal styling. Colour is decided once, by the shell (`io.ts`), and passed down as a
 * `Style`, so every renderer is a pure function of its data and the same text is produced
 * whether it is printed, piped or compared against a golden file.
 */

/** Wraps text in one terminal style, or returns it unchanged when colour is off. */
export type Paint = (text: string) => string;

/** The few styles the command line uses. */
export interface Style {
  readonly bold: Paint;
  readonly dim: Paint;
  readonly red: Paint;
  readonly green: Paint;
  readonly cyan: Paint;
}

const sgr =
  (open: number, close: number): Paint =>
  (text) =>
    text === '' ? text : `\u001b[${open}m${text}\u001b[${close}m`;

const plain: Paint = (text) => text;

/** Styles that emit ANSI escapes when `colour` is true, and plain text otherwise. */
export const createStyle = (colour: boolean): Style =>
  colour
    ? { bold: sgr(1, 22), dim: sgr(2, 22), red: sgr(31, 39), green: sgr(32, 39), cyan: sgr(36, 39) }
    : { bold: plain, dim: plain, red: plain, green: plain, cyan: plain };

/** Colour only on a terminal, and never when `NO_COLOR` is set (even to an empty string). */
export const isColourWanted = (stdoutIsTty: boolean, env: Readonly<Record<string, string | undefined>>): boolean =>
  stdoutIsTty && env['NO_COLOR'] === undefined;
