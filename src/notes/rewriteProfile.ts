import {
  type CategorizedFact,
  factKey,
  isNotesId,
  keepValidFacts,
  NOTES_LIMITS,
  type ProfileFact,
  profileTime,
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
import { relateSubjects } from './subject.js';

/** A profile as rewritten by the optional model-backed consolidation. */
export interface ProfileRewriteInput {
  readonly user: string;
  readonly facts: ReadonlyArray<CategorizedFact>;
  /** Epoch milliseconds the rewrite finished. */
  readonly at: number;
}

/** Where a profile fact comes from: the session that merged it and the time it was told, each when known. */
interface Attribution {
  readonly session?: string;
  readonly at?: number;
}

/** A fact's time for ordering: one with none is older than any. */
const timeOf = (fact: ProfileFact): number => fact.at ?? Number.NEGATIVE_INFINITY;

/**
 * Where a reworded fact comes from: the profile facts it stands for, those of its category it
 * relates to as 'same' or 'maybe' (`relateSubjects`). It takes the latest time among them, so a
 * correction told later still replaces it and one told earlier does not, and that latest fact's
 * session (of facts from several sessions, the latest speaks for the rewording), so a later merge
 * of that session replaces it as its own. A wording that stands for none is told no later than
 * the oldest fact and from no session: never the newest, which would outrank every correction.
 */
const attributeRewording = (
  fact: CategorizedFact,
  profile: ReadonlyArray<ProfileFact>,
  unrelated: Attribution,
): Attribution => {
  const latest = profile.reduce<ProfileFact | undefined>(
    (found, candidate) =>
      relateSubjects(fact, candidate) === 'other' || (found !== undefined && timeOf(found) > timeOf(candidate))
        ? found
        : candidate,
    undefined,
  );
  if (latest === undefined) return unrelated;
  return {
    ...(latest.session === undefined ? {} : { session: latest.session }),
    ...(latest.at === undefined ? {} : { at: latest.at }),
  };
};

/**
 * Replaces the user's profile facts with the model's rewrite, validated and capped at 50;
 * the session count stays. A fact the rewrite keeps word for word keeps where it came from; a
 * new wording comes from the facts it stands for (`attributeRewording`). A user without a
 * profile, an empty rewrite (a model that lost the list must not erase it) or an unchanged list
 * leaves the same ledger.
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
  const oldest = profile.facts.reduce<number | undefined>(
    (earliest, fact) => (fact.at === undefined || (earliest !== undefined && earliest <= fact.at) ? earliest : fact.at),
    undefined,
  );
  const unrelated: Attribution = oldest === undefined ? {} : { at: oldest };
  const attributed = facts.map((fact): ProfileFact => {
    const kept = known.get(factKey(fact));
    const source = kept ?? attributeRewording(fact, profile.facts, unrelated);
    return {
      ...fact,
      ...(source.session === undefined ? {} : { session: source.session }),
      ...(source.at === undefined ? {} : { at: source.at }),
    };
  });
  return withUserNotes(owned, user, {
    ...selectUserNotes(owned, user)!,
    profile: { facts: attributed, consolidatedAt: profileTime(at), sessionCount: profile.sessionCount },
  });
};
