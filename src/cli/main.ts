#!/usr/bin/env node
/**
 * The `fact-tracker` binary: the real process and streams, handed to the command router. A hook
 * runs on every agent event, so `hook` alone skips the router and runs from the hook bundle,
 * which `npm run build` writes (see `scripts/bundleHook.ts`): the same code, loaded in a
 * fraction of the time. A build without the bundle runs the same code from its modules.
 */
type HookProcess = typeof import('./hookProcess.js');

const HOOK_BUNDLE = new URL('../bundle/hookProcess.js', import.meta.url).href;

const isModuleNotFound = (error: unknown): boolean =>
  (error as { code?: unknown } | null)?.code === 'ERR_MODULE_NOT_FOUND';

const runHook = async (): Promise<number> => {
  const bundled = await (import(HOOK_BUNDLE) as Promise<HookProcess>).catch((error: unknown) => {
    if (isModuleNotFound(error)) return undefined;
    throw error;
  });
  return (bundled ?? (await import('./hookProcess.js'))).runHookProcess();
};

const argv = process.argv.slice(2);
process.exitCode =
  argv.length === 1 && argv[0] === 'hook'
    ? await runHook()
    : await (await import('./run.js')).run(argv, (await import('./nodeIo.js')).createNodeIo());
