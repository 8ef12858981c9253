/**
 * The shared context where git and the file system do what teams do every day (issue 28):
 * hand-edited and teammate-written files, symbolic links and devices, non-UTF-8 names, sparse
 * checkouts, unresolved merges, lock leftovers and commands run outside git. Real files, real
 * git repositories and real processes; each `it` names the item of the issue it covers.
 */
import { describe, expect, it } from 'vitest';
import { runIn } from './cliRun.js';
import { makeRepo, readJson, writeFiles } from './repo.js';
import { join } from 'node:path';

const CONTEXT_JSON = ['data', 'context', 'planning_context.json'];
/** These tests run git and node processes; their assertions count outcomes, never time. */
const SLOW = { timeout: 120_000 } as const;

/** A context of schema version 1 as a teammate's tool or a hand edit may leave it. */
const storedContext = (workstream: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  key: { repo: 'app', branch: 'main', workstream_id: workstream },
  feature_request: `Feature ${workstream}`,
  checkpoint: null,
  pinned_rules: ['Repository state beats memory: if the summary is stale, read the changed files first.'],
  working_summary: { text: `Summary of ${workstream}.`, updated_at: null, stale: true },
  open_decisions: [],
  checklist: [],
  evidence_ledger: [],
  last_run: null,
  recent_failures: [],
  ...extra,
});

const contextFile = (...contexts: ReadonlyArray<Record<string, unknown>>): string =>
  `${JSON.stringify({ schema_version: 1, kind: 'planning', repository: { id: 'app', source: 'folder' }, contexts }, null, 2)}\n`;

describe.concurrent('hand-edited and teammate-written files', SLOW, () => {
  it('18: a time with an offset is read, and a write to another workstream keeps both', async () => {
    const repo = makeRepo();
    writeFiles(repo, {
      'data/context/planning_context.json': contextFile(
        storedContext('a', {
          working_summary: { text: 'Edited by hand.', updated_at: '2026-01-01T10:00:00+00:00', stale: true },
          last_run: { status: 'succeeded', at: '2026-01-01T12:30:00.5-02:00' },
        }),
        storedContext('b'),
      ),
    });
    const show = await runIn(repo, ['context', 'show', '--workstream', 'a', '--branch', 'main']);
    expect(show.status).toBe(0);
    expect(show.stdout).toContain('summary (updated 2026-01-01T10:00:00.000Z)');
    expect(show.stdout).toContain('last run: succeeded at 2026-01-01T14:30:00.500Z');
    const claim = await runIn(repo, ['context', 'claim', 'Looked at b', '--workstream', 'b', '--branch', 'main']);
    expect(claim.status).toBe(0);
    expect(claim.stderr).not.toMatch(/corrupt|moved aside|warning/u);
    const file = readJson(join(repo, ...CONTEXT_JSON)) as { contexts: Array<{ key: { workstream_id: string } }> };
    expect(file.contexts.map((context) => context.key.workstream_id)).toEqual(['a', 'b']);
  });
});
