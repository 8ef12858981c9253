/**
 * The two passes of a query: the first ranks by the query alone and gives the best few matches
 * (whose words make the feedback query, and whose files seed co-change) and the query's score
 * scale; the last ranks with everything. Here is what the last pass adds: the recent tasks'
 * recency, the co-changed files and the feedback words.
 */
import * as PMap from '../../persistent/persistentMap.js';
import { isFileFact } from '../fact.js';
import { EMPTY_TASK_DOC, lastFactTime, type TaskDoc } from '../search/searchIndex.js';
import { factTermWeights, postingWeight } from '../search/weights.js';
import { type FactStore, pairKey } from '../store/state.js';
import { bestEntries, type ContextTable } from './context.js';
import { type PlannedTerm, planTerm } from './rank.js';
import { offerRanked, type Pass, type Passes, type Scored, type Settings } from './score.js';

/**
 * The most recent other tasks (by their latest valid fact, then id; the index keeps them in
 * order) with the recency of their facts: weight, weight x decay, weight x decay^2, ..., each
 * plus its share of `shared` (see `recencyOf`); and their records, in the same order (each is
 * looked up once a query: the description of their facts reads them too).
 */
const recentTasks = (store: FactStore, settings: Settings): { recency: Map<string, number>; records: TaskDoc[] } => {
  const { recency } = settings.plan.ranking;
  const recent = new Map<string, number>();
  const records: TaskDoc[] = [];
  if (recency.weight <= 0 && recency.shared <= 0) return { recency: recent, records };
  const list = store.index.recent;
  const powers = decayPowers(settings.scratch.memo.decayPowers, recency.decay);
  for (let at = 0; at < list.length && recent.size < recency.tasks; at += 2) {
    const taskId = list[at] as string;
    if (taskId === settings.taskId) continue;
    const task = PMap.get(store.index.tasks, taskId) ?? EMPTY_TASK_DOC;
    recent.set(taskId, recencyOf(recency, task, power(powers, recency.decay, recent.size)));
    records.push(task);
  }
  return { recency: recent, records };
};

/** The powers of `decay` the memo keeps (a query's ranking most often has the same decay as the last one's). */
const decayPowers = (memo: Map<number, number[]>, decay: number): number[] => {
  let powers = memo.get(decay);
  if (powers === undefined) {
    if (memo.size >= 8) memo.clear();
    powers = [];
    memo.set(decay, powers);
  }
  return powers;
};

/** `decay ** age`, exactly, from the kept powers (computed once per age). */
const power = (powers: number[], decay: number, age: number): number => {
  for (let at = powers.length; at <= age; at += 1) powers.push(decay ** at);
  return powers[age]!;
};

/**
 * The recency of the facts of a task `age` tasks back from the latest other one (`decayed`:
 * decay^age): the weight, plus `shared` over the square root of the files the task changed,
 * times decayed.
 */
const recencyOf = (recency: Settings['plan']['ranking']['recency'], task: TaskDoc, decayed: number): number => {
  if (recency.shared <= 0) return recency.weight * decayed;
  return (recency.weight + recency.shared / Math.sqrt(Math.max(1, PMap.size(task.touched)))) * decayed;
};

/** How many of its best facts a first pass keeps: feedback takes the first few, co-change the first few file facts. */
const FIRST_PASS_FACTS = 10;

/** Co-change reads at most this many of a seed's tasks, the latest (a manifest changes with everything). */
const CO_CHANGE_TASKS = 32;
/**
 * A task that changed more files than this tells nothing of what changes together (a sweep:
 * a rename, a reformat, a dependency bump), as in co-change mining generally: co-change skips it.
 */
const CO_CHANGE_MAX_FILES = 32;
/** Co-change reaches at most this many file pairs, the best-scored ones. */
const CO_CHANGE_PAIRS = 64;

/**
 * The docs of the latest CO_CHANGE_TASKS of a file record's tasks (see `FileRecord.tasks`) that
 * changed at most CO_CHANGE_MAX_FILES files: latest by their prompt's time, then their latest
 * valid fact's, then id (what the store holds, so a store rebuilt from a saved state picks the same).
 */
const latestTasks = (store: FactStore, taskIds: ReadonlyArray<string>): Array<readonly [string, TaskDoc]> => {
  const time = (task: TaskDoc): number => task.promptAt ?? -Infinity;
  /** Negative when the first task is the later. */
  const later = ([a, x]: readonly [string, TaskDoc], [b, y]: readonly [string, TaskDoc]): number =>
    time(y) - time(x) || lastFactTime(y) - lastFactTime(x) || (a < b ? -1 : a > b ? 1 : 0);
  // A file every task changes (a manifest) has hundreds: the latest are kept in a short sorted
  // list, and as the record lists its tasks latest prompt first, the walk stops at the first
  // task whose prompt is older than the last kept one's (it and every task after it rank after).
  const latest: Array<readonly [string, TaskDoc]> = [];
  let eligible = 0;
  for (const taskId of taskIds) {
    const task = PMap.get(store.index.tasks, taskId);
    if (task === undefined) continue;
    if (eligible > CO_CHANGE_TASKS && time(task) < time(latest[CO_CHANGE_TASKS - 1]![1])) break;
    if (PMap.size(task.touched) > CO_CHANGE_MAX_FILES) continue;
    eligible += 1;
    offerRanked(latest, [taskId, task] as const, CO_CHANGE_TASKS, later);
  }
  // A file with few such tasks has them all, in id order.
  return eligible <= CO_CHANGE_TASKS ? latest.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)) : latest;
};

/**
 * Co-change scores of one query: the first pass's best `coChange.seeds` file facts (among its
 * best FIRST_PASS_FACTS) are its seeds; every other file a seed's latest CO_CHANGE_TASKS tasks
 * (see `latestTasks`) changed gets, per seed, the share of those
 * tasks that changed it, times the seed's score relative to the best seed's, times the weight.
 * Summed over the seeds in rank order, by pair key; the CO_CHANGE_PAIRS best are kept.
 */
const coChangeScores = (store: FactStore, settings: Settings, first: ReadonlyArray<Scored>): Map<string, number> => {
  const { coChange } = settings.plan.ranking;
  const scores = new Map<string, number>();
  if (coChange.weight <= 0) return scores;
  const seeds = first.filter(({ fact }) => isFileFact(fact)).slice(0, coChange.seeds);
  const top = seeds.length === 0 ? 0 : seeds[0]!.parts.total - seeds[0]!.parts.boost;
  if (!(top > 0)) return scores;
  for (const { fact, parts } of seeds) {
    const key = pairKey(fact.subject, fact.relation);
    const tasks = latestTasks(store, PMap.get(store.index.files, key)?.tasks ?? []);
    const share = (coChange.weight * (parts.total - parts.boost)) / top / Math.max(1, tasks.length);
    if (!(share > 0)) continue;
    for (const [, task] of tasks)
      PMap.forEach(task.touched, (_true, pair) => {
        if (pair !== key) scores.set(pair, (scores.get(pair) ?? 0) + share);
      });
  }
  return bestEntries(scores, CO_CHANGE_PAIRS, settings.scratch.context.pairLeaders);
};

/**
 * The feedback words of a first pass: the terms of its best facts (subject and object, as the
 * index splits and stems them) that the query lacks, 3 characters or longer, and found in at
 * most `feedback.maxShare` of the valid facts, each weighted by its mean weight in those facts;
 * the `feedback.terms` most telling (weight x idf).
 */
const feedbackTerms = (store: FactStore, settings: Settings, first: ReadonlyArray<Scored>): PlannedTerm[] => {
  const { feedback } = settings.plan.ranking;
  const top = first.slice(0, feedback.facts);
  if (feedback.weight <= 0 || top.length === 0 || feedback.terms <= 0) return [];
  const sums = new Map<string, number>();
  for (const { fact } of top) {
    const weights = factTermWeights(fact);
    for (let i = 0; i < weights.length; i += 2) {
      const term = weights[i] as string;
      if (term.length >= 3) sums.set(term, (sums.get(term) ?? 0) + postingWeight(weights[i + 1] as number));
    }
  }
  for (const { term } of settings.plan.terms) sums.delete(term);
  const mostFacts = Math.max(1, feedback.maxShare * settings.documents);
  const best: PlannedTerm[] = [];
  sums.forEach((sum, term) => {
    const planned = planTerm(store.index, settings.documents, term, (feedback.weight * sum) / top.length);
    if (planned.frequency <= mostFacts) offerRanked(best, planned, feedback.terms, moreTelling);
  });
  return best;
};

/** Negative when the first feedback word is the more telling (weight x idf), then by term. */
const moreTelling = (a: PlannedTerm, b: PlannedTerm): number =>
  b.multiplier * b.idf - a.multiplier * a.idf || (a.term < b.term ? -1 : a.term > b.term ? 1 : 0);

const needsFirstPass = (settings: Settings): boolean => {
  const { feedback, coChange, conventionBase } = settings.plan.ranking;
  return (
    (feedback.weight > 0 && feedback.facts > 0) || (coChange.weight > 0 && coChange.seeds > 0) || conventionBase > 0
  );
};

/** The passes of a query: the first (when feedback, co-change or a convention base needs one) and the last, built from the first's best. */
export const passesFor = (store: FactStore, settings: Settings, table: ContextTable): Passes => {
  const { plan } = settings;
  const { feedback, coChange } = plan.ranking;
  const none = new Map<string, number>();
  const { recency, records } = recentTasks(store, settings);
  const queryPass = (
    k: number,
    scale: number,
    terms: PlannedTerm[],
    recency: ReadonlyMap<string, number>,
    coChanged: ReadonlyMap<string, number>,
  ): Pass => ({ plan, terms, queryTerms: plan.terms.length, table, recency, coChange: coChanged, scale, k });
  const first = needsFirstPass(settings)
    ? queryPass(
        Math.max(
          1,
          feedback.facts,
          coChange.weight > 0 && coChange.seeds > 0 ? Math.max(coChange.seeds, FIRST_PASS_FACTS) : 0,
        ),
        0,
        [...plan.terms],
        none,
        none,
      )
    : undefined;
  return {
    first,
    recency,
    recentRecords: records,
    last: (firstRanked) => {
      const best = firstRanked[0];
      const scale = best === undefined ? 0 : best.parts.total - best.parts.boost;
      return queryPass(
        settings.maxFacts,
        scale,
        [...plan.terms, ...feedbackTerms(store, settings, firstRanked)],
        recency,
        coChangeScores(store, settings, firstRanked),
      );
    },
  };
};
