#!/usr/bin/env node
/**
 * The `fact-tracker` binary: the real process and streams, handed to the command router. A hook
 * runs on every agent event, so `hook` alone skips the router and loads only what a hook needs.
 * Both run from the bundle `npm run build` writes (see `scripts/bundle.ts`): the same compiled
 * code, loaded from a few files instead of module by module, in a fraction of the time; the hook
 * from one file, with the code cache the build wrote beside it (`bundleLoader.ts`). A build
 * without the bundle runs the same code from its modules.
 */
import { fileURLToPath } from 'node:url';
import { loadHookBundle } from './bundleLoader.js';

type CommandProcess = typeof import('./commandProcess.js');

/** The bundled entry point `name` (`commandProcess`), or undefined when the build wrote no bundle. */
const bundled = async <T>(name: string): Promise<T | undefined> => {
  try {
    return (await import(new URL(`../bundle/${name}.js`, import.meta.url).href)) as T;
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code === 'ERR_MODULE_NOT_FOUND') return undefined;
    throw error;
  }
};

/** The bundled hook, or undefined when the build wrote no bundle. */
const bundledHook = (): ReturnType<typeof loadHookBundle> =>
  loadHookBundle(
    fileURLToPath(new URL('../bundle/hook.cjs', import.meta.url)),
    fileURLToPath(new URL('../bundle/hook.cache', import.meta.url)),
  );

const argv = process.argv.slice(2);
try {
  process.exitCode =
    argv.length === 1 && argv[0] === 'hook'
      ? await (bundledHook()?.hook ?? (await import('./hookProcess.js'))).runHookProcess()
      : await (
          (await bundled<CommandProcess>('commandProcess')) ?? (await import('./commandProcess.js'))
        ).runCommandProcess(argv);
} catch (error) {
  // Only an installation whose code cannot load gets here (the processes catch the rest): one
  // line as for any internal error, written here since the module that words it did not load.
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`fact-tracker: internal error: ${message.replace(/\s+/gu, ' ').trim()}\n`);
  process.exitCode = argv[0] === 'hook' ? 0 : 1;
}
