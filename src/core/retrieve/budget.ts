/**
 * The last stage of retrieval: candidates in rank order, at most `maxFacts`, then the token
 * budget measured on the section exactly as the caller renders it (the renderer is an
 * argument: retrieval knows how a section costs, not how it looks).
 */
import type { SessionFact } from '../fact.js';
import { checkedTokenCount } from '../../tokens/checked.js';
import { estimateTokens, estimateTokensOfLength, type TokenCounter } from '../../tokens/estimate.js';
import type { SectionLayout } from './defaults.js';

/**
 * Renders the facts of a section in a layout, header included (what the budget is measured on).
 * `fill` starts an empty section that the budget stage fills one fact at a time, each trial
 * exactly the string `render` would draw of the facts taken and the one tried, so that the stage
 * does not draw the whole section again for every candidate.
 */
export type SectionRenderer = ((facts: ReadonlyArray<SessionFact>, layout: SectionLayout) => string) & {
  readonly fill: (layout: SectionLayout) => SectionFill;
  /** The characters one fact adds to a section in a layout, its line break or separator included (what the fill order weighs). */
  readonly addedLength: (fact: SessionFact, layout: SectionLayout) => number;
};

/** A section filled one fact at a time: `tryFact` gives the section with one more fact, which its trial takes or not. */
export interface SectionFill {
  readonly tryFact: (fact: SessionFact) => SectionTrial;
}

/** The section with the fact tried: its length, its text (drawn when asked), and taking the fact. */
export interface SectionTrial {
  /** The section's length in UTF-16 units. */
  readonly length: number;
  readonly text: () => string;
  /** Makes this the fill's section. Only the latest trial may be taken. */
  readonly take: () => void;
}

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

/** True when the counter says the section tried fits; the default estimate counts its length alone, without drawing it. */
const trialFits = (trial: SectionTrial, settings: BudgetSettings): boolean =>
  settings.countTokens === estimateTokens
    ? estimateTokensOfLength(trial.length) <= settings.maxTokens
    : fitsBudget(trial.text(), settings.maxTokens, settings.countTokens);

/**
 * Why each ranked fact is left out, if it is: past `maxFacts`, or its line would take the
 * section over the budget (a fact that does not fit is skipped, and smaller later ones are
 * still tried); undefined for a fact the section takes.
 */
export const fitToBudget = (
  settings: BudgetSettings,
  ranked: ReadonlyArray<SessionFact>,
): Array<BudgetReason | undefined> => {
  const fill = settings.render.fill(settings.layout);
  const reasons: Array<BudgetReason | undefined> = [];
  for (let rank = 0; rank < ranked.length; rank += 1) {
    if (rank >= settings.maxFacts) {
      reasons.push('max_facts');
      continue;
    }
    const trial = fill.tryFact(ranked[rank]!);
    if (!trialFits(trial, settings)) {
      reasons.push('budget');
      continue;
    }
    trial.take();
    reasons.push(undefined);
  }
  return reasons;
};
