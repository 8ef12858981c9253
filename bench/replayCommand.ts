/**
 * The replay command as the bench times it: the generated history of `tasks` tasks (a prompt,
 * an implementer and a reviewer result each) written to a file, and one run of
 * `fact-tracker replay FILE --json` by a given build's command line.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, openSync, readSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomImplementerResult, randomPrompt, randomReviewerResult, seeded } from './generate.js';

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
