/**
 * The notable-facts shell: the shared shell binding (`base/shell.ts`: state, event log,
 * listeners) over the pure notes machine (`transition.ts`), plus what no pure code may do:
 * the clock, the model calls and their timeouts, and the promises of `endStage` and
 * `settled`. It guarantees that no call throws and none waits for the model.
 */
import * as E from 'fp-ts/lib/Either.js';
import { describeError, describeValue } from '../base/describe.js';
import { deepFreeze } from '../persistent/freeze.js';
import * as PMap from '../persistent/persistentMap.js';
import { createShell } from '../shell/shell.js';
import { type ConversationMessage, selectRecentTurns } from './conversation.js';
import { applyNotesEvent, type NotesEvent } from './events.js';
import { formatNotesBlocks, type NotesBlocks } from './format.js';
import type { GlobalFacts } from './global.js';
import { type NotesLedger, selectGlobalFacts } from './ledger.js';
import { type CategorizedFact, isNotesId, type NoteCategory } from './model.js';
import type { CompleteFn, ModelOutcome } from './port.js';
import {
  initialNotesState,
  type NotesEffect,
  type NotesInput,
  type NotesState,
  notesTransition,
  selectConversation,
  selectProfileRewrite,
  selectUserConversations,
} from './transition.js';

/** The default time an extraction may take before it is abandoned and recorded as a timeout. */
export const DEFAULT_TIMEOUT_MS = 15_000;

/** The longest timeout a timer can wait (2^31 - 1 ms, about 24.8 days): a longer one would fire at once. */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** The events the tracker keeps by default; older ones fold into the log's snapshot (`eventLog`). */
export const DEFAULT_MAX_EVENTS = 10_000;

/** Options of `createNotableFactsTracker`. */
export interface NotableFactsTrackerOptions {
  /** The model call: `(prompt, { signal }) => Promise<string>`; abort when `signal` fires. */
  readonly complete: CompleteFn;
  /** The categories, names or `{ name, description }` (default: the five defaults). */
  readonly categories?: ReadonlyArray<string | NoteCategory>;
  /** The number of facts the extraction prompt asks the model to stay within (default 18). */
  readonly softLimit?: number;
  /** Milliseconds a model call may take, from the moment it is made (default 15,000; at most 2^31 - 1). */
  readonly timeoutMs?: number;
  /** Epoch milliseconds now (default `Date.now`). */
  readonly now?: () => number;
  /** Exchanges `contextFor` returns as the history window (default 5). */
  readonly historyTurns?: number;
  /** A ledger to start from, such as one read back from a saved state. */
  readonly initial?: NotesLedger;
  /** After each end of stage, also have the model rewrite the merged profile (default false). */
  readonly consolidateWithModel?: boolean;
  /** The most events `events()` keeps (default 10,000); older ones fold into the snapshot of `eventLog()`. */
  readonly maxEvents?: number;
}

/** The event log as a ledger and the events since it: `replayNotes(events, snapshot)` is the current ledger. */
export interface NotesEventLog {
  readonly snapshot: NotesLedger;
  readonly events: ReadonlyArray<NotesEvent>;
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
   * into the user's profile, once the extractions of the messages recorded before the call
   * have settled (never later ones: it ends under continuous traffic). Never rejects.
   */
  endStage(user: string, session?: string): Promise<StageReport>;
  /** Resolves when the model calls running or queued at the call have settled (not calls asked for later). */
  settled(): Promise<void>;
  getSnapshot(): NotesLedger;
  subscribe(listener: NotesListener): () => void;
  /** The recorded events (the changes, and the failed and timed-out model calls): every one, up to `maxEvents`. */
  events(): ReadonlyArray<NotesEvent>;
  /** The log as a snapshot and the events since it, which rebuild the ledger however long the tracker ran. */
  eventLog(): NotesEventLog;
}

/** Something `endStage` or `settled` waits for: the conversation or rewrite `key` to have settled `target` requests. */
interface Waiter {
  readonly remaining: Map<string, number>;
  readonly resume: () => void;
}

const positive = (value: unknown, fallback: number): number =>
  typeof value === 'number' && value > 0 && Number.isFinite(value) ? value : fallback;

const timeout = (timeoutMs: number): ModelOutcome =>
  E.left({ reason: 'timeout', message: `no answer within ${timeoutMs} ms` });

/**
 * Calls the model with a timeout. The clock starts when `complete` is called, a microtask
 * after the message was recorded (neither a slow nor a throwing `complete` runs inside the
 * caller's call), so time the host spends on other work first is not the model's. When the
 * time is up the event loop gets one more turn: an answer that arrived while the host was busy
 * is delivered before a timer that fell due at the same moment. The answer races the timer, so
 * a call that never settles (and ignores its signal) still ends. Never rejects.
 */
const callModel = (complete: CompleteFn, prompt: string, timeoutMs: number): Promise<ModelOutcome> =>
  new Promise((resolve) => {
    let done = false;
    const finish = (outcome: ModelOutcome): void => {
      if (done) return;
      done = true;
      resolve(outcome);
    };
    const call = (): void => {
      const controller = new AbortController();
      const timer = setTimeout(
        () =>
          setTimeout(() => {
            if (done) return;
            finish(timeout(timeoutMs));
            controller.abort(new Error(`timed out after ${timeoutMs} ms`));
          }, 0),
        timeoutMs,
      );
      const answered = (outcome: ModelOutcome): void => {
        clearTimeout(timer);
        finish(outcome);
      };
      Promise.resolve()
        .then(() => complete(prompt, { signal: controller.signal }))
        .then(
          (text: unknown): ModelOutcome =>
            typeof text === 'string'
              ? E.right(text)
              : E.left({
                  reason: 'model_error',
                  message: `complete resolved to ${text === null ? 'null' : typeof text}, not text`,
                }),
          (error: unknown): ModelOutcome => E.left({ reason: 'model_error', message: describeError(error) }),
        )
        .then(answered, (error: unknown) => answered(E.left({ reason: 'model_error', message: describeError(error) })));
    };
    void Promise.resolve().then(call);
  });

const conversationKey = (user: string, session: string): string => JSON.stringify(['extract', user, session]);
const rewriteKey = (user: string): string => JSON.stringify(['rewrite', user]);

/** Creates a tracker over an empty ledger (or `initial`). */
export const createNotableFactsTracker = (options: NotableFactsTrackerOptions): NotableFactsTracker => {
  const settings: Partial<NotableFactsTrackerOptions> = typeof options === 'object' && options !== null ? options : {};
  const complete: CompleteFn =
    typeof settings.complete === 'function'
      ? settings.complete
      : () => Promise.reject(new Error('no complete function was given'));
  const now = typeof settings.now === 'function' ? settings.now : Date.now;
  const timeoutMs = Math.min(positive(settings.timeoutMs, DEFAULT_TIMEOUT_MS), MAX_TIMEOUT_MS);

  const shell = createShell<NotesState, NotesEvent>({
    initial: initialNotesState({
      ...(settings.categories === undefined ? {} : { categories: settings.categories }),
      ...(settings.softLimit === undefined ? {} : { softLimit: settings.softLimit }),
      ...(settings.historyTurns === undefined ? {} : { historyTurns: settings.historyTurns }),
      ...(settings.initial === undefined ? {} : { ledger: settings.initial }),
      consolidateWithModel: settings.consolidateWithModel === true,
    }),
    // What the log folds into its snapshot: the ledger part (conversations are not logged).
    reduce: (state, event) => ({ ...state, ledger: applyNotesEvent(state.ledger, event) }),
    logUnchanged: true,
    maxEvents: Math.floor(positive(settings.maxEvents, DEFAULT_MAX_EVENTS)),
  });
  const waiters = new Map<string, Set<Waiter>>();
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

  /** Resumes the waiters of `key` that `progress` satisfies. */
  const progressed = (key: string, progress: number): void => {
    const waiting = waiters.get(key);
    if (waiting === undefined) return;
    for (const waiter of [...waiting]) {
      if (progress < waiter.remaining.get(key)!) continue;
      waiting.delete(waiter);
      waiter.remaining.delete(key);
      if (waiter.remaining.size === 0) waiter.resume();
    }
    if (waiting.size === 0) waiters.delete(key);
  };

  /** Waits until each key has settled its target number of requests. */
  const waitFor = (targets: ReadonlyArray<readonly [string, number, number]>): Promise<void> => {
    const pending = targets.filter(([, progress, target]) => progress < target);
    if (pending.length === 0) return Promise.resolve();
    return new Promise((resume) => {
      const waiter: Waiter = { remaining: new Map(pending.map(([key, , target]) => [key, target])), resume };
      for (const [key] of pending) {
        const waiting = waiters.get(key) ?? new Set<Waiter>();
        waiters.set(key, waiting.add(waiter));
      }
    });
  };

  /** Runs one input through the machine and its effects; returns the effects. */
  const step = (input: NotesInput): ReadonlyArray<NotesEffect> => {
    const [next, effects] = notesTransition(shell.getState(), input);
    shell.update(
      next,
      effects.flatMap((effect) => (effect.type === 'record' ? [effect.event] : [])),
    );
    for (const effect of effects) {
      if (effect.type === 'extract') {
        const { user, session } = effect;
        void callModel(complete, effect.prompt, timeoutMs).then((outcome) =>
          settle({ type: 'notes/extractionSettled', user, session, outcome, at: time() }),
        );
      } else if (effect.type === 'rewriteProfile') {
        const { user } = effect;
        void callModel(complete, effect.prompt, timeoutMs).then((outcome) =>
          settle({ type: 'notes/profileRewriteSettled', user, outcome, at: time() }),
        );
      }
    }
    if (input.type === 'notes/extractionSettled') {
      const conversation = selectConversation(shell.getState(), input.user, input.session);
      if (conversation !== undefined) progressed(conversationKey(input.user, input.session), conversation.settled);
    } else if (input.type === 'notes/profileRewriteSettled')
      progressed(rewriteKey(input.user), selectProfileRewrite(shell.getState(), input.user).settled);
    return effects;
  };

  /** Feeds a model's outcome back, away from any caller: nothing may escape as an unhandled rejection. */
  const settle = (input: NotesInput): void => {
    try {
      step(input);
    } catch {
      // Nothing to report to: the state stays as the last successful step left it.
    }
  };

  const consolidate = (user: string, session: string | undefined): StageReport => {
    const effects = step({ type: 'notes/stageEnded', user, ...(session === undefined ? {} : { session }), at: time() });
    const merged = effects.find((effect) => effect.type === 'merged');
    return {
      user,
      sessions: merged?.sessions ?? [],
      profile: selectGlobalFacts(shell.getState().ledger, user),
      dropped: merged?.dropped ?? [],
    };
  };

  const endStage = (user: string, session: string | undefined): Promise<StageReport> => {
    const targets = selectUserConversations(shell.getState(), user)
      .filter(([id]) => session === undefined || id === session)
      .map(([id, conversation]) => [conversationKey(user, id), conversation.settled, conversation.requested] as const);
    const pending = waitFor(targets);
    const report = (): StageReport => {
      try {
        return consolidate(user, session);
      } catch {
        return { user, sessions: [], profile: selectGlobalFacts(shell.getState().ledger, user), dropped: [] };
      }
    };
    return targets.every(([, progress, target]) => progress >= target)
      ? Promise.resolve(report())
      : pending.then(report);
  };

  const settled = (): Promise<void> => {
    const state = shell.getState();
    const targets: Array<readonly [string, number, number]> = [];
    for (const user of PMap.keys(state.conversations))
      for (const [session, conversation] of selectUserConversations(state, user))
        targets.push([conversationKey(user, session), conversation.settled, conversation.requested]);
    PMap.forEach(state.rewrites, (rewrite, user) =>
      targets.push([rewriteKey(user), rewrite.settled, rewrite.requested]),
    );
    return waitFor(targets);
  };

  const emptyContext: NotesContext = deepFreeze({ profile: '', session: '', text: '', history: [] });
  const noStage = (user: unknown): Promise<StageReport> =>
    Promise.resolve({ user: describeValue(user), sessions: [], profile: undefined, dropped: [] });

  return {
    recordUserMessage: (user, session, text) => {
      try {
        if (!isNotesId(user) || !isNotesId(session) || typeof text !== 'string' || text.trim() === '') return 'ignored';
        const effects = step({ type: 'notes/userMessageRecorded', user, session, text });
        return effects.some((effect) => effect.type === 'extract') ? 'started' : 'coalesced';
      } catch {
        return 'ignored';
      }
    },
    recordAssistantMessage: (user, session, text) => {
      try {
        step({ type: 'notes/assistantMessageRecorded', user, session, text });
      } catch {
        // Bad input is ignored.
      }
    },
    contextFor: (user, session) => {
      try {
        const state = shell.getState();
        const transcript = selectConversation(state, user, session)?.transcript ?? [];
        return {
          ...formatNotesBlocks(state.ledger, user, session),
          history: selectRecentTurns(transcript, state.settings.historyTurns),
        };
      } catch {
        return emptyContext;
      }
    },
    endStage: (user, session) => {
      try {
        if (!isNotesId(user) || (session !== undefined && !isNotesId(session))) return noStage(user);
        return endStage(user, session);
      } catch {
        return noStage(user);
      }
    },
    settled: () => {
      try {
        return settled();
      } catch {
        return Promise.resolve();
      }
    },
    getSnapshot: () => shell.getState().ledger,
    subscribe: (listener) => {
      if (typeof listener !== 'function') return () => undefined;
      return shell.subscribe((next, previous) => {
        if (next.ledger !== previous.ledger) listener(next.ledger, previous.ledger);
      });
    },
    events: () => shell.events(),
    eventLog: () => {
      const { snapshot, events } = shell.eventLog();
      return { snapshot: snapshot.ledger, events };
    },
  };
};
