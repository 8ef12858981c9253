/**
 * The options of `createNotableFactsTracker`, checked and filled in with their defaults: what
 * the shell runs with, whatever a caller passed (a JavaScript caller may pass anything).
 */
import { describeError, kindOf, refuseArgument } from '../base/describe.js';
import { failure } from '../base/failure.js';
import { readableFields } from '../base/record.js';
import type { NotesLeaseSettings } from './leaseState.js';
import type { NotesLeases } from './leases.js';
import { DEFAULT_CATEGORIES, isStorableNotesId, unusableCategories } from './model.js';
import type { CompleteFn } from './port.js';
import { memoryNotesStore, type NotesStore } from './store.js';
import type { NotableFactsTrackerOptions, NotesTrackerFailure } from './trackerTypes.js';
import type { NotesLedger } from './ledger.js';
import { type StorableLedger, storableLedger } from './storableLedger.js';

/** The default time an extraction may take before it is abandoned and recorded as a timeout. */
export const DEFAULT_TIMEOUT_MS = 15_000;

/** The longest timeout a timer can wait (2^31 - 1 ms, about 24.8 days): a longer one would fire at once. */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** The events the tracker keeps by default; older ones fold into the log's snapshot (`eventLog`). */
export const DEFAULT_MAX_EVENTS = 10_000;

/** How much longer than a model call a lease lasts by default: the save and the call that reports the work fit in it. */
export const DEFAULT_LEASE_MARGIN_MS = 30_000;

/** How soon, by default, a tracker waiting for another's holder to merge its end of stage looks again. */
export const DEFAULT_LEASE_POLL_MS = 250;

/**
 * The idle (user, session) slots a tracker keeps in memory by default: a few megabytes (a slot
 * holds its recent messages and at most 25 facts, 3 to 14 KB), and enough that a user who
 * comes back within a thousand others finds their session without a load.
 */
export const DEFAULT_CACHE_SIZE = 1_000;

/** `value` when it is a finite number above 0, else `fallback`. */
export const positive = (value: unknown, fallback: number): number =>
  typeof value === 'number' && value > 0 && Number.isFinite(value) ? value : fallback;

/** A time a timer waits: a number above 0 (Infinity included) at most `MAX_TIMEOUT_MS`, else `fallback`. */
const waitTime = (value: unknown, fallback: number): number =>
  Math.min(typeof value === 'number' && value > 0 ? value : fallback, MAX_TIMEOUT_MS);

/** The options a tracker runs with. */
export interface ResolvedOptions {
  /** The options as given (an object, possibly empty). */
  readonly settings: Partial<NotableFactsTrackerOptions>;
  readonly complete: CompleteFn;
  readonly now: () => number;
  readonly timeoutMs: number;
  readonly store: NotesStore;
  readonly onError: NotableFactsTrackerOptions['onError'];
  readonly cacheSize: number;
  /** How to take part in the store's leases: absent for a store without them, or one this tracker made (it is its alone). */
  readonly lease: NotesLeaseSettings | undefined;
  /** `leasePollMs`, with or without leases: how soon `close` first tries a failed save again. */
  readonly pollMs: number;
  /** What of the options the tracker could not use, for `onError` once it is made. */
  readonly unused: ReadonlyArray<NotesTrackerFailure>;
}

/** What `complete` must be, as a refusal says it. */
const COMPLETE = 'a function (the model call: (prompt, { signal }) => Promise<string>)';

/** What a store must be, as a refusal says it. */
const STORE = 'a notes store (an object whose load and save are functions), or none for one in memory';

/**
 * The store given, or one in memory when none is (undefined, null). One that is no store is
 * refused with a TypeError naming it, not replaced by the default: a tracker that kept in memory
 * the notes meant for a database would lose them when its process ends, without a word.
 */
const checkedStore = (store: unknown): NotesStore => {
  if (store === undefined || store === null) return memoryNotesStore();
  if (typeof store !== 'object') refuseArgument('store', store, STORE);
  let fields: { readonly load: unknown; readonly save: unknown; readonly leases: unknown };
  try {
    const { load, save, leases } = store as NotesStore;
    fields = { load, save, leases };
  } catch (error) {
    throw new TypeError(`store could not be read: ${describeError(error)}`, { cause: error });
  }
  if (typeof fields.load !== 'function' || typeof fields.save !== 'function') refuseArgument('store', store, STORE);
  const { leases } = fields;
  if (leases !== undefined && typeof (leases as Partial<NotesLeases> | null)?.lease !== 'function')
    refuseArgument('store.leases', leases, "the store's leases (an object whose lease is a function), or undefined");
  return store as NotesStore;
};

/**
 * Why the tracker cannot use the `categories` given (repeats, more than 20, an empty name, no
 * list), or nothing when it can or none is given (undefined, null). Such a set reads as the five
 * defaults, as in `emptyNotesLedger`; said, since the caller's facts would otherwise be filed
 * under categories it never chose without a word.
 */
const unusedCategories = (categories: unknown): ReadonlyArray<NotesTrackerFailure> => {
  const why = unusableCategories(categories);
  if (why === undefined) return [];
  const defaults = DEFAULT_CATEGORIES.map(({ name }) => name).join(', ');
  return [
    failure(
      'invalid_input',
      `the categories option was not used: ${why}; the tracker uses the five default categories (${defaults})`,
    ),
  ];
};

/**
 * The options of `createNotableFactsTracker` with their defaults. Options that are no object, a
 * `complete` that is no function (a tracker without its model could only fail every
 * extraction) or a `store` that is no store are refused with a TypeError naming them; an
 * optional one that is not of its kind reads as its default (`categories` the tracker cannot
 * use are told to `onError`, in `unused`).
 */
export const resolveOptions = (options: NotableFactsTrackerOptions): ResolvedOptions => {
  if (typeof options !== 'object' || options === null)
    throw new TypeError(`the options are ${kindOf(options)}, not an object ({ complete, ... }: complete is required)`);
  // Each field read once, here: one whose getter (or Proxy trap) throws reads as not given.
  const settings: Partial<NotableFactsTrackerOptions> = readableFields(options);
  if (typeof settings.complete !== 'function') refuseArgument('complete', settings.complete, COMPLETE);
  const timeoutMs = waitTime(settings.timeoutMs, DEFAULT_TIMEOUT_MS);
  const cacheSize = settings.cacheSize;
  const pollMs = waitTime(settings.leasePollMs, DEFAULT_LEASE_POLL_MS);
  const store = checkedStore(settings.store);
  return {
    settings,
    complete: settings.complete,
    now: typeof settings.now === 'function' ? settings.now : Date.now,
    timeoutMs,
    store,
    onError: typeof settings.onError === 'function' ? settings.onError : undefined,
    // Infinity keeps every idle slot, as asked; NaN and negatives are no size.
    cacheSize: typeof cacheSize === 'number' && cacheSize >= 0 ? Math.floor(cacheSize) : DEFAULT_CACHE_SIZE,
    lease:
      store.leases === undefined
        ? undefined
        : {
            holder: isStorableNotesId(settings.holder) ? settings.holder : `tracker-${globalThis.crypto.randomUUID()}`,
            ttlMs: waitTime(settings.leaseMs, timeoutMs + DEFAULT_LEASE_MARGIN_MS),
            pollMs,
            instance: globalThis.crypto.randomUUID(),
          },
    pollMs,
    unused: unusedCategories(settings.categories),
  };
};

/**
 * `initial` made storable; one that is no ledger is kept as given, so the bug surfaces where the
 * tracker first uses it, as `internal`, never as an exception where the tracker is made.
 */
export const startingLedger = (initial: NotesLedger): StorableLedger => {
  try {
    return storableLedger(initial);
  } catch {
    return { ledger: initial, problems: [] };
  }
};
