/**
 * `fact-tracker mcp`: the session log behind an MCP server (the official SDK, v2). The server
 * is its tools (tools.ts) and resources (resources.ts) over a pool of open sessions
 * (session/pool.ts); the schemas are in schemas.ts, and how it fails in errors.ts.
 */
import { McpServer } from '@modelcontextprotocol/server';
import { BEGIN_MARKER, END_MARKER } from '../../core/extract/parse.js';
import { namedTokenCounter } from '../../tokens/checked.js';
import { estimateTokens, type TokenCounter } from '../../tokens/estimate.js';
import { MAX_OUTPUT_LENGTH } from '../session/limits.js';
import { createSessionPool, type SessionPool, type SessionPoolOptions } from '../session/pool.js';
import { fitAnswer } from './answer.js';
import { codedToolError, type ToolAnswer } from './errors.js';
import { answerInvalidParams } from './params.js';
import { refuseProtoArguments } from './protoArgument.js';
import { registerResources, SCHEMAS_URI } from './resources.js';
import { noElicitation } from './shims.js';
import { type FitAnswer, registerTools } from './tools.js';
import type { SectionLayout } from '../../core/retrieve/defaults.js';

/** No tool answer is larger than this many tokens unless configured otherwise. */
export const DEFAULT_MAX_ANSWER_TOKENS = 8_000;
/** The longest dispatch output `ingest_result` takes, in characters (`MAX_OUTPUT_LENGTH`). */
export const MAX_OUTPUT_CHARACTERS = MAX_OUTPUT_LENGTH;

/** How the server runs. */
export interface FactTrackerMcpOptions extends SessionPoolOptions {
  /** The package version the server reports. */
  readonly version: string;
  /** The bound of every answer, in tokens (default 8,000). */
  readonly maxAnswerTokens?: number;
  /** Counts the tokens of sections and answers (default: ceil(characters / 4)). */
  readonly countTokens?: TokenCounter;
  /** The layout of the sections of calls that do not name one (default `lines`). */
  readonly layout?: SectionLayout;
}

const INSTRUCTIONS = `Session memory for orchestrators that dispatch subagents.
Before dispatching a subagent, call compile_context with the task's id and prompt, and put its sessionContext into the subagent's prompt.
Ask each subagent to end its answer with its result as JSON between a line ${BEGIN_MARKER} and a line ${END_MARKER} (the JSON Schemas are the resource ${SCHEMAS_URI}).
When it returns, call ingest_result with its whole final message. Use one sessionId for the whole session and one taskId per task.`;

/**
 * A new server over the sessions `options` name. `serveStdio` may ask for more than one
 * instance (one per protocol era it tries), so they can share one pool of open sessions.
 */
export const createFactTrackerMcpServer = (
  options: FactTrackerMcpOptions,
  session: SessionPool = createSessionPool(options),
): McpServer => {
  const maxTokens = options.maxAnswerTokens ?? DEFAULT_MAX_ANSWER_TOKENS;
  // The caller's counter says its exceptions are its own (`namedTokenCounter`).
  const countTokens = namedTokenCounter(options.countTokens ?? estimateTokens);
  const fit: FitAnswer = (list, build) => fitAnswer(list, build, maxTokens, countTokens);
  const server = new McpServer(
    { name: 'fact-tracker', version: options.version },
    // The SDK's default validator is Ajv, which it uses only for elicitation (see shims.ts).
    { instructions: INSTRUCTIONS, capabilities: { tools: {}, resources: {} }, jsonSchemaValidator: noElicitation },
  );
  // The SDK answers arguments its schema refuses through this method of its own (private in its
  // types; the SDK's version is pinned): give those answers a code too.
  (server as unknown as { createToolError: (message: string) => ToolAnswer }).createToolError = codedToolError;
  registerTools(server, session, fit, options.layout === undefined ? {} : { layout: options.layout });
  registerResources(server, session, {
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    ...(options.directory === undefined ? {} : { directory: options.directory }),
    ...(options.store === undefined ? {} : { store: options.store }),
    maxTokens,
    countTokens,
  });
  refuseProtoArguments(server);
  answerInvalidParams(server);
  return server;
};
