/**
 * `fact-tracker init claude|codex` on real projects: the settings it writes, merged into the
 * files already there, and then used as the agent uses them: each hook event runs the command
 * exactly as written into the settings, through `sh -c`, with no registry anywhere.
 */
import { execFile, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { replayHistory } from '../../src/index.js';
import { claudeCode, implementerAnswer, inProcess, type Send } from '../live/hook/host.js';
import { tempDir } from '../tempDirs.js';
import { MAIN, ROOT, runCli, runCliHere } from './runCli.js';

type Json = Record<string, unknown>;

const read = (path: string): string => readFileSync(path, 'utf8');
const readJson = (path: string): Json => JSON.parse(read(path)) as Json;

/**
 * `fact-tracker init ... --project PROJECT` through the built router in this process: the many
 * cases here run the same compiled code the binary runs, without a process start each. The
 * binary itself runs where the process matters (`initBinary`).
 */
const init = (project: string, ...args: string[]) => runCliHere(['init', ...args, '--project', project]);
/** The same as the built binary, in a process of its own. */
const initBinary = (project: string, ...args: string[]) => runCli(['init', ...args, '--project', project]);

const HOOK = `node ${MAIN} hook`;

/** The Claude Code settings of `project` run the copy installed there, through `npx --no-install`. */
const expectPortable = (project: string): void => {
  expect(new Set(commandsOf(readJson(join(project, '.claude', 'settings.json'))))).toEqual(
    new Set(['npx --no-install fact-tracker hook']),
  );
  expect((readJson(join(project, '.mcp.json'))['mcpServers'] as Json)['fact-tracker']).toEqual({
    type: 'stdio',
    command: 'npx',
    args: ['--no-install', 'fact-tracker', 'mcp'],
  });
};

/** Installs this checkout into `project` as npm would: the package under node_modules, and its binary in node_modules/.bin. */
const installInto = (project: string): void => {
  mkdirSync(join(project, 'node_modules', '.bin'), { recursive: true });
  symlinkSync(ROOT, join(project, 'node_modules', 'session-fact-tracker'));
  const bin = join(project, 'node_modules', '.bin', 'fact-tracker');
  writeFileSync(
    bin,
    `#!/bin/sh\nexec node ${join(project, 'node_modules', 'session-fact-tracker', 'dist', 'cli', 'main.js')} "$@"\n`,
  );
  chmodSync(bin, 0o755);
};

/** Every command of every hook group in a settings document. */
const commandsOf = (settings: Json): string[] =>
  Object.values(settings['hooks'] as Record<string, Json[]>).flatMap((groups) =>
    groups.flatMap((group) => (group['hooks'] as Json[]).map((handler) => handler['command'] as string)),
  );

/**
 * Runs init for `host` on a new project holding `text` in `file`, and expects it refused in the
 * one line `reason` gives, the file left as it was. The project, to check further.
 */
const expectRefused = async (
  host: 'claude' | 'codex',
  file: string,
  text: string,
  reason: string,
  ...args: string[]
): Promise<string> => {
  const project = tempDir('init-');
  mkdirSync(join(project, '.codex'));
  writeFileSync(join(project, file), text);
  const run = await init(project, host, ...args);
  expect([run.status, run.stderr]).toEqual([1, `fact-tracker init: ${file}: ${reason}; nothing was written\n`]);
  expect(read(join(project, file))).toBe(text);
  return project;
};

// Concurrent: each test writes into its own project, and waits mostly on the processes it runs.
describe.concurrent('fact-tracker init', { timeout: 120_000 }, () => {
  it('claude: writes the hooks and the MCP server into a fresh project, and a second run changes nothing', async () => {
    const project = tempDir('init-');
    const first = await init(project, 'claude');
    expect(first.status).toBe(0);
    expect(first.stdout).toMatch(/^wrote {6}\.claude\/settings\.json\nwrote {6}\.mcp\.json\n/u);
    expect(first.stdout).toMatch(/hold this machine's path to fact-tracker: keep them out of git/u);
    const settings = readJson(join(project, '.claude', 'settings.json'));
    expect(Object.keys(settings['hooks'] as Json)).toEqual([
      'PreToolUse',
      'PostToolUse',
      'PostToolUseFailure',
      'SubagentStart',
      'SubagentStop',
    ]);
    expect((settings['hooks'] as Record<string, Json[]>)['PreToolUse']).toEqual([
      { matcher: 'Agent|Task', hooks: [{ type: 'command', command: HOOK, timeout: 60 }] },
    ]);
    expect(new Set(commandsOf(settings))).toEqual(new Set([HOOK]));
    expect(readJson(join(project, '.mcp.json'))).toEqual({
      mcpServers: { 'fact-tracker': { type: 'stdio', command: 'node', args: [MAIN, 'mcp'] } },
    });
    const before = [read(join(project, '.claude', 'settings.json')), read(join(project, '.mcp.json'))];
    const second = await init(project, 'claude');
    expect(second.status).toBe(0);
    expect(second.stdout).toMatch(/^unchanged {2}\.claude\/settings\.json\nunchanged {2}\.mcp\.json\n/u);
    expect([read(join(project, '.claude', 'settings.json')), read(join(project, '.mcp.json'))]).toEqual(before);
  });

  it("claude: keeps the user's settings, hooks and servers, and replaces older fact-tracker entries", async () => {
    const project = tempDir('init-');
    mkdirSync(join(project, '.claude'));
    const mine = {
      permissions: { allow: ['Bash(npm test)'] },
      hooks: {
        PreToolUse: [
          { matcher: 'Bash', hooks: [{ type: 'command', command: 'echo checked' }] },
          // What the README used to say: fetched a package by name outside an installation.
          { matcher: 'Agent|Task|spawn_agent', hooks: [{ type: 'command', command: 'npx fact-tracker hook' }] },
        ],
        SubagentStart: [
          {
            hooks: [
              { type: 'command', command: 'npx fact-tracker hook' },
              { type: 'command', command: 'notify-send started' },
            ],
          },
        ],
        Stop: [{ hooks: [{ type: 'command', command: 'echo stop' }] }],
      },
    };
    writeFileSync(join(project, '.claude', 'settings.json'), JSON.stringify(mine));
    writeFileSync(
      join(project, '.mcp.json'),
      JSON.stringify({
        mcpServers: {
          other: { command: 'other-server' },
          'fact-tracker': { type: 'stdio', command: 'npx', args: ['fact-tracker', 'mcp'], env: { DEBUG: '1' } },
        },
      }),
    );
    expect((await init(project, 'claude')).status).toBe(0);
    const settings = readJson(join(project, '.claude', 'settings.json'));
    const hooks = settings['hooks'] as Record<string, Json[]>;
    expect(settings['permissions']).toEqual(mine.permissions);
    expect(hooks['PreToolUse']![0]).toEqual(mine.hooks.PreToolUse[0]);
    expect(hooks['SubagentStart']![0]).toEqual({ hooks: [{ type: 'command', command: 'notify-send started' }] });
    expect(hooks['Stop']).toEqual(mine.hooks.Stop);
    expect(commandsOf(settings).filter((command) => /fact-tracker/u.test(command))).toEqual([]);
    expect(commandsOf(settings).filter((command) => command === HOOK)).toHaveLength(5);
    expect(readJson(join(project, '.mcp.json'))).toEqual({
      mcpServers: {
        other: { command: 'other-server' },
        'fact-tracker': { type: 'stdio', command: 'node', args: [MAIN, 'mcp'], env: { DEBUG: '1' } },
      },
    });
    const again = read(join(project, '.claude', 'settings.json'));
    expect((await init(project, 'claude')).stdout).toMatch(/^unchanged/u);
    expect(read(join(project, '.claude', 'settings.json'))).toBe(again);
  });

  it("keeps the user's own Node hook named by a path relative to the project or under $CLAUDE_PROJECT_DIR", async () => {
    const project = tempDir('init-');
    mkdirSync(join(project, '.claude'));
    mkdirSync(join(project, 'tools', 'mytool', 'dist', 'cli'), { recursive: true });
    writeFileSync(join(project, 'tools', 'mytool', 'package.json'), '{"name":"mytool"}');
    writeFileSync(join(project, 'tools', 'mytool', 'dist', 'cli', 'main.js'), 'console.log("{}")');
    const mine = [
      'node "$CLAUDE_PROJECT_DIR/tools/mytool/dist/cli/main.js" hook',
      'node ${CLAUDE_PROJECT_DIR}/tools/mytool/dist/cli/main.js hook',
      'node tools/mytool/dist/cli/main.js hook',
      // Not there at all: nothing says it is fact-tracker's, so it is the user's.
      'node tools/gone/dist/cli/main.js hook',
    ];
    const groups = mine.map((command) => ({ matcher: 'Bash', hooks: [{ type: 'command', command }] }));
    writeFileSync(join(project, '.claude', 'settings.json'), JSON.stringify({ hooks: { PreToolUse: groups } }));
    // Run from elsewhere (the repository root): paths are the project's, not the working directory's.
    expect((await init(project, 'claude')).status).toBe(0);
    const hooks = readJson(join(project, '.claude', 'settings.json'))['hooks'] as Record<string, Json[]>;
    expect(hooks['PreToolUse']!.slice(0, mine.length)).toEqual(groups);
    expect(commandsOf({ hooks }).filter((command) => command === HOOK)).toHaveLength(5);
  });

  it('--layout grouped gives the hook command and the server the option; --layout lines takes it away, leaving one entry each', async () => {
    const project = tempDir('init-layout-');
    const settings = join(project, '.claude', 'settings.json');
    expect((await init(project, 'claude', '--layout', 'grouped')).status).toBe(0);
    expect(commandsOf(readJson(settings))).toEqual(Array.from({ length: 5 }, () => `${HOOK} --layout grouped`));
    const server = () => (readJson(join(project, '.mcp.json'))['mcpServers'] as Json)['fact-tracker'];
    expect(server()).toEqual({ type: 'stdio', command: 'node', args: [MAIN, 'mcp', '--layout', 'grouped'] });
    expect((await init(project, 'claude', '--layout', 'grouped')).stdout).toMatch(/^unchanged/u);
    // lines is the default: no option, so the hook keeps its bare, fast start.
    expect((await init(project, 'claude', '--layout', 'lines')).status).toBe(0);
    expect(commandsOf(readJson(settings))).toEqual(Array.from({ length: 5 }, () => HOOK));
    expect(server()).toEqual({ type: 'stdio', command: 'node', args: [MAIN, 'mcp'] });
    const wrong = await init(project, 'claude', '--layout', 'wide');
    expect([wrong.status, wrong.stderr]).toEqual([1, expect.stringMatching(/--layout must be lines or grouped/u)]);
  });

  it('refuses a malformed settings file with a clear error, and writes nothing at all', async () => {
    const project = tempDir('init-');
    mkdirSync(join(project, '.claude'));
    const broken = '{"hooks": {"PreToolUse": [ ';
    writeFileSync(join(project, '.claude', 'settings.json'), broken);
    const run = await init(project, 'claude');
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(
      /^fact-tracker init: \.claude\/settings\.json: it is not valid JSON \(.*\); nothing was written\n$/u,
    );
    expect(read(join(project, '.claude', 'settings.json'))).toBe(broken);
    expect(readdirSync(project)).toEqual(['.claude']);
    writeFileSync(join(project, '.claude', 'settings.json'), '{"hooks": {"PreToolUse": {"matcher": "Bash"}}}');
    const shape = await init(project, 'claude');
    expect(shape.stderr).toMatch(/"hooks\.PreToolUse" is an object, not an array; nothing was written/u);
  });

  it('refuses an empty settings file with a clear line, and writes nothing at all', async () => {
    const project = tempDir('init-');
    mkdirSync(join(project, '.claude'));
    for (const empty of ['', '  \n']) {
      writeFileSync(join(project, '.claude', 'settings.json'), empty);
      const run = await init(project, 'claude');
      expect(run.status).toBe(1);
      expect(run.stderr).toBe(
        'fact-tracker init: .claude/settings.json: it is empty, which is not a JSON document: write {} into it (or delete it) and run init again; nothing was written\n',
      );
      expect(read(join(project, '.claude', 'settings.json'))).toBe(empty);
      expect(readdirSync(project)).toEqual(['.claude']);
    }
  });

  it('writes into an empty config.toml, a TOML document with no table, as init --help says only an empty JSON file stops it', async () => {
    const project = tempDir('init-');
    mkdirSync(join(project, '.codex'));
    writeFileSync(join(project, '.codex', 'config.toml'), '');
    expect((await initBinary(project, 'codex')).status).toBe(0);
    expect(parseToml(read(join(project, '.codex', 'config.toml')))).toHaveProperty(['mcp_servers', 'fact-tracker']);
    const help = (await runCli(['init', '--help'])).stdout.replace(/\s+/gu, ' ');
    expect(help).toContain('A JSON file that is empty, a file not valid JSON or TOML, or a symbolic link stops');
  });

  it('refuses an empty --project (an unset variable) in one line, and writes nothing into the working directory', async () => {
    // Invisible characters only (a zero-width space, a word joiner) name no folder either.
    for (const project of ['', ' ', '\u200b\u2060', ' \u200d ']) {
      const cwd = tempDir('init-');
      const run = await runCliHere(['init', 'claude', '--project', project], undefined, { cwd });
      expect(run).toEqual({
        status: 1,
        stdout: '',
        stderr: 'fact-tracker init: --project needs a folder (see fact-tracker init --help)\n',
      });
      expect(readdirSync(cwd)).toEqual([]);
    }
  });

  it('refuses a read-only settings file in one line before writing any file, leaving it as it was', async () => {
    const project = tempDir('init-');
    const servers = join(project, '.mcp.json');
    writeFileSync(servers, '{"mcpServers":{}}');
    // No write bit at all: read-only even for root, whom permissions let write anything.
    chmodSync(servers, 0o444);
    const run = await init(project, 'claude');
    expect(run.status).toBe(1);
    expect(run.stderr).toBe('fact-tracker init: cannot write .mcp.json: it is read-only (nothing was written)\n');
    expect(read(servers)).toBe('{"mcpServers":{}}');
    // The file before it in the plan is not written either: no half install.
    expect(existsSync(join(project, '.claude'))).toBe(false);
  });

  it('refuses a named pipe as the hooks file in one line, without waiting on it', async () => {
    const project = tempDir('init-');
    mkdirSync(join(project, '.claude'));
    await new Promise((done, fail) =>
      execFile('mkfifo', [join(project, '.claude', 'settings.json')], (error) => (error ? fail(error) : done(null))),
    );
    const run = await init(project, 'claude');
    expect(run.status).toBe(1);
    expect(run.stderr).toBe('fact-tracker init: .claude/settings.json is not a regular file (nothing was written)\n');
    expect(existsSync(join(project, '.mcp.json'))).toBe(false);
  });

  it('refuses a settings file that is not UTF-8 in one line, leaving its bytes as they were', async () => {
    const project = tempDir('init-');
    mkdirSync(join(project, '.codex'));
    // A Latin-1 é: read as UTF-8 it would come back as U+FFFD.
    const latin1 = Buffer.from('# r\xe9sum\xe9 of our servers\nmodel = "m"\n', 'latin1');
    writeFileSync(join(project, '.codex', 'config.toml'), latin1);
    const run = await init(project, 'codex');
    expect(run.status).toBe(1);
    expect(run.stderr).toBe('fact-tracker init: .codex/config.toml is not valid UTF-8 (nothing was written)\n');
    expect(readFileSync(join(project, '.codex', 'config.toml')).equals(latin1)).toBe(true);
    expect(existsSync(join(project, '.codex', 'hooks.json'))).toBe(false);
  });

  it('refuses a JSON settings file whose numbers would not be written back as written, and keeps 1.0 or 1e2', async () => {
    const project = tempDir('init-');
    mkdirSync(join(project, '.claude'));
    const settings = join(project, '.claude', 'settings.json');
    for (const number of ['12345678901234567891', '1e400']) {
      const text = `{"env": {"BUILD_ID": ${number}}, "feedbackSurveyRate": 0.10}\n`;
      writeFileSync(settings, text);
      const run = await init(project, 'claude');
      expect(run.status).toBe(1);
      expect(run.stderr).toBe(
        `fact-tracker init: .claude/settings.json: it holds the number ${number}, which would not be written back as it is; nothing was written\n`,
      );
      expect(read(settings)).toBe(text);
      expect(existsSync(join(project, '.mcp.json'))).toBe(false);
    }
    // Only the spelling of these would change, not their value.
    writeFileSync(settings, '{"a": 1.0, "b": 1e2, "c": 0.10}');
    expect((await init(project, 'claude')).status).toBe(0);
    expect(readJson(settings)).toMatchObject({ a: 1, b: 100, c: 0.1 });
  });

  it('refuses a JSON settings file that gives a key twice in one object, whose first a rewrite would drop', async () => {
    const project = tempDir('init-');
    mkdirSync(join(project, '.claude'));
    const settings = join(project, '.claude', 'settings.json');
    const text = '{\n  "env": {"A": "1"},\n  "model": "m",\n  "env": {"B": "2"}\n}\n';
    writeFileSync(settings, text);
    const run = await init(project, 'claude');
    expect(run.status).toBe(1);
    expect(run.stderr).toBe(
      'fact-tracker init: .claude/settings.json: it gives the key "env" twice in one object, and a rewrite would keep only the last: remove one and run init again; nothing was written\n',
    );
    expect(read(settings)).toBe(text);
    expect(existsSync(join(project, '.mcp.json'))).toBe(false);
    // The same key in different objects is no duplicate.
    writeFileSync(settings, '{"env": {"env": "1"}, "hooks": {"Stop": [{"hooks": []}, {"hooks": []}]}}');
    expect((await init(project, 'claude')).status).toBe(0);
    expect(readJson(settings)).toMatchObject({ env: { env: '1' } });
  });

  it('keeps the indentation of a JSON settings file it rewrites, so that only the lines it adds change', async () => {
    for (const indent of ['    ', '\t']) {
      const project = tempDir('init-');
      mkdirSync(join(project, '.claude'));
      const settings = join(project, '.claude', 'settings.json');
      writeFileSync(settings, `${JSON.stringify({ model: 'm', env: { A: '1' } }, null, indent)}\n`);
      writeFileSync(join(project, '.mcp.json'), `${JSON.stringify({ mcpServers: {} }, null, indent)}\n`);
      expect((await init(project, 'claude')).status).toBe(0);
      for (const file of [settings, join(project, '.mcp.json')])
        expect(read(file)).toBe(`${JSON.stringify(readJson(file), null, indent)}\n`);
      expect(read(settings)).toMatch(/^\{\n(?:    |\t)"model": "m",\n/u);
    }
  });

  it('refuses a fact-tracker server entry that is no server (a string, an array of tables), leaving it as it was', async () => {
    const cases = [
      [
        'claude',
        '.mcp.json',
        '{"mcpServers": {"fact-tracker": "see README"}}\n',
        '"mcpServers.fact-tracker" is a string, not an object',
      ],
      [
        'codex',
        join('.codex', 'config.toml'),
        '[[mcp_servers.fact-tracker]]\ncommand = "a"\n\n[[mcp_servers.fact-tracker]]\ncommand = "b"\n',
        '"mcp_servers.fact-tracker" is an array, not a table',
      ],
    ] as const;
    for (const [host, file, text, reason] of cases) await expectRefused(host, file, text, reason);
  });

  it("refuses --store where the fact-tracker server's env or env_vars is of another shape, which the store's would replace", async () => {
    const server = '"command": "npx", "args": ["--no-install", "fact-tracker", "mcp"]';
    const table = '[mcp_servers.fact-tracker]\ncommand = "npx"\nargs = ["--no-install", "fact-tracker", "mcp"]\n';
    const cases = [
      [
        'claude',
        '.mcp.json',
        `{"mcpServers": {"fact-tracker": {${server}, "env": ["PGHOST=db"]}}}\n`,
        '"mcpServers.fact-tracker.env" is an array, not an object',
      ],
      [
        'codex',
        join('.codex', 'config.toml'),
        `${table}env = "PGHOST=db"\n`,
        '"mcp_servers.fact-tracker.env" is a string, not a table',
      ],
      [
        'codex',
        join('.codex', 'config.toml'),
        `${table}env_vars = "PGHOST"\n`,
        '"mcp_servers.fact-tracker.env_vars" is a string, not an array',
      ],
    ] as const;
    for (const [host, file, text, reason] of cases) {
      const project = await expectRefused(host, file, text, reason, '--store', './sessions');
      expect(readdirSync(project).sort()).toEqual(['.codex', ...(host === 'claude' ? ['.mcp.json'] : [])]);
    }
  });

  it('refuses a symlinked settings file or folder, leaving its target as it was', async () => {
    const project = tempDir('init-');
    const elsewhere = tempDir('elsewhere-');
    writeFileSync(join(elsewhere, 'settings.json'), '{}');
    mkdirSync(join(project, '.claude'));
    symlinkSync(join(elsewhere, 'settings.json'), join(project, '.claude', 'settings.json'));
    const file = await init(project, 'claude');
    expect(file.status).toBe(1);
    expect(file.stderr).toMatch(/\.claude\/settings\.json is a symbolic link; refusing to write through it/u);
    expect(read(join(elsewhere, 'settings.json'))).toBe('{}');
    const other = tempDir('init-');
    symlinkSync(elsewhere, join(other, '.codex'));
    const folder = await init(other, 'codex');
    expect(folder.stderr).toMatch(/\.codex is a symbolic link; refusing to write through it/u);
    expect(readdirSync(elsewhere)).toEqual(['settings.json']);
  });

  it("codex: writes hooks.json and config.toml, keeping the user's TOML as written", async () => {
    const project = tempDir('init-');
    mkdirSync(join(project, '.codex'));
    const toml = `# my settings\nmodel = "gpt-5-codex"\n\n[mcp_servers.docs]\ncommand = "docs-server" # keep me\n\n[mcp_servers.fact-tracker]\ncommand = "npx"\nargs = ["fact-tracker", "mcp"]\nstartup_timeout_sec = 20\n\n[mcp_servers.fact-tracker.env]\nDEBUG = "1"\n\n# ---- Profiles: keep in sync ----\n\n[profiles.fast]\nmodel = "gpt-5-mini"\n`;
    writeFileSync(join(project, '.codex', 'config.toml'), toml);
    expect((await init(project, 'codex')).status).toBe(0);
    const written = read(join(project, '.codex', 'config.toml'));
    expect(written).toContain(
      '# my settings\nmodel = "gpt-5-codex"\n\n[mcp_servers.docs]\ncommand = "docs-server" # keep me\n',
    );
    // The comment and blank lines that introduce the next table stay with it.
    expect(written).toContain('"1"\n\n# ---- Profiles: keep in sync ----\n\n[profiles.fast]\nmodel = "gpt-5-mini"\n');
    expect(parseToml(written)).toEqual({
      model: 'gpt-5-codex',
      mcp_servers: {
        docs: { command: 'docs-server' },
        'fact-tracker': { command: 'node', args: [MAIN, 'mcp'], startup_timeout_sec: 20, env: { DEBUG: '1' } },
      },
      profiles: { fast: { model: 'gpt-5-mini' } },
    });
    const hooks = readJson(join(project, '.codex', 'hooks.json'));
    expect(Object.keys(hooks['hooks'] as Json)).toEqual(['PreToolUse', 'PostToolUse', 'SubagentStart', 'SubagentStop']);
    expect(new Set(commandsOf(hooks))).toEqual(new Set([HOOK]));
    expect((await init(project, 'codex')).stdout).toMatch(
      /^unchanged {2}\.codex\/hooks\.json\nunchanged {2}\.codex\/config\.toml\n/u,
    );
    expect(read(join(project, '.codex', 'config.toml'))).toBe(written);
    writeFileSync(join(project, '.codex', 'config.toml'), 'model = \n');
    const broken = await init(project, 'codex');
    expect(broken.status).toBe(1);
    expect(broken.stderr).toMatch(/\.codex\/config\.toml: it is not valid TOML .*; nothing was written/u);
    expect(read(join(project, '.codex', 'config.toml'))).toBe('model = \n');
  });

  it('claude: where the package is installed in the project, writes by default the portable form, which runs', async () => {
    const project = tempDir('init-');
    installInto(project);
    const run = await init(project, 'claude');
    expect(run.status).toBe(0);
    const written = [read(join(project, '.claude', 'settings.json')), read(join(project, '.mcp.json'))];
    // Nothing of this machine: the files can be committed and work on every clone.
    for (const text of written) expect([text.includes(ROOT), text.includes(project)]).toEqual([false, false]);
    expectPortable(project);
    expect(run.stdout).not.toMatch(/keep them out of git/u);
    expect(run.stderr).toBe('');
    // The written command runs the installed copy. It is one command for every event (above): the
    // end of the call, which records the subagent's result, goes through it, npx and all; the
    // call's dispatch, start and stop (which keeps the result for its call's end) are the same hook
    // in this process.
    const session = '0c9d2e61-7a1b-4f3e-8d5c-6b2a1e0f9d38';
    const send = throughSettingsOn(
      ['PostToolUse'],
      asSettingsSay(project),
      inProcess({ cwd: project, projectDir: project }),
    );
    const host = claudeCode({ send, sessionId: session, cwd: project });
    await host.foreground({
      toolUseId: 'toolu_01PortableCall0000000001',
      agentId: 'aport1',
      agentType: 'implementer',
      prompt: 'Task ID: 1\nCreate src/config.ts.',
      answer: implementerAnswer('1', 'src/config.ts'),
    });
    const report = replayHistory(read(join(project, '.fact-tracker', 'sessions', `${session}.jsonl`))).report;
    expect(report.facts.map((fact) => [fact.subject, fact.sourceTaskId])).toContainEqual(['src/config.ts', '1']);
    expect(host.notices).toEqual([]);
    // --node asks for this machine's path all the same.
    expect((await init(project, 'claude', '--node')).status).toBe(0);
    expect(new Set(commandsOf(readJson(join(project, '.claude', 'settings.json'))))).toEqual(new Set([HOOK]));
  });

  it('claude: warns when package.json installs the package from a file outside the project, which no clone has', async () => {
    const project = tempDir('init-outside-');
    installInto(project);
    const manifest = (spec: string) =>
      writeFileSync(
        join(project, 'package.json'),
        JSON.stringify({ name: 'app', devDependencies: { 'session-fact-tracker': spec } }),
      );
    manifest('file:../tools/session-fact-tracker-0.1.0.tgz');
    const outside = await init(project, 'claude');
    expect(outside.status).toBe(0);
    expectPortable(project);
    expect(outside.stderr).toBe(
      'fact-tracker init: warning: package.json installs session-fact-tracker from file:../tools/session-fact-tracker-0.1.0.tgz, outside the project: a clone elsewhere cannot install it, so these settings would run nothing there. Copy the tarball into the project, commit it and install it from there (npm install --save-dev ./vendor/session-fact-tracker-0.1.0.tgz)\n',
    );
    // From inside the project every clone has the file: nothing to say.
    manifest('file:vendor/session-fact-tracker-0.1.0.tgz');
    expect((await init(project, 'claude')).stderr).toBe('');
    // This machine's path is said so already: the settings are not meant for a clone.
    manifest('file:/opt/session-fact-tracker-0.1.0.tgz');
    expect((await init(project, 'claude', '--node')).stderr).toBe('');
  });

  it('quotes a package.json spec outside the project that holds a control or invisible character, and names no tarball of it', async () => {
    const project = tempDir('init-outside-');
    installInto(project);
    const spec = 'file:../\u001b[2J\n# Forged\u202e/x\u009b.tgz';
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'app', devDependencies: { 'session-fact-tracker': spec } }),
    );
    const run = await init(project, 'claude');
    expect(run.status).toBe(0);
    expect(run.stderr).toBe(
      'fact-tracker init: warning: package.json installs session-fact-tracker from "file:../\\u001b[2J\\n# Forged\\u202e/x\\u009b.tgz", outside the project: a clone elsewhere cannot install it, so these settings would run nothing there. Copy the tarball into the project, commit it and install it from there (npm install --save-dev ./vendor/session-fact-tracker-VERSION.tgz)\n',
    );
  });

  it('refuses a store with a password put by hand into the settings, as --store does, writing and printing nothing of it', async () => {
    const project = tempDir('init-kept-');
    expect((await init(project, 'claude', '--store', 'postgres://agent@db.internal/memory')).status).toBe(0);
    const settings = join(project, '.claude', 'settings.json');
    const mcp = read(join(project, '.mcp.json'));
    writeFileSync(settings, read(settings).replaceAll('agent@db.internal', 'agent:Hunter2Secret@db.internal'));
    const before = read(settings);
    const kept = await init(project, 'claude');
    expect(kept.status).toBe(1);
    expect(kept.stderr).toMatch(
      /^fact-tracker init: the store URL kept from \.claude\/settings\.json holds a password[^\n]*run init again with --store postgres:\/\/agent@db\.internal\/memory,[^\n]*\n$/u,
    );
    expect(kept.stdout + kept.stderr).not.toContain('Hunter2Secret');
    expect([read(join(project, '.mcp.json')), read(settings)]).toEqual([mcp, before]);
  });

  it('prints no control character of a hostile settings file: a store holding one is refused, an event name is quoted', async () => {
    const project = tempDir('init-controls-');
    mkdirSync(join(project, '.claude'));
    const escape = '\u001b';
    const command = `FACT_TRACKER_STORE=./st${escape}[2J${escape}[31mRED npx --no-install fact-tracker hook`;
    const hooks = (run: string) => [{ hooks: [{ type: 'command', command: run }] }];
    const settings = join(project, '.claude', 'settings.json');
    writeFileSync(settings, JSON.stringify({ hooks: { PreToolUse: hooks(command), SubagentStop: hooks(command) } }));
    const refused = await init(project, 'claude');
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/holds a control or invisible character/u);
    const named = { hooks: { 'Evil\u009b2J\u202eevil': hooks('npx --no-install fact-tracker hook') } };
    writeFileSync(settings, JSON.stringify(named));
    const quoted = await init(project, 'claude');
    for (const ran of [refused, quoted]) expect(ran.stdout + ran.stderr).not.toMatch(/[\u001b\u0080-\u009f\u202e]/u);
    expect(quoted.stdout + quoted.stderr).toContain('Evil\\u009b2J\\u202eevil');
  });

  it('with --store, says the server command each agent was given and the store the results go to, never a password', async () => {
    const url = 'postgres://app@db.internal:5432/memory';
    const reference = `\${FACT_TRACKER_STORE:-${url}}`;
    const codex = await init(tempDir('init-said-'), 'codex', '--store', url);
    expect(codex.status).toBe(0);
    // The command Codex runs, as config.toml gives it: through a shell, which sets the store.
    expect(codex.stdout).toContain(
      `\nThe MCP server runs: sh -c 'FACT_TRACKER_STORE="${reference}" exec node ${MAIN} mcp'\n`,
    );
    const claude = await init(tempDir('init-said-'), 'claude', '--store', url);
    expect(claude.status).toBe(0);
    expect(claude.stdout).toContain(
      `\nThe MCP server runs: node ${MAIN} mcp (its env sets FACT_TRACKER_STORE to ${reference})\n`,
    );
    for (const ran of [codex, claude]) {
      expect(ran.stdout.replace(/\s+/gu, ' ')).toContain(
        `their results are recorded in ${url} unless FACT_TRACKER_STORE names another (see docs/hooks.md)`,
      );
      expect(ran.stdout).not.toContain('.fact-tracker/sessions/');
    }
    // Without a store, the summary names the project's folder, and the server command as written.
    const plain = await init(tempDir('init-said-'), 'codex');
    expect(plain.stdout).toContain(`\nThe MCP server runs: node ${MAIN} mcp\n`);
    expect(plain.stdout).toContain('recorded in .fact-tracker/sessions/ (see docs/hooks.md)');
    // A URL with a password is refused before anything is said of it: its password is printed nowhere.
    const secret = await init(tempDir('init-said-'), 'codex', '--store', 'postgres://app:s3cret-Pw@db.internal/memory');
    expect(secret.status).toBe(1);
    expect(secret.stdout + secret.stderr).not.toContain('s3cret-Pw');
  });

  it('--npx writes commands that run only the copy installed in the project', async () => {
    const project = tempDir('init-');
    const run = await init(project, 'claude', '--npx');
    expect(run.status).toBe(0);
    expectPortable(project);
    expect(run.stderr).toMatch(/no node_modules\/\.bin\/fact-tracker yet/u);
  });

  it('--store writes the store through FACT_TRACKER_STORE, which the environment overrides, and refuses a URL with a password', async () => {
    const project = tempDir('init-store-');
    const secret = await init(project, 'claude', '--store', 'postgres://app:s3cret-Pw@db.internal/memory');
    expect(secret.status).toBe(1);
    expect(secret.stderr).toMatch(
      /^fact-tracker init: the --store URL holds a password.*Set FACT_TRACKER_STORE to the URL in your environment[^\n]*\n$/u,
    );
    expect(secret.stdout + secret.stderr).not.toContain('s3cret-Pw');
    // The passphrase of the client's TLS key is refused as a password is.
    const keyed = await init(project, 'claude', '--store', 'postgres://app@db.internal/memory?sslpassword=k3y-Pass');
    expect([keyed.status, keyed.stderr]).toEqual([
      1,
      expect.stringMatching(/--store postgres:\/\/app@db\.internal\/memory /u),
    ]);
    expect(keyed.stdout + keyed.stderr).not.toContain('k3y-Pass');
    expect((await init(project, 'claude', '--store', 'logs/$HOME')).stderr).toMatch(
      /--store holds a character a shell would read/u,
    );
    // An apostrophe, which bash reads as an open quote inside "${FACT_TRACKER_STORE:-...}".
    expect((await init(project, 'claude', '--store', "/srv/it's facts")).stderr).toMatch(
      /--store holds a character a shell would read \(.*'.*\)/u,
    );
    for (const blank of ['', '  ']) {
      const empty = await init(project, 'claude', '--store', blank);
      expect([empty.status, empty.stderr]).toEqual([
        1,
        'fact-tracker init: --store needs a folder or a postgres:// URL; nothing was written\n',
      ]);
    }
    expect(readdirSync(project)).toEqual([]);

    const url = 'postgres://app@db.internal/memory?sslmode=require';
    const written = await init(project, 'claude', '--store', url);
    expect(written.status).toBe(0);
    expect(written.stdout).toContain(
      `The sessions are in FACT_TRACKER_STORE when your environment sets it, else in ${url}.`,
    );
    const reference = `\${FACT_TRACKER_STORE:-${url}}`;
    expect(new Set(commandsOf(readJson(join(project, '.claude', 'settings.json'))))).toEqual(
      new Set([`FACT_TRACKER_STORE="${reference}" ${HOOK}`]),
    );
    expect((readJson(join(project, '.mcp.json'))['mcpServers'] as Json)['fact-tracker']).toEqual({
      type: 'stdio',
      command: 'node',
      args: [MAIN, 'mcp'],
      env: { FACT_TRACKER_STORE: reference },
    });
    // A run without --store keeps the store the settings hold.
    expect((await init(project, 'claude')).stdout).toMatch(
      /^unchanged {2}\.claude\/settings\.json\nunchanged {2}\.mcp\.json\n/u,
    );

    // Codex passes its MCP servers only the variables env_vars names, and expands none: a shell sets the fallback.
    expect((await init(project, 'codex', '--store', 'codex-logs')).status).toBe(0);
    const server = (parseToml(read(join(project, '.codex', 'config.toml'))) as { mcp_servers: Record<string, Json> })
      .mcp_servers['fact-tracker']!;
    expect(server).toEqual({
      command: 'sh',
      args: ['-c', `FACT_TRACKER_STORE="\${FACT_TRACKER_STORE:-codex-logs}" exec node ${MAIN} mcp`],
      env_vars: ['FACT_TRACKER_STORE', 'PGPASSWORD', 'PGPASSFILE'],
    });
    const codexServer = await new Promise<{ status: number | null; stderr: string }>((resolve) => {
      const child = execFile(
        '/bin/sh',
        server['args'] as string[],
        { cwd: project, env: { PATH: process.env['PATH'] ?? '' } },
        (error, _stdout, stderr) => resolve({ status: error === null ? 0 : (error.code as number), stderr }),
      );
      child.stdin?.end();
    });
    expect(codexServer).toEqual({ status: 0, stderr: '' });

    // A folder: the hooks as written record there, and a FACT_TRACKER_STORE of the environment wins.
    const folders = tempDir('init-folder-');
    expect((await init(folders, 'claude', '--store', 'team-logs')).status).toBe(0);
    const call = (n: number) => ({
      toolUseId: `toolu_01StoreCall00000000000${n}`,
      agentId: `astore${n}`,
      agentType: 'implementer',
      prompt: `Task ID: ${n}\nCreate src/store${n}.ts.`,
      answer: implementerAnswer(String(n), `src/store${n}.ts`),
    });
    const session = '7e2a4c10-3b5d-4f6e-8a9b-1c2d3e4f5a6b';
    // The end of a call, which records its result, through the written command; its dispatch, start
    // and stop through the same hook in this process, on the folder the command should pick (the
    // hook keeps its calls there: one on another folder would find no call to record the result of).
    const sends = (directory: string, env: Record<string, string> = {}): Send =>
      throughSettingsOn(
        ['PostToolUse'],
        asSettingsSay(folders, env),
        inProcess({ cwd: folders, projectDir: folders, directory }),
      );
    await claudeCode({ send: sends('team-logs'), sessionId: session, cwd: folders }).foreground(call(1));
    await claudeCode({
      send: sends('env-logs', { FACT_TRACKER_STORE: 'env-logs' }),
      sessionId: session,
      cwd: folders,
    }).foreground(call(2));
    const factsIn = (folder: string) =>
      replayHistory(read(join(folders, folder, `${session}.jsonl`))).report.facts.map((fact) => fact.subject);
    expect(factsIn('team-logs')).toContain('src/store1.ts');
    expect(factsIn('env-logs')).toContain('src/store2.ts');
    expect(existsSync(join(folders, '.fact-tracker', 'sessions', `${session}.jsonl`))).toBe(false);
  });

  it("refuses, as one kept from the hooks, a store with a password put by hand into .mcp.json's env, instead of dropping it", async () => {
    const project = tempDir('init-kept-mcp-');
    const mcp = join(project, '.mcp.json');
    const settings = join(project, '.claude', 'settings.json');
    expect((await init(project, 'claude', '--store', 'postgres://agent@db.internal/memory')).status).toBe(0);
    writeFileSync(mcp, read(mcp).replaceAll('agent@db.internal', 'agent:Hunter2Secret@db.internal'));
    const before = [read(settings), read(mcp)];
    const kept = await init(project, 'claude');
    expect(kept.status).toBe(1);
    expect(kept.stderr).toMatch(
      /^fact-tracker init: the store URL in \.mcp\.json \(the fact-tracker server's env\) holds a password[^\n]*nothing was written[^\n]*PGPASSFILE[^\n]*run init again with --store postgres:\/\/agent@db\.internal\/memory\n$/u,
    );
    expect(kept.stdout + kept.stderr).not.toContain('Hunter2Secret');
    expect([read(settings), read(mcp)]).toEqual(before);
    // What the line says to do works, and leaves no password in the file.
    expect((await init(project, 'claude', '--store', 'postgres://agent@db.internal/memory')).status).toBe(0);
    expect((readJson(mcp)['mcpServers'] as Json)['fact-tracker']).toMatchObject({
      env: { FACT_TRACKER_STORE: '${FACT_TRACKER_STORE:-postgres://agent@db.internal/memory}' },
    });

    // Hooks that name no store, and the URL written as it is: refused all the same.
    const bare = tempDir('init-kept-mcp-');
    expect((await init(bare, 'claude')).status).toBe(0);
    const server = {
      type: 'stdio',
      command: 'node',
      args: [MAIN, 'mcp'],
      env: { FACT_TRACKER_STORE: 'postgres://agent:Hunter2Secret@db.internal/memory' },
    };
    writeFileSync(join(bare, '.mcp.json'), JSON.stringify({ mcpServers: { 'fact-tracker': server } }));
    const literal = await init(bare, 'claude', '--layout', 'grouped');
    expect([literal.status, literal.stderr]).toEqual([
      1,
      expect.stringMatching(/^fact-tracker init: the store URL in \.mcp\.json [^\n]*holds a password[^\n]*\n$/u),
    ]);
    expect(literal.stdout + literal.stderr).not.toContain('Hunter2Secret');
    expect(readJson(join(bare, '.mcp.json'))).toEqual({ mcpServers: { 'fact-tracker': server } });
  });

  it('refuses a run without --store that would replace another store set by hand in .mcp.json, and keeps one the hooks do not contradict', async () => {
    const project = tempDir('init-kept-mcp-');
    const mcp = join(project, '.mcp.json');
    expect((await init(project, 'claude', '--store', 'team-logs')).status).toBe(0);
    writeFileSync(mcp, read(mcp).replace('team-logs', 'my-logs'));
    const before = read(mcp);
    const run = await init(project, 'claude', '--layout', 'grouped');
    expect([run.status, run.stderr]).toEqual([
      1,
      'fact-tracker init: the fact-tracker server in .mcp.json is given another store than the hooks of .claude/settings.json, which would replace it; nothing was written. Run init again with --store and the store to keep in both\n',
    ]);
    expect(read(mcp)).toBe(before);
    expect((await init(project, 'claude', '--store', 'my-logs')).status).toBe(0);
    expect(new Set(commandsOf(readJson(join(project, '.claude', 'settings.json'))))).toEqual(
      new Set([`FACT_TRACKER_STORE="\${FACT_TRACKER_STORE:-my-logs}" ${HOOK}`]),
    );

    // Hooks that name no store leave the server's env as the user set it.
    const bare = tempDir('init-kept-mcp-');
    const server = { type: 'stdio', command: 'node', args: [MAIN, 'mcp'], env: { FACT_TRACKER_STORE: 'my-logs' } };
    writeFileSync(join(bare, '.mcp.json'), JSON.stringify({ mcpServers: { 'fact-tracker': server } }));
    expect((await init(bare, 'claude')).status).toBe(0);
    expect(readJson(join(bare, '.mcp.json'))).toEqual({ mcpServers: { 'fact-tracker': server } });
  });

  it("refuses a Codex run without --store that would replace a store set by hand in config.toml's server, or drop one holding a password", async () => {
    const project = tempDir('init-kept-codex-');
    const config = join(project, '.codex', 'config.toml');
    expect((await init(project, 'codex', '--store', 'team-logs')).status).toBe(0);
    writeFileSync(config, read(config).replace('team-logs', 'my-logs'));
    const before = read(config);
    const run = await init(project, 'codex', '--layout', 'grouped');
    expect([run.status, run.stderr]).toEqual([
      1,
      'fact-tracker init: the fact-tracker server in .codex/config.toml is given another store than the hooks of .codex/hooks.json, which would replace it; nothing was written. Run init again with --store and the store to keep in both\n',
    ]);
    expect(read(config)).toBe(before);
    expect((await init(project, 'codex', '--store', 'my-logs')).status).toBe(0);
    expect((await init(project, 'codex', '--layout', 'grouped')).status).toBe(0);
    writeFileSync(config, read(config).replace('my-logs', 'postgres://agent:s3cret-Pw@db.internal/memory'));
    const secret = await init(project, 'codex');
    expect(secret.status).toBe(1);
    expect(secret.stderr).toMatch(
      /^fact-tracker init: the store URL in \.codex\/config\.toml [^\n]*holds a password[^\n]*\n$/u,
    );
    expect(secret.stdout + secret.stderr).not.toContain('s3cret-Pw');
    expect(read(config)).toContain('s3cret-Pw');
  });

  it('runs at once on one project take turns: the files are those of the runs one after another, never a mix, and nothing stays beside them', async () => {
    const project = tempDir('init-race-');
    // The user's settings, large enough that the runs overlap between their reads and their writes.
    const mine = Object.fromEntries(Array.from({ length: 30_000 }, (_, n) => [`key${n}`, `value ${n}`]));
    const seed = (folder: string): void => {
      mkdirSync(join(folder, '.claude'));
      writeFileSync(join(folder, '.claude', 'settings.json'), JSON.stringify({ mine }));
      writeFileSync(join(folder, '.mcp.json'), JSON.stringify({ mine, mcpServers: {} }));
    };
    seed(project);
    const runs = [['--store', 'logs-a'], ['--store', 'logs-b', '--layout', 'grouped'], []];
    const done = await Promise.all(runs.map((options) => initBinary(project, 'claude', ...options)));
    expect(done.map((run) => [run.status, run.stderr])).toEqual(runs.map(() => [0, '']));
    // The run without --store, landing between the others, lost their store before the lock.
    // In any order, the last run's layout holds, with the store of the last run before it given
    // one (or its own): some run with --store always came before the last, or was it.
    const hook = commandsOf(readJson(join(project, '.claude', 'settings.json')))[0]!;
    const store = /FACT_TRACKER_STORE:-(logs-[ab])\}/u.exec(hook)?.[1];
    expect(store).toBeDefined();
    const layout = hook.endsWith('--layout grouped') ? ['--layout', 'grouped'] : [];
    const alone = tempDir('init-race-');
    seed(alone);
    expect((await init(alone, 'claude', '--store', store!, ...layout)).status).toBe(0);
    for (const file of [join('.claude', 'settings.json'), '.mcp.json'])
      expect(read(join(project, file)), file).toBe(read(join(alone, file)));
    // No lock folder and no temporary file stay.
    expect(readdirSync(project, { recursive: true }).sort()).toEqual([
      '.claude',
      join('.claude', 'settings.json'),
      '.mcp.json',
    ]);
  });

  it('waits while another process holds the lock and writes once it is released; refuses in one line a lock that cannot be a live one', async () => {
    const project = tempDir('init-lock-');
    // Another process holds the project's init lock (and keeps it fresh) until its standard input ends.
    const holder = spawn(
      process.execPath,
      [
        '-e',
        `const release = require('proper-lockfile').lockSync(${JSON.stringify(join(project, '.fact-tracker-init'))}, { realpath: false, stale: 10000 }); console.log('held'); process.stdin.resume(); process.stdin.on('end', () => { release(); process.exit(0); });`,
      ],
      { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] },
    );
    await new Promise((resolve) => holder.stdout.once('data', resolve));
    const run = init(project, 'claude');
    // A run on another project, started with it, has ended: one that did not wait would have written by then.
    expect((await init(tempDir('init-lock-'), 'claude')).status).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(readdirSync(project)).toEqual(['.fact-tracker-init.lock']);
    holder.stdin.end();
    const done = await run;
    expect([done.status, done.stderr]).toEqual([0, '']);
    expect(readdirSync(project).sort()).toEqual(['.claude', '.mcp.json']);

    const planted = tempDir('init-lock-');
    writeFileSync(join(planted, '.fact-tracker-init.lock'), '');
    const refused = await init(planted, 'claude');
    expect([refused.status, refused.stderr]).toEqual([
      1,
      "fact-tracker init: .fact-tracker-init.lock is a file, not a lock (a writer's lock is a folder it makes and removes): remove it and try again; nothing was written\n",
    ]);
    expect(readdirSync(planted)).toEqual(['.fact-tracker-init.lock']);
  });

  it('rejects an unknown agent', async () => {
    const run = await runCliHere(['init', 'cursor']);
    expect(run.status).toBe(1);
    expect(run.stderr).toBe(
      'fact-tracker init: unknown agent "cursor": expected claude or codex (see fact-tracker init --help)\n',
    );
  });
});

/** Runs each event through the command the settings name for it, as Claude Code runs it: `sh -c`, from the project. */
const asSettingsSay =
  (project: string, env: Record<string, string> = {}): Send =>
  (payload) => {
    const settings = readJson(join(project, '.claude', 'settings.json'));
    const groups = ((settings['hooks'] as Record<string, Json[]>)[payload['hook_event_name'] as string] ?? []).filter(
      (group) =>
        group['matcher'] === undefined ||
        (group['matcher'] as string).split('|').includes(payload['tool_name'] as string),
    );
    expect(groups).toHaveLength(1);
    const command = (groups[0]!['hooks'] as Json[])[0]!['command'] as string;
    return new Promise((resolve, reject) => {
      const child = execFile(
        '/bin/sh',
        ['-c', command],
        // No registry can be reached: npm is told it is offline, and no proxy or token is set.
        {
          cwd: project,
          env: { PATH: process.env['PATH'] ?? '', CLAUDE_PROJECT_DIR: project, npm_config_offline: 'true', ...env },
        },
        (error, stdout, stderr) => {
          if (error !== null) return reject(new Error(`${command} failed: ${error.message}\n${stderr}`));
          const lines = stdout.split('\n').filter((line) => line !== '');
          resolve({ output: lines.length === 0 ? undefined : (JSON.parse(lines[0]!) as Json), stderr });
        },
      );
      child.stdin?.end(JSON.stringify(payload));
    });
  };

/** `send` for the events named in `names`, `otherwise` for the others. */
const throughSettingsOn =
  (names: ReadonlyArray<string>, send: Send, otherwise: Send): Send =>
  (payload) =>
    names.includes(payload['hook_event_name'] as string) ? send(payload) : otherwise(payload);

describe('init claude, then a recorded Claude Code session through the written commands', { timeout: 600_000 }, () => {
  it('gives each subagent its own section and records each result under its task', async () => {
    const project = tempDir('init-session-');
    expect((await init(project, 'claude')).status).toBe(0);
    const session = '5d1c9e20-4b7a-4e1f-9c3d-2a6b8e0f1d47';
    // The first call, whose result the second one's section is made of, through the same hook in
    // this process (as the binary sequences seed theirs); the second through the written commands.
    const seeding = claudeCode({
      send: inProcess({ cwd: project, projectDir: project }),
      sessionId: session,
      cwd: project,
    });
    const host = claudeCode({ send: asSettingsSay(project), sessionId: session, cwd: project });
    const first = {
      toolUseId: 'toolu_01InitFirstCall000000001',
      agentId: 'ainit1',
      agentType: 'implementer',
      prompt: 'Task ID: 1\nCreate src/config.ts.',
      answer: implementerAnswer('1', 'src/config.ts'),
    };
    const second = {
      toolUseId: 'toolu_01InitSecondCall00000002',
      agentId: 'ainit2',
      agentType: 'implementer',
      prompt: 'Task ID: 2\nValidate the ports in src/config.ts.',
      answer: implementerAnswer('2', 'src/ports.ts'),
    };
    await seeding.foreground(first);
    await host.foreground(second);
    const report = replayHistory(read(join(project, '.fact-tracker', 'sessions', `${session}.jsonl`))).report;
    const sections = report.prompts.map((prompt) => prompt.sessionContext);
    expect(sections[0]).toBe('');
    expect(sections[1]).toContain('src/config.ts modified_by task:1');
    expect(host.given.get(second.toolUseId)!.sections).toEqual([sections[1]]);
    expect(report.facts.map((fact) => [fact.subject, fact.sourceTaskId])).toEqual(
      expect.arrayContaining([
        ['src/config.ts', '1'],
        ['src/ports.ts', '2'],
      ]),
    );
    expect([...seeding.notices, ...host.notices]).toEqual([]);
  });
});
