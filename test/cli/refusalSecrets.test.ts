/**
 * Every refusal of a file or an input that is not JSON (or not TOML), as the commands print it:
 * the parser's own message quotes the text where it broke off, and a token written there
 * unquoted (`"GITHUB_TOKEN": ghp_...`) would be on stderr, in a hook's `systemMessage` or in an
 * MCP client's answer. Each is said with where the text broke, never what it holds.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SECRETS } from '../fixtures/secrets.js';
import { tempDir } from '../tempDirs.js';
import { projectWithSessions, ROOT, runCli, runCliHere } from './runCli.js';

const [, TOKEN] = SECRETS.find(([shape]) => shape === 'a GitHub token')!;
/** The token's first characters: the engine's excerpt ends ten characters past where it broke. */
const SHOWN = TOKEN.slice(0, 6);

describe('a refusal of text that is not JSON or TOML', () => {
  it('init names a .claude/settings.json holding a token written unquoted as not JSON, without the token', async () => {
    const { project } = projectWithSessions('init-json-secret-');
    mkdirSync(join(project, '.claude'));
    const settings = `{\n  "env": {"GITHUB_TOKEN": ${TOKEN}}\n}\n`;
    writeFileSync(join(project, '.claude', 'settings.json'), settings);
    const run = await runCliHere(['init', 'claude', '--project', project]);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/settings\.json: it is not valid JSON \(Unexpected token 'g' \(not valid JSON\)\)/u);
    expect(run.stdout + run.stderr).not.toContain(SHOWN);
    expect(readFileSync(join(project, '.claude', 'settings.json'), 'utf8')).toBe(settings);
  });

  it('init names a .codex/config.toml holding a token written unquoted as not TOML by line and column alone', async () => {
    const { project } = projectWithSessions('init-toml-secret-');
    mkdirSync(join(project, '.codex'));
    writeFileSync(join(project, '.codex', 'config.toml'), `[env]\nGITHUB_TOKEN = ${TOKEN}\n`);
    const run = await runCliHere(['init', 'codex', '--project', project]);
    expect(run).toEqual({
      status: 1,
      stdout: '',
      stderr: expect.stringMatching(
        /^fact-tracker init: \S+config\.toml: it is not valid TOML \(at line 2, column 16\); nothing was written\n$/u,
      ) as string,
    });
    expect(run.stderr).not.toContain(SHOWN);
  });

  it('facts names a saved state holding a token written unquoted as corrupt, without the token', async () => {
    const dir = tempDir('state-secret-');
    const state = join(dir, 'state.json');
    writeFileSync(state, `{"format":"session-fact-tracker/state","version":1,"note": ${TOKEN}}\n`);
    const run = await runCliHere(['facts', state]);
    expect(run).toEqual({
      status: 1,
      stdout: '',
      stderr: `fact-tracker facts: ${state}: not a readable saved state: the JSON is truncated or corrupt (Unexpected token 'g' (not valid JSON))\n`,
    });
  });

  it('replay --save leaves a file holding a token written unquoted as it is, and says why without the token', async () => {
    const dir = tempDir('save-secret-');
    const target = join(dir, 'state.json');
    const held = `{"note": ${TOKEN}}\n`;
    writeFileSync(target, held);
    const run = await runCliHere(['replay', join(ROOT, 'examples/web-api-session.jsonl'), '--save', target]);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('it is not JSON (Unexpected token');
    expect(run.stdout + run.stderr).not.toContain(SHOWN);
    expect(readFileSync(target, 'utf8')).toBe(held);
  });

  it('hook says a payload holding a token is not JSON in its systemMessage, without the token', async () => {
    const run = await runCli(['hook'], `not json ${TOKEN}`);
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      systemMessage:
        "fact-tracker: invalid_payload: the hook payload on standard input is not JSON (Unexpected token 'o' (not valid JSON))",
    });
    expect(run.stdout + run.stderr).not.toContain(SHOWN);
  });
});
