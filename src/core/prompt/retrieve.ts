/**
 * Retrieval for the `[Session Context]` section: the ranking pipeline of `retrieve/`, with its
 * token budget measured on the section exactly as `formatSessionFacts` renders it.
 */
import type * as E from 'fp-ts/lib/Either.js';
import type { SessionFact } from '../fact.js';
import type { QueryFailure } from '../retrieve/query.js';
import {
  explainRanked,
  explainRankedEither,
  type FactQuery,
  type RetrievalDecision,
  retrieveRanked,
  retrieveRankedEither,
} from '../retrieve/retrieve.js';
import type { FactStore } from '../store/state.js';
import type { SectionRenderer } from '../retrieve/budget.js';
import type { SectionLayout } from '../retrieve/defaults.js';
import { createSectionFill, factCost, formatSessionFacts } from './format.js';

/** The section as `formatSessionFacts` draws it, filled one fact at a time by `createSectionFill`. */
export const renderSection: SectionRenderer = Object.assign(
  (facts: ReadonlyArray<SessionFact>, layout: SectionLayout): string => formatSessionFacts(facts, { layout }),
  { fill: (layout: SectionLayout) => createSectionFill(layout), addedLength: factCost },
);

/**
 * The facts to inject for `query`, in rank order, within `maxFacts` and `maxTokens`. A field
 * that is not of its kind reads as its default, and counts that are not counts give `[]`
 * (`retrieveFactsEither` says what is wrong instead).
 */
export const retrieveFacts = (store: FactStore, query: FactQuery): ReadonlyArray<SessionFact> =>
  Object.freeze(retrieveRanked(store, query, renderSection));

/** `retrieveFacts` of the query `input` holds, or why it is not a query (`parseFactQuery`). */
export const retrieveFactsEither = (
  store: FactStore,
  input: unknown,
): E.Either<QueryFailure, ReadonlyArray<SessionFact>> => retrieveRankedEither(store, input, renderSection);

/** Every stored fact with its score, its parts and its decision: the ranked candidates first, in rank order, then the rest. */
export const explainRetrieval = (store: FactStore, query: FactQuery): ReadonlyArray<RetrievalDecision> =>
  explainRanked(store, query, renderSection);

/** `explainRetrieval` of the query `input` holds, or why it is not a query (`parseFactQuery`). */
export const explainRetrievalEither = (
  store: FactStore,
  input: unknown,
): E.Either<QueryFailure, ReadonlyArray<RetrievalDecision>> => explainRankedEither(store, input, renderSection);
