/**
 * The bundle (`scripts/bundle.ts`): `npm run build` writes it, and the binary runs every command
 * line from it: the hook from one CommonJS file, every other command line from another, each with
 * the code cache the build wrote beside it. An installation of the binary and the bundle alone (no
 * compiled module but the binary's loader, no dependency) answers as the full build does, whatever
 * its code caches hold, and so does one without the bundle, where the binary runs the compiled
 * modules.
 */
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { binary, routed } from '../live/hook/host.js';
import { tempDir } from '../tempDirs.js';
import { type CliRun, MAIN, ROOT } from './runCli.js';

type Payload = Record<string, unknown>;

const BUNDLE = join(ROOT, 'dist', 'bundle');
const EXAMPLE = join(ROOT, 'examples', 'web-api-session.jsonl');

const fixture = (name: string, cwd: string): Payload => ({
  ...(JSON.parse(
    readFileSync(new URL(`../live/hook/fixtures/claude-code/${name}.json`, import.meta.url), 'utf8'),
  ) as Payload),
  cwd,
});

const LOADER = join(ROOT, 'dist', 'cli', 'bundleLoader.js');

/** The binary's own modules beside `main.js`: the bundles' loader, and the reader of a bare hook's arguments. */
const BINARY_MODULES = ['bundleLoader.js', 'bareHookArgs.js'];

/** An installation in a new folder: the package manifest, the binary and its own modules, and what `parts` adds; its binary's path. */
const installation = (parts: (dir: string) => void): string => {
  const dir = tempDir('install-');
  cpSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
  mkdirSync(join(dir, 'dist', 'cli'), { recursive: true });
  cpSync(MAIN, join(dir, 'dist', 'cli', 'main.js'));
  for (const name of BINARY_MODULES) cpSync(join(ROOT, 'dist', 'cli', name), join(dir, 'dist', 'cli', name));
  parts(dir);
  return join(dir, 'dist', 'cli', 'main.js');
};

/** The binary and the bundle, with the code caches as `cache` leaves each (the build's, by default). */
const bundleOnly = (cache?: (file: string) => void): string =>
  installation((dir) => {
    cpSync(BUNDLE, join(dir, 'dist', 'bundle'), { recursive: true });
    for (const name of ['hook', 'commands']) cache?.(join(dir, 'dist', 'bundle', `${name}.cache`));
  });

/** The bundle's code: its CommonJS files. */
const bundleFiles = (): string[] => readdirSync(BUNDLE).filter((file) => file.endsWith('.cjs'));

const modulesOnly = (): string =>
  installation((dir) => {
    cpSync(join(ROOT, 'dist'), join(dir, 'dist'), { recursive: true, filter: (source) => source !== BUNDLE });
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  });

/** Runs `main` with `args` from `cwd`. */
const runMain = (main: string, args: ReadonlyArray<string>, cwd = ROOT): Promise<CliRun> =>
  new Promise((resolve) => {
    execFile(
      process.execPath,
      [main, ...args],
      { cwd, env: { PATH: process.env['PATH'] ?? '', NO_COLOR: '1' }, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) =>
        resolve({ status: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr }),
    );
  });

/**
 * Each answer of one installation's hook (of the built hook in this process, without `main`) to
 * a task, then to a second task that is given the first's facts.
 */
const hookAnswers = async (main?: string): Promise<Array<Payload | undefined>> => {
  const cwd = tempDir('hook-');
  const env = { CLAUDE_PROJECT_DIR: cwd };
  const send = main === undefined ? routed(env, cwd) : binary(env, cwd, [], main);
  const out: Array<Payload | undefined> = [];
  for (const name of [
    'pre-tool-use-agent',
    'subagent-start',
    'subagent-stop',
    'post-tool-use-agent',
    'pre-tool-use-task-reviewer',
  ]) {
    const answer = await send(fixture(name, cwd));
    expect(answer.stderr).toBe('');
    out.push(answer.output);
  }
  return out;
};

/**
 * The last of `hookAnswers(main)` alone, in one process of `main`: the task's events before it go
 * through the built hook in this process, and the review's call, given that task's facts, through
 * `main`. For an installation whose hook loads the same code another way (a code cache turned
 * away, the compiled modules): one event shows it, the section the one answer that says more.
 */
const lastHookAnswer = async (main: string): Promise<Payload | undefined> => {
  const cwd = tempDir('hook-');
  const here = routed({ CLAUDE_PROJECT_DIR: cwd }, cwd);
  for (const name of ['pre-tool-use-agent', 'subagent-start', 'subagent-stop', 'post-tool-use-agent'])
    expect((await here(fixture(name, cwd))).stderr).toBe('');
  const answer = await binary({ CLAUDE_PROJECT_DIR: cwd }, cwd, [], main)(fixture('pre-tool-use-task-reviewer', cwd));
  expect(answer.stderr).toBe('');
  return answer.output;
};

/**
 * The full build's hook answers, asked for once of its code in this process (the installations'
 * processes are what the tests are about): the tests compare an installation with them.
 */
const fullAnswers = ((): (() => Promise<Array<Payload | undefined>>) => {
  let answers: Promise<Array<Payload | undefined>> | undefined;
  return () => (answers ??= hookAnswers());
})();

/** The replay the installations are asked for (five facts a prompt), and the full binary's answer, run once. */
const REPLAY = ['replay', EXAMPLE, '--json', '--max-facts', '5'];
const fullReplay = ((): (() => Promise<CliRun>) => {
  let replayed: Promise<CliRun> | undefined;
  return () => (replayed ??= runMain(MAIN, REPLAY));
})();

describe('the bundle', { timeout: 120_000 }, () => {
  it('is written by the build, and the binary alone with it answers as the full build does', async () => {
    expect(readdirSync(BUNDLE).sort()).toEqual(['commands.cache', 'commands.cjs', 'hook.cache', 'hook.cjs']);
    // No compiled module and no dependency beside the binary: what it answers comes from the bundle.
    const bundled = bundleOnly();

    const [full, answers] = await Promise.all([fullAnswers(), hookAnswers(bundled)]);
    const section = JSON.stringify(full[4]);
    expect(section).toContain('[Session Context]');
    expect(section).toContain('src/config.ts modified_by task:1');
    expect(answers).toEqual(full);

    const [expected, actual] = await Promise.all([fullReplay(), runMain(bundled, REPLAY)]);
    expect(expected.status).toBe(0);
    expect(JSON.parse(expected.stdout)).toHaveProperty('prompts');
    expect(actual).toEqual(expected);

    // gpt-tokenizer, required by the bundle when asked for, is not installed here: a clear line, not an internal error.
    const o200k = await runMain(bundled, ['replay', EXAMPLE, '--json', '--tokenizer', 'o200k']);
    expect([o200k.status, o200k.stdout]).toEqual([1, '']);
    expect(o200k.stderr).toMatch(
      /^fact-tracker replay: the o200k tokenizer could not be loaded \(is gpt-tokenizer installed\?\)/u,
    );

    // `init` names the binary of the installation it runs from.
    const project = tempDir('init-');
    expect((await runMain(bundled, ['init', 'claude', '--project', project])).status).toBe(0);
    expect(readFileSync(join(project, '.mcp.json'), 'utf8')).toContain(JSON.stringify(bundled));
  });

  it('missing, the binary runs the compiled modules, with the same answers', async () => {
    const modules = modulesOnly();
    expect(existsSync(join(modules, '..', '..', 'bundle'))).toBe(false);
    // The two installations run side by side: each test waits mostly on its children.
    const [answer, full] = await Promise.all([lastHookAnswer(modules), fullAnswers()]);
    expect(answer).toEqual(full[4]);
    // The o200k tokenizer is outside the bundle: both load it from where npm installed it.
    const replay = ['replay', EXAMPLE, '--json', '--tokenizer', 'o200k', '--max-facts', '3'];
    const [expected, actual] = await Promise.all([runMain(MAIN, replay), runMain(modules, replay)]);
    expect(expected.status).toBe(0);
    expect(actual).toEqual(expected);
  });

  it('loads the PostgreSQL driver only when a store is named by a URL: no code a hook runs on the files requires pg', () => {
    // Each file requires pg only inside the store's module, which it initializes on demand (the
    // installation of the first test, with no dependency at all, answers every hook event and a replay).
    for (const file of bundleFiles()) {
      const code = readFileSync(join(BUNDLE, file), 'utf8');
      expect(code).toMatch(/^[ \t]+\w+ = __toESM\(require\("pg"\)/mu);
      expect(code).not.toMatch(/^\S.*require\("pg"\)/mu);
    }
  });

  it('has code caches that a plain node accepts, and answers the same with missing or foreign ones', async () => {
    for (const name of ['hook', 'commands']) {
      const use = execFileSync(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `import { loadBundle } from ${JSON.stringify(pathToFileURL(LOADER).href)};
           process.stdout.write(loadBundle(process.argv[1], process.argv[2]).cache);`,
          join(BUNDLE, `${name}.cjs`),
          join(BUNDLE, `${name}.cache`),
        ],
        { env: { PATH: process.env['PATH'] ?? '' }, encoding: 'utf8' },
      );
      expect(use).toBe('accepted');
    }
    const otherBundle = tempDir('other-bundle-');
    const foreign = join(otherBundle, 'other.cjs');
    writeFileSync(foreign, 'module.exports = { answer: 42 };\n');
    // The cache of another script, which V8 turns away by its source.
    const anotherCache = execFileSync(
      process.execPath,
      [
        '-e',
        `const vm = require('node:vm'); const s = new vm.Script(require('node:module').wrap(require('node:fs').readFileSync(process.argv[1], 'utf8'))); s.runInThisContext(); process.stdout.write(s.createCachedData());`,
        foreign,
      ],
      { env: { PATH: process.env['PATH'] ?? '' } },
    );
    // Each cache turned away the same way: a hook's call through one, a replay through each.
    const [missing, junk, another] = [
      bundleOnly((file) => rmSync(file)),
      bundleOnly((file) => writeFileSync(file, randomBytes(4096))),
      bundleOnly((file) => writeFileSync(file, anotherCache)),
    ];
    const [full, expected, hook, ...replays] = await Promise.all([
      fullAnswers(),
      fullReplay(),
      lastHookAnswer(junk),
      ...[missing, junk, another].map((main) => runMain(main, REPLAY)),
    ]);
    expect(expected.status).toBe(0);
    expect(expected.stdout).toContain('[Session Context]');
    expect(hook).toEqual(full[4]);
    for (const replayed of replays) expect(replayed).toEqual(expected);
  });

  it('holds no Ajv: the MCP SDK validates JSON Schemas only for elicitation, which the server never asks', () => {
    const withAjv = bundleFiles().filter((file) =>
      /ajvProvider|node_modules\/ajv\//u.test(readFileSync(join(BUNDLE, file), 'utf8')),
    );
    expect(withAjv).toEqual([]);
  });

  it("holds zod's English messages alone, not every language's, which nothing reads", () => {
    const locales = new Set(
      bundleFiles().flatMap((file) =>
        [...readFileSync(join(BUNDLE, file), 'utf8').matchAll(/node_modules\/zod\/v4\/locales\/([\w-]+)\.js/gu)].map(
          ([, name]) => name,
        ),
      ),
    );
    expect([...locales]).toEqual(['en']);
  });

  it('that cannot load is one line saying it is an internal error, never a stack trace; a hook still exits 0', async () => {
    const broken = installation((dir) => {
      mkdirSync(join(dir, 'dist', 'bundle'));
      for (const entry of ['hook.cjs', 'commands.cjs'])
        writeFileSync(join(dir, 'dist', 'bundle', entry), "throw new Error('a broken\\n  installation');\n");
    });
    const line = 'fact-tracker: internal error: a broken installation\n';
    expect(await runMain(broken, ['--version'])).toEqual({ status: 1, stdout: '', stderr: line });
    expect(await runMain(broken, ['hook'])).toEqual({ status: 0, stdout: '', stderr: line });
  });
});
