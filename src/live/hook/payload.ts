/**
 * The hook events of Claude Code and Codex, read from the one JSON object they write on a hook
 * command's standard input. Both agents send the same shapes for the events used here: common
 * fields (`session_id`, `cwd`, `hook_event_name`, `transcript_path`, ...) plus the event's own.
 * Unknown fields are ignored and missing optional ones tolerated, so a newer agent that adds
 * fields still works; only what this command needs is checked.
 */
import * as E from 'fp-ts/lib/Either.js';
import * as O from 'fp-ts/lib/Option.js';
import { z } from 'zod';
import { type Failure, failure } from '../../base/failure.js';
import { exceedsJsonDepth, parseJson } from '../../base/json.js';
import { sha256HexPrefix } from '../../base/hash.js';
import { isRecord } from '../../base/record.js';
import { kindOf } from '../../base/describe.js';
import { describeIssue } from '../../base/schema.js';
import { findSecret, redactSecrets } from '../../base/secrets.js';
import { collapseWhitespace, isBlank, trimEndOf } from '../../base/text.js';
import { normalizeTaskId } from '../../core/extract/extractor.js';
import { redactedOutput } from '../../core/extract/redact.js';
import { withoutSessionContext } from '../../core/search/sectionLines.js';
import { nameId } from '../session/id.js';
import { LIMIT_CODES, MAX_PAYLOAD_DEPTH, MAX_TASK_ID_LENGTH } from '../session/limits.js';

/** The tools that start a subagent: Claude Code's `Agent` (called `Task` before 2.1) and Codex's `spawn_agent`. */
export const SUBAGENT_TOOLS = ['Agent', 'Task', 'spawn_agent'] as const;
/** Claude Code's subagent tools: their calls are paired with their results by `tool_use_id`. */
export const CLAUDE_SUBAGENT_TOOLS = ['Agent', 'Task'] as const;
/** The tool a Claude Code subagent may hand its report back through (2.1.271 and later). */
export const HANDBACK_TOOL = 'SubagentHandback';

const isOneOf = (names: ReadonlyArray<string>, name: string): boolean => names.includes(name);

const Common = z.looseObject({
  session_id: z.string(),
  cwd: z.string().optional(),
  agent_id: z.string().nullish(),
  agent_type: z.string().nullish(),
});

const ToolEvent = Common.extend({
  tool_name: z.string(),
  tool_input: z.unknown().optional(),
  tool_use_id: z.string().nullish(),
});

const PreToolUse = ToolEvent.extend({ hook_event_name: z.literal('PreToolUse') });
const PostToolUse = ToolEvent.extend({ hook_event_name: z.literal('PostToolUse'), tool_response: z.unknown() });
const PostToolUseFailure = ToolEvent.extend({
  hook_event_name: z.literal('PostToolUseFailure'),
  error: z.unknown().optional(),
  is_interrupt: z.boolean().nullish(),
});
const SubagentStart = Common.extend({ hook_event_name: z.literal('SubagentStart') });
const SubagentStop = Common.extend({
  hook_event_name: z.literal('SubagentStop'),
  last_assistant_message: z.string().nullish(),
  stop_hook_active: z.boolean().nullish(),
});

/** The fields every event here carries. */
interface Base {
  readonly sessionId: string;
  readonly cwd?: string;
}

/** `PreToolUse` of a tool that starts a subagent: the prompt it will get. */
export interface SubagentDispatch extends Base {
  readonly event: 'PreToolUse';
  readonly toolName: string;
  readonly toolUseId?: string;
  readonly prompt: string;
  /** The field of `toolInput` that holds the prompt (`prompt`, Codex: `message`). */
  readonly promptField: string;
  /** The whole input, to hand back rewritten: an `updatedInput` replaces all of it. */
  readonly toolInput: Readonly<Record<string, unknown>>;
  /** `subagent_type` (Claude Code) or `agent_type` (Codex), when given. */
  readonly agentType?: string;
}

/** What a subagent tool's result says, read loosely: its shape has changed across versions. */
export interface SubagentResponse {
  /** `completed` (a foreground subagent finished), `async_launched` (it runs in the background), ... */
  readonly status?: string;
  readonly agentId?: string;
  /** The prompt the subagent started with, when the result names it (background subagents). */
  readonly prompt?: string;
  /** The subagent's final text, when the result carries it. */
  readonly text?: string;
}

/** `PostToolUse` of a subagent tool: the call is over (or the subagent went to the background). */
export interface SubagentCallEnded extends Base {
  readonly event: 'PostToolUse';
  readonly toolName: string;
  readonly toolUseId?: string;
  /** The prompt of the input the tool ran with. */
  readonly prompt?: string;
  readonly response: SubagentResponse;
  readonly agentType?: string;
}

/** `PostToolUseFailure` of a subagent tool: the call failed; no result will come. */
export interface SubagentCallFailed extends Base {
  readonly event: 'PostToolUseFailure';
  readonly toolName: string;
  readonly toolUseId?: string;
}

/** `PostToolUse` of `SubagentHandback` inside a subagent: its report. */
export interface SubagentHandback extends Base {
  readonly event: 'Handback';
  readonly agentId?: string;
  readonly agentType?: string;
  readonly message: string;
}

/** `SubagentStart`: a subagent is about to send its first request. */
export interface SubagentStarted extends Base {
  readonly event: 'SubagentStart';
  readonly agentId?: string;
  readonly agentType?: string;
}

/** `SubagentStop`: a subagent finished (a turn of it, in Codex), with its last message. */
export interface SubagentStopped extends Base {
  readonly event: 'SubagentStop';
  readonly agentId?: string;
  readonly agentType?: string;
  readonly lastAssistantMessage?: string;
}

/** An event this command does nothing with (another event, or another tool's). */
export interface IgnoredEvent {
  readonly event: 'ignored';
  readonly name: string;
}

/** A hook event, read. */
export type HookEvent =
  | SubagentDispatch
  | SubagentCallEnded
  | SubagentCallFailed
  | SubagentHandback
  | SubagentStarted
  | SubagentStopped
  | IgnoredEvent;

const defined = <K extends string, V>(key: K, value: V | null | undefined): { [P in K]?: V } =>
  (value === undefined || value === null ? {} : { [key]: value }) as { [P in K]?: V };

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/**
 * An agent type as the hooks keep and name it: its secrets redacted. The orchestrating model
 * writes it (`subagent_type`), so it may have copied a token there; every event's type is
 * redacted alike, so a call's type still equals its subagent's.
 */
const agentTypeText = (value: unknown): string | undefined => {
  const type = text(value);
  return type === undefined ? undefined : redactSecrets(type);
};

/** The first problem of a payload, with its path: one line. */
const firstIssue = (error: z.ZodError): string => {
  const issue = error.issues[0];
  return issue === undefined ? 'it does not match the event' : describeIssue([], issue);
};

/** The code of every payload the hook cannot read. */
const INVALID_PAYLOAD = 'invalid_payload';

const validated = <T>(schema: z.ZodType<T>, value: unknown, name: string): E.Either<Failure, T> => {
  const parsed = schema.safeParse(value);
  return parsed.success
    ? E.right(parsed.data)
    : E.left(failure(INVALID_PAYLOAD, `the ${name} payload is not as documented (${firstIssue(parsed.error)})`));
};

const base = (event: z.infer<typeof Common>): Base => ({ sessionId: event.session_id, ...defined('cwd', event.cwd) });

/**
 * The prompt, its field and the agent type of a subagent-starting tool's input; none for a
 * blank prompt, or one of invisible characters only (U+200B): it asks the subagent nothing.
 */
const subagentInput = (
  input: unknown,
): O.Option<{ prompt: string; promptField: string; toolInput: Record<string, unknown>; agentType?: string }> => {
  if (!isRecord(input)) return O.none;
  const promptField = typeof input['prompt'] === 'string' ? 'prompt' : 'message';
  const prompt = input[promptField];
  const agentType = agentTypeText(input['subagent_type']) ?? agentTypeText(input['agent_type']);
  return typeof prompt === 'string' && !isBlank(prompt)
    ? O.some({ prompt, promptField, toolInput: input, ...defined('agentType', agentType) })
    : O.none;
};

/**
 * Why a subagent tool's input is none the hook can read (undefined for one with a prompt, or a
 * blank one, which asks nothing): not an object, or a prompt that is not text.
 */
const malformedSubagentInput = (input: unknown): string | undefined => {
  if (!isRecord(input)) return `tool_input is ${kindOf(input)}, not an object`;
  const field = ['prompt', 'message'].find((name) => input[name] !== undefined);
  if (field === undefined) return 'tool_input has no prompt';
  return typeof input[field] === 'string' ? undefined : `tool_input.${field} is ${kindOf(input[field])}, not text`;
};

/** The text of a tool result's content: a string, or the text blocks of a content array. */
const contentText = (content: unknown): string | undefined => {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  const texts = content.flatMap((block) =>
    isRecord(block) && block['type'] === 'text' && typeof block['text'] === 'string' ? [block['text']] : [],
  );
  return texts.length === 0 ? undefined : texts.join('\n');
};

/**
 * A subagent's answer as the hooks keep and record it: its secrets redacted (`base/secrets.ts`),
 * so no hooks file or log holds them, and a resent answer is still the same text. A prompt is
 * not: the hook hands it back to the subagent, which may need what it holds.
 */
const answerText = <T extends string | undefined>(answer: T): T =>
  (answer === undefined ? answer : redactedOutput(answer)) as T;

/** Reads what a subagent tool returned: Claude Code's object (`status`, `agentId`, `content`, `prompt`) or plain text. */
export const readSubagentResponse = (response: unknown): SubagentResponse => {
  if (typeof response === 'string') return { text: answerText(response) };
  if (!isRecord(response)) return {};
  const content = answerText(contentText(response['content']) ?? text(response['result']) ?? text(response['output']));
  return {
    ...defined('status', text(response['status'])),
    ...defined('agentId', text(response['agentId']) ?? text(response['agent_id'])),
    ...defined('prompt', text(response['prompt'])),
    ...defined('text', content),
  };
};

const readToolEvent = (
  name: 'PreToolUse' | 'PostToolUse' | 'PostToolUseFailure',
  value: unknown,
): E.Either<Failure, HookEvent> => {
  const tool = isRecord(value) ? value['tool_name'] : undefined;
  if (typeof tool === 'string' && !isOneOf(SUBAGENT_TOOLS, tool) && tool !== HANDBACK_TOOL)
    return E.right({ event: 'ignored', name: `${name} of ${tool}` });
  switch (name) {
    case 'PreToolUse':
      return E.chain((event: z.infer<typeof PreToolUse>): E.Either<Failure, HookEvent> => {
        if (event.tool_name === HANDBACK_TOOL)
          return E.right({ event: 'ignored', name: `PreToolUse of ${HANDBACK_TOOL}` });
        const input = subagentInput(event.tool_input);
        if (O.isSome(input))
          return E.right({
            event: 'PreToolUse',
            ...base(event),
            toolName: event.tool_name,
            ...defined('toolUseId', event.tool_use_id),
            ...input.value,
          });
        // A subagent's call whose prompt is not text would run without its section: said, not passed over.
        const malformed = malformedSubagentInput(event.tool_input);
        return malformed === undefined
          ? E.right({ event: 'ignored', name: `PreToolUse of ${event.tool_name}` })
          : E.left(
              failure(
                INVALID_PAYLOAD,
                `the PreToolUse payload of ${event.tool_name} is not as documented (${malformed})`,
              ),
            );
      })(validated(PreToolUse, value, name));
    case 'PostToolUse':
      return E.map((event: z.infer<typeof PostToolUse>): HookEvent => {
        if (event.tool_name === HANDBACK_TOOL) {
          const message = isRecord(event.tool_input) ? text(event.tool_input['message']) : undefined;
          return message === undefined
            ? { event: 'ignored', name: `PostToolUse of ${HANDBACK_TOOL} without a message` }
            : {
                event: 'Handback',
                ...base(event),
                ...defined('agentId', event.agent_id),
                ...defined('agentType', agentTypeText(event.agent_type)),
                message: answerText(message),
              };
        }
        const input = subagentInput(event.tool_input);
        return {
          event: 'PostToolUse',
          ...base(event),
          toolName: event.tool_name,
          ...defined('toolUseId', event.tool_use_id),
          ...(O.isSome(input) ? { prompt: input.value.prompt, ...defined('agentType', input.value.agentType) } : {}),
          response: readSubagentResponse(event.tool_response),
        };
      })(validated(PostToolUse, value, name));
    case 'PostToolUseFailure':
      return E.map((event: z.infer<typeof PostToolUseFailure>): HookEvent =>
        event.tool_name === HANDBACK_TOOL
          ? { event: 'ignored', name: `PostToolUseFailure of ${HANDBACK_TOOL}` }
          : {
              event: 'PostToolUseFailure',
              ...base(event),
              toolName: event.tool_name,
              ...defined('toolUseId', event.tool_use_id),
            },
      )(validated(PostToolUseFailure, value, name));
  }
};

/** The JSON value of a payload, or why it is not JSON. */
const parsePayloadJson = (payload: string): E.Either<Failure, unknown> =>
  E.mapLeft((reason: string) =>
    failure(INVALID_PAYLOAD, `the hook payload on standard input is not JSON (${collapseWhitespace(reason)})`),
  )(
    // A byte order mark before the JSON (a host or a script that writes one) is no part of it.
    parseJson(payload.startsWith('\uFEFF') ? payload.slice(1) : payload),
  );

/** Reads a hook payload; Left says in one line why it is not one. */
export const parseHookEvent = (payload: string): E.Either<Failure, HookEvent> => {
  if (exceedsJsonDepth(payload, MAX_PAYLOAD_DEPTH))
    return E.left(
      failure(
        LIMIT_CODES.input,
        `the hook payload nests arrays and objects more than ${MAX_PAYLOAD_DEPTH} deep; it was not read`,
      ),
    );
  const parsed = parsePayloadJson(payload);
  if (E.isLeft(parsed)) return parsed;
  const value = parsed.right;
  if (!isRecord(value))
    return E.left(failure(INVALID_PAYLOAD, 'the hook payload on standard input is not a JSON object'));
  const name = value['hook_event_name'];
  if (typeof name !== 'string') return E.left(failure(INVALID_PAYLOAD, 'the hook payload has no hook_event_name'));
  switch (name) {
    case 'PreToolUse':
    case 'PostToolUse':
    case 'PostToolUseFailure':
      return readToolEvent(name, value);
    case 'SubagentStart':
      return E.map((event: z.infer<typeof SubagentStart>): HookEvent => ({
        event: 'SubagentStart',
        ...base(event),
        ...defined('agentId', event.agent_id),
        ...defined('agentType', agentTypeText(event.agent_type)),
      }))(validated(SubagentStart, value, name));
    case 'SubagentStop':
      return E.map((event: z.infer<typeof SubagentStop>): HookEvent => ({
        event: 'SubagentStop',
        ...base(event),
        ...defined('agentId', event.agent_id),
        ...defined('agentType', agentTypeText(event.agent_type)),
        ...defined('lastAssistantMessage', answerText(event.last_assistant_message ?? undefined)),
      }))(validated(SubagentStop, value, name));
    default:
      return E.right({ event: 'ignored', name });
  }
};

/**
 * The label of a `Task ID:` line, up to the id's first character: the id is the rest of the line
 * (`restOfLine`), its final spaces, tabs and Markdown (emphasis, and the backticks of a code span:
 * `` **Task ID:** `T-4` `` names task T-4, as its subagent reports it) trimmed by a scan (a lazy group
 * before `[ \t*_]*$` would retry that tail from every position of the id: quadratic in a long
 * line). The runs around the label stop at a million characters and the id is found by a scan:
 * one match over a line of millions of characters outside Latin-1 (a payload may hold 16 MiB)
 * overflowed the engine's regexp stack.
 */
const TASK_ID_LABEL = /^[ \t>*_`-]{0,1000000}Task ID:[ \t*_`]{0,1000000}(?=\S)/imu;

/** What ends a written id without being part of it: spaces, tabs, Markdown emphasis and code span backticks. */
const ID_MARKUP = ' \t*_`';

/** The text from `start` up to the line terminator that ends its line (`\r`, `\n`, U+2028, U+2029), or its end. */
const restOfLine = (text: string, start: number): string => {
  let end = start;
  while (end < text.length && !'\r\n\u2028\u2029'.includes(text[end]!)) end += 1;
  return text.slice(start, end);
};

/**
 * The id written on a `Task ID:` line of `prompt`, if any, outside the `[Session Context]`
 * sections it holds (one the MCP server compiled): their lines are facts a model wrote, and
 * `- Task ID: 1 modified_by task:3 [task:3]` among them must not name the task the
 * orchestrator's own `Task ID:` line names. A section ends at the first line not of a fact
 * line's shape, so a bulleted `- Task ID: 4` right after it, which ends in no `[task:...]`, is
 * the orchestrator's.
 */
const writtenTaskId = (prompt: string): string | undefined => {
  const words = withoutSessionContext(prompt);
  const label = TASK_ID_LABEL.exec(words);
  if (label === null) return undefined;
  const id = restOfLine(words, label.index + label[0].length);
  return id.slice(0, 1) + trimEndOf(id.slice(1), ID_MARKUP);
};

/**
 * A host's id as a task id, within the task id limit: the id as facts carry it, or, for one no
 * task id can be (longer than the limit), `prefix-` and a digest of it, so its result is recorded.
 */
const hostTaskId = (prefix: string, id: string): string => {
  const normalized = normalizeTaskId(id);
  return E.isRight(normalized) ? normalized.right : `${prefix}-${sha256HexPrefix(id, 12)}`;
};

/** The task id of a tool call alone, within the task id limit: its `tool_use_id`, or a digest of a longer one. */
const callTaskId = (toolUseId: string | undefined): O.Option<string> =>
  toolUseId === undefined || toolUseId.trim() === '' ? O.none : O.some(hostTaskId('call', toolUseId));

/** The task of a subagent no call names: its agent id, or `agent-` and a digest of a longer one (`unknown` without one). */
export const agentTaskId = (agentId: string | undefined): string =>
  agentId === undefined ? 'unknown' : hostTaskId('agent', agentId);

/** The task a subagent prompt is for, and why the id the prompt wrote was not taken. */
export interface SelectedTask {
  readonly taskId: string;
  readonly warning?: Failure;
}

/**
 * The task id of a subagent prompt: a `Task ID:` line the orchestrator wrote, else the tool
 * call's id. A written id that no result could carry (empty, or longer than the limit), or that
 * holds a secret, is not taken: the call's id is, and the warning says why, so prompts and
 * results always agree.
 */
export const selectTaskId = (dispatch: {
  readonly prompt: string;
  readonly toolUseId?: string;
}): O.Option<SelectedTask> => {
  const written = writtenTaskId(dispatch.prompt)?.trim();
  const call = callTaskId(dispatch.toolUseId);
  // A line whose id is invisible characters only (U+200B) names no task, as an empty one.
  if (written === undefined || isBlank(written)) return O.map((taskId: string) => ({ taskId }))(call);
  const normalized = normalizeTaskId(written);
  if (E.isRight(normalized)) return O.some({ taskId: normalized.right });
  // Refused by the core (`normalizeTaskId`): past the limit, or holding a secret, named here by its shape.
  const secret = findSecret(written);
  const warning =
    secret !== undefined
      ? `the "Task ID:" line names a task id holding what looks like ${secret}`
      : `the "Task ID:" line names a task id of ${collapseWhitespace(written).length} characters; at most ${MAX_TASK_ID_LENGTH} are allowed`;
  return O.isNone(call)
    ? O.none
    : O.some({
        taskId: call.value,
        warning: failure(LIMIT_CODES.taskId, `${warning}, so the task is the tool call's id ${nameId(call.value)}`),
      });
};
