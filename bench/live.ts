/**
 * Live use, as an agent meets it: the cost of one `fact-tracker hook` call (a new process per
 * event, as Claude Code runs it) and of a fresh `fact-tracker mcp` server's first tool call, on
 * a session of 10 dispatches and on one of 3,000. Each size gets a session log written from the
 * generated history (bench/generate.ts), and one warm-up call first (which saves the snapshot a
 * session of that length gets in use); then the sizes are timed in alternation, so both see the
 * same machine, and the ratio of their medians is what the targets bound (at most 1.5).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { historyOfDispatches, randomImplementerResult, randomPrompt, seeded } from './generate.js';
import { median } from './median.js';
import { connectServer } from './mcpClient.js';

/** The built CLI the bench starts servers and hooks from. */
export const CLI = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const SESSION = 'bench-session';

/** A project folder whose session log holds the first `dispatches` dispatches of the generated history. */
export const projectWith = (dispatches: number): string => {
  const dir = mkdtempSync(join(tmpdir(), 'fact-tracker-live-'));
  const sessions = join(dir, '.fact-tracker', 'sessions');
  mkdirSync(sessions, { recursive: true });
  const lines = historyOfDispatches(11, dispatches);
  writeFileSync(join(sessions, `${SESSION}.jsonl`), `${lines.join('\n')}\n`);
  return dir;
};

/** One hook event, as Claude Code sends it: a subagent's prompt, or its last message. */
export const hookPayload = (dir: string, kind: 'PreToolUse' | 'SubagentStop', n: number): string => {
  const random = seeded(1_000 + n);
  const taskId = `live-${n}`;
  return JSON.stringify(
    kind === 'PreToolUse'
      ? {
          hook_event_name: 'PreToolUse',
          session_id: SESSION,
          cwd: dir,
          tool_name: 'Agent',
          tool_use_id: `toolu_${n}`,
          tool_input: { subagent_type: 'implementer', prompt: `Task ID: ${taskId}\n${randomPrompt(random)}` },
        }
      : {
          hook_event_name: 'SubagentStop',
          session_id: SESSION,
          cwd: dir,
          agent_id: `agent-${n}`,
          agent_type: 'implementer',
          last_assistant_message: `Done.\n\nBEGIN_DISPATCH_RESULT\n${JSON.stringify(randomImplementerResult(random, taskId))}\nEND_DISPATCH_RESULT`,
        },
  );
};

/** Milliseconds of one `fact-tracker hook` process of the command line `cli`, from its start to its exit. */
export const hookCall = (dir: string, payload: string, cli = CLI): number => {
  const start = performance.now();
  const run = spawnSync(process.execPath, [cli, 'hook'], { cwd: dir, input: payload, encoding: 'utf8' });
  const millis = performance.now() - start;
  if (run.status !== 0 || run.stderr !== '') throw new Error(`hook failed: ${run.status} ${run.stderr}`);
  return millis;
};

/** Medians of `fact-tracker hook` at each size, by event, and the ratio of the largest to the smallest. */
export const measureHookLatency = (sizes: ReadonlyArray<number>, runs: number) => {
  const dirs = sizes.map(projectWith);
  try {
    let n = 0;
    for (const dir of dirs) hookCall(dir, hookPayload(dir, 'PreToolUse', (n += 1)));
    const times = sizes.map(() => ({ PreToolUse: [] as number[], SubagentStop: [] as number[] }));
    for (let run = 0; run < runs; run += 1)
      for (const kind of ['PreToolUse', 'SubagentStop'] as const)
        dirs.forEach((dir, i) => times[i]![kind].push(hookCall(dir, hookPayload(dir, kind, (n += 1)))));
    const rows = sizes.map((dispatches, i) => ({
      dispatches,
      preToolUseMs: median(times[i]!.PreToolUse),
      subagentStopMs: median(times[i]!.SubagentStop),
    }));
    const [first, last] = [rows[0]!, rows[rows.length - 1]!];
    return {
      runs,
      rows,
      preToolUseRatio: last.preToolUseMs / first.preToolUseMs,
      subagentStopRatio: last.subagentStopMs / first.subagentStopMs,
    };
  } finally {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
};

/**
 * A fresh server of the command line `cli` in `dir`: milliseconds to its first answer of
 * `compile_context`, after the handshake and `idleMs` of waiting (an agent's first call seldom
 * follows the handshake at once).
 */
export const firstServerCall = async (
  dir: string,
  n: number,
  idleMs = 0,
  cli = CLI,
): Promise<{ firstCallMs: number; totalMs: number }> => {
  const start = performance.now();
  const server = await connectServer(cli, [], dir);
  try {
    if (idleMs > 0) await new Promise((resolve) => setTimeout(resolve, idleMs));
    const called = performance.now();
    await server.call('compile_context', {
      sessionId: SESSION,
      taskId: `mcp-${n}`,
      taskPrompt: randomPrompt(seeded(5_000 + n)),
    });
    const end = performance.now();
    return { firstCallMs: end - called, totalMs: end - start };
  } finally {
    await server.close();
  }
};

/** How long the client waits after the handshake in the second measure of a first call (the server reads its latest session meanwhile). */
const IDLE_MS = 1_000;

/**
 * Medians of a fresh MCP server's first call at each size, made at once after the handshake and
 * after IDLE_MS, and the ratios of the largest size to the smallest.
 */
export const measureServerFirstCall = async (sizes: ReadonlyArray<number>, runs: number) => {
  const dirs = sizes.map(projectWith);
  try {
    let n = 0;
    for (const dir of dirs) await firstServerCall(dir, (n += 1));
    const times = sizes.map(() => ({ first: [] as number[], total: [] as number[], idle: [] as number[] }));
    for (let run = 0; run < runs; run += 1)
      for (const [i, dir] of dirs.entries()) {
        const { firstCallMs, totalMs } = await firstServerCall(dir, (n += 1));
        times[i]!.first.push(firstCallMs);
        times[i]!.total.push(totalMs);
        times[i]!.idle.push((await firstServerCall(dir, (n += 1), IDLE_MS)).firstCallMs);
      }
    const rows = sizes.map((dispatches, i) => ({
      dispatches,
      firstCallMs: median(times[i]!.first),
      withStartMs: median(times[i]!.total),
      afterIdleMs: median(times[i]!.idle),
    }));
    const [first, last] = [rows[0]!, rows[rows.length - 1]!];
    return {
      runs,
      rows,
      firstCallRatio: last.firstCallMs / first.firstCallMs,
      withStartRatio: last.withStartMs / first.withStartMs,
      afterIdleRatio: last.afterIdleMs / first.afterIdleMs,
    };
  } finally {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
};
