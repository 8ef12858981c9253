/**
 * Category sets `parseCategories` refuses, each with the reason it gives: what the tracker tells
 * `onError` and `replayConversationLog` throws, in the same words.
 */
export const UNUSABLE_CATEGORIES: ReadonlyArray<readonly [unknown, string]> = [
  [['People', 'people'], 'categories[1] repeats the category "people"'],
  [Array.from({ length: 21 }, (_, i) => `Kind ${i}`), 'categories must be an array of 1 to 20 categories'],
  [[], 'categories must be an array of 1 to 20 categories'],
  [['People', ' [ ] '], 'categories[1] has an empty name'],
  [['People', 7], 'categories[1] must be a name or { name, description }, not a number'],
  ['People', 'categories must be an array of 1 to 20 categories'],
];
