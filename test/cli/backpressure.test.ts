/**
 * The replay's report through a pipe that is not read, run as a real process: the command waits
 * for its output to take each batch before it reads the next, so what it queues in memory is
 * one batch's report at most, not the report. A module preloaded into the child records the most
 * bytes its standard output ever held queued (written to a file when it exits), and says on a
 * pipe of its own (fd 3) the first time the command waits for the output to drain, or the first
 * time the queue passes the bound: only then does the test start reading. So the verdict does not
 * depend on how fast either side runs. Before the command waited, the queue held the whole
 * report (14 MB here, more than twice the bound).
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../tempDirs.js';
import { implementer } from '../fixtures/results.js';
import { MAIN, ROOT } from './runCli.js';

const dir = tempDir('backpressure-');

/** Bytes of report the child may hold queued: it holds at most 1.5 MB (a batch of 256 KiB of history), and held the whole report (13.9 MB for 800 tasks) before it waited. */
const BOUND = 6_000_000;

/** Records the child's largest stdout queue (and its peak memory, for whoever looks) in the file QUEUE_REPORT names; signals on fd 3. */
const PRELOAD = `
import { writeFileSync, writeSync } from 'node:fs';
let most = 0;
let signalled = false;
const signal = (what) => {
  if (signalled) return;
  signalled = true;
  writeSync(3, what + '\\n');
};
const { stdout } = process;
const write = stdout.write.bind(stdout);
stdout.write = (...args) => {
  const room = write(...args);
  most = Math.max(most, stdout.writableLength);
  if (most >= ${BOUND}) signal('over');
  return room;
};
for (const method of ['on', 'once']) {
  const listen = stdout[method].bind(stdout);
  stdout[method] = (event, listener) => {
    if (event === 'drain') signal('waiting');
    return listen(event, listener);
  };
}
process.on('exit', () =>
  writeFileSync(process.env.QUEUE_REPORT, JSON.stringify({ queued: most, peakRssKb: process.resourceUsage().maxRSS })),
);
`;

/**
 * A history of `tasks` tasks, each a prompt naming the files earlier tasks changed, then the
 * task's result, then a line of 2,000 spaces: blank lines cost the replay nothing, and they
 * spread the history over eight batches of 256 KiB while the report stays as it is.
 */
const historyOf = (tasks: number): string => {
  const lines: string[] = [];
  for (let task = 1; task <= tasks; task += 1) {
    const taskId = String(task);
    const files = Array.from({ length: 6 }, (_, i) => `src/area${(task + i) % 40}/module${(task * 7 + i) % 300}.ts`);
    lines.push(
      JSON.stringify({
        type: 'prompt',
        taskId,
        at: task * 60_000,
        taskPrompt: `Change module${(task * 3) % 300} in area${task % 40} and its tests`,
      }),
      JSON.stringify({
        type: 'dispatch',
        role: 'implementer',
        taskId,
        at: task * 60_000 + 30_000,
        result: implementer(taskId, files),
      }),
      ' '.repeat(2_000),
    );
  }
  return `${lines.join('\n')}\n`;
};

/** Every byte of `stream`, counted, from the first line on `signals` on (the child's first wait, or its queue past the bound). */
const readAfterSignal = (stream: Readable, signals: Readable): Promise<number> =>
  new Promise((resolve) => {
    let total = 0;
    stream.pause();
    signals.once('data', () => {
      stream.on('data', (chunk: Buffer) => (total += chunk.length));
      stream.resume();
    });
    stream.once('end', () => resolve(total));
  });

describe('replay into a slow pipe', () => {
  it('queues at most a batch or two of its report while nobody reads it', async () => {
    const history = join(dir, 'history.jsonl');
    writeFileSync(history, historyOf(800));
    const preload = join(dir, 'queue.mjs');
    writeFileSync(preload, PRELOAD);
    const report = join(dir, 'queue.json');
    const child = spawn(
      process.execPath,
      ['--import', preload, MAIN, 'replay', history, '--json', '--max-facts', '40', '--max-tokens', '100000'],
      {
        cwd: ROOT,
        env: { ...process.env, NO_COLOR: '1', QUEUE_REPORT: report },
        stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
      },
    );
    const [, output, errors, signals] = child.stdio as unknown as [null, Readable, Readable, Readable];
    let stderr = '';
    errors.setEncoding('utf8');
    errors.on('data', (text: string) => (stderr += text));
    const [read, status] = await Promise.all([
      readAfterSignal(output, signals),
      new Promise<number | null>((resolve) => child.once('close', resolve)),
    ]);
    expect(stderr).toBe('');
    expect(status).toBe(0);
    // The report is large (13.9 MB, more than twice the bound: queued whole, it passes it) and arrived whole ...
    expect(read).toBeGreaterThan(2 * BOUND);
    // ... but no more than a few megabytes of it ever waited in the child's memory.
    const { queued } = JSON.parse(readFileSync(report, 'utf8')) as { queued: number };
    expect(queued).toBeLessThan(BOUND);
  });
});
