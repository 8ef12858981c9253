/**
 * Replaying a recorded conversation through the ledger: user and assistant messages, the
 * model's recorded answers to the extractions, and ends of stage, as JSON Lines. No model is
 * called: the log is run through the same machine as the live tracker (`notesTransition`),
 * each recorded answer settling the extraction the tracker would have had running, so the
 * replay builds the very prompts the tracker asked and shows exactly what the main model would
 * have been given at every message.
 */
import { estimateTokens, type TokenCounter } from '../tokens/estimate.js';
import { type ConversationMessage, DEFAULT_HISTORY_TURNS, splitRecentTurns } from './conversation.js';
import { formatNotesBlocks } from './format.js';
import type { GlobalFacts } from './global.js';
import {
  type NotesLedger,
  type NotesLedgerOptions,
  selectGlobalFacts,
  selectSessionFacts,
  selectUserIds,
} from './ledger.js';
import type { NotesEffect, NotesInput } from './inputs.js';
import {
  type NotesLogEndStage,
  type NotesLogError,
  type NotesLogExtraction,
  type NotesLogMessage,
  parseNotesLog,
} from './log.js';
import { initialNotesState, isExtracting, type NotesState, selectConversation } from './machine.js';
import type { CategorizedFact, ModelFailure } from './model.js';
import { memoryNotesStore } from './store.js';
import { stepMachine } from './runner.js';

/** What the main prompt of one user message would get. */
export interface NotesMessageStep {
  readonly kind: 'message';
  readonly line: number;
  readonly at: number;
  readonly user: string;
  readonly session: string;
  /** This user's message number in this session, from 1. */
  readonly turn: number;
  readonly text: string;
  /** The session facts available for the reply (from the extractions of earlier messages). */
  readonly facts: ReadonlyArray<CategorizedFact>;
  readonly profileFacts: number;
  /** The rendered blocks, profile first; `''` when there is nothing yet. */
  readonly blocks: string;
  readonly blockTokens: number;
  /** Messages and tokens of the history window the main prompt keeps (this message included). */
  readonly windowMessages: number;
  readonly windowTokens: number;
  /** Messages and tokens of the older history the blocks stand in for. */
  readonly trimmedMessages: number;
  readonly trimmedTokens: number;
}

/** What a recorded extraction did to the user's list. */
export interface NotesExtractionStep {
  readonly kind: 'extraction';
  readonly line: number;
  readonly at: number;
  readonly user: string;
  readonly session: string;
  readonly outcome: 'applied' | 'failed';
  /** Why it failed; the list stayed as it was. */
  readonly failure?: ModelFailure;
  /** The list after the extraction. */
  readonly facts: ReadonlyArray<CategorizedFact>;
  readonly added: ReadonlyArray<CategorizedFact>;
  readonly removed: ReadonlyArray<CategorizedFact>;
  readonly warnings: ReadonlyArray<string>;
  /** Tokens of the extraction prompt the recorded answer replied to. */
  readonly promptTokens: number;
}

/** What an end of stage merged into a profile. */
export interface NotesStageStep {
  readonly kind: 'stage';
  readonly line: number;
  readonly at: number;
  readonly user: string;
  readonly sessions: ReadonlyArray<string>;
  readonly profileFacts: number;
  readonly sessionCount: number;
  readonly dropped: ReadonlyArray<CategorizedFact>;
}

/** One reported step of a replay, in log order (assistant messages are recorded, not reported). */
export type NotesReplayStep = NotesMessageStep | NotesExtractionStep | NotesStageStep;

/** Totals of a replay. */
export interface NotesReplaySummary {
  readonly users: number;
  readonly sessions: number;
  readonly userMessages: number;
  readonly assistantMessages: number;
  readonly extractions: number;
  readonly failedExtractions: number;
  readonly stages: number;
  /** Summed over the user messages: the blocks, the kept window, and the trimmed history. */
  readonly blockTokens: number;
  readonly windowTokens: number;
  readonly trimmedTokens: number;
}

/** The report of a replay. */
export interface NotesReplayReport {
  readonly steps: ReadonlyArray<NotesReplayStep>;
  readonly errors: ReadonlyArray<NotesLogError>;
  readonly profiles: ReadonlyArray<{ readonly user: string; readonly profile: GlobalFacts }>;
  readonly summary: NotesReplaySummary;
}

/** A replay's report and the ledger it ends with. */
export interface NotesReplayResult {
  readonly report: NotesReplayReport;
  readonly ledger: NotesLedger;
}

/** Options of `replayConversationLog`: those of the tracker that recorded the log, for the same prompts. */
export interface NotesReplayOptions extends NotesLedgerOptions {
  readonly countTokens?: TokenCounter;
  /** Exchanges the main prompt keeps (default 5). */
  readonly turns?: number;
  /** The number of facts the extraction prompt asks the model to stay within (default 18). */
  readonly softLimit?: number;
}

const slotKey = (user: string, session: string): string => JSON.stringify([user, session]);

const without = (facts: ReadonlyArray<CategorizedFact>, others: ReadonlyArray<CategorizedFact>): CategorizedFact[] =>
  facts.filter((fact) => !others.some((other) => other.category === fact.category && other.fact === fact.fact));

const tokensOf = (countTokens: TokenCounter, messages: ReadonlyArray<ConversationMessage>): number =>
  messages.reduce((sum, message) => sum + countTokens(message.content), 0);

/** What the report counts of one (user, session): all its messages, not only the recent ones the machine keeps. */
interface Totals {
  userMessages: number;
  messages: number;
  tokens: number;
}

/**
 * Replays a conversation log: per user message the blocks its reply would get (facts from the
 * extractions recorded before it: N+1 timing) and their token cost against the history they
 * replace; per extraction the change to the list; per end of stage the merge into the profile.
 * An extraction line answers the extraction the live tracker would have running for that user
 * and session (messages recorded meanwhile fold into one follow-up, as they do live); with none
 * running, it answers a new extraction of the latest user message.
 */
export const replayConversationLog = (text: string, options: NotesReplayOptions = {}): NotesReplayResult => {
  const countTokens = options.countTokens ?? estimateTokens;
  const turns =
    typeof options.turns === 'number' && options.turns >= 0 ? Math.floor(options.turns) : DEFAULT_HISTORY_TURNS;
  const parsed = parseNotesLog(typeof text === 'string' ? text : '');
  const errors: NotesLogError[] = [...parsed.errors];
  const steps: NotesReplayStep[] = [];
  let state: NotesState = initialNotesState({
    ...(options.categories === undefined ? {} : { categories: options.categories }),
    ...(options.softLimit === undefined ? {} : { softLimit: options.softLimit }),
    historyTurns: turns,
  });
  /** The prompt of the extraction running per (user, session): what its recorded answer replies to. */
  const prompts = new Map<string, string>();
  const totals = new Map<string, Totals>();
  const users = new Set<string>();
  const sessions = new Set<string>();
  let assistantMessages = 0;

  /** The store the replay's loads and saves go to: in memory, answering at once, as the tracker's default. */
  const store = memoryNotesStore();

  /** Runs `input` and the store answers it leads to; returns the effects of `input` itself. */
  const run = (input: NotesInput): ReadonlyArray<NotesEffect> => {
    // The memory store answers at once: nothing ever arrives later.
    const step = stepMachine(state, input, store, () => undefined);
    state = step.state;
    for (const effect of step.effects)
      if (effect.type === 'extract') prompts.set(slotKey(effect.user, effect.session), effect.prompt);
    return step.first;
  };

  const onMessage = (entry: NotesLogMessage): void => {
    const key = slotKey(entry.user, entry.session);
    const total = totals.get(key) ?? totals.set(key, { userMessages: 0, messages: 0, tokens: 0 }).get(key)!;
    total.messages += 1;
    total.tokens += countTokens(entry.text);
    users.add(entry.user);
    sessions.add(entry.session);
    run({
      type: entry.type === 'user' ? 'notes/userMessageRecorded' : 'notes/assistantMessageRecorded',
      user: entry.user,
      session: entry.session,
      text: entry.text,
    });
    if (entry.type === 'assistant') {
      assistantMessages += 1;
      return;
    }
    total.userMessages += 1;
    const blocks = formatNotesBlocks(state.ledger, entry.user, entry.session).text;
    const transcript = selectConversation(state, entry.user, entry.session)?.transcript ?? [];
    const window = splitRecentTurns(transcript, turns).recent;
    const windowTokens = tokensOf(countTokens, window);
    steps.push({
      kind: 'message',
      line: entry.line,
      at: entry.at,
      user: entry.user,
      session: entry.session,
      turn: total.userMessages,
      text: entry.text,
      facts: selectSessionFacts(state.ledger, entry.user, entry.session),
      profileFacts: selectGlobalFacts(state.ledger, entry.user)?.facts.length ?? 0,
      blocks,
      blockTokens: blocks === '' ? 0 : countTokens(blocks),
      windowMessages: window.length,
      windowTokens,
      trimmedMessages: total.messages - window.length,
      trimmedTokens: total.tokens - windowTokens,
    });
  };

  const onExtraction = (entry: NotesLogExtraction): void => {
    const { user, session } = entry;
    const conversation = selectConversation(state, user, session);
    if (conversation === undefined || !isExtracting(conversation))
      run({ type: 'notes/extractionRequested', user, session });
    const prompt = prompts.get(slotKey(user, session));
    if (prompt === undefined || !isExtracting(selectConversation(state, user, session)!)) {
      errors.push({
        line: entry.line,
        code: 'no_message',
        message: `no message of ${JSON.stringify(user)} in ${JSON.stringify(session)} comes before this extraction`,
      });
      return;
    }
    const before = selectSessionFacts(state.ledger, user, session);
    const effects = run({ type: 'notes/extractionSettled', user, session, outcome: entry.outcome, at: entry.at });
    const event = effects.flatMap((effect) => (effect.type === 'record' ? [effect.event] : []))[0];
    const after = selectSessionFacts(state.ledger, user, session);
    steps.push({
      kind: 'extraction',
      line: entry.line,
      at: entry.at,
      user,
      session,
      outcome: event?.type === 'notes/extracted' ? 'applied' : 'failed',
      ...(event?.type === 'notes/extractionFailed' ? { failure: { code: event.code, message: event.message } } : {}),
      facts: after,
      added: without(after, before),
      removed: without(before, after),
      warnings: event?.type === 'notes/extracted' ? (event.warnings ?? []) : [],
      promptTokens: countTokens(prompt),
    });
  };

  const onEndStage = (entry: NotesLogEndStage): void => {
    const effects = run({
      type: 'notes/stageEnded',
      user: entry.user,
      ...(entry.session === undefined ? {} : { session: entry.session }),
      at: entry.at,
    });
    const merged = effects.find((effect) => effect.type === 'merged');
    const profile = selectGlobalFacts(state.ledger, entry.user);
    steps.push({
      kind: 'stage',
      line: entry.line,
      at: entry.at,
      user: entry.user,
      sessions: merged?.sessions ?? [],
      profileFacts: profile?.facts.length ?? 0,
      sessionCount: profile?.sessionCount ?? 0,
      dropped: merged?.dropped ?? [],
    });
  };

  for (const entry of parsed.entries) {
    if (entry.type === 'extraction') onExtraction(entry);
    else if (entry.type === 'endStage') onEndStage(entry);
    else onMessage(entry);
  }
  errors.sort((a, b) => a.line - b.line);
  const { ledger } = state;
  const messages = steps.filter((step): step is NotesMessageStep => step.kind === 'message');
  const extractions = steps.filter((step): step is NotesExtractionStep => step.kind === 'extraction');
  const sum = (pick: (step: NotesMessageStep) => number): number =>
    messages.reduce((total, step) => total + pick(step), 0);
  const profiles = selectUserIds(ledger).flatMap((user) => {
    const profile = selectGlobalFacts(ledger, user);
    return profile === undefined ? [] : [{ user, profile }];
  });
  return {
    ledger,
    report: {
      steps,
      errors,
      profiles,
      summary: {
        users: users.size,
        sessions: sessions.size,
        userMessages: messages.length,
        assistantMessages,
        extractions: extractions.length,
        failedExtractions: extractions.filter((step) => step.outcome === 'failed').length,
        stages: steps.filter((step) => step.kind === 'stage').length,
        blockTokens: sum((step) => step.blockTokens),
        windowTokens: sum((step) => step.windowTokens),
        trimmedTokens: sum((step) => step.trimmedTokens),
      },
    },
  };
};
