/**
 * The deterministic budgeter behind a context bundle. Each section is drafted as a header,
 * content lines in priority order and guidance lines; a section is rendered within a
 * [floor, cap] character range: content first (the last line clipped when it must be),
 * guidance until the floor is reached. The fitter then shrinks sections in a fixed order
 * while the bundle is over its total, and grows them while it is under, so every section
 * stays within its range and the bundle within its own.
 */
import { clipEnd, clipStart } from '../base/text.js';
import type { ContextKind } from './model.js';
import { PINNED_SECTION_MAX } from './pinned.js';

/** An inclusive range of characters (UTF-16 units). */
export interface CharRange {
  readonly min: number;
  readonly max: number;
}

/** The sections of a planning bundle. */
export type PlanningSection = 'repository' | 'pinned' | 'summary' | 'decisions' | 'files' | 'retrieved';
/** The sections of an implementation bundle. */
export type ImplementationSection = 'diff' | 'pinned' | 'checklist' | 'evidence' | 'retrieved';
/** Any bundle section. */
export type BundleSection = PlanningSection | ImplementationSection;

/** A bundle's total range and its sections' ranges. */
export interface BundleBudget {
  readonly total: CharRange;
  readonly sections: Readonly<Partial<Record<BundleSection, CharRange>>>;
}

const range = (min: number, max: number): CharRange => ({ min, max });

/** Both kinds reserve the same room for the pinned rules, which are never truncated. */
const PINNED_RANGE = range(250, PINNED_SECTION_MAX);

/** The spec's budgets: planning 1,800–2,200 characters, implementation 1,200–1,700, and each section's range. */
export const CONTEXT_BUDGETS: Readonly<Record<ContextKind, BundleBudget>> = {
  planning: {
    total: range(1800, 2200),
    sections: {
      pinned: PINNED_RANGE,
      repository: range(100, 150),
      decisions: range(400, 600),
      summary: range(500, 800),
      files: range(200, 300),
      retrieved: range(0, 300),
    },
  },
  implementation: {
    total: range(1200, 1700),
    sections: {
      pinned: PINNED_RANGE,
      diff: range(300, 600),
      checklist: range(250, 400),
      evidence: range(100, 150),
      retrieved: range(0, 200),
    },
  },
};

/**
 * One line of a section: a fixed prefix and a body. `end` clips the body's end, `start` its
 * start (a path's file name matters most), and `whole` never clips: the line is left out
 * instead (pinned rules).
 */
export interface DraftLine {
  readonly prefix: string;
  readonly body: string;
  readonly clip: 'end' | 'start' | 'whole';
}

/** A section before budgeting. An optional section with no content is left out entirely. */
export interface SectionDraft {
  readonly name: BundleSection;
  readonly header: string;
  readonly lines: ReadonlyArray<DraftLine>;
  readonly guidance: ReadonlyArray<DraftLine>;
  readonly optional: boolean;
}

/** The shortest clipped body worth a line. */
const MIN_BODY = 12;

/** Renders a section in at most `cap` characters and, unless it is left out, at least `floor`. */
export const renderSection = (draft: SectionDraft, floor: number, cap: number): string => {
  const optional = draft.optional && floor === 0;
  if (optional && draft.lines.length === 0) return '';
  const out = [clipEnd(draft.header, cap)];
  let length = out[0]!.length;
  /** Adds a line if it fits; false once the section is full. */
  const add = (line: DraftLine): { added: boolean; full: boolean } => {
    const room = cap - length - 1 - line.prefix.length;
    if (line.clip === 'whole') {
      if (line.body.length > room) return { added: false, full: false };
    } else if (room < Math.min(MIN_BODY, line.body.length)) return { added: false, full: true };
    const body = line.clip === 'start' ? clipStart(line.body, room) : clipEnd(line.body, room);
    out.push(line.prefix + body);
    length += 1 + line.prefix.length + body.length;
    return { added: true, full: body.length < line.body.length };
  };
  let content = 0;
  for (const line of draft.lines) {
    const { added, full } = add(line);
    if (added) content += 1;
    if (full) break;
  }
  if (optional && content === 0) return '';
  // Guidance fills up to the floor with whole lines first; only then is one clipped to fit.
  const left: DraftLine[] = [];
  for (const line of draft.guidance) {
    if (length >= floor) break;
    if (!add({ ...line, clip: 'whole' }).added) left.push(line);
  }
  for (const line of left) {
    if (length >= floor || add(line).full) break;
  }
  // Only a custom budget with a floor above every guidance line can get here.
  if (length < floor) out.push('.'.repeat(floor - length - 1));
  return out.join('\n');
};

/** The separator between a bundle's parts. */
export const SECTION_SEPARATOR = '\n\n';

const totalLength = (header: string, texts: ReadonlyMap<BundleSection, string>): number =>
  [...texts.values()].reduce(
    (sum, text) => (text === '' ? sum : sum + SECTION_SEPARATOR.length + text.length),
    header.length,
  );

/** The order sections give up characters in, and the order they take them in. */
export interface FitOrder {
  readonly shrink: ReadonlyArray<BundleSection>;
  readonly grow: ReadonlyArray<BundleSection>;
}

/**
 * Why `budget` cannot hold `drafts` under `header` in `order`, or undefined when it can: at
 * the least, every section that shrinks at its minimum and every other one at its maximum
 * must fit the total maximum; at the most, the sections that grow must reach the total minimum.
 */
export const budgetProblem = (
  header: string,
  drafts: ReadonlyArray<SectionDraft>,
  budget: BundleBudget,
  order: FitOrder,
): string | undefined => {
  const valid = (range: CharRange | undefined): range is CharRange =>
    range !== undefined &&
    Number.isSafeInteger(range.min) &&
    Number.isSafeInteger(range.max) &&
    range.min >= 0 &&
    range.min <= range.max;
  if (!valid(budget.total)) return 'the total range is not whole numbers with 0 <= min <= max';
  let least = header.length;
  let most = header.length;
  for (const draft of drafts) {
    const range = budget.sections[draft.name];
    if (!valid(range))
      return `the range of the ${draft.name} section is missing or not whole numbers with 0 <= min <= max`;
    least += SECTION_SEPARATOR.length + (order.shrink.includes(draft.name) ? range.min : range.max);
    if (!draft.optional) most += SECTION_SEPARATOR.length + (order.grow.includes(draft.name) ? range.max : range.min);
  }
  if (least > budget.total.max)
    return `the sections need up to ${least} characters, over the total maximum ${budget.total.max}`;
  if (most < budget.total.min)
    return `the sections reach at most ${most} characters, under the total minimum ${budget.total.min}`;
  return undefined;
};

/**
 * Renders every section within its range and the whole within `budget.total`: sections start
 * at their natural length (content up to the cap, guidance up to the floor), then give up
 * characters in `order.shrink` while the bundle is too long and take guidance in
 * `order.grow` while it is too short. `budgetProblem` must have accepted the budget.
 */
export const fitSections = (
  header: string,
  drafts: ReadonlyArray<SectionDraft>,
  budget: BundleBudget,
  order: FitOrder,
): ReadonlyMap<BundleSection, string> => {
  const range = (name: BundleSection): CharRange => budget.sections[name]!;
  const draftOf = new Map(drafts.map((draft) => [draft.name, draft]));
  const texts = new Map(
    drafts.map((draft) => [draft.name, renderSection(draft, range(draft.name).min, range(draft.name).max)]),
  );
  for (const name of order.shrink) {
    const excess = totalLength(header, texts) - budget.total.max;
    const draft = draftOf.get(name);
    if (excess <= 0) break;
    if (draft === undefined || texts.get(name) === '') continue;
    const { min } = range(name);
    texts.set(name, renderSection(draft, min, Math.max(min, texts.get(name)!.length - excess)));
  }
  for (const name of order.grow) {
    const length = totalLength(header, texts);
    const deficit = budget.total.min - length;
    const draft = draftOf.get(name);
    if (deficit <= 0) break;
    const current = texts.get(name);
    if (draft === undefined || current === undefined || current === '') continue;
    const cap = Math.min(range(name).max, current.length + (budget.total.max - length));
    texts.set(name, renderSection(draft, Math.min(cap, current.length + deficit), cap));
  }
  return texts;
};
