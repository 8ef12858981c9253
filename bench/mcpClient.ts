/**
 * A `fact-tracker mcp` server process driven by the MCP SDK's client over stdio, as an MCP host
 * drives it: the bench's one way to start a server and call its tools.
 */
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

/** A connected server: a tool call that throws on an error answer, and the server's end. */
export interface ServerConnection {
  readonly call: (name: string, args: Record<string, unknown>) => Promise<void>;
  readonly close: () => Promise<void>;
}

/** Starts `node <cli> mcp ...extra` in `cwd` and returns once the handshake is done. */
export const connectServer = async (
  cli: string,
  extra: ReadonlyArray<string>,
  cwd?: string,
): Promise<ServerConnection> => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cli, 'mcp', ...extra],
    ...(cwd === undefined ? {} : { cwd }),
    stderr: 'pipe',
  });
  const client = new Client({ name: 'fact-tracker-bench', version: '1.0.0' });
  await client.connect(transport);
  return {
    call: async (name, args) => {
      const answer = (await client.callTool({ name, arguments: args })) as {
        isError?: boolean;
        content: ReadonlyArray<{ text?: string }>;
      };
      if (answer.isError === true) throw new Error(`${name} failed: ${answer.content[0]?.text ?? ''}`);
    },
    close: () => client.close(),
  };
};
