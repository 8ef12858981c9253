/**
 * Fields named `__proto__` kept through a zod schema. JSON.parse makes such a field one of the
 * object's own, like any other; but zod copies the fields an object schema does not name
 * (`looseObject`) onto its output by assignment, and so skips `__proto__`, whose assignment
 * would set the output's prototype instead: a field so named was read as absent, and dropped
 * by the next write of a file that keeps what it does not know.
 */
import { isRecord } from './record.js';

const PROTO = '__proto__';

/**
 * `parsed` (what a schema made of `raw`) with every field named `__proto__` that an object of
 * `raw` holds and the object made of it lacks defined on that object again: a field of its own,
 * in its place among the others, never its prototype. Objects are matched by field name and
 * array index, the places a schema keeps; one the schema passed as it was is not walked.
 * `parsed` itself, untouched, when no such field is missing.
 */
export const restoreProtoFields = <T>(raw: unknown, parsed: T): T => {
  if (raw === parsed || typeof raw !== 'object' || raw === null || typeof parsed !== 'object' || parsed === null)
    return parsed;
  if (Array.isArray(parsed)) {
    if (!Array.isArray(raw)) return parsed;
    const items = parsed.map((item: unknown, at) => restoreProtoFields(raw[at], item));
    return items.some((item, at) => item !== parsed[at]) ? (items as T) : parsed;
  }
  if (!isRecord(raw)) return parsed;
  const fields = Object.entries(parsed).map(([name, value]): [string, unknown] => [
    name,
    restoreProtoFields(Object.hasOwn(raw, name) ? raw[name] : undefined, value),
  ]);
  const missing = Object.hasOwn(raw, PROTO) && !Object.hasOwn(parsed, PROTO);
  if (!missing && fields.every(([name, value]) => value === (parsed as Record<string, unknown>)[name])) return parsed;
  if (missing) {
    // Right after the last field that stood before it: its place among the fields the schema passed on.
    const keys = Object.keys(raw);
    const before = new Set(keys.slice(0, keys.indexOf(PROTO)));
    const place = fields.reduce((last, [name], at) => (before.has(name) ? at + 1 : last), 0);
    fields.splice(place, 0, [PROTO, raw[PROTO]]);
  }
  // Entries, not assignments: Object.fromEntries defines `__proto__` as a field.
  return Object.fromEntries(fields) as T;
};
