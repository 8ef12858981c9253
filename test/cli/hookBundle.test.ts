/**
 * The hook bundle (`scripts/bundleHook.ts`): `npm run build` writes it, the binary runs a bare
 * `hook` from it, and it holds everything a hook needs. An installation of the binary and the
 * bundle alone, and one without the bundle (the binary then runs the compiled modules), answer
 * a recorded Claude Code sequence exactly as the full build does.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { binary } from '../hook/host.js';
import { tempDir } from '../tempDirs.js';
import { MAIN, ROOT } from './runCli.js';

type Payload = Record<string, unknown>;

const BUNDLE = join(ROOT, 'dist', 'bundle');

const fixture = (name: string, cwd: string): Payload => ({
  ...(JSON.parse(
    readFileSync(new URL(`../hook/fixtures/claude-code/${name}.json`, import.meta.url), 'utf8'),
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

/** Each answer of one installation to a task, then a second task that is given the first's facts. */
const answers = async (main: string): Promise<Array<Payload | undefined>> => {
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

describe('the hook bundle', { timeout: 120_000 }, () => {
  it('is written by the build, and the binary alone with it answers as the full build does', async () => {
    expect(existsSync(join(BUNDLE, 'hookProcess.js'))).toBe(true);
    const full = await answers(MAIN);
    const section = JSON.stringify(full[4]);
    expect(section).toContain('[Session Context]');
    expect(section).toContain('src/config.ts modified_by task:1');
    // No compiled module and no dependency beside it: what it answers comes from the bundle.
    const bundled = installation((dir) => cpSync(BUNDLE, join(dir, 'dist', 'bundle'), { recursive: true }));
    expect(await answers(bundled)).toEqual(full);
  });

  it('missing, the binary runs the hook from the compiled modules, with the same answers', async () => {
    const full = await answers(MAIN);
    const modules = installation((dir) => {
      cpSync(join(ROOT, 'dist'), join(dir, 'dist'), {
        recursive: true,
        filter: (source) => source !== BUNDLE,
      });
      symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
    });
    expect(existsSync(join(modules, '..', '..', 'bundle'))).toBe(false);
    expect(await answers(modules)).toEqual(full);
  });
});
