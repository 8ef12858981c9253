/**
 * One session recorded through a real `fact-tracker mcp --store <store>` server process, driven by
 * the MCP SDK's client over stdio: what bench/storage.ts times beside `openSession`, so the two
 * differ only by the stdio hop, the JSON-RPC framing and the tools' validation.
 */
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { CLI } from './live.js';

/** The two calls a storage round makes on one session, each failing by throwing. */
export interface Recorder {
  readonly ingest: (taskId: string, output: Readonly<Record<string, unknown>>) => Promise<void>;
  readonly compile: (taskId: string, taskPrompt: string) => Promise<void>;
}

/** A session reached through its own MCP server: a round's calls, and the server's end. */
export interface McpRecorder extends Recorder {
  readonly close: () => Promise<void>;
}

/** Starts a server on `store` (a folder or a PostgreSQL URL) for session `sessionId`, after the handshake. */
export const mcpRecorder = async (store: string, sessionId: string): Promise<McpRecorder> => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'mcp', '--store', store],
    stderr: 'pipe',
  });
  const client = new Client({ name: 'fact-tracker-bench', version: '1.0.0' });
  await client.connect(transport);
  const call = async (name: string, args: Record<string, unknown>): Promise<void> => {
    const answer = (await client.callTool({ name, arguments: { sessionId, ...args } })) as {
      isError?: boolean;
      content: ReadonlyArray<{ text?: string }>;
    };
    if (answer.isError === true) throw new Error(`${name} failed: ${answer.content[0]?.text ?? ''}`);
  };
  return {
    ingest: (taskId, output) => call('ingest_result', { taskId, role: 'implementer', output }),
    compile: (taskId, taskPrompt) => call('compile_context', { taskId, taskPrompt }),
    close: () => client.close(),
  };
};
