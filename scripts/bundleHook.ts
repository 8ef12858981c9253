/**
 * Writes the hook bundle, `dist/bundle/`, from the compiled `dist/cli/hookProcess.js` (run by
 * `npm run build`, after `tsc`). A hook process is started by the agent on every event and
 * blocks it until it exits; loaded module by module, the hook path reads about two hundred
 * files (zod alone is ninety-five), and loading them is most of a short session's hook time.
 * Bundled, with code split where the hook imports on demand, it reads a handful. The o200k
 * tokenizer stays outside: the bare hook counts tokens by estimate, and the package's own
 * tables are loaded from where npm installed them if ever asked for.
 */
import { build } from 'esbuild';

const at = (path: string): string => new URL(`../${path}`, import.meta.url).pathname;

await build({
  entryPoints: [at('dist/cli/hookProcess.js')],
  outdir: at('dist/bundle'),
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: ['gpt-tokenizer', 'gpt-tokenizer/*'],
  // The CommonJS dependencies bundled in (fp-ts, proper-lockfile) require Node's modules.
  banner: {
    js: "import { createRequire as bundleRequire } from 'node:module'; const require = bundleRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
