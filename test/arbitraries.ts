/**
 * Shared fast-check generators. Stores are built by replaying random event histories over a
 * small id space (few subjects, relations, objects and times), so collisions, late assertions
 * and re-assertions are common: that is where valid-time bugs live.
 */
import fc from 'fast-check';
import {
  emptyFactStore,
  FACT_TAGS,
  type FactStore,
  type FactTag,
  makeFact,
  replay,
  type SessionFact,
  type TrackerEvent,
} from '../src/index.js';

export const subjects = ['src/a.ts', 'src/b.ts', 'task:1'] as const;
export const relations = ['modified_by', 'issue', 'summary'] as const;
export const objects = ['task:1', 'task:2', 'naming rule', 'x'] as const;
export const taskIds = ['1', '2', '3'] as const;

export const tagsArb: fc.Arbitrary<FactTag[]> = fc.uniqueArray(fc.constantFrom(...FACT_TAGS), {
  minLength: 1,
  maxLength: 3,
});

export const timeArb = fc.integer({ min: 0, max: 12 });

/** A file fact of task 1's implementer. */
export const fileFact = (subject: string, relation: string, object: string, validFrom: number): SessionFact =>
  makeFact({
    subject,
    relation,
    object,
    tags: ['file_change'],
    validFrom,
    sourceTaskId: '1',
    sourceRole: 'implementer',
    confidence: 1,
  });

/** A well-formed fact from the small id space. */
export const factArb: fc.Arbitrary<SessionFact> = fc
  .record({
    subject: fc.constantFrom(...subjects),
    relation: fc.constantFrom(...relations),
    object: fc.constantFrom(...objects),
    tags: tagsArb,
    validFrom: timeArb,
    sourceTaskId: fc.constantFrom(...taskIds),
    sourceRole: fc.constantFrom('implementer' as const, 'reviewer' as const),
    confidence: fc.constantFrom(1, 0.5),
  })
  .map(makeFact);

/**
 * A fact whose metadata is a function of its triple and time, so the only freedom between two
 * orders of the same assertions is the order itself.
 */
export const canonicalFactArb: fc.Arbitrary<SessionFact> = fc
  .record({
    subject: fc.constantFrom(...subjects),
    relation: fc.constantFrom(...relations),
    object: fc.constantFrom(...objects),
    validFrom: timeArb,
  })
  .map(({ subject, relation, object, validFrom }): SessionFact =>
    makeFact({
      subject,
      relation,
      object,
      validFrom,
      tags: ['file_change'],
      sourceTaskId: String(validFrom % 3),
      sourceRole: 'implementer',
      confidence: 1,
    }),
  );

export const eventArb: fc.Arbitrary<TrackerEvent> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.array(factArb, { maxLength: 4 }).map((facts): TrackerEvent => ({ type: 'facts/added', facts })),
  },
  {
    weight: 2,
    arbitrary: fc
      .record({ subject: fc.constantFrom(...subjects), relation: fc.constantFrom(...relations), at: timeArb })
      .map((fields): TrackerEvent => ({ type: 'facts/invalidated', ...fields })),
  },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 0, max: 8 }).map((maxFacts): TrackerEvent => ({ type: 'store/compacted', maxFacts })),
  },
  {
    weight: 2,
    arbitrary: fc
      .record({
        taskId: fc.constantFrom(...taskIds),
        taskPrompt: fc.constantFrom('Fix the naming in src/a.ts', 'Add rate limiting', 'Write docs for b.ts'),
        at: timeArb,
      })
      .map((fields): TrackerEvent => ({ type: 'prompt/recorded', ...fields })),
  },
);

export const eventsArb = fc.array(eventArb, { maxLength: 25 });

/** A store built by replaying a random history, with a small or default bound on valid facts. */
export const storeArb: fc.Arbitrary<FactStore> = fc
  .tuple(eventsArb, fc.option(fc.integer({ min: 1, max: 10 }), { nil: undefined }))
  .map(([events, maxValidFacts]) =>
    replay(events, emptyFactStore(maxValidFacts === undefined ? {} : { maxValidFacts })),
  );
