/**
 * The context bundle: what a prompt gets from the shared context, in three tiers. Pinned rules
 * are never truncated; the working context (summary, decisions, checklist, file pointers)
 * fills its ranges; retrieved session facts come from the fact store and enter only above a
 * relevance threshold. A stale context gives a diff-first bundle: the changed files lead and
 * the summary is labelled stale. The sections are drafted in `bundleSections.ts` and fitted to
 * the kind's budget by `budget.ts`.
 */
import { kindOf, refuseArgument } from '../base/describe.js';
import { checkedContext, checkedKind } from './arguments.js';
import {
  type BundleBudget,
  budgetProblem,
  CONTEXT_BUDGETS,
  fitSections,
  type FitOrder,
  SECTION_SEPARATOR,
} from './budget.js';
import { DEFAULT_RELEVANCE_THRESHOLD, retrievedDraft, selectRelevantFacts } from './bundleFacts.js';
import { text } from './bundleLines.js';
import type { BundleInput, BundleOptions, ContextBundle } from './bundleModel.js';
import { implementationDrafts, planningDrafts } from './bundleSections.js';
import { unverifiedStatus } from './checkpoint.js';
import type { ContextKind, SharedContext } from './model.js';
import { pinnedSectionLength } from './pinned.js';
import { clipEndRedacted } from './secrets.js';

/** The first line of every bundle. */
export const CONTEXT_BUNDLE_HEADER = '[Context Bundle]';

const DEFAULT_LAST_DECISIONS = 5;

const DEFAULT_LAST_ERRORS = 2;

const KEY_PART = 40;

const ORDERS: Readonly<Record<ContextKind, FitOrder>> = {
  planning: {
    shrink: ['retrieved', 'files', 'decisions', 'summary', 'repository'],
    grow: ['summary', 'decisions', 'files', 'repository', 'pinned'],
  },
  implementation: {
    shrink: ['retrieved', 'checklist', 'diff', 'evidence'],
    grow: ['diff', 'checklist', 'evidence', 'pinned'],
  },
};

const budgetFor = (kind: ContextKind, budget: BundleOptions['budget']): BundleBudget => {
  const standard = CONTEXT_BUDGETS[kind];
  if (budget === undefined || budget === null) return standard;
  if (typeof budget !== 'number') {
    // A budget of another kind (a text from the environment) would otherwise fail deep inside the fitting.
    const sections: unknown = typeof budget === 'object' ? budget.sections : undefined;
    if (typeof sections !== 'object' || sections === null)
      refuseArgument('the budget', budget, 'a number or a bundle budget ({ total, sections })');
    return budget;
  }
  const max = Math.min(
    standard.total.max,
    Math.max(standard.total.min, Math.floor(Number.isFinite(budget) ? budget : standard.total.max)),
  );
  return { ...standard, total: { min: standard.total.min, max } };
};

/**
 * `budget` with room for every pinned rule whole: rules an older release pinned fit the pinned
 * range as it counted them, without the marks every bundle shows (see
 * `pinnedSectionLengthAsPinned`), and can pass its maximum by their marks.
 */
const withPinnedRoom = (budget: BundleBudget, pinned: number): BundleBudget => {
  const range = budget.sections.pinned;
  return range === undefined || range.max >= pinned
    ? budget
    : { ...budget, sections: { ...budget.sections, pinned: { ...range, max: pinned } } };
};

/** Renders the bundle's first line: the kind and the key, each part clipped. */
const bundleHeader = (kind: ContextKind, { context, status }: BundleInput): string =>
  `${CONTEXT_BUNDLE_HEADER} ${kind} · repo ${clipEndRedacted(text(context.key.repo), KEY_PART)} · branch ${clipEndRedacted(text(context.key.branch), KEY_PART)} · workstream ${clipEndRedacted(text(context.key.workstreamId), KEY_PART)}${status.stale ? ' · STALE' : ''}`;

const isBundleInput = (given: BundleInput | SharedContext): given is BundleInput =>
  'context' in given && 'status' in given;

/**
 * Builds the bundle a prompt gets for `input`, within the kind's budget: planning 1,800–2,200
 * characters, implementation 1,200–1,700, every section within its range. Pure and
 * deterministic: the same input gives the same text. A bare context, not verified by
 * `loadContext`, is bundled as stale. Throws a RangeError only for a custom budget that no
 * bundle could meet, and a TypeError for an argument of the wrong kind (programming errors).
 */
export const buildContextBundle = (given: BundleInput | SharedContext, options: BundleOptions): ContextBundle => {
  // Options without a kind, or an input that is none, are a programmer's mistake: said plainly.
  if (typeof options !== 'object' || options === null)
    throw new TypeError(`the options are ${kindOf(options)}, not an object ({ kind, budget, facts, ... })`);
  const kind = checkedKind(options.kind);
  if (typeof given !== 'object' || given === null)
    refuseArgument('the input', given, 'a bundle input ({ context, status }) or a shared context');
  const input = isBundleInput(given) ? given : { context: given, status: unverifiedStatus() };
  checkedContext(input.context);
  if (typeof input.status !== 'object' || input.status === null)
    refuseArgument('the status', input.status, 'a context status (loadContext gives one)');
  const { context, status } = input;
  // Facts that are none (null from an unset variable) read as none given, as every option does.
  const facts = options.facts ?? undefined;
  const threshold = facts?.threshold ?? DEFAULT_RELEVANCE_THRESHOLD;
  const retrieved = facts === undefined ? [] : selectRelevantFacts(facts, context.featureRequest);
  const lastErrors = options.lastErrors ?? DEFAULT_LAST_ERRORS;
  const working =
    kind === 'planning'
      ? planningDrafts(input, options.lastDecisions ?? DEFAULT_LAST_DECISIONS, lastErrors)
      : implementationDrafts(input, lastErrors);
  const drafts = [...working, retrievedDraft(retrieved, threshold)];
  const header = bundleHeader(kind, input);
  const asked = budgetFor(kind, options.budget);
  const roomy = withPinnedRoom(asked, pinnedSectionLength(context.pinnedRules, context.pinnedBy));
  const budget = budgetProblem(header, drafts, roomy, ORDERS[kind]) === undefined ? roomy : asked;
  const problem = budgetProblem(header, drafts, budget, ORDERS[kind]);
  if (problem !== undefined) throw new RangeError(`buildContextBundle: ${problem}`);
  const texts = fitSections(header, drafts, budget, ORDERS[kind]);
  const parts = drafts.map((draft) => texts.get(draft.name) ?? '');
  const bundle = [header, ...parts.filter((part) => part !== '')].join(SECTION_SEPARATOR);
  return {
    kind,
    text: bundle,
    chars: bundle.length,
    stale: status.stale,
    sections: drafts.map((draft) => ({
      name: draft.name,
      chars: texts.get(draft.name)?.length ?? 0,
      ...budget.sections[draft.name]!,
    })),
    retrieved,
  };
};
