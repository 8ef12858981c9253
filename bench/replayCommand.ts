/**
 * The replay command as the bench times it: the generated history of `tasks` tasks (a prompt,
 * an implementer and a reviewer result each) written to a file, and one run of
 * `fact-tracker replay FILE --json` by a given build's command line.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, openSync, readSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { historyLines, randomImplementerResult, randomPrompt, randomReviewerResult, seeded } from './generate.js';

/** Writes the generated history of `tasks` tasks (2 dispatches each) to `dir` and returns its path. */
export const writeTaskHistory = (dir: string, tasks: number): string => {
  const random = seeded(10_000);
  const lines: string[] = [];
  let at = Date.UTC(2026, 2, 1);
  for (let task = 1; task <= tasks; task += 1) {
    const taskId = String(task);
    lines.push(JSON.stringify({ type: 'prompt', taskId, at: (at += 60_000), taskPrompt: randomPrompt(random) }));
    for (const role of ['implementer', 'reviewer'] as const)
      lines.push(
        JSON.stringify({
          type: 'dispatch',
          role,
          taskId,
          at: (at += 60_000),
          result:
            role === 'implementer' ? randomImplementerResult(random, taskId) : randomReviewerResult(random, taskId),
        }),
      );
  }
  const file = join(dir, 'history.jsonl');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
};

/**
 * Seconds of one `fact-tracker replay FILE --json` run by the command line `cli`, its report
 * written to a file in `dir` as a user keeps one (`> report.json`): read through a pipe into
 * this process instead, the bench's own buffering and decoding of the tens of megabytes would be
 * timed with the command (about 0.7 s of 60 MB, measured apart). The report must be whole: it
 * ends with the closing brace.
 */
export const timeReplay = (cli: string, file: string, dir: string): { seconds: number } | { failed: string } => {
  const report = join(dir, 'report.json');
  const out = openSync(report, 'w+');
  try {
    const start = performance.now();
    const run = spawnSync(process.execPath, [cli, 'replay', file, '--json'], {
      stdio: ['ignore', out, 'pipe'],
      encoding: 'utf8',
    });
    const seconds = (performance.now() - start) / 1000;
    if (run.status !== 0 && run.status !== 2)
      return { failed: `fact-tracker exited ${run.status}: ${run.stderr.trim()}` };
    const size = statSync(report).size;
    const tail = Buffer.alloc(2);
    readSync(out, tail, 0, 2, Math.max(0, size - 2));
    if (tail.toString() !== '}\n') return { failed: `the report of ${file} is cut short (${size} bytes)` };
    return { seconds };
  } finally {
    closeSync(out);
  }
};

/** Writes the realistic generated history (bench/generate.ts `historyLines(7)`) to `dir`, cut at `megabytes` MB. */
export const writeStreamHistory = (dir: string, megabytes: number): { file: string; bytes: number; events: number } => {
  const file = join(dir, 'stream.jsonl');
  const fd = openSync(file, 'w');
  let bytes = 0;
  let events = 0;
  let pending: string[] = [];
  try {
    for (const line of historyLines(7)) {
      pending.push(line);
      bytes += Buffer.byteLength(line) + 1;
      events += 1;
      if (pending.length === 1_000) {
        writeSync(fd, `${pending.join('\n')}\n`);
        pending = [];
      }
      if (bytes >= megabytes * 1_000_000) break;
    }
    if (pending.length > 0) writeSync(fd, `${pending.join('\n')}\n`);
  } finally {
    closeSync(fd);
  }
  return { file, bytes, events };
};

/** A module preloaded into the command (`node --import`) that prints its peak resident memory as it exits. */
const PEAK_MODULE =
  "process.on('exit', () => process.stderr.write(`peak-rss-kb ${process.resourceUsage().maxRSS}\\n`));\n";

/**
 * A reader slower than the command, as `| jq ...` is: it reads the report in the pipe's chunks,
 * spends 1 ms on each (at most 64 MB/s), and prints `whole` when the report ends with its
 * closing brace.
 */
const SLOW_READER = `let tail = '';
process.stdin.on('data', (chunk) => {
  tail = (tail + chunk.toString('latin1')).slice(-2);
  const until = performance.now() + 1;
  while (performance.now() < until);
});
process.stdin.on('end', () => process.stdout.write(tail === '}\\n' ? 'whole' : 'cut'));
`;

/**
 * Seconds and peak resident memory (MB) of one `fact-tracker replay FILE --json` run by `cli`,
 * its report written to a file in `dir` (`into: 'file'`) or through a pipe into a reader slower
 * than the command (`into: 'pipe'`, as `| jq` is), so that what the command holds while its
 * report waits shows in its peak.
 */
export const timeReplayPeak = (
  cli: string,
  file: string,
  dir: string,
  into: 'file' | 'pipe',
): { seconds: number; peakMb: number } | { failed: string } => {
  const peak = join(dir, 'peak.mjs');
  writeFileSync(peak, PEAK_MODULE);
  const args = ['--import', peak, cli, 'replay', file, '--json'];
  const start = performance.now();
  let stderr: string;
  if (into === 'file') {
    const out = openSync(join(dir, 'report.json'), 'w');
    try {
      const run = spawnSync(process.execPath, args, { stdio: ['ignore', out, 'pipe'], encoding: 'utf8' });
      if (run.status !== 0 && run.status !== 2) return { failed: `fact-tracker exited ${run.status}: ${run.stderr}` };
      stderr = run.stderr;
    } finally {
      closeSync(out);
    }
  } else {
    const reader = join(dir, 'reader.cjs');
    writeFileSync(reader, SLOW_READER);
    const quote = (arg: string): string => `'${arg.replaceAll("'", "'\\''")}'`;
    const line = `${[process.execPath, ...args].map(quote).join(' ')} | ${quote(process.execPath)} ${quote(reader)}`;
    const run = spawnSync('sh', ['-c', line], { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
    if (run.stdout !== 'whole') return { failed: `the report through the pipe was cut short: ${run.stderr}` };
    stderr = run.stderr;
  }
  const seconds = (performance.now() - start) / 1000;
  const kb = Number(/peak-rss-kb (\d+)/u.exec(stderr)?.[1] ?? Number.NaN);
  return { seconds, peakMb: kb / 1024 };
};
