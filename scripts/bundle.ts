/**
 * Writes the bundle the binary runs from, `dist/bundle/`, from the compiled entry points of a
 * bare hook (`dist/cli/hookProcess.js`) and of every other command line
 * (`dist/cli/commandProcess.js`); run by `npm run build`, after `tsc`. A hook process is
 * started by the agent on every event and blocks it until it exits, and an MCP server is
 * started with every agent session: loaded module by module, the hook path reads about two
 * hundred files (zod alone is ninety-five), the server more, and loading them was most of a
 * short session's hook time. Bundled, each reads one file of code and the code cache written
 * for it (see `writeCodeCaches` below). The o200k tokenizer's tables stay outside: they are
 * required from where npm installed them when `--tokenizer o200k` asks. So does the PostgreSQL
 * driver `pg`, and `pgpass`, its password file's lookup: required from node_modules only when a
 * `postgres://` store is used, never by a hook on the files. */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, type BuildOptions, type Plugin } from 'esbuild';

/** A path in the repository, as a file path (a checkout's folder may hold spaces or non-ASCII names). */
const at = (path: string): string => fileURLToPath(new URL(`../${path}`, import.meta.url));

/**
 * A package's ES module build, as its `module` field names it. The stopword lists' main entry
 * is CommonJS, one object of every language's list, which a bundle takes whole (a fifth of the
 * hook's code); from the module build it takes the English list alone.
 */
const moduleBuild = (name: string): string => {
  const manifest = JSON.parse(readFileSync(at(`node_modules/${name}/package.json`), 'utf8')) as { module?: unknown };
  if (typeof manifest.module !== 'string') throw new Error(`${name} names no module build`);
  return `${name}/${manifest.module.replace(/^\.\//u, '')}`;
};

/**
 * zod's locales, English alone. zod re-exports every language's error messages as a namespace
 * (`z.locales`, `z.core.locales`), which a bundle cannot leave out: 63 locales, 366 KB,
 * a third of the hook's bundle, compiled by every hook process and server. Nothing here reads
 * that namespace; zod sets its English messages from their own module, which stays.
 */
const englishZodLocales: Plugin = {
  name: 'english-zod-locales',
  // esbuild's filters are Go regular expressions, which take no flags.
  setup(bundler) {
    bundler.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, ({ importer }) =>
      /[\\/]node_modules[\\/]zod[\\/]v4[\\/](?:classic|core)[\\/]/u.test(importer)
        ? { path: 'zod-locales', namespace: 'english-zod-locales' }
        : undefined,
    );
    bundler.onLoad({ filter: /.*/, namespace: 'english-zod-locales' }, () => ({
      contents: `export { default as en } from ${JSON.stringify(at('node_modules/zod/v4/locales/en.js'))};`,
      resolveDir: at('.'),
    }));
  },
};

// A bundle written before goes whole: a code cache is never left beside a bundle other than the
// one it was made from (V8 checks a cache against its source's length only).
rmSync(at('dist/bundle'), { recursive: true, force: true });

/**
 * What both builds share. Each is one CommonJS file: a script, which V8 can compile from a code
 * cache (see `src/cli/bundleLoader.ts`). What a file imports on demand (the other command lines,
 * the PostgreSQL store, the o200k tokenizer) is in it, and runs, `pg` and the tokenizer's tables
 * required with it, only when asked for. Split as ES modules where they import on demand, the
 * command lines came in dozens of chunks, and resolving and linking them was a twentieth of a
 * hook's time and a tenth of a server's start.
 */
const common: BuildOptions = {
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  external: ['gpt-tokenizer', 'gpt-tokenizer/*', 'pg', 'pgpass'],
  alias: {
    stopword: moduleBuild('stopword'),
    // The MCP SDK's Node shims without Ajv, which only elicitation uses (see live/mcp/shims.ts).
    '@modelcontextprotocol/server/_shims': at('dist/live/mcp/shims.js'),
  },
  // The modules that find the package's manifest, or the binary, from their own place do so from the bundle's.
  define: { 'import.meta.url': '__bundleUrl' },
  banner: { js: "var __bundleUrl = require('node:url').pathToFileURL(__filename).href;" },
  plugins: [englishZodLocales],
  // What a file imports on demand is required: a script compiled from a code cache cannot import.
  supported: { 'dynamic-import': false },
  logLevel: 'warning',
};

// The hook alone, in a file of its own: a process runs on every agent event.
await build({ ...common, entryPoints: [at('dist/cli/hookProcess.js')], outfile: at('dist/bundle/hook.cjs') });
// Every other command line.
await build({ ...common, entryPoints: [at('dist/cli/commandProcess.js')], outfile: at('dist/bundle/commands.cjs') });

/** The script a warm-up process runs: loads the bundle at argv[1] with the cache at argv[2], runs `entry`, writes the cache. */
const warmScript = (entry: string): string => `
  import { renameSync, writeFileSync } from 'node:fs';
  import { loadBundle } from ${JSON.stringify(pathToFileURL(at('dist/cli/bundleLoader.js')).href)};
  const [file, cache, ...argv] = process.argv.slice(1);
  const { exports, script } = loadBundle(file, cache);
  process.exitCode = await exports.${entry};
  const temporary = cache + '.' + process.pid;
  writeFileSync(temporary, script.createCachedData());
  renameSync(temporary, cache);
`;

/**
 * The node arguments and options of a warm-up process of the bundle `name` with the command line
 * `argv`, in the project folder `project`: a plain \`node\` (the flags the binary runs with: a
 * cache is turned away under other V8 flags), whose project is that folder even inside a git work
 * tree, and which sees no store but its own.
 */
const warmUp = (name: 'hook' | 'commands', argv: ReadonlyArray<string>, project: string) => ({
  args: [
    '--input-type=module',
    '-e',
    warmScript(name === 'hook' ? 'runHookProcess(argv)' : 'runCommandProcess(argv)'),
    at(`dist/bundle/${name}.cjs`),
    at(`dist/bundle/${name}.cache`),
    ...argv,
  ],
  options: { cwd: project, env: { PATH: process.env['PATH'] ?? '', CLAUDE_PROJECT_DIR: project } },
});

/** How long a warm-up process may take before the build gives up on it (each takes a fraction of a second). */
const WARM_UP_MS = 60_000;

/** Runs one warm-up process to its end with `input`; its standard output. */
const warmUpRun = (name: 'hook' | 'commands', argv: ReadonlyArray<string>, project: string, input = ''): string => {
  const { args, options } = warmUp(name, argv, project);
  const run = spawnSync(process.execPath, args, {
    ...options,
    input,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    timeout: WARM_UP_MS,
    killSignal: 'SIGKILL',
  });
  if (run.status !== 0 || run.stderr !== '')
    throw new Error(`the ${name} warm-up ${argv.join(' ')} failed (${String(run.status)}): ${run.stderr}`);
  return run.stdout;
};

/**
 * An MCP server's warm-up: `fact-tracker mcp` driven over its standard streams as a host drives
 * it (the handshake, a dispatch's context, its result, the next dispatch's context); the last
 * answer's text.
 */
const warmUpServer = async (project: string): Promise<string> => {
  const { args, options } = warmUp('commands', ['mcp'], project);
  const server = spawn(process.execPath, args, { ...options, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  server.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => server.on('close', resolve));
  // A server that stops answering ends the warm-up (its output ends), not the build's patience.
  const timer = setTimeout(() => server.kill('SIGKILL'), WARM_UP_MS);
  const lines = createInterface({ input: server.stdout })[Symbol.asyncIterator]();
  let id = 0;
  const ask = async (method: string, params: Record<string, unknown>): Promise<string> => {
    id += 1;
    server.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    for (let line = await lines.next(); line.done !== true; line = await lines.next())
      if ((JSON.parse(line.value) as { id?: unknown }).id === id) return line.value;
    throw new Error(`the server's warm-up ended before answering ${method}: ${stderr}`);
  };
  const tool = (name: string, args: Record<string, unknown>): Promise<string> =>
    ask('tools/call', { name, arguments: { sessionId: 'warm-up', ...args } });
  try {
    await ask('initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'fact-tracker-build', version: '1.0.0' },
    });
    server.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    await tool('compile_context', { taskId: '1', taskPrompt: IMPLEMENTER_PROMPT });
    await tool('ingest_result', { taskId: '1', role: 'implementer', output: answerOf(IMPLEMENTER_RESULT) });
    await tool('ingest_result', { taskId: '1', role: 'reviewer', output: answerOf(REVIEWER_RESULT) });
    const last = await tool('compile_context', { taskId: '2', taskPrompt: NEXT_PROMPT });
    server.stdin.end();
    const status = await exited;
    if (status !== 0 || stderr !== '') throw new Error(`the server's warm-up failed (${String(status)}): ${stderr}`);
    return last;
  } finally {
    clearTimeout(timer);
    server.kill('SIGKILL');
  }
};

/**
 * The code caches: V8's compiled code of the functions the binary runs, written beside each
 * bundle for `bundleLoader.ts` to load it with. Warm-up processes load a bundle as the binary
 * does and run what an agent runs most, in a temporary project, each process starting from the
 * cache the one before it wrote, so the cache holds what each of them compiled: for the hook,
 * the events of a short session, and of another one with the grouped layout; for the command
 * lines, an MCP server over the first session, a replay of it, and the events of a third session
 * to a hook given another option. Each warm-up's last answer must carry a section, so the caches
 * hold retrieval's code.
 */
const writeCodeCaches = async (): Promise<void> => {
  const project = mkdtempSync(join(tmpdir(), 'fact-tracker-code-cache-'));
  try {
    let last = '';
    for (const event of warmUpEvents(project)) last = warmUpRun('hook', [], project, JSON.stringify(event));
    if (!last.includes('[Session Context]')) throw new Error(`the hook's warm-up gave no section: ${last}`);
    const served = await warmUpServer(project);
    if (!served.includes('[Session Context]')) throw new Error(`the server's warm-up gave no section: ${served}`);
    const log = join(project, '.fact-tracker', 'sessions', 'warm-up.jsonl');
    const replayed = warmUpRun('commands', ['replay', log], project);
    if (!replayed.includes('[Session Context]')) throw new Error(`the replay's warm-up gave no section: ${replayed}`);
    // A hook given its layout alone runs bare; given any other option (`--max-tokens`, ...), through the command lines' router.
    let grouped = '';
    for (const event of warmUpEvents(project, 'warm-up-grouped'))
      grouped = warmUpRun('hook', ['--layout', 'grouped'], project, JSON.stringify(event));
    if (!grouped.includes('[Session Context]'))
      throw new Error(`the grouped hook's warm-up gave no section: ${grouped}`);
    let routed = '';
    for (const event of warmUpEvents(project, 'warm-up-routed'))
      routed = warmUpRun('commands', ['hook', '--max-tokens', '500'], project, JSON.stringify(event));
    if (!routed.includes('[Session Context]')) throw new Error(`the routed hook's warm-up gave no section: ${routed}`);
  } finally {
    rmSync(project, { recursive: true, force: true });
  }
};

const IMPLEMENTER_PROMPT = 'Task ID: 1\nAdd typed config loading in src/config.ts with zod.';
const NEXT_PROMPT = 'Task ID: 2\nAdd a health check to src/server.ts reading src/config.ts.';
const IMPLEMENTER_RESULT = {
  task_id: '1',
  status: 'completed',
  summary: 'Added typed config loading in src/config.ts; the server reads PORT and DATABASE_URL from it',
  files_changed: ['src/config.ts', 'src/server.ts', 'test/config.test.ts'],
  tests: [{ command: 'npm test -- test/config', passed: true }],
  follow_up_actions: ['Document the settings in the README'],
};
const REVIEWER_RESULT = {
  task_id: '1',
  assessment: 'needs_changes',
  issues: [
    { severity: 'important', file: 'src/config.ts', message: 'JWT_SECRET accepts any length', fix: 'Require 32 bytes' },
  ],
  required_fixes: ['Require a JWT_SECRET of 32 bytes'],
};

/** A subagent's final message carrying `result`. */
const answerOf = (result: Record<string, unknown>): string =>
  `Done.\n\nBEGIN_DISPATCH_RESULT\n${JSON.stringify(result, null, 2)}\nEND_DISPATCH_RESULT`;

/**
 * A session's hook events, as Claude Code sends them for foreground subagents, in the project
 * folder `cwd`: an implementer's task and its review, each dispatched, started, stopped and
 * answered, then the next task's dispatch, which gets a section.
 */
const warmUpEvents = (cwd: string, sessionId = 'warm-up'): ReadonlyArray<Record<string, unknown>> => {
  const session = { session_id: sessionId, cwd };
  const subagent = (
    call: string,
    type: string,
    prompt: string,
    result?: Record<string, unknown>,
  ): ReadonlyArray<Record<string, unknown>> => {
    const input = { description: 'warm-up', prompt, subagent_type: type };
    const dispatch = {
      ...session,
      hook_event_name: 'PreToolUse',
      tool_name: 'Agent',
      tool_use_id: call,
      tool_input: input,
    };
    if (result === undefined) return [dispatch];
    const agent = { agent_id: `agent-${call}`, agent_type: type };
    const answer = answerOf(result);
    return [
      dispatch,
      { ...session, hook_event_name: 'SubagentStart', ...agent },
      {
        ...session,
        hook_event_name: 'SubagentStop',
        stop_hook_active: false,
        ...agent,
        last_assistant_message: answer,
      },
      {
        ...session,
        hook_event_name: 'PostToolUse',
        tool_name: 'Agent',
        tool_use_id: call,
        tool_input: input,
        tool_response: { status: 'completed', agentId: agent.agent_id, content: [{ type: 'text', text: answer }] },
      },
    ];
  };
  return [
    ...subagent('toolu_warm_1', 'implementer', IMPLEMENTER_PROMPT, IMPLEMENTER_RESULT),
    ...subagent(
      'toolu_warm_2',
      'code-reviewer',
      'Task ID: 1\nReview the config loading in src/config.ts.',
      REVIEWER_RESULT,
    ),
    ...subagent('toolu_warm_3', 'implementer', NEXT_PROMPT),
  ];
};

await writeCodeCaches();
