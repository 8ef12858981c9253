/**
 * A tool call whose arguments hold a key named `__proto__`. The SDK reads a call's `arguments`
 * through a zod record, which leaves such a key out of its copy (assigned there, it would set the
 * copy's prototype): the tool's schema, which refuses every argument it does not name, never sees
 * it, and the call ran as though it had not been sent. Checked as the client sent them, the
 * arguments are refused as they are with any unknown argument.
 */
import type { McpServer } from '@modelcontextprotocol/server';
import { isRecord } from '../../base/record.js';
import type { ToolAnswer } from './errors.js';

/** What this module reaches of the SDK's server (private in its types; the SDK's version is pinned). */
interface SdkToolServer {
  readonly _registeredTools: Readonly<Record<string, unknown>>;
  readonly validateToolInput: (tool: unknown, args: unknown, name: string) => Promise<unknown>;
  readonly createToolError: (message: string) => ToolAnswer;
}

/** The key a copy by assignment turns into a prototype. */
const PROTO_KEY = '__proto__';

/**
 * Has `server` check the arguments of a tool call that hold a `__proto__` key against the tool's
 * schema as they were sent, answering its refusal as the SDK answers any (`createToolError`).
 * Call this once the tools are registered, before `answerInvalidParams`.
 */
export const refuseProtoArguments = (server: McpServer): void => {
  type Handler = (request: unknown, context: unknown) => Promise<unknown>;
  const handlers = (server.server as unknown as { _requestHandlers: Map<string, Handler> })._requestHandlers;
  const callTool = handlers.get('tools/call');
  if (callTool === undefined) return;
  const sdk = server as unknown as SdkToolServer;
  handlers.set('tools/call', async (request, context) => {
    const params = isRecord(request) ? request['params'] : undefined;
    const name = isRecord(params) ? params['name'] : undefined;
    const args = isRecord(params) ? params['arguments'] : undefined;
    if (
      typeof name === 'string' &&
      Object.hasOwn(sdk._registeredTools, name) &&
      isRecord(args) &&
      Object.hasOwn(args, PROTO_KEY)
    )
      try {
        await sdk.validateToolInput(sdk._registeredTools[name], args, name);
      } catch (error) {
        return sdk.createToolError(error instanceof Error ? error.message : String(error));
      }
    return callTool(request, context);
  });
};
