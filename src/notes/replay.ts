/**
 * Replaying a recorded conversation through the ledger: user and assistant messages, the
 * model's recorded answers to the extractions, and ends of stage, as JSON Lines. No model is
 * called: the log is run through the same machine as the live tracker (`notesTransition`),
 * each recorded answer settling the extraction the tracker would have had running, so the
 * replay builds the very prompts the tracker asked and shows exactly what the main model would
 * have been given at every message.
 */
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import { z } from 'zod';
import { describeError, describeValue } from '../base/describe.js';
import { type Fields, isRecord } from '../base/record.js';
import { parseEventTime } from '../base/time.js';
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
import { type CategorizedFact, describeJson, isNotesId, NOTES_LIMITS } from './model.js';
import type { ModelFailureReason, ModelOutcome } from './port.js';
import {
  initialNotesState,
  isExtracting,
  type NotesEffect,
  type NotesInput,
  type NotesState,
  notesTransition,
  selectConversation,
} from './transition.js';

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

/** Options of `replayConversationLog`: those of the tracker that recorded the log, for the same prompts. */
export interface NotesReplayOptions extends NotesLedgerOptions {
  readonly countTokens?: TokenCounter;
  /** Exchanges the main prompt keeps (default 5). */
  readonly turns?: number;
  /** The number of facts the extraction prompt asks the model to stay within (default 18). */
  readonly softLimit?: number;
}

type Problem = Omit<NotesLogError, 'line'>;

/** Why `field` of a line is unusable: missing, or there but wrong. */
const fieldProblem = (fields: Fields, field: PropertyKey, message: string): Problem => ({
  code: typeof field === 'string' && fields[field] === undefined ? 'missing_field' : 'invalid_field',
  message,
});

const ID = `an id of 1 to ${NOTES_LIMITS.idLength} characters`;

const idSchema = (field: 'user' | 'session') =>
  z.custom<string>(isNotesId, {
    error: (issue) =>
      issue.input === undefined
        ? `${field} is missing: the ${field} id`
        : `${field} must be ${ID}, not ${describeJson(issue.input)}`,
  });

const textSchema = z.custom<string>((value) => typeof value === 'string' && value.trim() !== '', {
  error: (issue) =>
    issue.input === undefined ? 'text is missing' : `text must be non-empty text, not ${describeJson(issue.input)}`,
});

/** An extraction holds `response` (the recorded text) or `error` (`"timeout"`, or the call's error message). */
const outcomeSchema = z
  .object({ response: z.unknown(), error: z.unknown() })
  .superRefine(({ response, error }, context) => {
    const problem =
      response !== undefined && error !== undefined
        ? 'response and error are both given: an extraction has one or the other'
        : response === undefined && error === undefined
          ? 'response is missing: the recorded model text (or error: "timeout" or a message)'
          : response !== undefined
            ? typeof response === 'string'
              ? undefined
              : 'response must be text'
            : typeof error === 'string' && error.trim() !== ''
              ? undefined
              : 'error must be text';
    if (problem !== undefined)
      context.addIssue({ code: 'custom', path: [response === undefined ? 'error' : 'response'], message: problem });
  })
  .transform(({ response, error }): ModelOutcome => {
    if (typeof response === 'string') return E.right(response);
    return E.left(
      error === 'timeout'
        ? { reason: 'timeout', message: 'no answer in time' }
        : { reason: 'model_error', message: describeValue(error) },
    );
  });

const messageSchema = z.object({ user: idSchema('user'), session: idSchema('session'), text: textSchema });

/** The fields of each kind of line, after `type` and `at`. */
const LINE_SCHEMAS = {
  user: messageSchema,
  assistant: messageSchema,
  extraction: z.object({ user: idSchema('user'), session: idSchema('session'), outcome: outcomeSchema }),
  endStage: z.object({ user: idSchema('user'), session: idSchema('session').optional() }),
} as const;

const typeSchema = z.enum(NOTES_LOG_TYPES, {
  error: (issue) =>
    `${issue.input === undefined ? 'type is missing' : `unknown type ${JSON.stringify(issue.input)}`}: expected one of ${NOTES_LOG_TYPES.join(', ')}`,
});

/** A line's `at`, or nothing when it has none (it then follows the line before). */
const atSchema = z.unknown().transform((at, context) =>
  at === undefined
    ? undefined
    : pipe(
        parseEventTime(at),
        E.getOrElseW((reason) => {
          context.addIssue({ code: 'custom', message: `at is not a time: ${reason}` });
          return z.NEVER;
        }),
      ),
);

const headerSchema = z.object({ type: typeSchema, at: atSchema.optional() });

/** The first issue of a failed parse, as a problem of the line `fields`. */
const problemOf = (fields: Fields, issues: ReadonlyArray<z.core.$ZodIssue>): Problem => {
  const issue = issues[0]!;
  const field = issue.path[0] ?? '';
  if (field === 'type')
    return { code: fields['type'] === undefined ? 'missing_field' : 'unknown_type', message: issue.message };
  return fieldProblem(fields, field === 'outcome' ? (issue.path[1] ?? field) : field, issue.message);
};

const validate = <T>(schema: z.ZodType<T>, fields: Fields): E.Either<Problem, T> => {
  const parsed = schema.safeParse(fields);
  return parsed.success ? E.right(parsed.data) : E.left(problemOf(fields, parsed.error.issues));
};

const parseFields = (
  fields: Fields,
  type: NotesLogEntry['type'],
): E.Either<Problem, Omit<NotesLogEntry, 'line' | 'at'>> =>
  type === 'extraction'
    ? pipe(
        validate(LINE_SCHEMAS.extraction, {
          ...fields,
          outcome: { response: fields['response'], error: fields['error'] },
        }),
        E.map(({ user, session, outcome }) => ({ type, user, session, outcome })),
      )
    : type === 'endStage'
      ? pipe(
          validate(LINE_SCHEMAS.endStage, fields),
          E.map(({ user, session }) => ({ type, user, ...(session === undefined ? {} : { session }) })),
        )
      : pipe(
          validate(LINE_SCHEMAS[type], fields),
          E.map(({ user, session, text }) => ({ type, user, session, text })),
        );

const parseJsonLine = (text: string): E.Either<Problem, Fields> =>
  pipe(
    E.tryCatch(
      (): unknown => JSON.parse(text),
      (error): Problem => ({ code: 'invalid_json', message: `not JSON: ${describeError(error)}` }),
    ),
    E.filterOrElse(isRecord, (value): Problem => ({
      code: 'invalid_json',
      message: `expected a JSON object, not ${describeJson(value)}`,
    })),
  );

/** Parses one non-blank log line; a line without `at` happens one second after `previousAt` (or at 0). */
export const parseNotesLogLine = (
  text: string,
  line: number,
  previousAt: number | undefined,
): E.Either<NotesLogError, NotesLogEntry> =>
  pipe(
    parseJsonLine(text),
    E.bindTo('fields'),
    E.bind('header', ({ fields }) => validate(headerSchema, fields)),
    E.bind('entry', ({ fields, header }) => parseFields(fields, header.type)),
    E.map(
      ({ header, entry }) =>
        ({ ...entry, line, at: header.at ?? (previousAt === undefined ? 0 : previousAt + 1000) }) as NotesLogEntry,
    ),
    E.mapLeft((problem) => ({ line, ...problem })),
  );

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

  const run = (input: NotesInput): ReadonlyArray<NotesEffect> => {
    const [next, effects] = notesTransition(state, input);
    state = next;
    for (const effect of effects)
      if (effect.type === 'extract') prompts.set(slotKey(effect.user, effect.session), effect.prompt);
    return effects;
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
      ...(event?.type === 'notes/extractionFailed'
        ? { failure: { reason: event.reason, message: event.message } }
        : {}),
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
