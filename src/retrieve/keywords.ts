import { eng } from 'stopword';

const STOPWORDS = new Set(eng);

/** Lowercased words of `text`, split on whitespace, path separators and punctuation, stopwords removed. */
export const keywordTokens = (text: string): string[] =>
  text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== '' && !STOPWORDS.has(word));

/** The number of distinct query keywords that also occur in the fact's subject, relation or object. */
export const keywordOverlap = (queryKeywords: ReadonlySet<string>, factText: string): number => {
  let score = 0;
  for (const word of new Set(keywordTokens(factText))) if (queryKeywords.has(word)) score += 1;
  return score;
};
