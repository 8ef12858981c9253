/**
 * The common ancestor's part in a merge of two contexts: what the ancestor held and one side no
 * longer does was removed on purpose (a `git revert` of the commit that recorded it, a claim or
 * a decision pruned by hand, a rule unpinned, a checklist replaced), so the other side must not
 * bring it back. Everything either side added since the ancestor is kept.
 */
import { failureIdentity } from './dropped.js';
import type { SharedContext } from './model.js';
import { isToolRule } from './pinned.js';

/** The identities of one kind of entry (decision or claim text, failure identity, rule, step) in each context. */
const IDENTITIES = {
  decisions: (context: SharedContext) => context.openDecisions.map((decision) => decision.text),
  claims: (context: SharedContext) => context.evidenceLedger.map((claim) => claim.claim),
  failures: (context: SharedContext) => context.recentFailures.map(failureIdentity),
  rules: (context: SharedContext) => context.pinnedRules.filter((rule) => !isToolRule(rule)),
  steps: (context: SharedContext) => context.checklist.map((step) => step.text),
} as const;

/** What `base` held of one kind of entry and `other` no longer does. */
const removedBy = (
  identities: (context: SharedContext) => ReadonlyArray<string>,
  other: SharedContext,
  base: SharedContext,
): ReadonlySet<string> => {
  const kept = new Set(identities(other));
  return new Set(identities(base).filter((identity) => !kept.has(identity)));
};

/**
 * `side` without what `base` (the common ancestor) held and `other` removed since; the very
 * same context when there is nothing to remove.
 */
export const withoutDeletions = (side: SharedContext, other: SharedContext, base: SharedContext): SharedContext => {
  const decisions = removedBy(IDENTITIES.decisions, other, base);
  const claims = removedBy(IDENTITIES.claims, other, base);
  const failures = removedBy(IDENTITIES.failures, other, base);
  const rules = removedBy(IDENTITIES.rules, other, base);
  const steps = removedBy(IDENTITIES.steps, other, base);
  if (decisions.size + claims.size + failures.size + rules.size + steps.size === 0) return side;
  const pinnedBy = Object.fromEntries(Object.entries(side.pinnedBy ?? {}).filter(([rule]) => !rules.has(rule)));
  const { pinnedBy: _, ...rest } = side;
  return {
    ...rest,
    openDecisions: side.openDecisions.filter((decision) => !decisions.has(decision.text)),
    evidenceLedger: side.evidenceLedger.filter((claim) => !claims.has(claim.claim)),
    recentFailures: side.recentFailures.filter((failure) => !failures.has(failureIdentity(failure))),
    pinnedRules: side.pinnedRules.filter((rule) => !rules.has(rule)),
    ...(Object.keys(pinnedBy).length === 0 ? {} : { pinnedBy }),
    checklist: side.checklist.filter((step) => !steps.has(step.text)),
  };
};

/** True when a side left a context exactly as the common ancestor had it. */
export const isUnchanged = (side: SharedContext, base: SharedContext): boolean =>
  JSON.stringify(side) === JSON.stringify(base);
