import * as E from 'fp-ts/lib/Either.js';
import { describeError, refuseArgument } from './describe.js';
import { failure, type Failure } from './failure.js';

/** A plain JSON object's fields, read-only. */
export type Fields = Readonly<Record<string, unknown>>;

/** True for an object that is not null and not an array: what a JSON object parses to. */
export const isRecord = (value: unknown): value is Fields =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** How every check words an array's hole (an element never set, which JSON would write as null). */
const holeIn = (length: number, at: number): string =>
  `an array of ${length} elements has a hole at [${at}], an element never set`;

/**
 * The index of the first hole of `array`, or -1. The scan stops there: `a[4e9 - 1] = x` on an
 * empty array makes a length of four billion, and whatever walks or copies it (`Array.from`, a
 * spread, `map`, `new Set`) takes the process down, where this costs the elements before the hole.
 */
export const firstHole = (array: ReadonlyArray<unknown>): number => {
  for (let i = 0; i < array.length; i += 1) if (!(i in array)) return i;
  return -1;
};

/** True for an array with no hole (`firstHole`): one whose length its elements bear out. */
export const isDenseArray = (value: unknown): value is ReadonlyArray<unknown> =>
  Array.isArray(value) && firstHole(value) < 0;

/**
 * Throws the TypeError of an argument that is not an array of `what`, or one with a hole, naming
 * it and its first hole: a programmer's mistake, said before anything walks the array's length.
 */
export function refuseUnlessDenseArray(
  name: string,
  value: unknown,
  what: string,
): asserts value is ReadonlyArray<unknown> {
  if (!Array.isArray(value)) refuseArgument(name, value, what);
  const hole = firstHole(value);
  if (hole >= 0) throw new TypeError(`${name} is not ${what}: ${holeIn(value.length, hole)}`);
}

/** True for an array or an object made by a literal or `Object.create(null)`: what `readOnce` copies. */
const isPlainContainer = (value: object): boolean => {
  if (Array.isArray(value)) return true;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
};

/** How `readOnce` reads: `everyObject` copies every object, not only the plain ones. */
export interface ReadOptions {
  /**
   * Copy an object of a class (a Date, a Map, an instance with getters) too, as a plain object of
   * its own enumerable fields: for data that can hold no such object (a document parsed from
   * JSON), whose checks would otherwise run the getters of its class.
   */
  readonly everyObject?: boolean;
}

/**
 * `value` with its arrays and plain objects copied, each of their own enumerable fields read
 * exactly once (cycles kept as cycles; anything else, such as a Date, passed as it is, unless
 * `options.everyObject`). A getter
 * or a Proxy trap that throws does so here, where the caller can tell it from a bug, and one
 * that answers differently twice is not asked again. Iterative: any depth, no stack overflow.
 * An array with a hole (an element never set) throws a TypeError at its first hole: no data
 * holds one (JSON writes it as null), and a copy would cost its length, not its elements, so
 * `a[1e9] = x` on an empty array would take the process down trying.
 */
export const readOnce = (value: unknown, options: ReadOptions = {}): unknown => {
  if (typeof value !== 'object' || value === null) return value;
  const copies = new Map<object, Record<string, unknown> | unknown[]>();
  const pending: Array<readonly [object, Record<string, unknown> | unknown[]]> = [];
  const everyObject = options.everyObject === true;
  const copyOf = (item: unknown): unknown => {
    if (typeof item !== 'object' || item === null) return item;
    const plain = isPlainContainer(item);
    if (!plain && !everyObject) return item;
    const known = copies.get(item);
    if (known !== undefined) return known;
    const copy: Record<string, unknown> | unknown[] = Array.isArray(item)
      ? []
      : (Object.create(plain ? Object.getPrototypeOf(item) : Object.prototype) as Record<string, unknown>);
    copies.set(item, copy);
    pending.push([item, copy]);
    return copy;
  };
  const root = copyOf(value);
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [source, copy] = next;
    if (Array.isArray(source)) {
      const length = source.length;
      for (let i = 0; i < length; i += 1) {
        if (!(i in source)) throw new TypeError(holeIn(length, i));
        (copy as unknown[])[i] = copyOf(source[i]);
      }
    } else
      for (const key of Object.keys(source)) {
        const field = copyOf((source as Record<string, unknown>)[key]);
        // An own `__proto__` field (JSON.parse makes one) is defined, not assigned: assigning it
        // would set the copy's prototype, and lend that object's fields to every read of the copy.
        if (key === '__proto__')
          Object.defineProperty(copy, key, { value: field, writable: true, enumerable: true, configurable: true });
        else (copy as Record<string, unknown>)[key] = field;
      }
  }
  return root;
};

/**
 * `value` read into plain data once (`readOnce`), or `invalid_input` naming it when a getter or
 * a Proxy trap in it throws: the caller's input is at fault, not a bug for a shell's boundary to
 * report as `internal`. A shell reads an input so before checking it, so that what it checks
 * (a limit, a kind) is what it then keeps.
 */
export const readInput = (
  name: string,
  value: unknown,
  options: ReadOptions = {},
): E.Either<Failure<'invalid_input'>, unknown> => {
  try {
    return E.right(readOnce(value, options));
  } catch (error) {
    return E.left(failure('invalid_input', `the ${name} cannot be read: ${describeError(error)}`));
  }
};

/**
 * The own enumerable fields of `value` that can be read, each read once: a field whose getter
 * (or Proxy trap) throws is left out, as not given, and so are all of them when its keys cannot
 * be listed. For a caller's options, where such a field reads as its default.
 */
export const readableFields = (value: object): Record<string, unknown> => {
  const fields: Record<string, unknown> = {};
  let keys: ReadonlyArray<string>;
  try {
    keys = Object.keys(value);
  } catch {
    return fields;
  }
  for (const key of keys)
    try {
      fields[key] = (value as Record<string, unknown>)[key];
    } catch {
      // Not given: the option's default.
    }
  return fields;
};
