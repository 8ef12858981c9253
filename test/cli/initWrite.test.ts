/**
 * How `fact-tracker init` writes the settings: through temporary files of its own, never someone
 * else's; every file or none when a write fails; and with the permission bits the files had.
 */
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { killedMidWrite, LONG_TEXT_EXPRESSION } from '../killedMidWrite.js';
import { tempDir } from '../tempDirs.js';
import { runCliHere, runCliUnder } from './runCli.js';

const WRITE_TOGETHER_JS = fileURLToPath(new URL('../../dist/cli/init/writeTogether.js', import.meta.url));

const init = (project: string, ...args: string[]) => runCliHere(['init', ...args, '--project', project]);

/** `init` as a process of its own, run after `setup` (a umask, a limit). */
const initUnder = (setup: string, project: string, ...args: string[]) =>
  runCliUnder(['init', ...args, '--project', project], { setup, timeoutMs: 60_000 });

describe.concurrent('fact-tracker init writes', { timeout: 120_000 }, () => {
  it('ends every line it writes in a CRLF config.toml with CRLF, keeps its byte-order mark, and a second run changes nothing', async () => {
    const project = tempDir('init-crlf-');
    mkdirSync(join(project, '.codex'));
    const file = join(project, '.codex', 'config.toml');
    for (const server of ['', '[mcp_servers.fact-tracker]\r\ncommand = "npx"\r\n\r\n']) {
      const before = `\ufeff# mine\r\n${server}[mcp_servers.other]\r\ncommand = "x"\r\n`;
      writeFileSync(file, before);
      // A server of ours without init's args is replaced (with a warning saying so) as a new one is added.
      expect((await init(project, 'codex')).status).toBe(0);
      const written = readFileSync(file, 'utf8');
      expect(written).toMatch(/^\ufeff# mine\r\n/u);
      expect(written).toContain('[mcp_servers.other]\r\ncommand = "x"\r\n');
      expect(written).toContain('[mcp_servers.fact-tracker]\r\ncommand = "node"\r\n');
      expect(written.replace(/\r\n/gu, '')).not.toContain('\n');
      await init(project, 'codex');
      expect(readFileSync(file, 'utf8')).toBe(written);
    }
  });

  it('keeps the CRLF line endings and the byte-order mark of every JSON file it merges into, and a second run changes nothing', async () => {
    const project = tempDir('init-crlf-');
    mkdirSync(join(project, '.claude'));
    mkdirSync(join(project, '.codex'));
    const files = {
      claude: [join('.claude', 'settings.json'), '.mcp.json'],
      codex: [join('.codex', 'hooks.json')],
    };
    for (const file of [...files.claude, ...files.codex])
      writeFileSync(join(project, file), '\ufeff{\r\n  "mine": [\r\n    1\r\n  ]\r\n}\r\n');
    for (const [host, written] of Object.entries(files)) {
      const run = await init(project, host);
      expect([run.status, run.stderr]).toEqual([0, '']);
      for (const file of written) {
        const text = readFileSync(join(project, file), 'utf8');
        expect([file, text.startsWith('\ufeff{\r\n  "mine": [\r\n    1\r\n  ],\r\n')]).toEqual([file, true]);
        expect(text.replace(/\r\n/gu, '')).not.toContain('\n');
        expect(JSON.parse(text.slice(1))).toHaveProperty('mine', [1]);
      }
      const again = await init(project, host);
      expect(again.stdout).toMatch(new RegExp(`^${written.map((file) => `unchanged {2}${file}\\n`).join('')}`, 'u'));
    }
    // A file that mixes line endings is written with LF, and keeps its mark.
    const mixed = join(project, '.mcp.json');
    writeFileSync(mixed, '\ufeff{\r\n  "mine": 1\n}\r\n');
    expect((await init(project, 'claude')).status).toBe(0);
    const text = readFileSync(mixed, 'utf8');
    expect([text.startsWith('\ufeff{\n'), text.includes('\r')]).toEqual([true, false]);
  });

  it('keeps the order of the keys of every JSON file it rewrites, keys that read as numbers among them', async () => {
    const project = tempDir('init-order-');
    mkdirSync(join(project, '.claude'));
    mkdirSync(join(project, '.codex'));
    // A JavaScript object puts keys that read as array indices first, in ascending order.
    const files: Record<string, readonly [string, ReadonlyArray<string>]> = {
      [join('.claude', 'settings.json')]: [
        '{"env": {"ZED": "1", "10": "ten", "2": "two"}, "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./x.sh", "3": true}]}]}, "0": null}',
        ['ZED', '10', '2', '3', '0'],
      ],
      '.mcp.json': [
        '{"mcpServers": {"web": {"command": "a"}, "7": {"command": "b"}}, "2": "second", "1": "first"}',
        ['web', '7', '2', '1'],
      ],
      [join('.codex', 'hooks.json')]: ['{"mine": 1, "5": {"4": 2, "b": 3}}', ['mine', '5', '4', 'b']],
    };
    for (const [file, [text]] of Object.entries(files)) writeFileSync(join(project, file), text);
    for (const host of ['claude', 'codex']) expect((await init(project, host)).status).toBe(0);
    for (const [file, [, keys]] of Object.entries(files)) {
      const written = readFileSync(join(project, file), 'utf8');
      const order = [...written.matchAll(/^\s*"([^"]*)":/gmu)]
        .map((match) => match[1])
        .filter((key) => keys.includes(key!));
      expect([file, order]).toEqual([file, keys]);
    }
    for (const host of ['claude', 'codex']) expect((await init(project, host)).stdout).not.toContain('wrote');
  });

  it('leaves a file named as a temporary file of this process alone, and writes through one of its own', async () => {
    const project = tempDir('init-write-');
    mkdirSync(join(project, '.claude'));
    writeFileSync(join(project, '.claude', 'settings.json'), '{}');
    // `runCliHere` runs init in this process: these are the names a temporary file of its id took.
    const planted = [join('.claude', `settings.json.${process.pid}.tmp`), `.mcp.json.${process.pid}.tmp`];
    for (const file of planted) writeFileSync(join(project, file), 'my notes\n');
    const run = await init(project, 'claude');
    expect([run.status, run.stderr]).toEqual([0, '']);
    for (const file of planted) expect(readFileSync(join(project, file), 'utf8')).toBe('my notes\n');
    expect(readdirSync(project, { recursive: true }).sort()).toEqual(
      ['.claude', join('.claude', 'settings.json'), '.mcp.json', ...planted].sort(),
    );
  });

  it('writes no file when one cannot be written, and leaves nothing of the run behind', async () => {
    const project = tempDir('init-write-');
    // A .mcp.json of the user's over the file size limit the run gets (64 blocks: 32 or 64 KiB):
    // its new text cannot be written, where the new .claude/settings.json could.
    const servers = JSON.stringify({ mcpServers: {}, notes: 'x'.repeat(200_000) });
    writeFileSync(join(project, '.mcp.json'), servers);
    const run = await initUnder('ulimit -f 64', project, 'claude');
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/^fact-tracker init: cannot write \.mcp\.json: .* \(nothing was written\)\n$/u);
    expect(run.stdout).toBe('');
    expect(readdirSync(project)).toEqual(['.mcp.json']);
    expect(readFileSync(join(project, '.mcp.json'), 'utf8')).toBe(servers);
  });

  it("keeps the permission bits of the files it rewrites, whatever the umask; a new file gets the umask's", async () => {
    const project = tempDir('init-write-');
    mkdirSync(join(project, '.claude'));
    const modes = { [join('.claude', 'settings.json')]: 0o664, '.mcp.json': 0o640 };
    for (const [file, mode] of Object.entries(modes)) {
      writeFileSync(join(project, file), '{}');
      chmodSync(join(project, file), mode);
    }
    const run = await initUnder('umask 022', project, 'claude');
    expect([run.status, run.stderr]).toEqual([0, '']);
    for (const [file, mode] of Object.entries(modes))
      expect([file, statSync(join(project, file)).mode & 0o777]).toEqual([file, mode]);
    const fresh = tempDir('init-write-');
    expect((await initUnder('umask 027', fresh, 'codex')).status).toBe(0);
    expect(statSync(join(fresh, '.codex', 'config.toml')).mode & 0o777).toBe(0o640);
  });

  it('removes what a run killed mid-write left beside the files once older than the lock’s stale time, never younger', async () => {
    const project = tempDir('init-killed-');
    mkdirSync(join(project, '.claude'));
    const settings = join(project, '.claude', 'settings.json');
    const killed = await killedMidWrite(
      settings,
      WRITE_TOGETHER_JS,
      'writeTogether',
      `write([{ path: 'settings.json', absolute: file, text: ${LONG_TEXT_EXPRESSION} }], () => ({ _tag: 'Right', right: true }));`,
    );
    expect(killed).toEqual([expect.stringMatching(/^settings\.json\.\d+\.[0-9a-z]+\.tmp$/u)]);
    // What git add -A would commit: the partial file, and one beside .mcp.json, by hand, as old.
    const stale = (Date.now() - 120_000) / 1000;
    const leftover = join(project, '.claude', killed[0]!);
    const mcp = join(project, '.mcp.json.999999.k0a1b2c3.tmp');
    writeFileSync(mcp, '{');
    for (const file of [leftover, mcp]) utimesSync(file, stale, stale);
    // One a live run may be writing, younger than the stale time, stays.
    const young = `${settings}.999999.${Date.now().toString(36)}0a1b2c3d4e5f.tmp`;
    writeFileSync(young, '{');
    expect((await init(project, 'claude')).status).toBe(0);
    expect([leftover, mcp, young].map((file) => existsSync(file))).toEqual([false, false, true]);
    expect(JSON.parse(readFileSync(settings, 'utf8'))).toHaveProperty('hooks');
  });
});
