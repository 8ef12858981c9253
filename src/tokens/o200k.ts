/**
 * An exact token counter: o200k_base, the BPE encoding of GPT-4o-class models, from the
 * gpt-tokenizer package. It is its own entry point (`session-fact-tracker/o200k`) because its
 * tables are large: only users who ask for exact budgets load them.
 */
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import type { TokenCounter } from './estimate.js';

// Agent output may quote special tokens such as <|endoftext|>: they are counted as the text they are.
const NO_SPECIAL_TOKENS = { disallowedSpecial: new Set<string>() };

/** The number of o200k_base tokens of `text`. */
export const countO200kTokens: TokenCounter = (text) => countTokens(text, NO_SPECIAL_TOKENS);
