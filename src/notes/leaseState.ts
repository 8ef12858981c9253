/**
 * What the notes machine knows of one (user, session)'s lease, when its store has leases
 * (`leases.ts`): the items it has yet to add to the shared queue, its own items in the queue
 * not known to be done, and, while it holds the lease, the queue it works through. Plain,
 * frozen data kept in the conversation.
 */
import type { LeaseItem, QueuedItem } from './leases.js';

/** How the machine takes part in leases: its name, how long a lease lasts, how often it looks again. */
export interface NotesLeaseSettings {
  /** This machine's name in the store's leases. */
  readonly holder: string;
  /** How long a lease lasts from each call: longer than a model call may take. */
  readonly ttlMs: number;
  /** How soon a machine waiting for another's holder to end its stage looks again. */
  readonly pollMs: number;
  /**
   * This machine's own name, unique to it (the tracker makes one at random): with it, each item
   * it adds gets a key (`LeaseItem.key`: the name and the item's number), so a call whose answer
   * was lost is made again without adding its items twice. Without it, items have no key.
   */
  readonly instance?: string;
}

/** An item this machine adds: an end of stage carries the runner's name for it. */
export interface OutgoingItem extends LeaseItem {
  /** The `id` of the `notes/stageEnded` input (ends of stage only). */
  readonly stage?: number;
  /** A message already counted as settled here (it was in a call that failed, and waits to be sent again). */
  readonly counted?: boolean;
}

/** One of this machine's items in the store's queue, not known to be done. */
export interface OwnItem {
  readonly seq: number;
  readonly kind: 'message' | 'stage';
  readonly stage?: number;
  /**
   * A message: counted as settled here already (handed to another holder, or in a call that
   * failed). An end of stage: answered here already (this machine merged it as the holder).
   */
  readonly counted: boolean;
}

/** The lease of one (user, session), as this machine knows it. */
export interface NotesLeaseSlot {
  /** Items to add at the next call, in order. */
  readonly outbox: ReadonlyArray<OutgoingItem>;
  /** The items of the call running (added in its answer's order). */
  readonly sending: ReadonlyArray<OutgoingItem>;
  /** A call runs. */
  readonly calling: boolean;
  /** This machine's items in the queue, not known to be done, in order. */
  readonly mine: ReadonlyArray<OwnItem>;
  /** This machine holds the lease: `queue` is its to work through. */
  readonly held: boolean;
  /** While held: the items waiting, in order, as the last answer gave them (less those worked on since). */
  readonly queue: ReadonlyArray<QueuedItem>;
  /** While held: the fence of this turn of the lease (`LeaseAnswer.fence`), which the saves of its work name. */
  readonly fence?: number;
  /** While held: the number of the last item the running extraction covers. */
  readonly working?: number;
  /** The fence of the turn the running extraction began in. */
  readonly workFence?: number;
  /** While held: the items through this number are done; the next call says so. */
  readonly done?: number;
  /** The `done` the running call reports (absent when it reports none). */
  readonly sentDone?: number;
  /** The highest `done` the store has acknowledged: the work through it is saved and out of the queue. */
  readonly acknowledged?: number;
  /**
   * The wake-up scheduled: soon (`poll`: an end of stage of this machine waits in another's
   * queue), at the holder's expiry (`expiry`: to take over from a crashed holder), or none.
   */
  readonly waking: false | 'poll' | 'expiry';
  /** While held: the save of the finished work, or the load of the notes, failed this many times in a row (each wait before it is tried again doubles). */
  readonly retries?: number;
  /** A wake-up is scheduled to try the failed save or load again. */
  readonly retryDue?: boolean;
  /** Calls that failed in a row (the retry waits longer each time). */
  readonly failures: number;
  /** Calls made and answered, and extractions started and settled under the lease: what waiting compares. */
  readonly calls: number;
  readonly answers: number;
  readonly work: number;
  readonly worked: number;
  /** Epoch milliseconds of the last extraction that settled here: the earliest an end of stage merges at. */
  readonly lastAt?: number;
  /** Ends of stage of this machine (their ids) that another holder merged: answered once the notes have loaded again. */
  readonly reporting: ReadonlyArray<number>;
}

/** A lease never used. */
export const NO_LEASE: NotesLeaseSlot = Object.freeze({
  outbox: [],
  sending: [],
  calling: false,
  mine: [],
  held: false,
  queue: [],
  waking: false,
  failures: 0,
  calls: 0,
  answers: 0,
  work: 0,
  worked: 0,
  reporting: [],
});

/** Nothing of this lease is in flight or waiting: no items to add, none of this machine's in the queue, no call, not held. */
export const isLeaseAtRest = (lease: NotesLeaseSlot | undefined): boolean =>
  lease === undefined ||
  (!lease.held && !lease.calling && lease.outbox.length === 0 && lease.sending.length === 0 && lease.mine.length === 0);

/**
 * An end of stage asked for here is not answered yet: it waits in another holder's queue, or
 * that holder merged it and the answer waits for the notes to load again.
 */
export const awaitsOwnStage = (lease: NotesLeaseSlot | undefined): boolean =>
  lease !== undefined &&
  (lease.reporting.length > 0 || lease.mine.some((item) => item.kind === 'stage' && !item.counted));

/** The lease has work in flight here: a call, or the lease held. */
export const isLeaseBusy = (lease: NotesLeaseSlot | undefined): boolean =>
  lease !== undefined && (lease.calling || lease.held || lease.outbox.length > 0);
