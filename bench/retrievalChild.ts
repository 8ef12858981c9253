/**
 * One build's retrieval medians, for `npm run bench:against` (its `retrieval` section):
 *
 *   node --expose-gc --import tsx bench/retrievalChild.ts LIBRARY VOCABULARY SIZE ROUNDS
 *
 * builds the store of bench/retrieval.ts (VOCABULARY: `zipf-3000` or `common-30`, at least SIZE
 * valid facts) with the library at LIBRARY (a build's `dist/index.js`, the only build this
 * process loads), then times ROUNDS rounds of 200 queries of each class, and prints one line of
 * JSON: each class's median over the rounds' medians, in milliseconds.
 */
import { pathToFileURL } from 'node:url';
import { buildVocabularyStore, measureRetrievalClasses, type RetrievalLibrary, VOCABULARIES } from './retrieval.js';
import { median } from './median.js';

const [libraryPath, vocabularyName, sizeText, roundsText] = process.argv.slice(2);
const vocabulary = VOCABULARIES.find(({ name }) => name === vocabularyName);
const size = Number(sizeText);
const rounds = Number(roundsText);
if (libraryPath === undefined || vocabulary === undefined || !(size >= 1) || !Number.isInteger(rounds) || rounds < 1) {
  console.error('usage: retrievalChild.ts LIBRARY zipf-3000|common-30 SIZE ROUNDS');
  process.exit(2);
}
const library = (await import(pathToFileURL(libraryPath).href)) as RetrievalLibrary;
const store = buildVocabularyStore(library, vocabulary, size);
// Building leaves garbage: collected now, not during the timed queries.
(globalThis as { gc?: () => void }).gc?.();
const byClass: Record<string, number[]> = {};
for (let round = 0; round < rounds; round += 1)
  for (const [kind, figures] of Object.entries(measureRetrievalClasses(library, store, vocabulary, 200, 0)))
    (byClass[kind] ??= []).push(figures.medianMs);
const medians = Object.fromEntries(Object.entries(byClass).map(([kind, values]) => [kind, median(values)]));
console.log(JSON.stringify({ validFacts: library.selectValidCount(store), medians }));
