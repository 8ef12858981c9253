import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { namesSubject } from '../../../src/core/retrieve/rank.js';

/** Short strings over a few characters, slashes included, so that trailing paths often meet. */
const pathish = fc.string({ unit: fc.constantFrom('a', 'b', '/', '.'), maxLength: 8 });

describe('namesSubject', () => {
  it('is true exactly when a path is the subject or the subject ends with a slash and the path', () => {
    fc.assert(
      fc.property(fc.array(pathish, { maxLength: 3 }), pathish, (paths, subject) => {
        const reference = paths.some((path) => subject === path || subject.endsWith(`/${path}`));
        expect(namesSubject(paths, subject)).toBe(reference);
      }),
      { numRuns: 2_000 },
    );
  });
});
