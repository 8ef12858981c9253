/**
 * The session resource through the SDK's own client over stdio against the built binary: like a
 * tool answer it stays within `--max-answer-tokens`, and every one of its lists (the facts, the
 * torn lines set aside, the lines the log could not apply) is cut to fit, with how many entries
 * were left out, rather than the whole resource being refused; only a snapshot over the bound
 * without any entry is.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { createFactTrackerMcpServer } from '../../../src/live/mcp/server.js';
import { MAIN } from '../../cli/runCli.js';
import { tempDir } from '../../tempDirs.js';

const connect = async (cwd: string, ...args: string[]): Promise<Client> => {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run "npm run build" first (npm test does it)`);
  const transport = new StdioClientTransport({ command: process.execPath, args: [MAIN, 'mcp', ...args], cwd });
  const client = new Client({ name: 'fact-tracker-resources', version: '1.0.0' });
  await client.connect(transport);
  return client;
};

/** A reviewer result the contract rejects, with a long message: a line the log cannot apply. */
const rejected = (i: number): string =>
  JSON.stringify({
    type: 'dispatch',
    role: 'reviewer',
    taskId: `r${i}`,
    at: 1_700_000_000_000 + i,
    result: {
      task_id: `r${i}`,
      assessment: 'approved',
      strengths: `not-an-array-${'x'.repeat(50)}`,
      issues: [{ severity: 'nope', file: 'a', message: 'm' }],
    },
  });

/** An implementer result that changed `files`: facts. */
const applied = (i: number, files: ReadonlyArray<string>): string =>
  JSON.stringify({
    type: 'dispatch',
    role: 'implementer',
    taskId: `i${i}`,
    at: 1_700_000_001_000 + i,
    result: { task_id: `i${i}`, status: 'completed', summary: `Changed ${files.join(' ')}`, files_changed: files },
  });

/** A project whose session `damaged` has 30 rejected lines, 10 applied ones and a torn last line. */
const damagedProject = (): string => {
  const cwd = tempDir('mcp-resources-');
  const directory = join(cwd, '.fact-tracker', 'sessions');
  mkdirSync(directory, { recursive: true });
  const lines = [
    ...Array.from({ length: 30 }, (_, i) => rejected(i)),
    ...Array.from({ length: 10 }, (_, i) => applied(i, [`src/module${i}/a.ts`, `src/module${i}/b.ts`])),
  ];
  writeFileSync(join(directory, 'damaged.jsonl'), `${lines.join('\n')}\n{"type":"dispatch","role":"impl`);
  return cwd;
};

const URI = 'fact-tracker://sessions/damaged';

/** The snapshot's JSON text as the client reads it. */
const read = async (client: Client): Promise<string> =>
  ((await client.readResource({ uri: URI })).contents[0] as { text: string }).text;

describe('the session resource', { timeout: 120_000 }, () => {
  it('cuts its facts, then its torn lines, then its rejected lines to fit --max-answer-tokens, saying how many of each it left out', async () => {
    // Each server in a project of its own: the first to open the log moves its torn line aside.
    const roomy = await connect(damagedProject());
    let whole: Record<string, unknown>;
    try {
      whole = JSON.parse(await read(roomy)) as Record<string, unknown>;
    } finally {
      await roomy.close();
    }
    // With room, at most 20 rejected lines are listed and the count says the rest.
    expect(whole).toMatchObject({ sessionId: 'damaged', errorsOmitted: 10, setAsideOmitted: 0, omitted: 0 });
    expect([(whole['errors'] as unknown[]).length, (whole['setAside'] as unknown[]).length]).toEqual([20, 1]);
    const factCount = (whole['facts'] as unknown[]).length;
    expect(factCount).toBeGreaterThan(0);

    const small = await connect(damagedProject(), '--max-answer-tokens', '1000');
    try {
      const text = await read(small);
      expect(Math.ceil(text.length / 4)).toBeLessThanOrEqual(1000);
      const cut = JSON.parse(text) as Record<string, unknown>;
      const errors = cut['errors'] as ReadonlyArray<{ line: number }>;
      expect(cut).toMatchObject({ facts: [], omitted: factCount, setAside: [], setAsideOmitted: 1 });
      expect(errors.length).toBeGreaterThan(0);
      expect(errors.length).toBeLessThan(20);
      expect(errors.length + (cut['errorsOmitted'] as number)).toBe(30);
      expect(errors.map((error) => error.line)).toEqual(Array.from({ length: errors.length }, (_, i) => i + 1));
    } finally {
      await small.close();
    }
  });

  // The command line takes no bound under 1,000 tokens, which a snapshot without entries never
  // reaches: the library's server takes any.
  it('is refused only when even the snapshot without any entry is over the bound', async () => {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const server = createFactTrackerMcpServer({ cwd: damagedProject(), version: '0.0.0-test', maxAnswerTokens: 40 });
    await server.connect(serverSide);
    const client = new Client({ name: 'fact-tracker-resources', version: '1.0.0' });
    await client.connect(clientSide);
    try {
      await expect(client.readResource({ uri: URI })).rejects.toThrow(
        /answer_too_large: the answer is over the bound of 40 tokens even without its list/u,
      );
    } finally {
      await client.close();
    }
  });
});
