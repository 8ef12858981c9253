/**
 * The seed design's retriever, implemented once for comparison only (it is not part of the
 * library): valid facts -> tag filter -> not the query's own task -> keyword overlap with a
 * hard-coded stopword list -> score descending, then most recent -> top maxFacts -> truncated
 * where subject + relation + object at 4 characters per token first overruns the budget.
 */
import { type FactQuery, type FactStore, type SessionFact, selectValidFacts } from '../src/index.js';

const STOPWORDS = new Set(
  'a an the is are was were be been to of in on at for and or but with by from as it this that these those into'.split(' '),
);

const keywords = (text: string): Set<string> =>
  new Set(
    text
      .toLowerCase()
      .split(/[\s/\\.,;:!?()[\]{}"'`<>=+*&|_-]+/u)
      .filter((word) => word !== '' && !STOPWORDS.has(word)),
  );

/** The seed design's keyword-overlap retrieval over a store's valid facts. */
export const seedRetrieve = (store: FactStore, query: FactQuery): SessionFact[] => {
  const wanted = new Set<string>(query.tags ?? []);
  const words = keywords(query.taskDescription);
  const scored = selectValidFacts(store)
    .filter((fact) => wanted.size === 0 || fact.tags.some((tag) => wanted.has(tag)))
    .filter((fact) => fact.sourceTaskId !== query.taskId)
    .map((fact) => {
      let score = 0;
      for (const word of keywords(`${fact.subject} ${fact.relation} ${fact.object}`)) if (words.has(word)) score += 1;
      return { fact, score };
    })
    .filter(({ score }) => score > 0)
    .sort((a, b) => b.score - a.score || b.fact.validFrom - a.fact.validFrom)
    .slice(0, query.maxFacts);
  const out: SessionFact[] = [];
  let tokens = 0;
  for (const { fact } of scored) {
    const cost = Math.ceil(`${fact.subject}${fact.relation}${fact.object}`.length / 4);
    if (tokens + cost > query.maxTokens) break;
    tokens += cost;
    out.push(fact);
  }
  return out;
};
