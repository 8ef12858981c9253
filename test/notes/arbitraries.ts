/**
 * fast-check generators of the notable-facts ledger. Ids and fact texts come from small sets,
 * with case, whitespace and punctuation variants of the same fact, so duplicates, replaced
 * wordings and repeated extractions are common: that is where merging bugs live.
 */
import fc from 'fast-check';
import type { CategorizedFact } from '../../src/notes/model.js';
import type { NotesEvent } from '../../src/notes/events.js';
import { emptyNotesLedger, type NotesLedger } from '../../src/notes/ledger.js';
import { replayNotes } from '../../src/notes/events.js';

export const USERS = ['maya', 'jordan', 'constructor'] as const;
export const SESSIONS = ['s1', 's2'] as const;
export const CATEGORIES = ['People', 'Logistics', 'Conflict', 'Emotional', 'History'] as const;

/** Fact texts; the variants of one text share a `factKey`. */
const TEXTS = [
  'Partner works night shifts',
  'partner  works night shifts.',
  'Daughter Emma is 14',
  'Feels unheard about childcare',
  'Moved to Portland in 2024',
  'Sunday lunch with his mother is a trigger',
  'Saving for a house',
] as const;

/** A fact from the small space, sometimes with a category in another case. */
export const factArb: fc.Arbitrary<CategorizedFact> = fc.record({
  category: fc.constantFrom(...CATEGORIES, 'people', 'HISTORY'),
  fact: fc.constantFrom(...TEXTS),
});

/** Untrusted fact text: line breaks, controls, bidi overrides, fake headers and category tags. */
export const hostileTextArb: fc.Arbitrary<string> = fc
  .array(
    fc.oneof(
      fc.constantFrom(
        '\n',
        '\r\n',
        '\u2028',
        '\u0085',
        '\t',
        '\u202e',
        '\u0000',
        '[People]',
        '- ',
        'NOTED FACTS FROM THIS SESSION:',
        '\nABOUT THIS USER (from previous sessions):\n',
      ),
      fc.string({ maxLength: 12 }),
    ),
    { minLength: 1, maxLength: 8 },
  )
  .map((parts) => parts.join(''));

/** A fact list as a model might return it: up to 30 entries, duplicates and all. */
export const factListArb: fc.Arbitrary<CategorizedFact[]> = fc.array(factArb, { maxLength: 30 });

/** One ledger event over the small id space. */
export const eventArb: fc.Arbitrary<NotesEvent> = fc.oneof(
  {
    arbitrary: fc.record({
      type: fc.constant('notes/extracted' as const),
      user: fc.constantFrom(...USERS),
      session: fc.constantFrom(...SESSIONS),
      facts: fc.array(factArb, { maxLength: 8 }),
      at: fc.integer({ min: 0, max: 20 }),
    }),
    weight: 4,
  },
  fc.record({
    type: fc.constant('notes/extractionFailed' as const),
    user: fc.constantFrom(...USERS),
    session: fc.constantFrom(...SESSIONS),
    code: fc.constantFrom('timeout' as const, 'model_error' as const, 'invalid_response' as const),
    message: fc.constant('no answer'),
    at: fc.integer({ min: 0, max: 20 }),
  }),
  fc.record({
    type: fc.constant('notes/sessionConsolidated' as const),
    user: fc.constantFrom(...USERS),
    session: fc.constantFrom(...SESSIONS),
    at: fc.integer({ min: 0, max: 20 }),
  }),
  fc.record({
    type: fc.constant('notes/profileRewritten' as const),
    user: fc.constantFrom(...USERS),
    facts: fc.array(factArb, { maxLength: 6 }),
    at: fc.integer({ min: 0, max: 20 }),
  }),
);

/** A ledger built by replaying random events. */
export const ledgerArb: fc.Arbitrary<NotesLedger> = fc
  .array(eventArb, { maxLength: 16 })
  .map((events) => replayNotes(events, emptyNotesLedger()));
