/**
 * What resolve says of one side of a conflict: the side it means (ours, theirs), whose places
 * (`contexts[0]`) are counted in that side, and for a side that is not JSON, the line of the file
 * on disk, the one the user opens.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectOneLineFailure, runIn } from './cliRun.js';
import { commitAll, git, makeRepo, readJson } from './repo.js';

const CONTEXT_JSON = ['data', 'context', 'planning_context.json'];
const SLOW = { timeout: 120_000 } as const;

type Stored = { contexts: Array<Record<string, unknown> & { key: { workstream_id: string } }> };

/**
 * A repository in a merge that conflicts on the context file of workstreams api and web: `ours`
 * and `theirs` edit the committed file on main and on branch side (each also records a decision in
 * web, so the two conflict), then main merges side.
 */
const conflicted = async (ours: (file: string) => void, theirs: (file: string) => void): Promise<string> => {
  const repo = makeRepo();
  for (const workstream of ['api', 'web'])
    expect((await runIn(repo, ['context', 'checkpoint', '--workstream', workstream, '--summary', 'S.'])).status).toBe(
      0,
    );
  commitAll(repo, 'base');
  const file = join(repo, ...CONTEXT_JSON);
  git(repo, 'checkout', '-q', '-b', 'side');
  expect(
    (await runIn(repo, ['context', 'checkpoint', '--branch', 'main', '--workstream', 'web', '--decision', 'Side?']))
      .status,
  ).toBe(0);
  theirs(file);
  commitAll(repo, 'side');
  git(repo, 'checkout', '-q', 'main');
  expect((await runIn(repo, ['context', 'checkpoint', '--workstream', 'web', '--decision', 'Main?'])).status).toBe(0);
  ours(file);
  commitAll(repo, 'main');
  expect(() => git(repo, 'merge', '-q', '--no-edit', 'side')).toThrow();
  expect(readFileSync(file, 'utf8')).toMatch(/^<{7} HEAD$/mu);
  return repo;
};

const editing =
  (edit: (stored: Stored) => void) =>
  (file: string): void => {
    const stored = readJson(file) as Stored;
    edit(stored);
    writeFileSync(file, `${JSON.stringify(stored, null, 2)}\n`);
  };

/** Breaks workstream api by hand (a decision of no known status), its summary set to `summary`. */
const breakApi = (summary: string) =>
  editing((stored) => {
    const api = stored.contexts.find((context) => context.key.workstream_id === 'api')!;
    api['open_decisions'] = [{ id: 'D1', text: 'Use REST', status: 'bogus' }];
    api['working_summary'] = { ...(api['working_summary'] as object), text: summary };
  });

const none = (): void => undefined;

/** The line of `file` that holds `text`, counted from 1. */
const lineHolding = (file: string, text: string): number =>
  readFileSync(file, 'utf8')
    .split('\n')
    .findIndex((line) => line.includes(text)) + 1;

describe('resolve on a conflict names the side it speaks of, in one line', SLOW, () => {
  it('refusing a merge for an entry ours keeps apart, says its place is counted in ours', async () => {
    const recordInApi = editing((stored) => {
      const api = stored.contexts.find((context) => context.key.workstream_id === 'api')!;
      api['open_decisions'] = [{ id: 'D1', text: 'Use gRPC', status: 'open' }];
    });
    const repo = await conflicted(breakApi('Broken.'), recordInApi);
    expectOneLineFailure(
      await runIn(repo, ['context', 'resolve']),
      /would stand beside another entry of its key, and not be served \(ours keeps one apart; in ours, contexts\[0\]\.open_decisions\[0\]\.status: /u,
    );
  });

  it('refusing a secret in an entry theirs keeps apart, names theirs, the entry and its workstream, never the secret', async () => {
    const secret = `AKIA${'ABCDEFGHIJKLMNOP'}`;
    const repo = await conflicted(none, breakApi(`Key ${secret}.`));
    const resolved = await runIn(repo, ['context', 'resolve']);
    expectOneLineFailure(
      resolved,
      /: in theirs, contexts\[0\] \(workstream api, branch main\) holds what looks like an AWS access key id in working_summary\.text: nothing is written/u,
    );
    expect(resolved.stderr).not.toContain(secret);
  });

  it('refusing a side that is not JSON, names it and gives the line of the file on disk, not of the side', async () => {
    const repo = await conflicted(none, (file) =>
      writeFileSync(file, readFileSync(file, 'utf8').replace('"Side?"', '"Side?" oops')),
    );
    const file = join(repo, ...CONTEXT_JSON);
    const before = readFileSync(file, 'utf8');
    // Ours' hunk and its markers stand before the broken line: in theirs alone, it is 3 lines up.
    const line = lineHolding(file, 'oops');
    const resolved = await runIn(repo, ['context', 'resolve']);
    expectOneLineFailure(
      resolved,
      new RegExp(
        `and theirs is not a context file: not valid JSON, .*\\(at line ${line}, column \\d+\\); nothing was written`,
        'u',
      ),
    );
    expect(readFileSync(file, 'utf8')).toBe(before);
  });
});
