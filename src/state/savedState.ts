/**
 * The saved-state format: a versioned JSON document holding the pair logs, the store's source
 * of truth. Decoding validates every assertion and rebuilds the records, so a file can never
 * load as a half-built or inconsistent store.
 */
import * as E from 'fp-ts/lib/Either.js';
import { parseNewFact, type SessionFact } from '../fact.js';
import type { NotesLedger } from '../notes/ledger.js';
import { decodeNotes, encodeNotes, type SavedNotes } from '../notes/persist.js';
import { normalizeMaxValidFacts, type FactStore, type PairLog } from '../store/state.js';
import { byTimeThenId } from '../store/timeline.js';
import type { RecordedPrompt } from '../retrieve/index/searchIndex.js';
import { buildStore, selectPairLogs, selectRecordedPrompts } from '../store/write.js';

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
  /** The notable-facts ledger, when one was saved (optional: files without it decode as before). */
  readonly notes?: SavedNotes;
}

/** A decoded saved state: the fact store, and the notable-facts ledger when the file holds one. */
export interface DecodedState {
  readonly store: FactStore;
  readonly notes?: NotesLedger;
}

const byPairKey = (a: PairLog, b: PairLog): number =>
  a.subject < b.subject
    ? -1
    : a.subject > b.subject
      ? 1
      : a.relation < b.relation
        ? -1
        : a.relation > b.relation
          ? 1
          : 0;

/**
 * The store (and the notable-facts ledger, when given) as a saved-state document
 * (deterministic: pairs sorted by subject, then relation).
 */
export const encodeState = (store: FactStore, notes?: NotesLedger): SavedState => ({
  format: STATE_FORMAT,
  version: STATE_VERSION,
  maxValidFacts: store.maxValidFacts,
  pairs: [...selectPairLogs(store)].sort(byPairKey),
  prompts: selectRecordedPrompts(store),
  ...(notes === undefined ? {} : { notes: encodeNotes(notes) }),
});

const decodePrompts = (value: unknown): E.Either<string, RecordedPrompt[]> => {
  if (value === undefined) return E.right([]);
  if (!Array.isArray(value)) return E.left('saved state prompts is not an array');
  const prompts: RecordedPrompt[] = [];
  for (const [index, entry] of value.entries()) {
    if (!isRecord(entry)) return E.left(`prompts[${index}] is not an object`);
    const { taskId, prompt, at } = entry;
    if (
      typeof taskId !== 'string' ||
      taskId === '' ||
      typeof prompt !== 'string' ||
      typeof at !== 'number' ||
      !Number.isFinite(at)
    )
      return E.left(`prompts[${index}] needs a taskId, a prompt and a finite time`);
    prompts.push({ taskId, prompt, at });
  }
  return E.right(prompts);
};

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const decodePair = (value: unknown, index: number): E.Either<string, PairLog> => {
  const where = `pairs[${index}]`;
  if (!isRecord(value)) return E.left(`${where} is not an object`);
  const { subject, relation, assertions, clears } = value;
  if (typeof subject !== 'string' || typeof relation !== 'string') return E.left(`${where} has no subject or relation`);
  if (!Array.isArray(assertions) || assertions.length === 0)
    return E.left(`${where}.assertions is not a non-empty array`);
  if (!Array.isArray(clears) || !clears.every((at) => typeof at === 'number' && Number.isFinite(at)))
    return E.left(`${where}.clears is not an array of times`);
  const facts: SessionFact[] = [];
  const seen = new Set<string>();
  for (const [i, raw] of assertions.entries()) {
    const fact = parseNewFact(raw);
    if (E.isLeft(fact)) return E.left(`${where}.assertions[${i}]: ${fact.left}`);
    if (fact.right.subject !== subject || fact.right.relation !== relation)
      return E.left(`${where}.assertions[${i}] belongs to another pair`);
    const key = `${fact.right.id}@${fact.right.validFrom}`;
    if (seen.has(key)) return E.left(`${where}.assertions[${i}] repeats an assertion`);
    seen.add(key);
    facts.push(fact.right);
  }
  return E.right({
    subject,
    relation,
    assertions: facts.sort(byTimeThenId),
    clears: [...new Set(clears as number[])].sort((a, b) => a - b),
  });
};

/** Decodes a parsed saved-state document into a store and its ledger, or says precisely why it cannot. */
export const decodeSavedState = (value: unknown): E.Either<string, DecodedState> => {
  if (!isRecord(value)) return E.left('not a saved state: expected a JSON object');
  if (value['format'] !== STATE_FORMAT) return E.left(`not a saved state: format is not "${STATE_FORMAT}"`);
  const version = value['version'];
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1)
    return E.left('saved state has no valid version');
  if (version > STATE_VERSION)
    return E.left(`saved state version ${version} is newer than this version of the library reads (${STATE_VERSION})`);
  const pairs = value['pairs'];
  if (!Array.isArray(pairs)) return E.left('saved state has no pairs array');
  const logs: PairLog[] = [];
  const keys = new Set<string>();
  for (const [index, raw] of pairs.entries()) {
    const log = decodePair(raw, index);
    if (E.isLeft(log)) return log;
    const key = `${log.right.subject}\u001f${log.right.relation}`;
    if (keys.has(key)) return E.left(`pairs[${index}] repeats a pair`);
    keys.add(key);
    logs.push(log.right);
  }
  const prompts = decodePrompts(value['prompts']);
  if (E.isLeft(prompts)) return prompts;
  const notes = value['notes'] === undefined ? E.right(undefined) : decodeNotes(value['notes']);
  if (E.isLeft(notes)) return notes;
  const store = buildStore(normalizeMaxValidFacts(value['maxValidFacts']), logs, prompts.right);
  return E.right(notes.right === undefined ? { store } : { store, notes: notes.right });
};

/** Decodes a parsed saved-state document into a store (its notes section validated too), or says precisely why it cannot. */
export const decodeState = (value: unknown): E.Either<string, FactStore> =>
  E.map((decoded: DecodedState) => decoded.store)(decodeSavedState(value));
