import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FLAG_BITS } from '../../../src/core/search/postings.js';
import { entryDoc, entryFlags, entryIsFile, taskFactEntry } from '../../../src/core/search/searchIndex.js';

describe("a task's fact entries", () => {
  it('an entry gives back its document, its prior flags and its file bit, for any document a session can number', () => {
    fc.assert(
      fc.property(
        // Document numbers only grow: far past what a session numbers, still exact in a double.
        fc.oneof(fc.nat({ max: 100_000 }), fc.integer({ min: 0, max: 2 ** 40 })),
        fc.nat({ max: (1 << FLAG_BITS) - 1 }),
        fc.boolean(),
        (doc, flags, isFile) => {
          const entry = taskFactEntry(doc, flags, isFile);
          expect([entryDoc(entry), entryFlags(entry), entryIsFile(entry)]).toEqual([doc, flags, isFile]);
        },
      ),
    );
  });
});
