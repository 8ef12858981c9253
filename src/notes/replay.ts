/**
 * Replaying a recorded conversation through the ledger: user and assistant messages, the
 * model's recorded answers to the extractions, and ends of stage, as JSON Lines. No model is
 * called; each recorded answer goes through the same parsing and reducers as a live answer,
 * so the replay shows exactly what the main model would have been given at every message.
 */
import * as E from 'fp-ts/lib/Either.js';
import { parseEventTime } from '../base/time.js';
import { estimateTokens, type TokenCounter } from '../tokens/estimate.js';
import { endStageWithReport } from './consolidateSession.js';
import { type ConversationMessage, DEFAULT_HISTORY_TURNS, splitRecentTurns } from './conversation.js';
import { applyNotesEvent } from './events.js';
import { formatNotesBlocks } from './format.js';
import type { GlobalFacts } from './global.js';
import {
  emptyNotesLedger,
  type NotesLedger,
  type NotesLedgerOptions,
  selectGlobalFacts,
  selectSessionFacts,
  selectUserIds,
} from './ledger.js';
import { type CategorizedFact, describeCategories, isNotesId } from './model.js';
import { type ModelFailureReason, type ModelOutcome, settleExtraction } from './port.js';
import { buildNotableFactsPrompt } from './prompt.js';

/** The kinds of line a conversation log holds. */
export const NOTES_LOG_TYPES = ['user', 'assistant', 'extraction', 'endStage'] as const;

/** A message of the user or of the assistant. */
export interface NotesLogMessage {
  readonly type: 'user' | 'assistant';
  readonly line: number;
  readonly at: number;
  readonly user: string;
  readonly session: string;
  readonly text: string;
}

/** The recorded outcome of the extraction for the user's latest message in the session. */
export interface NotesLogExtraction {
  readonly type: 'extraction';
  readonly line: number;
  readonly at: number;
  readonly user: string;
  readonly session: string;
  /** The model's text, or why there was none. */
  readonly outcome: ModelOutcome;
}

/** The end of a stage for a user: one session, or every session with unmerged facts. */
export interface NotesLogEndStage {
  readonly type: 'endStage';
  readonly line: number;
  readonly at: number;
  readonly user: string;
  readonly session?: string;
}

/** One line of a conversation log, with its resolved time. */
export type NotesLogEntry = NotesLogMessage | NotesLogExtraction | NotesLogEndStage;

/** Why a log line was rejected. */
export type NotesLogErrorCode = 'invalid_json' | 'unknown_type' | 'missing_field' | 'invalid_field' | 'no_message';

/** A rejected log line. */
export interface NotesLogError {
  readonly line: number;
  readonly code: NotesLogErrorCode;
  readonly message: string;
}

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
  readonly failure?: { readonly reason: ModelFailureReason; readonly message: string };
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

/** Options of `replayConversationLog`. */
export interface NotesReplayOptions extends NotesLedgerOptions {
  readonly countTokens?: TokenCounter;
  /** Exchanges the main prompt keeps (default 5). */
  readonly turns?: number;
}

type Fields = Readonly<Record<string, unknown>>;
type Problem = Omit<NotesLogError, 'line'>;

const isRecord = (value: unknown): value is Fields =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const describe = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;

const idField = (fields: Fields, field: 'user' | 'session'): E.Either<Problem, string> => {
  const value = fields[field];
  if (value === undefined) return E.left({ code: 'missing_field', message: `${field} is missing: the ${field} id` });
  return isNotesId(value)
    ? E.right(value)
    : E.left({
        code: 'invalid_field',
        message: `${field} must be an id of 1 to 200 characters, not ${describe(value)}`,
      });
};

const textField = (fields: Fields, field: string): E.Either<Problem, string> => {
  const value = fields[field];
  if (value === undefined) return E.left({ code: 'missing_field', message: `${field} is missing` });
  return typeof value === 'string' && value.trim() !== ''
    ? E.right(value)
    : E.left({ code: 'invalid_field', message: `${field} must be non-empty text, not ${describe(value)}` });
};

/** An extraction's `response` (the recorded text) or `error` (`"timeout"`, or the call's error message). */
const outcomeField = (fields: Fields): E.Either<Problem, ModelOutcome> => {
  const { response, error } = fields;
  if (response !== undefined && error !== undefined)
    return E.left({
      code: 'invalid_field',
      message: 'response and error are both given: an extraction has one or the other',
    });
  if (typeof response === 'string') return E.right(E.right(response));
  if (typeof error === 'string' && error.trim() !== '')
    return E.right(
      E.left(
        error === 'timeout'
          ? { reason: 'timeout', message: 'no answer in time' }
          : { reason: 'model_error', message: error },
      ),
    );
  if (response === undefined && error === undefined)
    return E.left({
      code: 'missing_field',
      message: 'response is missing: the recorded model text (or error: "timeout" or a message)',
    });
  return E.left({ code: 'invalid_field', message: `${response === undefined ? 'error' : 'response'} must be text` });
};

const parseFields = (
  fields: Fields,
  type: NotesLogEntry['type'],
): E.Either<Problem, Omit<NotesLogEntry, 'line' | 'at'>> => {
  const user = idField(fields, 'user');
  if (E.isLeft(user)) return user;
  if (type === 'endStage') {
    if (fields['session'] === undefined) return E.right({ type, user: user.right });
    return E.map((session: string) => ({ type, user: user.right, session }))(idField(fields, 'session'));
  }
  const session = idField(fields, 'session');
  if (E.isLeft(session)) return session;
  if (type === 'extraction')
    return E.map((outcome: ModelOutcome) => ({ type, user: user.right, session: session.right, outcome }))(
      outcomeField(fields),
    );
  return E.map((text: string) => ({ type, user: user.right, session: session.right, text }))(textField(fields, 'text'));
};

const isLogType = (value: unknown): value is NotesLogEntry['type'] =>
  typeof value === 'string' && (NOTES_LOG_TYPES as ReadonlyArray<string>).includes(value);

/** Parses one non-blank log line; a line without `at` happens one second after `previousAt` (or at 0). */
export const parseNotesLogLine = (
  text: string,
  line: number,
  previousAt: number | undefined,
): E.Either<NotesLogError, NotesLogEntry> => {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return E.left({
      line,
      code: 'invalid_json',
      message: `not JSON: ${error instanceof Error ? error.message : String(error)}`,
    });
  }
  if (!isRecord(value))
    return E.left({ line, code: 'invalid_json', message: `expected a JSON object, not ${describe(value)}` });
  const { type, at } = value;
  if (!isLogType(type))
    return E.left({
      line,
      code: type === undefined ? 'missing_field' : 'unknown_type',
      message: `${type === undefined ? 'type is missing' : `unknown type ${JSON.stringify(type)}`}: expected one of ${NOTES_LOG_TYPES.join(', ')}`,
    });
  const time = at === undefined ? E.right(previousAt === undefined ? 0 : previousAt + 1000) : parseEventTime(at);
  if (E.isLeft(time)) return E.left({ line, code: 'invalid_field', message: `at is not a time: ${time.left}` });
  const fields = parseFields(value, type);
  return E.isLeft(fields)
    ? E.left({ line, ...fields.left })
    : E.right({ ...fields.right, line, at: time.right } as NotesLogEntry);
};

/** Parses a conversation log (JSON Lines; blank lines skipped, line numbers from 1); bad lines become errors. */
export const parseNotesLog = (
  text: string,
): { readonly entries: ReadonlyArray<NotesLogEntry>; readonly errors: ReadonlyArray<NotesLogError> } => {
  const entries: NotesLogEntry[] = [];
  const errors: NotesLogError[] = [];
  let previousAt: number | undefined;
  text
    .replace(/^\uFEFF/u, '')
    .split(/\r\n|\n|\r/u)
    .forEach((content, index) => {
      if (content.trim() === '') return;
      const parsed = parseNotesLogLine(content, index + 1, previousAt);
      if (E.isLeft(parsed)) errors.push(parsed.left);
      else {
        entries.push(parsed.right);
        previousAt = parsed.right.at;
      }
    });
  return { entries, errors };
};

const slotKey = (user: string, session: string): string => JSON.stringify([user, session]);

const without = (facts: ReadonlyArray<CategorizedFact>, others: ReadonlyArray<CategorizedFact>): CategorizedFact[] =>
  facts.filter((fact) => !others.some((other) => other.category === fact.category && other.fact === fact.fact));

const tokensOf = (countTokens: TokenCounter, messages: ReadonlyArray<ConversationMessage>): number =>
  messages.reduce((sum, message) => sum + countTokens(message.content), 0);

/**
 * Replays a conversation log: per user message the blocks its reply would get (facts from the
 * extractions recorded before it: N+1 timing) and their token cost against the history they
 * replace; per extraction the change to the list; per end of stage the merge into the profile.
 */
export const replayConversationLog = (text: string, options: NotesReplayOptions = {}): NotesReplayResult => {
  const countTokens = options.countTokens ?? estimateTokens;
  const turns =
    typeof options.turns === 'number' && options.turns >= 0 ? Math.floor(options.turns) : DEFAULT_HISTORY_TURNS;
  const parsed = parseNotesLog(typeof text === 'string' ? text : '');
  const errors: NotesLogError[] = [...parsed.errors];
  const steps: NotesReplayStep[] = [];
  const transcripts = new Map<string, ConversationMessage[]>();
  let ledger = emptyNotesLedger(options);
  const users = new Set<string>();
  const sessions = new Set<string>();
  let assistantMessages = 0;

  const transcriptOf = (user: string, session: string): ConversationMessage[] => {
    const key = slotKey(user, session);
    let transcript = transcripts.get(key);
    if (transcript === undefined) transcripts.set(key, (transcript = []));
    return transcript;
  };

  const onMessage = (entry: NotesLogMessage): void => {
    const transcript = transcriptOf(entry.user, entry.session);
    transcript.push({ role: entry.type, content: entry.text });
    users.add(entry.user);
    sessions.add(entry.session);
    if (entry.type === 'assistant') {
      assistantMessages += 1;
      return;
    }
    const blocks = formatNotesBlocks(ledger, entry.user, entry.session).text;
    const { recent, trimmed } = splitRecentTurns(transcript, turns);
    steps.push({
      kind: 'message',
      line: entry.line,
      at: entry.at,
      user: entry.user,
      session: entry.session,
      turn: transcript.filter((message) => message.role === 'user').length,
      text: entry.text,
      facts: selectSessionFacts(ledger, entry.user, entry.session),
      profileFacts: selectGlobalFacts(ledger, entry.user)?.facts.length ?? 0,
      blocks,
      blockTokens: blocks === '' ? 0 : countTokens(blocks),
      windowMessages: recent.length,
      windowTokens: tokensOf(countTokens, recent),
      trimmedMessages: trimmed.length,
      trimmedTokens: tokensOf(countTokens, trimmed),
    });
  };

  const onExtraction = (entry: NotesLogExtraction): void => {
    const transcript = transcripts.get(slotKey(entry.user, entry.session)) ?? [];
    let latest = transcript.length - 1;
    while (latest >= 0 && transcript[latest]?.role !== 'user') latest -= 1;
    if (latest < 0) {
      errors.push({
        line: entry.line,
        code: 'no_message',
        message: `no message of ${JSON.stringify(entry.user)} in ${JSON.stringify(entry.session)} comes before this extraction`,
      });
      return;
    }
    const before = selectSessionFacts(ledger, entry.user, entry.session);
    const prompt = buildNotableFactsPrompt({
      message: transcript[latest]!.content,
      history: transcript.slice(0, latest),
      facts: before,
      categories: describeCategories(ledger.categories),
    });
    const event = settleExtraction(entry, entry.outcome, entry.at, ledger.categories);
    ledger = applyNotesEvent(ledger, event);
    const after = selectSessionFacts(ledger, entry.user, entry.session);
    steps.push({
      kind: 'extraction',
      line: entry.line,
      at: entry.at,
      user: entry.user,
      session: entry.session,
      outcome: event.type === 'notes/extracted' ? 'applied' : 'failed',
      ...(event.type === 'notes/extractionFailed' ? { failure: { reason: event.reason, message: event.message } } : {}),
      facts: after,
      added: without(after, before),
      removed: without(before, after),
      warnings: event.type === 'notes/extracted' ? (event.warnings ?? []) : [],
      promptTokens: countTokens(prompt),
    });
  };

  const onEndStage = (entry: NotesLogEndStage): void => {
    const result = endStageWithReport(ledger, entry);
    ledger = result.ledger;
    const profile = selectGlobalFacts(ledger, entry.user);
    steps.push({
      kind: 'stage',
      line: entry.line,
      at: entry.at,
      user: entry.user,
      sessions: result.sessions,
      profileFacts: profile?.facts.length ?? 0,
      sessionCount: profile?.sessionCount ?? 0,
      dropped: result.dropped,
    });
  };

  for (const entry of parsed.entries) {
    if (entry.type === 'extraction') onExtraction(entry);
    else if (entry.type === 'endStage') onEndStage(entry);
    else onMessage(entry);
  }
  errors.sort((a, b) => a.line - b.line);
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
