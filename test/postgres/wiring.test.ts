/**
 * Every way in on one PostgreSQL store, as users run them: two `fact-tracker mcp` processes
 * driven alternately by the official MCP client and a hook process share one session with
 * nothing lost, and `sessions export` (a process too), `replay --session`, `sessions
 * list|delete` and `db migrate` (through the commands' code in this process) read and change
 * it. Everything runs as the agents' role of docs/team.md, created with exactly the statements
 * that page lists. Each way a store can be wrong is one line without the password, and a
 * non-zero exit (the hook: exit 0 and a `systemMessage`).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseHistory } from '../../src/index.js';
import * as E from 'fp-ts/lib/Either.js';
import { createNotableFactsTracker } from '../../src/notes/index.js';
import { postgresNotesStore, SCHEMA_VERSION } from '../../src/postgres/index.js';
import { type CliRun, MAIN, ROOT, runCli, runCliHere } from '../cli/runCli.js';
import { toolCallOf } from '../live/mcp/historyCalls.js';
import { tempDir } from '../tempDirs.js';
import { startEndingProxy } from './endingProxy.js';
import { PASSWORD, postgresUnavailable, usePostgres } from './server.js';

const EXAMPLE = join(ROOT, 'examples', 'web-api-session.jsonl');
const TEAM = readFileSync(join(ROOT, 'docs', 'team.md'), 'utf8');
const AGENT_PASSWORD = 'agent-Pw-4417';
const OWNER_PASSWORD = 'owner-Pw-9031';

const { server } = usePostgres();

/** Runs `fact-tracker ...args` in `cwd` with exactly `env` (and PATH), feeding `input`. */
const run = (args: ReadonlyArray<string>, env: Record<string, string>, cwd: string, input = ''): Promise<CliRun> =>
  runCli(args, input, { cwd, env });

/**
 * `run` through the built router in this process: the same commands on the same store, where
 * what is checked is what they read and write, not the process (the variables they are given
 * are read from `env` alike; the driver's own, PGPASSWORD and ~/.pgpass, only by a process).
 */
const runHere = (args: ReadonlyArray<string>, env: Record<string, string>, cwd: string, input = ''): Promise<CliRun> =>
  runCliHere(args, input, { cwd, env });

/** The SQL block of docs/team.md after `<!-- sql: NAME -->`, for the database `database`. */
const documentedSql = (name: string, database: string, password: string): string => {
  const block = TEAM.split(`<!-- sql: ${name} -->`)[1]?.split('```')[1];
  if (block === undefined) throw new Error(`docs/team.md has no block "${name}"`);
  return block
    .replace(/^sql\n/u, '')
    .replace(/\bmemory\b/gu, database)
    .replace(/'\.\.\.'/gu, `'${password}'`);
};

interface ToolResult {
  readonly content: ReadonlyArray<{ readonly text?: string }>;
  readonly structuredContent?: Record<string, unknown>;
  readonly isError?: boolean;
}

/** A client connected to `fact-tracker mcp` in `cwd`, with `args` and `env`. */
const connect = async (cwd: string, args: ReadonlyArray<string>, env: Record<string, string>): Promise<Client> => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MAIN, 'mcp', ...args],
    cwd,
    stderr: 'pipe',
    env: { PATH: process.env['PATH'] ?? '', ...env },
  });
  const client = new Client({ name: 'fact-tracker-postgres', version: '1.0.0' });
  await client.connect(transport);
  return client;
};

const structured = async (client: Client, name: string, args: Record<string, unknown>) => {
  const result = (await client.callTool({ name, arguments: args })) as ToolResult;
  if (result.isError === true || result.structuredContent === undefined)
    throw new Error(`${name}: ${result.content.map((part) => part.text ?? '').join('')}`);
  return result.structuredContent;
};

type Payload = Record<string, unknown>;

const fixture = (name: string, sessionId: string, cwd: string): Payload => ({
  ...(JSON.parse(
    readFileSync(new URL(`../live/hook/fixtures/claude-code/${name}.json`, import.meta.url), 'utf8'),
  ) as Payload),
  session_id: sessionId,
  cwd,
});

/** The prompt sections of a replay's JSON report. */
const sectionsOf = (report: string): Array<{ sessionContext: string; facts: unknown[] }> =>
  (
    JSON.parse(report) as { prompts: Array<{ sessionContext: string; facts: Array<Record<string, unknown>> }> }
  ).prompts.map((prompt) => ({
    sessionContext: prompt.sessionContext,
    facts: prompt.facts.map(({ subject, relation, object }) => ({ subject, relation, object })),
  }));

// Concurrent: the ways a store can be wrong wait out a server that cannot be reached (the hook
// tries it for 5 s twice), and touch nothing the other tests read.
const CONCURRENT = { timeout: 240_000, concurrent: true } as const;

describe.skipIf(postgresUnavailable !== undefined)('every way in on one PostgreSQL store', CONCURRENT, () => {
  /** The agents' URL: their role of docs/team.md, password in the URL (as FACT_TRACKER_STORE holds it). */
  let agentUrl: string;
  /** The owner's, without its password (given in PGPASSWORD). */
  let ownerUrl: string;
  let database: string;

  beforeAll(async () => {
    const created = new URL(await server().createDatabase());
    database = created.pathname.slice(1);
    const suffix = database.replace(/\W/gu, '');
    // Role names are cluster-wide: one pair per database.
    const rename = (sql: string): string =>
      sql.replace(/\bfact_tracker_(owner|agent)\b/gu, `fact_tracker_$1_${suffix}`);
    const owner = `fact_tracker_owner_${suffix}`;
    const agent = `fact_tracker_agent_${suffix}`;
    for (const statement of rename(documentedSql('administrator', database, AGENT_PASSWORD)).split(';\n'))
      if (statement.trim() !== '') await server().admin(statement);
    await server().admin(`ALTER ROLE ${owner} PASSWORD '${OWNER_PASSWORD}'`);
    ownerUrl = `postgres://${owner}@127.0.0.1:${server().port}/${database}`;
    agentUrl = server().url(database, agent, AGENT_PASSWORD);
    const migrated = await run(['db', 'migrate', '--store', ownerUrl], { PGPASSWORD: OWNER_PASSWORD }, tempDir('db-'));
    expect(migrated).toEqual({
      status: 0,
      stdout: `created the schema fact_tracker at ${ownerUrl} (version ${SCHEMA_VERSION})\n`,
      stderr: '',
    });
    const asOwner = new pg.Client({ connectionString: server().url(database, owner, OWNER_PASSWORD) });
    await asOwner.connect();
    await asOwner.query(rename(documentedSql('owner', database, '')));
    await asOwner.end();
  }, 120_000);

  it('shares one session between two MCP servers, driven alternately, and a hook: nothing lost, and replay of the export gives every section', async () => {
    const cwd = tempDir('pg-wiring-');
    // One server names the store on its command line, the other takes it from the environment.
    const clients = await Promise.all([
      connect(cwd, ['--store', agentUrl], {}),
      connect(cwd, [], { FACT_TRACKER_STORE: agentUrl }),
    ]);
    const sessionId = 'team-web-api';
    const sections: Array<{ sessionContext: unknown; facts: unknown }> = [];
    let sent = 0;
    try {
      for (const event of parseHistory(readFileSync(EXAMPLE, 'utf8')).events) {
        const toolCall = toolCallOf(event, sessionId);
        if (toolCall === undefined) continue;
        const answer = await structured(clients[sent % 2]!, toolCall.name, toolCall.args);
        sent += 1;
        if (event.type === 'prompt')
          sections.push({ sessionContext: answer['sessionContext'], facts: answer['facts'] });
      }
    } finally {
      await Promise.all(clients.map((client) => client.close()));
    }

    // A hook process of another project records a subagent's prompt and result into the same session.
    const hookEnv = { FACT_TRACKER_STORE: agentUrl, CLAUDE_PROJECT_DIR: tempDir('pg-hook-') };
    const pre = await run(['hook'], hookEnv, cwd, JSON.stringify(fixture('pre-tool-use-agent', sessionId, cwd)));
    expect([pre.status, pre.stderr]).toEqual([0, '']);
    const updatedInput = (JSON.parse(pre.stdout) as { hookSpecificOutput: { updatedInput: Payload } })
      .hookSpecificOutput.updatedInput;
    const hookSection = (updatedInput['prompt'] as string).split('\n\nTask ID: 1')[0];
    expect(hookSection).toMatch(/^\[Session Context\]\n/u);
    // The host runs the subagent on the rewritten prompt, and the call ends with its answer.
    const post = await run(
      ['hook'],
      hookEnv,
      cwd,
      JSON.stringify({ ...fixture('post-tool-use-agent', sessionId, cwd), tool_input: updatedInput }),
    );
    expect(post).toEqual({ status: 0, stdout: '', stderr: '' });

    const agent = { FACT_TRACKER_STORE: agentUrl };
    const exported = await run(['sessions', 'export', sessionId], agent, cwd);
    expect(exported.status).toBe(0);
    // Every event sent is there once, and the hook's two after them.
    const lines = exported.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(sent + 2);
    expect(lines.slice(-2).map((line) => (JSON.parse(line) as { type: string }).type)).toEqual(['prompt', 'dispatch']);

    const replayed = await runHere(['replay', '-', '--json'], {}, cwd, exported.stdout);
    expect(replayed.status).toBe(0);
    const all = sectionsOf(replayed.stdout);
    expect(all.slice(0, -1)).toEqual(sections);
    expect(all.at(-1)!.sessionContext).toBe(hookSection);
    // replay --session reads the same session from the store, and prints the same report.
    expect(await runHere(['replay', '--session', sessionId, '--json'], agent, cwd)).toEqual(replayed);
    expect((await runHere(['facts', '--store', agentUrl, '--session', sessionId, '--json'], {}, cwd)).stdout).toContain(
      'src/config.ts',
    );
    expect((await runHere(['sessions', 'list'], agent, cwd)).stdout).toBe(`${sessionId}\n`);
    expect(await runHere(['sessions', 'delete', sessionId], agent, cwd)).toMatchObject({ status: 0, stderr: '' });
    expect(await runHere(['sessions', 'list', '--store', agentUrl], {}, cwd)).toEqual({
      status: 0,
      stdout: '',
      stderr: '',
    });
    const gone = await runHere(['replay', '--session', sessionId], agent, cwd);
    expect(gone.status).toBe(1);
    expect(gone.stderr).toMatch(
      /^fact-tracker replay: unknown_session: there is no session team-web-api in postgres:/u,
    );
    // An up-to-date schema needs nothing, and the agents' role may say so.
    expect((await runHere(['db', 'migrate'], agent, cwd)).stdout).toMatch(
      new RegExp(`is at version ${SCHEMA_VERSION}: nothing to do\\n$`, 'u'),
    );
  });

  it('keeps serving when the server ends a connection as it is made, its ReadyForQuery and its end read at once: the tool call is answered, and recorded once', async () => {
    // A database of its own: the other tests of this file list the sessions of theirs.
    const proxy = await startEndingProxy(server());
    const cwd = tempDir('pg-ended-');
    const url = await server().createDatabase();
    const client = await connect(cwd, ['--store', proxy.through(url)], {});
    const sessionId = 'ended-as-made';
    try {
      await structured(client, 'compile_context', { sessionId, taskId: '1', taskPrompt: 'Change src/a.ts' });
      // The server ends the connections the MCP server holds, and the new one it makes next as soon as it is ready.
      const held = proxy.pids();
      await server().admin('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [held]);
      while ((await server().admin('SELECT 1 FROM pg_stat_activity WHERE pid = ANY($1)', [held])).rowCount! > 0)
        await new Promise((resolve) => setTimeout(resolve, 20));
      proxy.endNext();
      await structured(client, 'invalidate_fact', { sessionId, subject: 'task:1', relation: 'summary' });
      await structured(client, 'invalidate_fact', { sessionId, subject: 'task:2', relation: 'summary' });
      expect(proxy.ended()).toHaveLength(1);
    } finally {
      await client.close();
      await proxy.close();
    }
    const exported = await runHere(['sessions', 'export', sessionId, '--store', url], {}, cwd);
    expect(
      exported.stdout
        .trimEnd()
        .split('\n')
        .map((line) => (JSON.parse(line) as { type: string }).type),
    ).toEqual(['prompt', 'invalidate', 'invalidate']);
  });

  it('serves the notes ledger as the agents’ role: a tracker on the database records, takes the lease and saves', async () => {
    const store = postgresNotesStore(agentUrl);
    const errors: string[] = [];
    try {
      const tracker = createNotableFactsTracker({
        complete: () => Promise.resolve(JSON.stringify({ notableFacts: [{ category: 'History', fact: 'Said hi' }] })),
        store,
        holder: 'wiring',
        onError: (failure) => errors.push(failure.message),
      });
      tracker.recordUserMessage('maya', 's1', 'hi');
      await tracker.settled();
      const report = await tracker.endStage('maya', 's1');
      expect(E.isRight(report)).toBe(true);
      // The merge is saved in the background: settled() waits for it.
      await tracker.settled();
      const records = await store.load('maya', 's1');
      expect(E.isRight(records) && records.right.profile.value).toMatchObject({
        facts: [{ fact: 'Said hi', session: 's1' }],
      });
      expect(errors).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('reads the password of ~/.pgpass when neither the URL nor PGPASSWORD gives one, and says nothing on stderr', async () => {
    const cwd = tempDir('pg-pgpass-');
    const home = tempDir('pg-home-');
    const { username, port } = new URL(agentUrl);
    writeFileSync(join(home, '.pgpass'), `127.0.0.1:${port}:${database}:${username}:${AGENT_PASSWORD}\n`, {
      mode: 0o600,
    });
    const env = { HOME: home, FACT_TRACKER_STORE: `postgres://${username}@127.0.0.1:${port}/${database}` };
    // Read-only commands: the other tests of this file list the sessions at once.
    const [listed, migrated] = await Promise.all([
      run(['sessions', 'list'], env, cwd),
      run(['db', 'migrate'], env, cwd),
    ]);
    expect([listed.status, listed.stderr]).toEqual([0, '']);
    expect(migrated).toEqual({
      status: 0,
      stdout: `the schema fact_tracker at ${env.FACT_TRACKER_STORE} is at version ${SCHEMA_VERSION}: nothing to do\n`,
      stderr: '',
    });
  });

  it('says in one line, without the password and with a non-zero exit, what is wrong with a store; the hook exits 0 and says it to the user', async () => {
    const cwd = tempDir('pg-wrong-');
    const newer = await server().createDatabase();
    const admin = new pg.Client({ connectionString: newer });
    await admin.connect();
    await admin.query(
      `CREATE SCHEMA fact_tracker; CREATE TABLE fact_tracker.migrations (version integer PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now()); INSERT INTO fact_tracker.migrations VALUES (99, 'from the future')`,
    );
    await admin.end();
    const nobody = `nobody_${database.replace(/\W/gu, '')}`;
    await server().admin(`CREATE ROLE ${nobody} LOGIN PASSWORD '${AGENT_PASSWORD}'`);
    const unreachable = `postgres://someone:${AGENT_PASSWORD}@127.0.0.1:1/memory`;
    const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>, Record<string, string>, RegExp]> = [
      [
        'a port out of range',
        ['sessions', 'list'],
        { FACT_TRACKER_STORE: `postgres://u:${AGENT_PASSWORD}@127.0.0.1:99999/x` },
        /^fact-tracker sessions: store_url: FACT_TRACKER_STORE: /u,
      ],
      [
        'another scheme',
        ['replay', '--session', 's', '--store', `mysql://u:${AGENT_PASSWORD}@h/x`],
        {},
        /^fact-tracker replay: store_url: --store is a mysql: URL/u,
      ],
      [
        'no server',
        ['mcp', '--store', unreachable],
        {},
        /^fact-tracker mcp: store_unreachable: cannot reach PostgreSQL at postgres:\/\/someone@127\.0\.0\.1:1\/memory/u,
      ],
      [
        'a wrong password',
        ['sessions', 'export', 's', '--store', server().url(database, 'postgres', 'wrong-Pw-2')],
        {},
        /^fact-tracker sessions: store_auth: /u,
      ],
      [
        'a missing privilege',
        ['sessions', 'list', '--store', server().url(database, nobody, AGENT_PASSWORD)],
        {},
        /^fact-tracker sessions: store_privilege: .*permission denied/u,
      ],
      [
        'a newer schema',
        ['db', 'migrate', '--store', newer],
        {},
        /^fact-tracker db: store_schema: .*newer than .*upgrade session-fact-tracker/u,
      ],
    ];
    // At once: a server that cannot be reached is retried for 5 s before it is said to be. The
    // hook and the server that cannot reach its store as processes, whose exits are what the
    // user sees; the rest through the commands' code in this process.
    const [hooked, ...runs] = await Promise.all([
      run(
        ['hook'],
        { FACT_TRACKER_STORE: unreachable, CLAUDE_PROJECT_DIR: cwd },
        cwd,
        JSON.stringify(fixture('pre-tool-use-agent', 'wrong-store', cwd)),
      ),
      ...cases.map(([, args, env]) => (args[0] === 'mcp' ? run : runHere)(args, env, cwd, '')),
    ]);
    cases.forEach(([what, , , expected], i) => {
      const { status, stdout, stderr } = runs[i]!;
      expect([what, status, stdout]).toEqual([what, 1, '']);
      expect(stderr).toMatch(expected);
      expect(stderr.split('\n')).toHaveLength(2);
      for (const secret of [AGENT_PASSWORD, 'wrong-Pw-2', PASSWORD]) expect(stderr).not.toContain(secret);
    });
    expect(hooked!.status).toBe(0);
    const message = (JSON.parse(hooked!.stdout) as { systemMessage: string }).systemMessage;
    expect(message).toMatch(/^fact-tracker: store_unreachable: session wrong-store: cannot reach PostgreSQL/u);
    expect(hooked!.stdout + hooked!.stderr).not.toContain(AGENT_PASSWORD);
  });
});
