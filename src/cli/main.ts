#!/usr/bin/env node
/**
 * The `fact-tracker` binary: the real process and streams, handed to the command router. A hook
 * runs on every agent event, so `hook` alone (or with its layout, see `bareHook.ts`) skips the
 * router and loads only what a hook needs.
 * Both run from the bundle `npm run build` writes (see `scripts/bundle.ts`): the same compiled
 * code, each loaded from one file with the code cache the build wrote beside it
 * (`bundleLoader.ts`) instead of module by module, in a fraction of the time. A build without
 * the bundle runs the same code from its modules.
 */
import { fileURLToPath } from 'node:url';
import { bareHookArgs } from './bareHookArgs.js';
import { loadBundle } from './bundleLoader.js';

type HookProcess = typeof import('./hookProcess.js');
type CommandProcess = typeof import('./commandProcess.js');

/** The exports of the bundle `name` (`hook` or `commands`), or undefined when the build wrote no bundle. */
const bundled = <T>(name: string): T | undefined =>
  loadBundle<T>(
    fileURLToPath(new URL(`../bundle/${name}.cjs`, import.meta.url)),
    fileURLToPath(new URL(`../bundle/${name}.cache`, import.meta.url)),
  )?.exports;

const argv = process.argv.slice(2);

/**
 * A command line a bare hook may take (`hook`, `hook --layout NAME`, `hook --layout=NAME`): only
 * then is the hook's bundle loaded, which decides (`bareHookOptions`), so a hook given other
 * options loads the router's bundle alone.
 */
const mayBeBareHook = argv[0] === 'hook' && bareHookArgs(argv.slice(1)) !== undefined;

try {
  const hook = mayBeBareHook
    ? (bundled<HookProcess>('hook') ?? (await import('./hookProcess.js'))).runHookProcess(argv.slice(1))
    : undefined;
  process.exitCode =
    hook !== undefined
      ? await hook
      : await (bundled<CommandProcess>('commands') ?? (await import('./commandProcess.js'))).runCommandProcess(argv);
} catch (error) {
  // Only an installation whose code cannot load gets here (the processes catch the rest): one
  // line as for any internal error, written here since the module that words it did not load.
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`fact-tracker: internal error: ${message.replace(/\s+/gu, ' ').trim()}\n`);
  process.exitCode = argv[0] === 'hook' ? 0 : 1;
}
