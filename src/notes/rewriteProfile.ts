import {
  type CategorizedFact,
  factKey,
  isNotesId,
  keepValidFacts,
  NOTES_LIMITS,
  type ProfileFact,
  sameFacts,
} from './model.js';
import { plainTimeOf } from '../base/time.js';
import {
  checkedLedger,
  type NotesLedger,
  ownLedger,
  selectGlobalFacts,
  selectUserNotes,
  withUserNotes,
} from './ledger.js';

/** A profile as rewritten by the optional model-backed consolidation. */
export interface ProfileRewriteInput {
  readonly user: string;
  readonly facts: ReadonlyArray<CategorizedFact>;
  /** Epoch milliseconds the rewrite finished. */
  readonly at: number;
}

/**
 * Replaces the user's profile facts with the model's rewrite, validated and capped at 50;
 * the session count stays. A fact the rewrite keeps word for word keeps where it came from; a
 * new wording counts as told with the newest fact it may stand for. A user without a profile,
 * an empty rewrite (a model that lost the list must not erase it) or an unchanged list leaves
 * the same ledger.
 */
export const rewriteProfile = (ledger: NotesLedger, input: ProfileRewriteInput): NotesLedger => {
  checkedLedger(ledger);
  if (typeof input !== 'object' || input === null) return ledger;
  const { user } = input;
  const at = plainTimeOf(input.at);
  if (!isNotesId(user) || typeof at !== 'number' || !Number.isFinite(at)) return ledger;
  const owned = ownLedger(ledger);
  const profile = selectGlobalFacts(owned, user);
  const { facts } = keepValidFacts(
    Array.isArray(input.facts) ? input.facts : [],
    owned.categories,
    NOTES_LIMITS.globalCap,
  );
  if (profile === undefined || facts.length === 0 || sameFacts(profile.facts, facts)) return ledger;
  const known = new Map(profile.facts.map((fact) => [factKey(fact), fact]));
  const newest = profile.facts.reduce<number | undefined>(
    (latest, fact) => (fact.at === undefined || (latest !== undefined && latest >= fact.at) ? latest : fact.at),
    undefined,
  );
  const attributed = facts.map((fact): ProfileFact => {
    const kept = known.get(factKey(fact));
    if (kept !== undefined)
      return {
        ...fact,
        ...(kept.session === undefined ? {} : { session: kept.session }),
        ...(kept.at === undefined ? {} : { at: kept.at }),
      };
    return newest === undefined ? fact : { ...fact, at: newest };
  });
  return withUserNotes(owned, user, {
    ...selectUserNotes(owned, user)!,
    profile: { facts: attributed, consolidatedAt: at, sessionCount: profile.sessionCount },
  });
};
