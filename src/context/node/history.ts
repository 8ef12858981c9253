/**
 * The context file's history as git keeps it: the file as committed at a commit, and which of
 * two commits came first. What a move between branches reads their common ancestor from.
 */
import * as E from 'fp-ts/lib/Either.js';
import { CONTEXT_FILE_MAX_BYTES, type ContextFile } from '../model.js';
import { decodeContextFile } from '../schema.js';
import { gitPathOf } from './derived.js';
import { readBlob, runGit } from './git.js';
import { decodeText } from './read.js';
import type { Scope } from './scope.js';

/** The context file's history (a port the write shell gives an edit). */
export interface ContextHistory {
  /** The context file as committed at `commit`; undefined when git has none there, or it is no context file of this kind. */
  readonly fileAt: (commit: string) => Promise<ContextFile | undefined>;
  /** True when commit `earlier` is an ancestor of commit `later` (or the same); false when git cannot say. */
  readonly isAncestor: (earlier: string, later: string) => Promise<boolean>;
}

const COMMIT_ID = /^[0-9a-f]{40,64}$/u;

/** The history of the context file of `scope`, read with git on demand. */
export const contextHistory = (scope: Scope): ContextHistory => {
  const root = scope.paths.root;
  return {
    fileAt: async (commit) => {
      if (!COMMIT_ID.test(commit)) return undefined;
      const blob = await runGit(root, [
        'rev-parse',
        '--verify',
        '--quiet',
        `${commit}:${gitPathOf(scope, scope.paths.json)}`,
      ]);
      if (E.isLeft(blob)) return undefined;
      const bytes = await readBlob(root, blob.right.trim(), CONTEXT_FILE_MAX_BYTES);
      if (E.isLeft(bytes)) return undefined;
      const file = decodeText(bytes.right.toString('utf8'), (value) => decodeContextFile(value, scope.kind));
      return E.isRight(file) ? file.right : undefined;
    },
    isAncestor: async (earlier, later) =>
      COMMIT_ID.test(earlier) &&
      COMMIT_ID.test(later) &&
      E.isRight(await runGit(root, ['merge-base', '--is-ancestor', earlier, later])),
  };
};
