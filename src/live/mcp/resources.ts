/**
 * The two resources: the dispatch-result schemas (what a subagent must print) and a session's
 * snapshot (its event count, the lines its log could not apply, its valid facts, bounded).
 */
import {
  type McpServer,
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  ResourceTemplate,
} from '@modelcontextprotocol/server';
import * as E from 'fp-ts/lib/Either.js';
import { dispatchResultJsonSchema } from '../../core/extract/contract.js';
import { BEGIN_MARKER, END_MARKER } from '../../core/extract/parse.js';
import { selectAllFacts, selectFactsWhere, selectValidCount } from '../../core/store/selectors.js';
import type { FactStore } from '../../core/store/state.js';
import type { SessionPool } from '../session/pool.js';
import { fileSessionStore } from '../session/files.js';
import { parseSessionId } from '../session/id.js';
import type { LiveSession, SessionOptions } from '../session/session.js';
import type { TokenCounter } from '../../tokens/estimate.js';
import { fitAnswer } from './answer.js';
import { factOut } from './schemas.js';

/** The URI of the dispatch-result schemas. */
export const SCHEMAS_URI = 'fact-tracker://schemas/dispatch-result';
/** The URI template of a session's snapshot. */
export const SESSION_URI_TEMPLATE = 'fact-tracker://sessions/{sessionId}';

/** A session's snapshot as its resource: what the log held, bounded like a tool answer. */
const snapshotAnswer = (session: LiveSession, store: FactStore, maxTokens: number, countTokens: TokenCounter) => {
  const { events, errors, setAside } = session.report();
  const facts = selectFactsWhere(store, {}).map(factOut);
  return fitAnswer(
    facts,
    (kept, omitted) => ({
      sessionId: session.id,
      file: session.file,
      events,
      validFacts: selectValidCount(store),
      allFacts: selectAllFacts(store).length,
      errors: errors.slice(0, 20),
      setAside,
      facts: kept,
      omitted,
    }),
    maxTokens,
    countTokens,
  );
};

/**
 * The ids of the sessions, from the store, else from the folder's (which refuses a folder that
 * leads out of the project, as every tool does); a store that cannot list them is an error for the client.
 */
const sessionIds = async (
  options: Pick<SessionOptions, 'cwd' | 'directory' | 'store'>,
): Promise<ReadonlyArray<string>> => {
  const listed = await (options.store ?? fileSessionStore(options)).list();
  if (E.isLeft(listed)) throw new Error(`${listed.left.code}: ${listed.left.message}`);
  return listed.right;
};

/**
 * How many sessions one page of `resources/list` names: its `nextCursor` gives the next page. An
 * MCP client follows at most 64 pages by default, so a list of 64,000 sessions is read whole.
 */
const SESSIONS_PER_PAGE = 1_000;
/** What starts a cursor this server gives: the last session id of the page before follows it. */
const CURSOR_PREFIX = 'after:';

/** The session id after which the page `cursor` asks for starts; a cursor this server never gives is invalid params. */
const cursorId = (cursor: string): string => {
  const id = cursor.startsWith(CURSOR_PREFIX) ? cursor.slice(CURSOR_PREFIX.length) : undefined;
  if (id === undefined || E.isLeft(parseSessionId(id)))
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      'Invalid params for resources/list: the cursor is not one this server gave (give the nextCursor of a page, or none for the first)',
    );
  return id;
};

const SCHEMAS_METADATA = {
  title: 'Dispatch result schemas',
  description: `What a subagent must print at the end of its answer: JSON between a line ${BEGIN_MARKER} and a line ${END_MARKER}, valid against the schema of its role.`,
  mimeType: 'application/json',
};

const SESSION_METADATA = {
  title: 'Session snapshot',
  description: 'A session: its event count, the lines its log could not apply, and its valid facts (bounded).',
  mimeType: 'application/json',
};

/**
 * One page of `resources/list`: the schemas first, then the sessions in the order of their ids,
 * `SESSIONS_PER_PAGE` at a time, from the first id after `cursor` (the last id of the page
 * before), so a session made or deleted between two pages moves no other one onto or off a page.
 */
const resourcesPage = (ids: ReadonlyArray<string>, cursor: string | undefined) => {
  const from = cursor === undefined ? undefined : cursorId(cursor);
  const after = from === undefined ? [...ids].sort() : [...ids].sort().filter((id) => id > from);
  const page = after.slice(0, SESSIONS_PER_PAGE);
  return {
    resources: [
      ...(cursor === undefined ? [{ uri: SCHEMAS_URI, name: 'dispatch-result-schemas', ...SCHEMAS_METADATA }] : []),
      ...page.map((id) => ({
        ...SESSION_METADATA,
        uri: SESSION_URI_TEMPLATE.replace('{sessionId}', id),
        name: `session ${id}`,
      })),
    ],
    ...(after.length > page.length ? { nextCursor: `${CURSOR_PREFIX}${page.at(-1)!}` } : {}),
  };
};

/** Registers the resources on `server`, over the sessions of `session`; snapshots are bounded like tool answers. */
export const registerResources = (
  server: McpServer,
  session: SessionPool,
  options: Pick<SessionOptions, 'cwd' | 'directory' | 'store'> & {
    readonly maxTokens: number;
    readonly countTokens: TokenCounter;
  },
): void => {
  const { maxTokens, countTokens } = options;
  server.registerResource('dispatch-result-schemas', SCHEMAS_URI, SCHEMAS_METADATA, async (uri) => ({
    contents: [
      {
        uri: uri.href,
        mimeType: 'application/json',
        text: JSON.stringify({
          begin: BEGIN_MARKER,
          end: END_MARKER,
          implementer: dispatchResultJsonSchema('implementer'),
          reviewer: dispatchResultJsonSchema('reviewer'),
        }),
      },
    ],
  }));

  server.registerResource(
    'session-snapshot',
    // Listed by the handler below, in pages.
    new ResourceTemplate(SESSION_URI_TEMPLATE, { list: undefined }),
    SESSION_METADATA,
    async (uri, variables) => {
      const id = variables['sessionId'];
      const live = await session(typeof id === 'string' ? id : '', false);
      if (E.isLeft(live)) throw new ResourceNotFoundError(uri.href, `${live.left.code}: ${live.left.message}`);
      const store = await live.right.snapshot();
      if (E.isLeft(store)) throw new ResourceNotFoundError(uri.href, `${store.left.code}: ${store.left.message}`);
      const answer = snapshotAnswer(live.right, store.right, maxTokens, countTokens);
      if (E.isLeft(answer)) throw new ResourceNotFoundError(uri.href, `${answer.left.code}: ${answer.left.message}`);
      return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(answer.right) }] };
    },
  );
  // The SDK's resources/list gives a template's list no cursor and drops its nextCursor: a store of
  // many sessions is listed here, a page at a time.
  server.server.removeRequestHandler('resources/list');
  server.server.setRequestHandler('resources/list', async (request) =>
    resourcesPage(await sessionIds(options), request.params?.cursor),
  );
};
