/**
 * Writes the bundle the binary runs from, `dist/bundle/`, from the compiled entry points of a
 * bare hook (`dist/cli/hookProcess.js`) and of every other command line
 * (`dist/cli/commandProcess.js`); run by `npm run build`, after `tsc`. A hook process is
 * started by the agent on every event and blocks it until it exits, and an MCP server is
 * started with every agent session: loaded module by module, the hook path reads about two
 * hundred files (zod alone is ninety-five), the server more, and loading them was most of a
 * short session's hook time. Bundled, the hook reads one file, and the other commands a
 * handful (their code split where they import on demand). The o200k tokenizer stays
 * outside: its tables are loaded from where npm installed them when `--tokenizer o200k` asks.
 * So does the PostgreSQL driver `pg`: loaded from node_modules only when a `postgres://` store
 * is used (the command lines import the store on demand), never by a hook on the files.
 */
import { readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
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

// The hook, split only where it imports on demand (the PostgreSQL store, the o200k tokenizer).
// Split with the command lines, whose imports on demand cut the shared code into dozens of
// chunks, a hook process read 35 files, and resolving and linking them was a twentieth of its
// time. Each build writes its own chunks, named by content, into the one folder.
await build({ ...common, entryPoints: [at('dist/cli/hookProcess.js')], outdir: at('dist/bundle'), splitting: true });
// Every other command line, split where it imports on demand.
await build({ ...common, entryPoints: [at('dist/cli/commandProcess.js')], outdir: at('dist/bundle'), splitting: true });
