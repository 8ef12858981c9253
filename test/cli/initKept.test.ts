/**
 * `fact-tracker init` on settings that already name a store or give the commands options, written
 * by hand in the documented forms of `hook` and `mcp`: a run without `--store` keeps them (or
 * says which words it drops), and a store that is a mistyped address is refused, never written.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../tempDirs.js';
import { MAIN, runCli, runCliHere } from './runCli.js';

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

const URL = 'postgres://agent@db.internal/memory';
const reference = (store: string): string => `\${FACT_TRACKER_STORE:-${store}}`;

/** Every command of every hook group in a settings document. */
const commandsOf = (settings: Json): string[] =>
  Object.values(settings['hooks'] as Record<string, Json[]>).flatMap((groups) =>
    groups.flatMap((group) => (group['hooks'] as Json[]).map((handler) => handler['command'] as string)),
  );

/** A settings document with one hook group per command, as a user writes it. */
const hooksOf = (...commands: string[]): Json => ({
  hooks: { PreToolUse: commands.map((command) => ({ matcher: 'Agent|Task', hooks: [{ type: 'command', command }] })) },
});

/** A project with these settings files (relative path → JSON value or text). */
const projectWith = (files: Record<string, unknown>): string => {
  const project = tempDir('init-kept-');
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(project, path, '..'), { recursive: true });
    writeFileSync(join(project, path), typeof content === 'string' ? content : JSON.stringify(content));
  }
  return project;
};

const codexServer = (project: string): Json =>
  (parseToml(read(join(project, '.codex', 'config.toml'))) as { mcp_servers: Record<string, Json> }).mcp_servers[
    'fact-tracker'
  ]!;

describe.concurrent('fact-tracker init on settings that already name a store or options', { timeout: 120_000 }, () => {
  it("keeps the store hand-written hooks and servers name by FACT_TRACKER_STORE= or --store, and the commands' options", async () => {
    const project = projectWith({
      '.claude/settings.json': hooksOf(
        `FACT_TRACKER_STORE=${URL} npx --no-install fact-tracker hook --max-facts 7 --reviewer-pattern 'audit|review'`,
      ),
      '.mcp.json': {
        mcpServers: {
          'fact-tracker': {
            command: 'npx',
            args: ['--no-install', 'fact-tracker', 'mcp', '--store', URL, '--tokenizer', 'o200k'],
          },
        },
      },
    });
    const run = await initBinary(project, 'claude');
    expect([run.status, run.stderr]).toEqual([0, '']);
    expect(run.stdout).toContain(`else in ${URL} (kept from the settings there`);
    const hook = `FACT_TRACKER_STORE="${reference(URL)}" node ${MAIN} hook --max-facts 7 --reviewer-pattern 'audit|review'`;
    const commands = commandsOf(readJson(join(project, '.claude', 'settings.json')));
    expect([commands.length, new Set(commands)]).toEqual([5, new Set([hook])]);
    expect((readJson(join(project, '.mcp.json'))['mcpServers'] as Json)['fact-tracker']).toEqual({
      type: 'stdio',
      command: 'node',
      args: [MAIN, 'mcp', '--tokenizer', 'o200k'],
      env: { FACT_TRACKER_STORE: reference(URL) },
    });
    // What it wrote, it reads back as it is.
    expect((await init(project, 'claude')).stdout).toMatch(/^unchanged {2}\.claude\/settings\.json\nunchanged/u);

    // Codex: no hooks yet, the store and an option in the server's args of config.toml.
    const codex = projectWith({
      '.codex/config.toml': `[mcp_servers.fact-tracker]\ncommand = "npx"\nargs = ["--no-install", "fact-tracker", "mcp", "--store=${URL}", "--max-answer-tokens", "4000"]\n`,
    });
    const codexRun = await init(codex, 'codex');
    expect([codexRun.status, codexRun.stderr]).toEqual([0, '']);
    expect(codexServer(codex)).toEqual({
      command: 'sh',
      args: ['-c', `FACT_TRACKER_STORE="${reference(URL)}" exec node ${MAIN} mcp --max-answer-tokens 4000`],
      env_vars: ['FACT_TRACKER_STORE', 'PGPASSWORD', 'PGPASSFILE'],
    });
    expect(new Set(commandsOf(readJson(join(codex, '.codex', 'hooks.json'))))).toEqual(
      new Set([`FACT_TRACKER_STORE="${reference(URL)}" node ${MAIN} hook`]),
    );
    expect((await init(codex, 'codex')).stdout).toMatch(/^unchanged {2}\.codex\/hooks\.json\nunchanged/u);
  });

  it('reads the store in every documented form of the hook command, quoted or not, and keeps a layout a run without --layout is not given', async () => {
    const forms = [
      'npx fact-tracker hook --store team-logs',
      'npx fact-tracker hook --store=team-logs',
      'npx fact-tracker hook --sessions-dir team-logs',
      "npx fact-tracker hook --sessions-dir 'team-logs'",
      'FACT_TRACKER_STORE=team-logs npx fact-tracker hook',
      "FACT_TRACKER_STORE='team-logs' npx fact-tracker hook",
      'FACT_TRACKER_STORE="team-logs" npx fact-tracker hook',
      `FACT_TRACKER_STORE="${reference('team-logs')}" node ${MAIN} hook`,
    ];
    const runs = await Promise.all(
      forms.map(async (command) => {
        const project = projectWith({ '.claude/settings.json': hooksOf(`${command} --layout grouped`) });
        const run = await init(project, 'claude');
        return [
          command,
          run.status,
          run.stderr,
          new Set(commandsOf(readJson(join(project, '.claude', 'settings.json')))),
        ];
      }),
    );
    const hook = `FACT_TRACKER_STORE="${reference('team-logs')}" node ${MAIN} hook --layout grouped`;
    expect(runs).toEqual(forms.map((command) => [command, 0, '', new Set([hook])]));
  });

  it('says which words of a fact-tracker command it drops, never their values, and refuses hooks naming different stores', async () => {
    const project = projectWith({
      '.claude/settings.json': hooksOf(
        'PGPASSFILE=/home/me/secret-pgpass npx fact-tracker hook --max-tokens 900 --frobnicate=s3cret-Value 2>>/tmp/hook.log',
        'npx fact-tracker hook --max-facts 5',
        'npx fact-tracker hook --max-facts 9',
      ),
    });
    const run = await init(project, 'claude');
    expect(run.status).toBe(0);
    expect(run.stderr).toBe(
      'fact-tracker init: warning: the fact-tracker hook commands of .claude/settings.json were given these, which init does not keep: PGPASSFILE=, --frobnicate, what follows its ">", --max-facts (given different values)\n',
    );
    expect(run.stderr).not.toMatch(/secret-pgpass|s3cret-Value/u);
    expect(new Set(commandsOf(readJson(join(project, '.claude', 'settings.json'))))).toEqual(
      new Set([`node ${MAIN} hook --max-tokens 900`]),
    );

    const stores = projectWith({
      '.claude/settings.json': hooksOf('npx fact-tracker hook --store logs-a', 'npx fact-tracker hook --store logs-b'),
    });
    const before = read(join(stores, '.claude', 'settings.json'));
    const refused = await init(stores, 'claude');
    expect([refused.status, refused.stderr]).toEqual([
      1,
      'fact-tracker init: the fact-tracker hooks of .claude/settings.json name different stores, and init writes one; nothing was written. Run init again with --store and the store to keep\n',
    ]);
    expect([read(join(stores, '.claude', 'settings.json')), existsSync(join(stores, '.mcp.json'))]).toEqual([
      before,
      false,
    ]);
  });

  it('refuses a store with a password named by --store in a hook or in the server args, writing and printing nothing of it', async () => {
    const secret = 'postgres://agent:Hunter2Secret@db.internal/memory';
    for (const files of [
      { '.claude/settings.json': hooksOf(`npx fact-tracker hook --store ${secret}`) },
      {
        '.mcp.json': {
          mcpServers: { 'fact-tracker': { command: 'npx', args: ['fact-tracker', 'mcp', '--store', secret] } },
        },
      },
    ]) {
      const project = projectWith(files);
      const run = await init(project, 'claude');
      expect([run.status, run.stderr]).toEqual([
        1,
        expect.stringMatching(/^fact-tracker init: the store URL kept from [^\n]* holds a password[^\n]*\n$/u),
      ]);
      expect(run.stdout + run.stderr).not.toContain('Hunter2Secret');
      for (const [path, content] of Object.entries(files)) expect(readJson(join(project, path))).toEqual(content);
    }
  });

  it('refuses in one line a --store that is a mistyped PostgreSQL address, given or kept, never writing or echoing its password', async () => {
    for (const store of [
      'postgres:/u:pw-S3cret@h/db',
      'postgres:u:pw-S3cret@h/db',
      'host=h password=pw-S3cret',
      'u:pw-S3cret@h/db',
      '//u:pw-S3cret@h/db',
      '://u:pw-S3cret@h/db',
      'postgres//u:pw-S3cret@h/db',
      'u:p/w-S3cret@h/db',
      'socket:/var/run/postgresql?db=facts&password=pw-S3cret',
    ]) {
      const project = tempDir('init-mistyped-');
      const run = await init(project, 'claude', '--store', store);
      expect([run.status, run.stderr]).toEqual([
        1,
        expect.stringMatching(/^fact-tracker init: store_url: --store is [^\n]*; nothing was written\n$/u),
      ]);
      expect(run.stdout + run.stderr).not.toContain('S3cret');
      expect(existsSync(join(project, '.claude'))).toBe(false);
      expect(existsSync(join(project, '.mcp.json'))).toBe(false);
      // The same store written by hand into the hooks is refused as kept from them.
      const kept = projectWith({ '.claude/settings.json': hooksOf(`npx fact-tracker hook --store '${store}'`) });
      const again = await init(kept, 'claude');
      expect([again.status, again.stderr]).toEqual([
        1,
        expect.stringMatching(
          /^fact-tracker init: store_url: the store kept from \.claude\/settings\.json is [^\n]*; nothing was written\n$/u,
        ),
      ]);
      expect(again.stdout + again.stderr).not.toContain('S3cret');
    }
    // The commands that use a store refuse it as well, instead of making a folder of it.
    const cwd = tempDir('init-mistyped-');
    const list = await runCli(['sessions', 'list', '--store', 'postgres:/u:pw-S3cret@h/db'], undefined, { cwd });
    expect([list.status, list.stderr]).toEqual([
      1,
      expect.stringMatching(
        /^fact-tracker sessions: store_url: --store is a PostgreSQL URL without the \/\/[^\n]*\n$/u,
      ),
    ]);
    expect(list.stderr).not.toContain('S3cret');
    // --sessions-dir names a folder: neither a URL nor a mistyped address becomes one, password and all.
    const served = await runCli(['mcp', '--sessions-dir', 'postgres://u:pw-S3cret@h/db'], '', { cwd });
    expect([served.status, served.stdout, served.stderr]).toEqual([
      1,
      '',
      expect.stringMatching(/^fact-tracker mcp: store_url: --sessions-dir names a folder, [^\n]*\n$/u),
    ]);
    const payload = {
      session_id: 'dir-session',
      hook_event_name: 'PreToolUse',
      tool_name: 'Agent',
      tool_use_id: 'toolu_1',
      cwd,
      tool_input: { description: 'd', prompt: 'Task ID: 7\nEdit src/a.ts', subagent_type: 'general-purpose' },
    };
    const hooked = await runCli(['hook', '--sessions-dir', 'u:pw-S3cret@h/db'], JSON.stringify(payload), {
      cwd,
      env: { CLAUDE_PROJECT_DIR: cwd },
    });
    expect(hooked.status).toBe(0);
    expect((JSON.parse(hooked.stdout) as { systemMessage: string }).systemMessage).toMatch(
      /^fact-tracker: store_url: session dir-session: --sessions-dir is an address with USER:PASSWORD@HOST credentials/u,
    );
    expect(served.stderr + hooked.stdout + hooked.stderr).not.toContain('S3cret');
    expect(readdirSync(cwd, { recursive: true }).filter((name) => String(name).includes('S3cret'))).toEqual([]);
  });

  it('names a dash-word holding a value by its option only, never the value, and refuses a store it cannot read', async () => {
    const secret = 'postgres://app:S3cretPW@db.internal/facts';
    const files = {
      '.claude/settings.json': hooksOf(`npx fact-tracker hook '--store ${secret}' -S${secret} --max-facts 5`),
      '.mcp.json': {
        mcpServers: { 'fact-tracker': { command: 'npx', args: ['fact-tracker', 'mcp', `--store ${secret}`] } },
      },
    };
    const given = projectWith(files);
    const run = await init(given, 'claude', '--store', '/srv/facts');
    expect([run.status, run.stderr]).toEqual([
      0,
      'fact-tracker init: warning: the fact-tracker hook commands of .claude/settings.json were given this, which init does not keep: an unknown option\n' +
        'fact-tracker init: warning: the fact-tracker server of .mcp.json was given this, which init does not keep: an unknown option\n',
    ]);
    expect(run.stdout + run.stderr + read(join(given, '.mcp.json'))).not.toContain('S3cret');
    // Without --store, the store they name in a form init cannot read is neither kept nor dropped unasked.
    const kept = projectWith(files);
    const refused = await init(kept, 'claude');
    expect([refused.status, refused.stderr]).toEqual([
      1,
      expect.stringMatching(
        /^fact-tracker init: a fact-tracker hook command of \.claude\/settings\.json names a store in a form init cannot read [^\n]*nothing was written\. Run init again with --store[^\n]*\n$/u,
      ),
    ]);
    expect(refused.stdout + refused.stderr).not.toContain('S3cret');
    for (const [path, content] of Object.entries(files)) expect(readJson(join(kept, path))).toEqual(content);
  });

  it('says which wrapper a command ran through, and refuses, writing nothing, a store after a cd && or in a script it cannot read', async () => {
    const wrapped = projectWith({
      '.claude/settings.json': hooksOf(
        'op run --env-file=.env.team -- npx fact-tracker hook --reviewer-pattern=-review',
      ),
    });
    const run = await init(wrapped, 'claude');
    expect([run.status, run.stderr]).toEqual([
      0,
      'fact-tracker init: warning: the fact-tracker hook commands of .claude/settings.json were given this, which init does not keep: `op`, which it runs fact-tracker through\n',
    ]);
    // A value that starts with a dash is written in the one form the hook reads it in.
    expect(new Set(commandsOf(readJson(join(wrapped, '.claude', 'settings.json'))))).toEqual(
      new Set([`node ${MAIN} hook --reviewer-pattern=-review`]),
    );
    for (const files of [
      { '.claude/settings.json': hooksOf('cd "$CLAUDE_PROJECT_DIR" && npx fact-tracker hook --store /srv/team') },
      {
        '.mcp.json': {
          mcpServers: {
            'fact-tracker': {
              command: 'bash',
              args: ['-c', 'source .env && exec npx fact-tracker mcp --store /srv/t'],
            },
          },
        },
      },
    ]) {
      const project = projectWith(files);
      const refused = await init(project, 'claude');
      expect([refused.status, refused.stderr]).toEqual([
        1,
        expect.stringMatching(/names a store in a form init cannot read [^\n]*Run init again with --store[^\n]*\n$/u),
      ]);
      for (const [path, content] of Object.entries(files)) expect(readJson(join(project, path))).toEqual(content);
    }
  });

  it('refuses a password in the server env in a mistyped form as in a URL, writing and printing nothing of it', async () => {
    for (const value of [
      'host=db.internal password=Hunter2Secret dbname=facts',
      'postgres:/app:Hunter2Secret@db.internal/facts',
      '//app:Hunter2Secret@db.internal/facts',
    ]) {
      const files = {
        '.mcp.json': {
          mcpServers: {
            'fact-tracker': { command: 'npx', args: ['fact-tracker', 'mcp'], env: { FACT_TRACKER_STORE: value } },
          },
        },
      };
      const project = projectWith(files);
      const run = await init(project, 'claude');
      expect([value, run.status, run.stderr]).toEqual([
        value,
        1,
        expect.stringMatching(/^fact-tracker init: the store URL in \.mcp\.json [^\n]*holds a password[^\n]*\n$/u),
      ]);
      expect(run.stdout + run.stderr).not.toContain('Hunter2Secret');
      expect(readJson(join(project, '.mcp.json'))).toEqual(files['.mcp.json']);
    }
  });

  it("init codex --store replaces the store the server table's env names, which the server would use over the hooks' one", async () => {
    const project = projectWith({
      '.codex/config.toml':
        '[mcp_servers.fact-tracker]\ncommand = "npx"\nargs = ["fact-tracker", "mcp"]\n\n[mcp_servers.fact-tracker.env]\nFACT_TRACKER_STORE = "/srv/old-store"\nMY_VAR = "1"\n',
    });
    const run = await init(project, 'codex', '--store', '/srv/new-store');
    expect(run.status).toBe(0);
    const server = codexServer(project);
    expect(server['env']).toEqual({ MY_VAR: '1' });
    expect(JSON.stringify(server)).not.toContain('old-store');
    expect(JSON.stringify(server)).toContain('/srv/new-store');
  });

  it('reads the store of an exec-form hook (command and args) and keeps the keys set on a handler it replaces', async () => {
    const project = projectWith({
      '.claude/settings.json': {
        hooks: {
          SubagentStart: [
            { hooks: [{ type: 'command', command: 'npx fact-tracker hook', timeout: 120, statusMessage: 'tracking' }] },
          ],
          SubagentStop: [
            { hooks: [{ type: 'command', command: 'npx', args: ['fact-tracker', 'hook', '--store', '/srv/team'] }] },
          ],
        },
      },
    });
    const run = await init(project, 'claude');
    expect([run.status, run.stderr]).toEqual([0, '']);
    const settings = readJson(join(project, '.claude', 'settings.json'));
    const hook = `FACT_TRACKER_STORE="${reference('/srv/team')}" node ${MAIN} hook`;
    expect(new Set(commandsOf(settings))).toEqual(new Set([hook]));
    const hooks = settings['hooks'] as Record<string, Json[]>;
    expect(hooks['SubagentStart']).toEqual([
      { hooks: [{ type: 'command', command: hook, timeout: 120, statusMessage: 'tracking' }] },
    ]);
    expect(hooks['SubagentStop']).toEqual([{ hooks: [{ type: 'command', command: hook, timeout: 60 }] }]);
  });
  it('takes a hand-written sh -c hook whose script ends in fact-tracker hook for its own, keeping its store, in both forms', async () => {
    const script = 'FACT_TRACKER_STORE=/srv/team-facts npx fact-tracker hook';
    for (const handler of [
      { type: 'command', command: `sh -c "${script}"` },
      { type: 'command', command: 'sh', args: ['-c', script] },
    ]) {
      const project = projectWith({
        '.claude/settings.json': { hooks: { PreToolUse: [{ matcher: 'Agent|Task', hooks: [handler] }] } },
      });
      const run = await init(project, 'claude');
      expect([run.status, run.stderr]).toEqual([0, '']);
      // Every handler on the store the script named, and no second one beside the user's on another store.
      const settings = readJson(join(project, '.claude', 'settings.json'));
      expect(new Set(commandsOf(settings))).toEqual(
        new Set([`FACT_TRACKER_STORE="${reference('/srv/team-facts')}" node ${MAIN} hook`]),
      );
      const preToolUse = (settings['hooks'] as Record<string, Json[]>)['PreToolUse']!;
      expect(preToolUse.flatMap((group) => group['hooks'] as Json[])).toHaveLength(1);
    }
  });
  it('refuses a folder named like USER:PASSWORD@HOST saying to give it as ./NAME, and keeps it given so', async () => {
    const project = tempDir('init-kept-');
    const refused = await init(project, 'claude', '--store', 'team:dev@2024');
    expect([refused.status, refused.stderr]).toEqual([
      1,
      expect.stringMatching(
        /^fact-tracker init: store_url: --store is an address with USER:PASSWORD@HOST credentials[^\n]*given as a path, \.\/NAME or \/PATH, which is always a folder[^\n]*; nothing was written\n$/u,
      ),
    ]);
    expect(existsSync(join(project, '.claude'))).toBe(false);
    expect((await init(project, 'claude', '--store', './team:dev@2024')).status).toBe(0);
    const hook = `FACT_TRACKER_STORE="${reference('./team:dev@2024')}" node ${MAIN} hook`;
    expect(new Set(commandsOf(readJson(join(project, '.claude', 'settings.json'))))).toEqual(new Set([hook]));
    // A later run without --store keeps it, as a path.
    const again = await init(project, 'claude');
    expect([again.status, again.stderr]).toEqual([0, '']);
    expect(again.stdout).toMatch(/^unchanged {2}\.claude\/settings\.json\nunchanged {2}\.mcp\.json\n/u);
  });
});
