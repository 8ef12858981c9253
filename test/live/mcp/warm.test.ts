/**
 * A server reads the session an agent most likely asks about first (the one whose log changed
 * last) while its client connects, never creating one, never following a symlinked log.
 */
import { once } from 'node:events';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { createSessionPool, MAX_PREPARED_REPLAY_BYTES, warmSessionPool } from '../../../src/live/session/pool.js';
import { serveMcp } from '../../../src/live/mcp/stdio.js';
import { latestSessionId, openSession } from '../../../src/live/session/session.js';
import { tempDir } from '../../tempDirs.js';

const prompt = (taskId: string): string =>
  `${JSON.stringify({ type: 'prompt', taskId, at: 1, taskPrompt: `task ${taskId}` })}\n`;

const sessionsIn = (cwd: string): string => {
  const directory = join(cwd, '.fact-tracker', 'sessions');
  mkdirSync(directory, { recursive: true });
  return directory;
};

const initialize = `${JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'warm-test', version: '1' } },
})}\n`;

describe('warming the session pool', () => {
  it('latestSessionId names the log changed last, skipping symlinks, files that are no session and other names', () => {
    const cwd = tempDir('warm-');
    const directory = sessionsIn(cwd);
    const outside = tempDir('warm-outside-');
    writeFileSync(join(directory, 'older.jsonl'), prompt('1'));
    writeFileSync(join(directory, 'newer.jsonl'), prompt('2'));
    writeFileSync(join(outside, 'elsewhere.jsonl'), prompt('3'));
    symlinkSync(join(outside, 'elsewhere.jsonl'), join(directory, 'linked.jsonl'));
    writeFileSync(join(directory, 'notes.txt'), 'not a session');
    mkdirSync(join(directory, 'folder.jsonl'));
    utimesSync(join(directory, 'older.jsonl'), 1_000, 1_000);
    utimesSync(join(directory, 'newer.jsonl'), 2_000, 2_000);
    return latestSessionId({ cwd }).then((id) => expect(id).toBe('newer'));
  });

  it('a session opened with more rejected lines than its report lists is warned about with the count of them all', async () => {
    const cwd = tempDir('warm-rejected-');
    writeFileSync(join(sessionsIn(cwd), 'damaged.jsonl'), `${'not json\n'.repeat(1_500)}${prompt('1')}`);
    const warnings: string[] = [];
    const pool = createSessionPool({ cwd, onWarning: (warning) => warnings.push(warning) });
    const opened = await pool('damaged', false);
    expect(E.isRight(opened) && opened.right.report().errors.length).toBe(1_000);
    expect(warnings).toEqual([
      expect.stringMatching(/^session damaged: 1500 line\(s\) of \S+ not applied, first line 1 \(invalid_json: /u),
    ]);
  });

  it('a folder without sessions, or none at all, names none and warming opens nothing and creates nothing', async () => {
    const cwd = tempDir('warm-empty-');
    expect(await latestSessionId({ cwd })).toBeUndefined();
    const pool = createSessionPool({ cwd });
    expect(await warmSessionPool(pool, { cwd })).toBeUndefined();
    expect(await latestSessionId({ cwd })).toBeUndefined();
  });

  it('the warmed session is the one the first call gets, already open', async () => {
    const cwd = tempDir('warm-open-');
    const directory = sessionsIn(cwd);
    writeFileSync(join(directory, 'agent-session.jsonl'), prompt('1') + prompt('2'));
    const pool = createSessionPool({ cwd });
    const warmed = await warmSessionPool(pool, { cwd });
    expect(warmed !== undefined && E.isRight(warmed)).toBe(true);
    // The call's kind (it may create the log, the warm-up's may not) over the same open session:
    // its very state, not read again.
    const first = await pool('agent-session', true);
    expect(E.isRight(first) && E.isRight(warmed!) && first.right.state() === warmed.right.state()).toBe(true);
    const again = await pool('agent-session', false);
    expect(E.isRight(again) && E.isRight(warmed!) && again.right === warmed.right).toBe(true);
  });

  it('a warm-up runs the latest prompts one at a time until told to stop, and records nothing', async () => {
    const cwd = tempDir('warm-queries-');
    const directory = sessionsIn(cwd);
    const tasks = Array.from({ length: 12 }, (_, i) => String(i + 1));
    const result = (taskId: string): string =>
      `${JSON.stringify({
        type: 'dispatch',
        role: 'implementer',
        taskId,
        at: 2,
        result: {
          task_id: taskId,
          status: 'completed',
          summary: `work on ${taskId}`,
          files_changed: [`src/m${taskId}.ts`],
        },
      })}\n`;
    const log = tasks.map((taskId) => prompt(taskId) + result(taskId)).join('');
    writeFileSync(join(directory, 'agent-session.jsonl'), log);
    const opened = await openSession('agent-session', { cwd });
    if (E.isLeft(opened)) throw new Error(opened.left.message);
    const session = opened.right;
    const before = await session.snapshot();
    let asked = 0;
    await session.warm(() => {
      asked += 1;
      return false;
    });
    // One question before each query: eight queries, of the eight latest prompts.
    expect(asked).toBe(8);
    let stopped = 0;
    await session.warm(() => {
      stopped += 1;
      return true;
    });
    expect(stopped).toBe(1);
    expect(readFileSync(join(directory, 'agent-session.jsonl'), 'utf8')).toBe(log);
    expect(await session.snapshot()).toEqual(before);
  });

  it('warming the pool leaves the log as it was and the first call answers as on a cold server', async () => {
    const cwd = tempDir('warm-answer-');
    const directory = sessionsIn(cwd);
    writeFileSync(join(directory, 'agent-session.jsonl'), prompt('1') + prompt('2'));
    const cold = tempDir('warm-cold-');
    writeFileSync(join(sessionsIn(cold), 'agent-session.jsonl'), prompt('1') + prompt('2'));
    const pool = createSessionPool({ cwd });
    await warmSessionPool(pool, { cwd });
    expect(readFileSync(join(directory, 'agent-session.jsonl'), 'utf8')).toBe(prompt('1') + prompt('2'));
    const compile = async (source: ReturnType<typeof createSessionPool>) => {
      const session = await source('agent-session', false);
      if (E.isLeft(session)) throw new Error(session.left.message);
      return session.right.compileContext({ taskId: '3', taskPrompt: 'task 2', at: 5 });
    };
    expect(await compile(pool)).toEqual(await compile(createSessionPool({ cwd: cold })));
  });

  it('a server opens its latest session before it answers its first message', async () => {
    const cwd = tempDir('warm-serve-');
    const file = join(sessionsIn(cwd), 'agent-session.jsonl');
    // A torn last line: opening the session sets it aside, which shows the session was opened.
    writeFileSync(file, `${prompt('1')}{"type":"prompt","taskId":"2"`);
    const input = new PassThrough();
    const output = new PassThrough();
    // The handshake is waiting before the server starts: it must still be answered second.
    input.write(initialize);
    const serving = serveMcp({ input, output }, { cwd, version: '0.0.0-test' });
    const [answer] = (await once(output, 'data')) as [Buffer];
    expect(existsSync(`${file}.set-aside`)).toBe(true);
    expect(JSON.parse(answer.toString()) as unknown).toMatchObject({ id: 1, result: { serverInfo: {} } });
    input.end();
    expect(E.isRight(await serving)).toBe(true);
  });

  it('a server whose latest session cannot be opened yet (its log locked by a live writer) answers after a second at most', async () => {
    const cwd = tempDir('warm-locked-');
    const file = join(sessionsIn(cwd), 'agent-session.jsonl');
    writeFileSync(file, `${prompt('1')}{"type":"prompt","taskId":"2"`);
    // A writer holds the lock (fresh, so not abandoned): setting the torn line aside must wait for it.
    mkdirSync(`${file}.lock`);
    const input = new PassThrough();
    const output = new PassThrough();
    input.write(initialize);
    const started = Date.now();
    const serving = serveMcp({ input, output }, { cwd, version: '0.0.0-test' });
    const [answer] = (await once(output, 'data')) as [Buffer];
    const waited = Date.now() - started;
    expect(JSON.parse(answer.toString()) as unknown).toMatchObject({ id: 1, result: { serverInfo: {} } });
    expect(existsSync(`${file}.set-aside`)).toBe(false);
    // It waited for the session, then answered with the lock still held (without the bound it would wait for the lock).
    expect(waited).toBeGreaterThanOrEqual(900);
    rmSync(`${file}.lock`, { recursive: true });
    input.end();
    expect(E.isRight(await serving)).toBe(true);
  });

  it('a server whose latest session needs a long replay (no snapshot) answers the handshake first, then reads it', async () => {
    const cwd = tempDir('warm-long-');
    const file = join(sessionsIn(cwd), 'agent-session.jsonl');
    let log = '';
    for (let task = 1; log.length <= MAX_PREPARED_REPLAY_BYTES; task += 1) log += prompt(String(task));
    // The torn last line is set aside once the log is read: it shows whether the open came first.
    writeFileSync(file, `${log}{"type":"prompt","taskId":"x"`);
    const input = new PassThrough();
    const output = new PassThrough();
    input.write(initialize);
    const serving = serveMcp({ input, output }, { cwd, version: '0.0.0-test' });
    const [answer] = (await once(output, 'data')) as [Buffer];
    expect(JSON.parse(answer.toString()) as unknown).toMatchObject({ id: 1, result: { serverInfo: {} } });
    expect(existsSync(`${file}.set-aside`)).toBe(false);
    // Once the handshake is over, the session is read, before any call asks for it.
    input.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    for (let waited = 0; !existsSync(`${file}.set-aside`) && waited < 10_000; waited += 50)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(existsSync(`${file}.set-aside`)).toBe(true);
    input.end();
    expect(E.isRight(await serving)).toBe(true);
  });
});
