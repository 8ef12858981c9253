import { type CategorizedFact, isNotesId, keepValidFacts, NOTES_LIMITS, sameFacts } from './model.js';
import { type NotesLedger, selectGlobalFacts, selectUserNotes, withUserNotes } from './ledger.js';

/** A profile as rewritten by the optional model-backed consolidation. */
export interface ProfileRewriteInput {
  readonly user: string;
  readonly facts: ReadonlyArray<CategorizedFact>;
  /** Epoch milliseconds the rewrite finished. */
  readonly at: number;
}

/**
 * Replaces the user's profile facts with the model's rewrite, validated and capped at 50;
 * the session count stays. A user without a profile, an empty rewrite (a model that lost the
 * list must not erase it) or an unchanged list leaves the same ledger.
 */
export const rewriteProfile = (ledger: NotesLedger, input: ProfileRewriteInput): NotesLedger => {
  if (typeof input !== 'object' || input === null) return ledger;
  const { user, at } = input;
  if (!isNotesId(user) || typeof at !== 'number' || !Number.isFinite(at)) return ledger;
  const profile = selectGlobalFacts(ledger, user);
  const { facts } = keepValidFacts(
    Array.isArray(input.facts) ? input.facts : [],
    ledger.categories,
    NOTES_LIMITS.globalCap,
  );
  if (profile === undefined || facts.length === 0 || sameFacts(profile.facts, facts)) return ledger;
  return withUserNotes(ledger, user, {
    ...selectUserNotes(ledger, user)!,
    profile: { facts, consolidatedAt: at, sessionCount: profile.sessionCount },
  });
};
