/**
 * `fact-tracker mcp`: the session log behind an MCP server (the official SDK, v2). Each tool
 * is one call of a live session, so everything the server records is a line of the session's
 * log and `fact-tracker replay` reads it back; each answer is bounded; each failure is a tool
 * error (`isError`) naming its code, and the server goes on serving.
 */
import { McpServer, ResourceNotFoundError, ResourceTemplate } from '@modelcontextprotocol/server';
import * as E from 'fp-ts/lib/Either.js';
import { z } from 'zod';
import { parseEventTime } from '../../base/time.js';
import { dispatchResultJsonSchema } from '../../core/extract/contract.js';
import { FACT_TAGS, type SessionFact, SOURCE_ROLES } from '../../core/fact.js';
import type { RetrievalDecision } from '../../core/retrieve/retrieve.js';
import { BEGIN_MARKER, END_MARKER } from '../../core/extract/parse.js';
import { selectAllFacts, selectFactsWhere, selectValidCount } from '../../core/store/selectors.js';
import type { FactStore } from '../../core/store/state.js';
import { estimateTokens, type TokenCounter } from '../../tokens/estimate.js';
import {
  bytesToReplay,
  latestSessionId,
  listSessionIds,
  openSession,
  type LiveSession,
  type SessionOptions,
} from '../session/session.js';
import { parseSessionId } from '../session/id.js';
import {
  DEFAULT_SECTION_FACTS,
  DEFAULT_SECTION_TOKENS,
  MAX_OUTPUT_LENGTH,
  MAX_PROMPT_LENGTH,
  MAX_RELATION_LENGTH,
  MAX_SECTION_FACTS,
  MAX_SECTION_TOKENS,
  MAX_SESSION_ID_LENGTH,
  MAX_SUBJECT_LENGTH,
  MAX_TASK_ID_LENGTH,
  MAX_TIME_LENGTH,
} from '../session/limits.js';
import type { SessionError } from '../session/model.js';
import { fitAnswer } from './answer.js';

/** No tool answer is larger than this many tokens unless configured otherwise. */
export const DEFAULT_MAX_ANSWER_TOKENS = 8_000;
/** The longest dispatch output `ingest_result` takes, in characters (`MAX_OUTPUT_LENGTH`). */
export const MAX_OUTPUT_CHARACTERS = MAX_OUTPUT_LENGTH;
/** Sessions kept open at once; the least recently used is closed past it (it reopens from its log). */
const OPEN_SESSIONS = 64;
/** The URI of the dispatch-result schemas. */
export const SCHEMAS_URI = 'fact-tracker://schemas/dispatch-result';
/** The URI template of a session's snapshot. */
export const SESSION_URI_TEMPLATE = 'fact-tracker://sessions/{sessionId}';

/** How the server runs. */
export interface FactTrackerMcpOptions extends Pick<SessionOptions, 'cwd' | 'directory' | 'clock' | 'lockStaleMs'> {
  /** The package version the server reports. */
  readonly version: string;
  /** The bound of every answer, in tokens (default 8,000). */
  readonly maxAnswerTokens?: number;
  /** Counts the tokens of sections and answers (default: ceil(characters / 4)). */
  readonly countTokens?: TokenCounter;
  /** Told about lines a session's log could not apply, once per session opened. */
  readonly onWarning?: (message: string) => void;
}

const INSTRUCTIONS = `Session memory for orchestrators that dispatch subagents.
Before dispatching a subagent, call compile_context with the task's id and prompt, and put its sessionContext into the subagent's prompt.
Ask each subagent to end its answer with its result as JSON between a line ${BEGIN_MARKER} and a line ${END_MARKER} (the JSON Schemas are the resource ${SCHEMAS_URI}).
When it returns, call ingest_result with its whole final message. Use one sessionId for the whole session and one taskId per task.`;

/**
 * A bound of a string argument that the SDK checks before a tool runs: its message starts with
 * the code the tool error gets (see `codedToolError`), so a caller can branch on it.
 */
const bounded = (code: string, name: string, limit: number, unit = 'characters') =>
  z.string().max(limit, { error: () => `${code}: ${name} is over ${limit.toLocaleString('en-US')} ${unit}` });

const Time = z
  .union([z.string().max(MAX_TIME_LENGTH), z.number()])
  .describe('ISO-8601 (2026-03-02T10:00:00Z) or epoch milliseconds; default: now');
const SessionId = z
  .string()
  .max(MAX_SESSION_ID_LENGTH, {
    error: () => `invalid_session_id: the session id is over ${MAX_SESSION_ID_LENGTH} characters`,
  })
  .describe(
    `The session: 1 to ${MAX_SESSION_ID_LENGTH} letters, digits, "_", "-" or "."; one per orchestrator session`,
  );
const TaskId = (what: string) =>
  bounded('invalid_field', 'taskId', MAX_TASK_ID_LENGTH).describe(`${what} (at most ${MAX_TASK_ID_LENGTH} characters)`);
const TaskPrompt = bounded('prompt_too_large', 'taskPrompt', MAX_PROMPT_LENGTH);
const Limit = (fallback: number) =>
  z.number().int().min(1).max(1_000).optional().describe(`At most this many (default ${fallback})`);

const TripleOut = z.object({ subject: z.string(), relation: z.string(), object: z.string() });
const FactOut = TripleOut.extend({
  tags: z.array(z.string()),
  validFrom: z.string(),
  validTo: z.string().optional(),
  sourceTaskId: z.string(),
  sourceRole: z.string(),
});
type FactOut = z.infer<typeof FactOut>;

const IngestIn = z
  .object({
    sessionId: SessionId,
    taskId: TaskId('The task the subagent worked on'),
    role: z.enum(SOURCE_ROLES),
    output: z
      .union([bounded('output_too_large', 'output', MAX_OUTPUT_LENGTH), z.record(z.string(), z.unknown())])
      .describe(
        `The subagent's final message (with the ${BEGIN_MARKER} block) or the result object; at most ${MAX_OUTPUT_LENGTH} characters (the object as JSON)`,
      ),
    at: Time.optional(),
  })
  .strict();
const IngestOut = z.object({
  sessionId: z.string(),
  line: z.number(),
  duplicate: z.boolean(),
  facts: z.array(FactOut),
  omitted: z.number(),
  warnings: z.array(z.string()),
});

const CompileIn = z
  .object({
    sessionId: SessionId,
    taskId: TaskId('The task about to be dispatched'),
    taskPrompt: TaskPrompt.describe(`What the subagent will be asked to do (at most ${MAX_PROMPT_LENGTH} characters)`),
    tags: z.array(z.enum(FACT_TAGS)).max(FACT_TAGS.length).optional().describe('Only facts with one of these tags'),
    maxTokens: z
      .number()
      .int()
      .min(0)
      .max(MAX_SECTION_TOKENS)
      .optional()
      .meta({ default: DEFAULT_SECTION_TOKENS })
      .describe(`Token budget of the section (default ${DEFAULT_SECTION_TOKENS})`),
    maxFacts: z
      .number()
      .int()
      .min(0)
      .max(MAX_SECTION_FACTS)
      .optional()
      .meta({ default: DEFAULT_SECTION_FACTS })
      .describe(`Facts in the section (default ${DEFAULT_SECTION_FACTS})`),
    at: Time.optional(),
  })
  .strict();
const CompileOut = z.object({
  sessionId: z.string(),
  line: z.number(),
  duplicate: z.boolean(),
  sessionContext: z.string(),
  facts: z.array(TripleOut),
  omitted: z.number(),
});

const ExplainIn = z
  .object({ sessionId: SessionId, taskId: TaskId('The task'), taskPrompt: TaskPrompt, limit: Limit(30) })
  .strict();
const DecisionOut = TripleOut.extend({
  decision: z.enum(['included', 'excluded']),
  reason: z.string().optional(),
  score: z.number(),
  parts: z
    .object({
      terms: z.array(z.object({ term: z.string(), contribution: z.number() })),
      feedback: z.number(),
      context: z.number(),
      recency: z.number(),
      coChange: z.number(),
      base: z.number(),
      priors: z.array(z.string()),
      prior: z.number(),
      boost: z.number(),
      total: z.number(),
    })
    .optional(),
});
const ExplainOut = z.object({
  sessionId: z.string(),
  decisions: z.array(DecisionOut),
  total: z.number(),
  omitted: z.number(),
});

const ListIn = z
  .object({
    sessionId: SessionId,
    subject: z
      .string()
      .max(MAX_SUBJECT_LENGTH)
      .optional()
      .describe('Only facts whose subject contains this, ignoring case'),
    tag: z.enum(FACT_TAGS).optional(),
    asOf: Time.optional().describe('The facts valid at this time (ISO-8601 or epoch ms)'),
    includeClosed: z.boolean().optional().describe('Closed facts too'),
    limit: Limit(50),
  })
  .strict();
const ListOut = z.object({ sessionId: z.string(), facts: z.array(FactOut), total: z.number(), omitted: z.number() });

const InvalidateIn = z
  .object({
    sessionId: SessionId,
    subject: z.string().max(MAX_SUBJECT_LENGTH),
    relation: z.string().max(MAX_RELATION_LENGTH),
    at: Time.optional(),
  })
  .strict();
const InvalidateOut = z.object({
  sessionId: z.string(),
  line: z.number(),
  duplicate: z.boolean(),
  closed: z.array(FactOut),
  omitted: z.number(),
});

/** Epoch milliseconds as ISO-8601, or as digits when the date cannot be written in ISO form. */
const isoTime = (at: number): string => {
  const date = new Date(at);
  return Number.isNaN(date.getTime()) ? String(at) : date.toISOString();
};

const factOut = (fact: SessionFact): FactOut => ({
  subject: fact.subject,
  relation: fact.relation,
  object: fact.object,
  tags: [...fact.tags],
  validFrom: isoTime(fact.validFrom),
  ...(fact.validTo === undefined ? {} : { validTo: isoTime(fact.validTo) }),
  sourceTaskId: fact.sourceTaskId,
  sourceRole: fact.sourceRole,
});

const decisionOut = (entry: RetrievalDecision): z.infer<typeof DecisionOut> => ({
  subject: entry.fact.subject,
  relation: entry.fact.relation,
  object: entry.fact.object,
  decision: entry.decision,
  ...(entry.reason === undefined ? {} : { reason: entry.reason }),
  score: entry.score,
  ...(entry.parts === undefined
    ? {}
    : {
        parts: {
          terms: entry.parts.terms.map(({ term, contribution }) => ({ term, contribution })),
          feedback: entry.parts.feedback,
          context: entry.parts.context,
          recency: entry.parts.recency,
          coChange: entry.parts.coChange,
          base: entry.parts.base,
          priors: [...entry.parts.priors],
          prior: entry.parts.prior,
          boost: entry.parts.boost,
          total: entry.parts.total,
        },
      }),
});

/** What a tool hands back. */
interface ToolAnswer {
  [key: string]: unknown;
  content: Array<{ type: 'text'; text: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** A failure as a tool error: the code first, so a caller can branch on it. */
const toolError = (code: string, message: string): ToolAnswer => ({
  content: [{ type: 'text', text: `${code}: ${message}` }],
  isError: true,
});

const SDK_INPUT_ERROR = /^Input validation error: Invalid arguments for tool [\w.-]+: /u;
const SDK_ARGUMENTS_ERROR = /^Invalid arguments for tool [\w.-]+: /u;
/** A code some bound of the input schemas starts its message with, after the argument's path. */
const BOUND_CODE = /^[\w.]+: ((?:invalid_field|invalid_session_id|output_too_large|prompt_too_large)): /u;

/**
 * The tool error of a failure the SDK met before or around a tool (arguments that do not match
 * the schema, a throw), with a code first like every other: the code a bound names, else
 * `invalid_arguments`, else `internal`.
 */
export const codedToolError = (message: string): ToolAnswer => {
  const input = SDK_INPUT_ERROR.exec(message) ?? SDK_ARGUMENTS_ERROR.exec(message);
  if (input === null) return toolError('internal', message);
  const detail = message.slice(input[0].length);
  const bound = BOUND_CODE.exec(detail);
  return bound === null
    ? toolError('invalid_arguments', detail)
    : toolError(bound[1]!, detail.replace(`${bound[1]!}: `, ''));
};

/** A bounded answer, as text (the JSON, or `text` when given) and as structured content. */
const toolAnswer = (
  answer: E.Either<string, Record<string, unknown>>,
  text?: (value: Record<string, unknown>) => string,
): ToolAnswer =>
  E.isLeft(answer)
    ? toolError('answer_too_large', answer.left)
    : {
        content: [{ type: 'text', text: text === undefined ? JSON.stringify(answer.right) : text(answer.right) }],
        structuredContent: answer.right,
      };

const sessionFailure = (error: SessionError): ToolAnswer => toolError(error.code, error.message);

/** A time argument, or why it is not one. */
const timeArgument = (value: string | number | undefined, name: string): E.Either<ToolAnswer, number | undefined> => {
  if (value === undefined) return E.right(undefined);
  const parsed = parseEventTime(value);
  return E.isLeft(parsed)
    ? E.left(toolError('invalid_field', `${name} is not a time: ${parsed.left}; give ISO-8601 or epoch milliseconds`))
    : E.right(parsed.right);
};

/**
 * The open sessions, by id, least recently used first; an id being opened is shared by the
 * calls that wait for it, so one process never holds two shells over one log.
 */
export const createSessionPool = (
  options: FactTrackerMcpOptions,
): ((sessionId: string, create: boolean) => Promise<E.Either<SessionError, LiveSession>>) & {
  readonly requests: () => number;
} => {
  const open = new Map<string, Promise<E.Either<SessionError, LiveSession>>>();
  const settings: SessionOptions = {
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    ...(options.directory === undefined ? {} : { directory: options.directory }),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.lockStaleMs === undefined ? {} : { lockStaleMs: options.lockStaleMs }),
    ...(options.countTokens === undefined ? {} : { countTokens: options.countTokens }),
  };

  const warn = (session: LiveSession): void => {
    const { errors, setAside } = session.report();
    const first = errors[0];
    if (first !== undefined)
      options.onWarning?.(
        `session ${session.id}: ${errors.length} line(s) of ${session.file} not applied, first line ${first.line} (${first.code}: ${first.message})`,
      );
    for (const torn of setAside)
      options.onWarning?.(`session ${session.id}: a torn last line (line ${torn.line}) was set aside to ${torn.file}`);
  };

  let requests = 0;
  const lookup = async (sessionId: string, create: boolean): Promise<E.Either<SessionError, LiveSession>> => {
    requests += 1;
    const valid = parseSessionId(sessionId);
    if (E.isLeft(valid)) return E.left({ code: 'invalid_session_id', message: valid.left });
    const known = open.get(sessionId);
    if (known !== undefined) {
      open.delete(sessionId);
      open.set(sessionId, known);
      const session = await known;
      if (E.isRight(session) || !create) return session;
    }
    const opening = openSession(sessionId, { ...settings, create });
    open.set(sessionId, opening);
    const opened = await opening;
    if (E.isLeft(opened)) {
      if (open.get(sessionId) === opening) open.delete(sessionId);
      return opened;
    }
    warn(opened.right);
    for (const oldest of open.keys()) {
      if (open.size <= OPEN_SESSIONS) break;
      open.delete(oldest);
    }
    return opened;
  };
  // How many lookups the pool has had: a warm-up gives way to a call.
  return Object.assign(lookup, { requests: (): number => requests });
};

/**
 * The most log a server replays before it reads its first message (see `serveMcp`): about a
 * third of a second of catching up, where a whole long log without its snapshot takes seconds.
 */
export const MAX_PREPARED_REPLAY_BYTES = 256 * 1024;

/**
 * The session whose log changed last in the server's folder, and whether it opens quickly: its
 * snapshot can be used and leaves at most `MAX_PREPARED_REPLAY_BYTES` of log to replay (or the
 * whole log is that small). Undefined when the folder holds no session. Never throws.
 */
export const latestSession = async (
  options: Pick<FactTrackerMcpOptions, 'cwd' | 'directory'>,
): Promise<{ readonly id: string; readonly quick: boolean } | undefined> => {
  try {
    const id = await latestSessionId(options);
    if (id === undefined) return undefined;
    const bytes = await bytesToReplay(id, options);
    return { id, quick: bytes !== undefined && bytes <= MAX_PREPARED_REPLAY_BYTES };
  } catch {
    return undefined;
  }
};

/**
 * Opens, in `pool`, the session `id` (by default the one whose log changed last in the
 * server's folder; never creating one), then runs its latest prompts' queries until `stop` says
 * so (by default, until the pool is asked for anything; see `LiveSession.warm`): a server started
 * for an agent session is most often asked about that session first, and finds it read and its
 * queries warm. The session it opened, if any; a failure is only a cache missed (the first call
 * opens the session as it would have).
 */
export const warmSessionPool = async (
  pool: SessionPool,
  options: Pick<FactTrackerMcpOptions, 'cwd' | 'directory'>,
  warming: { readonly id?: string; readonly stop?: () => boolean } = {},
): Promise<E.Either<SessionError, LiveSession> | undefined> => {
  try {
    const id = warming.id ?? (await latestSessionId(options));
    if (id === undefined) return undefined;
    const opened = await pool(id, false);
    const asked = pool.requests();
    // Its latest prompts' queries run, until a call comes (it would wait for them).
    if (E.isRight(opened)) await opened.right.warm(warming.stop ?? (() => pool.requests() !== asked));
    return opened;
  } catch {
    return undefined;
  }
};

/** A session's snapshot as its resource: what the log held, bounded like a tool answer. */
const snapshotAnswer = (session: LiveSession, store: FactStore, maxTokens: number, countTokens: TokenCounter) => {
  const { events, errors, setAside } = session.report();
  const facts = selectFactsWhere(store, {}).map(factOut);
  return fitAnswer(
    facts,
    (kept, omitted) => ({
      sessionId: session.id,
      file: session.file,
      events,
      validFacts: selectValidCount(store),
      allFacts: selectAllFacts(store).length,
      errors: errors.slice(0, 20),
      setAside,
      facts: kept,
      omitted,
    }),
    maxTokens,
    countTokens,
  );
};

/** The open sessions of a server: `createSessionPool`'s lookup. */
export type SessionPool = ReturnType<typeof createSessionPool>;

/**
 * A new server over the sessions `options` name. `serveStdio` may ask for more than one
 * instance (one per protocol era it tries), so they can share one pool of open sessions.
 */
export const createFactTrackerMcpServer = (
  options: FactTrackerMcpOptions,
  session: SessionPool = createSessionPool(options),
): McpServer => {
  const maxTokens = options.maxAnswerTokens ?? DEFAULT_MAX_ANSWER_TOKENS;
  const countTokens = options.countTokens ?? estimateTokens;
  const fit = <T>(
    list: ReadonlyArray<T>,
    build: (kept: ReadonlyArray<T>, omitted: number) => Record<string, unknown>,
  ) => fitAnswer(list, build, maxTokens, countTokens);

  const server = new McpServer(
    { name: 'fact-tracker', version: options.version },
    { instructions: INSTRUCTIONS, capabilities: { tools: {}, resources: {} } },
  );
  // The SDK answers arguments its schema refuses, and a tool that throws, through this method of
  // its own (private in its types; the SDK's version is pinned): give those answers a code too.
  (server as unknown as { createToolError: (message: string) => ToolAnswer }).createToolError = codedToolError;

  server.registerTool(
    'ingest_result',
    {
      title: 'Record a subagent result',
      description: `Record a subagent's result in the session: its final message (the JSON between ${BEGIN_MARKER} and ${END_MARKER} lines) or the result object. Returns the facts extracted. Sending the same result again records nothing: with the same "at", or without "at" when it is the last result recorded for the task (same role and output).`,
      inputSchema: IngestIn,
      outputSchema: IngestOut,
      annotations: { idempotentHint: true, destructiveHint: false },
    },
    async ({ sessionId, taskId, role, output, at }) => {
      const time = timeArgument(at, 'at');
      if (E.isLeft(time)) return time.left;
      const live = await session(sessionId, true);
      if (E.isLeft(live)) return sessionFailure(live.left);
      const ingested = await live.right.ingestResult({
        role,
        taskId,
        output,
        ...(time.right === undefined ? {} : { at: time.right }),
      });
      if (E.isLeft(ingested)) return sessionFailure(ingested.left);
      const { line, duplicate, facts, warnings } = ingested.right;
      return toolAnswer(
        fit(facts.map(factOut), (kept, omitted) => ({ sessionId, line, duplicate, facts: kept, omitted, warnings })),
      );
    },
  );

  server.registerTool(
    'compile_context',
    {
      title: 'Session context for a task',
      description:
        'Before dispatching a subagent: the [Session Context] section with the facts earlier tasks established that are relevant to this task, within a token budget. Put sessionContext into the subagent prompt. Records the prompt in the session (sent again with the same "at", it is not recorded twice).',
      inputSchema: CompileIn,
      outputSchema: CompileOut,
      annotations: { idempotentHint: false, destructiveHint: false },
    },
    async ({ sessionId, taskId, taskPrompt, tags, maxTokens: budget, maxFacts, at }) => {
      const time = timeArgument(at, 'at');
      if (E.isLeft(time)) return time.left;
      const live = await session(sessionId, true);
      if (E.isLeft(live)) return sessionFailure(live.left);
      const compiled = await live.right.compileContext({
        taskId,
        taskPrompt,
        ...(tags === undefined ? {} : { tags }),
        ...(maxFacts === undefined ? {} : { maxFacts }),
        ...(budget === undefined ? {} : { maxTokens: budget }),
        ...(time.right === undefined ? {} : { at: time.right }),
      });
      if (E.isLeft(compiled)) return sessionFailure(compiled.left);
      const { line, duplicate, sessionContext, facts } = compiled.right;
      const triples = facts.map(({ subject, relation, object }) => ({ subject, relation, object }));
      return toolAnswer(
        fit(triples, (kept, omitted) => ({ sessionId, line, duplicate, sessionContext, facts: kept, omitted })),
        () => (sessionContext === '' ? 'No session fact is relevant to this task yet.' : sessionContext),
      );
    },
  );

  server.registerTool(
    'explain_context',
    {
      title: 'Why these facts',
      description:
        'For a task prompt: the facts ranked for it, each with its score, the parts of the score and whether it would be included (or why not). Records nothing.',
      inputSchema: ExplainIn,
      outputSchema: ExplainOut,
      annotations: { readOnlyHint: true },
    },
    async ({ sessionId, taskId, taskPrompt, limit = 30 }) => {
      const live = await session(sessionId, false);
      if (E.isLeft(live)) return sessionFailure(live.left);
      const explained = await live.right.explainContext({ taskId, taskPrompt });
      if (E.isLeft(explained)) return sessionFailure(explained.left);
      const decisions = explained.right;
      const top = decisions.slice(0, limit).map(decisionOut);
      return toolAnswer(
        fit(top, (kept, omitted) => ({
          sessionId,
          decisions: kept,
          total: decisions.length,
          omitted: omitted + decisions.length - top.length,
        })),
      );
    },
  );

  server.registerTool(
    'list_facts',
    {
      title: 'List session facts',
      description: 'The facts of the session, oldest first, optionally by subject, tag or time; at most limit of them.',
      inputSchema: ListIn,
      outputSchema: ListOut,
      annotations: { readOnlyHint: true },
    },
    async ({ sessionId, subject, tag, asOf, includeClosed, limit = 50 }) => {
      const time = timeArgument(asOf, 'asOf');
      if (E.isLeft(time)) return time.left;
      const live = await session(sessionId, false);
      if (E.isLeft(live)) return sessionFailure(live.left);
      const store = await live.right.snapshot();
      if (E.isLeft(store)) return sessionFailure(store.left);
      const facts = selectFactsWhere(store.right, {
        all: includeClosed === true,
        ...(time.right === undefined ? {} : { asOf: time.right }),
        ...(tag === undefined ? {} : { tags: [tag] }),
        ...(subject === undefined ? {} : { subject }),
      });
      const first = facts.slice(0, limit).map(factOut);
      return toolAnswer(
        fit(first, (kept, omitted) => ({
          sessionId,
          facts: kept,
          total: facts.length,
          omitted: omitted + facts.length - first.length,
        })),
      );
    },
  );

  server.registerTool(
    'invalidate_fact',
    {
      title: 'Close a fact',
      description:
        'Close the valid facts of a (subject, relation) pair, for example a file that was deleted. A pair asserted after "at" stays valid.',
      inputSchema: InvalidateIn,
      outputSchema: InvalidateOut,
      annotations: { idempotentHint: true, destructiveHint: true },
    },
    async ({ sessionId, subject, relation, at }) => {
      const time = timeArgument(at, 'at');
      if (E.isLeft(time)) return time.left;
      const live = await session(sessionId, false);
      if (E.isLeft(live)) return sessionFailure(live.left);
      const invalidated = await live.right.invalidateFact({
        subject,
        relation,
        ...(time.right === undefined ? {} : { at: time.right }),
      });
      if (E.isLeft(invalidated)) return sessionFailure(invalidated.left);
      const { line, duplicate, closed } = invalidated.right;
      return toolAnswer(
        fit(closed.map(factOut), (kept, omitted) => ({ sessionId, line, duplicate, closed: kept, omitted })),
      );
    },
  );

  server.registerResource(
    'dispatch-result-schemas',
    SCHEMAS_URI,
    {
      title: 'Dispatch result schemas',
      description: `What a subagent must print at the end of its answer: JSON between a line ${BEGIN_MARKER} and a line ${END_MARKER}, valid against the schema of its role.`,
      mimeType: 'application/json',
    },
    async (uri) => ({
      contents: [
        {
          uri: uri.href,
          mimeType: 'application/json',
          text: JSON.stringify({
            begin: BEGIN_MARKER,
            end: END_MARKER,
            implementer: dispatchResultJsonSchema('implementer'),
            reviewer: dispatchResultJsonSchema('reviewer'),
          }),
        },
      ],
    }),
  );

  server.registerResource(
    'session-snapshot',
    new ResourceTemplate(SESSION_URI_TEMPLATE, {
      list: async () => ({
        resources: (await listSessionIds(options)).slice(0, 200).map((id) => ({
          uri: SESSION_URI_TEMPLATE.replace('{sessionId}', id),
          name: `session ${id}`,
          mimeType: 'application/json',
        })),
      }),
    }),
    {
      title: 'Session snapshot',
      description: 'A session: its event count, the lines its log could not apply, and its valid facts (bounded).',
      mimeType: 'application/json',
    },
    async (uri, variables) => {
      const id = variables['sessionId'];
      const live = await session(typeof id === 'string' ? id : '', false);
      if (E.isLeft(live)) throw new ResourceNotFoundError(uri.href, `${live.left.code}: ${live.left.message}`);
      const store = await live.right.snapshot();
      if (E.isLeft(store)) throw new ResourceNotFoundError(uri.href, `${store.left.code}: ${store.left.message}`);
      const answer = snapshotAnswer(live.right, store.right, maxTokens, countTokens);
      if (E.isLeft(answer)) throw new ResourceNotFoundError(uri.href, answer.left);
      return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(answer.right) }] };
    },
  );

  return server;
};
