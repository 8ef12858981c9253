/**
 * Pure updates of one context: a new one for a key, its summary marked stale or fresh, a claim
 * recorded, and its secrets redacted for showing. Each returns the same object when nothing
 * changes, and a frozen one from the private immer instance otherwise.
 */
import * as E from 'fp-ts/lib/Either.js';
import { deepFreeze, produce } from '../persistent/freeze.js';
import { refuseArgument } from '../base/describe.js';
import { checkedContext, checkedKey } from './arguments.js';
import type { ContextStatus } from './checkpoint.js';
import { type ClaimInput, recordClaim } from './ledger.js';
import {
  type CliSessions,
  type ContextError,
  type ContextKey,
  DEFAULT_PINNED_RULES,
  type SharedContext,
} from './model.js';
import { findContextSecret } from './schema.js';
import { findSecret, findSecretField, redactSecrets, redactSecretsIn } from './secrets.js';

/** A new context for `key`: the default pinned rules, no summary, nothing verified yet. */
export const emptySharedContext = (given: ContextKey): SharedContext => {
  const key = checkedKey(given);
  return deepFreeze({
    key: { repo: key.repo, branch: key.branch, workstreamId: key.workstreamId },
    featureRequest: '',
    pinnedRules: [...DEFAULT_PINNED_RULES],
    workingSummary: { text: '', stale: true },
    openDecisions: [],
    checklist: [],
    evidenceLedger: [],
    recentFailures: [],
  });
};

/** The context with its summary marked stale or fresh as `status` says; the same object when it already is. */
export const markSummaryStale = (context: SharedContext, status: Pick<ContextStatus, 'stale'>): SharedContext => {
  checkedContext(context);
  if (typeof status !== 'object' || status === null || typeof status.stale !== 'boolean')
    refuseArgument('the status', status, 'a context status ({ stale } of a boolean)');
  return context.workingSummary.stale === status.stale
    ? context
    : produce(context, (draft) => {
        draft.workingSummary.stale = status.stale;
      });
};

/** Records a claim in the context's ledger, or says why the claim is refused. */
export const recordContextClaim = (
  context: SharedContext,
  claim: ClaimInput,
): E.Either<ContextError, SharedContext> => {
  const ledger = recordClaim(checkedContext(context).evidenceLedger, claim);
  if (E.isLeft(ledger))
    return E.left({
      code: ledger.left.code === 'secret' ? 'secret' : 'invalid',
      message: `claim refused: ${ledger.left.reason}`,
    });
  return E.right(
    produce(context, (draft) => {
      draft.evidenceLedger = ledger.right as typeof draft.evidenceLedger;
    }),
  );
};

/**
 * `key` with a secret in any part replaced by `[redacted: ...]`; the same object when it holds
 * none. A file can hold a branch named like a token, and its keys are shown and go into prompts.
 */
export const redactKey = (key: ContextKey): ContextKey =>
  [key.repo, key.branch, key.workstreamId].every((part) => findSecret(part) === undefined)
    ? key
    : deepFreeze({
        repo: redactSecrets(key.repo),
        branch: redactSecrets(key.branch),
        workstreamId: redactSecrets(key.workstreamId),
      });

/**
 * `context` with every secret in its key and text replaced by `[redacted: ...]` (see
 * `redactSecrets`); the same object when it holds none. For what a read shows of a file
 * someone else wrote.
 */
export const redactContext = (context: SharedContext): SharedContext => {
  if (findContextSecret(checkedContext(context)) === undefined) return context;
  return produce(context, (draft) => {
    const failure = (entry: { failedStep: string; error: string; nextAction: string }): void => {
      entry.failedStep = redactSecrets(entry.failedStep);
      entry.error = redactSecrets(entry.error);
      entry.nextAction = redactSecrets(entry.nextAction);
    };
    draft.key = redactKey(draft.key);
    draft.featureRequest = redactSecrets(draft.featureRequest);
    draft.pinnedRules = draft.pinnedRules.map(redactSecrets);
    if (draft.pinnedBy !== undefined)
      draft.pinnedBy = Object.fromEntries(
        Object.entries(draft.pinnedBy).map(([rule, by]) => [redactSecrets(rule), redactSecrets(by)]),
      );
    draft.workingSummary.text = redactSecrets(draft.workingSummary.text);
    if (draft.checkpoint !== undefined) {
      // A hash holding a token is no hash of ours: redacted, it no longer matches, as it should not.
      draft.checkpoint.trackedFilesHash = redactSecrets(draft.checkpoint.trackedFilesHash);
      draft.checkpoint.summaryHash = redactSecrets(draft.checkpoint.summaryHash);
      if (draft.checkpoint.uncommitted !== undefined)
        draft.checkpoint.uncommitted = draft.checkpoint.uncommitted.map(redactSecrets);
    }
    for (const decision of draft.openDecisions) decision.text = redactSecrets(decision.text);
    for (const step of draft.checklist) step.text = redactSecrets(step.text);
    for (const claim of draft.evidenceLedger) {
      claim.claim = redactSecrets(claim.claim);
      for (const file of claim.files) file.path = redactSecrets(file.path);
      claim.symbols = claim.symbols.map(redactSecrets);
    }
    if (draft.lastRun?.status === 'failed') failure(draft.lastRun);
    for (const entry of draft.recentFailures) failure(entry);
    redactUnknownFields(draft);
  });
};

/** Redacts the fields this version does not know wherever in `node` (a context's draft) they are kept. */
const redactUnknownFields = (node: unknown): void => {
  if (Array.isArray(node)) for (const item of node) redactUnknownFields(item);
  else if (typeof node === 'object' && node !== null)
    for (const [name, value] of Object.entries(node)) {
      if (name === 'unknownFields') (node as Record<string, unknown>)[name] = redactSecretsIn(value);
      else redactUnknownFields(value);
    }
};

/**
 * `sessions` with every secret in a tool's name, session id or path redacted; the same object
 * when they hold none. The bundle lists them for a session to resume, so they reach prompts.
 */
export const redactSessions = (sessions: CliSessions): CliSessions =>
  findSecretField(sessions) === undefined
    ? sessions
    : Object.fromEntries(
        Object.entries(sessions).map(([tool, session]) => [
          redactSecrets(tool),
          {
            id: redactSecrets(session.id),
            ...(session.localPath === undefined ? {} : { localPath: redactSecrets(session.localPath) }),
          },
        ]),
      );
