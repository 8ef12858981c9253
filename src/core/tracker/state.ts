/**
 * The fact tracker's state: the store, and beside it, as plain data, the settings every event
 * is applied with. Nothing here is a function or a class instance, so a state survives
 * `JSON.stringify` (the store through `encodeState`), `structuredClone` and a worker boundary.
 */
import { deepFreeze } from '../../persistent/freeze.js';
import { MAX_FACTS_PER_RESULT } from '../extract/extractor.js';
import {
  DEFAULT_LAYOUT,
  DEFAULT_MAX_FACTS,
  DEFAULT_MAX_TOKENS,
  isSectionLayout,
  type SectionLayout,
} from '../retrieve/defaults.js';
import { readRankingOverrides, type RankingOverrides } from '../retrieve/rank.js';
import { emptyFactStore, type FactStore } from '../store/state.js';
import { checkedFactStore } from '../store/storeShape.js';

/** How a tracker applies events: plain data, fixed when the state is made. */
export interface TrackerSettings {
  /** Facts per prompt when the prompt does not say (`DEFAULT_MAX_FACTS`). */
  readonly maxFacts: number;
  /** Token budget of a prompt's section when the prompt does not say (`DEFAULT_MAX_TOKENS`). */
  readonly maxTokens: number;
  /** The section's layout (`lines`: one line per fact). */
  readonly layout: SectionLayout;
  /** Facts one dispatch result may add (`MAX_FACTS_PER_RESULT`); past it, facts are dropped in rule order. */
  readonly maxFactsPerResult: number;
  /** Overrides of the ranking defaults, when any were given. */
  readonly ranking?: RankingOverrides;
}

/** A tracker's whole state: its store and its settings. Plain, frozen data. */
export interface TrackerState {
  readonly store: FactStore;
  readonly settings: TrackerSettings;
}

/** Options of `initialTrackerState`; anything left out, or not usable, takes its default. */
export interface TrackerStateOptions {
  /** Default facts per prompt (`DEFAULT_MAX_FACTS`). */
  readonly maxFacts?: number;
  /** Default token budget of the section (`DEFAULT_MAX_TOKENS`). */
  readonly maxTokens?: number;
  /** The section's layout (default `lines`). */
  readonly layout?: SectionLayout;
  /** Facts one dispatch result may add (default `MAX_FACTS_PER_RESULT`, 1,000). */
  readonly maxFactsPerResult?: number;
  /** Overrides of the ranking defaults. */
  readonly ranking?: RankingOverrides;
  /** The bound on valid facts of a new store (ignored with `store`). */
  readonly maxValidFacts?: number;
  /** The store to start from (default: an empty one), such as one `decodeState` read back. */
  readonly store?: FactStore;
}

/**
 * A count of the settings, or `fallback`. No bound is held as Infinity, which JSON writes as
 * null: the largest finite number bounds nothing either, and a state's JSON copy keeps it.
 */
const countOr = (value: unknown, fallback: number): number =>
  typeof value === 'number' && value >= 0 && !Number.isNaN(value) ? Math.min(value, Number.MAX_VALUE) + 0 : fallback;

/**
 * The settings `options` describe, each field checked (a bad value takes the default; of the
 * ranking, only the overrides a ranking takes are kept, see `readRankingOverrides`).
 */
export const trackerSettings = (options: TrackerStateOptions = {}): TrackerSettings => {
  const given = typeof options === 'object' && options !== null ? options : {};
  const { ranking } = given;
  return Object.freeze({
    maxFacts: countOr(given.maxFacts, DEFAULT_MAX_FACTS),
    maxTokens: countOr(given.maxTokens, DEFAULT_MAX_TOKENS),
    layout: isSectionLayout(given.layout) ? given.layout : DEFAULT_LAYOUT,
    maxFactsPerResult: countOr(given.maxFactsPerResult, MAX_FACTS_PER_RESULT),
    ...(typeof ranking === 'object' && ranking !== null ? { ranking: readRankingOverrides(ranking) } : {}),
  });
};

/**
 * A tracker's first state: an empty store (or `options.store`) and the settings `options` describe.
 * A `store` that is not a fact store is refused with a TypeError saying what it is. A store the
 * caller built unfrozen (`JSON.parse`, `structuredClone`) is frozen as it is taken: the state
 * shares it, and a change the caller made to it later would otherwise change the state's answers
 * behind every reducer's back.
 */
export const initialTrackerState = (options: TrackerStateOptions = {}): TrackerState => {
  const given = typeof options === 'object' && options !== null ? options : {};
  return Object.freeze({
    store:
      given.store === undefined || given.store === null
        ? emptyFactStore(given.maxValidFacts === undefined ? {} : { maxValidFacts: given.maxValidFacts })
        : deepFreeze(checkedFactStore(given.store)),
    settings: trackerSettings(given),
  });
};
