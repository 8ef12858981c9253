/**
 * Retrieval for the `[Session Context]` section: the ranking pipeline of `retrieve/`, with its
 * token budget measured on the section exactly as `formatSessionFacts` renders it.
 */
import type { SessionFact } from '../fact.js';
import { explainRanked, type FactQuery, type RetrievalDecision, retrieveRanked } from '../retrieve/retrieve.js';
import type { FactStore } from '../store/state.js';
import { DEFAULT_LAYOUT, type SectionLayout } from '../retrieve/defaults.js';
import { formatFactLine, formatSessionFacts, SESSION_CONTEXT_HEADER } from './format.js';

/** A section of the lines layout as last rendered: its facts, its text, and the text of all its facts but the last. */
interface RenderedLines {
  readonly facts: ReadonlyArray<SessionFact>;
  readonly text: string;
  readonly before: string;
}

let lastLines: RenderedLines | undefined;

/** True when `facts` starts with the first `count` facts of `known`. */
const sharesStart = (facts: ReadonlyArray<SessionFact>, known: ReadonlyArray<SessionFact>, count: number): boolean => {
  for (let i = 0; i < count; i += 1) if (facts[i] !== known[i]) return false;
  return true;
};

/**
 * The section as `formatSessionFacts` renders it. The budget stage renders the facts it kept
 * plus one candidate, again and again: in the lines layout (a header, then one line per fact)
 * such a list's text is the kept facts' text and one more line, so it is not joined again.
 */
const renderSection = (facts: ReadonlyArray<SessionFact>, layout: SectionLayout): string => {
  if ((layout ?? DEFAULT_LAYOUT) !== 'lines' || !Array.isArray(facts) || facts.length === 0)
    return formatSessionFacts(facts, { layout });
  const count = facts.length;
  const last = lastLines;
  const before =
    count === 1
      ? SESSION_CONTEXT_HEADER
      : last !== undefined && last.facts.length === count - 1 && sharesStart(facts, last.facts, count - 1)
        ? last.text
        : last !== undefined && last.facts.length === count && sharesStart(facts, last.facts, count - 1)
          ? last.before
          : formatSessionFacts(facts.slice(0, -1), { layout });
  const text = `${before}\n${formatFactLine(facts[count - 1]!)}`;
  lastLines = { facts, text, before };
  return text;
};

/** The facts to inject for `query`, in rank order, within `maxFacts` and `maxTokens`; never throws. */
export const retrieveFacts = (store: FactStore, query: FactQuery): ReadonlyArray<SessionFact> =>
  retrieveRanked(store, query, renderSection);

/** Every stored fact with its score, its parts and its decision: the ranked candidates first, in rank order, then the rest. */
export const explainRetrieval = (store: FactStore, query: FactQuery): ReadonlyArray<RetrievalDecision> =>
  explainRanked(store, query, renderSection);
