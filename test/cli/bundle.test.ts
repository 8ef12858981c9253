/**
 * The bundle (`scripts/bundle.ts`): `npm run build` writes it, and the binary runs every command
 * line from it. An installation of the binary and the bundle alone (no compiled module, no
 * dependency) answers as the full build does, and so does one without the bundle, where the
 * binary runs the compiled modules.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { binary } from '../live/hook/host.js';
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

/** An installation in a new folder: the package manifest, the binary, and what `parts` adds; its binary's path. */
const installation = (parts: (dir: string) => void): string => {
  const dir = tempDir('install-');
  cpSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
  mkdirSync(join(dir, 'dist', 'cli'), { recursive: true });
  cpSync(MAIN, join(dir, 'dist', 'cli', 'main.js'));
  parts(dir);
  return join(dir, 'dist', 'cli', 'main.js');
};

const bundleOnly = (): string =>
  installation((dir) => cpSync(BUNDLE, join(dir, 'dist', 'bundle'), { recursive: true }));

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

/** Each answer of one installation's hook to a task, then to a second task that is given the first's facts. */
const hookAnswers = async (main: string): Promise<Array<Payload | undefined>> => {
  const cwd = tempDir('hook-');
  const send = binary({ CLAUDE_PROJECT_DIR: cwd }, cwd, [], main);
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

/** The full build's hook answers, asked for once: both tests compare an installation with them. */
const fullAnswers = ((): (() => Promise<Array<Payload | undefined>>) => {
  let answers: Promise<Array<Payload | undefined>> | undefined;
  return () => (answers ??= hookAnswers(MAIN));
})();

describe('the bundle', { timeout: 120_000 }, () => {
  it('is written by the build, and the binary alone with it answers as the full build does', async () => {
    expect(existsSync(join(BUNDLE, 'hookProcess.js'))).toBe(true);
    expect(existsSync(join(BUNDLE, 'commandProcess.js'))).toBe(true);
    // No compiled module and no dependency beside the binary: what it answers comes from the bundle.
    const bundled = bundleOnly();

    const [full, answers] = await Promise.all([fullAnswers(), hookAnswers(bundled)]);
    const section = JSON.stringify(full[4]);
    expect(section).toContain('[Session Context]');
    expect(section).toContain('src/config.ts modified_by task:1');
    expect(answers).toEqual(full);

    const replay = ['replay', EXAMPLE, '--json', '--max-facts', '5'];
    const [expected, actual] = await Promise.all([runMain(MAIN, replay), runMain(bundled, replay)]);
    expect(expected.status).toBe(0);
    expect(JSON.parse(expected.stdout)).toHaveProperty('prompts');
    expect(actual).toEqual(expected);

    // `init` names the binary of the installation it runs from.
    const project = tempDir('init-');
    expect((await runMain(bundled, ['init', 'claude', '--project', project])).status).toBe(0);
    expect(readFileSync(join(project, '.mcp.json'), 'utf8')).toContain(JSON.stringify(bundled));
  });

  it('missing, the binary runs the compiled modules, with the same answers', async () => {
    const modules = modulesOnly();
    expect(existsSync(join(modules, '..', '..', 'bundle'))).toBe(false);
    // The two installations run side by side: each test waits mostly on its children.
    const [answers, full] = await Promise.all([hookAnswers(modules), fullAnswers()]);
    expect(answers).toEqual(full);
    // The o200k tokenizer is outside the bundle: both load it from where npm installed it.
    const replay = ['replay', EXAMPLE, '--json', '--tokenizer', 'o200k', '--max-facts', '3'];
    const [expected, actual] = await Promise.all([runMain(MAIN, replay), runMain(modules, replay)]);
    expect(expected.status).toBe(0);
    expect(actual).toEqual(expected);
  });

  it('loads the PostgreSQL driver only through a dynamic import: no module a hook loads on the files imports pg', () => {
    const importsPg = (file: string): boolean =>
      /(?:from|import)\s*\(?\s*["']pg["']/u.test(readFileSync(join(BUNDLE, file), 'utf8'));
    /** The chunks `file` loads before it runs: its static imports, and theirs. */
    const staticClosure = (file: string, seen = new Set<string>()): Set<string> => {
      if (seen.has(file)) return seen;
      seen.add(file);
      const text = readFileSync(join(BUNDLE, file), 'utf8');
      for (const [, next] of text.matchAll(/^import\s*(?:[^"';]*?\bfrom\s*)?["']\.\/([^"']+)["']/gmu))
        staticClosure(next!, seen);
      return seen;
    };
    const hook = [...staticClosure('hookProcess.js')];
    expect(hook.length).toBeGreaterThan(1);
    expect(hook.filter(importsPg)).toEqual([]);
    // The driver is in the bundle's reach all the same, for a store named by a URL.
    expect(readdirSync(BUNDLE).filter(importsPg).length).toBeGreaterThan(0);
  });

  it('holds no Ajv: the MCP SDK validates JSON Schemas only for elicitation, which the server never asks', () => {
    const withAjv = readdirSync(BUNDLE).filter((file) =>
      /ajvProvider|node_modules\/ajv\//u.test(readFileSync(join(BUNDLE, file), 'utf8')),
    );
    expect(withAjv).toEqual([]);
  });

  it("holds zod's English messages alone, not every language's, which nothing reads", () => {
    const locales = new Set(
      readdirSync(BUNDLE).flatMap((file) =>
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
      for (const entry of ['hookProcess.js', 'commandProcess.js'])
        writeFileSync(join(dir, 'dist', 'bundle', entry), "throw new Error('a broken\\n  installation');\n");
    });
    const line = 'fact-tracker: internal error: a broken installation\n';
    expect(await runMain(broken, ['--version'])).toEqual({ status: 1, stdout: '', stderr: line });
    expect(await runMain(broken, ['hook'])).toEqual({ status: 0, stdout: '', stderr: line });
  });
});
