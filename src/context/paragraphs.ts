/**
 * A stored summary's paragraphs, as every view shows them: the bundle, the dashboard and
 * `fact-tracker context show` all split here, so none joins two paragraphs another shows apart.
 * Stored text is untrusted: each paragraph is whitespace-collapsed onto one line, so none can
 * start a line of its own in any view.
 */
import { collapseWhitespace } from '../base/text.js';

/** Every line or paragraph separator: CR LF, LF, CR, VT, FF, NEL, U+2028 and U+2029. */
const SEPARATOR = /\r\n|[\n\r\u000b\u000c\u0085\u2028\u2029]/u;

/** The paragraphs of `text`, each collapsed onto one line; blank ones (spaces or invisible characters only) dropped. */
export const splitParagraphs = (text: string): string[] =>
  text
    .split(SEPARATOR)
    .map(collapseWhitespace)
    .filter((paragraph) => paragraph !== '');
