/** `restoreProtoFields`: the fields named `__proto__` a zod object schema drops, put back as fields of their own. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { restoreProtoFields } from '../../src/base/protoFields.js';

const Loose = z.looseObject({ text: z.string(), steps: z.array(z.looseObject({ done: z.boolean() })) });
// Parsed, as a file is: JSON.parse makes `__proto__` a field of its own.
const raw = JSON.parse(
  '{"text": "t", "__proto__": {"polluted": 1}, "steps": [{"done": true}, {"done": false, "__proto__": "s", "toString": "x"}], "note": {"__proto__": 2}}',
) as unknown;

describe('restoreProtoFields', () => {
  it('puts back where they stood the fields named __proto__ that zod drops, as fields, never as a prototype', () => {
    const parsed = Loose.parse(raw);
    expect(Object.hasOwn(parsed, '__proto__')).toBe(false);
    const restored = restoreProtoFields(raw, parsed);
    expect(JSON.stringify(restored)).toBe(JSON.stringify(raw));
    expect(Object.getOwnPropertyDescriptor(restored, '__proto__')?.value).toEqual({ polluted: 1 });
    expect(Object.getOwnPropertyDescriptor(restored.steps[1], '__proto__')?.value).toBe('s');
    expect(Object.getPrototypeOf(restored)).toBe(Object.prototype);
    expect(Object.getPrototypeOf(restored.steps[1])).toBe(Object.prototype);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('returns the very same value when no such field is missing, sharing what it did not change', () => {
    const plain = Loose.parse({ text: 't', steps: [{ done: true }] });
    expect(restoreProtoFields({ text: 't', steps: [{ done: true }] }, plain)).toBe(plain);
    const parsed = Loose.parse(raw);
    expect(restoreProtoFields(raw, parsed).steps[0]).toBe(parsed.steps[0]);
    expect(restoreProtoFields(raw, parsed)['note']).toBe(parsed['note']);
  });
});
