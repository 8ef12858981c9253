/**
 * The check every store with leases makes of a lease call before it does anything: a call a
 * caller built wrong (no request at all, a ttl that is no time, items of another kind, ids that
 * are not text, an item's key past 800 bytes) is bad input, answered `invalid_input` alike in
 * memory and on PostgreSQL, never thrown and never half carried out. The request's shape is
 * declared here, beside its check (`leases.ts` exports it with the rest of the capability).
 */
import * as E from 'fp-ts/lib/Either.js';
import { describeError, kindOf } from '../base/describe.js';
import { isRecord, readOnce } from '../base/record.js';
import { utf8Length } from '../base/text.js';

/** What a tracker adds to a queue: a user message to extract, or an end of stage to merge. */
export interface LeaseItem {
  readonly kind: 'message' | 'stage';
  /** The message's text (messages only). */
  readonly text?: string;
  /** Epoch milliseconds of the message or end of stage. */
  readonly at?: number;
  /**
   * The item's name, unique among all the items ever added to any queue (a tracker's instance and
   * a number): an item added again under a key still in the queue is not added twice, and the
   * call answers the number it has. So a call whose answer was lost (the connection dropped after
   * the store wrote it) can be made again as it was. Absent: added every time. At most 800 bytes
   * of UTF-8 in every store (a longer one is `invalid_input`).
   */
  readonly key?: string;
}

/** One lease call. */
export interface LeaseRequest {
  /** The caller's name, unique among the trackers sharing the store. */
  readonly holder: string;
  /** How long the lease lasts from this call when the caller gets or keeps it. */
  readonly ttlMs: number;
  /** Items to add to the queue, in order. */
  readonly add?: ReadonlyArray<LeaseItem>;
  /** The caller has done every item up to this number: they leave the queue. */
  readonly done?: number;
}

/** Why a store cannot keep an item's key (PostgreSQL: text holding U+0000...), or undefined. */
export type UnstorableKey = (key: string) => string | undefined;

/** Every key is one a store in memory can keep. */
const anyKey: UnstorableKey = () => undefined;

/**
 * The most bytes (UTF-8) of an item's key, in every store. PostgreSQL indexes a key with its
 * (user, session), and a B-tree index row holds at most 2,704 bytes: a key past that would be
 * refused on every try, as an error no retry helps, while a memory store took it. With ids of at
 * most 800 bytes each (what `postgresNotesStore` takes), a key of 800 leaves room for the row's
 * headers. A key is a name, not content (a tracker's is its instance's UUID and a number, about
 * 40 bytes), so every store holds to the one bound and a caller meets it in its tests.
 */
const MAX_KEY_BYTES = 800;

/** Why the `index`th item (from 0) of a request's `add` is no item the store can queue, or undefined. */
const malformedItem = (entry: unknown, index: number, unstorableKey: UnstorableKey): string | undefined => {
  if (!isRecord(entry)) return `item ${index + 1} is ${kindOf(entry)}, not an item`;
  const { kind, text, at, key } = entry;
  if (kind !== 'message' && kind !== 'stage')
    return `item ${index + 1} is of kind ${kindOf(kind)}, not message or stage`;
  if (text !== undefined && typeof text !== 'string')
    return `the text of item ${index + 1} is ${kindOf(text)}, not text`;
  if (at !== undefined && (typeof at !== 'number' || !Number.isFinite(at)))
    return `the time of item ${index + 1} is ${kindOf(at)}, not epoch milliseconds`;
  if (key === undefined) return undefined;
  if (typeof key !== 'string') return `the key of item ${index + 1} is ${kindOf(key)}`;
  const bytes = utf8Length(key);
  // Its length only: a key is a caller's name for the item, and its text may be anything.
  if (bytes > MAX_KEY_BYTES)
    return `the key of item ${index + 1} is ${bytes} bytes of UTF-8, longer than the ${MAX_KEY_BYTES} a key may be`;
  const problem = unstorableKey(key);
  return problem === undefined ? undefined : `the key of item ${index + 1} is text that ${problem}`;
};

/**
 * The longest lease, 2^31 - 1 ms (about 24.8 days), as long as a timer waits: a longer one is a
 * mistake (PostgreSQL's interval overflows near 1e16 ms), refused rather than failed on every try.
 */
const MAX_TTL_MS = 2 ** 31 - 1;

/** Why `request` is no lease request a store can carry out, or undefined. */
const malformedRequest = (request: unknown, unstorableKey: UnstorableKey): string | undefined => {
  if (!isRecord(request)) return `the request is ${kindOf(request)}, not an object`;
  const { holder, ttlMs, add, done } = request;
  if (typeof holder !== 'string') return `the holder is ${kindOf(holder)}, not text`;
  if (typeof ttlMs !== 'number' || !(ttlMs > 0) || !(ttlMs <= MAX_TTL_MS))
    return `ttlMs is ${kindOf(ttlMs)}, not a number of milliseconds above 0 and at most ${MAX_TTL_MS}`;
  if (done !== undefined && !Number.isSafeInteger(done)) return `done is ${kindOf(done)}, not a whole number`;
  if (add === undefined) return undefined;
  if (!Array.isArray(add)) return `add is ${kindOf(add)}, not a list`;
  // Every index, a hole's too (read as undefined: no item).
  for (let index = 0; index < add.length; index += 1) {
    const problem = malformedItem((add as unknown[])[index], index, unstorableKey);
    if (problem !== undefined) return problem;
  }
  return undefined;
};

/**
 * The lease call of (`user`, `session`) with `request`, read once as plain data (a getter or a
 * Proxy trap of the caller's that throws is such a call too) and checked, or why it is refused
 * (the reason a store's `invalid_input` failure gives). `unstorableKey` adds what the store
 * cannot keep of an item's key (default: nothing).
 */
export const parseLeaseRequest = (
  user: unknown,
  session: unknown,
  request: unknown,
  unstorableKey: UnstorableKey = anyKey,
): E.Either<string, LeaseRequest> => {
  if (typeof user !== 'string') return E.left(`the user is ${kindOf(user)}, not text`);
  if (typeof session !== 'string') return E.left(`the session is ${kindOf(session)}, not text`);
  let read: unknown;
  try {
    read = readOnce(request);
  } catch (error) {
    return E.left(`the request could not be read: ${describeError(error)}`);
  }
  const malformed = malformedRequest(read, unstorableKey);
  return malformed === undefined ? E.right(read as LeaseRequest) : E.left(malformed);
};
