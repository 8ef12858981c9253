/**
 * Leases, an optional capability of the notes store port: how trackers in several processes
 * keep the N+1 guarantee for one (user, session). Each (user, session) has a queue of what
 * waits to be done for it (user messages to extract, ends of stage to merge), shared by every
 * tracker, and a lease: the one tracker allowed to work through the queue, until its lease
 * expires. A tracker adds what it is told to the queue and asks for the lease in one call; the
 * holder takes everything waiting (messages that arrived at any tracker fold into one
 * extraction), and says what it has done in the next call, which renews its lease while more
 * waits and frees it when nothing does. A holder that crashed stops renewing: once its lease
 * has expired, the next tracker that asks takes it over with the whole queue.
 *
 * `memoryLeases` is the in-process implementation (`memoryNotesStore` has it): two trackers on
 * one memory store take turns as two processes on one database would.
 */
import * as E from 'fp-ts/lib/Either.js';
import { refuseArgument } from '../base/describe.js';
import { type LeaseItem, type LeaseRequest, parseLeaseRequest } from './leaseRequest.js';
import { storeFailure, type StoreAnswer } from './storeAnswer.js';

export type { LeaseItem, LeaseRequest } from './leaseRequest.js';

/** An item in a queue: numbered by the store in the order added (increasing, never reused), and who added it. */
export interface QueuedItem extends LeaseItem {
  readonly seq: number;
  /** The holder name of the tracker that added it. */
  readonly origin: string;
}

/** What a lease call found. */
export interface LeaseAnswer {
  /** The caller holds the lease now: the queue is its to work through. */
  readonly held: boolean;
  /** The numbers the store gave the items added, in order. */
  readonly added: ReadonlyArray<number>;
  /** The number of the first item still waiting (absent when none waits): every item numbered below it is done. */
  readonly head?: number;
  /** Every item waiting, in order, when the caller holds the lease (else empty). */
  readonly queue: ReadonlyArray<QueuedItem>;
  /** Milliseconds until the lease expires, when someone holds it. */
  readonly expiresInMs?: number;
  /**
   * When the caller holds the lease: its fencing token, a number the store gives each turn of
   * the lease (kept while its holder renews it, expired or not, until another takes it over or
   * it is freed; never reused). A save made under the lease names it (`NotesWrite.fences`),
   * and the store refuses the save once the lease has another.
   */
  readonly fence?: number;
}

/**
 * The lease capability of a notes store. One call adds `add` to the queue of (user, session),
 * removes the items through `done`, then: when nothing waits, frees the lease (unless another
 * holder's is live); else gives the lease to the caller when the caller holds it or it is free
 * or expired (renewed for `ttlMs`), answering the queue; else answers when the holder's lease expires.
 * All of it at one moment: an item added while the holder finishes is either in the queue the
 * holder's call answers, or finds the lease free.
 */
export interface NotesLeases {
  lease(user: string, session: string, request: LeaseRequest): StoreAnswer<LeaseAnswer>;
}

/** Leases in memory, and what their store's saves ask of them: whether a lease is still at a fence. */
export interface MemoryLeases extends NotesLeases {
  /** True while the lease of (user, session) is at `fence`: no other turn of it has begun since. */
  isAt(user: string, session: string, fence: number): boolean;
}

interface MemorySlot {
  holder: string;
  expiresAt: number;
  /** The fence of the holder's turn (0: none yet). */
  fence: number;
  readonly queue: QueuedItem[];
  /** The number of each queued item added with a key, by its key. */
  readonly keys: Map<string, number>;
}

/** Leases in this process's memory, by the clock `now`. */
export const memoryLeases = (now: () => number = Date.now): MemoryLeases => {
  // A clock that is none (null) would fail at the first lease: said here.
  if (typeof now !== 'function') refuseArgument('now', now, 'a function (a clock answering epoch milliseconds)');
  const slots = new Map<string, MemorySlot>();
  let next = 1;
  let fences = 0;
  const slotKey = (user: string, session: string): string => JSON.stringify([user, session]);
  return {
    isAt: (user, session, fence) => slots.get(slotKey(user, session))?.fence === fence,
    lease: (user, session, given) => {
      // A call a caller built wrong is refused before anything changes, as PostgreSQL refuses it.
      const parsed = parseLeaseRequest(user, session, given);
      if (E.isLeft(parsed)) return E.left(storeFailure('invalid_input', `the lease call was refused: ${parsed.left}`));
      const request = parsed.right;
      const key = slotKey(user, session);
      const slot: MemorySlot = slots.get(key) ?? {
        holder: '',
        expiresAt: Number.NEGATIVE_INFINITY,
        fence: 0,
        queue: [],
        keys: new Map(),
      };
      const time = now();
      const { done } = request;
      if (done !== undefined) {
        slot.queue.splice(0, slot.queue.filter((item) => item.seq <= done).length);
        slot.keys.forEach((seq, name) => {
          if (seq <= done) slot.keys.delete(name);
        });
      }
      const added = (request.add ?? []).map((item) => {
        const known = item.key === undefined ? undefined : slot.keys.get(item.key);
        if (known !== undefined) return known;
        // Frozen once, when queued: every answer shares it, and its caller keeps it as it is.
        const queued: QueuedItem = Object.freeze({
          kind: item.kind,
          ...(item.text === undefined ? {} : { text: item.text }),
          ...(item.at === undefined ? {} : { at: item.at }),
          seq: next++,
          origin: request.holder,
        });
        slot.queue.push(queued);
        if (item.key !== undefined) slot.keys.set(item.key, queued.seq);
        return queued.seq;
      });
      const free = slot.holder === request.holder || slot.expiresAt <= time;
      const head = slot.queue[0]?.seq;
      if (head === undefined) {
        if (free) slots.delete(key);
        else slots.set(key, slot);
        return E.right(
          free
            ? { held: false, added, queue: [] }
            : { held: false, added, queue: [], expiresInMs: slot.expiresAt - time },
        );
      }
      slots.set(key, slot);
      if (!free) return E.right({ held: false, added, head, queue: [], expiresInMs: slot.expiresAt - time });
      // A holder that renews keeps its fence (expired or not: nobody else worked meanwhile); a lease
      // taken by another, or freed and taken again, gets a new one.
      if (slot.holder !== request.holder || slot.fence === 0) slot.fence = ++fences;
      slot.holder = request.holder;
      slot.expiresAt = time + request.ttlMs;
      return E.right({
        held: true,
        added,
        head,
        queue: Object.freeze(slot.queue.slice()),
        expiresInMs: request.ttlMs,
        fence: slot.fence,
      });
    },
  };
};
