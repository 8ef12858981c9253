/**
 * Where context lives in a repository: `data/context/`, one JSON file per kind (committed),
 * its markdown dashboard next to it (committed, never read back), and the tool sessions in
 * `*.local.json` files that stay on one machine.
 */
import { checkedKind } from './arguments.js';
import type { ContextKind } from './model.js';

/** The directory of the context files, relative to the repository root. */
export const CONTEXT_DIRECTORY = 'data/context';

/** The file names of one kind, inside `CONTEXT_DIRECTORY`. */
export interface ContextFileNames {
  /** The source of truth: `planning_context.json`. */
  readonly json: string;
  /** Tool session ids, local to a machine: `planning_sessions.local.json`. */
  readonly sessions: string;
  /** The generated dashboard: `planning_context.md`. */
  readonly dashboard: string;
}

/** The file names of `kind`. */
export const contextFileNames = (kind: ContextKind): ContextFileNames => ({
  json: `${checkedKind(kind)}_context.json`,
  sessions: `${kind}_sessions.local.json`,
  dashboard: `${kind}_context.md`,
});

/** The `.gitignore` written into a new context directory: local sessions and write leftovers stay out of git. */
export const CONTEXT_GITIGNORE = `# Written by session-fact-tracker. Tool session ids are local to one machine:
# never commit them. The rest are leftovers of interrupted writes and locks.
*.local.json
*.tmp
*.lock
*.corrupt
`;
