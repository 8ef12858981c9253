/**
 * What a cap pushed out of a context (a merge over a cap, the window of recent failures): every
 * entry is reported, never silent.
 */
import { checkedContext, checkedKey, checkedList } from './arguments.js';
import {
  CONTEXT_LIMITS,
  type ContextKey,
  type Decision,
  type DroppedEntry,
  type RunFailure,
  type SharedContext,
} from './model.js';

const decisionLine = (decision: Decision): string => `${decision.id} [${decision.status}] ${decision.text}`;

const failureLine = (failure: RunFailure): string => `${failure.failedStep}: ${failure.error}`;

/** What tells two failures apart: their time and their words. */
export const failureIdentity = (failure: RunFailure): string =>
  JSON.stringify([failure.at ?? null, failure.failedStep, failure.error, failure.nextAction]);

/**
 * What `after` no longer holds of the contexts in `before` (all stored under `key`): decisions
 * (by text: a merge may give one a new id), claims (by text: a repeated claim replaces the
 * earlier one, which is no loss) and failures. Each is reported with the cap that pushed it out.
 */
export const selectDroppedEntries = (
  key: ContextKey,
  before: ReadonlyArray<SharedContext>,
  after: SharedContext,
): ReadonlyArray<DroppedEntry> => {
  checkedKey(key);
  checkedList(before, 'before', 'shared contexts');
  checkedContext(after, 'after');
  const decisions = new Set(after.openDecisions.map((decision) => decision.text));
  const claims = new Set(after.evidenceLedger.map((claim) => claim.claim));
  const failures = new Set(after.recentFailures.map(failureIdentity));
  const dropped: DroppedEntry[] = [];
  const seen = new Set<string>();
  const add = (entry: DroppedEntry, identity: string): void => {
    if (seen.has(identity)) return;
    seen.add(identity);
    dropped.push(entry);
  };
  for (const context of before) {
    for (const decision of context.openDecisions)
      if (!decisions.has(decision.text))
        add(
          { key, what: 'decision', text: decisionLine(decision), cap: CONTEXT_LIMITS.decisions },
          `d${decision.text}`,
        );
    for (const claim of context.evidenceLedger)
      if (!claims.has(claim.claim))
        add({ key, what: 'claim', text: claim.claim, cap: CONTEXT_LIMITS.claims }, `c${claim.claim}`);
    for (const failure of context.recentFailures)
      if (!failures.has(failureIdentity(failure)))
        add(
          { key, what: 'failure', text: failureLine(failure), cap: CONTEXT_LIMITS.recentFailures },
          `f${failureIdentity(failure)}`,
        );
  }
  return dropped;
};
