/**
 * Replaying a recorded conversation through the ledger: user and assistant messages, the
 * model's recorded answers to the extractions and profile rewrites, and ends of stage, as JSON
 * Lines. No model is
 * called: the log is run through the same machine as the live tracker (`notesTransition`),
 * each recorded answer settling the extraction the tracker would have had running, so the
 * replay builds the very prompts the tracker asked and shows exactly what the main model would
 * have been given at every message.
 */
import { checkedTokenCount } from '../tokens/checked.js';
import { estimateTokens, type TokenCounter } from '../tokens/estimate.js';
import { type ConversationMessage, splitRecentTurns, turnCount } from './conversation.js';
import { formatNotesBlocks } from './format.js';
import { selectGlobalFacts, selectSessionFacts, selectUserIds } from './ledger.js';
import type { NotesEffect, NotesInput, NotesMergedEffect } from './inputs.js';
import type {
  NotesExtractionStep,
  NotesMessageStep,
  NotesReplayOptions,
  NotesReplayResult,
  NotesReplayStep,
  NotesStageStep,
} from './replayReport.js';
import {
  type NotesLogEndStage,
  type NotesLogError,
  type NotesLogExtraction,
  type NotesLogMessage,
  type NotesLogRewrite,
  parseNotesLog,
} from './log.js';
import {
  initialNotesState,
  isExtracting,
  type NotesState,
  selectConversation,
  selectProfileRewrite,
} from './machine.js';
import { type CategorizedFact, unusableCategories } from './model.js';
import { memoryNotesStore } from './store.js';
import { stepMachine } from './runner.js';

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
 * running, it answers a new extraction of the latest user message. Categories the tracker would
 * not use (`parseCategories` refuses them) throw a TypeError naming them, as a counter that
 * answers no number of tokens does.
 */
export const replayConversationLog = (text: string, given: NotesReplayOptions = {}): NotesReplayResult => {
  // A JavaScript caller may pass null.
  const options: NotesReplayOptions = typeof given === 'object' && given !== null ? given : {};
  const counter = options.countTokens ?? estimateTokens;
  // The caller's counter: an answer that is no number of tokens throws, naming it.
  const countTokens: TokenCounter = (text) => checkedTokenCount(counter(text));
  const turns = turnCount(options.turns);
  // The tracker tells `onError` of categories it cannot use; the pure replay has no such channel,
  // and a replay under the five defaults would file the log's facts under categories never chosen.
  const unusable = unusableCategories(options.categories);
  if (unusable !== undefined) throw new TypeError(`the categories option cannot be used: ${unusable}`);
  // A log that is no text (null) is refused by name, as `parseNotesLog` and `replayHistory` refuse it.
  const parsed = parseNotesLog(text);
  const errors: NotesLogError[] = [...parsed.errors];
  const steps: NotesReplayStep[] = [];
  let state: NotesState = initialNotesState({
    ...(options.categories === undefined ? {} : { categories: options.categories }),
    ...(options.softLimit === undefined ? {} : { softLimit: options.softLimit }),
    ...(options.consolidateWithModel === undefined ? {} : { consolidateWithModel: options.consolidateWithModel }),
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

  /** The ends of stage waiting, by their line: reported when the machine merges them. */
  const waitingStages = new Map<number, NotesLogEndStage>();

  const stageStep = (entry: NotesLogEndStage, merged: NotesMergedEffect | undefined, line: number): NotesStageStep => {
    const profile = selectGlobalFacts(state.ledger, entry.user);
    return {
      kind: 'stage',
      line: entry.line,
      at: entry.at,
      user: entry.user,
      sessions: merged?.sessions ?? [],
      profileFacts: profile?.facts.length ?? 0,
      sessionCount: profile?.sessionCount ?? 0,
      dropped: merged?.dropped ?? [],
      ...(merged === undefined ? { waiting: true as const } : line === entry.line ? {} : { mergedAt: line }),
    };
  };

  /** Runs `input` (read at `line`) and the store answers it leads to; returns the effects of `input` itself. */
  const run = (input: NotesInput, line: number): ReadonlyArray<NotesEffect> => {
    // The memory store answers at once: nothing ever arrives later.
    const step = stepMachine(state, input, store, () => undefined);
    state = step.state;
    for (const effect of step.effects)
      if (effect.type === 'extract') prompts.set(slotKey(effect.user, effect.session), effect.prompt);
      else if (effect.type === 'merged' && effect.stage !== undefined) {
        const entry = waitingStages.get(effect.stage);
        if (entry === undefined) continue;
        waitingStages.delete(effect.stage);
        steps.push(stageStep(entry, effect, line));
      }
    return step.first;
  };

  const onMessage = (entry: NotesLogMessage): void => {
    const key = slotKey(entry.user, entry.session);
    const total = totals.get(key) ?? totals.set(key, { userMessages: 0, messages: 0, tokens: 0 }).get(key)!;
    total.messages += 1;
    total.tokens += countTokens(entry.text);
    users.add(entry.user);
    sessions.add(entry.session);
    run(
      entry.type === 'user'
        ? {
            type: 'notes/userMessageRecorded',
            user: entry.user,
            session: entry.session,
            text: entry.text,
            at: entry.at,
          }
        : { type: 'notes/assistantMessageRecorded', user: entry.user, session: entry.session, text: entry.text },
      entry.line,
    );
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
      run({ type: 'notes/extractionRequested', user, session }, entry.line);
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
    const effects = run(
      { type: 'notes/extractionSettled', user, session, outcome: entry.outcome, at: entry.at },
      entry.line,
    );
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
    waitingStages.set(entry.line, entry);
    run(
      {
        type: 'notes/stageEnded',
        user: entry.user,
        ...(entry.session === undefined ? {} : { session: entry.session }),
        at: entry.at,
        id: entry.line,
      },
      entry.line,
    );
  };

  const onRewrite = (entry: NotesLogRewrite): void => {
    const { user } = entry;
    const rewrite = selectProfileRewrite(state, user);
    if (rewrite.started <= rewrite.settled) {
      errors.push({
        line: entry.line,
        code: 'no_rewrite',
        message: `no rewrite of the profile of ${JSON.stringify(user)} is running: an end of stage asks for one`,
      });
      return;
    }
    const effects = run(
      { type: 'notes/profileRewriteSettled', user, outcome: entry.outcome, at: entry.at },
      entry.line,
    );
    const event = effects.flatMap((effect) => (effect.type === 'record' ? [effect.event] : []))[0];
    steps.push({
      kind: 'rewrite',
      line: entry.line,
      at: entry.at,
      user,
      outcome: event === undefined ? 'stale' : event.type === 'notes/profileRewriteFailed' ? 'failed' : 'applied',
      ...(event?.type === 'notes/profileRewriteFailed'
        ? { failure: { code: event.code, message: event.message } }
        : {}),
      profileFacts: selectGlobalFacts(state.ledger, user)?.facts.length ?? 0,
      warnings: event?.type === 'notes/profileRewritten' ? (event.warnings ?? []) : [],
    });
  };

  for (const entry of parsed.entries) {
    if (entry.type === 'extraction') onExtraction(entry);
    else if (entry.type === 'endStage') onEndStage(entry);
    else if (entry.type === 'rewrite') onRewrite(entry);
    else onMessage(entry);
  }
  for (const entry of waitingStages.values()) steps.push(stageStep(entry, undefined, entry.line));
  // A stage that waited is reported at its own line: steps read in the order of the log.
  steps.sort((a, b) => a.line - b.line);
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
