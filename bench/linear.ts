/**
 * Untrusted text in linear time: every function that reads text a model, a history, a hook
 * payload or a command line hands in, fed runs of one character (each ASCII punctuation
 * character, a space, letters, digits) of 10,000 and 100,000 characters. A linear function
 * takes about 10 times longer on the long run; a pattern that backtracks over the run (an
 * unanchored `[.!]+$`, a lazy group before a greedy one) takes about 100 times longer, and
 * seconds at 100,000.
 *
 * The cases run on the source modules: `test/linear.test.ts` checks them, `npm run bench`
 * reports them (section `linear`).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { parseCommandLine } from '../src/cli/args.js';
import { parseFileEvidence } from '../src/cli/contextArgs.js';
import { isSavedStateStart, parseSavedState } from '../src/cli/source.js';
import { parseContextKey, sanitizeKeyPart } from '../src/context/key.js';
import { isCompletionClaim, normalizeEvidencePath, parseClaim, parseLineRange } from '../src/context/ledger.js';
import { hasConflictMarkers, splitConflictMarkers } from '../src/context/conflictMarkers.js';
import type { RepositorySnapshot } from '../src/context/checkpoint.js';
import { normalizeRemoteUrl } from '../src/context/repository.js';
import { parseJsonText } from '../src/context/jsonText.js';
import { findSecret } from '../src/context/secrets.js';
import { applyRunOutcome } from '../src/context/runOutcome.js';
import { emptySharedContext } from '../src/context/update.js';
import { normalizeTaskId } from '../src/core/extract/extractor.js';
import { freeText, isPlaceholder, pathText } from '../src/core/extract/rule.js';
import { mentionsConvention } from '../src/core/extract/rules.js';
import { parseHistory, parseHistoryLine } from '../src/core/history/events.js';
import { linesOfText } from '../src/core/history/lines.js';
import { parseHookEvent, selectTaskId } from '../src/live/hook/payload.js';
import {
  addFacts,
  createFactTracker,
  emptyFactStore,
  extractFromImplementer,
  extractFromReviewer,
  formatFactLine,
  makeFact,
  parseDispatchOutput,
  parseIsoTime,
  retrieveFacts,
  type SessionFact,
} from '../src/index.js';
import { parseTimeArgument } from '../src/base/time.js';
import { factKey, normalizeCategoryName, normalizeFactText } from '../src/notes/model.js';
import { parseNotableFactsResponse } from '../src/notes/parse.js';
import { parseNotesLogLine } from '../src/notes/log.js';
import { fileNameOf } from '../src/core/search/searchIndex.js';
import { priorFlags } from '../src/core/search/priors.js';
import { isPathLike, mentionedPaths, queryTerms, textTerms } from '../src/core/search/terms.js';
import { parseSessionId } from '../src/live/session/id.js';
import { countO200kTokens } from '../src/tokens/o200k.js';

/** Where the runs of `character` go for `linear`: its own placements, else the default ones. */
export const runsAround = (linear: LinearCase, character: string): ReadonlyArray<readonly [string, string]> =>
  linear.around ?? defaultAround(character);

/** One function reading untrusted text. */
export interface LinearCase {
  readonly name: string;
  /** Calls the function with `text` where it reads untrusted text. */
  readonly run: (text: string) => unknown;
  /** Text around the run, [before, after], when a run alone would not reach the pattern (a `Task ID:` line, say). */
  readonly around?: ReadonlyArray<readonly [string, string]>;
}

/** The characters of the runs: every ASCII punctuation character, a space, letters and digits. */
export const RUN_CHARACTERS: ReadonlyArray<string> = [...'!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~', ' ', 'a', 'A', '7'];

/** The two run lengths compared. */
export const RUN_LENGTHS = [10_000, 100_000] as const;

/** A character of another class than `character`: it ends a run, so a pattern anchored at the end must fail over it. */
const otherThan = (character: string): string => (/[\p{L}\p{N}]/u.test(character) ? '!' : 'x');

/** Where a run goes by default: at the start, ended by another character, and inside a text. */
const defaultAround = (character: string): ReadonlyArray<readonly [string, string]> => {
  const other = otherThan(character);
  return [
    ['', other],
    [other, other],
  ];
};

const fact = (fields: Partial<SessionFact>): SessionFact =>
  makeFact({
    subject: 'src/a.ts',
    relation: 'modified_by',
    object: 'task:1',
    tags: ['file_change'],
    validFrom: 1,
    sourceTaskId: '1',
    sourceRole: 'implementer',
    confidence: 1,
    ...fields,
  });

const store = addFacts(emptyFactStore(), [
  fact({}),
  fact({ subject: 'task:1', relation: 'decided', object: 'use a token bucket for rate limiting', tags: ['decision'] }),
]);

const implementer = (fields: Record<string, unknown>) =>
  extractFromImplementer(
    { task_id: '1', status: 'completed', summary: 'done', ...fields } as Parameters<typeof extractFromImplementer>[0],
    '1',
    1,
  );
const reviewer = (fields: Record<string, unknown>) =>
  extractFromReviewer(
    { task_id: '1', assessment: 'needs_changes', ...fields } as Parameters<typeof extractFromReviewer>[0],
    '1',
    1,
  );
const issue = (fields: Record<string, unknown>) => ({ severity: 'minor', message: 'm', fix: 'f', ...fields });

const raw = (result: unknown): string =>
  `Done.\nBEGIN_DISPATCH_RESULT\n${JSON.stringify(result)}\nEND_DISPATCH_RESULT\n`;

const GIT: RepositorySnapshot = { kind: 'git', head: 'a'.repeat(40), trackedFilesHash: 'f'.repeat(32) };
const context = emptySharedContext({ repo: 'r', branch: 'main', workstreamId: 'default' });
const succeeded = (fields: Record<string, unknown>) =>
  applyRunOutcome(context, { status: 'succeeded', ...fields } as never, 1_000, GIT);
const failed = (fields: Record<string, unknown>) =>
  applyRunOutcome(
    context,
    { status: 'failed', failedStep: 's', error: 'e', nextAction: 'n', ...fields } as never,
    1_000,
    GIT,
  );

/**
 * Every function that reads untrusted text, by where the text comes from. Not here: what only
 * renders fields the context file's schema has already bounded (at most 4,000 characters, the
 * summary), such as the dashboard's Markdown escaping.
 */
export const LINEAR_CASES: ReadonlyArray<LinearCase> = [
  // Dispatch results: each field an agent writes, through the extraction rules.
  { name: 'extraction: summary', run: (text) => implementer({ summary: text }) },
  { name: 'extraction: files_changed entry', run: (text) => implementer({ files_changed: [text] }) },
  { name: 'extraction: files_modified entry', run: (text) => implementer({ files_modified: [text] }) },
  { name: 'extraction: tests command', run: (text) => implementer({ tests: [{ command: text, passed: true }] }) },
  {
    name: 'extraction: tests failures entry',
    run: (text) => implementer({ tests: [{ command: 'npm test', passed: false, failures: [text] }] }),
  },
  { name: 'extraction: follow_up_actions entry', run: (text) => implementer({ follow_up_actions: [text] }) },
  { name: 'extraction: strengths entry', run: (text) => reviewer({ strengths: [text] }) },
  { name: 'extraction: issue file', run: (text) => reviewer({ issues: [issue({ file: text })] }) },
  { name: 'extraction: issue message', run: (text) => reviewer({ issues: [issue({ message: text })] }) },
  { name: 'extraction: issue fix', run: (text) => reviewer({ issues: [issue({ fix: text })] }) },
  { name: 'extraction: required_fixes entry', run: (text) => reviewer({ required_fixes: [text] }) },
  { name: 'extraction: task id', run: (text) => normalizeTaskId(text) },
  { name: 'isPlaceholder', run: isPlaceholder },
  { name: 'freeText', run: freeText },
  { name: 'pathText', run: pathText },
  { name: 'mentionsConvention', run: mentionsConvention },
  // Parsers of agent output, histories, saved states and times.
  { name: 'parseDispatchOutput: raw output', run: (text) => parseDispatchOutput(text, 'implementer') },
  {
    name: 'parseDispatchOutput: a field of the result',
    run: (text) => parseDispatchOutput(raw({ task_id: '1', status: 'completed', summary: text }), 'implementer'),
  },
  {
    name: 'ingestOutput: a follow-up of a raw result',
    run: (text) =>
      createFactTracker({ clock: () => 1 }).ingestOutput({
        role: 'implementer',
        taskId: '1',
        output: raw({ task_id: '1', status: 'completed', summary: 's', follow_up_actions: [text] }),
      }),
  },
  { name: 'parseHistoryLine: a line', run: (text) => parseHistoryLine(text, 1, undefined) },
  {
    name: 'parseHistoryLine: a task prompt',
    run: (text) => parseHistoryLine(JSON.stringify({ type: 'prompt', taskId: '1', taskPrompt: text }), 1, undefined),
  },
  { name: 'parseHistory', run: parseHistory },
  { name: 'linesOfText', run: linesOfText },
  { name: 'isSavedStateStart', run: isSavedStateStart },
  { name: 'parseSavedState', run: parseSavedState },
  { name: 'parseIsoTime', run: parseIsoTime },
  { name: 'parseTimeArgument', run: parseTimeArgument },
  { name: 'parseSessionId', run: parseSessionId },
  { name: 'parseCommandLine: a history path', run: (text) => parseCommandLine(['replay', text]) },
  {
    name: 'parseCommandLine: an option value',
    run: (text) => parseCommandLine(['replay', 'h.jsonl', '--as-of', text]),
  },
  // Hook payloads.
  { name: 'parseHookEvent', run: parseHookEvent },
  {
    name: 'selectTaskId',
    run: (text) => selectTaskId({ prompt: text }),
    around: [
      ['Task ID: a', 'b'],
      ['Task ID:', ''],
      ['', 'Task ID: a'],
    ],
  },
  // Tokenizers, the file-name patterns, retrieval and rendering.
  { name: 'textTerms', run: textTerms },
  { name: 'queryTerms', run: queryTerms },
  { name: 'mentionedPaths', run: mentionedPaths },
  { name: 'isPathLike', run: isPathLike },
  { name: 'countO200kTokens', run: countO200kTokens },
  { name: 'priorFlags: a subject (file-name patterns)', run: (text) => priorFlags(fact({ subject: text })) },
  { name: 'fileNameOf', run: fileNameOf },
  {
    name: 'retrieveFacts: a task prompt',
    run: (text) => retrieveFacts(store, { taskDescription: text, taskId: '2', maxFacts: 10, maxTokens: 500 }),
  },
  { name: 'formatFactLine', run: (text) => formatFactLine(fact({ object: text, subject: text })) },
  // The notes ledger: model answers and conversation logs.
  { name: 'parseNotableFactsResponse', run: (text) => parseNotableFactsResponse(text) },
  {
    name: 'parseNotableFactsResponse: a fact',
    run: (text) => parseNotableFactsResponse(JSON.stringify({ notableFacts: [{ category: 'History', fact: text }] })),
  },
  { name: 'normalizeFactText', run: normalizeFactText },
  { name: 'factKey', run: (text) => factKey({ fact: text }) },
  { name: 'normalizeCategoryName', run: normalizeCategoryName },
  { name: 'parseNotesLogLine', run: (text) => parseNotesLogLine(text, 1, undefined) },
  // The shared context: what the context commands are given.
  {
    name: 'context checkpoint: command line',
    run: (text) =>
      parseCommandLine(['context', 'checkpoint', '--summary', text, '--decision', text, '--step', text, '--pin', text]),
  },
  {
    name: 'context claim: command line',
    run: (text) => parseCommandLine(['context', 'claim', text, '--file', `${text}:L1`, '--symbol', text]),
  },
  { name: 'context: summary', run: (text) => succeeded({ summary: text }) },
  { name: 'context: feature request', run: (text) => succeeded({ featureRequest: text }) },
  { name: 'context: pinned rule', run: (text) => succeeded({ pinRules: [text] }) },
  { name: 'context: decision', run: (text) => succeeded({ decisions: [text] }) },
  { name: 'context: checklist step', run: (text) => succeeded({ checklist: [text] }) },
  { name: 'context: failure', run: (text) => failed({ failedStep: text, error: text, nextAction: text }) },
  { name: 'parseClaim: text', run: (text) => parseClaim({ claim: text }) },
  { name: 'parseClaim: evidence', run: (text) => parseClaim({ claim: 'c', files: [{ path: text, lines: text }] }) },
  { name: 'isCompletionClaim', run: isCompletionClaim },
  { name: 'parseLineRange', run: parseLineRange },
  { name: 'normalizeEvidencePath', run: normalizeEvidencePath },
  { name: 'parseFileEvidence', run: parseFileEvidence },
  { name: 'findSecret', run: findSecret },
  { name: 'sanitizeKeyPart', run: sanitizeKeyPart },
  { name: 'parseContextKey', run: (text) => parseContextKey({ repo: text, branch: text, workstreamId: text }) },
  { name: 'normalizeRemoteUrl', run: normalizeRemoteUrl },
  { name: 'splitConflictMarkers', run: splitConflictMarkers },
  { name: 'hasConflictMarkers', run: hasConflictMarkers },
  { name: 'parseJsonText', run: parseJsonText },
];

/** How one case grows from 10,000 to 100,000 characters, at its worst run. */
export interface LinearRow {
  readonly name: string;
  /** Milliseconds at 10,000 and 100,000 characters for the worst run, and their ratio. */
  readonly small: number;
  readonly large: number;
  readonly ratio: number;
  /** When the ratio passed its bound: how the time grew again from 100,000 to 200,000 characters. */
  readonly doubling?: number;
  /** The worst run: its character and what was around it. */
  readonly character: string;
  readonly around: readonly [string, string];
}

/** A linear function grows about 10 times from 10,000 to 100,000 characters; a quadratic one about 100. */
export const GROWTH_BOUND = 40;
/**
 * And about 2 and 4 times from 100,000 to 200,000. A linear function that allocates as it goes
 * can pass the first bound on a loaded machine (100,000 characters' worth of objects no longer
 * dies young: the collector copies it), never this one too.
 */
export const DOUBLING_BOUND = 3;

/** Milliseconds below this count as this: a ratio of microsecond timings would be noise. */
const FLOOR_MS = 0.25;

/**
 * A scavenge of the young generation before each timing, when the engine lets one be asked
 * for: no timing pays for an earlier one's garbage. (A full collection would cost more than
 * most timings.)
 */
const collect = ((): (() => void) => {
  try {
    setFlagsFromString('--expose-gc');
    const gc: unknown = runInNewContext('gc');
    if (typeof gc === 'function') return () => (gc as (options: object) => void)({ type: 'minor' });
  } catch {
    // Without it the timings only carry more noise.
  }
  return () => undefined;
})();

let fresh = 0;

/** The text of one run: `length` times `character`, between the two sides of `around`. */
export const runText = (character: string, around: readonly [string, string], length: number): string =>
  `${around[0]}${character.repeat(length)}${around[1]}`;

/**
 * The fastest of `repeats` calls, each on a run a little longer than the last: a text is never
 * given twice, so a memoized function (terms, a tokenizer's merge cache) is timed computing,
 * not remembering.
 */
const best = (
  linear: LinearCase,
  character: string,
  around: readonly [string, string],
  length: number,
  repeats: number,
): number => {
  let fastest = Infinity;
  for (let i = 0; i < repeats; i += 1) {
    fresh = (fresh + 1) % 64;
    const text = runText(character, around, length + fresh);
    collect();
    const start = performance.now();
    linear.run(text);
    fastest = Math.min(fastest, performance.now() - start);
  }
  return fastest;
};

/** A timing this long is no scheduling blip: measured once more only if its ratio is near the bound. */
const LONG_MS = 100;
/** Past this, 100,000 characters took long enough to be no allocation effect: about 10 us a character. */
const SLOW_MS = 1_000;

/**
 * The case's worst growth over every run character and placement: the best of 3 timings at
 * 10,000 characters against one at 100,000. A ratio past half the bound is measured
 * again with more timings (7 and 5: a pause of a shared core stretches one timing, never the
 * best of several), unless it is far past it in long timings; one still past the bound is
 * timed at 200,000 characters too, and settles the case.
 */
export const measureLinearCase = (linear: LinearCase): LinearRow => {
  let worst: LinearRow | undefined;
  const [shortRun, longRun] = RUN_LENGTHS;
  for (const character of RUN_CHARACTERS)
    for (const around of runsAround(linear, character)) {
      let small = best(linear, character, around, shortRun, 3);
      let large = best(linear, character, around, longRun, 1);
      const first = large / Math.max(small, FLOOR_MS);
      if (first > GROWTH_BOUND / 2 && !(first > 2 * GROWTH_BOUND && large > LONG_MS)) {
        small = best(linear, character, around, shortRun, 7);
        large = best(linear, character, around, longRun, 5);
      }
      const ratio = large / Math.max(small, FLOOR_MS);
      const row: LinearRow = { name: linear.name, small, large, ratio, character, around };
      if (ratio > GROWTH_BOUND) {
        const doubled = best(linear, character, around, 2 * longRun, large > SLOW_MS ? 1 : 3);
        const checked = { ...row, doubling: doubled / Math.max(large, FLOOR_MS) };
        if (isSuperlinear(checked)) return checked;
        if (worst === undefined || checked.ratio > worst.ratio) worst = checked;
      } else if (worst === undefined || row.ratio > worst.ratio) worst = row;
    }
  return worst!;
};

/**
 * Below this at 100,000 characters a row is not superlinear whatever its ratios: on a loaded
 * machine a few milliseconds can grow 40 times from noise alone, and the quadratic patterns
 * this looks for took seconds there.
 */
const NOTICEABLE_MS = 500;

/**
 * True when a row grew faster than linearly: past the bound from 10,000 to 100,000 characters,
 * noticeable at 100,000, and then past the doubling bound to 200,000, or slow outright at 100,000.
 */
export const isSuperlinear = (row: LinearRow): boolean =>
  row.ratio > GROWTH_BOUND &&
  row.large > NOTICEABLE_MS &&
  ((row.doubling ?? 0) > DOUBLING_BOUND || row.large > SLOW_MS);
