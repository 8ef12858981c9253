/**
 * Every command run from a working directory that was deleted under it (a shell still in a
 * folder another removed), as the built binary: what needs the directory (a store folder, a
 * project, a relative FILE) says so in one line, what is given absolute paths works, and a hook
 * still never fails the agent.
 */
import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectOneLineFailure, type Ran, runBinary } from '../context/cliRun.js';
import { tempDir } from '../tempDirs.js';
import { projectWithSessions, ROOT } from './runCli.js';

/** Starts the command in a directory it deletes first, with `INPUT` on standard input. */
const FROM_DELETED = 'mkdir "$GONE" && cd "$GONE" && rmdir "$GONE" && printf "%s" "$INPUT" | "$@"';

/** Runs `fact-tracker ...args` from a deleted working directory, no store or project named by the environment. */
const runFromDeleted = (
  args: ReadonlyArray<string>,
  input = '',
  env: Readonly<Record<string, string>> = {},
): Promise<Ran> => {
  const parent = tempDir('deleted-cwd-');
  return runBinary(args, {
    cwd: parent,
    env: { GONE: join(parent, 'gone'), INPUT: input, CLAUDE_PROJECT_DIR: '', FACT_TRACKER_STORE: '', ...env },
    shell: FROM_DELETED,
  });
};

const GONE = /the working directory no longer exists \(was it deleted\?\)/u;

/** A project whose sessions folder holds the session `s1`, the example history's log. */
const projectWithS1 = (): { project: string; sessions: string } => {
  const made = projectWithSessions('deleted-cwd-project-');
  copyFileSync(join(ROOT, 'examples', 'web-api-session.jsonl'), join(made.sessions, 's1.jsonl'));
  return made;
};

const INITIALIZE = `${JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'test', version: '1' } },
})}\n`;

/** A PreToolUse of a subagent, its working directory `cwd` when given. */
const preToolUse = (cwd?: string): string =>
  JSON.stringify({
    session_id: 's1',
    ...(cwd === undefined ? {} : { cwd }),
    hook_event_name: 'PreToolUse',
    tool_name: 'Task',
    tool_use_id: 'call-1',
    tool_input: { prompt: 'Task ID: 3\nAdd the parser', subagent_type: 'implementer' },
  });

describe('a deleted working directory', () => {
  it.each([
    ['facts', '--session', 's1'],
    ['replay', '--session', 's1'],
    ['explain', '--session', 's1', '--line', '1'],
    ['sessions', 'list'],
    ['sessions', 'export', 's1', '--store', 'relative/folder'],
    ['mcp'],
    ['mcp', '--sessions-dir', 'relative/folder'],
    ['init', 'claude'],
    ['init', 'codex', '--project', 'relative/project'],
  ])('fact-tracker %s ... that needs it says so in one line, exit 1, never an internal error', async (...args) => {
    const ran = await runFromDeleted(args, args[0] === 'mcp' ? INITIALIZE : '');
    expectOneLineFailure(ran, GONE);
    expect(ran.stderr).not.toMatch(/internal/u);
  });

  it('commands given absolute paths, or the project Claude Code names, work as anywhere else', async () => {
    const { project, sessions } = projectWithS1();
    const listed = await runFromDeleted(['sessions', 'list', '--store', sessions]);
    expect(listed).toEqual({ status: 0, stdout: 's1\n', stderr: '' });
    const facts = await runFromDeleted(['facts', '--session', 's1', '--json'], '', { FACT_TRACKER_STORE: sessions });
    expect(facts.status).toBe(0);
    expect((JSON.parse(facts.stdout) as { facts: unknown[] }).facts.length).toBeGreaterThan(0);
    const replayed = await runFromDeleted(['replay', '--session', 's1', '--json'], '', { CLAUDE_PROJECT_DIR: project });
    expect(replayed.status).toBe(0);
    const initialized = await runFromDeleted(['init', 'claude', '--project', project]);
    expect(initialized.status).toBe(0);
    expect(readFileSync(join(project, '.mcp.json'), 'utf8')).toMatch(/fact-tracker/u);
    for (const env of [{ CLAUDE_PROJECT_DIR: project }, { FACT_TRACKER_STORE: sessions }]) {
      const served = await runFromDeleted(['mcp'], INITIALIZE, env);
      expect(served.status).toBe(0);
      expect(served.stdout).toMatch(/"serverInfo":\{"name":"fact-tracker"/u);
    }
  });

  it('a relative FILE to read or save into is refused as relative to a deleted directory, not as missing', async () => {
    for (const args of [
      ['facts', 'history.jsonl'],
      ['notes', 'replay', 'talk.jsonl'],
      ['replay', '-', '--save', 'state.json'],
    ]) {
      const ran = await runFromDeleted(args, readFileSync(join(ROOT, 'examples', 'web-api-session.jsonl'), 'utf8'));
      expect(ran.status).toBe(1);
      expect(ran.stderr).toMatch(
        /^fact-tracker [a-z]+: cannot (?:read|save into) [a-z.]+: the working directory no longer exists \(was it deleted\?\)[^\n]*\n$/u,
      );
    }
    const absolute = await runFromDeleted(['facts', join(ROOT, 'examples', 'web-api-session.jsonl'), '--json']);
    expect(absolute).toMatchObject({ status: 0, stderr: '' });
  });

  it('a hook exits 0 and tells the agent why in its systemMessage; one whose payload names its cwd works', async () => {
    const told = await runFromDeleted(['hook'], preToolUse());
    expect(told.status).toBe(0);
    const said = (JSON.parse(told.stdout) as { systemMessage: string }).systemMessage;
    expect(said).toMatch(/^fact-tracker: io: session s1: the working directory no longer exists/u);
    expect(told.stderr).toMatch(/^fact-tracker hook: io: session s1: the working directory no longer exists[^\n]*\n$/u);
    const { project, sessions } = projectWithSessions('deleted-cwd-hook-');
    for (const args of [['hook'], ['hook', '--max-facts', '5']]) {
      const ran = await runFromDeleted(args, preToolUse(project));
      expect(ran).toMatchObject({ status: 0, stderr: '' });
    }
    expect(readFileSync(join(sessions, 's1.jsonl'), 'utf8')).toMatch(/"taskId":"3"/u);
  });

  it('a hook given an absolute sessions folder works without a cwd in its payload, as the server does', async () => {
    for (const given of [
      (folder: string) => ({ args: ['hook', '--sessions-dir', folder], env: {} }),
      (folder: string) => ({ args: ['hook', '--store', folder], env: {} }),
      (folder: string) => ({ args: ['hook'], env: { FACT_TRACKER_STORE: folder } }),
    ]) {
      const { sessions } = projectWithSessions('deleted-cwd-hook-folder-');
      const { args, env } = given(sessions);
      const ran = await runFromDeleted(args, preToolUse(), env);
      expect(ran, args.join(' ')).toMatchObject({ status: 0, stderr: '' });
      expect(readFileSync(join(sessions, 's1.jsonl'), 'utf8')).toMatch(/"taskId":"3"/u);
    }
  });
});
