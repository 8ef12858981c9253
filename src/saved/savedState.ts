/**
 * The saved-state format: a versioned JSON document holding the pair logs, the store's source
 * of truth. Decoding validates every assertion and rebuilds the records, so a file can never
 * load as a half-built or inconsistent store.
 */
import * as A from 'fp-ts/lib/Array.js';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import { z } from 'zod';
import { type Failure, failure } from '../base/failure.js';
import { readInput } from '../base/record.js';
import { describeIssue, formatPath } from '../base/schema.js';
import { wellFormed } from '../base/text.js';
import { isWithinYears, plainTime } from '../base/time.js';
import {
  FACT_LIMITS,
  holdsSeparator,
  parseNewFact,
  type SessionFact,
  spelledTaskId,
  taskIdSecretProblem,
} from '../core/fact.js';
import type { NotesLedger } from '../notes/ledger.js';
import { decodeNotes, encodeNotes, type SavedNotes } from '../notes/persist.js';
import * as PMap from '../persistent/persistentMap.js';
import {
  normalizeMaxValidFacts,
  type FactStore,
  type PairLog,
  pairKey,
  splitPairKey,
  withLastEventAt,
} from '../core/store/state.js';
import { checkedFactStore } from '../core/store/storeShape.js';
import { byTimeThenId } from '../core/store/timeline.js';
import { bySubjectThenRelation, type RecordedFile, type RecordedPrompt } from '../core/search/searchIndex.js';
import {
  buildStore,
  holdsFileFactOf,
  selectPairLogs,
  selectRecordedFiles,
  selectRecordedPrompts,
} from '../core/store/write.js';
import { redactedField, redactedPairs } from './redactedPairs.js';
import { respelledPairs, respelledSubject } from './respelledPairs.js';

/** The `format` tag of a saved state. */
export const STATE_FORMAT = 'session-fact-tracker/state';
/** The newest saved-state version this code reads and writes. */
export const STATE_VERSION = 1;

/** A saved state, as written to disk. */
export interface SavedState {
  readonly format: typeof STATE_FORMAT;
  readonly version: typeof STATE_VERSION;
  readonly maxValidFacts: number;
  readonly pairs: ReadonlyArray<PairLog>;
  /** The task prompts recorded for ranking context. */
  readonly prompts: ReadonlyArray<RecordedPrompt>;
  /**
   * The files tasks changed whose facts compaction removed (those still in `pairs` are read from
   * there): what a task changed stays part of its record, for ranking (optional: files without it
   * decode as before).
   */
  readonly files?: ReadonlyArray<RecordedFile>;
  /**
   * The time of the last event of the replay that built the store (`FactStore.lastEventAt`), so
   * a history that goes on from the state is timed as one replay of the whole history (optional:
   * files without it decode as before, resumed after the latest time they record).
   */
  readonly lastEventAt?: number;
  /**
   * The times of the invalidations that closed the pairs compaction removed (`FactStore.tombstones`),
   * so an assertion dated at or before one is closed by it after the state is read (optional: files
   * without it decode as before, without tombstones).
   */
  readonly tombstones?: ReadonlyArray<SavedTombstone>;
  /** The notable-facts ledger, when one was saved (optional: files without it decode as before). */
  readonly notes?: SavedNotes;
}

/** A tombstone as a saved state writes it: the pair, and when the invalidation that closed it was. */
export interface SavedTombstone {
  readonly subject: string;
  readonly relation: string;
  readonly invalidatedAt: number;
}

/** A decoded saved state: the fact store, and the notable-facts ledger when the file holds one. */
export interface DecodedState {
  readonly store: FactStore;
  readonly notes?: NotesLedger;
}

/**
 * The store (and the notable-facts ledger, when given) as a saved-state document
 * (deterministic: pairs sorted by subject, then relation).
 */
export const encodeState = (store: FactStore, notes?: NotesLedger): SavedState => {
  checkedFactStore(store);
  const files = removedFiles(store);
  const tombstones = savedTombstones(store);
  return {
    format: STATE_FORMAT,
    version: STATE_VERSION,
    // As `emptyFactStore` reads it: a bound set by hand on a store is written as one `decodeState` reads.
    maxValidFacts: normalizeMaxValidFacts(store.maxValidFacts),
    pairs: [...selectPairLogs(store)].sort(bySubjectThenRelation),
    prompts: selectRecordedPrompts(store),
    ...(files.length === 0 ? {} : { files }),
    ...(store.lastEventAt === undefined ? {} : { lastEventAt: store.lastEventAt }),
    ...(tombstones.length === 0 ? {} : { tombstones }),
    ...(notes === undefined ? {} : { notes: encodeNotes(notes) }),
  };
};

/** The recorded files the pair logs no longer show (compaction removed the facts). */
const removedFiles = (store: FactStore): RecordedFile[] =>
  selectRecordedFiles(store).filter(
    ({ taskId, subject, relation }) => !holdsFileFactOf(PMap.get(store.pairs, pairKey(subject, relation)), taskId),
  );

/** The store's tombstones, sorted by subject, then relation. */
const savedTombstones = (store: FactStore): SavedTombstone[] => {
  const saved: SavedTombstone[] = [];
  if (store.tombstones !== undefined)
    PMap.forEach(store.tombstones, (invalidatedAt, key) => {
      const [subject, relation] = splitPairKey(key);
      saved.push({ subject, relation, invalidatedAt });
    });
  return saved.sort(bySubjectThenRelation);
};

type IssuePath = { readonly path?: ReadonlyArray<PropertyKey> | undefined };

/** The path of an issue, `up` levels above where it was found. */
const pathOf = (issue: IssuePath, up = 0): string => {
  const path = issue.path ?? [];
  return formatPath(path.slice(0, path.length - up));
};

const notAnObject = (issue: IssuePath): string => `${pathOf(issue)} is not an object`;

const OUTSIDE_YEARS = 'is not a time within the years 0000 to 9999';

/**
 * A saved time, as an event's (`parseEventTime`): a replay records no other, and every place that
 * shows a time shows it as an ISO-8601 one, which no time outside these years can be.
 */
const withinYears = <T extends z.ZodType<number>>(time: T) =>
  time.refine(isWithinYears, { error: (issue) => `${pathOf(issue)} ${OUTSIDE_YEARS}` });

/**
 * The subject and relation of a file record or a tombstone, named as their pair is read
 * (`redactedPairs`, `respelledPairs`): a state saved before results were redacted may hold a
 * secret there, and one saved before a path had one spelling another spelling of it.
 */
const pairNames = (subject: string, relation: string): readonly [string, string] => {
  const name = redactedField(relation, FACT_LIMITS.relation);
  return [respelledSubject(redactedField(subject, FACT_LIMITS.subject), name), name];
};

const incompletePrompt = (issue: IssuePath): string => `${pathOf(issue, 1)} needs a taskId, a prompt and a finite time`;

const incompleteFile = (issue: IssuePath): string => `${pathOf(issue, 1)} needs a taskId, a subject and a relation`;

/**
 * A prompt's or a file record's task id, read as a fact's `sourceTaskId` is (`spelledTaskId`),
 * so it names the task its facts name: blank, the entry is `incomplete`; holding a secret, it is
 * refused as a fact holding one is (never quoted).
 */
const taskIdField = (incomplete: (issue: IssuePath) => string) =>
  z
    .string({ error: incomplete })
    .transform(spelledTaskId)
    .refine((taskId) => taskId !== '', { error: incomplete })
    .refine((taskId) => taskIdSecretProblem('', taskId) === undefined, {
      error: (issue) => taskIdSecretProblem(pathOf(issue), issue.input as string),
    });

/** A file record's subject or relation: U+001F joins the two into the record's key, as it does a fact's pair. */
const fileField = z
  .string({ error: incompleteFile })
  .min(1, { error: incompleteFile })
  .refine((text) => !holdsSeparator(text), {
    error: (issue) => `${pathOf(issue)} holds U+001F, the separator of pair keys`,
  });

const RecordedFileSchema = z
  .object(
    {
      taskId: taskIdField(incompleteFile),
      subject: fileField,
      relation: fileField,
    },
    { error: notAnObject },
  )
  .transform(({ taskId, subject, relation }): RecordedFile => {
    const [name, relationName] = pairNames(subject, relation);
    return { taskId, subject: name, relation: relationName };
  });

const incompleteTombstone = (issue: IssuePath): string =>
  `${pathOf(issue, 1)} needs a subject, a relation and a finite invalidatedAt`;

/** A tombstone's subject or relation, read as a pair's are (lone surrogates as U+FFFD); U+001F would make its key another pair's. */
const tombstoneField = z
  .string({ error: incompleteTombstone })
  .refine((text) => !holdsSeparator(text), {
    error: (issue) => `${pathOf(issue)} holds U+001F, the separator of pair keys`,
  })
  .transform(wellFormed);

/** A tombstone, as the entry of its pair key that `buildStore` takes. */
const TombstoneSchema = z
  .object(
    {
      subject: tombstoneField,
      relation: tombstoneField,
      invalidatedAt: withinYears(
        z.number({ error: incompleteTombstone }).refine(Number.isFinite, { error: incompleteTombstone }),
      ).transform(plainTime),
    },
    { error: notAnObject },
  )
  .transform(({ subject, relation, invalidatedAt }): readonly [string, number] => [
    pairKey(...pairNames(subject, relation)),
    invalidatedAt,
  ]);

const RecordedPromptSchema = z.object(
  {
    taskId: taskIdField(incompletePrompt),
    prompt: z.string({ error: incompletePrompt }),
    at: withinYears(z.number({ error: incompletePrompt })).transform(plainTime),
  },
  { error: notAnObject },
);

/** What is wrong within a pair, where in it (the pair's own path is added as the issue bubbles up). */
interface PairProblem {
  readonly path: Array<string | number>;
  readonly message: string;
}

/**
 * The assertions of one pair, in file order: each a well-formed fact (`parseNewFact`, the
 * check every fact entering a store passes), of this pair, asserted once at its time.
 */
const decodeAssertions = (
  subject: string,
  relation: string,
  raw: ReadonlyArray<unknown>,
): E.Either<PairProblem, ReadonlyArray<SessionFact>> => {
  const seen = new Set<string>();
  return A.traverseWithIndex(E.Applicative)((i, value: unknown): E.Either<PairProblem, SessionFact> => {
    const at = ['assertions', i];
    const fact = parseNewFact(value);
    if (E.isLeft(fact)) return E.left({ path: at, message: `: ${fact.left.message}` });
    if (fact.right.subject !== subject || fact.right.relation !== relation)
      return E.left({ path: at, message: 'belongs to another pair' });
    const key = `${fact.right.id}@${fact.right.validFrom}`;
    if (seen.has(key)) return E.left({ path: at, message: 'repeats an assertion' });
    seen.add(key);
    return fact;
  })([...raw]);
};

const nameless = (issue: IssuePath): string => `${pathOf(issue, 1)} has no subject or relation`;
const notAssertions = (issue: IssuePath): string => `${pathOf(issue)} is not a non-empty array`;
const notTimes =
  (up: number) =>
  (issue: IssuePath): string =>
    `${pathOf(issue, up)} is not an array of times`;

/**
 * One pair log, its facts decoded; `seen` holds the pairs before it in the document, so a
 * repeated pair is reported where it repeats, before any problem further on.
 */
const PairLogSchema = (seen: Set<string>) =>
  z
    .object(
      {
        subject: z.string({ error: nameless }),
        relation: z.string({ error: nameless }),
        assertions: z.array(z.unknown(), { error: notAssertions }).min(1, { error: notAssertions }),
        clears: z.array(withinYears(z.number({ error: notTimes(1) })), { error: notTimes(0) }),
      },
      { error: notAnObject },
    )
    .transform(({ subject: savedSubject, relation: savedRelation, assertions, clears }, context): PairLog => {
      // As its facts decode (`parseNewFact`): lone surrogates read as U+FFFD.
      const [subject, relation] = [wellFormed(savedSubject), wellFormed(savedRelation)];
      // The pair's path is not known here: the issue's is, once it reaches the document (see `problemOf`).
      const facts = decodeAssertions(subject, relation, assertions);
      const key = pairKey(subject, relation);
      const repeated = seen.has(key);
      seen.add(key);
      if (E.isLeft(facts) || repeated) {
        const { path, message } = E.isLeft(facts) ? facts.left : { path: [], message: 'repeats a pair' };
        context.addIssue({ code: 'custom', input: assertions, path, message, params: { underPath: true } });
        return z.NEVER;
      }
      return {
        subject,
        relation,
        assertions: [...facts.right].sort(byTimeThenId),
        clears: [...new Set(clears.map(plainTime))].sort((a, b) => a - b),
      };
    });

const NOT_A_BOUND = `saved state maxValidFacts is not a whole number from 1 to ${Number.MAX_SAFE_INTEGER}`;

/** The top-level fields of a saved state, as its schema names them (which no dispatch history's event has). */
export const SAVED_STATE_FIELDS = [
  'format',
  'version',
  'pairs',
  'prompts',
  'files',
  'maxValidFacts',
  'lastEventAt',
  'tombstones',
  'notes',
] as const;

/** A saved-state document: a fresh schema per document, as its pairs remember the ones seen. */
const SavedStateSchema = () =>
  z.object(
    {
      format: z.literal(STATE_FORMAT, { error: `not a saved state: format is not "${STATE_FORMAT}"` }),
      version: z
        .number({ error: 'saved state has no valid version' })
        .refine((version) => Number.isInteger(version) && version >= 1, 'saved state has no valid version')
        .refine((version) => version <= STATE_VERSION, {
          error: (issue) =>
            `saved state version ${String(issue.input)} is newer than this version of the library reads (${STATE_VERSION})`,
        }),
      pairs: z.array(PairLogSchema(new Set()), { error: 'saved state has no pairs array' }),
      prompts: z.array(RecordedPromptSchema, { error: 'saved state prompts is not an array' }).optional(),
      files: z.array(RecordedFileSchema, { error: 'saved state files is not an array' }).optional(),
      maxValidFacts: z
        .number({ error: NOT_A_BOUND })
        // Only a bound a store is built with (`normalizeMaxValidFacts`), as `encodeState` writes it.
        .refine((bound) => normalizeMaxValidFacts(bound) === bound, NOT_A_BOUND)
        .optional(),
      lastEventAt: z
        .number({ error: 'saved state lastEventAt is not a finite time' })
        // As an event's time (`parseEventTime`): a replay records no other, and a history goes on from it.
        .refine(isWithinYears, `saved state lastEventAt ${OUTSIDE_YEARS}`)
        .transform(plainTime)
        .optional(),
      tombstones: z.array(TombstoneSchema, { error: 'saved state tombstones is not an array' }).optional(),
      // The notes section keeps its own decoder (and its messages), run once the fact store decoded.
      notes: z.unknown().optional(),
    } satisfies Record<(typeof SAVED_STATE_FIELDS)[number], z.ZodType>,
    { error: 'not a saved state: expected a JSON object' },
  );

/** The message of an issue: whole, or for a pair's own checks its path followed by it. */
const problemOf = (issue: z.core.$ZodIssue): string =>
  issue.code === 'custom' && issue.params?.['underPath'] === true ? describeIssue([], issue) : issue.message;

/** Why a saved state cannot be read: the fact store's part (`invalid_state`) or the notes section (`invalid_notes`). */
export type SavedStateFailure = Failure<'invalid_state' | 'invalid_notes'>;

/**
 * Decodes a saved-state document, already parsed from its JSON text (`JSON.parse`), into a
 * store and its ledger, or says precisely why it cannot.
 */
export const decodeSavedState = (value: unknown): E.Either<SavedStateFailure, DecodedState> =>
  pipe(readDocument(value), E.chain(decodeDocument));

/**
 * The document read into plain data once (`readOnce`, an object of any class read as a plain
 * one: JSON makes no other), or `invalid_state` when a getter or a Proxy trap in it throws, or
 * an array has a hole: the checks that follow then run no code of the caller's, and a value
 * handed in by mistake is said to be one, never thrown.
 */
const readDocument = (value: unknown): E.Either<SavedStateFailure, unknown> =>
  pipe(
    readInput('saved state', value, { everyObject: true }),
    E.mapLeft(({ message }) => failure('invalid_state', message)),
  );

/** The store and ledger of a document read into plain data (`readDocument`), or why there are none. */
const decodeDocument = (value: unknown): E.Either<SavedStateFailure, DecodedState> => {
  const decoded = SavedStateSchema().safeParse(value);
  if (!decoded.success) return E.left(failure('invalid_state', problemOf(decoded.error.issues[0]!)));
  const { pairs, prompts, files, maxValidFacts, lastEventAt, tombstones, notes } = decoded.data;
  return pipe(
    notes === undefined ? E.right<SavedStateFailure, NotesLedger | undefined>(undefined) : decodeNotes(notes),
    E.map((ledger: NotesLedger | undefined): DecodedState => {
      const built = buildStore(
        normalizeMaxValidFacts(maxValidFacts),
        // A state an earlier version saved may hold secrets its results quoted, and a file in
        // the several spellings agents wrote it: read redacted, then each path in its one spelling.
        respelledPairs(redactedPairs(pairs)),
        prompts ?? [],
        files ?? [],
        tombstones ?? [],
      );
      const store = lastEventAt === undefined ? built : withLastEventAt(built, lastEventAt);
      return ledger === undefined ? { store } : { store, notes: ledger };
    }),
  );
};

/**
 * Decodes a parsed saved-state document into a store (its notes section validated too), or says
 * precisely why it cannot (`decodeSavedState`'s failure).
 */
export const decodeState = (value: unknown): E.Either<SavedStateFailure, FactStore> =>
  E.map((decoded: DecodedState) => decoded.store)(decodeSavedState(value));
