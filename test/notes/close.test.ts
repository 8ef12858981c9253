/**
 * A notes tracker closed as a server shuts down, in a process of its own running the built
 * library: once its trackers have closed, the process ends by itself, although one of them had
 * asked to look again at a lease ten minutes away.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { bundledFixture } from '../fixtures/bundled.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/closeTracker.mjs', import.meta.url));

/** Runs the fixture; stops it after `limitMs` if it has not ended by itself, and says so. */
const runFixture = (env: Record<string, string>, limitMs: number) =>
  new Promise<{ ended: boolean; code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [bundledFixture(FIXTURE)], { env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    let ended = true;
    const stop = setTimeout(() => {
      ended = false;
      child.kill('SIGKILL');
    }, limitMs);
    child.on('close', (code) => {
      clearTimeout(stop);
      resolve({ ended, code, stdout, stderr });
    });
  });

describe('closing a notes tracker', () => {
  it('lets its process end by itself once its work is done: no wake-up of a lease keeps it alive', async () => {
    const closed = await runFixture({}, 60_000);
    expect(closed).toMatchObject({ ended: true, code: 0, stderr: '' });
    const report = JSON.parse(closed.stdout) as { calls: number; late: unknown; inFlight: number };
    // Both messages extracted (b's in a's follow-up), nothing in flight, and no work taken after close.
    expect(report).toMatchObject({ calls: 2, inFlight: 0, late: { _tag: 'Left', left: { code: 'closed' } } });
    // Without close, the wake-up b asked for holds the process until a's lease would expire.
    const open = await runFixture({ NO_CLOSE: '1' }, 3_000);
    expect(open.ended).toBe(false);
  });
});
