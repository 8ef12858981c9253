/**
 * Loads a bundle of the binary (`dist/bundle/hook.cjs` or `commands.cjs`, each one CommonJS file:
 * see `scripts/bundle.ts`) with the code cache the build wrote beside it (`hook.cache`,
 * `commands.cache`). A hook process lives for one event, and a command line or a server's start
 * is over in a fraction of a second, so compiling their code is a large share of their time:
 * with V8's code cache, the functions the build's runs ran come back compiled instead of being
 * parsed and compiled again. The ES module loader keeps no such cache on Node 20, hence a script.
 *
 * The cache is only ever read here, from the installation's own folder, which holds the code it
 * stands for: nothing a project, a session or the environment holds is ever run as compiled code.
 * V8 checks a cache against its own version, its flags and the source's length and turns away
 * one that does not match (another Node, a rebuilt bundle); the code is then compiled as usual.
 */
import { readFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Script } from 'node:vm';

/** What became of the code cache: read and used, read and turned away by V8, or not there to read. */
export type CodeCacheUse = 'accepted' | 'rejected' | 'absent';

/** A bundle loaded: its exports, the script (to write a cache of what it compiled), and its cache's fate. */
export interface LoadedBundle<T> {
  readonly exports: T;
  readonly script: Script;
  readonly cache: CodeCacheUse;
}

/** The error of a file that is not there. */
const isMissing = (error: unknown): boolean => (error as { code?: unknown } | null)?.code === 'ENOENT';

/**
 * Loads and runs the top level of the CommonJS bundle at `file`, compiled with the code cache at
 * `cacheFile` when one can be read there; undefined when there is no bundle at `file`.
 */
export const loadBundle = <T>(file: string, cacheFile: string): LoadedBundle<T> | undefined => {
  let source: string;
  try {
    source = readFileSync(file, 'utf8');
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    // No cache, or one that cannot be read: the code is compiled, as without one.
  }
  const script = new Script(Module.wrap(source), {
    filename: file,
    ...(cachedData === undefined ? {} : { cachedData }),
  });
  const module = { exports: {} as T };
  const run = script.runInThisContext() as (
    exports: unknown,
    require: NodeJS.Require,
    module: unknown,
    filename: string,
    dirname: string,
  ) => void;
  run(module.exports, createRequire(file), module, file, dirname(file));
  return {
    exports: module.exports,
    script,
    cache: cachedData === undefined ? 'absent' : script.cachedDataRejected === true ? 'rejected' : 'accepted',
  };
};
