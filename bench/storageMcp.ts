/**
 * One session recorded through a real `fact-tracker mcp --store <store>` server process, driven by
 * the MCP SDK's client over stdio: what bench/storage.ts times beside `openSession`, so the two
 * differ only by the stdio hop, the JSON-RPC framing and the tools' validation.
 */
import { CLI } from './live.js';
import { connectServer } from './mcpClient.js';

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
  const server = await connectServer(CLI, ['--store', store]);
  return {
    ingest: (taskId, output) => server.call('ingest_result', { sessionId, taskId, role: 'implementer', output }),
    compile: (taskId, taskPrompt) => server.call('compile_context', { sessionId, taskId, taskPrompt }),
    close: server.close,
  };
};
