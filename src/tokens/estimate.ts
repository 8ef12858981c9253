/** Counts the tokens of a text; used wherever a budget applies. */
export type TokenCounter = (text: string) => number;

/** The default estimate: ceil(characters / 4). */
export const estimateTokens: TokenCounter = (text) => Math.ceil(text.length / 4);
