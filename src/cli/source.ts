/**
 * Telling a saved state from a dispatch history by content, and reading a saved state back.
 * A state file that is cut short or corrupt must be reported as a broken state, never read as
 * a history full of bad lines, so detection looks only at how the file starts.
 */
import * as E from 'fp-ts/lib/Either.js';
import { decodeState, encodeState } from '../state/savedState.js';
import type { FactStore } from '../store/state.js';
import { collapseWhitespace } from '../base/text.js';

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const STATE_OPENING = /^\{\s*"format"\s*:/u;

const withoutBom = (text: string): string => text.replace(/^\uFEFF/u, '');

/**
 * True when `text` is meant as a saved state: its first line is a whole JSON object that is not
 * a history event (no `type`), or the document opens with the `format` key that `encodeState`
 * writes first (a pretty-printed or truncated state). A history always starts with an event.
 */
export const isSavedStateText = (text: string): boolean => {
  const start = withoutBom(text).trimStart();
  if (!start.startsWith('{')) return false;
  const firstLine = start.split(/\r\n|\n|\r/u)[0] ?? '';
  try {
    const value: unknown = JSON.parse(firstLine);
    return isRecord(value) && !('type' in value);
  } catch {
    return STATE_OPENING.test(start);
  }
};

/** Reads a saved state, or says in one line why it cannot: never a half-loaded store. */
export const parseSavedState = (text: string): E.Either<string, FactStore> => {
  let value: unknown;
  try {
    value = JSON.parse(withoutBom(text));
  } catch (error) {
    const reason = collapseWhitespace(error instanceof Error ? error.message : String(error));
    return E.left(`not a readable saved state: the JSON is truncated or corrupt (${reason})`);
  }
  return E.mapLeft((reason: string) => collapseWhitespace(reason))(decodeState(value));
};

/** The store as the text of a saved-state file. */
export const formatSavedState = (store: FactStore): string => `${JSON.stringify(encodeState(store))}\n`;
