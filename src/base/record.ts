/** A plain JSON object's fields, read-only. */
export type Fields = Readonly<Record<string, unknown>>;

/** True for an object that is not null and not an array: what a JSON object parses to. */
export const isRecord = (value: unknown): value is Fields =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
