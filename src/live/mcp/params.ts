/**
 * Requests whose params MCP's schema refuses (an `initialize` without its fields, a
 * `resources/read` whose `uri` is a number, a `tools/call` whose `name` is not text): the SDK
 * answers them with its schema's issues pretty-printed as JSON, over a dozen lines, and for
 * every method but `tools/call` as an internal error (-32603), as though the server had failed.
 * Here they are what JSON-RPC 2.0 says, invalid params (-32602), with the first issue in one
 * line: the field and what is wrong with it. So are a URI too long for the SDK to match and a
 * tool name an object has by its prototype (`toString`), which the SDK calls disabled. A tool
 * name or a URI the SDK's message names is the client's text, named as an id is (`nameId`):
 * bare when plain, else quoted and clipped, so it can neither make a huge answer nor break its line.
 */
import { type McpServer, ProtocolError, ProtocolErrorCode, ResourceNotFoundError } from '@modelcontextprotocol/server';
import type { z } from 'zod';
import { isRecord } from '../../base/record.js';
import { describeIssue } from '../../base/schema.js';
import { clipEnd, collapseWhitespace } from '../../base/text.js';
import { nameId } from '../session/id.js';

/** The longest description of an issue: a hostile key must not make a huge answer. */
const MAX_ISSUE_LENGTH = 200;

/** Where the SDK's dump of a schema's issues starts: the whole message, or after the prefix of `tools/call`'s. */
const DUMP_START = /^(?:Invalid [\w/]+ request: )?(?=\[)/u;

/** The SDK's words for a URI longer than it matches, and for a tool it holds disabled. */
const URI_TOO_LONG = /^URI exceeds maximum length of (\d+) characters/u;
const DISABLED_TOOL = /^Tool (.*) disabled$/su;

/**
 * The SDK's messages that quote the client's text whole (a tool name, a URI: a megabyte of it,
 * line breaks and bidi controls included), with the text they quote.
 */
const UNKNOWN_TOOL = /^Tool (.*) not found$/su;
const INVALID_URI = /^Resource URI (.*) is invalid$/su;
const UNKNOWN_RESOURCE = /^Resource not found: (.*)$/su;

/**
 * `error` with the client's text its message quotes named as an id is; undefined for another
 * error. Its `data` stays as it is: MCP's resource-not-found is recognized by `data.uri`, the URI
 * as requested.
 */
const namingClientText = (error: Error): Error | undefined => {
  const data = isRecord(error) ? error['data'] : undefined;
  const tool = UNKNOWN_TOOL.exec(error.message) ?? DISABLED_TOOL.exec(error.message);
  // This server disables no tool: the SDK says so of a name an object has by its prototype (toString).
  if (tool !== null) return new ProtocolError(ProtocolErrorCode.InvalidParams, `Tool ${nameId(tool[1]!)} not found`);
  const invalid = INVALID_URI.exec(error.message);
  if (invalid !== null)
    return new ProtocolError(ProtocolErrorCode.InvalidParams, `Resource URI ${nameId(invalid[1]!)} is invalid`, data);
  if (!(error instanceof ResourceNotFoundError)) return undefined;
  const unknown = UNKNOWN_RESOURCE.exec(error.message);
  return unknown === null
    ? undefined
    : new ResourceNotFoundError(error.uri, `Resource not found: ${nameId(unknown[1]!)}`);
};

/** The issues a message of the SDK dumps as JSON, or none when it is no such dump. */
const dumpedIssues = (message: string): ReadonlyArray<z.core.$ZodIssue> | undefined => {
  const start = DUMP_START.exec(message);
  if (start === null) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(message.slice(start[0].length));
  } catch {
    // Not JSON after all: a message of another kind, passed on as it is.
    return undefined;
  }
  return Array.isArray(value) &&
    value.length > 0 &&
    value.every((issue) => isRecord(issue) && Array.isArray(issue['path']) && typeof issue['message'] === 'string')
    ? (value as ReadonlyArray<z.core.$ZodIssue>)
    : undefined;
};

/**
 * What a request handler of `method` throws, as the client should get it: a refusal of its
 * params by the SDK's schema becomes invalid params naming the first issue; anything else
 * (another protocol error, a bug) is left as it is.
 */
export const invalidParams = (method: string, error: unknown): unknown => {
  const code = isRecord(error) ? error['code'] : undefined;
  if (!(error instanceof Error)) return error;
  // The SDK matches a URI against its templates only up to a length, and throws past it.
  const uriLength = URI_TOO_LONG.exec(error.message);
  if (uriLength !== null)
    return new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `Invalid params for ${method}: the URI is over ${Number(uriLength[1]).toLocaleString('en-US')} characters`,
    );
  if (typeof code === 'number' && code !== ProtocolErrorCode.InvalidParams) return error;
  const named = namingClientText(error);
  if (named !== undefined) return named;
  const [first] = dumpedIssues(error.message) ?? [];
  if (first === undefined) return error;
  const issue = clipEnd(collapseWhitespace(describeIssue([], first)), MAX_ISSUE_LENGTH);
  return new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid params for ${method}: ${issue}`);
};

/**
 * Has every request handler of `server` answer refused params as `invalidParams` says. The SDK
 * keeps its handlers in a map of its own (private in its types; the SDK's version is pinned):
 * call this once the tools and resources are registered.
 */
export const answerInvalidParams = (server: McpServer): void => {
  type Handler = (request: unknown, context: unknown) => Promise<unknown>;
  const handlers = (server.server as unknown as { _requestHandlers: Map<string, Handler> })._requestHandlers;
  for (const [method, handler] of handlers)
    handlers.set(method, async (request, context) => {
      try {
        return await handler(request, context);
      } catch (error) {
        throw invalidParams(method, error);
      }
    });
};
