/**
 * `fact-tracker hook` run as the agents run it: the built binary, one recorded payload on
 * standard input per event. It always exits 0, prints at most one JSON object, and keeps its
 * state in the session log that `fact-tracker replay` reads.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runHook } from '../../src/hook/hook.js';
import { replayHistory } from '../../src/index.js';
import { ROOT, runCli } from '../cli/runCli.js';
import { tempDir } from '../tempDirs.js';

type Payload = Record<string, unknown>;

const fixture = (agent: 'claude-code' | 'codex', name: string, cwd: string): Payload => ({
  ...(JSON.parse(readFileSync(new URL(`./fixtures/${agent}/${name}.json`, import.meta.url), 'utf8')) as Payload),
  cwd,
});

/** Runs the hook on one payload (an object, or raw text) and checks what every run must hold. */
const hook = async (payload: Payload | string, ...args: string[]) => {
  const run = await runCli(['hook', ...args], typeof payload === 'string' ? payload : JSON.stringify(payload));
  expect(run.status).toBe(0);
  // At most one JSON object on stdout.
  const lines = run.stdout.split('\n').filter((line) => line !== '');
  expect(lines.length).toBeLessThanOrEqual(1);
  const output = lines.length === 0 ? undefined : (JSON.parse(lines[0]!) as Payload);
  return { output, stderr: run.stderr };
};

/** The additionalContext a SubagentStart output carries. */
const contextOf = (output: Payload | undefined): string | undefined => {
  const specific = output?.['hookSpecificOutput'] as Payload | undefined;
  if (specific === undefined) return undefined;
  expect(specific['hookEventName']).toBe('SubagentStart');
  return specific['additionalContext'] as string;
};

const logOf = (cwd: string, sessionId: string): string => join(cwd, '.fact-tracker', 'sessions', `${sessionId}.jsonl`);

interface ReplayJson {
  readonly prompts: ReadonlyArray<{ readonly taskId: string; readonly sessionContext: string }>;
  readonly facts: ReadonlyArray<{
    readonly subject: string;
    readonly relation: string;
    readonly sourceRole: string;
    readonly sourceTaskId: string;
  }>;
  readonly errors: ReadonlyArray<unknown>;
}

/** The session log as `fact-tracker replay --json` reports it (the same function, in this process). */
const replayOf = async (file: string): Promise<ReplayJson> =>
  JSON.parse(JSON.stringify(replayHistory(readFileSync(file, 'utf8')).report)) as ReplayJson;

/** The same event run in this process, printed as the command prints it. */
const inProcess = async (payload: Payload) => {
  const outcome = await runHook(JSON.stringify(payload), { cwd: ROOT });
  return {
    output: outcome.output as Payload | undefined,
    stderr: outcome.messages.map((message) => `fact-tracker hook: ${message}\n`).join(''),
  };
};

// Claude Code's payloads go through the binary, as the agent runs it; Codex's through the same
// code in this process (a run of the binary takes seconds on a loaded machine).
describe.each([
  {
    agent: 'claude-code' as const,
    run: (payload: Payload) => hook(payload),
    session: '3f2b8c1e-9d4a-4c6b-8e2f-1a2b3c4d5e6f',
    dispatch: 'pre-tool-use-agent',
    review: 'pre-tool-use-task-reviewer',
    reviewTask: '2',
  },
  {
    agent: 'codex' as const,
    run: inProcess,
    session: '019a1b2c-3d4e-7f60-8a9b-0c1d2e3f4a5b',
    dispatch: 'pre-tool-use-spawn-agent',
    review: 'pre-tool-use-spawn-reviewer',
    reviewTask: 'call_Rv3wY5zA7bC9dE1f',
  },
])(
  'fact-tracker hook with $agent payloads',
  { timeout: 120_000 },
  ({ agent, run, session, dispatch, review, reviewTask }) => {
    it('records the dispatch, hands the section to the subagent that starts, and records its result', async () => {
      const cwd = tempDir('hook-');
      const payload = (name: string) => fixture(agent, name, cwd);

      // Task 1: nothing is known yet, so the implementer starts without a section.
      expect(await run(payload(dispatch))).toEqual({ output: undefined, stderr: '' });
      expect(await run(payload('subagent-start'))).toEqual({ output: undefined, stderr: '' });
      expect(await run(payload('subagent-stop'))).toEqual({ output: undefined, stderr: '' });

      // The reviewer's dispatch: its section holds what the implementer's result established.
      expect(await run(payload(review))).toEqual({ output: undefined, stderr: '' });
      const started = await run(payload('subagent-start-reviewer'));
      expect(started.stderr).toBe('');
      const section = contextOf(started.output);
      expect(section).toMatch(/^\[Session Context\]\n/u);
      expect(section).toContain('src/config.ts modified_by task:1');
      expect(await run(payload('subagent-stop-reviewer'))).toEqual({ output: undefined, stderr: '' });

      // Everything is in the session log, which replay reads: each section as the subagent got it.
      const replayed = await replayOf(logOf(cwd, session));
      expect(replayed.errors).toEqual([]);
      expect(replayed.prompts.map((prompt) => [prompt.taskId, prompt.sessionContext])).toEqual([
        ['1', ''],
        [reviewTask, section],
      ]);
      expect(replayed.facts).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            subject: 'src/config.ts',
            relation: 'modified_by',
            sourceRole: 'implementer',
            sourceTaskId: '1',
          }),
          expect.objectContaining({ relation: 'must_fix', sourceRole: 'reviewer', sourceTaskId: reviewTask }),
        ]),
      );
    });
  },
);

// Each test runs the binary a few times: seconds each on a loaded machine.
describe('fact-tracker hook on bad or unexpected input', { timeout: 120_000 }, () => {
  it('exits 0 with nothing on stdout and one line on stderr for malformed, truncated or empty stdin', async () => {
    const cwd = tempDir('hook-');
    const whole = JSON.stringify(fixture('claude-code', 'pre-tool-use-agent', cwd));
    for (const input of ['not json at all', whole.slice(0, Math.floor(whole.length / 2)), '']) {
      const run = await hook(input);
      expect(run.output).toBeUndefined();
      expect(run.stderr).toMatch(/^fact-tracker hook: the hook payload on standard input is not JSON .*\n$/u);
    }
    expect(await runHook('[1, 2]', { cwd })).toEqual({
      messages: ['the hook payload on standard input is not a JSON object'],
    });
    expect(await runHook('{"session_id": "s"}', { cwd })).toEqual({
      messages: ['the hook payload has no hook_event_name'],
    });
    const noSession = await runHook(
      JSON.stringify({ hook_event_name: 'SubagentStart', cwd, agent_type: 'implementer' }),
      {
        cwd,
      },
    );
    expect(noSession.messages).toEqual([
      'the SubagentStart payload is not as documented (session_id Invalid input: expected string, received undefined)',
    ]);
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('ignores unknown events and tools that start no subagent, silently', async () => {
    const cwd = tempDir('hook-');
    expect(await hook(fixture('claude-code', 'notification', cwd))).toEqual({ output: undefined, stderr: '' });
    expect(await runHook(JSON.stringify(fixture('claude-code', 'pre-tool-use-bash', cwd)), { cwd })).toEqual({
      messages: [],
    });
    const unknown = { ...fixture('claude-code', 'subagent-start', cwd), hook_event_name: 'SomethingNew' };
    expect(await runHook(JSON.stringify(unknown), { cwd })).toEqual({ messages: [] });
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('gives nothing to a subagent of a session it has never seen, and creates no file for it', async () => {
    const cwd = tempDir('hook-');
    const start = { ...fixture('claude-code', 'subagent-start', cwd), session_id: 'never-seen' };
    expect(await hook(start)).toEqual({ output: undefined, stderr: '' });
    expect(readdirSync(cwd)).toEqual([]);
    // A stop without a result block records nothing either.
    const chatty = {
      ...fixture('claude-code', 'subagent-stop', cwd),
      session_id: 'never-seen',
      last_assistant_message: 'Done!',
    };
    expect(await runHook(JSON.stringify(chatty), { cwd })).toEqual({ messages: [] });
    expect(existsSync(logOf(cwd, 'never-seen'))).toBe(false);
    // A result from an agent nobody saw start is kept, under the agent's id.
    const stop = { ...fixture('claude-code', 'subagent-stop', cwd), session_id: 'never-seen' };
    expect(await runHook(JSON.stringify(stop), { cwd })).toEqual({ messages: [] });
    const replayed = await replayOf(logOf(cwd, 'never-seen'));
    expect(new Set(replayed.facts.map((fact) => fact.sourceTaskId))).toEqual(new Set(['a8a5aea3b68767861']));
  });

  it('refuses a hostile session id, a result the contract rejects and a bad option, and still exits 0', async () => {
    const cwd = tempDir('hook-');
    const hostile = await hook({ ...fixture('claude-code', 'pre-tool-use-agent', cwd), session_id: '../../outside' });
    expect(hostile.output).toBeUndefined();
    expect(hostile.stderr).toMatch(/^fact-tracker hook: session \.\.\/\.\.\/outside: invalid_session_id: /u);
    expect(readdirSync(cwd)).toEqual([]);
    const broken = {
      ...fixture('claude-code', 'subagent-stop', cwd),
      last_assistant_message: 'BEGIN_DISPATCH_RESULT\n{"task_id": "1", "status": "finished"\nEND_DISPATCH_RESULT',
    };
    const rejected = await hook(broken);
    expect(rejected.stderr).toMatch(/was not recorded: json_parse_failed: /u);
    const option = await hook(fixture('claude-code', 'notification', cwd), '--no-such-option');
    expect(option.stderr).toMatch(/^fact-tracker hook: Unknown option '--no-such-option'/u);
  });

  it('hands each of several subagents of one type started at once its own pending section, oldest first', async () => {
    const cwd = tempDir('hook-');
    const payload = (name: string) => fixture('claude-code', name, cwd);
    const run = (value: Payload) => runHook(JSON.stringify(value), { cwd });
    // One result first, so the sections have facts to carry.
    for (const name of ['pre-tool-use-agent', 'subagent-start', 'subagent-stop'])
      expect(await run(payload(name))).toEqual({ messages: [] });
    const dispatches = ['src/config.ts validation', 'src/server.ts start-up'].map((topic, i) => {
      const base = payload('pre-tool-use-agent');
      return {
        ...base,
        tool_use_id: `toolu_parallel_${i}`,
        tool_input: { ...(base['tool_input'] as Payload), prompt: `Task ID: ${10 + i}\nImprove ${topic}.` },
      };
    });
    for (const dispatchPayload of dispatches) expect(await run(dispatchPayload)).toEqual({ messages: [] });
    // Three hook commands at once (each takes the lock of the session's hooks file in turn).
    const starts = await Promise.all(
      ['agent-one', 'agent-two', 'agent-three'].map((agentId) =>
        run({ ...payload('subagent-start'), agent_id: agentId }),
      ),
    );
    const sections = starts.map((start) => contextOf(start.output));
    const replayed = await replayOf(logOf(cwd, '3f2b8c1e-9d4a-4c6b-8e2f-1a2b3c4d5e6f'));
    const pending = replayed.prompts.slice(1).map((prompt) => prompt.sessionContext);
    expect(pending).toHaveLength(2);
    // Two sections for three subagents: each handed out once, in the order of the starts; the third gets none.
    expect(sections).toEqual([...pending, undefined]);
    // The result of the second agent is recorded under the task it was started for.
    const stop = { ...payload('subagent-stop'), agent_id: 'agent-two' };
    expect(await run(stop)).toEqual({ messages: [] });
    const facts = (await replayOf(logOf(cwd, '3f2b8c1e-9d4a-4c6b-8e2f-1a2b3c4d5e6f'))).facts;
    expect(facts.some((fact) => fact.sourceTaskId === '11')).toBe(true);
  });
});
