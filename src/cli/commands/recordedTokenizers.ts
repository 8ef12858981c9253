/**
 * The tokenizers a history's prompt lines name (`tokenizer`, which a live session counting with
 * o200k writes), for a replay that `--tokenizer` does not count throughout: each is loaded
 * before the first batch of lines that may name it, so a history that names none never loads
 * the o200k tables, which are slow to load.
 */
import * as E from 'fp-ts/lib/Either.js';
import { isRecord } from '../../base/record.js';
import type { HistoryLine } from '../../core/history/lines.js';
import type { TokenCounter } from '../../tokens/estimate.js';
import { loadTokenCounter } from '../../tokens/load.js';
import type { TokenizerName } from '../../tokens/names.js';

/** The counters a replay looks up for its prompt lines, and what loads them as lines come. */
export interface RecordedTokenizers {
  /** The counters loaded so far, by name (the replay reads it at each prompt that names one). */
  readonly tokenCounters: Partial<Record<TokenizerName, TokenCounter>>;
  /** Loads the counters `lines` may name that are not loaded yet; a Left when one cannot be. */
  readonly prepare: (lines: ReadonlyArray<HistoryLine>) => Promise<E.Either<string, void>>;
}

/** The named tokenizers that need loading: the estimate is the replay's own. */
const LOADABLE: ReadonlyArray<TokenizerName> = ['o200k'];

/**
 * True when `text`, a line, may name the tokenizer `name`: it holds `"tokenizer"` and the name in
 * quotes (a dispatch output that quotes both only costs the load), or it writes a character as a
 * JSON escape (`"\u006f200k"`) and names it once parsed. A line is parsed here only then.
 */
const mayName = (text: string, name: TokenizerName): boolean => {
  if (text.includes(`"${name}"`) && text.includes('"tokenizer"')) return true;
  if (!text.includes('\\u')) return false;
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) && value['tokenizer'] === name;
  } catch {
    // Not JSON: the replay rejects the line, and it names nothing.
    return false;
  }
};

/** Counters loaded as the lines of a history call for them (see `mayName`). */
export const recordedTokenizers = (): RecordedTokenizers => {
  const tokenCounters: Partial<Record<TokenizerName, TokenCounter>> = {};
  return {
    tokenCounters,
    prepare: async (lines) => {
      for (const name of LOADABLE) {
        if (tokenCounters[name] !== undefined) continue;
        const naming = lines.find(({ text }) => mayName(text, name));
        if (naming === undefined) continue;
        const loaded = await loadTokenCounter(name);
        if (E.isLeft(loaded))
          return E.left(
            `line ${naming.line} may name the tokenizer ${name}: ${loaded.left} (give --tokenizer estimate to count every prompt with the estimate)`,
          );
        tokenCounters[name] = loaded.right;
      }
      return E.right(undefined);
    },
  };
};

/** How a replay counts tokens: its options, and what runs before each batch of lines. */
export interface ReplayCounting {
  readonly options: {
    readonly countTokens?: TokenCounter;
    readonly tokenCounters?: RecordedTokenizers['tokenCounters'];
  };
  readonly beforeBatch?: RecordedTokenizers['prepare'];
}

/**
 * `--tokenizer NAME` given counts every prompt with NAME, over the tokenizer its line names;
 * without it, each prompt is budgeted with the tokenizer its line names (the estimate when it
 * names none), and the report's counts are the estimate's.
 */
export const replayCounting = async (
  tokenizer: TokenizerName | undefined,
): Promise<E.Either<string, ReplayCounting>> => {
  if (tokenizer !== undefined)
    return E.map((countTokens: TokenCounter) => ({ options: { countTokens } }))(await loadTokenCounter(tokenizer));
  const recorded = recordedTokenizers();
  return E.right({ options: { tokenCounters: recorded.tokenCounters }, beforeBatch: recorded.prepare });
};
