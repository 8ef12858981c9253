import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { asOneRun } from '../../../src/persistent/owner.js';
import {
  createListViews,
  keptView,
  listChunks,
  listView,
  PostingsCursor,
  viewValue,
} from '../../../src/core/search/postingViews.js';
import {
  forEachPosting,
  NO_POSTINGS,
  packPosting,
  type Postings,
  postingsMaxWeight,
  postingsSize,
  postingValue,
  postingWeightOf,
  putPosting,
  removePosting,
} from '../../../src/core/search/postings.js';
import { isDeepFrozen, isWellFormedPostings } from '../store/invariants.js';

/** The views the reads below keep (a query's scratch holds one such object). */
const views = createListViews();

// Mostly ascending documents (as the index numbers them), some out of order, many removals.
const opArb = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.tuple(fc.constant('put' as const), fc.nat({ max: 400 }), fc.integer({ min: 1, max: 2200 })),
  },
  { weight: 3, arbitrary: fc.tuple(fc.constant('remove' as const), fc.nat({ max: 400 }), fc.constant(0)) },
);

describe('posting lists', () => {
  it('a run of puts and removes holds exactly what a Map holds, sorted, with right counts, lasts and bounds', () => {
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 1, maxLength: 600, size: 'max' }), fc.boolean(), (ops, inOneRun) => {
        const model = new Map<number, number>();
        const apply = (list: Postings, [op, doc, weight]: (typeof ops)[number]): Postings => {
          if (op === 'put') {
            model.set(doc, packPosting(weight, doc % 8));
            return asOneRun(() => putPosting(list, doc, packPosting(weight, doc % 8)));
          }
          model.delete(doc);
          return asOneRun(() => removePosting(list, doc));
        };
        const list = inOneRun ? asOneRun(() => ops.reduce(apply, NO_POSTINGS)) : ops.reduce(apply, NO_POSTINGS);
        const entries: Array<[number, number]> = [];
        forEachPosting(list, (doc, value) => entries.push([doc, value]));
        expect(entries).toEqual([...model].sort(([a], [b]) => a - b));
        expect(postingsSize(list)).toBe(model.size);
        expect(postingsMaxWeight(list)).toBe(Math.max(0, ...[...model.values()].map((v) => postingWeightOf(v))));
        if (model.size > 0) expect(isWellFormedPostings(list)).toBe(true);
        for (const [doc, value] of model) expect(postingValue(list, doc)).toBe(value);
        expect(isDeepFrozen(list)).toBe(true);
        expect(Array.from(listView(list, views))).toEqual(entries.flat());
        // Through the kept view, a lookup finds what the list holds, and nothing else.
        const view = keptView(list, views);
        expect(view).toBeDefined();
        for (let doc = 0; doc <= 401; doc += 1) expect(viewValue(view!, doc)).toBe(model.get(doc));
        // A cursor seeking any sequence of targets lands on the first document at or after each.
        const cursor = new PostingsCursor(list, views);
        const docs = entries.map(([doc]) => doc);
        for (const target of [0, 3, 50, 51, 120, 399, 400, 401]) {
          cursor.seek(target);
          expect(cursor.doc).toBe(docs.find((doc) => doc >= target) ?? Infinity);
          if (cursor.doc !== Infinity) expect(cursor.value).toBe(model.get(cursor.doc));
        }
      }),
      { numRuns: 150 },
    );
  });

  it('the chunks of a list, frozen or still owned by a run, hold its postings in order, in place while owned', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.nat({ max: 2_000 }), { maxLength: 400, size: 'max' }), (docs) => {
        const value = (doc: number): number => packPosting((doc % 50) + 1, doc % 8);
        const expected = [...docs].sort((a, b) => a - b).flatMap((doc) => [doc, value(doc)]);
        const read = (list: Postings): number[] => listChunks(list, views).flatMap((chunk) => Array.from(chunk));
        let owned: number[] = [];
        const list = asOneRun(() => {
          const start = NO_POSTINGS;
          const built = docs.reduce((current, doc) => putPosting(current, doc, value(doc)), start);
          owned = read(built);
          // Owned (the empty list is a shared frozen one): read where the list is (its blocks, or
          // the flat list itself), never through a copy.
          if (!Object.isFrozen(built))
            for (const chunk of listChunks(built, views)) expect(Array.isArray(chunk)).toBe(true);
          return built;
        });
        expect(owned).toEqual(expected);
        expect(read(list)).toEqual(expected);
        // Frozen: one typed view, the one exact scoring looks documents up in.
        expect(listChunks(list, views)).toEqual([keptView(list, views) ?? listChunks(list, views)[0]]);
        expect(listChunks(list, views)[0]).toBeInstanceOf(Int32Array);
      }),
      { numRuns: 100 },
    );
  });

  it('the view of a list a run still owns follows its changes, and a frozen list keeps one view', () => {
    const value = (doc: number): number => packPosting(doc + 1, doc % 8);
    const seen: number[][] = [];
    const list = asOneRun(() => {
      let owned = NO_POSTINGS;
      // Flat while short, then blocked: both read as they are now.
      for (let doc = 0; doc < 10; doc += 1) owned = putPosting(owned, doc, value(doc));
      seen.push(Array.from(listView(owned, views)));
      for (let doc = 10; doc < 300; doc += 1) owned = putPosting(owned, doc, value(doc));
      seen.push(Array.from(listView(owned, views)));
      owned = putPosting(removePosting(owned, 7), 5, packPosting(999, 0));
      seen.push(Array.from(listView(owned, views)));
      return owned;
    });
    const expected: number[] = [];
    for (let doc = 0; doc < 300; doc += 1)
      if (doc !== 7) expected.push(doc, doc === 5 ? packPosting(999, 0) : value(doc));
    expect(seen[0]).toEqual(Array.from({ length: 10 }, (_, doc) => [doc, value(doc)]).flat());
    expect(seen[1]!.length).toBe(600);
    expect(seen[2]).toEqual(expected);
    expect(isDeepFrozen(list)).toBe(true);
    expect(listView(list, views)).toBe(listView(list, views));
    expect(Array.from(listView(list, views))).toEqual(expected);
  });
});
