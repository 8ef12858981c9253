/**
 * A user's cross-session profile. At the end of a stage the session's facts are merged into
 * it deterministically: duplicates collapse, the newer wording wins, and past the cap the least
 * recently confirmed facts fall off, each one reported.
 */
import { deepFreeze } from '../persistent/freeze.js';
import {
  type CategorizedFact,
  factKey,
  type GlobalFacts,
  NOTES_LIMITS,
  normalizeCategoryName,
  normalizeFactText,
  sameFacts,
} from './model.js';

export type { GlobalFacts } from './model.js';

/** The profile after a consolidation, and the facts that fell off past the cap. */
export interface GlobalConsolidation {
  readonly global: GlobalFacts;
  readonly dropped: ReadonlyArray<CategorizedFact>;
}

/** Options of `consolidateGlobalFacts` and `consolidateGlobalFactsWithReport`. */
export interface ConsolidationOptions {
  /** The most facts the profile holds (default 50). */
  readonly maxFacts?: number;
}

/**
 * The session's facts, normalized and distinct by `factKey`; for a repeated fact the later
 * entry wins, at its own place.
 */
const distinctSessionFacts = (facts: ReadonlyArray<CategorizedFact>): CategorizedFact[] => {
  const byKey = new Map<string, CategorizedFact>();
  for (const entry of Array.isArray(facts) ? facts : []) {
    if (typeof entry?.fact !== 'string' || typeof entry.category !== 'string') continue;
    const fact = { category: normalizeCategoryName(entry.category), fact: normalizeFactText(entry.fact) };
    if (fact.fact === '' || fact.category === '') continue;
    const key = factKey(fact);
    byKey.delete(key);
    byKey.set(key, fact);
  }
  return [...byKey.values()];
};

/**
 * Merges a session's facts into a profile (`undefined`: none yet) at `at`. The session's facts
 * become the most recent, replacing any fact they repeat (the newer wording wins); past
 * `maxFacts` (50) the least recent fall off (`consolidateGlobalFactsWithReport` names them).
 * A merge that changes nothing returns the same profile, uncounted, so consolidating a
 * session twice equals doing it once.
 */
export const consolidateGlobalFacts = (
  global: GlobalFacts | undefined,
  sessionFacts: ReadonlyArray<CategorizedFact>,
  at: number,
  options: ConsolidationOptions = {},
): GlobalFacts => consolidateGlobalFactsWithReport(global, sessionFacts, at, options).global;

/** `consolidateGlobalFacts`, with the facts that fell off past the cap. */
export const consolidateGlobalFactsWithReport = (
  global: GlobalFacts | undefined,
  sessionFacts: ReadonlyArray<CategorizedFact>,
  at: number,
  options: ConsolidationOptions = {},
): GlobalConsolidation => {
  const cap =
    typeof options.maxFacts === 'number' && options.maxFacts >= 1
      ? Math.floor(options.maxFacts)
      : NOTES_LIMITS.globalCap;
  const incoming = distinctSessionFacts(sessionFacts);
  const before = global?.facts ?? [];
  const replaced = new Set(incoming.map(factKey));
  const merged = [...before.filter((fact) => !replaced.has(factKey(fact))), ...incoming];
  const overflow = Math.max(0, merged.length - cap);
  const facts = merged.slice(overflow);
  if (global !== undefined && sameFacts(facts, before)) return { global, dropped: [] };
  const time = Number.isFinite(at) ? at : (global?.consolidatedAt ?? 0);
  // Only a merge into no profile at all gets here with nothing to add: it counts no session.
  return deepFreeze({
    global: { facts, consolidatedAt: time, sessionCount: (global?.sessionCount ?? 0) + (facts.length > 0 ? 1 : 0) },
    dropped: merged.slice(0, overflow),
  });
};
