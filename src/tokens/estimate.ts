import { refuseArgument } from '../base/describe.js';

/** Counts the tokens of a text; used wherever a budget applies. */
export type TokenCounter = (text: string) => number;

/** `estimateTokens` of a text of `length` UTF-16 units, for a caller that knows the length without the text. */
export const estimateTokensOfLength = (length: number): number => Math.ceil(length / 4);

/**
 * The default estimate: ceil(characters / 4). A text that is no string (null) is refused with a
 * TypeError naming it, rather than read as `NaN` tokens or failing on its length: one `typeof`,
 * as budgets call it in their tightest loops.
 */
export const estimateTokens: TokenCounter = (text) => {
  if (typeof text !== 'string') refuseArgument('the text', text, 'a string');
  return estimateTokensOfLength(text.length);
};
