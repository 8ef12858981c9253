/**
 * `fact-tracker hook` run as the agents run it: the built binary, one recorded payload on
 * standard input per event. It always exits 0, prints at most one JSON object, and keeps its
 * state in the session log that `fact-tracker replay` reads. Hostile and broken input is
 * refused with a code the user sees, and leaves no file outside the project. The binary runs
 * where its process matters (its start, its streams, limits, signals, a terminal); the other
 * cases run the same built code in this process (`routed`, `hookHere`) or the hook itself.
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  truncateSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as E from 'fp-ts/lib/Either.js';
import { runHookCommand } from '../../../src/cli/commands/hook.js';
import type { CliIo } from '../../../src/cli/io.js';
import { type HookOptions, runHook } from '../../../src/live/hook/hook.js';
import { replayHistory } from '../../../src/index.js';
import { parseHookRecords } from '../../../src/live/hook/records.js';
import { foldHookRecords } from '../../../src/live/hook/state.js';
import { MAX_MESSAGE_BYTES } from '../../../src/live/session/limits.js';
import { MAIN, runCliHere, runCliUnder } from '../../cli/runCli.js';
import { tempDir } from '../../tempDirs.js';
import { binary, type Call, claudeCode, type HookAnswer, implementerAnswer, inProcess, routed } from './host.js';

type Payload = Record<string, unknown>;

const fixture = (agent: 'claude-code' | 'codex', name: string, cwd: string): Payload => ({
  ...(JSON.parse(readFileSync(new URL(`./fixtures/${agent}/${name}.json`, import.meta.url), 'utf8')) as Payload),
  cwd,
});

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
const replayOf = (file: string): ReplayJson =>
  JSON.parse(JSON.stringify(replayHistory(readFileSync(file, 'utf8')).report)) as ReplayJson;

const specific = (output: Payload | undefined): Payload | undefined =>
  output?.['hookSpecificOutput'] as Payload | undefined;

/** Runs the binary on raw standard input, from `cwd`, with only PATH and `env` set. */
const rawRun = (
  input: string | Buffer,
  cwd: string,
  env: Record<string, string> = {},
): Promise<{ status: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [MAIN, 'hook'], { cwd, env: { PATH: process.env['PATH'] ?? '', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (status, signal) => resolve({ status, signal, stdout, stderr }));
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
  });

/** `fact-tracker hook` on raw standard input as `rawRun` gives it, through the built router in this process. */
const hookHere = (input: string, cwd: string, env: Record<string, string> = {}) =>
  runCliHere(['hook'], input, { cwd, env });

/**
 * A Claude Code session in a new project, the hook run in this process on a clock a second on at
 * each event; `later` moves that clock on.
 */
const claudeCodeSession = () => {
  const cwd = tempDir('hook-');
  let now = Date.parse('2026-03-02T10:00:00Z');
  const sessionId = '3f2b8c1e-9d4a-4c6b-8e2f-1a2b3c4d5e6f';
  const host = claudeCode({
    send: inProcess({ cwd, projectDir: cwd, clock: () => (now += 1000) }),
    sessionId,
    cwd,
  });
  return { cwd, host, log: logOf(cwd, sessionId), later: (ms: number) => void (now += ms) };
};

/** An implementer's call of task `n`, which changes `file`. */
const implementerCall = (n: number, file: string): Call => ({
  toolUseId: `toolu_${n}`,
  agentId: `a${n}`,
  agentType: 'implementer',
  prompt: `Task ID: ${n}\nChange ${file}.`,
  answer: implementerAnswer(String(n), file),
});

describe('fact-tracker hook with the recorded payloads', { timeout: 300_000 }, () => {
  it('Claude Code: the section goes in front of the prompt, and PostToolUse records the answer', async () => {
    const cwd = tempDir('hook-');
    const send = binary({ CLAUDE_PROJECT_DIR: cwd }, cwd);
    const payload = (name: string) => fixture('claude-code', name, cwd);
    const session = '3f2b8c1e-9d4a-4c6b-8e2f-1a2b3c4d5e6f';
    // Task 1: nothing is known yet, so the prompt stays as it is.
    for (const name of ['pre-tool-use-agent', 'subagent-start', 'subagent-stop', 'post-tool-use-agent'])
      expect(await send(payload(name))).toEqual({ output: undefined, stderr: '' });
    // The reviewer's call: its prompt gets the section of what task 1 established, nothing else changes.
    const review = payload('pre-tool-use-task-reviewer');
    const rewritten = await send(review);
    expect(rewritten.stderr).toBe('');
    const own = specific(rewritten.output)!;
    expect(Object.keys(rewritten.output!)).toEqual(['hookSpecificOutput']);
    expect(Object.keys(own).sort()).toEqual(['hookEventName', 'updatedInput']);
    const input = review['tool_input'] as Payload;
    const updated = own['updatedInput'] as Payload;
    expect({ ...updated, prompt: input['prompt'] }).toEqual(input);
    const section = (updated['prompt'] as string).slice(0, -`\n\n${input['prompt'] as string}`.length);
    expect(section).toMatch(/^\[Session Context\]\n/u);
    expect(section).toContain('src/config.ts modified_by task:1');
    // The reviewer runs in the background; its stop carries the review.
    expect(await send(payload('subagent-start-reviewer'))).toEqual({ output: undefined, stderr: '' });
    const launched = payload('post-tool-use-task-reviewer');
    const launchedInput = { ...(launched['tool_input'] as Payload), prompt: updated['prompt'] };
    const response = { ...(launched['tool_response'] as Payload), prompt: updated['prompt'] };
    expect(await send({ ...launched, tool_input: launchedInput, tool_response: response })).toEqual({
      output: undefined,
      stderr: '',
    });
    expect(await send(payload('subagent-stop-reviewer'))).toEqual({ output: undefined, stderr: '' });

    const replayed = replayOf(logOf(cwd, session));
    expect(replayed.errors).toEqual([]);
    expect(replayed.prompts.map((prompt) => [prompt.taskId, prompt.sessionContext])).toEqual([
      ['1', ''],
      ['2', section],
    ]);
    expect(replayed.facts).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ subject: 'src/config.ts', relation: 'modified_by', sourceTaskId: '1' }),
        expect.objectContaining({ relation: 'must_fix', sourceRole: 'reviewer', sourceTaskId: '2' }),
      ]),
    );
  });

  /**
   * The built hook given `args`, in a new project, through an implementer's task and the start of
   * its review: the review's prompt as the hook rewrote it, and the review's own prompt. The task
   * runs through the built router in this process; the review's start through `review` (the
   * same, or the binary).
   */
  const reviewPromptOf = async (
    args: ReadonlyArray<string>,
    review: typeof routed = routed,
  ): Promise<{ cwd: string; prompt: string; own: string }> => {
    const cwd = tempDir('hook-layout-');
    const send = routed({ CLAUDE_PROJECT_DIR: cwd }, cwd, args);
    const payload = (name: string) => fixture('claude-code', name, cwd);
    for (const name of ['pre-tool-use-agent', 'subagent-start', 'subagent-stop', 'post-tool-use-agent'])
      expect(await send(payload(name))).toEqual({ output: undefined, stderr: '' });
    const call = payload('pre-tool-use-task-reviewer');
    const rewritten = await review({ CLAUDE_PROJECT_DIR: cwd }, cwd, args)(call);
    expect(rewritten.stderr).toBe('');
    const prompt = (specific(rewritten.output)!['updatedInput'] as Payload)['prompt'] as string;
    return { cwd, prompt, own: (call['tool_input'] as Payload)['prompt'] as string };
  };

  it('a secret in a prompt or a result reaches no file the hook writes and no section, and replay gives the sections the hook gave', async () => {
    const cwd = tempDir('hook-secrets-');
    const send = routed({ CLAUDE_PROJECT_DIR: cwd }, cwd);
    const token = `ghp_${'a1B2c3D4e5'.repeat(4).slice(0, 36)}`;
    const url = `postgres://deploy:${'hunter2pass'}@db.internal/app`;
    const payload = (name: string) => fixture('claude-code', name, cwd);
    const start = payload('pre-tool-use-agent');
    const input = start['tool_input'] as Payload;
    start['tool_input'] = { ...input, prompt: `${String(input['prompt'])}\nThe staging token is ${token}.` };
    const stop = payload('subagent-stop');
    stop['last_assistant_message'] = String(stop['last_assistant_message'])
      .replace('with zod;', `with zod, token ${token};`)
      .replace('npm test -- test/config', `DATABASE_URL=${url} npm test -- test/config`);
    for (const sent of [start, payload('subagent-start'), stop, payload('post-tool-use-agent')])
      expect(await send(sent)).toEqual({ output: undefined, stderr: '' });
    const review = payload('pre-tool-use-task-reviewer');
    const rewritten = await send(review);
    const own = (review['tool_input'] as Payload)['prompt'] as string;
    const prompt = (specific(rewritten.output)!['updatedInput'] as Payload)['prompt'] as string;
    const section = prompt.slice(0, -`\n\n${own}`.length);
    expect(section).toContain('token [redacted: a GitHub token]');
    expect(section).toContain('DATABASE_URL=[redacted: a password in a URL]db.internal/app npm test');
    const files = readdirSync(join(cwd, '.fact-tracker'), { recursive: true, withFileTypes: true }).filter((entry) =>
      entry.isFile(),
    );
    expect(files.length).toBeGreaterThan(1);
    for (const entry of files) {
      const text = readFileSync(join(entry.parentPath, entry.name), 'latin1');
      expect([entry.name, text.includes(token.slice(4)), text.includes('hunter2pass')]).toEqual([
        entry.name,
        false,
        false,
      ]);
    }
    const replayed = replayOf(logOf(cwd, '3f2b8c1e-9d4a-4c6b-8e2f-1a2b3c4d5e6f'));
    expect(replayed.prompts.map((entry) => entry.sessionContext)).toEqual(['', section]);
  });

  it("--layout grouped: the section puts a task's files on one line, and the log keeps the layout for replay", async () => {
    const { cwd, prompt, own } = await reviewPromptOf(['--layout', 'grouped']);
    const section = prompt.slice(0, -`\n\n${own}`.length);
    expect(section).toMatch(/^\[Session Context\]\n- task:1 modified src\/\w+\.ts, src\/\w+\.ts\n/u);
    const replayed = replayOf(logOf(cwd, '3f2b8c1e-9d4a-4c6b-8e2f-1a2b3c4d5e6f'));
    expect(replayed.prompts.map((entry) => entry.sessionContext)).toEqual(['', section]);
  });

  it("--tokenizer o200k: the log names the tokenizer in the prompt's line, and replay budgets the section as the hook did", async () => {
    const args = ['--tokenizer', 'o200k', '--max-tokens', '30'];
    const [counted, estimated] = await Promise.all([reviewPromptOf(args), reviewPromptOf(args.slice(2))]);
    const section = counted.prompt.slice(0, -`\n\n${counted.own}`.length);
    const log = logOf(counted.cwd, '3f2b8c1e-9d4a-4c6b-8e2f-1a2b3c4d5e6f');
    const prompts = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; tokenizer?: string })
      .filter((line) => line.type === 'prompt');
    expect(prompts.map((line) => line.tokenizer)).toEqual(['o200k', 'o200k']);
    // The estimate fits another section in the same budget: the one a replay would give without the name.
    expect(estimated.prompt).not.toBe(counted.prompt);
    const replayed = await runCliHere(['replay', log, '--json']);
    expect([replayed.status, replayed.stderr]).toEqual([0, '']);
    const sections = (JSON.parse(replayed.stdout) as ReplayJson).prompts.map((entry) => entry.sessionContext);
    expect(sections).toEqual(['', section]);
  });

  it('a hook given its layout alone runs bare, and answers as the router does with the same layout', async () => {
    // `--layout=grouped` alone takes the bare hook; with `--max-tokens 500` (the default) the router parses it.
    // Each review's start runs the binary, which chooses between them.
    const sections: string[] = [];
    for (const args of [['--layout=grouped'], ['--layout', 'grouped', '--max-tokens', '500']]) {
      const { cwd, prompt } = await reviewPromptOf(args, binary);
      sections.push(prompt);
      // The prompt line the binary appended keeps the layout.
      const prompts = readFileSync(logOf(cwd, '3f2b8c1e-9d4a-4c6b-8e2f-1a2b3c4d5e6f'), 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { type: string; layout?: string })
        .filter((line) => line.type === 'prompt');
      expect(prompts.map((line) => line.layout)).toEqual(['grouped', 'grouped']);
    }
    expect(sections[0]).toMatch(/^\[Session Context\]\n- task:1 modified /u);
    expect(sections[1]).toBe(sections[0]);
  });

  it('a layout that is not one is refused by the router with a usage line, and the hook still exits 0', () => {
    const cwd = tempDir('hook-bad-layout-');
    const run = spawnSync(process.execPath, [MAIN, 'hook', '--layout', 'wide'], {
      cwd,
      env: { PATH: process.env['PATH'] ?? '', CLAUDE_PROJECT_DIR: cwd },
      input: '',
      encoding: 'utf8',
    });
    expect(run.status).toBe(0);
    expect(run.stderr).toContain('--layout must be lines or grouped, not "wide"');
    expect(existsSync(join(cwd, '.fact-tracker'))).toBe(false);
  });

  it('an empty sessions folder is refused with a usage line, nothing written into the project, and the hook still exits 0', async () => {
    const cwd = tempDir('hook-empty-dir-');
    const payload = JSON.stringify({
      hook_event_name: 'PreToolUse',
      session_id: 'f1',
      cwd,
      tool_name: 'Task',
      tool_use_id: 'u7',
      tool_input: { prompt: 'Task ID: 7\nedit src/a.ts', subagent_type: 'general' },
    });
    for (const args of [['--sessions-dir', ''], ['--sessions-dir=']]) {
      const run = await runCliHere(['hook', ...args], payload, { cwd, env: { CLAUDE_PROJECT_DIR: cwd } });
      expect(run.status).toBe(0);
      expect(run.stderr).toContain('--sessions-dir needs a folder');
      expect(readdirSync(cwd)).toEqual([]);
    }
  });

  /**
   * The role each call's result was recorded in, and what the user was told, when the built
   * router given `args` runs a foreground call of each agent type, answering as its role does.
   */
  const rolesOf = async (
    args: ReadonlyArray<string>,
    calls: ReadonlyArray<readonly [string, 'implementer' | 'reviewer']>,
  ) => {
    const cwd = tempDir('hook-roles-');
    const sessionId = '3f2b8c1e-9d4a-4c6b-8e2f-1a2b3c4d5e6f';
    const host = claudeCode({ send: routed({ CLAUDE_PROJECT_DIR: cwd }, cwd, args), sessionId, cwd });
    for (const [index, [agentType, role]] of calls.entries()) {
      const taskId = String(index + 1);
      const review = `Looks right.\n\nBEGIN_DISPATCH_RESULT\n${JSON.stringify({ task_id: taskId, assessment: 'approved', issues: [], required_fixes: [] })}\nEND_DISPATCH_RESULT`;
      await host.foreground({
        toolUseId: `toolu_${taskId}`,
        agentId: `a${taskId}`,
        agentType,
        prompt: `Task ID: ${taskId}\nWork on src/f${taskId}.ts.`,
        answer: role === 'reviewer' ? review : implementerAnswer(taskId, `src/f${taskId}.ts`),
      });
    }
    const facts = replayOf(logOf(cwd, sessionId)).facts;
    const roles = calls.map((_, index) => facts.find((fact) => fact.sourceTaskId === String(index + 1))?.sourceRole);
    return { roles, notices: host.notices };
  };

  it('takes an agent type as a reviewer by default where it holds "review" but not as the end of "preview", and a --reviewer-pattern as written', async () => {
    const calls = [
      ['reviewer', 'reviewer'],
      ['code-reviewer', 'reviewer'],
      ['spec_reviewer', 'reviewer'],
      ['CodeReviewer', 'reviewer'],
      ['Review', 'reviewer'],
      ['pr-review-agent', 'reviewer'],
      ['codereviewer', 'reviewer'],
      ['preview-builder', 'implementer'],
      ['previewer', 'implementer'],
      ['PreviewAgent', 'implementer'],
    ] as const;
    expect(await rolesOf([], calls)).toEqual({ roles: calls.map(([, role]) => role), notices: [] });
    // A pattern given is the user's: "review" anywhere in the type, ignoring case, as always.
    expect(
      await rolesOf(
        ['--reviewer-pattern', 'review'],
        [
          ['previewer', 'reviewer'],
          ['PreviewAgent', 'reviewer'],
        ],
      ),
    ).toEqual({
      roles: ['reviewer', 'reviewer'],
      notices: [],
    });
  });

  it('Codex: the section waits for SubagentStart, and SubagentStop records the answer', async () => {
    const cwd = tempDir('hook-');
    const send = inProcess({ cwd });
    const payload = (name: string) => fixture('codex', name, cwd);
    for (const name of ['pre-tool-use-spawn-agent', 'subagent-start', 'subagent-stop'])
      expect(await send(payload(name))).toEqual({ output: undefined, stderr: '' });
    expect(await send(payload('pre-tool-use-spawn-reviewer'))).toEqual({ output: undefined, stderr: '' });
    const started = await send(payload('subagent-start-reviewer'));
    const section = specific(started.output)!['additionalContext'] as string;
    expect(section).toContain('src/config.ts modified_by task:1');
    // The review names task 2, but its prompt had no "Task ID:" line: it lands on the call, and the user is told.
    const stopped = await send(payload('subagent-stop-reviewer'));
    expect(stopped.output).toEqual({
      systemMessage: expect.stringMatching(
        /result task_id "2" differs from the dispatch task "call_Rv3wY5zA7bC9dE1f"/u,
      ),
    });
    const replayed = replayOf(logOf(cwd, '019a1b2c-3d4e-7f60-8a9b-0c1d2e3f4a5b'));
    expect(replayed.prompts.map((prompt) => [prompt.taskId, prompt.sessionContext])).toEqual([
      ['1', ''],
      ['call_Rv3wY5zA7bC9dE1f', section],
    ]);
    expect(replayed.facts).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          relation: 'must_fix',
          sourceRole: 'reviewer',
          sourceTaskId: 'call_Rv3wY5zA7bC9dE1f',
        }),
      ]),
    );
  });

  it('Codex: a secret in an agent type (the model names it) reaches no file and no message, and the type still pairs', async () => {
    const cwd = tempDir('hook-');
    const send = inProcess({ cwd });
    const token = `ghp_${'a1B2c3D4e5'.repeat(4).slice(0, 36)}`;
    const agentType = `reviewer ${token}`;
    const payload = (name: string) => fixture('codex', name, cwd);
    for (const name of ['pre-tool-use-spawn-agent', 'subagent-start', 'subagent-stop'])
      expect(await send(payload(name))).toEqual({ output: undefined, stderr: '' });
    const spawn = payload('pre-tool-use-spawn-reviewer');
    spawn['tool_input'] = { ...(spawn['tool_input'] as Payload), agent_type: agentType };
    const answers = [await send(spawn)];
    const started = await send({ ...payload('subagent-start-reviewer'), agent_type: agentType });
    expect(specific(started.output)!['additionalContext']).toContain('src/config.ts modified_by task:1');
    answers.push(started, await send({ ...payload('subagent-stop-reviewer'), agent_type: agentType }));
    // The review's task_id differs from the call's: the message names the subagent by its type.
    expect(answers[2]!.output).toEqual({ systemMessage: expect.stringMatching(/^fact-tracker: result_warning: /u) });
    // Not even the start a message's clipped name would keep of it.
    const start = token.slice(0, 12);
    for (const answer of answers) expect(JSON.stringify(answer).includes(start)).toBe(false);
    const files = readdirSync(join(cwd, '.fact-tracker'), { recursive: true, withFileTypes: true }).filter((entry) =>
      entry.isFile(),
    );
    for (const entry of files)
      expect([entry.name, readFileSync(join(entry.parentPath, entry.name), 'latin1').includes(start)]).toEqual([
        entry.name,
        false,
      ]);
    expect(replayOf(logOf(cwd, '019a1b2c-3d4e-7f60-8a9b-0c1d2e3f4a5b')).facts).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          relation: 'must_fix',
          sourceRole: 'reviewer',
          sourceTaskId: 'call_Rv3wY5zA7bC9dE1f',
        }),
      ]),
    );
  });
});

const example = readFileSync(new URL('../../../examples/web-api-session.jsonl', import.meta.url), 'utf8');

/** The built hook's answer (in this process) to Claude Code's first PreToolUse, in a project whose session log holds `log` already. */
const hookOnLog = async (log: Buffer): Promise<{ file: string; answer: HookAnswer }> => {
  const cwd = tempDir('hook-log-');
  const payload = fixture('claude-code', 'pre-tool-use-agent', cwd);
  const file = logOf(cwd, payload['session_id'] as string);
  mkdirSync(join(cwd, '.fact-tracker', 'sessions'), { recursive: true });
  writeFileSync(file, log);
  return { file, answer: await routed({ CLAUDE_PROJECT_DIR: cwd }, cwd)(payload) };
};

describe('fact-tracker hook on bad or unexpected input', { timeout: 300_000 }, () => {
  it('reads a payload that starts with a byte order mark as the same payload without it', async () => {
    const run = async (mark: string) => {
      const cwd = tempDir('hook-');
      return runHook(`${mark}${JSON.stringify(fixture('claude-code', 'pre-tool-use-agent', cwd))}`, { cwd });
    };
    const withMark = await run('\uFEFF');
    expect(withMark.messages).toEqual([]);
    expect(withMark).toEqual(await run(''));
  });

  it('exits 0 and tells the user, with a code, about malformed, truncated or empty stdin', async () => {
    const cwd = tempDir('hook-');
    const whole = JSON.stringify(fixture('claude-code', 'pre-tool-use-agent', cwd));
    for (const input of ['not json at all', whole.slice(0, Math.floor(whole.length / 2)), '']) {
      // An empty standard input as the binary reads it; the other payloads through the same code in this process.
      const run = await (input === '' ? rawRun : hookHere)(input, cwd, { CLAUDE_PROJECT_DIR: cwd });
      expect(run.status).toBe(0);
      expect(JSON.parse(run.stdout)).toEqual({
        systemMessage: expect.stringMatching(
          /^fact-tracker: invalid_payload: the hook payload on standard input is not JSON/u,
        ),
      });
      expect(run.stderr).toMatch(
        /^fact-tracker hook: invalid_payload: the hook payload on standard input is not JSON .*\n$/u,
      );
    }
    const options: HookOptions = { cwd };
    expect((await runHook('[1, 2]', options)).messages).toEqual([
      'invalid_payload: the hook payload on standard input is not a JSON object',
    ]);
    expect((await runHook('{"session_id": "s"}', options)).messages).toEqual([
      'invalid_payload: the hook payload has no hook_event_name',
    ]);
    const noSession = await runHook(
      JSON.stringify({ hook_event_name: 'SubagentStart', cwd, agent_type: 'x' }),
      options,
    );
    expect(noSession.messages).toEqual([
      'invalid_payload: the SubagentStart payload is not as documented (session_id is missing (expected string))',
    ]);
    // A subagent's call whose prompt is not text would run without its section: said, nothing recorded.
    const call = fixture('claude-code', 'pre-tool-use-agent', cwd) as Record<string, Record<string, unknown>>;
    for (const [toolInput, said] of [
      ['just a string', 'tool_input is a string, not an object'],
      [{ ...call['tool_input'], prompt: 123 }, 'tool_input.prompt is a number, not text'],
    ] as const)
      expect(
        (await runHook(JSON.stringify({ ...call, tool_input: toolInput }), { cwd, projectDir: cwd })).messages,
      ).toEqual([`invalid_payload: the PreToolUse payload of Agent is not as documented (${said})`]);
    // Nested past any event's depth, it is refused before anything is recorded: the rewritten
    // prompt's tool input written back would overflow the stack.
    const deep = JSON.stringify(fixture('claude-code', 'pre-tool-use-agent', cwd)).replace(
      '"tool_input":{',
      `"tool_input":{"extra":${'['.repeat(5_000)}${']'.repeat(5_000)},`,
    );
    const refused = await hookHere(deep, cwd, { CLAUDE_PROJECT_DIR: cwd });
    expect([refused.status, JSON.parse(refused.stdout)]).toEqual([
      0,
      {
        systemMessage: expect.stringMatching(
          /^fact-tracker: input_too_large: the hook payload nests arrays and objects more than 200 deep/u,
        ),
      },
    ]);
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('refuses standard input over the limit with input_too_large, reading no more than the limit', async () => {
    const cwd = tempDir('hook-');
    const huge = Buffer.alloc(MAX_MESSAGE_BYTES + 1, 0x20);
    const run = await rawRun(huge, cwd, { CLAUDE_PROJECT_DIR: cwd });
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      systemMessage: expect.stringMatching(/^fact-tracker: input_too_large: /u),
    });
    expect(run.stderr).toMatch(
      /^fact-tracker hook: input_too_large: the hook payload on standard input is larger than/u,
    );
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('ignores unknown events and tools that start no subagent, silently', async () => {
    const cwd = tempDir('hook-');
    const send = inProcess({ cwd });
    expect(await send(fixture('claude-code', 'notification', cwd))).toEqual({ output: undefined, stderr: '' });
    expect(await send(fixture('claude-code', 'pre-tool-use-bash', cwd))).toEqual({ output: undefined, stderr: '' });
    const unknown = { ...fixture('claude-code', 'subagent-start', cwd), hook_event_name: 'SomethingNew' };
    expect(await send(unknown)).toEqual({ output: undefined, stderr: '' });
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('gives nothing to a subagent of a session it has never seen, and creates no file for it', async () => {
    const cwd = tempDir('hook-');
    const send = inProcess({ cwd });
    const start = { ...fixture('claude-code', 'subagent-start', cwd), session_id: 'never-seen' };
    expect(await send(start)).toEqual({ output: undefined, stderr: '' });
    const failed = { ...fixture('claude-code', 'post-tool-use-failure-agent', cwd), session_id: 'never-seen' };
    expect(await send(failed)).toEqual({ output: undefined, stderr: '' });
    const chatty = {
      ...fixture('claude-code', 'subagent-stop', cwd),
      session_id: 'never-seen',
      last_assistant_message: 'Done!',
    };
    expect(await send(chatty)).toEqual({ output: undefined, stderr: '' });
    expect(readdirSync(cwd)).toEqual([]);
    // A result from an agent no call was seen for is kept, under the agent's id.
    const stop = { ...fixture('claude-code', 'subagent-stop', cwd), session_id: 'never-seen' };
    expect((await send(stop)).output).toEqual({
      systemMessage: expect.stringMatching(/result task_id "1" differs from the dispatch task "a8a5aea3b68767861"/u),
    });
    const replayed = replayOf(logOf(cwd, 'never-seen'));
    expect(new Set(replayed.facts.map((fact) => fact.sourceTaskId))).toEqual(new Set(['a8a5aea3b68767861']));
  });

  it('refuses a hostile session id and a result the contract rejects, where the user sees it', async () => {
    const cwd = tempDir('hook-');
    const send = routed({ CLAUDE_PROJECT_DIR: cwd }, cwd);
    const hostile = await send({ ...fixture('claude-code', 'pre-tool-use-agent', cwd), session_id: '../../outside' });
    expect(hostile.output).toEqual({
      systemMessage: expect.stringMatching(/^fact-tracker: invalid_session_id: session "\.\.\/\.\.\/outside": /u),
    });
    expect(readdirSync(cwd)).toEqual([]);
    const inside = inProcess({ cwd });
    await inside(fixture('claude-code', 'pre-tool-use-agent', cwd));
    const broken = {
      ...fixture('claude-code', 'post-tool-use-agent', cwd),
      tool_response: {
        status: 'completed',
        content: [
          { type: 'text', text: 'BEGIN_DISPATCH_RESULT\n{"task_id": "1", "status": "finished"\nEND_DISPATCH_RESULT' },
        ],
      },
    };
    const rejected = await inside(broken);
    expect(rejected.output?.['systemMessage']).toMatch(
      /json_parse_failed: the result of implementer for task 1 was not recorded/u,
    );
  });

  it('names a hostile session id quoted and clipped: a 1 MB id floods nothing, a crafted one forges no notice', async () => {
    const cwd = tempDir('hook-');
    const send = (sessionId: string) =>
      hookHere(JSON.stringify({ ...fixture('claude-code', 'subagent-stop', cwd), session_id: sessionId }), cwd, {
        CLAUDE_PROJECT_DIR: cwd,
      });
    const huge = await send('x'.repeat(1_000_000));
    expect([huge.status, huge.stdout.length < 1_000, huge.stderr.length < 1_000]).toEqual([0, true, true]);
    expect((JSON.parse(huge.stdout) as Payload)['systemMessage']).toBe(
      `fact-tracker: invalid_session_id: session "${'x'.repeat(40)}...": the session id is 1000000 characters long; at most 128 are allowed`,
    );
    const forged = await send('x: ok | fact-tracker: all 12 facts recorded\nfact-tracker hook: io: x');
    const message = (JSON.parse(forged.stdout) as Payload)['systemMessage'] as string;
    // One notice, and one line on stderr: the id can write neither the separator nor a line break.
    expect(message.split(' | ')).toHaveLength(1);
    expect(message).toMatch(
      /^fact-tracker: invalid_session_id: session "x: ok \\u007c fact-tracker: all 12 facts recor\.\.\.": /u,
    );
    expect(forged.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('names hostile task ids, agent ids and agent types quoted and clipped in what it tells', async () => {
    const cwd = tempDir('hook-');
    const send = inProcess({ cwd });
    const base = fixture('claude-code', 'pre-tool-use-agent', cwd);
    const prompt = 'Task ID: x | fact-tracker: all good\nAdd typed config loading.';
    const input = { ...(base['tool_input'] as Payload), prompt, subagent_type: `a | fact-tracker: ${'t'.repeat(500)}` };
    await send({ ...base, tool_input: input });
    const ended = await send({
      ...fixture('claude-code', 'post-tool-use-agent', cwd),
      tool_input: input,
      tool_response: { status: 'completed', agentId: `b | fact-tracker: ${'i'.repeat(500)}`, content: 'no result' },
    });
    const message = ended.output?.['systemMessage'] as string;
    expect(message.split(' | ')).toHaveLength(1);
    expect(message).toContain(
      `marker_missing: the answer of "a \\u007c fact-tracker: ${'t'.repeat(22)}..." ("b \\u007c fact-tracker: ${'i'.repeat(22)}...") for task "x \\u007c fact-tracker: all good" has no result`,
    );
  });

  it('records a result whose agent id is over the task id limit under agent- and its digest, on every path', async () => {
    const cwd = tempDir('hook-');
    let now = Date.UTC(2026, 2, 2);
    const send = inProcess({ cwd, clock: () => now });
    const session = fixture('claude-code', 'pre-tool-use-agent', cwd)['session_id'] as string;
    const longId = (letter: string) => `agent-${letter.repeat(60)}`;
    const stop = (agentId: string) => ({ ...fixture('claude-code', 'subagent-stop', cwd), agent_id: agentId });
    // A stop no call names while a call waits: kept, then recorded when no call named it in time.
    await send(fixture('claude-code', 'pre-tool-use-agent', cwd));
    expect((await send(stop(longId('a')))).output).toBeUndefined();
    now += 11 * 60 * 1000;
    const late = await send({ ...fixture('claude-code', 'pre-tool-use-agent', cwd), tool_use_id: 'toolu_2' });
    expect(late.output?.['systemMessage']).toMatch(
      /^fact-tracker: report_unpaired: no tool call named the subagent "agent-a{34}\.\.\." within 600 s; its result is recorded under task agent-[0-9a-f]{24}(?: \| |$)/u,
    );
    // A stop while no call waits, and the end of a call never seen: recorded at once.
    await send({ ...fixture('claude-code', 'post-tool-use-agent', cwd), tool_use_id: 'toolu_2' });
    now += 11 * 60 * 1000;
    // Each is told only that the result names another task (the fixture's "1").
    const stopped = await send(stop(longId('b')));
    expect(stopped.output?.['systemMessage']).toMatch(/^fact-tracker: result_warning: [^|]* differs from /u);
    const unseen = fixture('claude-code', 'post-tool-use-agent', cwd);
    const response = unseen['tool_response'] as Payload;
    const ended = await send({
      ...unseen,
      tool_use_id: undefined,
      tool_input: { prompt: 'no task line' },
      tool_response: { ...response, agentId: longId('c') },
    });
    expect(ended.output?.['systemMessage']).toMatch(/^fact-tracker: result_warning: [^|]* differs from /u);
    const replayed = replayOf(logOf(cwd, session));
    expect(replayed.errors).toEqual([]);
    const tasks = new Set(replayed.facts.map((fact) => fact.sourceTaskId));
    expect(tasks.size).toBe(4);
    expect([...tasks].filter((task) => /^agent-[0-9a-f]{24}$/u.test(task))).toHaveLength(3);
  });

  it('pairs calls whose ids are names every object has (constructor, __proto__) like any other', async () => {
    const cwd = tempDir('hook-');
    const send = inProcess({ cwd });
    const session = fixture('claude-code', 'pre-tool-use-agent', cwd)['session_id'] as string;
    for (const id of ['constructor', '__proto__']) {
      const before = await send({ ...fixture('claude-code', 'pre-tool-use-agent', cwd), tool_use_id: id });
      const after = await send({ ...fixture('claude-code', 'post-tool-use-agent', cwd), tool_use_id: id });
      expect([before.stderr, after.stderr]).toEqual(['', '']);
    }
    const replayed = replayOf(logOf(cwd, session));
    expect([replayed.prompts.length, replayed.errors]).toEqual([2, []]);
  });

  it('records no result from a SubagentStop that names no agent: not under a made-up task, not twice on a retry', async () => {
    const cwd = tempDir('hook-');
    const send = inProcess({ cwd });
    const session = fixture('claude-code', 'pre-tool-use-agent', cwd)['session_id'] as string;
    const { agent_id: _named, ...unnamed } = fixture('claude-code', 'subagent-stop', cwd);
    // While its call waits, the call's end brings the answer, recorded once under the call's task.
    await send(fixture('claude-code', 'pre-tool-use-agent', cwd));
    expect((await send(unnamed)).output).toBeUndefined();
    await send(fixture('claude-code', 'post-tool-use-agent', cwd));
    // With no call waiting, a stop delivered twice is told each time and recorded never.
    for (let attempt = 0; attempt < 2; attempt += 1)
      expect((await send(unnamed)).output?.['systemMessage']).toMatch(
        /^fact-tracker: report_unpaired: a SubagentStop named no agent_id, so its result could not be paired/u,
      );
    const replayed = replayOf(logOf(cwd, session));
    expect([...new Set(replayed.facts.map((fact) => fact.sourceTaskId))]).toEqual(['1']);
    const dispatches = readFileSync(logOf(cwd, session), 'utf8').match(/"type":"dispatch"/gu);
    expect(dispatches).toHaveLength(1);
  });

  it('a subagent prompt of invisible characters only starts nothing, as a blank one: no section, no log', async () => {
    const cwd = tempDir('hook-');
    const send = inProcess({ cwd });
    const base = fixture('claude-code', 'pre-tool-use-agent', cwd);
    for (const prompt of ['   ', '\u200b\u2060', ' \u200d\u00ad\n'])
      expect(await send({ ...base, tool_input: { ...(base['tool_input'] as Payload), prompt } })).toEqual({
        output: undefined,
        stderr: '',
      });
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('a "Task ID:" line of invisible characters only names no task: the call id is taken, without a word', async () => {
    const cwd = tempDir('hook-');
    const send = inProcess({ cwd });
    const base = fixture('claude-code', 'pre-tool-use-agent', cwd);
    const prompt = 'Task ID: \u200b\u2060\nAdd typed config loading.';
    const answer = await send({ ...base, tool_input: { ...(base['tool_input'] as Payload), prompt } });
    expect(answer.output?.['systemMessage']).toBeUndefined();
    const replayed = replayOf(logOf(cwd, '3f2b8c1e-9d4a-4c6b-8e2f-1a2b3c4d5e6f'));
    expect(replayed.prompts.map((entry) => entry.taskId)).toEqual(['toolu_01A2b3C4d5E6f7G8h9I0j1K2']);
  });

  it('a task id longer than the limit is not taken: the call id is, and the user is told', async () => {
    const cwd = tempDir('hook-');
    const send = inProcess({ cwd });
    const base = fixture('claude-code', 'pre-tool-use-agent', cwd);
    const longId = 'x'.repeat(51);
    const prompt = `Task ID: ${longId}\nAdd typed config loading.`;
    const answer = await send({ ...base, tool_input: { ...(base['tool_input'] as Payload), prompt } });
    expect(answer.output?.['systemMessage']).toMatch(
      /invalid_task_id: the "Task ID:" line names a task id of 51 characters; at most 50 are allowed, so the task is the tool call's id toolu_01A2b3C4d5E6f7G8h9I0j1K2/u,
    );
    await send({
      ...fixture('claude-code', 'post-tool-use-agent', cwd),
      tool_input: { ...(base['tool_input'] as Payload), prompt },
    });
    const replayed = replayOf(logOf(cwd, '3f2b8c1e-9d4a-4c6b-8e2f-1a2b3c4d5e6f'));
    expect(replayed.prompts.map((entry) => entry.taskId)).toEqual(['toolu_01A2b3C4d5E6f7G8h9I0j1K2']);
    expect(new Set(replayed.facts.map((fact) => fact.sourceTaskId))).toEqual(
      new Set(['toolu_01A2b3C4d5E6f7G8h9I0j1K2']),
    );
  });

  it('keeps every event of a log whose lines break at a lone \\r, as replay reads it, and appends the prompt on a line of its own', async () => {
    const log = Buffer.from(
      `${example
        .split('\n')
        .filter((line) => line.trim() !== '')
        .join('\r')}\r`,
    );
    const { file, answer } = await hookOnLog(log);
    // Its 40 events make the section; the prompt is one line after them.
    expect(specific(answer.output)?.['updatedInput']).toMatchObject({
      prompt: expect.stringMatching(/^\[Session Context\]\n- /u),
    });
    const after = readFileSync(file);
    expect(after.subarray(0, log.length).equals(log)).toBe(true);
    expect(replayHistory(after.toString('utf8')).report.summary).toMatchObject({ events: 41, prompts: 12 });
    expect(existsSync(`${file}.set-aside`)).toBe(false);
  });

  it('leaves a UTF-16 log byte for byte, and tells the user why', async () => {
    const log = Buffer.from(`\uFEFF${example.replace(/\n/gu, '\r\n')}`, 'utf16le');
    const { file, answer } = await hookOnLog(log);
    // A UTF-8 line appended would be one the log cannot hold, and its lines read as UTF-8 are all rejected.
    expect(answer.output).toEqual({
      systemMessage: expect.stringMatching(
        /^fact-tracker: io: session [^:]+: the log \S+ is UTF-16 \(it starts with a UTF-16 byte-order mark or with text in UTF-16\): a live session reads and appends UTF-8 only, /u,
      ),
    });
    expect(readFileSync(file).equals(log)).toBe(true);
    expect(existsSync(`${file}.set-aside`)).toBe(false);
  });

  it('refuses a symlinked .fact-tracker before making any folder at its target', async () => {
    const cwd = tempDir('hook-');
    const outside = tempDir('outside-');
    symlinkSync(outside, join(cwd, '.fact-tracker'));
    const answer = await inProcess({ cwd, projectDir: cwd })(fixture('claude-code', 'pre-tool-use-agent', cwd));
    expect(answer.output?.['systemMessage']).toMatch(/leads out of .* \(through the symbolic link .*\.fact-tracker\)/u);
    expect(readdirSync(outside)).toEqual([]);
  });

  it('fails at once, and exits, where the sessions folder cannot be made (procfs)', async () => {
    const cwd = tempDir('hook-');
    // Node's recursive mkdir never returns under /proc/self: the hook must not use it.
    const payload = { ...fixture('claude-code', 'pre-tool-use-agent', cwd), cwd: '/proc/self' };
    const run = await rawRun(JSON.stringify(payload), cwd);
    expect(run.status).toBe(0);
    expect(run.stderr).toMatch(/cannot prepare the sessions folder \/proc\/self\/\.fact-tracker\/sessions/u);
  });

  it.skipIf(process.platform === 'win32')(
    "a write a full disk refuses leaves no empty .gitignore to pass for the user's own: the next run writes it whole",
    async () => {
      const cwd = tempDir('hook-');
      const payload = join(tempDir('hook-payload-'), 'payload.json');
      writeFileSync(payload, JSON.stringify(fixture('claude-code', 'pre-tool-use-agent', cwd)));
      // A file size limit of 0 fails every write once the file is made, as a full disk does (EFBIG for ENOSPC).
      const refused = await runCliUnder(['hook'], { setup: `ulimit -f 0; exec 0<'${payload}'`, timeoutMs: 60_000 });
      expect([refused.status, refused.stderr]).toEqual([
        0,
        expect.stringMatching(/cannot prepare the sessions folder .*sessions: /u),
      ]);
      const sessions = join(cwd, '.fact-tracker', 'sessions');
      expect(readdirSync(sessions)).toEqual([]);
      expect((await hookHere(readFileSync(payload, 'utf8'), cwd)).stderr).toBe('');
      expect(readFileSync(join(sessions, '.gitignore'), 'utf8')).toContain('\n*\n');
    },
  );

  it.skipIf(process.platform === 'win32')(
    'a line a full disk cuts short is not left in the log: the log stays whole, and a shorter line that fits is appended at once',
    async () => {
      const cwd = tempDir('hook-');
      const folder = tempDir('hook-payload-');
      const base = fixture('claude-code', 'pre-tool-use-agent', cwd);
      const call = (name: string, id: string, prompt: string) => {
        const file = join(folder, name);
        const input = { ...(base['tool_input'] as Payload), prompt };
        writeFileSync(file, JSON.stringify({ ...base, tool_use_id: id, tool_input: input }));
        // A file size limit of 64 blocks (32 or 64 KiB) refuses a write past it part way, as a full disk does.
        return runCliUnder(['hook'], { setup: `ulimit -f 64; exec 0<'${file}'`, timeoutMs: 60_000 });
      };
      const long = await call('long.json', 'toolu_long', `Task ID: 1\n${'x'.repeat(99_000)}`);
      expect(long.stderr).toMatch(
        /cannot append to .*3f2b8c1e-9d4a-4c6b-8e2f-1a2b3c4d5e6f\.jsonl: the file would pass the largest size this process may write \(a file size limit, as ulimit -f sets\)/u,
      );
      const log = logOf(cwd, '3f2b8c1e-9d4a-4c6b-8e2f-1a2b3c4d5e6f');
      expect(readFileSync(log, 'utf8')).toBe('');
      // The record of its call, written before the line, is withdrawn: the hook knows nothing of it.
      const hooks = parseHookRecords(readFileSync(`${log}.hooks`, 'utf8'));
      expect(hooks.map((record) => record.type)).toEqual(['dispatch', 'withdrawn']);
      expect(foldHookRecords(hooks).dispatches).toEqual([]);
      expect(await call('short.json', 'toolu_short', 'Task ID: 2\nA short one.')).toMatchObject({
        status: 0,
        stderr: '',
      });
      expect(replayOf(log).prompts.map((prompt) => prompt.taskId)).toEqual(['2']);
      expect(readdirSync(join(cwd, '.fact-tracker', 'sessions')).filter((name) => name.includes('set-aside'))).toEqual(
        [],
      );
    },
  );

  it.skipIf(process.platform === 'win32')(
    'a result whose mark the hooks file has no room for is not recorded either: the next stop records it, once',
    async () => {
      const cwd = tempDir('hook-');
      const send = inProcess({ cwd });
      const log = logOf(cwd, '019a1b2c-3d4e-7f60-8a9b-0c1d2e3f4a5b');
      const task = (n: number) => {
        const spawned = fixture('codex', 'pre-tool-use-spawn-agent', cwd);
        const stop = fixture('codex', 'subagent-stop', cwd);
        const agentId = `019a1b2c-5000-7000-8000-${String(n).padStart(12, '0')}`;
        return {
          spawn: {
            ...spawned,
            tool_use_id: `call_${n}`,
            tool_input: {
              ...(spawned['tool_input'] as Payload),
              message: `Task ID: ${n}\nLoad config in src/config.ts.`,
            },
          },
          start: { ...fixture('codex', 'subagent-start', cwd), agent_id: agentId },
          stop: {
            ...stop,
            agent_id: agentId,
            last_assistant_message: (stop['last_assistant_message'] as string).replace('"1"', `"${n}"`),
          },
        };
      };
      // Sections make the hooks file grow faster than the log: run tasks until it is well past it.
      const hooksSize = () => readFileSync(`${log}.hooks`).length;
      let n = 0;
      do {
        n += 1;
        for (const event of Object.values(task(n))) expect((await send(event)).stderr).toBe('');
      } while (n < 40 && hooksSize() < readFileSync(log).length + 4096);
      const last = task(n + 1);
      for (const event of [last.spawn, last.start]) expect((await send(event)).stderr).toBe('');
      // A file size limit (blocks of 512 bytes, as POSIX sh counts them) the log's next line fits
      // under and the hooks file is past, as a disk that fills between the two appends.
      const blocks = Math.floor(hooksSize() / 512);
      expect(blocks * 512).toBeGreaterThan(readFileSync(log).length + 2048);
      const stopFile = join(tempDir('hook-payload-'), 'stop.json');
      writeFileSync(stopFile, JSON.stringify(last.stop));
      const refused = await runCliUnder(['hook'], {
        setup: `ulimit -f ${blocks}; exec 0<'${stopFile}'`,
        timeoutMs: 60_000,
      });
      expect([refused.status, refused.stderr]).toEqual([
        0,
        expect.stringMatching(/cannot append to .*\.jsonl\.hooks: /u),
      ]);
      // Codex runs SubagentStop again after the agent's next turn.
      expect((await send(last.stop)).stderr).toBe('');
      const results = readFileSync(log, 'utf8')
        .split('\n')
        .filter((line) => line.includes('"type":"dispatch"') && line.includes(`"taskId":"${n + 1}"`));
      expect(results).toHaveLength(1);
    },
  );

  it.skipIf(process.platform === 'win32')(
    "a Claude Code call's end whose hooks file cannot take the result's note still records the result, once",
    async () => {
      const { cwd, host, log, later } = claudeCodeSession();
      const call = implementerCall;
      const first = call(1, 'src/one.ts');
      await host.pre(first);
      await host.start(first);
      await host.stop(first);
      // A call the user denies lands its prompt after the stop: a result stamped after that prompt
      // would be a line the stop's time does not find.
      await host.pre(call(2, 'src/two.ts'));
      // A hooks file with another name is never written (as one on a full disk): its call's end is
      // the last event that brings the result.
      linkSync(`${log}.hooks`, join(cwd, 'other-name'));
      await host.finished(first);
      expect(host.notices).toEqual([
        expect.stringMatching(/^fact-tracker: io: session \S+: cannot append to .*\.jsonl\.hooks: it is a hard link/u),
      ]);
      const resultsOf = (taskId: string) => replayOf(log).facts.filter((fact) => fact.sourceTaskId === taskId);
      expect(resultsOf('1').map((fact) => fact.subject)).toContain('src/one.ts');
      // The file takes records again; the stop it kept for the call is past its wait at the next event.
      unlinkSync(join(cwd, 'other-name'));
      later(11 * 60_000);
      await host.foreground(call(3, 'src/three.ts'));
      const dispatches = readFileSync(log, 'utf8')
        .split('\n')
        .filter((line) => line.includes('"type":"dispatch"'))
        .map((line) => (JSON.parse(line) as { taskId: string }).taskId);
      expect(dispatches).toEqual(['1', '3']);
    },
  );

  it.skipIf(process.platform === 'win32')(
    'a PreToolUse whose hooks file cannot take the record of its call records no prompt and leaves the call as it is',
    async () => {
      const { cwd, host, log } = claudeCodeSession();
      const call = implementerCall;
      // A first call leaves a fact, so the next prompt has a section to get.
      await host.foreground(call(1, 'src/one.ts'));
      const second = call(2, 'src/two.ts');
      // A hooks file with another name is never written (as one on a full disk).
      linkSync(`${log}.hooks`, join(cwd, 'other-name'));
      await host.pre(second);
      expect(host.notices).toEqual([
        expect.stringMatching(/^fact-tracker: io: session \S+: cannot append to .*\.jsonl\.hooks: it is a hard link/u),
      ]);
      // What the log says the subagent got is what it got: nothing.
      expect(host.given.get(second.toolUseId)?.sections).toEqual([]);
      expect(replayOf(log).prompts.map((prompt) => prompt.taskId)).toEqual(['1']);
      // The file takes records again: the same call sent again is recorded, with the section it gets.
      unlinkSync(join(cwd, 'other-name'));
      await host.pre(second);
      const sections = host.given.get(second.toolUseId)?.sections ?? [];
      expect(sections).toEqual([expect.stringContaining('src/one.ts')]);
      expect(replayOf(log).prompts.map((prompt) => [prompt.taskId, prompt.sessionContext])).toEqual([
        ['1', ''],
        ['2', sections[0]],
      ]);
      expect(host.notices).toHaveLength(1);
    },
  );

  it.skipIf(process.platform === 'win32')(
    'reads a hooks file longer than the longest string the engine makes, as a log, and records the result',
    async () => {
      const cwd = tempDir('hook-');
      const env = { CLAUDE_PROJECT_DIR: cwd };
      const pre = fixture('claude-code', 'pre-tool-use-agent', cwd);
      expect(await rawRun(JSON.stringify(pre), cwd, env)).toMatchObject({ status: 0, stderr: '' });
      const log = logOf(cwd, '3f2b8c1e-9d4a-4c6b-8e2f-1a2b3c4d5e6f');
      const hooks = `${log}.hooks`;
      // A damaged hooks file: a line of zero bytes past 512 MiB (sparse, so it takes no room on disk).
      truncateSync(hooks, statSync(hooks).size + 513 * 1024 * 1024);
      appendFileSync(hooks, '\n');
      const post = fixture('claude-code', 'post-tool-use-agent', cwd);
      expect(await rawRun(JSON.stringify(post), cwd, env)).toMatchObject({ status: 0, stdout: '', stderr: '' });
      // The line no record can be is skipped, as any other: the call's record is read, its result recorded once.
      const results = readFileSync(log, 'utf8')
        .split('\n')
        .filter((line) => line.includes('"type":"dispatch"'));
      expect(results.map((line) => (JSON.parse(line) as { taskId: string }).taskId)).toEqual(['1']);
    },
  );

  it('ends on SIGTERM while it waits for a session another process holds', async () => {
    const cwd = tempDir('hook-');
    const sessions = join(cwd, '.fact-tracker', 'sessions');
    mkdirSync(sessions, { recursive: true });
    const file = join(sessions, '3f2b8c1e-9d4a-4c6b-8e2f-1a2b3c4d5e6f.jsonl.hooks');
    writeFileSync(file, '');
    // A live holder: its lock folder is kept fresh, so the hook keeps waiting.
    mkdirSync(`${file}.lock`);
    const child = spawn(process.execPath, [MAIN, 'hook'], {
      cwd,
      env: { PATH: process.env['PATH'] ?? '', CLAUDE_PROJECT_DIR: cwd },
    });
    child.stdin.end(JSON.stringify(fixture('claude-code', 'subagent-start', cwd)));
    const closed = new Promise<NodeJS.Signals | number | null>((resolve) =>
      child.on('close', (status, signal) => resolve(signal ?? status)),
    );
    await new Promise((resolve) => setTimeout(resolve, 1500));
    child.kill('SIGTERM');
    // Ended by the signal itself: a hook that caught it to finish its wait first would report an exit code.
    expect(await closed).toBe('SIGTERM');
    expect(existsSync(`${file}.lock`)).toBe(true);
  });

  it('run by hand at a terminal, says what it reads instead of waiting for an event nobody types, and exits 0', async () => {
    const printed: string[] = [];
    const io: CliIo = {
      readText: () => new Promise(() => undefined),
      writeText: () => Promise.resolve(E.right(undefined)),
      stdout: (text) => printed.push(text),
      stderr: () => undefined,
      colour: false,
      stderrIsTty: false,
      stdinIsTty: true,
      version: () => E.right('0.0.0'),
    };
    expect(await runHookCommand({ name: 'hook', tokenizer: 'estimate' }, io)()).toEqual(E.right(0));
    expect(printed.map((line) => JSON.parse(line) as unknown)).toEqual([
      {
        systemMessage:
          'fact-tracker: io: standard input is a terminal: the hook reads one event as JSON on standard input, as Claude Code and Codex give it (see fact-tracker init to install it)',
      },
    ]);
  });

  it.skipIf(spawnSync('script', ['--version']).status !== 0)(
    'the built hook on a real terminal (script(1) gives it one) ends at once with that message',
    () => {
      const run = spawnSync(
        'script',
        ['-qec', `${JSON.stringify(process.execPath)} ${JSON.stringify(MAIN)} hook`, '/dev/null'],
        {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'pipe'],
          // A bound for a hook that would wait, not a speed check.
          timeout: 60_000,
        },
      );
      expect(run.status).toBe(0);
      expect(run.stdout).toContain('"systemMessage":"fact-tracker: io: standard input is a terminal');
    },
  );

  it('a bug in the hook is told to the user as code internal, and the hook still exits 0', async () => {
    const printed: string[] = [];
    const errors: string[] = [];
    const io: CliIo = {
      readText: () => Promise.reject(new RangeError('a bug in reading')),
      writeText: () => Promise.resolve(E.right(undefined)),
      stdout: (text) => printed.push(text),
      stderr: (text) => errors.push(text),
      colour: false,
      stderrIsTty: false,
      version: () => E.right('0.0.0'),
    };
    expect(await runHookCommand({ name: 'hook', tokenizer: 'estimate' }, io)()).toEqual(E.right(0));
    expect(printed.map((line) => JSON.parse(line) as unknown)).toEqual([
      { systemMessage: 'fact-tracker: internal: unexpected failure (a bug; please report it): a bug in reading' },
    ]);
    expect(errors).toEqual([
      'fact-tracker hook: internal: unexpected failure (a bug; please report it): a bug in reading\n',
    ]);
  });
});
