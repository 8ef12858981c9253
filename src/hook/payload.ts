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
import { describeIssue } from '../base/schema.js';
import { collapseWhitespace, trimEndOf } from '../base/text.js';

/** The tools that start a subagent: Claude Code's `Agent` (called `Task` before 2.1) and Codex's `spawn_agent`. */
export const SUBAGENT_TOOLS = ['Agent', 'Task', 'spawn_agent'] as const;

const Common = z.looseObject({
  session_id: z.string(),
  cwd: z.string().optional(),
});

const PreToolUse = Common.extend({
  hook_event_name: z.literal('PreToolUse'),
  tool_name: z.string(),
  tool_input: z.record(z.string(), z.unknown()).nullish(),
  tool_use_id: z.string().nullish(),
});

const SubagentStart = Common.extend({
  hook_event_name: z.literal('SubagentStart'),
  agent_id: z.string().nullish(),
  agent_type: z.string().nullish(),
});

const SubagentStop = Common.extend({
  hook_event_name: z.literal('SubagentStop'),
  agent_id: z.string().nullish(),
  agent_type: z.string().nullish(),
  last_assistant_message: z.string().nullish(),
});

/** `PreToolUse` of a tool that starts a subagent: the prompt it will get. */
export interface SubagentDispatch {
  readonly event: 'PreToolUse';
  readonly sessionId: string;
  readonly cwd?: string;
  readonly toolName: string;
  readonly toolUseId?: string;
  readonly prompt: string;
  /** `subagent_type` (Claude Code) or `agent_type` (Codex), when given. */
  readonly agentType?: string;
}

/** `SubagentStart`: a subagent is about to send its first request. */
export interface SubagentStarted {
  readonly event: 'SubagentStart';
  readonly sessionId: string;
  readonly cwd?: string;
  readonly agentId?: string;
  readonly agentType?: string;
}

/** `SubagentStop`: a subagent finished, with its last message. */
export interface SubagentStopped {
  readonly event: 'SubagentStop';
  readonly sessionId: string;
  readonly cwd?: string;
  readonly agentId?: string;
  readonly agentType?: string;
  readonly lastAssistantMessage?: string;
}

/** An event this command does nothing with (another event, or another tool's `PreToolUse`). */
export interface IgnoredEvent {
  readonly event: 'ignored';
  readonly name: string;
}

/** A hook event, read. */
export type HookEvent = SubagentDispatch | SubagentStarted | SubagentStopped | IgnoredEvent;

const defined = <K extends string, V>(key: K, value: V | null | undefined): { [P in K]?: V } =>
  (value === undefined || value === null ? {} : { [key]: value }) as { [P in K]?: V };

/** The first problem of a payload, with its path: one line. */
const firstIssue = (error: z.ZodError): string => {
  const issue = error.issues[0];
  return issue === undefined ? 'it does not match the event' : describeIssue([], issue);
};

const validated = <T>(schema: z.ZodType<T>, value: unknown, name: string): E.Either<string, T> => {
  const parsed = schema.safeParse(value);
  return parsed.success
    ? E.right(parsed.data)
    : E.left(`the ${name} payload is not as documented (${firstIssue(parsed.error)})`);
};

/** The prompt and the agent type of a subagent-starting tool's input. */
const subagentInput = (input: Readonly<Record<string, unknown>>): O.Option<{ prompt: string; agentType?: string }> => {
  const prompt = input['prompt'] ?? input['message'];
  const agentType = input['subagent_type'] ?? input['agent_type'];
  return typeof prompt === 'string' && prompt.trim() !== ''
    ? O.some({ prompt, ...defined('agentType', typeof agentType === 'string' ? agentType : undefined) })
    : O.none;
};

/** Reads a hook payload; Left says in one line why it is not one. */
export const parseHookEvent = (text: string): E.Either<string, HookEvent> => {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return E.left(
      `the hook payload on standard input is not JSON (${collapseWhitespace(error instanceof Error ? error.message : String(error))})`,
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return E.left('the hook payload on standard input is not a JSON object');
  const name = (value as Record<string, unknown>)['hook_event_name'];
  if (typeof name !== 'string') return E.left('the hook payload has no hook_event_name');
  switch (name) {
    case 'PreToolUse':
      return E.map((event: z.infer<typeof PreToolUse>): HookEvent => {
        const input = (SUBAGENT_TOOLS as ReadonlyArray<string>).includes(event.tool_name)
          ? subagentInput(event.tool_input ?? {})
          : O.none;
        return O.isNone(input)
          ? { event: 'ignored', name: `PreToolUse of ${event.tool_name}` }
          : {
              event: 'PreToolUse',
              sessionId: event.session_id,
              ...defined('cwd', event.cwd),
              toolName: event.tool_name,
              ...defined('toolUseId', event.tool_use_id),
              ...input.value,
            };
      })(validated(PreToolUse, value, name));
    case 'SubagentStart':
      return E.map((event: z.infer<typeof SubagentStart>): HookEvent => ({
        event: 'SubagentStart',
        sessionId: event.session_id,
        ...defined('cwd', event.cwd),
        ...defined('agentId', event.agent_id),
        ...defined('agentType', event.agent_type),
      }))(validated(SubagentStart, value, name));
    case 'SubagentStop':
      return E.map((event: z.infer<typeof SubagentStop>): HookEvent => ({
        event: 'SubagentStop',
        sessionId: event.session_id,
        ...defined('cwd', event.cwd),
        ...defined('agentId', event.agent_id),
        ...defined('agentType', event.agent_type),
        ...defined('lastAssistantMessage', event.last_assistant_message),
      }))(validated(SubagentStop, value, name));
    default:
      return E.right({ event: 'ignored', name });
  }
};

/**
 * A `Task ID:` line: the id is the rest of the line (up to any line terminator), its final
 * spaces, tabs and Markdown emphasis trimmed by a scan (a lazy group before `[ \t*_]*$` would
 * retry that tail from every position of the id: quadratic in a long line).
 */
const TASK_ID_LINE = /^[ \t>*_-]*Task ID:[ \t*_]*(\S[^\r\n\u2028\u2029]*)/imu;

/** The id written on a `Task ID:` line of `prompt`, if any. */
const writtenTaskId = (prompt: string): string | undefined => {
  const id = TASK_ID_LINE.exec(prompt)?.[1];
  return id === undefined ? undefined : id.slice(0, 1) + trimEndOf(id.slice(1), ' \t*_');
};

/** The task id of a subagent prompt: a `Task ID:` line the orchestrator wrote, else the tool call's id. */
export const selectTaskId = (dispatch: Pick<SubagentDispatch, 'prompt' | 'toolUseId'>): O.Option<string> => {
  const written = writtenTaskId(dispatch.prompt);
  if (written !== undefined && written.trim() !== '') return O.some(written.trim());
  return dispatch.toolUseId === undefined || dispatch.toolUseId.trim() === '' ? O.none : O.some(dispatch.toolUseId);
};
