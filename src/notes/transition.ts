/**
 * The notes machine as one pure transition, in the manner of xstate's `transition()`: a state
 * (the ledger and the conversations it is kept from) and one input in, the next state and the
 * effects out. An effect is data: "ask the model this prompt for this user and session", "log
 * this event", "this stage merged these sessions". The live tracker runs the effects against a
 * model; the log replay answers them with recorded text. Every prompt is built here, so the two
 * cannot drift: the same conversation gives the same prompts in both.
 *
 * Scheduling is state too: per (user, session) at most one extraction runs, and the user
 * messages recorded meanwhile are folded into one follow-up. Counters say what is covered:
 * `requested` user messages, of which the running (or last) extraction covers the first
 * `started`, and the last settled one the first `settled`. So "wait for what was asked before
 * now" is a comparison, and waiting never depends on traffic that comes later.
 */
import * as E from 'fp-ts/lib/Either.js';
import { describeValue } from '../base/describe.js';
import { deepFreeze } from '../persistent/freeze.js';
import * as PMap from '../persistent/persistentMap.js';
import { endStageWithReport } from './consolidateSession.js';
import { appendMessage, type ConversationMessage, DEFAULT_HISTORY_TURNS } from './conversation.js';
import { applyNotesEvent, type NotesEvent } from './events.js';
import type { GlobalFacts } from './global.js';
import {
  emptyNotesLedger,
  idOfKey,
  type NotesLedger,
  selectGlobalFacts,
  selectSessionFacts,
  storedKey,
} from './ledger.js';
import {
  type CategorizedFact,
  DEFAULT_CATEGORIES,
  describeCategories,
  isNotesId,
  NOTES_LIMITS,
  type NoteCategory,
  parseCategories,
} from './model.js';
import { type ModelOutcome, settleExtraction, settleProfileRewrite } from './port.js';
import { buildNotableFactsPrompt, buildProfileConsolidationPrompt, DEFAULT_PROMPT_TURNS } from './prompt.js';

/** The most exchanges an extraction prompt shows, however many messages a follow-up covers. */
export const MAX_PROMPT_TURNS = 10;

/** How the machine builds prompts and keeps conversations. */
export interface NotesSettings {
  /** The ledger's categories, with the descriptions the prompts show. */
  readonly categories: ReadonlyArray<NoteCategory>;
  /** The number of facts the extraction prompt asks the model to stay within. */
  readonly softLimit: number;
  /** Exchanges the history window of the main prompt keeps. */
  readonly historyTurns: number;
  /** After each end of stage that changed a profile, ask the model to rewrite it. */
  readonly consolidateWithModel: boolean;
}

/** One user's conversation in one session: its recent messages and its extractions. */
export interface NotesConversation {
  /** The recent messages, oldest first: bounded, enough for the history window and the next prompt. */
  readonly transcript: ReadonlyArray<ConversationMessage>;
  /** Extractions asked for: one per user message. */
  readonly requested: number;
  /** The requests the running (or last) extraction covers. */
  readonly started: number;
  /** The requests covered by the extractions that have settled. */
  readonly settled: number;
}

/** One user's model-backed profile rewrites, counted as the extractions are. */
export interface NotesProfileRewrite {
  readonly requested: number;
  readonly started: number;
  readonly settled: number;
  /** The profile the running rewrite was asked about: a rewrite of an older profile is not applied. */
  readonly basis?: GlobalFacts;
}

/** The machine's state: the ledger, and the conversations and rewrites that keep it. Plain, frozen data. */
export interface NotesState {
  readonly settings: NotesSettings;
  readonly ledger: NotesLedger;
  /** Per user, their conversations by session (stored through `storedKey`). */
  readonly conversations: PMap.PersistentMap<Readonly<Record<string, NotesConversation>>>;
  readonly rewrites: PMap.PersistentMap<NotesProfileRewrite>;
}

/** A user message was recorded: extract now, or fold it into the follow-up of the running extraction. */
export interface NotesUserMessageRecorded {
  readonly type: 'notes/userMessageRecorded';
  readonly user: string;
  readonly session: string;
  readonly text: string;
}

/** An assistant reply was recorded: it shows in the history window and in later prompts. */
export interface NotesAssistantMessageRecorded {
  readonly type: 'notes/assistantMessageRecorded';
  readonly user: string;
  readonly session: string;
  readonly text: string;
}

/** An extraction of the latest user message was asked for, with no new message (a recorded log does this). */
export interface NotesExtractionRequested {
  readonly type: 'notes/extractionRequested';
  readonly user: string;
  readonly session: string;
}

/** The running extraction of (user, session) has an outcome. */
export interface NotesExtractionSettled {
  readonly type: 'notes/extractionSettled';
  readonly user: string;
  readonly session: string;
  readonly outcome: ModelOutcome;
  readonly at: number;
}

/** A stage ended for a user: merge `session` (default: every session with unmerged facts) into the profile. */
export interface NotesStageEnded {
  readonly type: 'notes/stageEnded';
  readonly user: string;
  readonly session?: string;
  readonly at: number;
}

/** The running profile rewrite of a user has an outcome. */
export interface NotesProfileRewriteSettled {
  readonly type: 'notes/profileRewriteSettled';
  readonly user: string;
  readonly outcome: ModelOutcome;
  readonly at: number;
}

/** What the machine is told. */
export type NotesInput =
  | NotesUserMessageRecorded
  | NotesAssistantMessageRecorded
  | NotesExtractionRequested
  | NotesExtractionSettled
  | NotesStageEnded
  | NotesProfileRewriteSettled;

/** Ask the model `prompt` for the fact list of `user` in `session`; answer with `notes/extractionSettled`. */
export interface NotesExtractEffect {
  readonly type: 'extract';
  readonly user: string;
  readonly session: string;
  readonly prompt: string;
}

/** Ask the model `prompt` to rewrite the profile of `user`; answer with `notes/profileRewriteSettled`. */
export interface NotesRewriteProfileEffect {
  readonly type: 'rewriteProfile';
  readonly user: string;
  readonly prompt: string;
}

/** An event the transition applied to the ledger: log it (the log replays to the ledger). */
export interface NotesRecordEffect {
  readonly type: 'record';
  readonly event: NotesEvent;
}

/** An end of stage merged `sessions` (in merge order) into the profile; `dropped` fell off past the cap. */
export interface NotesMergedEffect {
  readonly type: 'merged';
  readonly user: string;
  readonly sessions: ReadonlyArray<string>;
  readonly dropped: ReadonlyArray<CategorizedFact>;
}

/** What the runner of the machine does after a transition, as data. */
export type NotesEffect = NotesExtractEffect | NotesRewriteProfileEffect | NotesRecordEffect | NotesMergedEffect;

/** The next state and the effects to run. */
export type NotesTransition = readonly [NotesState, ReadonlyArray<NotesEffect>];

/** Options of `initialNotesState`. */
export interface NotesStateOptions {
  /** The categories, names or `{ name, description }` (default: the five defaults). */
  readonly categories?: ReadonlyArray<string | NoteCategory>;
  /** Default 18, at most 25. */
  readonly softLimit?: number;
  /** Default 5. */
  readonly historyTurns?: number;
  /** Default false. */
  readonly consolidateWithModel?: boolean;
  /** A ledger to start from; its categories win, described by `categories` where they name them. */
  readonly ledger?: NotesLedger;
}

const positive = (value: unknown, fallback: number): number =>
  typeof value === 'number' && value > 0 && Number.isFinite(value) ? value : fallback;

const isLedger = (value: unknown): value is NotesLedger =>
  typeof value === 'object' &&
  value !== null &&
  Array.isArray((value as NotesLedger).categories) &&
  typeof (value as NotesLedger).users === 'object' &&
  (value as NotesLedger).users !== null;

/** The state of a machine that has seen nothing yet (or only the ledger it starts from). */
export const initialNotesState = (options: NotesStateOptions = {}): NotesState => {
  const settings: NotesStateOptions = typeof options === 'object' && options !== null ? options : {};
  const known = E.getOrElse(() => DEFAULT_CATEGORIES)(parseCategories(settings.categories));
  const ledger = isLedger(settings.ledger) ? deepFreeze(settings.ledger) : emptyNotesLedger({ categories: known });
  return deepFreeze({
    settings: {
      categories: describeCategories(ledger.categories, known),
      softLimit: Math.min(Math.floor(positive(settings.softLimit, NOTES_LIMITS.softLimit)), NOTES_LIMITS.hardCap),
      historyTurns: Math.floor(positive(settings.historyTurns, DEFAULT_HISTORY_TURNS)),
      consolidateWithModel: settings.consolidateWithModel === true,
    },
    ledger,
    conversations: PMap.empty,
    rewrites: PMap.empty,
  });
};

const EMPTY_CONVERSATION: NotesConversation = deepFreeze({ transcript: [], requested: 0, started: 0, settled: 0 });
const NO_REWRITE: NotesProfileRewrite = deepFreeze({ requested: 0, started: 0, settled: 0 });

/** The conversation of `user` in `session`, if anything was recorded for it. */
export const selectConversation = (state: NotesState, user: string, session: string): NotesConversation | undefined => {
  const sessions = PMap.get(state.conversations, user);
  const key = storedKey(session);
  return sessions !== undefined && Object.hasOwn(sessions, key) ? sessions[key] : undefined;
};

/** The conversations of `user`, by session. */
export const selectUserConversations = (
  state: NotesState,
  user: string,
): ReadonlyArray<readonly [string, NotesConversation]> =>
  Object.entries(PMap.get(state.conversations, user) ?? {}).map(([key, conversation]) => [idOfKey(key), conversation]);

/** The profile rewrites of `user` so far. */
export const selectProfileRewrite = (state: NotesState, user: string): NotesProfileRewrite =>
  PMap.get(state.rewrites, user) ?? NO_REWRITE;

/** True while an extraction of the conversation runs. */
export const isExtracting = (conversation: NotesConversation): boolean => conversation.started > conversation.settled;

const withConversation = (
  state: NotesState,
  user: string,
  session: string,
  conversation: NotesConversation,
): NotesState =>
  Object.freeze({
    ...state,
    conversations: PMap.set(
      state.conversations,
      user,
      deepFreeze({ ...PMap.get(state.conversations, user), [storedKey(session)]: conversation }),
    ),
  });

const withLedger = (state: NotesState, ledger: NotesLedger): NotesState =>
  ledger === state.ledger ? state : Object.freeze({ ...state, ledger });

/** The exchanges an extraction covering `coalesced` more messages than its own shows. */
const promptTurns = (coalesced: number): number => Math.min(DEFAULT_PROMPT_TURNS + coalesced, MAX_PROMPT_TURNS);

/** Messages recorded while an extraction runs, waiting for its follow-up. */
const waiting = (conversation: NotesConversation): number =>
  isExtracting(conversation) ? conversation.requested - conversation.started : 0;

/**
 * Appends a message, keeping what the history window and the next prompt can still show: a
 * follow-up shows one more exchange per message it covers (up to `MAX_PROMPT_TURNS`) before its own.
 */
const record = (
  settings: NotesSettings,
  conversation: NotesConversation,
  message: ConversationMessage,
): ReadonlyArray<ConversationMessage> =>
  appendMessage(
    conversation.transcript,
    message,
    Math.max(settings.historyTurns, promptTurns(waiting(conversation) + 1) + 1),
  );

/**
 * Starts the extraction covering every request so far (a follow-up shows one more exchange per
 * message it folds in, `coalesced`), or only stores the conversation when it keeps no user message.
 */
const startExtraction = (
  state: NotesState,
  user: string,
  session: string,
  conversation: NotesConversation,
  coalesced: number,
): NotesTransition => {
  const { transcript } = conversation;
  let latest = transcript.length - 1;
  while (latest >= 0 && transcript[latest]?.role !== 'user') latest -= 1;
  if (latest < 0) return [withConversation(state, user, session, conversation), []];
  const prompt = buildNotableFactsPrompt({
    message: transcript[latest]!.content,
    history: transcript.slice(0, latest),
    facts: selectSessionFacts(state.ledger, user, session),
    categories: state.settings.categories,
    softLimit: state.settings.softLimit,
    turns: promptTurns(coalesced),
  });
  const started = { ...conversation, started: conversation.requested };
  return [withConversation(state, user, session, started), [{ type: 'extract', user, session, prompt }]];
};

/** Starts the rewrite covering every request so far, when the user has a profile to rewrite. */
const startRewrite = (state: NotesState, user: string, rewrite: NotesProfileRewrite): NotesTransition => {
  const profile = selectGlobalFacts(state.ledger, user);
  const next: NotesProfileRewrite =
    profile === undefined
      ? { requested: rewrite.requested, started: rewrite.requested, settled: rewrite.requested }
      : { requested: rewrite.requested, started: rewrite.requested, settled: rewrite.settled, basis: profile };
  const nextState = Object.freeze({ ...state, rewrites: PMap.set(state.rewrites, user, deepFreeze(next)) });
  if (profile === undefined) return [nextState, []];
  const prompt = buildProfileConsolidationPrompt({ facts: profile.facts, categories: state.settings.categories });
  return [nextState, [{ type: 'rewriteProfile', user, prompt }]];
};

const onUserMessage = (state: NotesState, input: NotesUserMessageRecorded): NotesTransition => {
  const { user, session, text } = input;
  if (!isNotesId(user) || !isNotesId(session) || typeof text !== 'string' || text.trim() === '') return [state, []];
  const conversation = selectConversation(state, user, session) ?? EMPTY_CONVERSATION;
  const next: NotesConversation = {
    ...conversation,
    transcript: record(state.settings, conversation, { role: 'user', content: text }),
    requested: conversation.requested + 1,
  };
  return isExtracting(next)
    ? [withConversation(state, user, session, next), []]
    : startExtraction(state, user, session, next, 0);
};

const onAssistantMessage = (state: NotesState, input: NotesAssistantMessageRecorded): NotesTransition => {
  const { user, session, text } = input;
  if (!isNotesId(user) || !isNotesId(session) || typeof text !== 'string' || text.trim() === '') return [state, []];
  const conversation = selectConversation(state, user, session) ?? EMPTY_CONVERSATION;
  const transcript = record(state.settings, conversation, { role: 'assistant', content: text });
  return [withConversation(state, user, session, { ...conversation, transcript }), []];
};

const onExtractionRequested = (state: NotesState, input: NotesExtractionRequested): NotesTransition => {
  const conversation = selectConversation(state, input.user, input.session);
  if (conversation === undefined || isExtracting(conversation)) return [state, []];
  const [next, effects] = startExtraction(
    state,
    input.user,
    input.session,
    { ...conversation, requested: conversation.requested + 1 },
    0,
  );
  return effects.length === 0 ? [state, []] : [next, effects];
};

const onExtractionSettled = (state: NotesState, input: NotesExtractionSettled): NotesTransition => {
  const { user, session, outcome, at } = input;
  const conversation = selectConversation(state, user, session);
  if (conversation === undefined || !isExtracting(conversation)) return [state, []];
  const event = settleExtraction({ user, session }, outcome, at, state.ledger.categories);
  const settled = withLedger(state, applyNotesEvent(state.ledger, event));
  const next: NotesConversation = { ...conversation, settled: conversation.started };
  const recorded: NotesEffect = { type: 'record', event };
  if (next.requested === next.started) return [withConversation(settled, user, session, next), [recorded]];
  const [followed, effects] = startExtraction(settled, user, session, next, next.requested - next.started);
  return [followed, [recorded, ...effects]];
};

const onStageEnded = (state: NotesState, input: NotesStageEnded): NotesTransition => {
  const { user, session, at } = input;
  if (!isNotesId(user) || (session !== undefined && !isNotesId(session)) || !Number.isFinite(at))
    return [state, [{ type: 'merged', user: describeValue(user), sessions: [], dropped: [] }]];
  const before = selectGlobalFacts(state.ledger, user);
  const result = endStageWithReport(state.ledger, { user, ...(session === undefined ? {} : { session }), at });
  const merged = withLedger(state, result.ledger);
  const effects: NotesEffect[] = [
    ...result.events.map((event): NotesEffect => ({ type: 'record', event })),
    { type: 'merged', user, sessions: result.sessions, dropped: result.dropped },
  ];
  const after = selectGlobalFacts(merged.ledger, user);
  if (!state.settings.consolidateWithModel || after === before || after === undefined) return [merged, effects];
  const rewrite = selectProfileRewrite(merged, user);
  const requested = { ...rewrite, requested: rewrite.requested + 1 };
  if (requested.started > requested.settled)
    return [Object.freeze({ ...merged, rewrites: PMap.set(merged.rewrites, user, deepFreeze(requested)) }), effects];
  const [next, asked] = startRewrite(merged, user, requested);
  return [next, [...effects, ...asked]];
};

const onProfileRewriteSettled = (state: NotesState, input: NotesProfileRewriteSettled): NotesTransition => {
  const { user, outcome, at } = input;
  const rewrite = selectProfileRewrite(state, user);
  if (rewrite.started <= rewrite.settled) return [state, []];
  // A rewrite of a profile that has changed since would undo the newer merge: that merge asked for another.
  const current = selectGlobalFacts(state.ledger, user) === rewrite.basis;
  const event = current ? settleProfileRewrite(user, outcome, at, state.ledger.categories) : undefined;
  const applied = event === undefined ? state : withLedger(state, applyNotesEvent(state.ledger, event));
  const done: NotesProfileRewrite = {
    requested: current ? rewrite.requested : Math.max(rewrite.requested, rewrite.started + 1),
    started: rewrite.started,
    settled: rewrite.started,
  };
  const recorded: NotesEffect[] = event === undefined ? [] : [{ type: 'record', event }];
  if (done.requested === done.started)
    return [Object.freeze({ ...applied, rewrites: PMap.set(applied.rewrites, user, deepFreeze(done)) }), recorded];
  const [next, asked] = startRewrite(applied, user, done);
  return [next, [...recorded, ...asked]];
};

/**
 * The transition: the state after `input` and the effects to run. Pure and total: an input it
 * cannot use (bad ids, an answer nothing waits for) leaves the very same state and no effect.
 */
export const notesTransition = (state: NotesState, input: NotesInput): NotesTransition => {
  if (typeof input !== 'object' || input === null) return [state, []];
  switch (input.type) {
    case 'notes/userMessageRecorded':
      return onUserMessage(state, input);
    case 'notes/assistantMessageRecorded':
      return onAssistantMessage(state, input);
    case 'notes/extractionRequested':
      return onExtractionRequested(state, input);
    case 'notes/extractionSettled':
      return onExtractionSettled(state, input);
    case 'notes/stageEnded':
      return onStageEnded(state, input);
    case 'notes/profileRewriteSettled':
      return onProfileRewriteSettled(state, input);
    default:
      return [state, []];
  }
};
