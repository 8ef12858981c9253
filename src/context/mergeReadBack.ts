/**
 * Whether the merge of a conflict's two sides reads back as it was merged. The merge keeps
 * every context a side kept apart exactly as that side held it, beside the merged contexts: a
 * kept-apart entry whose key a merged context holds too (one side broke workstream `api` by hand
 * while the other recorded in it; one side held `api` beside `api `) would hide that context at
 * the next read, or make the file two entries with one key, which the next write moves aside.
 */
import * as E from 'fp-ts/lib/Either.js';
import * as O from 'fp-ts/lib/Option.js';
import { inSide } from './conflictMarkers.js';
import { selectContext, selectQuarantined } from './contextFile.js';
import { isSameContextKey } from './key.js';
import type { ContextFile, ContextKey } from './model.js';
import { decodeContextFile, encodeContextFile } from './schema.js';
import { redactSecrets } from './secrets.js';

/** The two sides of a conflict, as merged. */
export interface ConflictFiles {
  readonly ours: ContextFile;
  readonly theirs: ContextFile;
}

/**
 * Why `merged`, the two sides of a conflict as one, would not read back with every merged
 * context served (the file refused, or a context kept apart beside another entry of its key);
 * undefined when it would. `sides` are the two sides merged, to name the entry a side kept apart.
 */
export const selectMergeReadBackProblem = (merged: ContextFile, sides: ConflictFiles): string | undefined => {
  // The very document a write would store, as the reader gets it back from disk.
  const read = decodeContextFile(JSON.parse(JSON.stringify(encodeContextFile(merged))), merged.kind);
  // A context a read decodes is still not served while an entry kept apart holds its key.
  const isServed = (key: ContextKey): boolean =>
    E.isRight(read) && O.isSome(selectContext(read.right, key)) && selectQuarantined(read.right, key) === undefined;
  const hidden = merged.contexts.find((context) => !isServed(context.key));
  const refused = E.isLeft(read) ? `the merged file would be refused (${read.left.message})` : undefined;
  if (hidden === undefined) return refused;
  const [apart] = (['ours', 'theirs'] as const).flatMap((side) =>
    (sides[side].quarantined ?? [])
      .filter((entry) => entry.key !== undefined && isSameContextKey(entry.key, hidden.key))
      .map((entry) => `${side} keeps one apart; ${inSide(side, entry.problem)}`),
  );
  return `merged, workstream ${redactSecrets(hidden.key.workstreamId)} (branch ${redactSecrets(hidden.key.branch)}) would stand beside another entry of its key, and ${refused ?? 'not be served'}${apart === undefined ? '' : ` (${apart})`}`;
};
