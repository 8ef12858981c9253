/**
 * Loading a named token counter. The BPE tables of o200k take a noticeable moment to load, so
 * they are imported only when asked for, and only that encoding's entry point, not the whole
 * package.
 */
import * as E from 'fp-ts/lib/Either.js';
import { estimateTokens, type TokenCounter } from './estimate.js';
import type { TokenizerName } from './names.js';

/** The counter for `name`; o200k is GPT-4o's BPE encoding from gpt-tokenizer. */
export const loadTokenCounter = async (name: TokenizerName): Promise<E.Either<string, TokenCounter>> => {
  if (name === 'estimate') return E.right(estimateTokens);
  try {
    const { countO200kTokens } = await import('./o200k.js');
    return E.right(countO200kTokens);
  } catch (error) {
    // Only a missing package is the installation's (an import's code, or a require's in the
    // bundle, which requires it); any other failure to load is a bug.
    const code = (error as { code?: unknown } | null)?.code;
    if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') throw error;
    return E.left(
      `the o200k tokenizer could not be loaded (is gpt-tokenizer installed?): ${error instanceof Error ? error.message : String(error)}`,
    );
  }
};
