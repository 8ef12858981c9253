/**
 * The notable-facts shell: one mutable binding holding the ledger, the event log, a listener
 * set, and the scheduling of model calls. Everything it changes goes through the pure
 * reducers; it only adds the clock, the model, timeouts, and the guarantee that no call
 * throws and none waits for the model.
 */
import * as E from 'fp-ts/lib/Either.js';
import { deepFreeze } from '../base/immer.js';
import { endStageWithReport } from './consolidateSession.js';
import {
  type ConversationMessage,
  DEFAULT_HISTORY_TURNS,
  selectRecentTurns,
  splitRecentTurns,
} from './conversation.js';
import { applyNotesEvent, type NotesEvent } from './events.js';
import { formatNotesBlocks, type NotesBlocks } from './format.js';
import type { GlobalFacts } from './global.js';
import { emptyNotesLedger, type NotesLedger, selectGlobalFacts, selectSessionFacts } from './ledger.js';
import {
  type CategorizedFact,
  DEFAULT_CATEGORIES,
  describeCategories,
  isNotesId,
  NOTES_LIMITS,
  type NoteCategory,
  parseCategories,
} from './model.js';
import { type CompleteFn, type ModelOutcome, type NotesSlot, settleExtraction, settleProfileRewrite } from './port.js';
import { buildNotableFactsPrompt, buildProfileConsolidationPrompt, DEFAULT_PROMPT_TURNS } from './prompt.js';

/** The default time an extraction may take before it is abandoned and recorded as a timeout. */
export const DEFAULT_TIMEOUT_MS = 15_000;

/** Options of `createNotableFactsTracker`. */
export interface NotableFactsTrackerOptions {
  /** The model call: `(prompt, { signal }) => Promise<string>`; abort when `signal` fires. */
  readonly complete: CompleteFn;
  /** The categories, names or `{ name, description }` (default: the five defaults). */
  readonly categories?: ReadonlyArray<string | NoteCategory>;
  /** The number of facts the extraction prompt asks the model to stay within (default 18). */
  readonly softLimit?: number;
  /** Milliseconds a model call may take (default 15,000). */
  readonly timeoutMs?: number;
  /** Epoch milliseconds now (default `Date.now`). */
  readonly now?: () => number;
  /** Exchanges `contextFor` returns as the history window (default 5). */
  readonly historyTurns?: number;
  /** A ledger to start from, such as one read back from a saved state. */
  readonly initial?: NotesLedger;
  /** After each end of stage, also have the model rewrite the merged profile (default false). */
  readonly consolidateWithModel?: boolean;
}

/** What `recordUserMessage` did: started an extraction, folded the message into the next one, or ignored bad input. */
export type RecordOutcome = 'started' | 'coalesced' | 'ignored';

/** What the main prompt of `user` in `session` gets: the rendered blocks and the recent exchanges. */
export interface NotesContext extends NotesBlocks {
  /** The last exchanges (default 5) recorded for this user and session, oldest first. */
  readonly history: ReadonlyArray<ConversationMessage>;
}

/** What an end of stage merged into a user's profile. */
export interface StageReport {
  readonly user: string;
  /** The sessions whose facts were merged, in merge order. */
  readonly sessions: ReadonlyArray<string>;
  readonly profile: GlobalFacts | undefined;
  /** The profile facts that fell off past the cap of 50. */
  readonly dropped: ReadonlyArray<CategorizedFact>;
}

/** Called after a change of the ledger. */
export type NotesListener = (next: NotesLedger, previous: NotesLedger) => void;

/** Notable facts per user and session, kept by a model in the background. No method throws. */
export interface NotableFactsTracker {
  /** Records the message and schedules an extraction; returns at once, never waiting for the model. */
  recordUserMessage(user: string, session: string, text: string): RecordOutcome;
  /** Records the assistant's reply, for the extraction prompt and the history window. */
  recordAssistantMessage(user: string, session: string, text: string): void;
  /** The blocks and history window for the next main prompt of `user` in `session`. */
  contextFor(user: string, session: string): NotesContext;
  /**
   * Ends a stage: merges `session` (default: every session of the user with unmerged facts)
   * into the user's profile, once that session's running extraction has settled. Never rejects.
   */
  endStage(user: string, session?: string): Promise<StageReport>;
  /** Resolves when no model call is running or queued. */
  settled(): Promise<void>;
  getSnapshot(): NotesLedger;
  subscribe(listener: NotesListener): () => void;
  /** Every recorded event: the changes, and the failed and timed-out model calls. */
  events(): ReadonlyArray<NotesEvent>;
}

/** One (user, session): its recent transcript and its extraction state. */
interface Slot extends NotesSlot {
  transcript: ReadonlyArray<ConversationMessage>;
  running: boolean;
  /** User messages recorded while an extraction ran: they coalesce into one follow-up. */
  waiting: number;
  /** Ends of stage waiting for this slot to settle. */
  whenIdle: Array<() => void>;
}

/** One user's model-backed profile rewrite: at most one runs; a newer merge queues one more. */
interface Rewrite {
  running: boolean;
  again: boolean;
}

/**
 * Runs work the shell does after a model call, away from any caller: nothing may escape it as
 * an unhandled rejection, and the scheduling around it must go on.
 */
const guard = (work: () => void): void => {
  try {
    work();
  } catch {
    // Nothing to report to: the state stays as the last successful step left it.
  }
};

const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error));

const positive = (value: unknown, fallback: number): number =>
  typeof value === 'number' && value > 0 && Number.isFinite(value) ? value : fallback;

const isLedger = (value: unknown): value is NotesLedger =>
  typeof value === 'object' &&
  value !== null &&
  Array.isArray((value as NotesLedger).categories) &&
  typeof (value as NotesLedger).users === 'object' &&
  (value as NotesLedger).users !== null;

/**
 * Calls the model with a timeout. The answer races the timer, so a call that never settles
 * (and ignores its signal) still ends; whatever it does later is ignored. Never rejects.
 */
const callModel = (complete: CompleteFn, prompt: string, timeoutMs: number): Promise<ModelOutcome> =>
  new Promise((resolve) => {
    const controller = new AbortController();
    const timer = setTimeout(() => {
      resolve(E.left({ reason: 'timeout', message: `no answer within ${timeoutMs} ms` }));
      controller.abort(new Error(`timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    // A microtask away, so neither a slow nor a throwing `complete` runs inside the caller's call.
    Promise.resolve()
      .then(() => complete(prompt, { signal: controller.signal }))
      .then(
        (text): ModelOutcome =>
          typeof text === 'string'
            ? E.right(text)
            : E.left({
                reason: 'model_error',
                message: `complete resolved to ${text === null ? 'null' : typeof text}, not text`,
              }),
        (error: unknown): ModelOutcome => E.left({ reason: 'model_error', message: errorText(error) }),
      )
      .then((outcome) => {
        clearTimeout(timer);
        resolve(outcome);
      });
  });

/** Creates a tracker over an empty ledger (or `initial`). */
export const createNotableFactsTracker = (options: NotableFactsTrackerOptions): NotableFactsTracker => {
  const settings: Partial<NotableFactsTrackerOptions> = typeof options === 'object' && options !== null ? options : {};
  const complete: CompleteFn =
    typeof settings.complete === 'function'
      ? settings.complete
      : () => Promise.reject(new Error('no complete function was given'));
  const now = typeof settings.now === 'function' ? settings.now : Date.now;
  const timeoutMs = positive(settings.timeoutMs, DEFAULT_TIMEOUT_MS);
  const historyTurns = Math.floor(positive(settings.historyTurns, DEFAULT_HISTORY_TURNS));
  const softLimit = Math.min(Math.floor(positive(settings.softLimit, NOTES_LIMITS.softLimit)), NOTES_LIMITS.hardCap);
  const described = E.getOrElse(() => DEFAULT_CATEGORIES)(parseCategories(settings.categories));

  let state = isLedger(settings.initial) ? settings.initial : emptyNotesLedger({ categories: described });
  /** The ledger's categories, with the descriptions the options or the defaults give them. */
  const promptCategories = describeCategories(state.categories, described);
  const log: NotesEvent[] = [];
  const listeners = new Set<NotesListener>();
  const slots = new Map<string, Slot>();
  const rewrites = new Map<string, Rewrite>();
  let running = 0;
  let idleWaiters: Array<() => void> = [];
  let lastTime = 0;

  /** The clock; one that fails or returns a non-finite value counts as the last good time. */
  const time = (): number => {
    try {
      const value = now();
      if (typeof value === 'number' && Number.isFinite(value)) lastTime = value;
    } catch {
      // Keep the last good time.
    }
    return lastTime;
  };

  /** Logs events and applies them (or takes `next`, already computed from them), notifying once on a change. */
  const commit = (events: ReadonlyArray<NotesEvent>, next?: NotesLedger): void => {
    const previous = state;
    state = next ?? events.reduce(applyNotesEvent, state);
    for (const event of events) log.push(deepFreeze(event));
    if (state === previous) return;
    for (const listener of [...listeners]) {
      try {
        listener(state, previous);
      } catch {
        // A failing listener must not break the caller or the other listeners.
      }
    }
  };

  const slotFor = (user: string, session: string): Slot => {
    const key = JSON.stringify([user, session]);
    let slot = slots.get(key);
    if (slot === undefined)
      slots.set(key, (slot = { user, session, transcript: [], running: false, waiting: 0, whenIdle: [] }));
    return slot;
  };

  /**
   * Keeps what the history window and the next extraction can still show: a follow-up
   * extraction shows 3 exchanges plus one per coalesced message before its own message.
   */
  const append = (slot: Slot, message: ConversationMessage): void => {
    const keep = Math.max(historyTurns, DEFAULT_PROMPT_TURNS + slot.waiting + 2);
    slot.transcript = splitRecentTurns([...slot.transcript, message], keep).recent;
  };

  const settle = (): void => {
    running -= 1;
    if (running > 0) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const resolve of waiters) resolve();
  };

  const startExtraction = (slot: Slot, coalesced: number): void => {
    let latest = slot.transcript.length - 1;
    while (latest > 0 && slot.transcript[latest]?.role !== 'user') latest -= 1;
    const prompt = buildNotableFactsPrompt({
      message: slot.transcript[latest]?.content ?? '',
      history: slot.transcript.slice(0, Math.max(latest, 0)),
      facts: selectSessionFacts(state, slot.user, slot.session),
      categories: promptCategories,
      softLimit,
      turns: DEFAULT_PROMPT_TURNS + coalesced,
    });
    slot.running = true;
    running += 1;
    void callModel(complete, prompt, timeoutMs).then((outcome) => {
      guard(() => commit([settleExtraction(slot, outcome, time(), state.categories)]));
      finishExtraction(slot);
    });
  };

  /** Starts the coalesced follow-up if messages came in meanwhile; otherwise wakes the ends of stage waiting. */
  const finishExtraction = (slot: Slot): void => {
    slot.running = false;
    const coalesced = slot.waiting;
    slot.waiting = 0;
    // Should the follow-up fail to start, the messages stay unextracted and the next message tries again.
    if (coalesced > 0) guard(() => startExtraction(slot, coalesced));
    if (!slot.running) {
      const waiters = slot.whenIdle;
      slot.whenIdle = [];
      for (const resume of waiters) resume();
    }
    settle();
  };

  const startRewrite = (user: string): void => {
    const rewrite = rewrites.get(user) ?? { running: false, again: false };
    rewrites.set(user, rewrite);
    if (rewrite.running) {
      rewrite.again = true;
      return;
    }
    const profile = selectGlobalFacts(state, user);
    if (profile === undefined) return;
    const prompt = buildProfileConsolidationPrompt({ facts: profile.facts, categories: promptCategories });
    rewrite.running = true;
    running += 1;
    void callModel(complete, prompt, timeoutMs).then((outcome) => {
      // A rewrite of a profile that has changed since would lose the newer merge: ask again instead.
      if (selectGlobalFacts(state, user) === profile)
        guard(() => commit([settleProfileRewrite(user, outcome, time(), state.categories)]));
      else rewrite.again = true;
      rewrite.running = false;
      if (rewrite.again) {
        rewrite.again = false;
        guard(() => startRewrite(user));
      }
      settle();
    });
  };

  const consolidate = (user: string, session: string | undefined): StageReport => {
    const before = selectGlobalFacts(state, user);
    const result = endStageWithReport(state, { user, ...(session === undefined ? {} : { session }), at: time() });
    commit(result.events, result.ledger);
    const profile = selectGlobalFacts(state, user);
    if (settings.consolidateWithModel === true && profile !== before && profile !== undefined) startRewrite(user);
    return { user, sessions: result.sessions, profile, dropped: result.dropped };
  };

  const endStage = (user: string, session: string | undefined): Promise<StageReport> => {
    const busy = [...slots.values()].filter(
      (slot) => slot.user === user && (session === undefined || slot.session === session) && slot.running,
    );
    if (busy.length === 0) return Promise.resolve(consolidate(user, session));
    return new Promise((resolve) => {
      let remaining = busy.length;
      const resume = (): void => {
        remaining -= 1;
        if (remaining > 0) return;
        try {
          resolve(consolidate(user, session));
        } catch {
          resolve({ user, sessions: [], profile: selectGlobalFacts(state, user), dropped: [] });
        }
      };
      for (const slot of busy) slot.whenIdle.push(resume);
    });
  };

  const emptyContext: NotesContext = deepFreeze({ profile: '', session: '', text: '', history: [] });

  return {
    recordUserMessage: (user, session, text) => {
      try {
        if (!isNotesId(user) || !isNotesId(session) || typeof text !== 'string' || text.trim() === '') return 'ignored';
        const slot = slotFor(user, session);
        append(slot, { role: 'user', content: text });
        if (slot.running) {
          slot.waiting += 1;
          return 'coalesced';
        }
        startExtraction(slot, 0);
        return 'started';
      } catch {
        return 'ignored';
      }
    },
    recordAssistantMessage: (user, session, text) => {
      try {
        if (isNotesId(user) && isNotesId(session) && typeof text === 'string' && text.trim() !== '')
          append(slotFor(user, session), { role: 'assistant', content: text });
      } catch {
        // Bad input is ignored.
      }
    },
    contextFor: (user, session) => {
      try {
        const history = slots.get(JSON.stringify([user, session]))?.transcript ?? [];
        return { ...formatNotesBlocks(state, user, session), history: selectRecentTurns(history, historyTurns) };
      } catch {
        return emptyContext;
      }
    },
    endStage: (user, session) => {
      try {
        if (!isNotesId(user) || (session !== undefined && !isNotesId(session)))
          return Promise.resolve({ user: String(user), sessions: [], profile: undefined, dropped: [] });
        return endStage(user, session);
      } catch {
        return Promise.resolve({ user: String(user), sessions: [], profile: undefined, dropped: [] });
      }
    },
    settled: () => (running === 0 ? Promise.resolve() : new Promise((resolve) => idleWaiters.push(resolve))),
    getSnapshot: () => state,
    subscribe: (listener) => {
      if (typeof listener !== 'function') return () => undefined;
      const entry: NotesListener = (next, previous) => listener(next, previous);
      listeners.add(entry);
      return () => {
        listeners.delete(entry);
      };
    },
    events: () => Object.freeze([...log]),
  };
};
