/**
 * The notes machine when its store has leases (`leases.ts`): the N+1 guarantee across every
 * tracker sharing the store. A user message or an end of stage (of a named session) goes to the
 * (user, session)'s shared queue; whoever holds the lease works through the queue in order: the
 * messages up to the next end of stage in one extraction (so messages that arrived at any
 * tracker meanwhile fold into one follow-up), then the end of stage, merged once. The holder
 * loads the notes fresh when it takes the lease, saves after each piece of work, and says it is
 * done only once the save has landed, in the call that renews its lease or frees it. A
 * tracker whose items another holds looks again when that lease would expire (sooner while it
 * waits for an end of stage of its own), so a crashed holder's queue is taken over.
 */
import * as E from 'fp-ts/lib/Either.js';
import * as PMap from '../persistent/persistentMap.js';
import type { ConversationMessage } from './conversation.js';
import { applyNotesEvent } from './events.js';
import {
  andThen,
  type NotesEffect,
  type NotesExtractionSettled,
  type NotesLeaseAnswered,
  type NotesSaved,
  type NotesTransition,
} from './inputs.js';
import { isLeaseAtRest, NO_LEASE, type NotesLeaseSlot, type OutgoingItem, type OwnItem } from './leaseState.js';
import type { LeaseItem, LeaseRequest, QueuedItem } from './leases.js';
import { idOfKey, selectGlobalFacts, selectSessionFacts, selectSessionNotes, storedKey } from './ledger.js';
import {
  EMPTY_CONVERSATION,
  type NotesConversation,
  type NotesState,
  selectConversation,
  selectUserMachine,
  selectUserStorage,
  withConversation,
  withLedger,
} from './machine.js';
import { messageTime } from './messageTime.js';
import { settleExtraction } from './port.js';
import type { NotesStoreFailure } from './storeAnswer.js';
import { conversationPrompt, LATEST_MESSAGE_LENGTH } from './prompt.js';
import { mergeStage } from './stage.js';
import { isSaveStalled, isSessionSaved, recordChanges, reload, reloadAfresh, saveAgain } from './storage.js';
import { applySaveAnswer } from './saveAnswer.js';
import { isEarlierTurnUnsaved, selectFencedSessions, unfence } from './unsaved.js';

/** How much later than a lease's expiry a waiting tracker looks again. */
const EXPIRY_MARGIN_MS = 25;

const leaseOf = (conversation: NotesConversation | undefined): NotesLeaseSlot => conversation?.lease ?? NO_LEASE;

/** `state` with the lease of (user, session) replaced, and the conversation changed by `change`. */
const withLease = (
  state: NotesState,
  user: string,
  session: string,
  lease: NotesLeaseSlot,
  change: (conversation: NotesConversation) => NotesConversation = (same) => same,
): NotesState => {
  const conversation = selectConversation(state, user, session) ?? EMPTY_CONVERSATION;
  return withConversation(state, user, session, { ...change(conversation), lease });
};

const settingsOf = (state: NotesState) => state.settings.lease!;

/** The item as the store keeps it. */
const toLeaseItem = ({ kind, text, at, key }: OutgoingItem): LeaseItem => ({
  kind,
  ...(text === undefined ? {} : { text: text.slice(0, LATEST_MESSAGE_LENGTH) }),
  ...(at === undefined ? {} : { at }),
  ...(key === undefined ? {} : { key }),
});

/** Makes the lease call: the outbox added, the work through `done` reported. */
const call = (state: NotesState, user: string, session: string, done?: number): NotesTransition => {
  const current = leaseOf(selectConversation(state, user, session));
  // Reporting the work done: its save has landed, so the retries of a failed one start afresh.
  const { retries: _landed, ...reporting } = current;
  const lease = done === undefined ? current : reporting;
  const { holder, ttlMs } = settingsOf(state);
  const request: LeaseRequest = {
    holder,
    ttlMs,
    ...(lease.outbox.length === 0 ? {} : { add: lease.outbox.map(toLeaseItem) }),
    ...(done === undefined ? {} : { done }),
  };
  const next: NotesLeaseSlot = {
    ...lease,
    outbox: [],
    sending: lease.outbox,
    calling: true,
    calls: lease.calls + 1,
    ...(done === undefined ? {} : { sentDone: done }),
  };
  return [withLease(state, user, session, next), [{ type: 'lease', user, session, request }]];
};

/**
 * The conversation as the prompt of an extraction covering `covered` shows it. The local
 * messages not covered yet are left out (a later extraction covers them). When every covered
 * message was recorded here and the transcript still holds them, it shows them with the replies
 * between them; when another tracker added some, or the transcript let some go (it keeps fewer
 * turns of messages handed to another holder, which come back here when that lease expires),
 * the covered messages follow what came before them here, all in the queue's order.
 */
const promptConversation = (
  transcript: ReadonlyArray<ConversationMessage>,
  covered: ReadonlyArray<QueuedItem>,
  holder: string,
  uncovered: number,
): ReadonlyArray<ConversationMessage> => {
  const local = covered.filter((item) => item.origin === holder).length;
  const held = transcript.filter((message) => message.role === 'user').length;
  const fromQueue = covered.length > local || held < uncovered + local;
  // Back past the uncovered messages, and past the covered ones too when the queue gives their order.
  let end = transcript.length;
  for (let left = uncovered + (fromQueue ? local : 0); left > 0 && end > 0;) {
    end -= 1;
    if (transcript[end]?.role === 'user') left -= 1;
  }
  const kept = transcript.slice(0, end);
  return fromQueue
    ? [...kept, ...covered.map((item): ConversationMessage => ({ role: 'user', content: item.text ?? '' }))]
    : kept;
};

/**
 * The items of a queue numbered above `pending` (all of them when it is undefined): the queue
 * itself when none is at or below it, so a queue a store answered frozen is kept as it came, not
 * copied and walked again on every call while it grows.
 */
const queueAfter = (queue: ReadonlyArray<QueuedItem>, pending: number | undefined): ReadonlyArray<QueuedItem> =>
  pending === undefined || queue.every((item) => item.seq > pending)
    ? queue
    : queue.filter((item) => item.seq > pending);

/** Starts the extraction of the messages at the head of the queue, up to the next end of stage. */
const startBatch = (state: NotesState, user: string, session: string): NotesTransition => {
  const conversation = selectConversation(state, user, session) ?? EMPTY_CONVERSATION;
  const lease = leaseOf(conversation);
  const { holder } = settingsOf(state);
  const end = lease.queue.findIndex((item) => item.kind !== 'message');
  const covered = lease.queue.slice(0, end < 0 ? lease.queue.length : end);
  const last = covered[covered.length - 1]!.seq;
  const own = new Map(lease.mine.map((item) => [item.seq, item]));
  const counting = covered.filter((item) => own.get(item.seq)?.counted === false).length;
  const uncovered =
    [...lease.outbox, ...lease.sending].filter((item) => item.kind === 'message').length +
    lease.mine.filter((item) => item.kind === 'message' && item.seq > last).length;
  const messages = promptConversation(conversation.transcript, covered, holder, uncovered);
  let latest = messages.length - 1;
  while (latest >= 0 && messages[latest]?.role !== 'user') latest -= 1;
  const facts = selectSessionFacts(state.ledger, user, session);
  const prompt = conversationPrompt(messages, latest, facts, state.settings, covered.length - 1);
  const told = covered.reduce((time, item) => Math.max(time, item.at ?? Number.NEGATIVE_INFINITY), -Infinity);
  const working = { working: last, ...(lease.fence === undefined ? {} : { workFence: lease.fence }) };
  const next = withLease(state, user, session, { ...lease, ...working, work: lease.work + 1 }, (current) => ({
    ...current,
    started: Math.min(current.requested, current.started + counting),
    // Timed from the records the holder loaded, whatever clocks stamped them (`messageTime`).
    ...(Number.isFinite(told) ? { startedAt: messageTime(state.ledger, user, session, told) } : {}),
  }));
  return [next, [{ type: 'extract', user, session, prompt }]];
};

/** Merges the end of stage at the head of the queue (once: it leaves the queue with this holder's next call). */
const mergeHead = (state: NotesState, user: string, session: string, item: QueuedItem): NotesTransition => {
  const lease = leaseOf(selectConversation(state, user, session));
  const own = lease.mine.find((mine) => mine.seq === item.seq);
  const at = Math.max(item.at ?? Number.NEGATIVE_INFINITY, lease.lastAt ?? Number.NEGATIVE_INFINITY);
  const when = Number.isFinite(at) ? at : 0;
  const marked: NotesLeaseSlot = {
    ...lease,
    queue: lease.queue.slice(1),
    done: item.seq,
    // Its `merged` effect answers it here (once its save settles): not reported again when the store confirms it.
    mine: lease.mine.map((mine) => (mine.seq === item.seq ? { ...mine, counted: true } : mine)),
  };
  const stage = {
    session,
    at: when,
    waitFor: [],
    ...(own?.stage === undefined ? {} : { id: own.stage }),
    ...(lease.fence === undefined ? {} : { fence: lease.fence }),
  };
  return andThen(mergeStage(withLease(state, user, session, marked), user, stage, when), (merged) =>
    pump(merged, user, session),
  );
};

/** The call that adds what waits in the outbox, if anything does. */
const publish = (state: NotesState, user: string, session: string): NotesTransition =>
  leaseOf(selectConversation(state, user, session)).outbox.length > 0 ? call(state, user, session) : [state, []];

/**
 * The holder of (user, session) waits on the store: the save of its finished work failed (its
 * messages through `through` count), its load of the notes failed, or unsaved work of an earlier
 * turn waits to be refused (every message of its own in the queue counts). The work is not said
 * done, since work said done leaves the queue and nobody would redo it: those messages count as
 * settled here (as a failed save's do without leases, so that waiting does not wait for the
 * store), the save or the load is tried again after `pollMs`, twice as long each time up to a
 * third of the lease's time, and the lease is renewed at each try, with what waits in the outbox.
 * Should this tracker stop (closed, or its process ended), the lease expires and the tracker that
 * takes it next redoes the work from the queue.
 */
const retryLater = (
  state: NotesState,
  user: string,
  session: string,
  through = Number.POSITIVE_INFINITY,
): NotesTransition => {
  const lease = leaseOf(selectConversation(state, user, session));
  const isWaiting = (item: OwnItem): boolean => item.kind === 'message' && !item.counted && item.seq <= through;
  const waiting = lease.mine.filter(isWaiting);
  const counted: NotesLeaseSlot =
    waiting.length === 0
      ? lease
      : { ...lease, mine: lease.mine.map((item) => (isWaiting(item) ? { ...item, counted: true } : item)) };
  const settled = withLease(state, user, session, counted, settle(waiting.length));
  // A retry is due already: it makes the next renewal.
  if (lease.retryDue === true) return publish(settled, user, session);
  const { pollMs, ttlMs } = settingsOf(state);
  const retries = lease.retries ?? 0;
  const afterMs = Math.min(pollMs * 2 ** Math.min(retries, 52), Math.max(1, ttlMs / 3));
  const [renewed, effects] = call(
    withLease(settled, user, session, { ...counted, retryDue: true, retries: retries + 1 }),
    user,
    session,
  );
  return [renewed, [{ type: 'wake', user, session, afterMs }, ...effects]];
};

/**
 * Moves the lease of (user, session) on: makes the call the outbox or finished work needs, or
 * starts the next piece of work the queue holds. Starts no work while a call, an extraction or
 * a load runs, and reports finished work only once its save has landed.
 */
export const pump = (state: NotesState, user: string, session: string): NotesTransition => {
  const lease = selectConversation(state, user, session)?.lease;
  if (lease === undefined || lease.calling) return [state, []];
  // What is recorded here goes to the queue at once, even while this holder works: an end of
  // stage asked for elsewhere then comes after it, and waits for it.
  if (!lease.held || lease.working !== undefined) return publish(state, user, session);
  if (lease.done !== undefined) {
    if (isSessionSaved(state, user, session)) return call(state, user, session, lease.done);
    if (!isSaveStalled(state, user, session)) return publish(state, user, session);
    // The next piece of work goes on meanwhile: its save writes this one's too.
    return andThen(retryLater(state, user, session, lease.done), (next) => work(next, user, session));
  }
  return work(state, user, session);
};

/** Starts the next piece of work the queue of (user, session) holds, unless a load runs; lets the lease rest when none waits. */
const work = (state: NotesState, user: string, session: string): NotesTransition => {
  const lease = selectConversation(state, user, session)?.lease;
  if (lease === undefined || lease.calling || !lease.held || lease.working !== undefined) return [state, []];
  const storage = selectUserStorage(state, user);
  if (storage.loading.includes(storedKey(session))) return [state, []];
  // The notes were not read since the lease was taken: work on them would replace what the store
  // holds. (Before the next check, so that the load is tried again whatever the calls do.)
  if (storage.unloaded?.includes(storedKey(session)) === true) return retryLater(state, user, session);
  // The last call failed: the lease may have expired in the store, and another tracker may work
  // its queue now. No new work until a call is answered again: the call is made again now when
  // no wake-up is left to make it (a retry of a failed load took the one the failure set).
  if (lease.failures > 0)
    return lease.waking === false && lease.retryDue !== true ? call(state, user, session) : [state, []];
  // Unsaved work of an earlier turn of the lease is in the notes: no work of this turn starts from
  // them. Its save, tried again, is refused as fenced, and that work dropped and redone.
  if (isEarlierTurnUnsaved(state, user, session)) return retryLater(state, user, session);
  const head = lease.queue[0];
  // Nothing waits: the lease rests, unless finished work is still to be saved and said done.
  if (head === undefined)
    return lease.outbox.length > 0 || lease.done !== undefined
      ? publish(state, user, session)
      : [withLease(state, user, session, { ...lease, held: false }), []];
  // What was recorded here while the call that gave the lease ran goes to the queue as the
  // extraction starts, not once it ends: no call is made while it runs unless more is recorded
  // here, and a model call that outlasts a close would leave those messages in no queue at all.
  return head.kind === 'message'
    ? andThen(startBatch(state, user, session), (next) => publish(next, user, session))
    : mergeHead(state, user, session, head);
};

/** Moves on every lease of `user` that is not at rest (after a save or a load of theirs settled). */
export const pumpUser = (state: NotesState, user: string): NotesTransition =>
  selectUserMachine(state, user).leased.reduce<NotesTransition>(
    (done, key) => andThen(done, (next) => pump(next, user, idOfKey(key))),
    [state, []],
  );

/** An item recorded here (a user message, or an end of stage of a named session): into the outbox, and on. */
export const addToQueue = (state: NotesState, user: string, session: string, item: OutgoingItem): NotesTransition => {
  const lease = leaseOf(selectConversation(state, user, session));
  // Named once, here: a failed call sends the item again under the same key.
  const { instance } = settingsOf(state);
  const named = instance === undefined ? state : { ...state, issued: state.issued + 1 };
  const outgoing = instance === undefined ? item : { ...item, key: `${instance}:${state.issued}` };
  return pump(withLease(named, user, session, { ...lease, outbox: [...lease.outbox, outgoing] }), user, session);
};

/** The running extraction under the lease settled: apply it, save, and say it is done once the save has. */
export const extractionSettledWithLease = (state: NotesState, input: NotesExtractionSettled): NotesTransition => {
  const { user, session, outcome, at } = input;
  const conversation = selectConversation(state, user, session);
  if (conversation?.lease?.working === undefined) return [state, []];
  const { working, workFence, ...lease } = conversation.lease;
  const event = settleExtraction({ user, session }, outcome, at, state.ledger.categories, {
    previous: selectSessionFacts(state.ledger, user, session),
    ...(conversation.startedAt === undefined ? {} : { messagesAt: conversation.startedAt }),
  });
  const ledger = applyNotesEvent(state.ledger, event);
  const next: NotesLeaseSlot = {
    ...lease,
    done: working,
    worked: lease.worked + 1,
    lastAt: at,
    queue: lease.queue.filter((item) => item.seq > working),
  };
  const recorded: NotesTransition = [
    withLease(withLedger(state, ledger), user, session, next),
    [{ type: 'record', event }],
  ];
  // Saved when it changed the list, and also when the store holds no list of the session while
  // this tracker does (one of an `initial` ledger; a session whose save was refused as fenced is
  // let go of then): an extraction that gave it again unchanged would otherwise be said done unsaved.
  const unstored =
    event.type === 'notes/extracted' &&
    (PMap.get(selectUserStorage(state, user).sessions, storedKey(session)) ?? 0) === 0 &&
    selectSessionNotes(ledger, user, session) !== undefined;
  const saved =
    ledger === state.ledger && !unstored
      ? recorded
      : andThen(recorded, (after) => recordChanges(after, user, [event], workFence));
  return andThen(saved, (after) => pump(after, user, session));
};

/** Counts `items` (messages not counted yet) as settled here. */
const counting = (items: ReadonlyArray<{ kind: string; counted?: boolean }>): number =>
  items.filter((item) => item.kind === 'message' && item.counted !== true).length;

/** A conversation with `count` more of its messages settled here. */
const settle =
  (count: number) =>
  (conversation: NotesConversation): NotesConversation => {
    if (count === 0) return conversation;
    const settled = Math.min(conversation.requested, conversation.settled + count);
    return { ...conversation, settled, started: Math.max(conversation.started, settled) };
  };

/** A failed call: reported; its items wait to be sent again (counted as settled, not to hold up waiting), and it is tried again later. */
const callFailed = (state: NotesState, input: NotesLeaseAnswered, failed: NotesStoreFailure): NotesTransition => {
  const { user, session } = input;
  const lease = leaseOf(selectConversation(state, user, session));
  const { pollMs, ttlMs } = settingsOf(state);
  const failures = lease.failures + 1;
  // What the call reported stays to be reported (`done` is kept).
  const { sentDone: _unreported, ...kept } = lease;
  // A holder does no new work until a call is answered again: its messages waiting in the queue
  // count as settled here too, as those of the call do.
  const waiting = lease.held ? lease.mine.filter((item) => item.kind === 'message' && !item.counted) : [];
  const next: NotesLeaseSlot = {
    ...kept,
    calling: false,
    sending: [],
    answers: lease.answers + 1,
    outbox: [
      ...lease.sending.map((item) => (item.kind === 'message' ? { ...item, counted: true } : item)),
      ...lease.outbox,
    ],
    ...(waiting.length === 0
      ? {}
      : { mine: lease.mine.map((item) => (waiting.includes(item) ? { ...item, counted: true } : item)) }),
    failures,
    waking: lease.waking === false ? 'poll' : lease.waking,
  };
  const wake: NotesEffect[] =
    lease.waking === false
      ? [{ type: 'wake', user, session, afterMs: Math.min(pollMs * 2 ** (failures - 1), ttlMs) }]
      : [];
  return [
    withLease(state, user, session, next, settle(counting(lease.sending) + waiting.length)),
    [{ type: 'storeFailed', user, failure: failed }, ...wake],
  ];
};

/**
 * The store answered the lease call: the items it added have their numbers; what is done (below
 * the queue's head) is done; messages another holds are theirs (settled here); when this
 * tracker now holds the lease it loads the notes fresh and works through the queue; when it
 * does not and has items waiting, it looks again later.
 */
export const onLeaseAnswered = (state: NotesState, input: NotesLeaseAnswered): NotesTransition => {
  const { user, session, outcome } = input;
  const lease = selectConversation(state, user, session)?.lease;
  if (lease === undefined || !lease.calling) return [state, []];
  if (E.isLeft(outcome)) return callFailed(state, input, outcome.left);
  const answer = outcome.right;
  const added: OwnItem[] = lease.sending.map((item, i) => ({
    seq: answer.added[i] ?? Number.MAX_SAFE_INTEGER,
    kind: item.kind,
    ...(item.stage === undefined ? {} : { stage: item.stage }),
    counted: item.counted === true,
  }));
  const head = answer.head ?? Number.POSITIVE_INFINITY;
  const mine = [...lease.mine, ...added];
  const done = mine.filter((item) => item.seq < head);
  const waiting = mine.filter((item) => item.seq >= head);
  // Messages in another holder's queue are theirs now: waiting here does not wait for them.
  const handed = answer.held ? [] : waiting;
  const reported = done.flatMap((item) =>
    item.kind === 'stage' && !item.counted && item.stage !== undefined ? [item.stage] : [],
  );
  const { pollMs } = settingsOf(state);
  const kept = waiting.map((item) => (answer.held || item.kind !== 'message' ? item : { ...item, counted: true }));
  // Soon while an end of stage of this machine waits in another's queue, else when that lease would expire.
  const wanted =
    answer.held || kept.length === 0 ? false : kept.some((item) => item.kind === 'stage') ? 'poll' : 'expiry';
  const wakes = wanted !== false && (lease.waking === false || (wanted === 'poll' && lease.waking === 'expiry'));
  const expires = answer.expiresInMs ?? 0;
  // The finished work the call reported is acknowledged; work finished while it ran (a call that
  // only added items) is still to report, and its items stay out of the queue worked through.
  const { done: finished, sentDone, fence: _turn, retries, ...rest } = lease;
  const pending = finished !== undefined && (sentDone === undefined || finished > sentDone) ? finished : undefined;
  const next: NotesLeaseSlot = {
    ...rest,
    // A turn taken afresh starts its retries afresh.
    ...(retries === undefined || !lease.held || !answer.held ? {} : { retries }),
    ...(pending === undefined ? {} : { done: pending }),
    ...(sentDone === undefined ? {} : { acknowledged: Math.max(lease.acknowledged ?? sentDone, sentDone) }),
    calling: false,
    sending: [],
    answers: lease.answers + 1,
    failures: 0,
    mine: kept,
    held: answer.held,
    ...(answer.held && answer.fence !== undefined ? { fence: answer.fence } : {}),
    queue: answer.held ? queueAfter(answer.queue, pending) : [],
    waking: wakes ? wanted : lease.waking,
    reporting: [...lease.reporting, ...reported],
  };
  const wake: NotesEffect[] = wakes
    ? [
        {
          type: 'wake',
          user,
          session,
          afterMs: wanted === 'poll' ? Math.min(pollMs, expires + EXPIRY_MARGIN_MS) : expires + EXPIRY_MARGIN_MS,
        },
      ]
    : [];
  const reportedDone = sentDone === undefined ? state : unfence(state, user, session);
  const stepped: NotesTransition = [
    withLease(reportedDone, user, session, next, settle(counting(done) + counting(handed))),
    wake,
  ];
  // Taking the lease, or items done by another holder: the notes changed elsewhere, so they load again.
  // Or a turn of the lease taken again after another's (its fence changed while this tracker thought it held it).
  const turned =
    lease.held &&
    answer.held &&
    lease.fence !== undefined &&
    answer.fence !== undefined &&
    answer.fence !== lease.fence;
  const fresh = turned || (!lease.held && (answer.held || done.length > 0));
  const loaded = fresh ? andThen(stepped, (after) => reloadAfresh(after, user, session)) : stepped;
  return andThen(
    andThen(loaded, (after) => reportStages(after, user, session)),
    (after) => pump(after, user, session),
  );
};

/**
 * Answers the ends of stage of this tracker that another holder merged, once the notes have
 * loaded again (the report names the profile as the store holds it now).
 */
export const reportStages = (state: NotesState, user: string, session: string): NotesTransition => {
  const lease = selectConversation(state, user, session)?.lease;
  if (lease === undefined || lease.reporting.length === 0) return [state, []];
  if (selectUserStorage(state, user).loading.includes(storedKey(session))) return [state, []];
  // Merged once at least (by this stage, done by then): later extractions there may have made it unmerged again.
  const merged = selectSessionNotes(state.ledger, user, session)?.mergedAt === undefined ? [] : [session];
  const profile = selectGlobalFacts(state.ledger, user);
  return [
    withLease(state, user, session, { ...lease, reporting: [] }),
    lease.reporting.map((stage): NotesEffect => ({
      type: 'merged',
      user,
      sessions: merged,
      dropped: [],
      ...(profile === undefined ? {} : { profile }),
      stage,
    })),
  ];
};

/** The wake-up is due: look at the lease again (a call with whatever waits in the outbox). */
export const onLeaseWoke = (state: NotesState, user: string, session: string): NotesTransition => {
  const lease = selectConversation(state, user, session)?.lease;
  // A wake-up overtaken by a sooner one may still come: looking again once more costs one call.
  if (lease === undefined) return [state, []];
  const { retryDue, ...rest } = lease;
  const awake = withLease(state, user, session, retryDue === true ? rest : { ...rest, waking: false });
  // The save of the finished work, or the load of the notes, failed: tried again now.
  if (retryDue === true) {
    if (lease.held && selectUserStorage(awake, user).unloaded?.includes(storedKey(session)) === true)
      return reload(awake, user, session);
    return lease.held && isSaveStalled(awake, user, session)
      ? andThen(saveAgain(awake, user), (next) => pump(next, user, session))
      : pump(awake, user, session);
  }
  if (lease.calling || lease.held || isLeaseAtRest(lease)) return pump(awake, user, session);
  return call(awake, user, session);
};

/**
 * This tracker lost the lease of (user, session) while it worked: a save of that work was
 * refused as `fenced`. It stops as a holder without saying its work done (the items stay in the
 * queue, for the tracker that took the lease over), and asks again where the lease stands.
 */
const leaseLost = (state: NotesState, user: string, session: string): NotesTransition => {
  const lease = selectConversation(state, user, session)?.lease;
  if (lease === undefined) return [state, []];
  const { done: _unsaved, fence: _turn, retries: _failed, ...rest } = lease;
  const lost = withLease(state, user, session, { ...rest, held: false, queue: [] });
  return lease.calling ? [lost, []] : call(lost, user, session);
};

/** The store answered a save with leases: taken as without them, a lease it was fenced by lost, then every lease of the user moved on. */
export const onSaveAnsweredWithLease = (state: NotesState, input: NotesSaved): NotesTransition => {
  const { user, outcome } = input;
  const lost = E.isLeft(outcome) && outcome.left.code === 'fenced' ? selectFencedSessions(state, user) : [];
  const saved = lost.reduce<NotesTransition>(
    (done, key) => andThen(done, (next) => leaseLost(next, user, idOfKey(key))),
    applySaveAnswer(state, input),
  );
  return andThen(saved, (next) => pumpUser(next, user));
};
