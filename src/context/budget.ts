/**
 * The deterministic budgeter behind a context bundle. Each section is drafted as a header,
 * content lines in priority order and guidance lines; a section is rendered within a
 * [floor, cap] character range: content first (the last line clipped when it must be),
 * guidance until the floor is reached. The fitter then shrinks sections in a fixed order
 * while the bundle is over its total, and grows them while it is under, so every section
 * stays within its range and the bundle within its own.
 */
import { number } from '../base/count.js';
import { clipEnd } from '../base/text.js';
import { deepFreeze } from '../persistent/freeze.js';
import type { ContextKind } from './model.js';
import { PINNED_SECTION_MAX } from './pinned.js';
import { clipEndRedacted, clipStartRedacted } from './secrets.js';

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
export const CONTEXT_BUDGETS: Readonly<Record<ContextKind, BundleBudget>> = deepFreeze({
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
});

/**
 * One line of a section: a fixed prefix and a body. `end` clips the body's end, `start` its
 * start (a path's file name matters most), and `whole` never clips: the line is left out
 * instead (pinned rules).
 */
export interface DraftLine {
  readonly prefix: string;
  readonly body: string;
  readonly clip: 'end' | 'start' | 'whole';
  /** What the line is one of (`decision`, `open step`, `changed file`): a cut of such lines is counted. */
  readonly tally?: string;
}

/** How many lines of each tally a section shows. */
export type Shown = (tally: string) => number;

/**
 * A section before budgeting. An optional section with no content is left out entirely. Every
 * cut is counted: lines of a tally that do not fit (and `omitted` ones, left out before
 * budgeting) are said in a last line, `- 3 more decisions not shown`, unless the header counts
 * them itself (`countedInHeader`, with a header made from what is shown).
 */
export interface SectionDraft {
  readonly name: BundleSection;
  readonly header: string | ((shown: Shown) => string);
  readonly lines: ReadonlyArray<DraftLine>;
  readonly guidance: ReadonlyArray<DraftLine>;
  readonly optional: boolean;
  /** Lines of a tally left out before budgeting (the checklist beyond the next steps). */
  readonly omitted?: Readonly<Record<string, number>>;
  /** The tally whose cut the header says (`last 4 of 5`): no last line for it. */
  readonly countedInHeader?: string;
  /** Where the lines cut can be read in full, said in the count line (default: `show` lists them). */
  readonly listedBy?: string;
}

/** The shortest clipped body worth a line. */
const MIN_BODY = 12;

/** How many lines of each tally `lines` hold, with those left out before budgeting. */
const tallyTotals = (draft: SectionDraft): Map<string, number> => {
  const totals = new Map<string, number>(Object.entries(draft.omitted ?? {}));
  for (const line of draft.lines)
    if (line.tally !== undefined) totals.set(line.tally, (totals.get(line.tally) ?? 0) + 1);
  return totals;
};

/** The header as drawn when `shown` lines of each tally are. */
const headerOf = (draft: SectionDraft, shown: Shown): string =>
  typeof draft.header === 'string' ? draft.header : draft.header(shown);

/** A tally's noun in the plural: `decisions`, `other branches`. */
const plural = (noun: string): string => (/(?:s|sh|ch|x)$/u.test(noun) ? `${noun}es` : `${noun}s`);

/** The last lines of a section: how many lines of each tally were cut. */
const tallyLines = (draft: SectionDraft, totals: ReadonlyMap<string, number>, shown: Shown): string[] =>
  [...totals]
    .filter(([tally, total]) => tally !== draft.countedInHeader && total > shown(tally))
    .map(
      ([tally, total]) =>
        `- ${number(total - shown(tally))} more ${plural(tally)} not shown (${draft.listedBy ?? 'fact-tracker context show lists them'})`,
    );

/** The section's content lines within `cap`: the lines drawn, their length, and how many of each tally. */
const renderContent = (
  draft: SectionDraft,
  header: string,
  cap: number,
): { out: string[]; length: number; content: number; counts: Map<string, number> } => {
  const out = [clipEnd(header, cap)];
  let length = out[0]!.length;
  let content = 0;
  const counts = new Map<string, number>();
  for (const line of draft.lines) {
    const { added, full } = addLine(out, length, cap, line);
    if (added) {
      length = added;
      content += 1;
      if (line.tally !== undefined) counts.set(line.tally, (counts.get(line.tally) ?? 0) + 1);
    }
    if (full) break;
  }
  return { out, length, content, counts };
};

/** Adds `line` to `out` (now `length` long) if it fits in `cap`: the new length, or 0; and whether the section is full. */
const addLine = (
  out: string[],
  length: number,
  cap: number,
  line: DraftLine,
): { readonly added: number; readonly full: boolean } => {
  const room = cap - length - 1 - line.prefix.length;
  if (line.clip === 'whole') {
    if (line.body.length > room) return { added: 0, full: false };
  } else if (room < Math.min(MIN_BODY, line.body.length)) return { added: 0, full: true };
  const body = line.clip === 'start' ? clipStartRedacted(line.body, room) : clipEndRedacted(line.body, room);
  out.push(line.prefix + body);
  return { added: length + 1 + line.prefix.length + body.length, full: body.length < line.body.length };
};

/** Renders a section in at most `cap` characters and, unless it is left out, at least `floor`. */
export const renderSection = (draft: SectionDraft, floor: number, cap: number): string => {
  const optional = draft.optional && floor === 0;
  if (optional && draft.lines.length === 0) return '';
  const totals = tallyTotals(draft);
  // The header drawn as if everything were shown is the longest it gets: room is kept for it.
  const widest = headerOf(draft, (tally) => totals.get(tally) ?? 0);
  let drawn = renderContent(draft, widest, cap);
  let shown: Shown = (tally) => drawn.counts.get(tally) ?? 0;
  let tallies = tallyLines(draft, totals, shown);
  if (tallies.length > 0) {
    // Room for the counts of what is cut, as long as they can get: then the content again within the rest.
    const reserve = tallyLines(draft, totals, () => 0).reduce((sum, line) => sum + 1 + line.length, 0);
    drawn = renderContent(draft, widest, Math.max(widest.length, cap - reserve));
    shown = (tally) => drawn.counts.get(tally) ?? 0;
    tallies = tallyLines(draft, totals, shown);
  }
  if (optional && drawn.content === 0 && tallies.length === 0) return '';
  const out = drawn.out;
  const drawnHeader = out[0]!;
  out[0] = clipEnd(headerOf(draft, shown), cap);
  let length = drawn.length - drawnHeader.length + out[0].length;
  let counted = 0;
  for (const line of tallies) {
    const added = addLine(out, length, cap, { prefix: '', body: line, clip: 'whole' }).added;
    if (added > 0) [length, counted] = [added, counted + 1];
  }
  // Lines none of which fit are still counted under the header; with no room for even that, the section gives way.
  if (optional && drawn.content === 0 && counted === 0) return '';
  // Guidance fills up to the floor with whole lines first; only then is one clipped to fit.
  const left: DraftLine[] = [];
  for (const line of draft.guidance) {
    if (length >= floor) break;
    const added = addLine(out, length, cap, { ...line, clip: 'whole' }).added;
    if (added > 0) length = added;
    else left.push(line);
  }
  for (const line of left) {
    if (length >= floor) break;
    const { added, full } = addLine(out, length, cap, line);
    if (added > 0) length = added;
    if (full) break;
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
    return `the sections need up to ${number(least)} characters, over the total maximum ${number(budget.total.max)}`;
  if (most < budget.total.min)
    return `the sections reach at most ${number(most)} characters, under the total minimum ${number(budget.total.min)}`;
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
