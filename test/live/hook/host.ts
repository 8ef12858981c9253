/**
 * A model of how Claude Code and Codex call `fact-tracker hook` around one subagent: the
 * payloads each host writes for each event (the shapes of the recorded fixtures), in the order
 * the host sends them, with the hook's answers applied as the host applies them (a rewritten
 * prompt reaches the subagent only on a host that honours `updatedInput`, `additionalContext`
 * of `SubagentStart` always does). It records what each subagent was given, so a test can
 * check that every subagent got its own section exactly once.
 */
import { execFile } from 'node:child_process';
import { expect } from 'vitest';
import { hookOutput, type HookOptions, runHook } from '../../../src/live/hook/hook.js';
import { MAIN, runCliHere } from '../../cli/runCli.js';

type Payload = Record<string, unknown>;

/** What one hook run answered. */
export interface HookAnswer {
  readonly output: Payload | undefined;
  readonly stderr: string;
}

/** Sends one payload to the hook and returns its answer. */
export type Send = (payload: Payload) => Promise<HookAnswer>;

/** The hook in this process, printed as the command prints it. */
export const inProcess =
  (options: HookOptions): Send =>
  async (payload) => {
    const outcome = await runHook(JSON.stringify(payload), options);
    return {
      output: hookOutput(outcome) as Payload | undefined,
      stderr: outcome.messages.map((message) => `fact-tracker hook: ${message}\n`).join(''),
    };
  };

/** The answer a hook printed: at most one line of JSON on stdout, else an error. */
const answerOf = (stdout: string, stderr: string): HookAnswer => {
  const lines = stdout.split('\n').filter((line) => line !== '');
  if (lines.length > 1) throw new Error(`the hook printed ${lines.length} lines:\n${stdout}`);
  return { output: lines.length === 0 ? undefined : (JSON.parse(lines[0]!) as Payload), stderr };
};

/**
 * The built binary (or the `main` of another installation), as the agent runs it: a process
 * per event, from `cwd`, with exactly `env`.
 */
export const binary =
  (env: Readonly<Record<string, string>>, cwd: string, args: ReadonlyArray<string> = [], main = MAIN): Send =>
  (payload) =>
    new Promise((resolve, reject) => {
      const child = execFile(
        process.execPath,
        [main, 'hook', ...args],
        { cwd, env: { PATH: process.env['PATH'] ?? '', ...env }, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
        (error, stdout, stderr) => {
          if (error !== null) return reject(new Error(`the hook failed: ${error.message}\n${stderr}`));
          try {
            resolve(answerOf(stdout, stderr));
          } catch (failed) {
            reject(failed as Error);
          }
        },
      );
      child.stdin?.end(JSON.stringify(payload));
    });

/**
 * `fact-tracker hook ...args` as `binary` runs it, through the built router in this process
 * (`runCliHere`): the command line parsed, the payload as standard input, from `cwd` with `env`,
 * without a process's start.
 */
export const routed =
  (env: Readonly<Record<string, string>>, cwd: string, args: ReadonlyArray<string> = []): Send =>
  async (payload) => {
    const run = await runCliHere(['hook', ...args], JSON.stringify(payload), { cwd, env });
    if (run.status !== 0) throw new Error(`the hook exited ${run.status}\n${run.stderr}`);
    return answerOf(run.stdout, run.stderr);
  };

/** One subagent call, as the orchestrator makes it. */
export interface Call {
  readonly toolUseId: string;
  readonly agentId: string;
  readonly agentType: string;
  readonly prompt: string;
  /** The subagent's final message. */
  readonly answer: string;
  /** The directory the agent is in when it makes the call (default: the session's). */
  readonly cwd?: string;
}

/** What a subagent was given besides its own prompt: each section that reached it. */
export interface Given {
  readonly call: Call;
  readonly sections: string[];
  /** The input the tool ran with. */
  input: Payload;
}

/** What the user was told during a sequence (`systemMessage`s). */
export type Notices = string[];

/** Sends payloads, keeping every `systemMessage` the user would see. */
const delivering =
  (send: Send, notices: Notices) =>
  async (payload: Payload): Promise<HookAnswer> => {
    const answer = await send(payload);
    const message = answer.output?.['systemMessage'];
    if (typeof message === 'string') notices.push(message);
    return answer;
  };

const specific = (answer: HookAnswer): Payload | undefined =>
  answer.output?.['hookSpecificOutput'] as Payload | undefined;

/** A Claude Code session driving the hook. */
export const claudeCode = (options: {
  readonly send: Send;
  readonly sessionId: string;
  readonly cwd: string;
  /** True when the host applies `updatedInput` to its subagent tool (default true). */
  readonly honoursRewrite?: boolean;
  readonly tool?: 'Agent' | 'Task';
}) => {
  const { send, sessionId } = options;
  const tool = options.tool ?? 'Agent';
  const honours = options.honoursRewrite ?? true;
  const notices: Notices = [];
  const given = new Map<string, Given>();
  const common = (call: Call): Payload => ({
    session_id: sessionId,
    transcript_path: `/home/dev/.claude/projects/-work-project/${sessionId}.jsonl`,
    cwd: call.cwd ?? options.cwd,
    permission_mode: 'default',
  });
  const deliver = delivering(send, notices);
  const givenOf = (call: Call): Given => {
    const entry = given.get(call.toolUseId);
    if (entry === undefined) throw new Error(`${call.toolUseId} was not dispatched`);
    return entry;
  };
  /** The fields of an event about the end of a call: the input it ran with. */
  const ended = (call: Call, name: 'PostToolUse' | 'PostToolUseFailure'): Payload => ({
    ...common(call),
    hook_event_name: name,
    tool_name: tool,
    tool_input: givenOf(call).input,
    tool_use_id: call.toolUseId,
  });
  const originalInput = (call: Call): Payload => ({
    description: `Task ${call.toolUseId}`,
    prompt: call.prompt,
    subagent_type: call.agentType,
  });

  return {
    notices,
    given,
    /** `PreToolUse`: the hook may rewrite the input; the host applies the rewrite if it honours it. */
    async pre(call: Call): Promise<HookAnswer> {
      const input = originalInput(call);
      const answer = await deliver({
        ...common(call),
        hook_event_name: 'PreToolUse',
        tool_name: tool,
        tool_input: input,
        tool_use_id: call.toolUseId,
      });
      const own = specific(answer);
      if (own !== undefined) {
        expect(own['hookEventName']).toBe('PreToolUse');
        // The hook never decides permissions: the user is asked what they would be asked anyway.
        expect(own).not.toHaveProperty('permissionDecision');
      }
      const updated = own?.['updatedInput'] as Payload | undefined;
      const ran = updated !== undefined && honours ? updated : input;
      if (updated !== undefined) {
        // The rewrite keeps every other field, and puts a section in front of the prompt.
        expect({ ...updated, prompt: call.prompt }).toEqual(input);
        expect((updated['prompt'] as string).endsWith(`\n\n${call.prompt}`)).toBe(true);
      }
      const sections: string[] = [];
      if (ran !== input) sections.push((ran['prompt'] as string).slice(0, -`\n\n${call.prompt}`.length));
      given.set(call.toolUseId, { call, sections, input: ran });
      return answer;
    },
    /** `SubagentStart`: a section given as `additionalContext` reaches the subagent. */
    async start(call: Call): Promise<void> {
      const answer = await deliver({
        ...common(call),
        hook_event_name: 'SubagentStart',
        agent_id: call.agentId,
        agent_type: call.agentType,
      });
      const own = specific(answer);
      if (own === undefined) return;
      expect(own['hookEventName']).toBe('SubagentStart');
      givenOf(call).sections.push(own['additionalContext'] as string);
    },
    async stop(call: Call, message: string = call.answer): Promise<void> {
      await deliver({
        ...common(call),
        hook_event_name: 'SubagentStop',
        stop_hook_active: false,
        agent_id: call.agentId,
        agent_type: call.agentType,
        agent_transcript_path: `/home/dev/.claude/projects/-work-project/${sessionId}/subagents/agent-${call.agentId}.jsonl`,
        last_assistant_message: message,
      });
    },
    /**
     * `PostToolUse` of a foreground call: the subagent finished, its text in `tool_response.content`;
     * `named` false for an older `Task` tool's response, which names no agent.
     */
    async finished(call: Call, named = true): Promise<void> {
      await deliver({
        ...ended(call, 'PostToolUse'),
        tool_response: {
          status: 'completed',
          ...(named ? { agentId: call.agentId } : {}),
          content: [{ type: 'text', text: call.answer }],
          resolvedModel: 'claude-sonnet-4-5',
          totalDurationMs: 48211,
          totalTokens: 12450,
          totalToolUseCount: 7,
          usage: { input_tokens: 8320, output_tokens: 912 },
        },
        duration_ms: 48211,
      });
    },
    /** `PostToolUse` of a call sent to the background: the subagent runs on; its stop comes later. */
    async launched(call: Call): Promise<void> {
      await deliver({
        ...ended(call, 'PostToolUse'),
        tool_response: {
          status: 'async_launched',
          agentId: call.agentId,
          description: `Task ${call.toolUseId}`,
          prompt: givenOf(call).input['prompt'],
          outputFile: `/tmp/claude/${call.agentId}.output`,
          resolvedModel: 'claude-sonnet-4-5',
        },
      });
    },
    async failed(call: Call): Promise<void> {
      await deliver({
        ...ended(call, 'PostToolUseFailure'),
        error: 'Agent failed: the model returned an error',
        is_interrupt: false,
      });
    },
    /** A whole foreground call: dispatched, started, stopped, finished. */
    async foreground(call: Call): Promise<void> {
      await this.pre(call);
      await this.start(call);
      await this.stop(call);
      await this.finished(call);
    },
  };
};

/** A Codex session driving the hook: `spawn_agent` has no tool hooks there, only the subagent events. */
export const codex = (options: { readonly send: Send; readonly sessionId: string; readonly cwd: string }) => {
  const { send, sessionId, cwd } = options;
  const notices: Notices = [];
  const given = new Map<string, Given>();
  let turn = 0;
  const common = (): Payload => ({
    session_id: sessionId,
    turn_id: `019a1b2c-4000-7000-8000-${String((turn += 1)).padStart(12, '0')}`,
    transcript_path: `/home/dev/.codex/sessions/2026/03/02/rollout-${sessionId}.jsonl`,
    cwd,
    model: 'gpt-5-codex',
    permission_mode: 'default',
  });
  const deliver = delivering(send, notices);
  return {
    notices,
    given,
    async pre(call: Call): Promise<void> {
      const answer = await deliver({
        ...common(),
        hook_event_name: 'PreToolUse',
        tool_name: 'spawn_agent',
        tool_input: { agent_type: call.agentType, message: call.prompt },
        tool_use_id: call.toolUseId,
      });
      // Codex would need an "allow" to apply a rewrite: the hook never rewrites there.
      expect(specific(answer)).toBeUndefined();
      given.set(call.toolUseId, { call, sections: [], input: { message: call.prompt } });
    },
    async start(call: Call): Promise<void> {
      const answer = await deliver({
        ...common(),
        hook_event_name: 'SubagentStart',
        agent_id: call.agentId,
        agent_type: call.agentType,
      });
      const own = specific(answer);
      if (own !== undefined) given.get(call.toolUseId)?.sections.push(own['additionalContext'] as string);
    },
    /** `PostToolUse` of `spawn_agent`, where the host sends one: the spawn returns at once, naming its agent. */
    async spawned(call: Call): Promise<void> {
      await deliver({
        ...common(),
        hook_event_name: 'PostToolUse',
        tool_name: 'spawn_agent',
        tool_input: { agent_type: call.agentType, message: call.prompt },
        tool_use_id: call.toolUseId,
        tool_response: { status: 'async_launched', agent_id: call.agentId },
      });
    },
    async stop(call: Call, message: string = call.answer): Promise<void> {
      await deliver({
        ...common(),
        hook_event_name: 'SubagentStop',
        agent_id: call.agentId,
        agent_type: call.agentType,
        agent_transcript_path: null,
        stop_hook_active: false,
        last_assistant_message: message,
      });
    },
  };
};

/** An implementer's final message: it changed `file` (one fact per file, bound to the task). */
export const implementerAnswer = (taskId: string, file: string): string =>
  `Done.\n\nBEGIN_DISPATCH_RESULT\n${JSON.stringify(
    {
      task_id: taskId,
      status: 'completed',
      summary: `Changed ${file}`,
      files_changed: [file],
      tests: [{ command: 'npm test', passed: true }],
      follow_up_actions: ['none'],
    },
    null,
    2,
  )}\nEND_DISPATCH_RESULT`;
