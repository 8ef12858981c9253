/**
 * A command that stops reading a file before its end releases it then, not when the collector
 * finds its handle: a process that runs many commands (a server, an embedding, this suite) would
 * otherwise hold their files open. Linux only: what the process holds open is read from /proc.
 */
import { existsSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { openHistory, replaySource } from '../../src/cli/commands/history.js';
import { createNodeIo } from '../../src/cli/nodeIo.js';
import { run } from '../../src/cli/run.js';
import type { CliIo } from '../../src/cli/io.js';
import { tempDir } from '../tempDirs.js';

const dir = tempDir('release-');
const START = Date.UTC(2026, 0, 1);

/** How many descriptors of this process are open on `file`. */
const openOn = (file: string): number =>
  readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(join('/proc/self/fd', fd)) === file;
    } catch {
      return false; // closed between the listing and the look
    }
  }).length;

/**
 * Waits, a bounded number of turns of the event loop, for `file` to be released: a stream's
 * handle is closed a few turns after the stream is ended. Returns how many descriptors are left.
 */
const released = async (file: string): Promise<number> => {
  for (let turn = 0; turn < 50 && openOn(file) > 0; turn += 1) await new Promise((resolve) => setTimeout(resolve, 2));
  return openOn(file);
};

/** A history of `tasks` implementer results, one a minute: about 2 MB for 5,000, many chunks of a read. */
const writeHistory = (name: string, tasks: number): string => {
  const file = join(dir, name);
  const lines: string[] = [];
  for (let task = 1; task <= tasks; task += 1)
    lines.push(
      JSON.stringify({
        type: 'dispatch',
        role: 'implementer',
        taskId: String(task),
        at: START + task * 60_000,
        result: {
          task_id: String(task),
          status: 'completed',
          summary: `task ${task}: add the invoice exporter and its checks, with the retry policy the reviewer asked for`,
          files_changed: [`src/exporters/invoice${task}.ts`, `test/exporters/invoice${task}.test.ts`],
        },
      }),
    );
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
};

/** Runs the command line in this process, its output kept. */
const runHere = (io: CliIo, args: ReadonlyArray<string>): Promise<number> =>
  run(args, { ...io, stdout: () => undefined, stderr: () => undefined });

describe.runIf(existsSync('/proc/self/fd'))('a file read in part', () => {
  const io = createNodeIo();

  it('is released when a replay stops early: at --as-of, at a batch refused, and through explain --line', async () => {
    const history = writeHistory('history.jsonl', 5_000);
    const stopped = async (options: Parameters<typeof replaySource>[2], refuse = false): Promise<void> => {
      const source = await openHistory(io, history)();
      if (E.isLeft(source)) throw new Error(source.left);
      expect(openOn(history)).toBe(1);
      const result = await replaySource(io, source.right, options, {
        beforeBatch: async () => (refuse ? E.left('refused') : E.right(undefined)),
      })();
      expect(E.isLeft(result)).toBe(refuse);
      expect(await released(history)).toBe(0);
    };
    await stopped({ onPrompt: () => undefined, asOf: START + 60_000 });
    await stopped({ onPrompt: () => undefined }, true);
    expect(await runHere(io, ['explain', history, '--line', '2'])).toBe(1);
    expect(await released(history)).toBe(0);
  });

  it('is released when a saved state is refused as a history, unread', async () => {
    const state = join(dir, 'state.json');
    // A state's opening, then far more than one chunk of a read.
    writeFileSync(state, `{\n${' '.repeat(2 * 1024 * 1024)}\n}\n`);
    const source = await openHistory(io, state)();
    expect(E.isLeft(source) && source.left).toMatch(/is a saved state, not a dispatch history/u);
    expect(await released(state)).toBe(0);
    expect(await runHere(io, ['replay', state])).toBe(1);
    expect(await released(state)).toBe(0);
  });
});
