/** The section's defaults, in a module of their own so that the command line's help can quote them cheaply. */
import type { SectionLayout } from '../fact.js';

/**
 * Facts a `[Session Context]` section holds at most, by default: a safety limit, half as much
 * again as the largest section the token budget and the relevance floor fill on the labeled
 * histories (`npm run eval -- --fit`); the budget and the floor decide the count. It is also the
 * pool the fill order takes from (`RankingOptions.fill`).
 */
export const DEFAULT_MAX_FACTS = 60;
/** The token budget of a `[Session Context]` section, header included, by default. */
export const DEFAULT_MAX_TOKENS = 500;

export { isSectionLayout, SECTION_LAYOUTS, type SectionLayout } from '../fact.js';

/** The layout a section uses when nobody says. */
export const DEFAULT_LAYOUT: SectionLayout = 'lines';
