/**
 * A user's cross-session profile. At the end of a stage the session's facts are merged into it
 * deterministically: the session's facts replace what its own earlier merge contributed;
 * duplicates collapse and a newer fact replaces an older one about the same thing
 * (`subject.ts`), newer by the time of the messages they were told in; past the cap the least
 * recent fall off, each one reported.
 */
import { refuseArgument } from '../base/describe.js';
import { plainTime, plainTimeOf } from '../base/time.js';
import { deepFreeze, frozenCopy } from '../persistent/freeze.js';
import {
  type CategorizedFact,
  factKey,
  type GlobalFacts,
  NOTES_LIMITS,
  normalizeCategoryName,
  normalizeFactText,
  type NotedFact,
  type ProfileFact,
  profileTime,
} from './model.js';
import { relateSubjects } from './subject.js';

export type { GlobalFacts, ProfileFact } from './model.js';

/** The profile after a consolidation, the facts that fell off past the cap, and what a model should look at. */
export interface GlobalConsolidation {
  readonly global: GlobalFacts;
  readonly dropped: ReadonlyArray<CategorizedFact>;
  /** A fact the merge brought in may tell of the same thing as an older one in other words: for a model to decide. */
  readonly unsure: boolean;
}

/** Options of `consolidateGlobalFacts` and `consolidateGlobalFactsWithReport`. */
export interface ConsolidationOptions {
  /** The most facts the profile holds (default 50). */
  readonly maxFacts?: number;
  /** The session merged: its facts are attributed to it, and replace what it merged before. */
  readonly session?: string;
  /**
   * Epoch milliseconds of the messages the facts were told in (default: `at`, a fact repeated as
   * it stands keeping its own); a session's fact with a time of its own (`NotedFact.at`, told
   * before the list's latest messages) keeps that.
   */
  readonly messagesAt?: number;
  /** Whether the merge counts a session in `sessionCount` (default: when it changes the profile). */
  readonly counts?: boolean;
}

/** A session's facts made distinct, and whether two of those left may tell of one thing. */
interface DistinctFacts {
  readonly facts: NotedFact[];
  readonly unsure: boolean;
}

/**
 * A session fact's own time, never later than the messages its list covers (`told`): a time
 * edited by hand, or from a skewed clock, would otherwise outrank facts told after it.
 */
const toldBy = (at: number, told: number | undefined): number =>
  told === undefined ? plainTime(at) : Math.min(plainTime(at), told);

/**
 * The session's facts, normalized and distinct (a fact's own time at most the list's): of two that repeat each other (`factKey`) or
 * tell of the same thing (`relateSubjects`), the later entry wins, at its own place, since a
 * model that appends a correction without deleting the fact it corrects lists it last; the
 * merge must not put in the profile a pair its own rule would collapse there. Two that may tell
 * of one thing are left for a model to decide, as in the profile (`unsure`).
 */
const distinctSessionFacts = (facts: ReadonlyArray<NotedFact>, told: number | undefined): DistinctFacts => {
  let distinct: NotedFact[] = [];
  for (const entry of Array.isArray(facts) ? facts : []) {
    if (typeof entry?.fact !== 'string' || typeof entry.category !== 'string') continue;
    const fact: NotedFact = {
      category: normalizeCategoryName(entry.category),
      fact: normalizeFactText(entry.fact),
      ...(typeof entry.at === 'number' && Number.isFinite(entry.at) ? { at: toldBy(entry.at, told) } : {}),
    };
    if (fact.fact === '' || fact.category === '') continue;
    const key = factKey(fact);
    distinct = distinct.filter((kept) => factKey(kept) !== key && relateSubjects(kept, fact) !== 'same');
    distinct.push(fact);
  }
  const unsure = distinct.some((fact, i) =>
    distinct.slice(i + 1).some((other) => relateSubjects(fact, other) === 'maybe'),
  );
  return { facts: distinct, unsure };
};

/** True when two profiles hold the same facts, from the same sessions and times, in the same order. */
const sameProfileFacts = (a: ReadonlyArray<ProfileFact>, b: ReadonlyArray<ProfileFact>): boolean =>
  a.length === b.length &&
  a.every(
    (fact, i) =>
      fact.category === b[i]!.category &&
      fact.fact === b[i]!.fact &&
      fact.session === b[i]!.session &&
      fact.at === b[i]!.at,
  );

/** A fact's time for ordering: one with none (saved before facts had times, or rewritten) is older than any. */
const timeOf = (fact: ProfileFact): number => fact.at ?? Number.NEGATIVE_INFINITY;

/**
 * Where a fact first told stands among facts of its time: its place in the profile `before`, or,
 * for a session's fact, the place of the first profile fact it repeats or tells anew; a fact new
 * to the profile comes after them all, in the session's order (`index`). So ties keep the order
 * they were first told in, whatever order a merge lists them in, and merging the same facts again
 * changes nothing.
 */
const firstToldRank = (before: ReadonlyArray<ProfileFact>, fact: NotedFact, index: number): number => {
  const key = factKey(fact);
  const place = before.findIndex((told) => factKey(told) === key || relateSubjects(fact, told) === 'same');
  return place === -1 ? before.length + index : place;
};

/**
 * Merges a session's facts into a profile (`undefined`: none yet) at `at`. The session's facts
 * replace any fact they repeat or correct (the newer wording wins; the newer of two facts
 * about the same thing stays), and the profile stays ordered least recent first; past
 * `maxFacts` (50) the least recent fall off (`consolidateGlobalFactsWithReport` names them).
 * A merge that changes nothing returns the same profile, uncounted, so consolidating a
 * session twice equals doing it once.
 */
export const consolidateGlobalFacts = (
  global: GlobalFacts | undefined,
  sessionFacts: ReadonlyArray<NotedFact>,
  at: number,
  options: ConsolidationOptions = {},
): GlobalFacts => consolidateGlobalFactsWithReport(global, sessionFacts, at, options).global;

/** `consolidateGlobalFacts`, with the facts that fell off past the cap and whether a model should look again. */
export const consolidateGlobalFactsWithReport = (
  global: GlobalFacts | undefined,
  sessionFacts: ReadonlyArray<NotedFact>,
  givenAt: number,
  options: ConsolidationOptions = {},
): GlobalConsolidation => {
  // A profile or a time of the wrong kind is a programmer's mistake (no profile yet is undefined).
  if (global !== undefined && (typeof global !== 'object' || global === null))
    refuseArgument('the profile', global, 'a profile (GlobalFacts) or undefined');
  if (typeof givenAt !== 'number') refuseArgument('at', givenAt, 'a number (epoch milliseconds)');
  // -0 read as 0, so the profile deep-equals its JSON round trip (see `plainTime`).
  const at = plainTimeOf(givenAt) as number;
  // Options that are none (null) read as none.
  const { maxFacts, session, messagesAt, counts }: ConsolidationOptions =
    typeof options === 'object' && options !== null ? options : {};
  const cap = typeof maxFacts === 'number' && maxFacts >= 1 ? Math.floor(maxFacts) : NOTES_LIMITS.globalCap;
  const timed = typeof messagesAt === 'number' && Number.isFinite(messagesAt);
  // Facts merged without the time of their messages count as told now, with or without a session:
  // untimed they would sort as the least recent, the first to fall off past the cap.
  const told = timed ? plainTime(messagesAt) : Number.isFinite(at) ? at : undefined;
  // A fact the session carried over from earlier messages counts as told when it was first told.
  const toldOf = (fact: NotedFact): number | undefined => fact.at ?? told;
  const { facts: incoming, unsure: unsureWithin } = distinctSessionFacts(sessionFacts, told);
  // A profile the caller built or parsed stays theirs: the result shares, and so freezes, only a copy.
  const before = (global === undefined ? undefined : frozenCopy(global))?.facts ?? [];
  // What this session merged before is replaced by what it says now.
  const others = session === undefined ? before : before.filter((fact) => fact.session !== session);
  const newer = (fact: ProfileFact, than: NotedFact): boolean =>
    timeOf(fact) > (toldOf(than) ?? Number.POSITIVE_INFINITY);
  const keptIncoming = new Set(incoming);
  let unsure = unsureWithin;
  const kept = others.filter((fact) => {
    let replaced = false;
    for (const candidate of incoming) {
      const relation = factKey(candidate) === factKey(fact) ? 'same' : relateSubjects(candidate, fact);
      if (relation === 'maybe') unsure = true;
      if (relation !== 'same') continue;
      if (newer(fact, candidate)) keptIncoming.delete(candidate);
      else replaced = true;
    }
    return !replaced;
  });
  // Without the time of its messages, a merge tells again what it told before, not newer: a
  // session merged again keeps the time of each fact it already holds in the profile, and a merge
  // of no session leaves a fact it repeats word for word as it stands, so merging the same facts
  // again later changes nothing.
  const toldBefore = new Map(
    timed
      ? []
      : before.filter((fact) => session === undefined || fact.session === session).map((fact) => [factKey(fact), fact]),
  );
  const addedFrom = incoming.filter((fact) => keptIncoming.has(fact));
  const added: ProfileFact[] = addedFrom.map((fact) => {
    const previous = fact.at === undefined ? toldBefore.get(factKey(fact)) : undefined;
    if (session === undefined && previous?.category === fact.category && previous.fact === fact.fact) return previous;
    const time = fact.at ?? (previous === undefined || session === undefined ? told : previous.at);
    return { ...fact, ...(session === undefined ? {} : { session }), ...(time === undefined ? {} : { at: time }) };
  });
  // Least recent first, facts of one time in the order they were first told (not the order this
  // merge lists them in, which would reorder a profile merged the same facts again).
  const ranked = [
    ...kept.map((fact) => ({ fact, rank: before.indexOf(fact) })),
    ...added.map((fact, i) => ({ fact, rank: firstToldRank(before, addedFrom[i]!, i) })),
  ];
  const merged = ranked.sort((a, b) => timeOf(a.fact) - timeOf(b.fact) || a.rank - b.rank).map(({ fact }) => fact);
  const overflow = Math.max(0, merged.length - cap);
  const facts = merged.slice(overflow);
  // Named even when the profile stays as it was: a fact told before all the profile holds falls off at once.
  const dropped = merged.slice(0, overflow);
  const changed = global === undefined || !sameProfileFacts(facts, before);
  // A session counts once: one whose facts the profile already holds was counted when they came.
  const countedBefore = session !== undefined && before.some((fact) => fact.session === session);
  const counted = counts ?? (changed && facts.length > 0 && !countedBefore);
  if (global !== undefined && !changed && !counted) return { global, dropped, unsure };
  const time = Number.isFinite(at) ? profileTime(at) : (global?.consolidatedAt ?? 0);
  return deepFreeze({
    global: { facts, consolidatedAt: time, sessionCount: (global?.sessionCount ?? 0) + (counted ? 1 : 0) },
    dropped,
    unsure,
  });
};
