/**
 * JSON in one form per value: the same object with its members in another order (a client that
 * parses and re-serializes what it sends) gives the same text, so a key hashed from it
 * recognizes the value however it was written.
 */

/** True when `keys` are in the order sorting gives: then the object is written as it is. */
const isSorted = (keys: ReadonlyArray<string>): boolean => {
  for (let i = 1; i < keys.length; i += 1) if (keys[i - 1]! > keys[i]!) return false;
  return true;
};

/**
 * The replacer that writes each object with its members sorted. An object already in that order
 * (most are, or have a handful of members) is not copied. The copy has no prototype, so a member
 * named `__proto__` stays a member. Integer-like names come first in ascending order in any
 * object, so they are in one order too.
 */
const sortedMembers = (_name: string, value: unknown): unknown => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const keys = Object.keys(value);
  if (isSorted(keys)) return value;
  const sorted = Object.create(null) as Record<string, unknown>;
  for (const key of keys.sort()) sorted[key] = (value as Record<string, unknown>)[key];
  return sorted;
};

/**
 * `JSON.stringify(value)` with every object's members in sorted order (arrays keep theirs), and
 * otherwise the same text: what JSON.stringify leaves out (undefined, functions) it leaves out,
 * and it throws where JSON.stringify throws (a BigInt, a cycle).
 */
export const canonicalJson = (value: Readonly<Record<string, unknown>> | ReadonlyArray<unknown>): string =>
  JSON.stringify(value, sortedMembers);
