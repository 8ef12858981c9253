/**
 * Merging the two sides of a context file that a `git pull` or merge left with conflict
 * markers (see `conflictMarkers.ts`), with their common ancestor when it is known: what a side
 * removed since the ancestor (a reverted claim, a decision pruned by hand) stays removed, and
 * everything else of both sides is kept: the union of what accumulates (decisions, claims,
 * failures, pinned rules, checklist steps) and the newer side of what is replaced (the summary
 * with its checkpoint, the last run). What a cap leaves out is reported, never silent.
 */
import { number } from '../base/count.js';
import { isBlank } from '../base/text.js';
import { checkedContext, checkedContextFile } from './arguments.js';
import { hashSummary } from './checkpoint.js';
import { compareContextKeys, contextKeyId } from './key.js';
import {
  type ChecklistItem,
  CONTEXT_LIMITS,
  type Claim,
  type ContextFile,
  type Decision,
  type DroppedEntry,
  type QuarantinedContext,
  type RepositoryIdentity,
  type RunFailure,
  type SharedContext,
  type UnknownFields,
} from './model.js';
import { failureIdentity, selectDroppedEntries } from './dropped.js';
import { isUnchanged, withoutDeletions } from './mergeBase.js';
import { PINNED_SECTION_MAX, pinnedRulesProblem, pinnedSectionLength, pinnedSectionLengthAsPinned } from './pinned.js';

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
 * has is kept; two different decisions that took the same id on each side both stay, the one
 * of `older` (the side that does not keep its ids) under a new id (the next free one), so no
 * decision is lost.
 */
const mergeDecisions = (
  newer: ReadonlyArray<Decision>,
  older: ReadonlyArray<Decision>,
  capped: boolean,
): Decision[] => {
  const merged = newer.map((decision) => ({ ...decision }));
  let next = Math.max(0, ...[...newer, ...older].map(decisionNumber)) + 1;
  for (const decision of older) {
    const sameId = merged.find((known) => known.id === decision.id);
    const same = sameId?.text === decision.text ? sameId : merged.find((known) => known.text === decision.text);
    if (same !== undefined) same.status = mergedStatus(decision, same);
    else if (sameId !== undefined) merged.push({ ...decision, id: `D${next++}` });
    else merged.push({ ...decision });
  }
  return capped ? keepDecisions(merged) : merged.sort((a, b) => decisionNumber(a) - decisionNumber(b));
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
const mergeClaims = (newer: ReadonlyArray<Claim>, older: ReadonlyArray<Claim>, capped: boolean): Claim[] => {
  const byText = new Map<string, Claim>();
  for (const claim of [...older, ...newer]) {
    const known = byText.get(claim.claim);
    if (known === undefined || (claim.at ?? NEVER) >= (known.at ?? NEVER)) byText.set(claim.claim, claim);
  }
  const claims = [...byText.values()].sort((a, b) => (a.at ?? NEVER) - (b.at ?? NEVER));
  return capped ? claims.slice(-CONTEXT_LIMITS.claims) : claims;
};

/** Failures by content and time: each once, oldest first, the last few kept. */
const mergeFailures = (newer: ReadonlyArray<RunFailure>, older: ReadonlyArray<RunFailure>): RunFailure[] => {
  const byId = new Map<string, RunFailure>();
  for (const failure of [...older, ...newer]) byId.set(failureIdentity(failure), failure);
  const failures = [...byId.values()].sort((a, b) => (a.at ?? NEVER) - (b.at ?? NEVER));
  return failures.slice(-CONTEXT_LIMITS.recentFailures);
};

/**
 * The pinned rules of both sides: the newer side's, then the older side's others, each with who
 * pinned it. Rules must fit the bundle whole: past that, the older side's last ones are left
 * out, each reported.
 */
const mergeRules = (
  newer: SharedContext,
  older: SharedContext,
  capped: boolean,
): Pick<SharedContext, 'pinnedRules' | 'pinnedBy'> & { readonly dropped: DroppedEntry[] } => {
  const rules = [...newer.pinnedRules];
  const by: Record<string, string> = { ...older.pinnedBy, ...newer.pinnedBy };
  const added = older.pinnedRules.filter((rule) => !rules.includes(rule));
  const dropped: DroppedEntry[] = [];
  for (const rule of added) {
    if (!capped || pinnedRulesProblem([...rules, rule], by, 'asPinned') === undefined) rules.push(rule);
    else dropped.push({ key: newer.key, what: 'rule', text: rule, cap: PINNED_SECTION_MAX });
  }
  const kept = Object.fromEntries(Object.entries(by).filter(([rule]) => rules.includes(rule)));
  return { pinnedRules: rules, ...(Object.keys(kept).length === 0 ? {} : { pinnedBy: kept }), dropped };
};

/**
 * The checklist of both sides: the newer side's steps in its order, then the older side's
 * others; a step done on either side is done. Past the cap, the older side's last ones are
 * left out, each reported.
 */
const mergeChecklist = (
  newer: SharedContext,
  older: SharedContext,
  capped: boolean,
): { readonly checklist: ChecklistItem[]; readonly dropped: DroppedEntry[] } => {
  const doneBefore = new Set(older.checklist.filter((step) => step.done).map((step) => step.text));
  const checklist = newer.checklist.map((step) => ({ ...step, done: step.done || doneBefore.has(step.text) }));
  const dropped: DroppedEntry[] = [];
  for (const step of older.checklist) {
    if (checklist.some((known) => known.text === step.text)) continue;
    if (!capped || checklist.length < CONTEXT_LIMITS.checklist) checklist.push({ ...step });
    else dropped.push({ key: newer.key, what: 'step', text: step.text, cap: CONTEXT_LIMITS.checklist });
  }
  return { checklist, dropped };
};

/** The fields this version does not know of both sides, `first`'s where both hold one. */
const unionUnknownFields = (
  first: { readonly unknownFields?: UnknownFields },
  second: { readonly unknownFields?: UnknownFields },
): { unknownFields?: UnknownFields } =>
  first.unknownFields === undefined && second.unknownFields === undefined
    ? {}
    : { unknownFields: { ...second.unknownFields, ...first.unknownFields } };

/**
 * The checkpoint that goes with the newer side's summary: its own, unless it does not verify that
 * summary and the older side's does. Git joins a context file line by line, so a side rebuilt
 * from the conflict markers can hold the summary the other side wrote (lines only that side
 * changed) beside its own checkpoint (lines both changed, as a re-verified one at another HEAD):
 * taken as it is, a summary verified where it was written would read as edited after its checkpoint.
 */
const checkpointOfSummary = (newer: SharedContext, older: SharedContext): SharedContext['checkpoint'] => {
  const summaryHash = hashSummary(newer.workingSummary.text);
  return newer.checkpoint?.summaryHash !== summaryHash && older.checkpoint?.summaryHash === summaryHash
    ? older.checkpoint
    : newer.checkpoint;
};

/** One context from two, and what a cap left out of its rules and steps (decisions, claims and failures: see `selectDroppedEntries`). */
export interface ContextsMerge {
  readonly context: SharedContext;
  readonly dropped: ReadonlyArray<DroppedEntry>;
}

/**
 * One context from both sides of a conflict: decisions, claims, failures, pinned rules and
 * checklist steps are united; the newer side (by its summary's time, then its last run's)
 * gives the summary with a checkpoint that verifies it (see `checkpointOfSummary`), the feature
 * request and the order of the rules and steps; the later last run wins.
 */
export const mergeContextsReported = (
  ours: SharedContext,
  theirs: SharedContext,
  /** Whose decisions keep their ids when both sides used one for different decisions: the newer side's, or ours (a context carried into this one). */
  ids: 'newer' | 'ours' = 'newer',
  /** Whether the caps push entries out (a conflict's merge), or everything of both is kept (a move, which refuses instead: see `selectCapOverrun`). */
  caps: 'apply' | 'ignore' = 'apply',
): ContextsMerge => {
  checkedContext(ours, 'ours');
  checkedContext(theirs, 'theirs');
  const [newer, older] = isNewer(theirs, ours) ? [theirs, ours] : [ours, theirs];
  const [keeper, other] = ids === 'ours' ? [ours, theirs] : [newer, older];
  const lastRun =
    newer.lastRun === undefined || (older.lastRun?.at ?? NEVER) > (newer.lastRun.at ?? NEVER)
      ? older.lastRun
      : newer.lastRun;
  const { checkpoint: _, lastRun: __, pinnedBy: ___, ...rest } = newer;
  const checkpoint = checkpointOfSummary(newer, older);
  const capped = caps === 'apply';
  const { dropped: rulesDropped, ...rules } = mergeRules(newer, older, capped);
  const { dropped: stepsDropped, checklist } = mergeChecklist(newer, older, capped);
  return {
    context: {
      ...rest,
      featureRequest: isBlank(newer.featureRequest) ? older.featureRequest : newer.featureRequest,
      ...(checkpoint === undefined ? {} : { checkpoint }),
      ...rules,
      checklist,
      openDecisions: mergeDecisions(keeper.openDecisions, other.openDecisions, capped),
      evidenceLedger: mergeClaims(newer.evidenceLedger, older.evidenceLedger, capped),
      ...(lastRun === undefined ? {} : { lastRun }),
      // The most recent failures are a window, not a cap: every write keeps the latest, a move too.
      recentFailures: mergeFailures(newer.recentFailures, older.recentFailures),
      ...unionUnknownFields(newer, older),
    },
    dropped: [...rulesDropped, ...stepsDropped],
  };
};

/**
 * The first cap `context` passes, said as what it holds over the cap and how much to prune; undefined
 * when it fits them all. What a merge that keeps everything (a move) checks before it writes.
 */
export const selectCapOverrun = (context: SharedContext): string | undefined => {
  const counted: ReadonlyArray<readonly [number, number, string]> = [
    [context.openDecisions.length, CONTEXT_LIMITS.decisions, 'decisions'],
    [context.evidenceLedger.length, CONTEXT_LIMITS.claims, 'claims'],
    [context.checklist.length, CONTEXT_LIMITS.checklist, 'checklist steps'],
  ];
  for (const [held, cap, what] of counted)
    if (held > cap)
      return `${number(held)} ${what}, over the ${number(cap)} a context holds: prune ${number(held - cap)}`;
  const rules = pinnedSectionLengthAsPinned(context.pinnedRules, context.pinnedBy);
  return rules > PINNED_SECTION_MAX
    ? `pinned rules of ${number(pinnedSectionLength(context.pinnedRules, context.pinnedBy))} characters as rendered, over the ${PINNED_SECTION_MAX} every bundle reserves for them: unpin or shorten rules by ${number(rules - PINNED_SECTION_MAX)} characters`
    : undefined;
};

/** One context from both sides of a conflict (see `mergeContextsReported`, which also says what a cap left out). */
export const mergeContexts = (ours: SharedContext, theirs: SharedContext): SharedContext =>
  mergeContextsReported(ours, theirs).context;

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

/** A context's key as one string, to look contexts up by it. */
const keyId = (context: SharedContext): string => contextKeyId(context.key);

/** The contexts of a side by key (two that re-keying brought under one key are merged). */
const byKey = (contexts: ReadonlyArray<SharedContext>): Map<string, SharedContext> => {
  const found = new Map<string, SharedContext>();
  for (const context of contexts) {
    const known = found.get(keyId(context));
    found.set(keyId(context), known === undefined ? context : { ...mergeContexts(known, context), key: known.key });
  }
  return found;
};

/**
 * Both sides of a conflicted context file as one: every workstream of either, those of both
 * merged (see `mergeContextsReported`). With `base`, the common ancestor, a side's deletions
 * stand: what the ancestor held and a side removed is not brought back by the other, and a
 * workstream one side removed while the other left it as it was stays removed. Two clones that
 * keyed the same repository differently (one without a remote, by its first commit; one by its
 * origin) recorded two identities: the contexts of the weaker one are re-keyed to the stronger
 * (an origin over a first commit over a folder name; between two of a kind, the smaller id), so
 * the same branch and workstream become one context, whichever clone resolves. What a cap
 * pushed out is listed, never silent.
 */
export const mergeContextFilesReported = (
  ours: ContextFile,
  theirs: ContextFile,
  base?: ContextFile,
): ContextFilesMerge => {
  checkedContextFile(ours, 'ours');
  checkedContextFile(theirs, 'theirs');
  // No common ancestor (a merge without a base) is undefined; null reads as none, as git gives none.
  if (base !== undefined && base !== null) checkedContextFile(base, 'the base');
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
  const mine = byKey(ours.contexts.map(rekeyed));
  const yours = byKey(theirs.contexts.map(rekeyed));
  const ancestor = byKey((base?.contexts ?? []).map(rekeyed));
  const contexts: SharedContext[] = [];
  const dropped: DroppedEntry[] = [];
  for (const id of new Set([...mine.keys(), ...yours.keys()])) {
    const [one, two, common] = [mine.get(id), yours.get(id), ancestor.get(id)];
    if (one !== undefined && two !== undefined) {
      const sides =
        common === undefined ? [one, two] : [withoutDeletions(one, two, common), withoutDeletions(two, one, common)];
      const merged = mergeContextsReported(sides[0]!, sides[1]!);
      const context = { ...merged.context, key: one.key };
      contexts.push(context);
      dropped.push(...selectDroppedEntries(context.key, sides, context), ...merged.dropped);
    } else {
      const only = (one ?? two)!;
      // Removed on the other side, and left as it was on this one: the removal stands.
      if (common === undefined || !isUnchanged(only, common)) contexts.push(only);
    }
  }
  const repository = unify?.kept ?? ours.repository ?? theirs.repository;
  const quarantined = unionQuarantined(ours.quarantined ?? [], theirs.quarantined ?? []);
  return {
    file: {
      kind: ours.kind,
      ...(repository === undefined ? {} : { repository }),
      contexts: contexts.sort((a, b) => compareContextKeys(a.key, b.key)),
      ...(quarantined.length === 0 ? {} : { quarantined }),
      ...unionUnknownFields(ours, theirs),
    },
    ...(unify === undefined ? {} : { identity: unify }),
    dropped,
  };
};

/** Both sides of a conflicted context file as one (see `mergeContextFilesReported`, which also says what it did). */
export const mergeContextFiles = (ours: ContextFile, theirs: ContextFile, base?: ContextFile): ContextFile =>
  mergeContextFilesReported(ours, theirs, base).file;
