/**
 * Resolving a conflict where one side keeps a workstream apart (a hand edit broke it, or it is
 * stored as `api` beside `api `) while the other recorded in it: the merge would write the
 * merged context beside the entry kept apart under one key, which the next read would hide or
 * refuse as corrupt (and the next write move aside). It is refused instead, nothing written.
 * Real repositories, real merges, the CLI.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectOneLineFailure, runIn } from './cliRun.js';
import { commitAll, git, makeRepo } from './repo.js';

const CONTEXT_JSON = ['data', 'context', 'planning_context.json'];
const SLOW = { timeout: 120_000 } as const;

interface Stored {
  contexts: Array<Record<string, unknown> & { key: { workstream_id: string }; working_summary: { text: string } }>;
}

/** Edits the stored context file of `repo` by hand, as a teammate's editor or older tool would. */
const editStored = (repo: string, edit: (document: Stored) => void): void => {
  const path = join(repo, ...CONTEXT_JSON);
  const document = JSON.parse(readFileSync(path, 'utf8')) as Stored;
  edit(document);
  writeFileSync(path, `${JSON.stringify(document, null, 2)}\n`);
};

/** A repository on main in the middle of merging `feature`, whose hand edit of workstream api conflicts with main's checkpoint. */
const conflictWith = async (edit: (document: Stored) => void): Promise<string> => {
  const repo = makeRepo();
  expect((await runIn(repo, ['context', 'checkpoint', '--workstream', 'api', '--summary', 'First.'])).status).toBe(0);
  commitAll(repo, 'context');
  git(repo, 'checkout', '-q', '-b', 'feature');
  editStored(repo, (document) => {
    document.contexts[0]!.working_summary.text = 'Feature.';
    edit(document);
  });
  commitAll(repo, 'hand edit');
  git(repo, 'checkout', '-q', 'main');
  expect((await runIn(repo, ['context', 'checkpoint', '--workstream', 'api', '--summary', 'Main.'])).status).toBe(0);
  commitAll(repo, 'context again');
  expect(() => git(repo, 'merge', '-q', 'feature')).toThrow();
  return repo;
};

describe('a resolve that would write a workstream beside an entry kept apart under its key', () => {
  const cases: ReadonlyArray<readonly [string, (document: Stored) => void]> = [
    [
      'a side stores api beside "api "',
      (document) => {
        document.contexts.push({
          ...structuredClone(document.contexts[0]!),
          key: { ...document.contexts[0]!.key, workstream_id: 'api ' },
        });
      },
    ],
    [
      'a side broke api by hand',
      (document) => {
        document.contexts[0]!['recent_failures'] = 'none';
      },
    ],
  ];
  for (const [name, edit] of cases)
    it(
      `is refused in one line and leaves the conflicted file as it is, so nothing is hidden or moved aside (${name})`,
      SLOW,
      async () => {
        const repo = await conflictWith(edit);
        const path = join(repo, ...CONTEXT_JSON);
        const before = readFileSync(path, 'utf8');
        expectOneLineFailure(
          await runIn(repo, ['context', 'resolve']),
          /merged, workstream api \(branch main\) would stand beside another entry of its key.*nothing was written and the file was left as it is: set it right by hand \(git checkout --ours/u,
        );
        expect(readFileSync(path, 'utf8')).toBe(before);
        // Taking one side, as the refusal says, resolves it: main's own context is served.
        git(repo, 'checkout', '--ours', '--', CONTEXT_JSON.join('/'));
        const shown = await runIn(repo, ['context', 'show', '--workstream', 'api']);
        expect(shown.status).toBe(0);
        expect(shown.stdout).toContain('Main.');
      },
    );
});
