/**
 * The two resources: the dispatch-result schemas (what a subagent must print) and a session's
 * snapshot (its event count, the lines its log could not apply, the torn lines it set aside, its
 * facts: each list bounded, with how many entries it left out).
 */
import {
  type McpServer,
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  ResourceTemplate,
} from '@modelcontextprotocol/server';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import { dispatchResultJsonSchema } from '../../core/extract/contract.js';
import { BEGIN_MARKER, END_MARKER } from '../../core/extract/parse.js';
import type { ReplayError } from '../../core/replay/replay.js';
import { selectAllFacts, selectFactsWhere, selectValidCount } from '../../core/store/selectors.js';
import type { FactStore } from '../../core/store/state.js';
import type { SessionPool } from '../session/pool.js';
import { fileSessionStore } from '../session/files.js';
import { parseSessionId } from '../session/id.js';
import type { SetAsideLine } from '../session/model.js';
import type { LiveSession, SessionOptions } from '../session/session.js';
import type { TokenCounter } from '../../tokens/estimate.js';
import { fitAnswer } from './answer.js';
import { type FactOut, factOut } from './schemas.js';

/** The URI of the dispatch-result schemas. */
export const SCHEMAS_URI = 'fact-tracker://schemas/dispatch-result';
/** The URI template of a session's snapshot. */
export const SESSION_URI_TEMPLATE = 'fact-tracker://sessions/{sessionId}';

/**
 * How many of the lines the log could not apply a snapshot lists at most: enough to say that the
 * log is damaged and where; `fact-tracker replay` lists them all.
 */
const LISTED_ERRORS = 20;

/** The lists of a snapshot, each of which is cut when the whole does not fit. */
interface SnapshotLists {
  readonly facts: ReadonlyArray<FactOut>;
  readonly errors: ReadonlyArray<ReplayError>;
  readonly setAside: ReadonlyArray<SetAsideLine>;
}

/** A snapshot made of `kept`, each list with how many of its entries `all` has beyond it. */
const snapshotOf =
  (header: Record<string, unknown>, all: SnapshotLists, errorCount: number) => (kept: SnapshotLists) => ({
    ...header,
    errors: kept.errors,
    errorsOmitted: errorCount - kept.errors.length,
    setAside: kept.setAside,
    setAsideOmitted: all.setAside.length - kept.setAside.length,
    facts: kept.facts,
    omitted: all.facts.length - kept.facts.length,
  });

/**
 * A session's snapshot as its resource: what the log held, bounded like a tool answer. The facts,
 * the long list of a healthy session, are cut first, so the few damaged lines listed still tell
 * a reader why facts may be missing; a log with many long rejected or torn lines then has those
 * cut too, its torn lines first, rather than a resource nobody can read. Refused only when even
 * the snapshot without any entry is over the bound.
 */
const snapshotAnswer = (session: LiveSession, store: FactStore, maxTokens: number, countTokens: TokenCounter) => {
  const report = session.report();
  const all: SnapshotLists = {
    facts: selectFactsWhere(store, {}).map(factOut),
    errors: report.errors.slice(0, LISTED_ERRORS),
    setAside: report.setAside,
  };
  const build = snapshotOf(
    {
      sessionId: session.id,
      file: session.file,
      events: report.events,
      validFacts: selectValidCount(store),
      allFacts: selectAllFacts(store).length,
    },
    all,
    report.errors.length + (report.errorsOmitted ?? 0),
  );
  const fit = <T>(list: ReadonlyArray<T>, lists: (kept: ReadonlyArray<T>) => SnapshotLists) =>
    fitAnswer(list, (kept) => build(lists(kept)), maxTokens, countTokens);
  return pipe(
    fit(all.facts, (facts) => ({ ...all, facts })),
    E.orElse(() => fit(all.setAside, (setAside) => ({ ...all, facts: [], setAside }))),
    E.orElse(() => fit(all.errors, (errors) => ({ facts: [], errors, setAside: [] }))),
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
  description:
    'A session: its event count, the lines its log could not apply (errors, errorsOmitted), the torn lines it set aside (setAside, setAsideOmitted), and its facts (facts, omitted); each list is cut to fit the answer bound.',
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
