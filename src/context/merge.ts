/**
 * Context files that a `git pull` or merge left with conflict markers. Both sides are whole
 * files again once the markers are read, so neither is discarded: `mergeContextFiles` takes
 * the union of what accumulates (decisions, claims, failures) and the newer side of what is
 * replaced (the summary with its checkpoint, the checklist, the last run).
 */
import { compareContextKeys, isSameContextKey } from './key.js';
import {
  CONTEXT_LIMITS,
  type Claim,
  type ContextFile,
  type Decision,
  type DroppedEntry,
  type QuarantinedContext,
  type RepositoryIdentity,
  type RunFailure,
  type SharedContext,
} from './model.js';
import { failureIdentity, selectDroppedEntries } from './dropped.js';

/** The two versions of a file with conflict markers, ours (HEAD) and theirs. */
export interface ConflictSides {
  readonly ours: string;
  readonly theirs: string;
}

const OPEN = /^<{7}(?: |$)/u;
const BASE = /^\|{7}(?: |$)/u;
const SEPARATOR = /^={7}$/u;
const CLOSE = /^>{7}(?: |$)/u;

/**
 * The two sides of `text` when it holds git's conflict markers (`<<<<<<<`, an optional
 * `|||||||` base, `=======`, `>>>>>>>`, each at the start of a line); undefined when it holds
 * none, or markers that do not nest as git writes them.
 */
export const splitConflictMarkers = (text: string): ConflictSides | undefined => {
  const lines = text.split(/(?<=\n)/u);
  let ours = '';
  let theirs = '';
  let state: 'both' | 'ours' | 'base' | 'theirs' = 'both';
  let conflicts = 0;
  for (const line of lines) {
    const bare = line.replace(/\r?\n$/u, '');
    if (state === 'both' && OPEN.test(bare)) {
      state = 'ours';
      conflicts += 1;
    } else if (state === 'ours' && BASE.test(bare)) state = 'base';
    else if ((state === 'ours' || state === 'base') && SEPARATOR.test(bare)) state = 'theirs';
    else if (state === 'theirs' && CLOSE.test(bare)) state = 'both';
    else if (state !== 'both' && (OPEN.test(bare) || CLOSE.test(bare))) return undefined;
    else {
      if (state === 'both' || state === 'ours') ours += line;
      if (state === 'both' || state === 'theirs') theirs += line;
    }
  }
  return conflicts > 0 && state === 'both' ? { ours, theirs } : undefined;
};

/** True when a line of `text` starts with a conflict marker. */
export const hasConflictMarkers = (text: string): boolean => /^<{7}(?: |$)/mu.test(text) && /^>{7}(?: |$)/mu.test(text);

const NEVER = Number.NEGATIVE_INFINITY;

/** When a side last changed its summary or ran: what "newer" means between two sides. */
const recency = (context: SharedContext): readonly [number, number] => [
  context.workingSummary.updatedAt ?? NEVER,
  context.lastRun?.at ?? NEVER,
];

const isNewer = (a: SharedContext, b: SharedContext): boolean => {
  const [summaryA, runA] = recency(a);
  const [summaryB, runB] = recency(b);
  return summaryA !== summaryB ? summaryA > summaryB : runA > runB;
};

const decisionNumber = (decision: Decision): number => Number(decision.id.slice(1)) || 0;

/** A settled status beats an open one; between two settled ones, the newer side's. */
const mergedStatus = (older: Decision, newer: Decision): Decision['status'] =>
  newer.status === 'open' ? older.status : newer.status;

/**
 * Decisions by id: the same id with the same text is one decision; a decision only one side
 * has is kept; two different decisions that took the same id on each side both stay, the
 * newer side's under a new id (the next free one), so no decision is lost.
 */
const mergeDecisions = (newer: ReadonlyArray<Decision>, older: ReadonlyArray<Decision>): Decision[] => {
  const merged = newer.map((decision) => ({ ...decision }));
  let next = Math.max(0, ...[...newer, ...older].map(decisionNumber)) + 1;
  for (const decision of older) {
    const sameId = merged.find((known) => known.id === decision.id);
    const same = sameId?.text === decision.text ? sameId : merged.find((known) => known.text === decision.text);
    if (same !== undefined) same.status = mergedStatus(decision, same);
    else if (sameId !== undefined) merged.push({ ...decision, id: `D${next++}` });
    else merged.push({ ...decision });
  }
  return keepDecisions(merged);
};

/**
 * At most `CONTEXT_LIMITS.decisions`, in id order: past the cap the settled decisions go
 * first, oldest first, then the open ones, oldest first (a question still open matters more
 * than an answer the summary and the code already carry).
 */
const keepDecisions = (decisions: Decision[]): Decision[] => {
  const byNumber = (a: Decision, b: Decision): number => decisionNumber(a) - decisionNumber(b);
  const over = decisions.length - CONTEXT_LIMITS.decisions;
  if (over <= 0) return decisions.sort(byNumber);
  const settled = decisions.filter((decision) => decision.status !== 'open').sort(byNumber);
  const open = decisions.filter((decision) => decision.status === 'open').sort(byNumber);
  const out = new Set([...settled, ...open].slice(0, over));
  return decisions.filter((decision) => !out.has(decision)).sort(byNumber);
};

/** Claims by text (the ledger's identity): the later record of a claim wins; oldest first. */
const mergeClaims = (newer: ReadonlyArray<Claim>, older: ReadonlyArray<Claim>): Claim[] => {
  const byText = new Map<string, Claim>();
  for (const claim of [...older, ...newer]) {
    const known = byText.get(claim.claim);
    if (known === undefined || (claim.at ?? NEVER) >= (known.at ?? NEVER)) byText.set(claim.claim, claim);
  }
  return [...byText.values()].sort((a, b) => (a.at ?? NEVER) - (b.at ?? NEVER)).slice(-CONTEXT_LIMITS.claims);
};

/** Failures by content and time: each once, oldest first, the last few kept. */
const mergeFailures = (newer: ReadonlyArray<RunFailure>, older: ReadonlyArray<RunFailure>): RunFailure[] => {
  const byId = new Map<string, RunFailure>();
  for (const failure of [...older, ...newer]) byId.set(failureIdentity(failure), failure);
  return [...byId.values()].sort((a, b) => (a.at ?? NEVER) - (b.at ?? NEVER)).slice(-CONTEXT_LIMITS.recentFailures);
};

/**
 * One context from both sides of a conflict: decisions, claims and failures are united; the
 * newer side (by its summary's time, then its last run's) gives the summary and its
 * checkpoint, the feature request, the pinned rules, the checklist and the last run.
 */
export const mergeContexts = (ours: SharedContext, theirs: SharedContext): SharedContext => {
  const [newer, older] = isNewer(theirs, ours) ? [theirs, ours] : [ours, theirs];
  const lastRun =
    newer.lastRun === undefined || (older.lastRun?.at ?? NEVER) > (newer.lastRun.at ?? NEVER)
      ? older.lastRun
      : newer.lastRun;
  const { checkpoint: _, lastRun: __, ...rest } = newer;
  return {
    ...rest,
    featureRequest: newer.featureRequest.trim() === '' ? older.featureRequest : newer.featureRequest,
    ...(newer.checkpoint === undefined ? {} : { checkpoint: newer.checkpoint }),
    openDecisions: mergeDecisions(newer.openDecisions, older.openDecisions),
    evidenceLedger: mergeClaims(newer.evidenceLedger, older.evidenceLedger),
    ...(lastRun === undefined ? {} : { lastRun }),
    recentFailures: mergeFailures(newer.recentFailures, older.recentFailures),
  };
};

/** What merging two sides of a context file did: the file, the identity the sides were brought under, and what caps pushed out. */
export interface ContextFilesMerge {
  readonly file: ContextFile;
  /** Set when the sides recorded different repository identities: the one kept, and the one re-keyed to it. */
  readonly identity?: { readonly kept: RepositoryIdentity; readonly rekeyed: RepositoryIdentity };
  /** What a cap pushed out (decisions, claims, failures), for each merged context. */
  readonly dropped: ReadonlyArray<DroppedEntry>;
}

const SOURCE_RANK: Readonly<Record<RepositoryIdentity['source'], number>> = { origin: 0, first_commit: 1, folder: 2 };

/** The identity a side was written under: recorded, or (a file from before identities were recorded) its one repo part. */
const identityOf = (file: ContextFile): RepositoryIdentity | undefined => {
  if (file.repository !== undefined) return file.repository;
  const repos = [...new Set(file.contexts.map((context) => context.key.repo))];
  return repos.length === 1 ? { id: repos[0]!, source: 'folder' } : undefined;
};

/** The contexts either side kept apart, each once: they go back untouched, whichever side held them. */
const unionQuarantined = (
  ours: ReadonlyArray<QuarantinedContext>,
  theirs: ReadonlyArray<QuarantinedContext>,
): ReadonlyArray<QuarantinedContext> => {
  const seen = new Set(ours.map((entry) => JSON.stringify(entry.raw)));
  return [...ours, ...theirs.filter((entry) => !seen.has(JSON.stringify(entry.raw)))];
};

/** Of two identities, the one both clones keep whichever side they are on: the stronger source, then the smaller id. */
const strongerIdentity = (a: RepositoryIdentity, b: RepositoryIdentity): RepositoryIdentity =>
  SOURCE_RANK[a.source] !== SOURCE_RANK[b.source]
    ? SOURCE_RANK[a.source] < SOURCE_RANK[b.source]
      ? a
      : b
    : a.id <= b.id
      ? a
      : b;

/**
 * Both sides of a conflicted context file as one: every workstream of either, those of both
 * merged (see `mergeContexts`). Two clones that keyed the same repository differently (one
 * without a remote, by its first commit; one by its origin) recorded two identities: the
 * contexts of the weaker one are re-keyed to the stronger (an origin over a first commit over a
 * folder name; between two of a kind, the smaller id), so the same branch and workstream become
 * one context, whichever clone resolves. What a cap pushed out is listed, never silent.
 */
export const mergeContextFilesReported = (ours: ContextFile, theirs: ContextFile): ContextFilesMerge => {
  const [oursId, theirsId] = [identityOf(ours), identityOf(theirs)];
  const unify =
    oursId === undefined || theirsId === undefined || oursId.id === theirsId.id
      ? undefined
      : strongerIdentity(oursId, theirsId) === oursId
        ? { kept: oursId, rekeyed: theirsId }
        : { kept: theirsId, rekeyed: oursId };
  const rekeyed = (context: SharedContext): SharedContext =>
    unify !== undefined && context.key.repo === unify.rekeyed.id
      ? { ...context, key: { ...context.key, repo: unify.kept.id } }
      : context;
  const contexts: SharedContext[] = [];
  const sources: SharedContext[][] = [];
  for (const context of [...ours.contexts, ...theirs.contexts].map(rekeyed)) {
    const at = contexts.findIndex((known) => isSameContextKey(known.key, context.key));
    if (at === -1) {
      contexts.push(context);
      sources.push([context]);
    } else {
      contexts[at] = { ...mergeContexts(contexts[at]!, context), key: contexts[at]!.key };
      sources[at]!.push(context);
    }
  }
  const repository = unify?.kept ?? ours.repository ?? theirs.repository;
  const quarantined = unionQuarantined(ours.quarantined ?? [], theirs.quarantined ?? []);
  return {
    file: {
      kind: ours.kind,
      ...(repository === undefined ? {} : { repository }),
      contexts: [...contexts].sort((a, b) => compareContextKeys(a.key, b.key)),
      ...(quarantined.length === 0 ? {} : { quarantined }),
    },
    ...(unify === undefined ? {} : { identity: unify }),
    dropped: contexts.flatMap((context, i) =>
      sources[i]!.length > 1 ? selectDroppedEntries(context.key, sources[i]!, context) : [],
    ),
  };
};

/** Both sides of a conflicted context file as one (see `mergeContextFilesReported`, which also says what it did). */
export const mergeContextFiles = (ours: ContextFile, theirs: ContextFile): ContextFile =>
  mergeContextFilesReported(ours, theirs).file;
