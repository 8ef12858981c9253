/**
 * Writes the bundle the binary runs from, `dist/bundle/`, from the compiled entry points of a
 * bare hook (`dist/cli/hookProcess.js`) and of every other command line
 * (`dist/cli/commandProcess.js`); run by `npm run build`, after `tsc`. A hook process is
 * started by the agent on every event and blocks it until it exits, and an MCP server is
 * started with every agent session: loaded module by module, the hook path reads about two
 * hundred files (zod alone is ninety-five), the server more, and loading them was most of a
 * short session's hook time. Bundled, the hook reads one file and the code cache written for it
 * (see `writeHookCache` below), and the other commands a handful of files (their code split
 * where they import on demand). The o200k tokenizer stays
 * outside: its tables are loaded from where npm installed them when `--tokenizer o200k` asks.
 * So does the PostgreSQL driver `pg`: loaded from node_modules only when a `postgres://` store
 * is used (the command lines import the store on demand), never by a hook on the files.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

// Chunks are named by content: a bundle written before would leave its chunks beside the new ones.
// And a code cache is never left beside a bundle other than the one it was made from (V8 checks
// a cache against its source's length only).
rmSync(at('dist/bundle'), { recursive: true, force: true });

/** What both builds share. */
const common: BuildOptions = {
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: ['gpt-tokenizer', 'gpt-tokenizer/*', 'pg'],
  alias: {
    stopword: moduleBuild('stopword'),
    // The MCP SDK's Node shims without Ajv, which only elicitation uses (see live/mcp/shims.ts).
    '@modelcontextprotocol/server/_shims': at('dist/live/mcp/shims.js'),
  },
  // The CommonJS dependencies bundled in (fp-ts, proper-lockfile and its own) require Node's modules.
  banner: {
    js: "import { createRequire as bundleRequire } from 'node:module'; const require = bundleRequire(import.meta.url);",
  },
  plugins: [englishZodLocales],
  logLevel: 'warning',
};

// The hook, as one CommonJS file: a script, which V8 can compile from a code cache (see
// `src/cli/bundleLoader.ts`). What it imports on demand (the PostgreSQL store, the o200k
// tokenizer) is in the file, and runs, `pg` and the tokenizer's tables required with it, only
// when asked for. Split as ES modules with the command lines, whose imports on demand cut the
// shared code into dozens of chunks, a hook process read 35 files, and resolving and linking
// them was a twentieth of its time.
await build({
  ...common,
  format: 'cjs',
  entryPoints: [at('dist/cli/hookProcess.js')],
  outfile: at('dist/bundle/hook.cjs'),
  // The modules that find the package's manifest from their own place read it from the bundle's.
  define: { 'import.meta.url': '__bundleUrl' },
  banner: { js: "var __bundleUrl = require('node:url').pathToFileURL(__filename).href;" },
});
// Every other command line, split where it imports on demand.
await build({ ...common, entryPoints: [at('dist/cli/commandProcess.js')], outdir: at('dist/bundle'), splitting: true });

/**
 * The hook's code cache: V8's compiled code of the functions a hook runs, written beside the
 * bundle for `bundleLoader.ts` to load it with. A plain `node` process (the flags a hook runs
 * with: a cache is turned away under other V8 flags) loads the bundle as a hook does and runs the
 * events of a session in a temporary project: a prompt with no fact yet, the implementer's
 * result, the reviewer's, then a prompt that gets a section, each process starting from the
 * cache the one before it wrote, so the cache holds what each of them compiled.
 */
const writeHookCache = (): void => {
  const project = mkdtempSync(join(tmpdir(), 'fact-tracker-hook-cache-'));
  try {
    const loader = pathToFileURL(at('dist/cli/bundleLoader.js')).href;
    const warm = `
      import { renameSync, writeFileSync } from 'node:fs';
      import { loadHookBundle } from ${JSON.stringify(loader)};
      const [file, cache] = process.argv.slice(1);
      const { hook, script } = loadHookBundle(file, cache);
      process.exitCode = await hook.runHookProcess();
      const temporary = cache + '.' + process.pid;
      writeFileSync(temporary, script.createCachedData());
      renameSync(temporary, cache);
    `;
    let last = '';
    for (const event of warmUpEvents(project)) {
      const run = spawnSync(
        process.execPath,
        ['--input-type=module', '-e', warm, at('dist/bundle/hook.cjs'), at('dist/bundle/hook.cache')],
        {
          cwd: project,
          input: JSON.stringify(event),
          encoding: 'utf8',
          // The project is the temporary folder, even inside a git work tree; no store but its own.
          env: { PATH: process.env['PATH'] ?? '', CLAUDE_PROJECT_DIR: project },
        },
      );
      if (run.status !== 0 || run.stderr !== '')
        throw new Error(`the hook's warm-up failed (${String(run.status)}): ${run.stderr}`);
      last = run.stdout;
    }
    // The last dispatch is given the facts of the first task: the cache holds retrieval's code too.
    if (!last.includes('[Session Context]')) throw new Error(`the hook's warm-up gave no section: ${last}`);
  } finally {
    rmSync(project, { recursive: true, force: true });
  }
};

/**
 * A session's hook events, as Claude Code sends them for foreground subagents, in the project
 * folder `cwd`: an implementer's task and its review, each dispatched, started, stopped and
 * answered, then the next task's dispatch, which gets a section.
 */
const warmUpEvents = (cwd: string): ReadonlyArray<Record<string, unknown>> => {
  const session = { session_id: 'warm-up', cwd };
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
    const answer = `Done.\n\nBEGIN_DISPATCH_RESULT\n${JSON.stringify(result, null, 2)}\nEND_DISPATCH_RESULT`;
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
    ...subagent('toolu_warm_1', 'implementer', 'Task ID: 1\nAdd typed config loading in src/config.ts with zod.', {
      task_id: '1',
      status: 'completed',
      summary: 'Added typed config loading in src/config.ts; the server reads PORT and DATABASE_URL from it',
      files_changed: ['src/config.ts', 'src/server.ts', 'test/config.test.ts'],
      tests: [{ command: 'npm test -- test/config', passed: true }],
      follow_up_actions: ['Document the settings in the README'],
    }),
    ...subagent('toolu_warm_2', 'code-reviewer', 'Task ID: 1\nReview the config loading in src/config.ts.', {
      task_id: '1',
      assessment: 'needs_changes',
      issues: [
        {
          severity: 'important',
          file: 'src/config.ts',
          message: 'JWT_SECRET accepts any length',
          fix: 'Require 32 bytes',
        },
      ],
      required_fixes: ['Require a JWT_SECRET of 32 bytes'],
    }),
    ...subagent(
      'toolu_warm_3',
      'implementer',
      'Task ID: 2\nAdd a health check to src/server.ts reading src/config.ts.',
    ),
  ];
};

writeHookCache();
