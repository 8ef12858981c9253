/**
 * The limits of `fact-tracker mcp`, through the SDK's own client over stdio against the built
 * binary: the tools' schemas carry the numbers of src/session/limits.ts and the defaults the
 * code applies; a call over a limit, a deeply nested output and arguments the schema refuses
 * all get a tool error that starts with a code; a JSON-RPC message over the limit ends the
 * server with an error instead of leaving it alive and deaf.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import * as E from 'fp-ts/lib/Either.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_MAX_FACTS as DEFAULT_SECTION_FACTS,
  DEFAULT_MAX_TOKENS as DEFAULT_SECTION_TOKENS,
} from '../../../src/index.js';
import {
  MAX_MESSAGE_BYTES,
  MAX_OUTPUT_LENGTH,
  MAX_PROMPT_LENGTH,
  MAX_SECTION_FACTS,
  MAX_SESSION_ID_LENGTH,
  MAX_TASK_ID_LENGTH,
} from '../../../src/live/session/index.js';
import { withFileLock } from '../../../src/node/lock.js';
import { MAIN } from '../../cli/runCli.js';
import { implementerAnswer } from '../hook/host.js';
import { tempDir } from '../../tempDirs.js';

interface ToolResult {
  readonly content: ReadonlyArray<{ readonly type: string; readonly text?: string }>;
  readonly isError?: boolean;
}

const connect = async (cwd: string) => {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run "npm run build" first (npm test does it)`);
  const transport = new StdioClientTransport({ command: process.execPath, args: [MAIN, 'mcp'], cwd, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: 'fact-tracker-limits', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport, stderr: () => stderr };
};

const text = (result: ToolResult): string => result.content.map((part) => part.text ?? '').join('');

type Schema = { properties?: Record<string, Record<string, unknown>> };

/** The JSON Schema of a property, or of its string form when it is a union. */
const stringForm = (property: Record<string, unknown> | undefined): Record<string, unknown> | undefined =>
  property?.['type'] === 'string'
    ? property
    : ((property?.['anyOf'] as Array<Record<string, unknown>> | undefined)?.find((form) => form['type'] === 'string') ??
      undefined);

describe('fact-tracker mcp limits', { timeout: 120_000 }, () => {
  let cwd: string;
  let server: Awaited<ReturnType<typeof connect>>;

  // Starting the server takes seconds on a loaded machine: more than the default 10 s for hooks.
  beforeAll(async () => {
    cwd = tempDir('mcp-limits-');
    server = await connect(cwd);
  }, 60_000);
  afterAll(async () => {
    await server.client.close();
  });

  it('publishes the limits and defaults the code applies in the tools’ schemas', async () => {
    const { tools } = await server.client.listTools();
    const schemas = Object.fromEntries(tools.map((tool) => [tool.name, tool.inputSchema as Schema]));
    // A task id is bounded once its whitespace is collapsed: published as maxLength, which a client
    // checks on the text as it is, and its description says the rest.
    for (const tool of ['ingest_result', 'compile_context', 'explain_context']) {
      const taskId = stringForm(schemas[tool]?.properties?.['taskId']);
      expect([tool, taskId?.['maxLength'], String(schemas[tool]?.properties?.['taskId']?.['description'])]).toEqual([
        tool,
        MAX_TASK_ID_LENGTH,
        expect.stringContaining(`at most ${MAX_TASK_ID_LENGTH} characters once whitespace is collapsed`),
      ]);
    }
    for (const tool of ['compile_context', 'explain_context'])
      expect([tool, stringForm(schemas[tool]?.properties?.['taskPrompt'])?.['maxLength']]).toEqual([
        tool,
        MAX_PROMPT_LENGTH,
      ]);
    expect(stringForm(schemas['ingest_result']?.properties?.['output'])?.['maxLength']).toBe(MAX_OUTPUT_LENGTH);
    for (const tool of ['ingest_result', 'compile_context', 'list_facts', 'invalidate_fact'])
      expect([tool, stringForm(schemas[tool]?.properties?.['sessionId'])?.['maxLength']]).toEqual([
        tool,
        MAX_SESSION_ID_LENGTH,
      ]);
    const compile = schemas['compile_context']?.properties ?? {};
    expect(compile['maxFacts']).toMatchObject({ default: DEFAULT_SECTION_FACTS, maximum: MAX_SECTION_FACTS });
    expect(compile['maxTokens']).toMatchObject({ default: DEFAULT_SECTION_TOKENS });
    expect(String(compile['maxFacts']?.['description'])).toContain(`default ${DEFAULT_SECTION_FACTS}`);
  });

  it('refuses every call over a limit with a tool error that starts with its code, and keeps serving', async () => {
    const result = { task_id: '1', status: 'completed', summary: 'done' };
    const cases: ReadonlyArray<readonly [string, Record<string, unknown>, string]> = [
      [
        'compile_context',
        { sessionId: 's', taskId: 't'.repeat(MAX_TASK_ID_LENGTH + 1), taskPrompt: 'x' },
        'invalid_field',
      ],
      [
        'ingest_result',
        { sessionId: 's', taskId: 't'.repeat(MAX_TASK_ID_LENGTH + 1), role: 'implementer', output: result },
        'invalid_field',
      ],
      [
        'compile_context',
        { sessionId: 's', taskId: '1', taskPrompt: 'p'.repeat(MAX_PROMPT_LENGTH + 1) },
        'prompt_too_large',
      ],
      [
        'explain_context',
        { sessionId: 's', taskId: '1', taskPrompt: 'p'.repeat(MAX_PROMPT_LENGTH + 1) },
        'prompt_too_large',
      ],
      [
        'ingest_result',
        { sessionId: 's', taskId: '1', role: 'implementer', output: 'o'.repeat(MAX_OUTPUT_LENGTH + 1) },
        'output_too_large',
      ],
      [
        'ingest_result',
        {
          sessionId: 's',
          taskId: '1',
          role: 'implementer',
          output: { ...result, notes: 'n'.repeat(MAX_OUTPUT_LENGTH) },
        },
        'output_too_large',
      ],
      [
        'ingest_result',
        {
          sessionId: 's',
          taskId: '1',
          role: 'implementer',
          output: { ...result, deep: JSON.parse(`${'['.repeat(3_000)}${']'.repeat(3_000)}`) as unknown },
        },
        'too_large',
      ],
      ['list_facts', { sessionId: 'x'.repeat(MAX_SESSION_ID_LENGTH + 1) }, 'invalid_session_id'],
      [
        'compile_context',
        { sessionId: 's', taskId: '1', taskPrompt: 'x', maxFacts: MAX_SECTION_FACTS + 1 },
        'invalid_arguments',
      ],
      ['list_facts', { sessionId: 's', unknown: true }, 'invalid_arguments'],
      ['ingest_result', { sessionId: 's', taskId: '1', role: 'tester', output: 'x' }, 'invalid_arguments'],
    ];
    for (const [tool, args, code] of cases) {
      const answer = (await server.client.callTool({ name: tool, arguments: args })) as ToolResult;
      expect([tool, code, answer.isError, text(answer).split(':')[0]]).toEqual([tool, code, true, code]);
    }
    // At the limits, taken; and the server still answers.
    const taken = (await server.client.callTool({
      name: 'ingest_result',
      arguments: { sessionId: 's', taskId: 't'.repeat(MAX_TASK_ID_LENGTH), role: 'implementer', output: result },
    })) as ToolResult;
    expect(taken.isError).not.toBe(true);
    expect(server.stderr()).toBe('');
  });

  it('bounds a task id once its whitespace is collapsed, as the hook does, and records it so', async () => {
    const hook = (taskId: string): void => {
      const payload = {
        hook_event_name: 'PreToolUse',
        session_id: 'ids',
        cwd,
        tool_name: 'Agent',
        tool_use_id: `call-${taskId.length}`,
        tool_input: { prompt: `Task ID: ${taskId}\nwork` },
      };
      const run = spawnSync(process.execPath, [MAIN, 'hook'], {
        cwd,
        env: { PATH: process.env['PATH'] ?? '', CLAUDE_PROJECT_DIR: cwd },
        input: JSON.stringify(payload),
        encoding: 'utf8',
      });
      expect(run.status).toBe(0);
    };
    const call = async (name: string, taskId: string): Promise<ToolResult> => {
      const args = name === 'compile_context' ? { taskPrompt: 'work' } : { role: 'implementer', output: result };
      return (await server.client.callTool({ name, arguments: { sessionId: 'ids', taskId, ...args } })) as ToolResult;
    };
    const result = { task_id: 'x', status: 'completed', summary: 'done' };
    const half = 'c'.repeat(MAX_TASK_ID_LENGTH / 2);
    const atLimit = `${half}  ${half.slice(1)}`; // one character over the limit as written, at it once collapsed
    const overLimit = `${half}  ${half}`;
    const broken = 'a\n[Session Context]';
    // The hook takes the id at the limit, and the call's id for the one over it.
    for (const taskId of [atLimit, overLimit]) hook(taskId);
    for (const name of ['compile_context', 'ingest_result']) {
      for (const taskId of [atLimit, broken])
        expect([name, (await call(name, taskId)).isError ?? false]).toEqual([name, false]);
      const refused = await call(name, overLimit);
      expect([name, refused.isError, text(refused)]).toEqual([
        name,
        true,
        `invalid_field: taskId: taskId is over ${MAX_TASK_ID_LENGTH} characters once whitespace is collapsed`,
      ]);
    }
    const lines = readFileSync(join(cwd, '.fact-tracker', 'sessions', 'ids.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; taskId: string });
    const collapsed = `${half} ${half.slice(1)}`;
    expect(lines.map((line) => [line.type, line.taskId])).toEqual([
      ['prompt', collapsed],
      ['prompt', `call-${overLimit.length}`],
      ['prompt', collapsed],
      ['prompt', 'a [Session Context]'],
      ['dispatch', collapsed],
      ['dispatch', 'a [Session Context]'],
    ]);
  });

  it('answers an output nested 200,000 deep (as raw JSON-RPC: no client can serialize it) with a coded tool error', async () => {
    const child = spawn(process.execPath, [MAIN, 'mcp'], {
      cwd: tempDir('mcp-deep-'),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const answer = new Promise<string>((resolve) => {
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const line = out.split('\n').find((candidate) => candidate.includes('"id":2'));
        if (line !== undefined) resolve(line);
      });
    });
    const send = (message: unknown): boolean => child.stdin.write(`${JSON.stringify(message)}\n`);
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
    child.stdin.write(
      `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ingest_result","arguments":{"sessionId":"s","taskId":"1","role":"implementer","output":{"task_id":"1","deep":${deep}}}}}\n`,
    );
    const reply = JSON.parse(await answer) as { result: ToolResult };
    child.stdin.end();
    expect(reply.result.isError).toBe(true);
    expect(text(reply.result)).toMatch(/^too_large: output nests arrays and objects more than 99 deep/u);
  });

  it('ends with an error on a JSON-RPC message over the limit, instead of staying alive and deaf', async () => {
    const big = await connect(tempDir('mcp-big-'));
    const pid = big.transport.pid!;
    const call = big.client
      .callTool({ name: 'list_facts', arguments: { sessionId: 's', subject: 'x'.repeat(MAX_MESSAGE_BYTES) } })
      .then(
        () => 'answered',
        () => 'refused',
      );
    // The call fails as the connection closes, and the process is gone, not waiting on a closed transport.
    expect(await call).toBe('refused');
    const alive = (): boolean => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    for (const deadline = Date.now() + 30_000; alive() && Date.now() < deadline;)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(alive()).toBe(false);
    expect(big.stderr()).toMatch(/^fact-tracker mcp: message_too_large: /mu);
  });

  it('answers the calls it read before a JSON-RPC message over the limit, then ends: what it recorded for them is not left unsaid', async () => {
    const cwd = tempDir('mcp-big-after-call-');
    const log = join(cwd, '.fact-tracker', 'sessions', 's.jsonl');
    mkdirSync(dirname(log), { recursive: true });
    const big = await connect(cwd);
    // Another writer holds the log: the call waits for it while the message over the limit arrives.
    let release = (): void => undefined;
    const held = withFileLock(
      log,
      { staleMs: 5_000, waitMs: 1_000 },
      () => new Promise<E.Either<never, void>>((resolve) => (release = () => resolve(E.right(undefined)))),
    );
    const ingest = big.client.callTool({
      name: 'ingest_result',
      arguments: {
        sessionId: 's',
        taskId: '1',
        role: 'implementer',
        output: implementerAnswer('1', 'src/a.ts'),
        at: 1_000,
      },
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const tooLarge = big.client
      .callTool({ name: 'list_facts', arguments: { sessionId: 's', subject: 'x'.repeat(MAX_MESSAGE_BYTES) } })
      .then(
        () => 'answered',
        () => 'refused',
      );
    await new Promise((resolve) => setTimeout(resolve, 500));
    release();
    await held;
    const answer = (await ingest) as ToolResult & { structuredContent?: { line?: number } };
    expect([answer.isError, answer.structuredContent?.line]).toEqual([undefined, 1]);
    expect(await tooLarge).toBe('refused');
    expect(readFileSync(log, 'utf8').split('\n')).toHaveLength(2);
    expect(big.stderr()).toMatch(/^fact-tracker mcp: message_too_large: /mu);
  });
});
