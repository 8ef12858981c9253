/**
 * `fact-tracker mcp` end to end: the SDK's own Client over StdioClientTransport against the
 * built binary. A whole example history driven through the tools gives exactly what
 * `fact-tracker replay` prints for it (computed in this run, not a stored golden), and every
 * kind of bad call gets a clean tool error while the server keeps serving.
 */
import { spawn } from 'node:child_process';
import {
  closeSync,
  existsSync,
  linkSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseHistory } from '../../../src/index.js';
import { type CliRun, MAIN, ROOT, type RunPlace, runCli, runCliHere } from '../../cli/runCli.js';
import { implementerAnswer } from '../hook/host.js';
import { toolCallOf } from './historyCalls.js';
import { tempDir } from '../../tempDirs.js';

const EXAMPLE = join(ROOT, 'examples', 'web-api-session.jsonl');

/**
 * `replay EXAMPLE --json` (the built command in this process), run once for the file: two tests
 * compare what the server serves with it, and it is the same run on the same file each time.
 */
const exampleReplay = ((): (() => Promise<CliRun>) => {
  let run: Promise<CliRun> | undefined;
  return () => (run ??= runCliHere(['replay', EXAMPLE, '--json']));
})();

interface ToolResult {
  readonly content: ReadonlyArray<{ readonly type: string; readonly text?: string }>;
  readonly structuredContent?: Record<string, unknown>;
  readonly isError?: boolean;
}

/** A client connected to a fresh `fact-tracker mcp` in `cwd`, and the server's standard error. */
const connect = async (cwd: string, ...args: string[]): Promise<{ client: Client; stderr: () => string }> => {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run "npm run build" first (npm test does it)`);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MAIN, 'mcp', ...args],
    cwd,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = new Client({ name: 'fact-tracker-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, stderr: () => stderr };
};

const call = async (client: Client, name: string, args: Record<string, unknown>): Promise<ToolResult> =>
  (await client.callTool({ name, arguments: args })) as ToolResult;

const text = (result: ToolResult): string => result.content.map((part) => part.text ?? '').join('');

/** The answer of a call expected to succeed. */
const structured = (result: ToolResult): Record<string, unknown> => {
  if (result.isError === true || result.structuredContent === undefined) throw new Error(`tool error: ${text(result)}`);
  return result.structuredContent;
};

// One server for most of the file (seconds to start on a loaded machine); the other commands the
// tests compare it with run in this process.
describe('fact-tracker mcp over stdio', { timeout: 120_000 }, () => {
  let cwd: string;
  let client: Client;
  let stderr: () => string;

  // Starting the server takes seconds on a loaded machine: more than the default 10 s for hooks.
  beforeAll(async () => {
    cwd = tempDir('mcp-');
    ({ client, stderr } = await connect(cwd));
  }, 60_000);
  afterAll(async () => {
    await client.close();
  });

  it('lists exactly the five tools, with input and output schemas, and the two resources', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual([
      'ingest_result',
      'compile_context',
      'explain_context',
      'list_facts',
      'invalidate_fact',
    ]);
    const fields = Object.fromEntries(tools.map((tool) => [tool.name, Object.keys(tool.inputSchema.properties ?? {})]));
    expect(fields).toEqual({
      ingest_result: ['sessionId', 'taskId', 'role', 'output', 'at'],
      compile_context: ['sessionId', 'taskId', 'taskPrompt', 'tags', 'maxTokens', 'maxFacts', 'layout', 'at'],
      explain_context: ['sessionId', 'taskId', 'taskPrompt', 'tags', 'maxTokens', 'maxFacts', 'layout', 'limit'],
      list_facts: ['sessionId', 'subject', 'tag', 'asOf', 'includeClosed', 'limit'],
      invalidate_fact: ['sessionId', 'subject', 'relation', 'at'],
    });
    expect(tools.every((tool) => tool.outputSchema !== undefined)).toBe(true);
    const { resources } = await client.listResources();
    expect(resources.map((resource) => resource.uri)).toContain('fact-tracker://schemas/dispatch-result');
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((template) => template.uriTemplate)).toEqual(['fact-tracker://sessions/{sessionId}']);
    const schemas = await client.readResource({ uri: 'fact-tracker://schemas/dispatch-result' });
    const schemasText = (schemas.contents[0] as { text: string }).text;
    const expected = await runCliHere(['schema', 'implementer']);
    expect(JSON.parse(schemasText)).toMatchObject({
      begin: 'BEGIN_DISPATCH_RESULT',
      end: 'END_DISPATCH_RESULT',
      implementer: JSON.parse(expected.stdout),
    });
  });

  it('lists every session of a store, 1,000 a page, each page naming the next by its nextCursor, and refuses a cursor it never gave', async () => {
    const project = tempDir('mcp-many-');
    mkdirSync(join(project, '.fact-tracker', 'sessions'), { recursive: true });
    const ids = Array.from({ length: 2_450 }, (_, i) => `s${String(i).padStart(4, '0')}`);
    // Names of one empty log: a list reads names, and a link costs a twentieth of a new file's CPU.
    const empty = join(tempDir('mcp-many-log-'), 'empty.jsonl');
    writeFileSync(empty, '');
    for (const id of ids) linkSync(empty, join(project, '.fact-tracker', 'sessions', `${id}.jsonl`));
    const many = await connect(project);
    try {
      // The client follows each page's nextCursor to the end.
      expect((await many.client.listResources()).resources.map((resource) => resource.uri)).toEqual([
        'fact-tracker://schemas/dispatch-result',
        ...ids.map((id) => `fact-tracker://sessions/${id}`),
      ]);
      const first = await many.client.request({ method: 'resources/list', params: {} });
      expect([first.resources.length, first.nextCursor]).toEqual([1_001, 'after:s0999']);
      const last = await many.client.request({ method: 'resources/list', params: { cursor: 'after:s1999' } });
      expect([last.resources.length, last.resources[0]?.name, last.nextCursor]).toEqual([
        450,
        'session s2000',
        undefined,
      ]);
      // A cursor this server never gives is invalid params, not an empty or a wrong page.
      for (const cursor of ['zzz', '', 's0999', 'after:', 'after:../x'])
        await expect(
          many.client.request({ method: 'resources/list', params: { cursor } }),
          JSON.stringify(cursor),
        ).rejects.toThrow(/cursor is not one this server gave/u);
    } finally {
      await many.client.close();
    }
  });

  it('lists no session through a sessions folder that leads out of the project: resources/list is refused as every tool is', async () => {
    const project = tempDir('mcp-linked-');
    const outside = tempDir('mcp-outside-');
    writeFileSync(join(outside, 'victim.jsonl'), '');
    mkdirSync(join(project, '.fact-tracker'));
    symlinkSync(outside, join(project, '.fact-tracker', 'sessions'));
    const { answers, status } = await serveHere(
      clientLines(['resources/list', {}], ['tools/call', { name: 'list_facts', arguments: { sessionId: 'victim' } }]),
      { cwd: project, env: {} },
    );
    expect(status).toBe(0);
    const [listed, listFacts] = [1, 2].map((id) => answers.find((answer) => answer.id === id));
    expect(listed?.error?.message).toMatch(/leads out of/u);
    expect(listFacts?.result?.isError).toBe(true);
    expect(listFacts?.result?.content?.[0]?.text).toMatch(/leads out of/u);
  });

  it('gives, for a whole example session driven through the tools, exactly the sections replay prints', async () => {
    const replayed = await exampleReplay();
    expect(replayed.status).toBe(0);
    const expected = JSON.parse(replayed.stdout) as {
      prompts: ReadonlyArray<{ sessionContext: string; facts: ReadonlyArray<Record<string, unknown>> }>;
    };
    const sections: Array<{ sessionContext: unknown; facts: unknown }> = [];
    for (const event of parseHistory(readFileSync(EXAMPLE, 'utf8')).events) {
      const toolCall = toolCallOf(event, 'web-api');
      if (toolCall === undefined) continue;
      const answer = structured(await call(client, toolCall.name, toolCall.args));
      if (event.type === 'prompt') sections.push({ sessionContext: answer['sessionContext'], facts: answer['facts'] });
    }
    expect(sections).toEqual(
      expected.prompts.map((prompt) => ({
        sessionContext: prompt.sessionContext,
        facts: prompt.facts.map(({ subject, relation, object }) => ({ subject, relation, object })),
      })),
    );
    // The session's log is a dispatch history: replaying it prints the example's report, byte for byte.
    const log = join(cwd, '.fact-tracker', 'sessions', 'web-api.jsonl');
    expect((await runCliHere(['replay', log, '--json'])).stdout).toBe(replayed.stdout);
  });

  it('changes nothing when a result is sent again with the same time', async () => {
    const log = join(cwd, '.fact-tracker', 'sessions', 'web-api.jsonl');
    const before = readFileSync(log, 'utf8');
    const first = parseHistory(readFileSync(EXAMPLE, 'utf8')).events.find((event) => event.type === 'dispatch')!;
    if (first.type !== 'dispatch') throw new Error('no dispatch');
    const again = structured(
      await call(client, 'ingest_result', {
        sessionId: 'web-api',
        taskId: first.taskId,
        role: first.role,
        output: first.output,
        at: first.at,
      }),
    );
    expect(again).toMatchObject({ line: first.line, duplicate: true, facts: [] });
    expect(readFileSync(log, 'utf8')).toBe(before);
  });

  it('bounds list_facts and explain_context by their limits and says how many were left out', async () => {
    const listed = structured(await call(client, 'list_facts', { sessionId: 'web-api' }));
    expect((listed['facts'] as unknown[]).length).toBe(50);
    expect(listed['total']).toBeGreaterThan(100);
    expect(listed['omitted']).toBe((listed['total'] as number) - 50);
    const closed = structured(
      await call(client, 'list_facts', { sessionId: 'web-api', subject: 'SRC/CONFIG.TS', includeClosed: true }),
    );
    expect((closed['facts'] as ReadonlyArray<Record<string, unknown>>).some((fact) => 'validTo' in fact)).toBe(true);
    const tagged = structured(await call(client, 'list_facts', { sessionId: 'web-api', tag: 'convention', limit: 3 }));
    expect(
      (tagged['facts'] as ReadonlyArray<{ tags: string[] }>).every((fact) => fact.tags.includes('convention')),
    ).toBe(true);
    const early = structured(
      await call(client, 'list_facts', { sessionId: 'web-api', asOf: '2026-03-02T09:10:00Z', limit: 1000 }),
    );
    expect(early['total']).toBeLessThan(listed['total'] as number);
    const explained = structured(
      await call(client, 'explain_context', {
        sessionId: 'web-api',
        taskId: '11',
        taskPrompt: 'Add pagination to GET /bookings in src/routes/bookings.ts',
      }),
    );
    expect((explained['decisions'] as unknown[]).length).toBe(30);
    expect(explained['omitted']).toBe((explained['total'] as number) - 30);
    expect((explained['decisions'] as ReadonlyArray<Record<string, unknown>>)[0]).toMatchObject({
      decision: 'included',
      parts: expect.objectContaining({ terms: expect.any(Array), prior: expect.any(Number) }),
    });
    const snapshot = await client.readResource({ uri: 'fact-tracker://sessions/web-api' });
    expect(JSON.parse((snapshot.contents[0] as { text: string }).text)).toMatchObject({
      sessionId: 'web-api',
      events: 40,
      errors: [],
    });
  });

  it('refuses "__proto__" among the arguments as it refuses any unknown argument, never reading it as a default', async () => {
    // Parsed, not written as a literal: a literal's __proto__ would set the object's prototype, not send a key.
    const args = JSON.parse('{"sessionId":"web-api","__proto__":{"limit":1}}') as Record<string, unknown>;
    const result = await call(client, 'list_facts', args);
    expect([result.isError, text(result)]).toEqual([true, 'invalid_arguments: Unrecognized key: "__proto__"']);
    const both = JSON.parse(
      '{"sessionId":"web-api","taskId":"1","taskPrompt":"x","__proto__":{"maxFacts":0},"other":1}',
    );
    expect(text(await call(client, 'compile_context', both as Record<string, unknown>))).toBe(
      'invalid_arguments: Unrecognized keys: "__proto__", "other"',
    );
  });

  it('keeps a secret in a result or a prompt out of its answers, its log and the next section', async () => {
    const sessionId = 'secrets';
    const token = `ghp_${'a1B2c3D4e5'.repeat(4).slice(0, 36)}`;
    const raw = `Done.\n\nBEGIN_DISPATCH_RESULT\n${JSON.stringify({
      task_id: '1',
      status: 'completed',
      summary: `Deployed with GH_TOKEN=${token}`,
      files_changed: ['deploy/release.sh'],
    })}\nEND_DISPATCH_RESULT`;
    const answers = [
      await call(client, 'compile_context', { sessionId, taskId: '1', taskPrompt: `Deploy with ${token}` }),
      await call(client, 'ingest_result', { sessionId, taskId: '1', role: 'implementer', output: raw }),
      await call(client, 'compile_context', { sessionId, taskId: '2', taskPrompt: 'Fix the release deploy script' }),
      await call(client, 'list_facts', { sessionId }),
    ];
    for (const answer of answers) expect(JSON.stringify(answer)).not.toContain(token.slice(4));
    expect(structured(answers[2]!)['sessionContext']).toContain('GH_TOKEN=[redacted: a GitHub token]');
    expect(readFileSync(join(cwd, '.fact-tracker', 'sessions', `${sessionId}.jsonl`), 'utf8')).not.toContain(
      token.slice(4),
    );
    // The file's later tests count the sessions of the project.
    expect((await runCliHere(['sessions', 'delete', sessionId], '', { cwd, env: {} })).status).toBe(0);
  });

  it('answers a session deleted while it holds it open as a fresh server would: unknown_session, and no log made again', async () => {
    const sessionId = 'deleted-while-open';
    const output = { task_id: '1', status: 'completed', summary: 'One', files_changed: ['src/one.ts'] };
    structured(await call(client, 'ingest_result', { sessionId, taskId: '1', role: 'implementer', output }));
    expect(structured(await call(client, 'list_facts', { sessionId }))['total']).not.toBe(0);
    const deleted = await runCliHere(['sessions', 'delete', sessionId], '', { cwd, env: {} });
    expect([deleted.status, deleted.stderr]).toEqual([0, '']);
    const log = join(cwd, '.fact-tracker', 'sessions', `${sessionId}.jsonl`);
    expect(existsSync(log)).toBe(false);
    const calls: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
      ['list_facts', { sessionId }],
      ['explain_context', { sessionId, taskId: '2', taskPrompt: 'src/one.ts' }],
      ['invalidate_fact', { sessionId, subject: 'src/one.ts', relation: 'modified_by' }],
    ];
    for (const [tool, args] of calls) {
      const result = await call(client, tool, args);
      expect([tool, result.isError, text(result)]).toEqual([tool, true, expect.stringMatching(/^unknown_session: /u)]);
    }
    await expect(client.readResource({ uri: `fact-tracker://sessions/${sessionId}` })).rejects.toThrow(
      /unknown_session/u,
    );
    expect(existsSync(log)).toBe(false);
    // A result starts the session again from its first line, as it would on a server that never saw it.
    const again = structured(
      await call(client, 'ingest_result', { sessionId, taskId: '1', role: 'implementer', output }),
    );
    expect([again['line'], again['duplicate']]).toEqual([1, false]);
    expect(readFileSync(log, 'utf8').split('\n')).toHaveLength(2);
    expect((await runCliHere(['sessions', 'delete', sessionId], '', { cwd, env: {} })).status).toBe(0);
  });

  it('answers every bad call with a clean tool error and keeps serving', async () => {
    const cases: ReadonlyArray<readonly [string, Record<string, unknown>, RegExp]> = [
      ['ingest_result', { sessionId: 's', taskId: '1', role: 'implementer' }, /output/u],
      ['ingest_result', { sessionId: 's', taskId: '1', role: 'tester', output: 'x' }, /role/u],
      ['compile_context', { sessionId: 's', taskId: '1', taskPrompt: 'x', maxFacts: -1 }, /maxFacts/u],
      ['compile_context', { sessionId: 's', taskId: '1', taskPrompt: 'x', tags: ['nope'] }, /tags/u],
      ['compile_context', { sessionId: 's', taskId: '1', taskPrompt: 'x', at: 'yesterday' }, /^invalid_field: at/u],
      // An argument of either of two kinds says which two, not only "Invalid input".
      [
        'compile_context',
        { sessionId: 's', taskId: '1', taskPrompt: 'x', at: true },
        /^invalid_arguments: at: .+ISO-8601/u,
      ],
      ['list_facts', { sessionId: 's', asOf: {} }, /^invalid_arguments: asOf: .+epoch milliseconds/u],
      [
        'ingest_result',
        { sessionId: 's', taskId: '1', role: 'implementer', output: 12 },
        /^invalid_arguments: output: .+result object/u,
      ],
      ['list_facts', { sessionId: 's', unknown: true }, /unknown/iu],
      ['list_facts', { sessionId: 'never-made' }, /^unknown_session: /u],
      ['explain_context', { sessionId: 'never-made', taskId: '1', taskPrompt: 'x' }, /^unknown_session: /u],
      ['invalidate_fact', { sessionId: 'never-made', subject: 'a', relation: 'b' }, /^unknown_session: /u],
      [
        'ingest_result',
        { sessionId: 'web-api', taskId: '1', role: 'implementer', output: 'no block' },
        /^marker_missing: /u,
      ],
      [
        'ingest_result',
        { sessionId: 'web-api', taskId: '1', role: 'reviewer', output: { task_id: '1', assessment: 'great' } },
        /^schema_invalid: .*assessment/u,
      ],
      [
        'ingest_result',
        { sessionId: 'web-api', taskId: ' ', role: 'implementer', output: 'x' },
        /^invalid_field: taskId/u,
      ],
    ];
    for (const [tool, args, message] of cases) {
      const result = await call(client, tool, args);
      expect([tool, result.isError]).toEqual([tool, true]);
      expect(text(result)).toMatch(message);
    }
    for (const sessionId of [
      '../escape',
      '../../etc/passwd',
      'a/b',
      '..',
      '.',
      '.hidden',
      'CON',
      'x'.repeat(200),
      'a\u0000b',
      '',
    ])
      for (const [tool, extra] of [
        ['compile_context', { taskId: '1', taskPrompt: 'x' }],
        ['ingest_result', { taskId: '1', role: 'implementer', output: 'x' }],
        ['list_facts', {}],
      ] as const) {
        const result = await call(client, tool, { sessionId, ...extra });
        expect([sessionId, tool, result.isError, text(result).split(':')[0]]).toEqual([
          sessionId,
          tool,
          true,
          'invalid_session_id',
        ]);
      }
    const huge = await call(client, 'ingest_result', {
      sessionId: 'web-api',
      taskId: '1',
      role: 'implementer',
      output: `BEGIN_DISPATCH_RESULT\n${'x'.repeat(10 * 1024 * 1024)}\nEND_DISPATCH_RESULT`,
    });
    expect(huge.isError).toBe(true);
    expect(text(huge)).toMatch(/^output_too_large: /u);
    // Still serving, and nothing was written outside the sessions folder.
    expect(structured(await call(client, 'list_facts', { sessionId: 'web-api', limit: 1 }))['total']).toBeGreaterThan(
      0,
    );
    expect(readdirSync(cwd)).toEqual(['.fact-tracker']);
    expect(readdirSync(join(cwd, '.fact-tracker', 'sessions')).sort()).toEqual(['.gitignore', 'web-api.jsonl']);
    expect(stderr()).toBe('');
  });

  it('keeps every answer within --max-answer-tokens', async () => {
    const small = await connect(cwd, '--max-answer-tokens', '1000');
    try {
      const listed = await call(small.client, 'list_facts', { sessionId: 'web-api', limit: 1000, includeClosed: true });
      const answer = structured(listed);
      expect(Math.ceil(JSON.stringify(answer).length / 4)).toBeLessThanOrEqual(1000);
      expect(text(listed).length).toBeLessThanOrEqual(4000);
      expect(answer['omitted']).toBeGreaterThan(0);
      expect((answer['facts'] as unknown[]).length + (answer['omitted'] as number)).toBe(answer['total']);
      // A section is never cut: one too large for the bound is refused before its prompt is recorded.
      const files = Array.from({ length: 200 }, (_, i) => `src/module${i}/file${i}.ts`);
      const output = `BEGIN_DISPATCH_RESULT\n${JSON.stringify({ task_id: '1', status: 'completed', summary: 'Many files', files_changed: files })}\nEND_DISPATCH_RESULT`;
      structured(
        await call(small.client, 'ingest_result', { sessionId: 'wide', taskId: '1', role: 'implementer', output }),
      );
      const prompt = { sessionId: 'wide', taskId: '2', taskPrompt: 'Change src/module1/file1.ts', maxFacts: 100 };
      for (let attempt = 0; attempt < 2; attempt += 1) {
        const refused = await call(small.client, 'compile_context', { ...prompt, maxTokens: 4000 });
        expect(refused.isError).toBe(true);
        expect(text(refused)).toMatch(
          /^answer_too_large: the answer is over the bound of 1000 tokens even without its list \(\d+ tokens without it\): the section does not fit in an answer of the server's --max-answer-tokens; nothing was recorded \(ask for a smaller maxTokens\)$/u,
        );
      }
      const log = () => readFileSync(join(cwd, '.fact-tracker', 'sessions', 'wide.jsonl'), 'utf8');
      expect(log()).not.toContain('"prompt"');
      expect(structured(await call(small.client, 'compile_context', { ...prompt, maxTokens: 300 }))['line']).toBe(2);
      expect(log().match(/"type":"prompt"/gu)).toHaveLength(1);
    } finally {
      await small.client.close();
    }
  });

  it('answers a client that reads its answers slowly, calls in flight by the dozen, without a word on standard error', async () => {
    // The client stops reading: the answers wait in the pipe, then in the server, for room.
    const stdout = (client.transport as unknown as { _process: { stdout: NodeJS.ReadableStream } })._process.stdout;
    stdout.pause();
    try {
      const calls = Array.from({ length: 40 }, () => client.listTools());
      await new Promise((resolve) => setTimeout(resolve, 500));
      stdout.resume();
      const answers = await Promise.all(calls);
      expect(answers.every(({ tools }) => tools.length === 5)).toBe(true);
      expect(stderr()).toBe('');
    } finally {
      stdout.resume();
    }
  });

  it('takes a task id sent as an integer, and records its decimal digits', async () => {
    const sessionId = 'numeric-task';
    const ingested = structured(
      await call(client, 'ingest_result', {
        sessionId,
        taskId: 7,
        role: 'implementer',
        output: implementerAnswer('7', 'src/numeric.ts'),
      }),
    );
    expect(ingested['warnings']).toEqual([]);
    expect((ingested['facts'] as ReadonlyArray<{ sourceTaskId: string }>).map((fact) => fact.sourceTaskId)).toContain(
      '7',
    );
    const compiled = structured(
      await call(client, 'compile_context', { sessionId, taskId: 8, taskPrompt: 'Extend src/numeric.ts' }),
    );
    expect(compiled['sessionContext']).toContain('src/numeric.ts');
    structured(await call(client, 'explain_context', { sessionId, taskId: -9, taskPrompt: 'src/numeric.ts' }));
    const events = readFileSync(join(cwd, '.fact-tracker', 'sessions', `${sessionId}.jsonl`), 'utf8')
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { taskId: unknown }).taskId);
    expect(events).toEqual(['7', '8']);
    for (const taskId of [1.5, 2 ** 53, true]) {
      const refused = await call(client, 'ingest_result', { sessionId, taskId, role: 'implementer', output: 'x' });
      expect([taskId, refused.isError, text(refused)]).toEqual([
        taskId,
        true,
        expect.stringMatching(/^invalid_field: taskId/u),
      ]);
    }
  });
});

describe('fact-tracker mcp --tokenizer o200k', { timeout: 120_000 }, () => {
  it("names its tokenizer in each prompt's line, so replay budgets each section as it was served; --tokenizer estimate counts every prompt with the estimate", async () => {
    const cwd = tempDir('mcp-tokenizer-');
    const { client, stderr } = await connect(cwd, '--tokenizer', 'o200k');
    const sections: unknown[] = [];
    try {
      for (const event of parseHistory(readFileSync(EXAMPLE, 'utf8')).events) {
        const toolCall = toolCallOf(event, 'o200k');
        if (toolCall === undefined) continue;
        const answer = structured(await call(client, toolCall.name, toolCall.args));
        if (event.type === 'prompt') sections.push(answer['sessionContext']);
      }
      expect(stderr()).toBe('');
    } finally {
      await client.close();
    }
    const log = join(cwd, '.fact-tracker', 'sessions', 'o200k.jsonl');
    const lines = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; tokenizer?: string });
    expect(lines.filter((line) => line.type === 'prompt').map((line) => line.tokenizer)).toEqual(
      sections.map(() => 'o200k'),
    );
    expect(lines.filter((line) => line.type !== 'prompt' && 'tokenizer' in line)).toEqual([]);
    const sectionsOf = (stdout: string): unknown[] =>
      (JSON.parse(stdout) as { prompts: Array<{ sessionContext: string }> }).prompts.map(
        (prompt) => prompt.sessionContext,
      );
    const [replayed, estimated, example] = await Promise.all([
      runCliHere(['replay', log, '--json']),
      runCliHere(['replay', log, '--json', '--tokenizer', 'estimate']),
      exampleReplay(),
    ]);
    expect([replayed.status, replayed.stderr]).toEqual([0, '']);
    expect(sectionsOf(replayed.stdout)).toEqual(sections);
    // Given explicitly, the estimate counts every prompt: the example's own sections, which the served ones are not.
    expect(estimated.status).toBe(0);
    expect(sectionsOf(estimated.stdout)).toEqual(sectionsOf(example.stdout));
    expect(sectionsOf(estimated.stdout)).not.toEqual(sections);
  });
});

describe('fact-tracker mcp --layout grouped', { timeout: 120_000 }, () => {
  // One server for both tests, each on a session of its own.
  let cwd: string;
  let client: Client;
  let stderr: () => string;
  beforeAll(async () => {
    cwd = tempDir('mcp-layout-');
    ({ client, stderr } = await connect(cwd, '--layout', 'grouped'));
  }, 60_000);
  afterAll(async () => {
    await client.close();
  });

  it("lays out the sections of calls that name no layout as it says, a call's own layout over it, and keeps each in the prompt's line", async () => {
    const sessionId = 'layout';
    const answer = implementerAnswer('1', 'src/config.ts').replace(
      '"files_changed": [\n    "src/config.ts"\n  ]',
      '"files_changed": [\n    "src/config.ts",\n    "src/server.ts"\n  ]',
    );
    structured(await call(client, 'ingest_result', { sessionId, taskId: '1', role: 'implementer', output: answer }));
    const prompt = { sessionId, taskPrompt: 'Read src/config.ts in src/server.ts' };
    const grouped = structured(await call(client, 'compile_context', { ...prompt, taskId: '2' }));
    const lines = structured(await call(client, 'compile_context', { ...prompt, taskId: '3', layout: 'lines' }));
    expect(grouped['sessionContext']).toMatch(/^- task:1 modified src\/\w+\.ts, src\/\w+\.ts$/mu);
    expect(lines['sessionContext']).toContain('- src/config.ts modified_by task:1 [task:1]\n');
    const refused = await call(client, 'compile_context', { ...prompt, taskId: '4', layout: 'wide' });
    expect([refused.isError, text(refused)]).toEqual([true, expect.stringMatching(/^invalid_arguments: .*layout/u)]);
    const log = join(cwd, '.fact-tracker', 'sessions', `${sessionId}.jsonl`);
    const layouts = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { layout?: string }).layout);
    expect(layouts).toEqual([undefined, 'grouped', 'lines']);
    const replayed = await runCliHere(['replay', log, '--json']);
    expect(replayed.status).toBe(0);
    const sections = (JSON.parse(replayed.stdout) as { prompts: Array<{ sessionContext: string }> }).prompts;
    expect(sections.map((section) => section.sessionContext)).toEqual([
      grouped['sessionContext'],
      lines['sessionContext'],
    ]);
    expect(stderr()).toBe('');
  });
  it("explains the section as it was given: the recorded prompt's layout and limits, else the server's layout", async () => {
    const sessionId = 'explained';
    // Many files per task: the layouts fit different facts in one budget.
    for (let task = 1; task <= 12; task += 1)
      structured(
        await call(client, 'ingest_result', {
          sessionId,
          taskId: String(task),
          role: 'implementer',
          at: task * 1000,
          output: {
            task_id: String(task),
            status: 'completed',
            summary: `task ${task} on module ${task % 3}`,
            files_changed: Array.from({ length: 8 }, (_, i) => `src/mod${task % 3}/file${i}_${task}.ts`),
          },
        }),
      );
    const key = (fact: Record<string, unknown>) => `${String(fact['subject'])} ${String(fact['relation'])}`;
    const explained = async (args: Record<string, unknown>) => {
      const answer = structured(await call(client, 'explain_context', { sessionId, limit: 1000, ...args }));
      const decisions = answer['decisions'] as ReadonlyArray<Record<string, unknown>>;
      const included = decisions.filter((decision) => decision['decision'] === 'included').map(key);
      return { line: answer['line'], layout: answer['layout'], included: included.sort() };
    };
    const compiled = async (args: Record<string, unknown>) => {
      const answer = structured(await call(client, 'compile_context', { sessionId, ...args }));
      return {
        line: answer['line'],
        included: (answer['facts'] as ReadonlyArray<Record<string, unknown>>).map(key).sort(),
      };
    };
    const prompt = { taskPrompt: 'refactor the src/mod1 files' };
    // Before its prompt is recorded: the server's layout, as compile_context will lay it out.
    const before = await explained({ ...prompt, taskId: 'p' });
    const grouped = await compiled({ ...prompt, taskId: 'p' });
    expect(before).toEqual({ line: undefined, layout: 'grouped', included: grouped.included });
    // Recorded with its own layout and limits: explained with them.
    const own = { ...prompt, taskId: 'q', layout: 'lines', maxFacts: 5 };
    const lines = await compiled(own);
    expect(lines.included).not.toEqual(grouped.included);
    expect(await explained({ ...prompt, taskId: 'q' })).toEqual({
      line: lines.line,
      layout: 'lines',
      included: lines.included,
    });
    // The call's own settings go first.
    expect((await explained({ ...prompt, taskId: 'q', layout: 'grouped', maxFacts: 60 })).included).toEqual(
      grouped.included,
    );
    expect(stderr()).toBe('');
  });
});

describe('where fact-tracker mcp keeps its sessions', { timeout: 120_000 }, () => {
  /** A prompt recorded by the server in `cwd` with `env` (and PATH) alone, through the built router in this process. */
  const compile = async (cwd: string, env: Record<string, string> = {}, ...args: string[]): Promise<void> => {
    const { answers, status, stderr } = await serveHere(
      clientLines([
        'tools/call',
        { name: 'compile_context', arguments: { sessionId: 's1', taskId: '1', taskPrompt: 'Add a route' } },
      ]),
      { cwd, env },
      ...args,
    );
    expect([status, stderr]).toEqual([0, '']);
    // Both answered, the call with no tool error.
    expect(
      answers.map(({ id, error, result }) => [id, error, result !== undefined && result.isError !== true]),
    ).toEqual([
      [0, undefined, true],
      [1, undefined, true],
    ]);
  };

  it('checks a folder store before its first message: one it cannot use is one line and exit 1, a missing one is made later', async () => {
    const cwd = tempDir('mcp-store-');
    const file = join(cwd, 'notes.txt');
    writeFileSync(file, 'not a folder\n');
    const named = await runCli(['mcp', '--store', file], '', { cwd });
    expect([named.status, named.stdout, named.stderr]).toEqual([
      1,
      '',
      `fact-tracker mcp: io: cannot use the sessions folder ${file}: ${file} is not a folder\n`,
    ]);
    // The process's own exit and stderr above; the other two through the built router in this process.
    const below = await runCliHere(['mcp'], '', { cwd, env: { FACT_TRACKER_STORE: join(file, 'sessions') } });
    expect([below.status, below.stdout, below.stderr.split('\n')]).toEqual([
      1,
      '',
      [
        expect.stringMatching(/^fact-tracker mcp: io: cannot prepare the sessions folder .*notes\.txt\/sessions: /u),
        '',
      ],
    ]);
    // A folder not made yet is fine: the first call that records makes it, the start does not.
    const later = await runCliHere(['mcp', '--store', 'logs/sessions'], '', { cwd });
    expect([later.status, later.stderr, existsSync(join(cwd, 'logs'))]).toEqual([0, '', false]);
  });

  it('in the project: the top of the git work tree holding its working directory, as the hooks find it', async () => {
    const project = tempDir('mcp-project-');
    mkdirSync(join(project, '.git'));
    const nested = join(project, 'packages', 'api');
    mkdirSync(nested, { recursive: true });
    await compile(nested);
    expect(existsSync(join(project, '.fact-tracker', 'sessions', 's1.jsonl'))).toBe(true);
    expect(existsSync(join(nested, '.fact-tracker'))).toBe(false);
  });

  it('never hides the project from git where it is named as the sessions folder, even while it is still empty', async () => {
    // A `.gitignore` of `*` there would keep every file the project is given later out of git.
    for (const named of [(): string[] => ['--sessions-dir', '.'], (project: string) => ['--store', project]]) {
      const project = tempDir('mcp-empty-project-');
      await compile(project, {}, ...named(project));
      expect(readdirSync(project)).toEqual(['s1.jsonl']);
    }
    // A folder of its own in the project, found empty, is still kept out of git.
    const project = tempDir('mcp-empty-logs-');
    mkdirSync(join(project, 'logs'));
    await compile(project, {}, '--sessions-dir', 'logs');
    expect(readdirSync(join(project, 'logs')).sort()).toEqual(['.gitignore', 's1.jsonl']);
  });

  it('in CLAUDE_PROJECT_DIR when Claude Code names the project', async () => {
    const project = tempDir('mcp-claude-');
    const elsewhere = tempDir('mcp-elsewhere-');
    await compile(elsewhere, { CLAUDE_PROJECT_DIR: project });
    expect(existsSync(join(project, '.fact-tracker', 'sessions', 's1.jsonl'))).toBe(true);
    expect(existsSync(join(elsewhere, '.fact-tracker'))).toBe(false);
  });
});

describe('a line that is not JSON', { timeout: 120_000 }, () => {
  it('gets a JSON-RPC parse error (-32700, id null), and the server keeps serving the client', async () => {
    const cwd = tempDir('mcp-parse-');
    const transport = new StdioClientTransport({ command: process.execPath, args: [MAIN, 'mcp'], cwd, stderr: 'pipe' });
    const client = new Client({ name: 'fact-tracker-parse', version: '1.0.0' });
    // The SDK's client takes no error with id null (MCP's schema leaves the id out instead): it tells it here.
    const refused: Error[] = [];
    client.onerror = (error) => refused.push(error);
    await client.connect(transport);
    try {
      // The SDK's client writes only JSON: what a broken client sends goes through the pipe itself.
      const child = (
        transport as unknown as {
          _process: { stdin: NodeJS.WritableStream; stdout: NodeJS.ReadableStream };
        }
      )._process;
      let received = '';
      const answered = new Promise<string[]>((resolve) => {
        const timer = setTimeout(() => resolve(['no answer within 20 s']), 20_000);
        child.stdout.on('data', (chunk: Buffer) => {
          received += chunk.toString();
          const parseErrors = received.split('\n').filter((line) => line.includes('-32700'));
          if (parseErrors.length === 2) {
            clearTimeout(timer);
            resolve(parseErrors);
          }
        });
      });
      child.stdin.write('this is not JSON\n{"jsonrpc": "2.0", "id": 99, "method": \n');
      const parseErrors = (await answered).map((line) => JSON.parse(line) as unknown);
      expect(parseErrors).toEqual([
        { jsonrpc: '2.0', id: null, error: { code: -32700, message: expect.stringMatching(/^Parse error: /u) } },
        { jsonrpc: '2.0', id: null, error: { code: -32700, message: expect.stringMatching(/^Parse error: /u) } },
      ]);
      const compiled = structured(
        await call(client, 'compile_context', { sessionId: 's1', taskId: '1', taskPrompt: 'Add a route' }),
      );
      expect(compiled['line']).toBe(1);
      expect(refused.length).toBeLessThanOrEqual(2);
    } finally {
      await client.close();
    }
  });
});

/** A JSON-RPC answer, read loosely. */
type Answer = {
  readonly id: unknown;
  readonly error?: { readonly code: number; readonly message: string };
  readonly result?: { readonly isError?: boolean; readonly content?: ReadonlyArray<{ readonly text?: string }> };
};

/**
 * A client of a fresh server that also writes raw lines (what a broken client sends: the SDK's
 * client writes only what its schema takes) and reads the answers to their ids.
 */
const rawClient = async (
  prefix: string,
): Promise<{
  client: Client;
  stderr: () => string;
  send: (lines: ReadonlyArray<string>, ids: ReadonlyArray<number>) => Promise<Answer[]>;
}> => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MAIN, 'mcp'],
    cwd: tempDir(prefix),
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: 'fact-tracker-raw', version: '1.0.0' });
  // Answers to ids the SDK's client did not send: it tells them here.
  client.onerror = () => undefined;
  await client.connect(transport);
  const child = (transport as unknown as { _process: { stdin: NodeJS.WritableStream; stdout: NodeJS.ReadableStream } })
    ._process;
  let received = '';
  child.stdout.on('data', (chunk: Buffer) => (received += chunk.toString()));
  /** Writes `lines` and returns the answers to `ids` (those that came within 10 s), by id. */
  const send = async (lines: ReadonlyArray<string>, ids: ReadonlyArray<number>): Promise<Answer[]> => {
    const answers = (): Answer[] =>
      received
        .split('\n')
        // What follows the last line break is an answer still arriving.
        .slice(0, -1)
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Answer)
        .filter((message) => ids.includes(message.id as number));
    child.stdin.write(lines.map((line) => `${line}\n`).join(''));
    for (const deadline = Date.now() + 10_000; answers().length < ids.length && Date.now() < deadline;)
      await new Promise((resolve) => setTimeout(resolve, 20));
    return answers().sort((a, b) => Number(a.id) - Number(b.id));
  };
  return { client, stderr: () => stderr, send };
};

/**
 * One raw client for the tests of messages the SDK would answer badly (each test sends ids of its
 * own): a server started once serves them all, as it serves any client on.
 */
const sharedRawClient = ((): (() => ReturnType<typeof rawClient>) => {
  let made: ReturnType<typeof rawClient> | undefined;
  afterAll(async () => {
    if (made !== undefined) await (await made).client.close();
  });
  return () => (made ??= rawClient('mcp-raw-'));
})();

describe('a JSON-RPC message the SDK would answer badly, or not at all', { timeout: 120_000 }, () => {
  it('the protocol’s schema refuses gets an invalid request error (-32600) with its id, instead of no answer at all, and the server keeps serving', async () => {
    const raw = await sharedRawClient();
    // Each is JSON-RPC to the letter, but not as MCP's schema has it: the SDK would drop it unanswered.
    const answers = await raw.send(
      [
        '{"jsonrpc":"2.0","id":901,"method":"ping","extra":1}',
        '{"jsonrpc":"2.0","id":902,"method":"tools/list","params":{"_meta":5}}',
        '{"jsonrpc":"2.0","id":903,"method":"tools/call","params":{"name":"list_facts","arguments":{"sessionId":"s"},"_meta":{"progressToken":null}}}',
        '{"jsonrpc":"2.0","id":904,"method":"ping","params":{"_meta":{"io.modelcontextprotocol/related-task":5}}}',
        '{"jsonrpc":"2.0","id":905,"method":"ping","result":{}}',
      ],
      [901, 902, 903, 904, 905],
    );
    expect(answers.map(({ id, error }) => [id, error?.code])).toEqual(
      [901, 902, 903, 904, 905].map((id) => [id, -32600]),
    );
    for (const { error } of answers) expect(error?.message).toMatch(/^Invalid Request: \S[^\n]*$/u);
    // The server reads on, and the refusals were answered, not dumped on standard error.
    const compiled = structured(
      await call(raw.client, 'compile_context', { sessionId: 's1', taskId: '1', taskPrompt: 'Add a route' }),
    );
    expect(compiled['line']).toBe(1);
    expect(raw.stderr()).toBe('');
  });
});

describe('a request whose params MCP’s schema refuses', { timeout: 120_000 }, () => {
  it('gets an invalid params error (-32602) that names the field in one line, not an internal error with a dump of the schema', async () => {
    const raw = await sharedRawClient();
    const answers = await raw.send(
      [
        '{"jsonrpc":"2.0","id":911,"method":"resources/read","params":{"uri":5}}',
        '{"jsonrpc":"2.0","id":912,"method":"tools/call","params":{"name":5}}',
        '{"jsonrpc":"2.0","id":913,"method":"tools/call"}',
        '{"jsonrpc":"2.0","id":914,"method":"initialize","params":{}}',
        '{"jsonrpc":"2.0","id":915,"method":"tools/call","params":{"name":"list_facts","arguments":[1]}}',
        // A name an object has by its prototype is no tool, as any other name that is none.
        '{"jsonrpc":"2.0","id":916,"method":"tools/call","params":{"name":"toString","arguments":{}}}',
        '{"jsonrpc":"2.0","id":917,"method":"tools/call","params":{"name":"__proto__","arguments":{}}}',
        // A URI too long for the SDK to match is the client's mistake, not the server's failure.
        `{"jsonrpc":"2.0","id":918,"method":"resources/read","params":{"uri":"fact-tracker://sessions/${'x'.repeat(1_100_000)}"}}`,
      ],
      [911, 912, 913, 914, 915, 916, 917, 918],
    );
    expect(answers.map(({ id, error }) => [id, error?.code])).toEqual(
      [911, 912, 913, 914, 915, 916, 917, 918].map((id) => [id, -32602]),
    );
    expect(answers.map(({ error }) => error?.message)).toEqual([
      expect.stringMatching(/^Invalid params for resources\/read: params\.uri [^\n]+$/u),
      expect.stringMatching(/^Invalid params for tools\/call: params\.name [^\n]+$/u),
      expect.stringMatching(/^Invalid params for tools\/call: params [^\n]+$/u),
      expect.stringMatching(/^Invalid params for initialize: params\.\w+ [^\n]+$/u),
      expect.stringMatching(/^Invalid params for tools\/call: params\.arguments [^\n]+$/u),
      'Tool toString not found',
      'Tool __proto__ not found',
      expect.stringMatching(/^Invalid params for resources\/read: the URI is over [\d,]+ characters$/u),
    ]);
    // The server serves on.
    expect((await raw.client.listTools()).tools).toHaveLength(5);
    expect(raw.stderr()).toBe('');
  });

  it('an unknown tool or resource is named in a short line of its own, however long the name and whatever it holds', async () => {
    const raw = await sharedRawClient();
    const hostile = `evil\n\u202e${'x'.repeat(1_000_000)}`;
    const answers = await raw.send(
      [
        JSON.stringify({ jsonrpc: '2.0', id: 921, method: 'tools/call', params: { name: hostile, arguments: {} } }),
        JSON.stringify({ jsonrpc: '2.0', id: 922, method: 'resources/read', params: { uri: hostile } }),
        JSON.stringify({ jsonrpc: '2.0', id: 923, method: 'resources/read', params: { uri: 'fact-tracker://x\ny' } }),
        '{"jsonrpc":"2.0","id":924,"method":"tools/call","params":{"name":"list_fact","arguments":{}}}',
      ],
      [921, 922, 923, 924],
    );
    expect(answers.map(({ id, error }) => [id, error?.code])).toEqual([921, 922, 923, 924].map((id) => [id, -32602]));
    expect(answers.map(({ error }) => error?.message)).toEqual([
      expect.stringMatching(/^Tool "evil\\n\\u202ex+\.\.\." not found$/u),
      expect.stringMatching(/^Resource URI "evil\\n\\u202ex+\.\.\." is invalid$/u),
      'Resource not found: "fact-tracker://x\\ny"',
      // A plain name stays bare.
      'Tool list_fact not found',
    ]);
    for (const { error } of answers) expect(error!.message.length).toBeLessThan(100);
  });
});

describe('a batch of JSON-RPC messages', { timeout: 120_000 }, () => {
  it('is refused, each request of it with its own id, so that no call of it waits forever for an answer', async () => {
    const raw = await sharedRawClient();
    // The SDK's client negotiates the latest revision; one of 2025-03-26, which had batches, may send one.
    const answers = await raw.send(
      [
        '[{"jsonrpc":"2.0","id":931,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":932,"method":"tools/list"}]',
      ],
      [931, 932],
    );
    expect(answers.map(({ id, error }) => [id, error?.code])).toEqual([
      [931, -32600],
      [932, -32600],
    ]);
    for (const { error } of answers) expect(error?.message).toMatch(/^Invalid Request: [^\n]*batch/u);
    expect((await raw.client.listTools()).tools).toHaveLength(5);
    expect(raw.stderr()).toBe('');
  });
});

/** Runs the server on `input` (written at once, then ended) in `cwd`; its output lines and exit status. */
const serveInput = (
  cwd: string,
  input: string,
): Promise<{ answers: Answer[]; status: number | null; stderr: string }> =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [MAIN, 'mcp'], { cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (status) => resolve({ answers: answersIn(stdout), status, stderr }));
    child.stdin.end(input);
  });

/** The answers a server wrote, one a line. */
const answersIn = (stdout: string): Answer[] =>
  stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Answer);

/**
 * `fact-tracker mcp ...args` on `input` as `serveInput` runs it, through the built router in this
 * process (`runCliHere`): for what the server answers where the process is not the point.
 */
const serveHere = async (
  input: string,
  place: RunPlace,
  ...args: string[]
): Promise<{ answers: Answer[]; status: number; stderr: string }> => {
  const run = await runCliHere(['mcp', ...args], input, place);
  return { answers: answersIn(run.stdout), status: run.status, stderr: run.stderr };
};

/** A client's handshake, then `calls` (each a method and its params), numbered from 1, as lines. */
const clientLines = (...calls: ReadonlyArray<readonly [string, Record<string, unknown>]>): string =>
  [
    {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'here', version: '1' } },
    },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    ...calls.map(([method, params], i) => ({ jsonrpc: '2.0', id: i + 1, method, params })),
  ]
    .map((message) => `${JSON.stringify(message)}\n`)
    .join('');

describe('the last line of a client that ends its input', { timeout: 120_000 }, () => {
  const opening = [
    '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"printf","version":"1"}}}',
    '{"jsonrpc":"2.0","method":"notifications/initialized"}',
  ].join('\n');

  it('is read without its newline: a call sent last, then the input closed, is recorded and answered like one sent with it', async () => {
    const cwd = tempDir('mcp-last-line-');
    const ingest = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: 'ingest_result',
        arguments: { sessionId: 's', taskId: '1', role: 'implementer', output: implementerAnswer('1', 'src/a.ts') },
      },
    });
    const { answers, status, stderr } = await serveInput(cwd, `${opening}\n${ingest}`);
    // The server ends once the calls it read are answered, the one sent last included.
    expect(answers.map(({ id }) => id)).toEqual([0, 1]);
    expect(answers.filter(({ error }) => error !== undefined)).toEqual([]);
    expect(readFileSync(join(cwd, '.fact-tracker', 'sessions', 's.jsonl'), 'utf8').split('\n')).toHaveLength(2);
    expect([status, stderr]).toEqual([0, '']);
  });

  it('cut short, gets its parse error rather than nothing', async () => {
    const { answers, status, stderr } = await serveInput(
      tempDir('mcp-cut-line-'),
      `${opening}\n{"jsonrpc":"2.0","id":1,"meth`,
    );
    expect(answers.map(({ id, error }) => [id, error?.code])).toEqual([
      [0, undefined],
      [null, -32700],
    ]);
    expect([status, stderr]).toEqual([0, '']);
  });
});

describe(
  'a client whose input starts with a byte order mark (as a Windows pipe may write one)',
  { timeout: 120_000 },
  () => {
    it('is served as without it: the handshake and the calls after it are answered', async () => {
      const opening = [
        '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"windows","version":"1"}}}',
        '{"jsonrpc":"2.0","method":"notifications/initialized"}',
        '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
      ].join('\n');
      const { answers, status, stderr } = await serveInput(tempDir('mcp-bom-'), `\uFEFF${opening}\n`);
      expect(answers.map(({ id, error }) => [id, error?.code])).toEqual([
        [0, undefined],
        [1, undefined],
      ]);
      expect([status, stderr]).toEqual([0, '']);
    });
  },
);

describe('a server given a folder as its standard input', { timeout: 120_000 }, () => {
  it('says it cannot read it and exits 1, rather than ending at once without a word', async () => {
    const folder = openSync(tempDir('mcp-folder-input-'), 'r');
    try {
      const child = spawn(process.execPath, [MAIN, 'mcp'], {
        cwd: tempDir('mcp-folder-cwd-'),
        stdio: [folder, 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
      expect([status, stdout]).toEqual([1, '']);
      expect(stderr).toBe(
        'fact-tracker mcp: cannot read standard input: it is a folder (the server reads JSON-RPC messages there, one a line)\n',
      );
    } finally {
      closeSync(folder);
    }
  });
});

describe('a client that closes the server’s standard error', { timeout: 120_000 }, () => {
  it('is served on: what the server has to say there is lost, the server is not', async () => {
    const cwd = tempDir('mcp-no-stderr-');
    const sessions = join(cwd, '.fact-tracker', 'sessions');
    mkdirSync(sessions, { recursive: true });
    const prompt = (taskId: string): string =>
      `${JSON.stringify({ type: 'prompt', taskId, taskPrompt: 'Add a route', at: '2026-03-02T09:00:00Z' })}\n`;
    // The session opened at start is a clean one; the other has a line it cannot apply, which it says on stderr when opened.
    writeFileSync(join(sessions, 'clean.jsonl'), prompt('1'));
    writeFileSync(join(sessions, 'torn.jsonl'), `${prompt('1')}not a line of a history\n${prompt('2')}`);
    utimesSync(join(sessions, 'torn.jsonl'), 1_000, 1_000);
    const { client } = await connect(cwd);
    try {
      const child = (
        client.transport as unknown as { _process: { stderr: NodeJS.ReadableStream & { destroy: () => void } } }
      )._process;
      child.stderr.destroy();
      const listed = structured(await call(client, 'list_facts', { sessionId: 'torn' }));
      expect(listed['total']).toBe(0);
      expect((await client.listTools()).tools).toHaveLength(5);
    } finally {
      await client.close();
    }
  });
});

describe('a client that writes all its calls before it reads an answer', { timeout: 120_000 }, () => {
  it('gets them all read and answered: the server reads on while their answers wait for it, within a bound', async () => {
    const child = spawn(process.execPath, [MAIN, 'mcp'], {
      cwd: tempDir('mcp-write-first-'),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    // Whole lines only: the last piece may be an answer still being written.
    const answers = (): number =>
      stdout
        .split('\n')
        .slice(0, -1)
        .filter((line) => line !== '' && (JSON.parse(line) as Answer).id !== 0).length;
    try {
      // It reads nothing until it has written everything: 400 KB of calls, 2 MB of answers, each
      // far past what a pipe holds (64 KiB) and the output's high-water mark (16 KiB). The calls
      // are 2 KB each, 200 of them: the bytes are what fill the pipes, and each answer costs the
      // server a listing of the tools.
      child.stdout.pause();
      const calls = Array.from(
        { length: 200 },
        (_, id) =>
          `${JSON.stringify({ jsonrpc: '2.0', id: id + 1, method: 'tools/list', params: { _meta: { pad: 'x'.repeat(2_000) } } })}\n`,
      );
      child.stdin.write(
        `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"script","version":"1"}}}\n{"jsonrpc":"2.0","method":"notifications/initialized"}\n${calls.slice(0, 50).join('')}`,
      );
      // The first answers fill the pipe back; the rest of the calls, past what a pipe holds, must still be read.
      await new Promise((resolve) => setTimeout(resolve, 500));
      // A bound for a server that stopped reading, not a speed check: alone this takes under 2 s,
      // but in a full run of the suite on a slow machine the write took more than 5 s.
      const written = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), 45_000);
        child.stdin.write(calls.slice(50).join(''), () => {
          clearTimeout(timer);
          resolve(true);
        });
      });
      expect(written).toBe(true);
      child.stdout.resume();
      for (const deadline = Date.now() + 45_000; answers() < calls.length && Date.now() < deadline;)
        await new Promise((resolve) => setTimeout(resolve, 20));
      expect(answers()).toBe(calls.length);
      expect(stderr).toBe('');
    } finally {
      child.stdin.end();
    }
  });
});

describe('a request that reuses the id of one not answered yet', { timeout: 120_000 }, () => {
  it('is refused at once with an invalid request error (-32600), the first gets its own answer, and each gets exactly one before the server ends on its closed input', async () => {
    const cwd = tempDir('mcp-id-in-use-');
    const sessions = join(cwd, '.fact-tracker', 'sessions');
    mkdirSync(sessions, { recursive: true });
    // A session with a long log, not the latest (which is opened before the first message is
    // read): a call on it is still in flight when the second request and the end of input come.
    const example = readFileSync(EXAMPLE, 'utf8').trim().split('\n');
    const copies = Array.from({ length: 5 }, (_, copy) =>
      example.map((line) => JSON.stringify({ ...(JSON.parse(line) as object), taskId: `${copy}` })).join('\n'),
    );
    writeFileSync(join(sessions, 'long.jsonl'), `${copies.join('\n')}\n`);
    utimesSync(join(sessions, 'long.jsonl'), 1_000, 1_000);
    writeFileSync(
      join(sessions, 'latest.jsonl'),
      `${JSON.stringify({ type: 'prompt', taskId: '1', taskPrompt: 'Add a route', at: '2026-03-02T09:00:00Z' })}\n`,
    );
    const listFacts = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'list_facts', arguments: { sessionId: 'long' } },
    });
    const { answers, status, stderr } = await serveInput(
      cwd,
      [
        '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"printf","version":"1"}}}',
        '{"jsonrpc":"2.0","method":"notifications/initialized"}',
        listFacts,
        '{"jsonrpc":"2.0","id":1,"method":"ping"}',
        '',
      ].join('\n'),
    );
    // Each of the three requests answered, once, before the server ended.
    expect(answers.map(({ id }) => id).sort()).toEqual([0, 1, 1]);
    const refused = answers.filter(({ error }) => error !== undefined);
    expect(refused).toEqual([
      {
        jsonrpc: '2.0',
        id: 1,
        error: {
          code: -32600,
          message: expect.stringMatching(/^Invalid Request: request id already in use\b[^\n]*$/u),
        },
      },
    ]);
    const results = answers.filter(({ error }) => error === undefined);
    expect(results.map(({ id }) => id)).toEqual([0, 1]);
    // The answer to the first request under that id: the call on the session with a long log.
    expect(results[1]).toMatchObject({ result: { structuredContent: { sessionId: 'long' } } });
    expect([status, stderr]).toEqual([0, '']);
  });
});

describe('a client that closes its input with a subscription open', { timeout: 120_000 }, () => {
  it('gets its calls answered and its subscription closed, and the server ends at once: a subscription, answered only at the end, is not waited for', async () => {
    // MCP's 2026-07-28 revision: no handshake, each request names the revision in its `_meta`.
    const envelope = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'printf', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': {},
    };
    const started = Date.now();
    const { answers, status, stderr } = await serveInput(
      tempDir('mcp-open-listen-'),
      [
        {
          jsonrpc: '2.0',
          id: 'listen',
          method: 'subscriptions/listen',
          params: { _meta: envelope, notifications: {} },
        },
        { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope } },
      ]
        .map((message) => `${JSON.stringify(message)}\n`)
        .join(''),
    );
    // The subscription acknowledged, the call answered, and the subscription's end as the server's.
    expect(answers.map(({ id, error }) => [id, error?.code])).toEqual([
      [undefined, undefined],
      [1, undefined],
      ['listen', undefined],
    ]);
    // Well within the minute the server gives the calls in flight when its input ends.
    expect(Date.now() - started).toBeLessThan(30_000);
    expect([status, stderr]).toEqual([0, '']);
  });
});

describe('a client that lets many small answers wait before it reads them', { timeout: 120_000 }, () => {
  it('gets them all once it reads: every answer that waited arrives, and the server exits 0 without a word', async () => {
    const child = spawn(process.execPath, [MAIN, 'mcp'], {
      cwd: tempDir('mcp-many-waiting-'),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    let answers = 0;
    child.stdout.on('data', (chunk: Buffer) => {
      for (let at = chunk.indexOf(0x0a); at !== -1; at = chunk.indexOf(0x0a, at + 1)) answers += 1;
    });
    const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      // 5,000 pings, about 200 KB of answers, three times what a pipe holds: all read while the
      // client reads none (within the bound). That the server waits for room once for all of
      // them, not once each (which made their removal quadratic), is stdio.test.ts's check, in
      // the server's own process, on as many.
      child.stdout.pause();
      const pings = Array.from({ length: 5_000 }, (_, id) => `{"jsonrpc":"2.0","id":${id + 1},"method":"ping"}\n`);
      child.stdin.end(
        `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"script","version":"1"}}}\n${pings.join('')}`,
      );
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      child.stdout.resume();
      // Under a second alone; the SDK's listener for each waiting answer made 100,000 take minutes.
      const status = await Promise.race([
        closed,
        new Promise((resolve) => setTimeout(() => resolve('still busy'), 30_000)),
      ]);
      expect([status, answers, stderr]).toEqual([0, pings.length + 1, '']);
    } finally {
      child.kill();
    }
  });
});
