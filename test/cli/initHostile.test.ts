/**
 * `fact-tracker init` on projects a cloned repository laid out: a `package.json` that is a link
 * to a device or a named pipe, which init must not wait on or read without end, and a file where
 * init expects a folder, which it names in one line instead of failing halfway.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../tempDirs.js';
import { MAIN, runCliHere, runCliUnder } from './runCli.js';

type Json = Record<string, unknown>;

const HOOK = `node ${MAIN} hook`;

/** A named pipe at `path`, which nobody writes: opening it to read waits for a writer. */
const namedPipe = (path: string): string => {
  execFileSync('mkfifo', [path]);
  return path;
};

/**
 * `init` as a process of its own, its memory bounded (a read of `/dev/zero` ends in an abort, not
 * in the machine's memory), its standard input a named pipe it holds open and nobody writes (as a
 * terminal nobody types into: a read of `/dev/stdin` waits for good), killed when it has not
 * ended in 20 s: the runs here end in well under a second.
 */
const initHeld = (project: string, ...args: string[]) => {
  const stdin = namedPipe(join(tempDir('init-stdin-'), 'stdin'));
  return runCliUnder(['init', ...args, '--project', project], {
    setup: `ulimit -v 6000000; exec 0<>'${stdin}'`,
    timeoutMs: 20_000,
  });
};

const init = (project: string, ...args: string[]) => runCliHere(['init', ...args, '--project', project]);

/** Every command of every hook group of the project's Claude Code settings. */
const hookCommands = (project: string): string[] =>
  Object.values(
    (JSON.parse(readFileSync(join(project, '.claude', 'settings.json'), 'utf8')) as Json)['hooks'] as Record<
      string,
      Json[]
    >,
  ).flatMap((groups) =>
    groups.flatMap((group) => (group['hooks'] as Json[]).map((handler) => handler['command'] as string)),
  );

/** What a clone may hold as the `package.json` of a folder: links to devices, a named pipe, a file too large to be a manifest. */
const HOSTILE_MANIFESTS: ReadonlyArray<readonly [string, (folder: string) => void]> = [
  ['a link to /dev/stdin', (folder) => symlinkSync('/dev/stdin', join(folder, 'package.json'))],
  ['a link to /dev/zero', (folder) => symlinkSync('/dev/zero', join(folder, 'package.json'))],
  ['a named pipe', (folder) => namedPipe(join(folder, 'package.json'))],
  ['a link to a named pipe', (folder) => symlinkSync(namedPipe(join(folder, 'pipe')), join(folder, 'package.json'))],
  [
    'a manifest over 1 MiB',
    (folder) =>
      writeFileSync(
        join(folder, 'package.json'),
        JSON.stringify({ name: 'session-fact-tracker', padding: 'x'.repeat(2 * 1024 * 1024) }),
      ),
  ],
];

describe.concurrent('fact-tracker init on a hostile clone', { timeout: 120_000 }, () => {
  it('takes a package.json of node_modules/session-fact-tracker it cannot read safely for no installation, at once', async () => {
    for (const [what, plant] of HOSTILE_MANIFESTS) {
      const project = tempDir('init-hostile-');
      const installed = join(project, 'node_modules', 'session-fact-tracker');
      mkdirSync(join(project, 'node_modules', '.bin'), { recursive: true });
      mkdirSync(installed);
      writeFileSync(join(project, 'node_modules', '.bin', 'fact-tracker'), '#!/bin/sh\n');
      plant(installed);
      const run = await initHeld(project, 'claude');
      expect([what, run.status, run.stderr]).toEqual([what, 0, '']);
      // Not installed: the settings run this installation by its path.
      expect(new Set(hookCommands(project))).toEqual(new Set([HOOK]));
    }
  });

  it("takes a hook whose package's package.json it cannot read safely for the user's own, at once", async () => {
    for (const [what, plant] of HOSTILE_MANIFESTS) {
      const project = tempDir('init-hostile-');
      mkdirSync(join(project, '.claude'));
      mkdirSync(join(project, 'evil'));
      plant(join(project, 'evil'));
      const theirs = 'node evil/dist/cli/main.js hook';
      writeFileSync(
        join(project, '.claude', 'settings.json'),
        JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: theirs }] }] } }),
      );
      const run = await initHeld(project, 'claude');
      expect([what, run.status, run.stderr]).toEqual([what, 0, '']);
      expect(hookCommands(project).filter((command) => command === theirs)).toHaveLength(1);
      expect(hookCommands(project)).toContain(HOOK);
    }
  });

  it('says in one line that a file stands where it expects a folder, writing nothing', async () => {
    for (const host of ['claude', 'codex'] as const) {
      const project = tempDir('init-hostile-');
      const folder = host === 'claude' ? '.claude' : '.codex';
      writeFileSync(join(project, folder), '');
      const run = await init(project, host);
      expect(run).toEqual({
        status: 1,
        stdout: '',
        stderr: `fact-tracker init: ${folder} is not a folder (nothing was written)\n`,
      });
      expect(readdirSync(project)).toEqual([folder]);
    }
    const file = join(tempDir('init-hostile-'), 'file');
    writeFileSync(file, '');
    const inside = await init(join(file, 'project'), 'claude');
    expect([inside.status, inside.stderr]).toEqual([
      1,
      `fact-tracker init: the project ${join(file, 'project')} is not a directory\n`,
    ]);
  });

  it('refuses in one line a settings file nested thousands deep, valid JSON all the same, leaving it as it was', async () => {
    const project = tempDir('init-hostile-');
    mkdirSync(join(project, '.claude'));
    const deep = `{"x": ${'['.repeat(20_000)}${']'.repeat(20_000)}}\n`;
    writeFileSync(join(project, '.claude', 'settings.json'), deep);
    const run = await init(project, 'claude');
    expect(run).toEqual({
      status: 1,
      stdout: '',
      stderr:
        'fact-tracker init: .claude/settings.json: it nests arrays and objects more than 1000 deep, which init does not merge into; nothing was written\n',
    });
    expect(readFileSync(join(project, '.claude', 'settings.json'), 'utf8')).toBe(deep);
    expect(readdirSync(project)).toEqual(['.claude']);
  });

  it('keeps no option value that holds a line break, a control or an invisible character, and prints none', async () => {
    const project = tempDir('init-hostile-');
    mkdirSync(join(project, '.claude'));
    const hook = `npx --no-install fact-tracker hook --max-facts 5 --tokenizer 'o200k\n# Forged\u001b[2J' --reviewer-pattern 'rev\u202eiew'`;
    const hooks = { PreToolUse: [{ matcher: 'Task', hooks: [{ type: 'command', command: hook }] }] };
    writeFileSync(join(project, '.claude', 'settings.json'), JSON.stringify({ hooks }));
    const server = {
      command: 'npx',
      args: ['--no-install', 'fact-tracker', 'mcp', '--max-answer-tokens', '9\u009b2J\u2028x'],
    };
    writeFileSync(join(project, '.mcp.json'), JSON.stringify({ mcpServers: { 'fact-tracker': server } }));
    const run = await init(project, 'claude');
    expect(run.status).toBe(0);
    // Nothing a clone's settings hold drives the terminal or starts a line of init's report.
    for (const output of [run.stdout, run.stderr]) {
      expect(output).not.toMatch(/[\p{Cc}\p{Cf}\u2028\u2029](?<!\n)/u);
      expect(output).not.toMatch(/^# Forged/mu);
    }
    expect(run.stdout).toContain(`The hooks run: ${HOOK} --max-facts 5\nThe MCP server runs: node ${MAIN} mcp\n`);
    expect(run.stderr).toBe(
      [
        'fact-tracker init: warning: the fact-tracker hook commands of .claude/settings.json were given these, which init does not keep: --tokenizer (its value holds a line break, a control or an invisible character), --reviewer-pattern (its value holds a line break, a control or an invisible character)',
        'fact-tracker init: warning: the fact-tracker server of .mcp.json was given this, which init does not keep: --max-answer-tokens (its value holds a line break, a control or an invisible character)',
        '',
      ].join('\n'),
    );
    expect(new Set(hookCommands(project))).toEqual(new Set([`${HOOK} --max-facts 5`]));
  });

  it('names a project whose path holds a line break or a control character quoted, on one line', async () => {
    const project = join(tempDir('init-hostile-'), 'my\nproject\u001b[2J');
    mkdirSync(project);
    const shown = JSON.stringify(project).replace(/\u001b/u, '\\u001b');
    const npx = await init(project, 'claude', '--npx');
    expect([npx.status, npx.stderr]).toEqual([
      0,
      `fact-tracker init: warning: ${shown} has no node_modules/.bin/fact-tracker yet; npx --no-install runs only an installed copy (install the package in the project first)\n`,
    ]);
    const missing = await init(join(project, 'missing'), 'claude');
    expect([missing.status, missing.stderr]).toEqual([
      1,
      `fact-tracker init: the project ${JSON.stringify(join(project, 'missing')).replace(/\u001b/u, '\\u001b')} is not a directory\n`,
    ]);
  });

  it('finds no installed binary where node_modules is a file or the binary a loop of links, and writes', async () => {
    const project = tempDir('init-hostile-');
    writeFileSync(join(project, 'node_modules'), '');
    const npx = await init(project, 'claude', '--npx');
    expect(npx.status).toBe(0);
    expect(npx.stdout).toMatch(/^wrote {6}\.claude\/settings\.json\nwrote {6}\.mcp\.json\n/u);
    expect(npx.stderr).toBe(
      `fact-tracker init: warning: ${project} has no node_modules/.bin/fact-tracker yet; npx --no-install runs only an installed copy (install the package in the project first)\n`,
    );
    const looped = tempDir('init-hostile-');
    mkdirSync(join(looped, 'node_modules', '.bin'), { recursive: true });
    mkdirSync(join(looped, 'node_modules', 'session-fact-tracker'));
    writeFileSync(
      join(looped, 'node_modules', 'session-fact-tracker', 'package.json'),
      '{"name":"session-fact-tracker"}',
    );
    symlinkSync('fact-tracker', join(looped, 'node_modules', '.bin', 'fact-tracker'));
    const run = await init(looped, 'claude');
    expect([run.status, run.stderr]).toEqual([0, '']);
    // npx would find no binary there: the settings run this installation by its path.
    expect(new Set(hookCommands(looped))).toEqual(new Set([HOOK]));
  });
});
