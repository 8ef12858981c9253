/**
 * A retrieval's query: what the caller gives (`FactQuery`), checked where it enters
 * (`parseFactQuery`, a typed failure for input that is not a query), and resolved once into
 * the settings every stage reads.
 */
import * as E from 'fp-ts/lib/Either.js';
import { failure, type Failure } from '../../base/failure.js';
import { isDenseArray, isRecord } from '../../base/record.js';
import { collapseWhitespace, wellFormed } from '../../base/text.js';
import { type FactTag, isFactTag } from '../fact.js';
import { type FactStore, validCount } from '../store/state.js';
import { checkedFactStore } from '../store/storeShape.js';
import { estimateTokens, type TokenCounter } from '../../tokens/estimate.js';
import type { SectionRenderer } from './budget.js';
import { DEFAULT_LAYOUT, isSectionLayout, SECTION_LAYOUTS, type SectionLayout } from './defaults.js';
import { planQuery, type RankingOverrides, resolveRanking } from './rank.js';
import type { Settings } from './score.js';
import { defaultRetrievalScratch, type RetrievalScratch } from './scratch.js';

/** What the next task needs facts for. */
export interface FactQuery {
  readonly taskDescription: string;
  readonly taskId: string;
  readonly tags?: ReadonlyArray<FactTag>;
  readonly maxFacts: number;
  readonly maxTokens: number;
  /**
   * Counts the tokens of the section (default: ceil(characters / 4)). An answer that is not a
   * finite number 0 or more throws a TypeError naming `countTokens`, never an empty answer.
   */
  readonly countTokens?: TokenCounter;
  /** Overrides of the ranking defaults (`DEFAULT_RANKING`). */
  readonly ranking?: RankingOverrides;
  /** Facts scoring below this are left out as `no_match`, conventions included (default: none). */
  readonly minScore?: number;
  /** The section's layout, which the budget is measured on (default `lines`). */
  readonly layout?: SectionLayout;
  /** What the query writes besides its answer (default: the process's one, `defaultRetrievalScratch`). */
  readonly scratch?: RetrievalScratch;
}

/** The code of a query that is not one. */
export const INVALID_QUERY = 'invalid_query';

/** Why a query was refused. */
export type QueryFailure = Failure<typeof INVALID_QUERY>;

const isCount = (value: unknown): value is number => typeof value === 'number' && value >= 0;

/** True for a scratch made by `createRetrievalScratch` (its per-document arrays are there). */
const isRetrievalScratch = (value: unknown): value is RetrievalScratch =>
  isRecord(value) && isRecord(value['docs']) && value['docs']['state'] instanceof Uint8Array;

const refuse = (message: string): E.Either<QueryFailure, never> => E.left(failure(INVALID_QUERY, message));

/**
 * The query `input` holds, as a fresh object with each field read once, or why it is not a
 * query: a text description and task id, counts for `maxFacts` and `maxTokens`, and optional
 * fields of their kinds. A query that passes runs as `retrieveFacts` runs it; one that fails
 * would have come back empty, or with a field quietly left at its default.
 */
export const parseFactQuery = (input: unknown): E.Either<QueryFailure, FactQuery> => {
  if (!isRecord(input)) return refuse('the query is not an object');
  const { taskDescription, taskId, maxFacts, maxTokens, countTokens, ranking, minScore, layout, scratch } = input;
  // The tag list read once too: the tags checked are the ones the retrieval filters by, whatever
  // a Proxy answers later (a frozen list cannot change).
  const given = input['tags'];
  const tags: unknown = isDenseArray(given) && !Object.isFrozen(given) ? [...given] : given;
  if (typeof taskDescription !== 'string') return refuse('taskDescription is not a string');
  if (typeof taskId !== 'string') return refuse('taskId is not a string');
  if (!isCount(maxFacts)) return refuse('maxFacts is not a number of facts (0 or more)');
  if (!isCount(maxTokens)) return refuse('maxTokens is not a number of tokens (0 or more)');
  // `every` skips a hole: a list with one is no list of tags, and one of billions would hang the filter.
  if (tags !== undefined && !(isDenseArray(tags) && tags.every(isFactTag)))
    return refuse('tags is not a list of fact tags');
  if (countTokens !== undefined && typeof countTokens !== 'function') return refuse('countTokens is not a function');
  if (ranking !== undefined && !isRecord(ranking)) return refuse('ranking is not an object');
  if (minScore !== undefined && !(typeof minScore === 'number' && Number.isFinite(minScore)))
    return refuse('minScore is not a finite number');
  if (layout !== undefined && !isSectionLayout(layout))
    return refuse(`layout is not one of ${SECTION_LAYOUTS.join(', ')}`);
  if (scratch !== undefined && !isRetrievalScratch(scratch))
    return refuse('scratch is not one createRetrievalScratch made');
  return E.right({
    taskDescription,
    taskId,
    maxFacts,
    maxTokens,
    ...(tags === undefined ? {} : { tags: tags as ReadonlyArray<FactTag> }),
    ...(countTokens === undefined ? {} : { countTokens: countTokens as TokenCounter }),
    ...(ranking === undefined ? {} : { ranking: ranking as RankingOverrides }),
    ...(minScore === undefined ? {} : { minScore }),
    ...(layout === undefined ? {} : { layout: layout as SectionLayout }),
    ...(scratch === undefined ? {} : { scratch }),
  });
};

/**
 * The settings of a query, each field read once (a getter may change its answer). Lenient, as
 * `retrieveFacts` always was: a field that is not of its kind reads as its default, and counts
 * that are not counts as 0 (an empty answer); `parseFactQuery` tells what is wrong instead.
 */
export const settingsFor = (store: FactStore, query: FactQuery, render: SectionRenderer): Settings => {
  checkedFactStore(store);
  const q: Partial<FactQuery> = typeof query === 'object' && query !== null ? query : {};
  const { taskDescription, taskId, tags, maxFacts, maxTokens, countTokens, ranking, minScore, layout, scratch } = q;
  const rawTaskId = typeof taskId === 'string' || typeof taskId === 'number' ? String(taskId) : '';
  const documents = validCount(store);
  return {
    plan: planQuery(
      store.index,
      documents,
      typeof taskDescription === 'string' ? taskDescription : '',
      resolveRanking(ranking),
    ),
    // Normalized as a fact's task id is (see `normalizeTaskId`), so a query finds its own task's facts.
    taskId: wellFormed(collapseWhitespace(rawTaskId)),
    // A list holding a value that is no fact tag is not of its kind either: no filter, as for a
    // list that is none, rather than a filter by a tag no fact has (an empty answer).
    wanted: new Set<string>(isDenseArray(tags) && tags.every(isFactTag) ? tags : []),
    maxFacts: isCount(maxFacts) ? Math.floor(maxFacts) : 0,
    maxTokens: isCount(maxTokens) ? maxTokens : -1,
    countTokens: typeof countTokens === 'function' ? countTokens : estimateTokens,
    minScore: typeof minScore === 'number' && Number.isFinite(minScore) ? minScore : -Infinity,
    render,
    layout: isSectionLayout(layout) ? layout : DEFAULT_LAYOUT,
    documents,
    scratch: isRetrievalScratch(scratch) ? scratch : defaultRetrievalScratch,
  };
};
