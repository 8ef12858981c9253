/**
 * The lines a bundle is made of. Every piece of stored text is untrusted (it came from files and
 * models): each is whitespace-collapsed into the body of a line that starts with `- `, so none
 * can start a line of its own, let alone a `## ` section header or the `[Context Bundle]` line.
 */
import { collapseWhitespace } from '../base/text.js';
import type { DraftLine } from './budget.js';
import type { BundleInput } from './bundleModel.js';
import { type ChangedFile, type StaleReason, uncommittedNote } from './checkpoint.js';
import type { ChecklistItem, ContextKind, RunFailure, SharedContext } from './model.js';
import { branchRelation, countOf, likelyOrigin, moveCommand } from './notices.js';
import { splitParagraphs } from './paragraphs.js';
import { clipEndRedacted } from './secrets.js';

const ITEM = 160;

/** Stored text on one line: whitespace, line breaks included, collapsed. */
export const text = (value: string): string => collapseWhitespace(value);

/** A bullet of stored text, clipped to one item's length (or kept whole). */
export const item = (body: string, clip: DraftLine['clip'] = 'end'): DraftLine => ({
  prefix: '- ',
  body: clipEndRedacted(text(body), clip === 'whole' ? Infinity : ITEM),
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

/** Why a summary is stale, as people read it (`HEAD moved`). */
export const staleReasonText = (reason: StaleReason): string => REASONS[reason];

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

/** True when `context` holds something of its own though no checkpoint: a failure, a decision, a claim, a step or a run. */
const holdsEntries = (context: BundleInput['context']): boolean =>
  context.recentFailures.length > 0 ||
  context.openDecisions.length > 0 ||
  context.evidenceLedger.length > 0 ||
  context.checklist.length > 0 ||
  context.lastRun !== undefined;

/**
 * What to say where there is no summary: when the context file holds this workstream under
 * another key, where it is and what carries it here, instead of telling the session to start
 * from scratch (a new branch starts from a copy of the branch it was made from, which keeps its
 * own; a renamed branch takes its context along); otherwise `fresh`.
 */
export const orElsewhere = (
  { context, elsewhere = [], branchesPresent, renamedFrom }: BundleInput,
  kind: ContextKind,
  fresh: string,
): DraftLine[] => {
  if (context.checkpoint !== undefined || elsewhere.length === 0) return [free(fresh)];
  const here = holdsEntries(context)
    ? `no summary is stored for branch ${context.key.branch} yet (what it holds is listed here)`
    : `nothing is stored for branch ${context.key.branch}`;
  const other = likelyOrigin(context.key, elsewhere, branchesPresent, renamedFrom);
  if (other === undefined)
    return [
      free(
        `${here}, but the context file holds this workstream under repo ${elsewhere[0]!.repo}, branch ${elsewhere[0]!.branch}: do not start from scratch; ask the user`,
      ),
    ];
  const relation = branchRelation(other.branch, branchesPresent);
  const move = moveCommand(context.key, other.branch, kind, relation);
  return relation === 'made_from'
    ? [
        free(
          `branch ${context.key.branch} is new: this workstream's context is on branch ${other.branch}, which it was most likely made from; read it before starting`,
        ),
        free(`start from it with ${move} (${other.branch} keeps its own)`),
      ]
    : [
        free(
          `${here}, but this workstream's context is on branch ${other.branch} (a renamed branch?): do not start from scratch`,
        ),
        free(`carry it here with ${move}`),
      ];
};

/** What the workstream's contexts on other branches hold, one line each, and what carries them here. */
export const relatedLines = ({ context, related = [] }: BundleInput, kind: ContextKind): DraftLine[] =>
  related.map((other) => ({
    ...free(
      `branch ${other.key.branch} holds this workstream too (${countOf(other.openDecisions.length, 'decision')}, ${countOf(other.evidenceLedger.length, 'claim')}): ${moveCommand(context.key, other.key.branch, kind, 'unknown')} carries them here`,
    ),
    tally: 'other branch',
  }));

/** The tool sessions of this machine, which a session may resume: best effort, never in a committed file. */
export const sessionLines = ({ sessions = {} }: BundleInput): DraftLine[] => {
  const tools = Object.entries(sessions);
  return tools.length === 0
    ? []
    : [
        free(
          `tool sessions on this machine (resume if you can; never commit them): ${tools.map(([tool, session]) => `${tool} ${session.id}`).join(', ')}`,
        ),
      ];
};

/** One changed file: its status letter and path (a rename as `from -> to`), clipped at the start. */
const changeLine = (change: ChangedFile): DraftLine => ({
  prefix: `- ${change.status.slice(0, 1)} `,
  body: text(change.from === undefined ? change.path : `${change.from} -> ${change.path}`),
  clip: 'start',
  tally: 'changed file',
});

/**
 * Why the repository could not be read or the changed files are unknown, said whole: cut, the
 * one line that explains a stale bundle without files would explain nothing. That the
 * checkpoint was recorded over uncommitted edits is a line of its own: joined to the other, the
 * two outgrew a section and neither was said.
 */
const noteLines = ({ context, status }: BundleInput): DraftLine[] => {
  if (status.note === undefined) return [];
  const uncommitted = uncommittedNote(context, status.reasons);
  const notes =
    uncommitted !== undefined && status.note.endsWith(uncommitted)
      ? [status.note.slice(0, -uncommitted.length).replace(/; $/u, ''), uncommitted]
      : [status.note];
  return notes.filter((note) => note !== '').map((note) => ({ prefix: '- ', body: text(note), clip: 'whole' }));
};

/**
 * The changed files with the note: the first changed file, then the note, then the others. A
 * stale bundle with changes always shows one of them before anything else, however long the
 * note; one without changes leads with the note, which says why.
 */
export const changeLines = (input: BundleInput, changes: ReadonlyArray<ChangedFile>): DraftLine[] => [
  ...changes.slice(0, 1).map(changeLine),
  ...noteLines(input),
  ...changes.slice(1).map(changeLine),
];

const failureLine = (failure: RunFailure): DraftLine => ({
  ...item(`failed at ${text(failure.failedStep)}: ${text(failure.error)} (next: ${text(failure.nextAction)})`),
  tally: 'failure',
});

/** The last `count` failures, newest first. */
export const lastFailures = (context: SharedContext, count: number): DraftLine[] =>
  [...context.recentFailures].slice(-count).reverse().map(failureLine);

const NEXT_STEPS = 3;

/** The first open steps of the checklist. */
export const nextSteps = (context: SharedContext): ReadonlyArray<ChecklistItem> =>
  openSteps(context).slice(0, NEXT_STEPS);

/** The open steps of the checklist. */
export const openSteps = (context: SharedContext): ReadonlyArray<ChecklistItem> =>
  context.checklist.filter((step) => !step.done);

/** One open step as a bundle line, counted when cut. */
export const stepLine = (body: string): DraftLine => ({ ...item(body), tally: 'open step' });

/** The summary as one bullet per paragraph. */
export const summaryParagraphs = (summary: string): DraftLine[] => splitParagraphs(summary).map(free);

/**
 * File pointers from the ledger (newest claims first), the evidence that points at missing
 * files, and the ranges past the end of their file as it is now (a teammate shrank it): those
 * are flagged, never shown as valid.
 */
export const pointerLines = ({ context, status }: BundleInput): DraftLine[] => {
  const missing = status.missingEvidence.map((entry): DraftLine => ({
    prefix: '- MISSING evidence ',
    body: text(entry.path),
    clip: 'start',
    tally: 'evidence pointer',
  }));
  const pastEnd = status.pastEndEvidence ?? [];
  const flagged = pastEnd.map((entry): DraftLine => ({
    prefix: '- PAST END evidence ',
    body: text(`${entry.path}:${entry.lines} (${countOf(entry.length, 'line')})`),
    clip: 'start',
    tally: 'evidence pointer',
  }));
  const seen = new Set(pastEnd.map((entry) => `${entry.path}:${entry.lines}`));
  const pointers: DraftLine[] = [];
  for (const claim of [...context.evidenceLedger].reverse())
    for (const file of claim.files) {
      const pointer = `${file.path}:${file.lines}`;
      if (seen.has(pointer) || status.missingEvidence.some((entry) => entry.path === file.path)) continue;
      seen.add(pointer);
      pointers.push({ prefix: '- evidence ', body: text(pointer), clip: 'start', tally: 'evidence pointer' });
    }
  return [...missing, ...flagged, ...pointers];
};
