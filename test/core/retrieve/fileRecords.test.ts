import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as PMap from '../../../src/persistent/persistentMap.js';
import { type FileRecord, reviveFileRecords, storedFileRecords } from '../../../src/core/search/searchIndex.js';

const SEPARATOR = '\u001f';
// Subjects and relations as facts may hold them, the separator included.
const textArb = fc.oneof(
  fc.constantFrom('src/a.ts', 'modified_by', 'created', `a${SEPARATOR}b`, SEPARATOR, 'x'),
  fc.string({ unit: fc.constantFrom('a', '/', '.', SEPARATOR, 'é'), minLength: 1, maxLength: 6 }),
);
const recordArb = fc.record({
  subject: textArb,
  relation: textArb,
  tasks: fc.uniqueArray(fc.constantFrom('1', '2', '10', 't-4'), { maxLength: 4 }).map((tasks) => tasks.sort()),
});

describe('file records in a snapshot', () => {
  it('a file record written to a snapshot and read back is the record the index held, whatever its subject and relation hold', () => {
    fc.assert(
      fc.property(fc.array(recordArb, { maxLength: 60 }), (records) => {
        const byKey = new Map<string, FileRecord>(
          records.map((record) => [record.subject + SEPARATOR + record.relation, record]),
        );
        const files = PMap.fromEntries(byKey);
        const written = JSON.parse(JSON.stringify(storedFileRecords(files))) as ReturnType<typeof storedFileRecords>;
        expect(reviveFileRecords(written)).toEqual(files);
        // What the index held is as it was.
        expect(PMap.fromEntries(byKey)).toEqual(files);
      }),
      { numRuns: 300 },
    );
  });

  it('a record whose key gives back its subject and relation is written as its tasks alone', () => {
    const record: FileRecord = { subject: 'src/a.ts', relation: 'modified_by', tasks: ['1', '2'] };
    const odd: FileRecord = { subject: 'a', relation: `b${SEPARATOR}c`, tasks: ['3'] };
    const stored = storedFileRecords(
      PMap.fromEntries([
        [`src/a.ts${SEPARATOR}modified_by`, record],
        [`a${SEPARATOR}b${SEPARATOR}c`, odd],
      ]),
    );
    expect(PMap.get(stored, `src/a.ts${SEPARATOR}modified_by`)).toEqual(['1', '2']);
    expect(PMap.get(stored, `a${SEPARATOR}b${SEPARATOR}c`)).toEqual(odd);
  });
});
