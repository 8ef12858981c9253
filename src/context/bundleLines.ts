/**
 * The lines a bundle is made of. Every piece of stored text is untrusted (it came from files and
 * models): each is whitespace-collapsed into the body of a line that starts with `- `, so none
 * can start a line of its own, let alone a `## ` section header or the `[Context Bundle]` line.
 */
import { clipEnd, collapseWhitespace } from '../base/text.js';
import type { DraftLine } from './budget.js';
import type { BundleInput } from './bundleModel.js';
import type { ChangedFile, StaleReason } from './checkpoint.js';
import type { ChecklistItem, ContextKind, RunFailure, SharedContext } from './model.js';
import { contextCommandLine, quoteArgument } from './notices.js';

const ITEM = 160;

/** Stored text on one line: whitespace, line breaks included, collapsed. */
export const text = (value: string): string => collapseWhitespace(value);

/** A bullet of stored text, clipped to one item's length (or kept whole). */
export const item = (body: string, clip: DraftLine['clip'] = 'end'): DraftLine => ({
  prefix: '- ',
  body: clipEnd(text(body), clip === 'whole' ? Infinity : ITEM),
  clip,
});

/** A bullet the budgeter may clip at its end. */
export const free = (body: string): DraftLine => ({ prefix: '- ', body: text(body), clip: 'end' });

/** Standing instructions, one bullet each, that fill a section up to its minimum. */
export const guide = (...lines: string[]): DraftLine[] =>
  lines.map((line) => ({ prefix: '- ', body: line, clip: 'end' }));

/** A commit id as people read it: seven digits, or `no commit`. */
export const short = (hash: string): string => (hash === '' ? 'no commit' : hash.slice(0, 7));

const REASONS: Readonly<Record<StaleReason, string>> = {
  not_a_git_repository: 'not a git repository',
  no_checkpoint: 'no checkpoint recorded',
  head_moved: 'HEAD moved',
  files_changed: 'tracked files changed',
  summary_changed: 'summary edited after the checkpoint',
  unverified: 'not verified against the repository',
};

/** The one-line repository status every bundle starts from. */
export const statusLine = ({ context, status }: BundleInput): DraftLine => {
  if (status.repository === 'none')
    return free('not a git repository: nothing can be verified, so treat the summary as stale');
  const head = short(status.head ?? '');
  if (!status.stale)
    return free(
      context.checkpoint === undefined || context.checkpoint.gitHead === status.head
        ? `checkpoint ${head}: repository unchanged, summary verified`
        : `checkpoint ${short(context.checkpoint.gitHead)}, HEAD now ${head}: tracked files unchanged, summary verified`,
    );
  const since = context.checkpoint === undefined ? '' : ` since checkpoint ${short(context.checkpoint.gitHead)}`;
  const moved =
    context.checkpoint !== undefined && status.head !== undefined && context.checkpoint.gitHead !== status.head
      ? `; HEAD is now ${head}`
      : '';
  return free(`STALE${since}: ${status.reasons.map((reason) => REASONS[reason]).join(', ')}${moved}`);
};

/**
 * What to say where there is no summary: when the context file holds this workstream under
 * another key (a renamed branch), where it is and the command that carries it here, instead of
 * telling the session to start from scratch; otherwise `fresh`.
 */
export const orElsewhere = (
  { context, elsewhere = [] }: BundleInput,
  kind: ContextKind,
  fresh: string,
): DraftLine[] => {
  if (context.checkpoint !== undefined || elsewhere.length === 0) return [free(fresh)];
  const branch = elsewhere.find((other) => other.repo === context.key.repo);
  return branch === undefined
    ? [
        free(
          `nothing is stored for branch ${context.key.branch}, but the context file holds this workstream under repo ${elsewhere[0]!.repo}, branch ${elsewhere[0]!.branch}: do not start from scratch; ask the user`,
        ),
      ]
    : [
        free(
          `nothing is stored for branch ${context.key.branch}, but this workstream's context is on branch ${branch.branch} (a renamed branch?): do not start from scratch`,
        ),
        free(
          `carry it here with ${contextCommandLine('move', kind, context.key.workstreamId, `--from ${quoteArgument(branch.branch)}`)}`,
        ),
      ];
};

/** One changed file: its status letter and path (a rename as `from -> to`), clipped at the start. */
export const changeLine = (change: ChangedFile): DraftLine => ({
  prefix: `- ${change.status.slice(0, 1)} `,
  body: text(change.from === undefined ? change.path : `${change.from} -> ${change.path}`),
  clip: 'start',
});

/** The changed files, at most `limit` of them and a count of the rest. */
export const changeLines = (changes: ReadonlyArray<ChangedFile>, limit: number): DraftLine[] => [
  ...changes.slice(0, limit).map(changeLine),
  ...(changes.length > limit
    ? [free(`... and ${changes.length - limit} more changed files (git diff --name-status against the checkpoint)`)]
    : []),
];

const failureLine = (failure: RunFailure): DraftLine =>
  item(`failed at ${text(failure.failedStep)}: ${text(failure.error)} (next: ${text(failure.nextAction)})`);

/** The last `count` failures, newest first. */
export const lastFailures = (context: SharedContext, count: number): DraftLine[] =>
  [...context.recentFailures].slice(-count).reverse().map(failureLine);

const NEXT_STEPS = 3;

/** The first open steps of the checklist. */
export const nextSteps = (context: SharedContext): ReadonlyArray<ChecklistItem> =>
  context.checklist.filter((step) => !step.done).slice(0, NEXT_STEPS);

/** The summary as one bullet per paragraph. */
export const summaryParagraphs = (summary: string): DraftLine[] =>
  summary
    .split(/\r\n|[\n\r\u000b\u000c\u0085\u2028\u2029]/u)
    .map(text)
    .filter((paragraph) => paragraph !== '')
    .map(free);

/** File pointers from the ledger (newest claims first) and the evidence that points at missing files. */
export const pointerLines = ({ context, status }: BundleInput): DraftLine[] => {
  const missing = status.missingEvidence.map((entry) => ({
    prefix: '- MISSING evidence ',
    body: text(entry.path),
    clip: 'start' as const,
  }));
  const seen = new Set<string>();
  const pointers: DraftLine[] = [];
  for (const claim of [...context.evidenceLedger].reverse())
    for (const file of claim.files) {
      const pointer = `${file.path}:${file.lines}`;
      if (seen.has(pointer) || status.missingEvidence.some((entry) => entry.path === file.path)) continue;
      seen.add(pointer);
      pointers.push({ prefix: '- evidence ', body: text(pointer), clip: 'start' });
    }
  return [...missing, ...pointers];
};
