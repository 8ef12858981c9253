/**
 * The last stage of retrieval: candidates in rank order, at most `maxFacts`, then the token
 * budget measured on the section exactly as the caller renders it (the renderer is an
 * argument: retrieval knows how a section costs, not how it looks).
 */
import type { SessionFact } from '../fact.js';
import { checkedTokenCount } from '../../tokens/checked.js';
import type { TokenCounter } from '../../tokens/estimate.js';
import type { SectionLayout } from './defaults.js';

/**
 * Renders the facts of a section in a layout, header included (what the budget is measured on).
 * `extend`, when given, returns the section of one more fact from the section before it, exactly
 * the string `render` would draw for both (undefined when the layout does not grow line by line):
 * the budget stage then appends a line instead of drawing the whole section for every candidate.
 */
export type SectionRenderer = ((facts: ReadonlyArray<SessionFact>, layout: SectionLayout) => string) & {
  readonly extend?: (section: string, fact: SessionFact, layout: SectionLayout) => string | undefined;
  /** The characters one fact adds to a section in a layout, its line break or separator included (what the fill order weighs). */
  readonly addedLength: (fact: SessionFact, layout: SectionLayout) => number;
};

/** What the budget stage needs to know. */
export interface BudgetSettings {
  readonly maxFacts: number;
  readonly maxTokens: number;
  readonly countTokens: TokenCounter;
  readonly render: SectionRenderer;
  readonly layout: SectionLayout;
}

/** Why the budget stage left a candidate out. */
export type BudgetReason = 'max_facts' | 'budget';

/**
 * True when the counter says the section fits. An answer that is no number of tokens throws a
 * TypeError naming `countTokens` (`checkedTokenCount`): read as a count, NaN or a string would
 * leave the section silently empty, and a negative would let it past the budget.
 */
export const fitsBudget = (section: string, maxTokens: number, countTokens: TokenCounter): boolean =>
  checkedTokenCount(countTokens(section)) <= maxTokens;

/**
 * Why each ranked fact is left out, if it is: past `maxFacts`, or its line would take the
 * section over the budget (a fact that does not fit is skipped, and smaller later ones are
 * still tried); undefined for a fact the section takes.
 */
export const fitToBudget = (
  settings: BudgetSettings,
  ranked: ReadonlyArray<SessionFact>,
): Array<BudgetReason | undefined> => {
  const { render, layout } = settings;
  const included: SessionFact[] = [];
  const reasons: Array<BudgetReason | undefined> = [];
  let section = '';
  for (let rank = 0; rank < ranked.length; rank += 1) {
    if (rank >= settings.maxFacts) {
      reasons.push('max_facts');
      continue;
    }
    const fact = ranked[rank]!;
    const next =
      (included.length > 0 ? render.extend?.(section, fact, layout) : undefined) ?? render([...included, fact], layout);
    if (!fitsBudget(next, settings.maxTokens, settings.countTokens)) {
      reasons.push('budget');
      continue;
    }
    included.push(fact);
    section = next;
    reasons.push(undefined);
  }
  return reasons;
};
