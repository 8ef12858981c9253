/**
 * Node's modules for the context shell, loaded on first use. The package's main entry exports
 * the shell, and a static `node:` import would stop that entry from loading in a browser; a
 * dynamic import runs only when a shell function does.
 */

/** The Node modules the shell uses. */
export interface NodeModules {
  readonly fs: typeof import('node:fs/promises');
  readonly path: typeof import('node:path');
  readonly childProcess: typeof import('node:child_process');
  readonly lockfile: typeof import('proper-lockfile');
}

let loading: Promise<NodeModules> | undefined;

/** The Node modules, imported once. */
export const nodeModules = (): Promise<NodeModules> =>
  (loading ??= Promise.all([
    import('node:fs/promises'),
    import('node:path'),
    import('node:child_process'),
    import('proper-lockfile'),
    // Its `module.exports`, as a default import gives it: a bundler's import of a CommonJS module
    // (see scripts/bundle.ts) has no named exports, only Node's own has.
  ]).then(([fs, path, childProcess, lockfile]) => ({ fs, path, childProcess, lockfile: lockfile.default })));
