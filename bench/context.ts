/**
 * The cost of one shared-context write (a claim through `updateContext`, lock, git snapshot,
 * read, decode, change, check, write, dashboard) by the size of the context file, in a real
 * git repository: what the lock wait per MiB (`LOCK_WAIT_PER_MIB_MS`) must cover, since every
 * writer ahead in the queue does this much work.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { emptySharedContext, encodeContextFile, recordContextClaim } from '../dist/context/index.js';
import { updateContext } from '../dist/context/node/index.js';
import { median } from './median.js';

/** One row: the file size and the median milliseconds of a write to it. */
export interface ContextWriteRow {
  readonly mebibytes: number;
  readonly writeMillis: number;
  readonly millisPerMebibyte: number;
}

const workstream = (ws: number) => ({
  ...emptySharedContext({ repo: 'bench', branch: 'main', workstreamId: `ws-${ws}` }),
  workingSummary: { text: `Workstream ${ws}: `.padEnd(4_000, 'summary '), stale: true },
  evidenceLedger: Array.from({ length: 199 }, (_, k) => ({
    claim: `Looked at module ${k} of workstream ${ws} `.padEnd(290, 'detail '),
    files: [],
    symbols: [],
    at: 1_750_000_000_000,
  })),
});

const fileText = (count: number): string =>
  `${JSON.stringify(encodeContextFile({ kind: 'planning', contexts: Array.from({ length: count }, (_, ws) => workstream(ws)) }), null, 2)}\n`;

/** A valid planning file of at most about `bytes`: workstreams with a full summary and 199 claims each (the write adds the 200th, then replaces it). */
const contextFile = (bytes: number): string => fileText(Math.max(1, Math.floor(bytes / fileText(1).length)));

/** Median write time at about 0.5, 2.5 and 4.5 MiB (the quick run: 0.5 and 2.5), `samples` writes each. */
export const measureContextWrites = async (quick: boolean, samples = 5): Promise<ReadonlyArray<ContextWriteRow>> => {
  const repo = mkdtempSync(join(tmpdir(), 'fact-tracker-bench-context-'));
  try {
    execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: repo });
    mkdirSync(join(repo, 'data', 'context'), { recursive: true });
    const rows: ContextWriteRow[] = [];
    for (const mebibytes of quick ? [0.5, 2.5] : [0.5, 2.5, 4.5]) {
      const text = contextFile(mebibytes * 1024 * 1024);
      writeFileSync(join(repo, 'data', 'context', 'planning_context.json'), text);
      const times: number[] = [];
      for (let i = 0; i < samples; i += 1) {
        const start = performance.now();
        const result = await updateContext(
          { cwd: repo, enabled: true, repo: 'bench', workstreamId: 'ws-0' },
          (context, at) => recordContextClaim(context, { claim: `bench claim`, at }),
        );
        times.push(performance.now() - start);
        if (result._tag === 'Left') throw new Error(result.left.message);
      }
      const actual = text.length / (1024 * 1024);
      rows.push({ mebibytes: actual, writeMillis: median(times), millisPerMebibyte: median(times) / actual });
    }
    return rows;
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
};
