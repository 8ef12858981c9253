/**
 * Defensive reads of a dispatch result: the extractor's input is typed, but it may come from
 * anywhere, so a missing or mis-typed field reads as "nothing", never as an exception.
 */

import { isRecord } from '../../base/record.js';

/** The field when it is a string. */
export const readString = (source: unknown, key: string): string | undefined => {
  const value = isRecord(source) ? source[key] : undefined;
  return typeof value === 'string' ? value : undefined;
};

/** The field when it is a boolean. */
export const readBoolean = (source: unknown, key: string): boolean | undefined => {
  const value = isRecord(source) ? source[key] : undefined;
  return typeof value === 'boolean' ? value : undefined;
};

/** The string entries of an array field (other entries are skipped). */
export const readStrings = (source: unknown, key: string): string[] => {
  const value = isRecord(source) ? source[key] : undefined;
  return Array.isArray(value) ? value.filter((entry): entry is string => typeof entry === 'string') : [];
};

/** The object entries of an array field (other entries are skipped). */
export const readRecords = (source: unknown, key: string): Array<Readonly<Record<string, unknown>>> => {
  const value = isRecord(source) ? source[key] : undefined;
  return Array.isArray(value) ? value.filter(isRecord) : [];
};
