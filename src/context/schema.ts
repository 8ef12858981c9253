/**
 * The context files on disk (schema version 1, snake_case as the spec writes it), decoded
 * with validation into plain `SharedContext` values and encoded back deterministically
 * (contexts in key order, two-space JSON: the file is committed, so its diffs should read
 * well). A file is decoded whole or refused with the path of the first offending field.
 */
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import { z } from 'zod';
import { formatPath } from '../base/schema.js';
import { restoreProtoFields } from '../base/protoFields.js';
import { isRecord } from '../base/record.js';
import { deepFreeze } from '../persistent/freeze.js';
import { collapseWhitespace } from '../base/text.js';
import { checkedContext, checkedContextFile, checkedKind } from './arguments.js';
import { compareContextKeys, contextKeyId, isSameContextKey, normalizeKeyPart } from './key.js';
import { migrateContextDocument } from './migrate.js';
import {
  CONTEXT_KINDS,
  CONTEXT_LIMITS,
  CONTEXT_SCHEMA_VERSION,
  type ContextError,
  type ContextFile,
  type ContextKey,
  type ContextKind,
  DECISION_STATUSES,
  type LastRun,
  type QuarantinedContext,
  type RunFailure,
  type SharedContext,
  isContextTime,
} from './model.js';
import { pinnedRulesProblem } from './pinned.js';
import { REPOSITORY_SOURCES } from './repository.js';
import { findSecretField, redactSecrets, type SecretLocation } from './secrets.js';
import { recordedEvidencePathProblem } from './ledger.js';

/** The limits, short. */
export const L = CONTEXT_LIMITS;
const text = (max: number) => z.string().max(max);
/** A non-empty string of at most `max` characters. */
export const line = (max: number) => z.string().min(1).max(max);
/**
 * An ISO-8601 time as `Date.parse` reads it: `Z` or an offset (`+00:00`, as a hand-edited file
 * or another tool may write), within the years 0000 to 9999 once in UTC. Written back as `Z`.
 */
const time = z.iso
  .datetime({ offset: true })
  .refine((iso) => isContextTime(Date.parse(iso)), { message: 'is outside the years 0000 to 9999 (UTC)' });

/**
 * An object of string keys and `value`s, read as its own entries: zod's `record` assigns each
 * entry to a plain object, where a key `__proto__` sets nothing, so a rule named so lost its
 * pinner when its file was read. Each entry is defined on the result as a property of its own.
 * A failure names the entry by its key where keys are names (`keysAreNames`: a CLI's name),
 * else by its place (a pinned rule's text is the user's, as a value is).
 */
export const ownRecord = <V>(key: z.ZodType<string>, value: z.ZodType<V>, keysAreNames: boolean) =>
  z.unknown().transform((input, context): Record<string, V> => {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) {
      context.addIssue({ code: 'custom', message: 'must be an object' });
      return z.NEVER;
    }
    const out: Record<string, V> = {};
    let place = 0;
    for (const [name, item] of Object.entries(input)) {
      place += 1;
      const parsedKey = key.safeParse(name);
      const parsedValue = value.safeParse(item);
      const issue = parsedKey.success ? parsedValue.error?.issues[0] : parsedKey.error.issues[0];
      if (issue !== undefined) {
        const what = parsedKey.success ? 'value' : 'key';
        context.addIssue(
          keysAreNames && parsedKey.success
            ? { code: 'custom', message: issue.message, path: [name, ...issue.path] }
            : { code: 'custom', message: `entry ${place}: its ${what} ${issue.message}` },
        );
        return z.NEVER;
      }
      Object.defineProperty(out, parsedKey.data!, {
        value: parsedValue.data,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  });

/** A key part as the files write it: it is read normalized (`keyFrom`), which must leave a part within the cap. */
const keyPart = line(L.keyPart).refine(
  (part) => normalizeKeyPart(part) !== '' && normalizeKeyPart(part).length <= L.keyPart,
  { message: `is blank, or longer than ${L.keyPart} characters, once normalized` },
);

/** A key as the files write it. */
export const KeySchema = z.object({
  repo: keyPart,
  branch: keyPart,
  workstream_id: keyPart,
});

/**
 * The fields of `doc` that `known` does not name (a newer 1.x writer's, a team's own
 * annotation): kept as they were read, to be written back after the known ones.
 */
const unknownFieldsOf = (
  doc: Readonly<Record<string, unknown>>,
  known: Readonly<Record<string, unknown>>,
): { unknownFields?: Readonly<Record<string, unknown>> } => {
  const unknown = Object.entries(doc).filter(([name]) => !Object.hasOwn(known, name));
  return unknown.length === 0 ? {} : { unknownFields: Object.fromEntries(unknown) };
};

/** The fields `unknownFieldsOf` kept, to write back. */
const unknownFieldsTo = (value: { readonly unknownFields?: Readonly<Record<string, unknown>> }) =>
  value.unknownFields ?? {};

const CheckpointSchema = z.looseObject({
  git_head: z.string().regex(/^([0-9a-f]{7,64})?$/u, 'not a commit id'),
  tracked_files_hash: line(L.hash),
  // Optional within version 1 (older readers drop it): which files hash tracked_files_hash is;
  // absent, the one that left new files out (the checkpoint of an older release).
  tracked_files_hash_version: z.int().positive().optional(),
  summary_hash: line(L.hash),
  // Optional within version 1 (older readers drop it): files with uncommitted edits at the checkpoint.
  uncommitted: z.array(line(L.path)).max(L.uncommittedPaths).optional(),
});

const FailureFields = {
  failed_step: line(L.runText),
  error: line(L.runText),
  next_action: line(L.runText),
  at: time.optional(),
};
const FailureSchema = z.looseObject(FailureFields);

const SucceededSchema = z.looseObject({ status: z.literal('succeeded'), at: time.optional() });
const FailedSchema = z.looseObject({ status: z.literal('failed'), ...FailureFields });
const LastRunSchema = z.discriminatedUnion('status', [SucceededSchema, FailedSchema]);

const SummarySchema = z.looseObject({ text: text(L.summary), updated_at: time.nullable(), stale: z.boolean() });
const DecisionSchema = z.looseObject({
  id: z.string().regex(/^D[1-9]\d{0,8}$/u),
  text: line(L.decision),
  status: z.enum(DECISION_STATUSES),
});
const StepSchema = z.looseObject({ text: line(L.checklistItem), done: z.boolean() });
const FileSchema = z.looseObject({
  // A path a claim could not have recorded (`../../etc/passwd`) is refused, never followed.
  path: line(L.path).superRefine((path, issues) => {
    const problem = recordedEvidencePathProblem(path);
    if (problem !== undefined) issues.addIssue({ code: 'custom', message: problem });
  }),
  // So is a range that ends before it starts (`L40-L10`), which no check past the file's end could read.
  lines: z
    .string()
    .regex(/^L[1-9]\d{0,8}(-L[1-9]\d{0,8})?$/u)
    .superRefine((lines, issues) => {
      const [start = 0, end = start] = (lines.match(/\d+/gu) ?? []).map(Number);
      if (end < start) issues.addIssue({ code: 'custom', message: 'ends before it starts' });
    }),
});
const ClaimSchema = z.looseObject({
  claim: line(L.claim),
  files: z.array(FileSchema),
  symbols: z.array(line(L.symbol)),
  recorded_at: time.optional(),
});

const ContextFields = {
  key: KeySchema,
  feature_request: text(L.featureRequest),
  checkpoint: CheckpointSchema.nullable(),
  pinned_rules: z.array(line(L.rule)),
  // Optional within version 1 (older readers drop it): who pinned each rule a user added.
  pinned_by: ownRecord(line(L.rule), line(L.keyPart), false).optional(),
  working_summary: SummarySchema,
  open_decisions: z
    .array(DecisionSchema)
    .max(L.decisions)
    .refine((decisions) => new Set(decisions.map((decision) => decision.id)).size === decisions.length, {
      message: 'decision ids repeat',
    }),
  checklist: z.array(StepSchema).max(L.checklist),
  evidence_ledger: z.array(ClaimSchema).max(L.claims),
  last_run: LastRunSchema.nullable(),
  recent_failures: z.array(FailureSchema).max(L.recentFailures),
};

const ContextSchema = z.looseObject(ContextFields).superRefine((context, issues) => {
  // The rules must fit the bundle whole, each user's rule counted as the release that pinned it counted it.
  const problem = pinnedRulesProblem(context.pinned_rules, context.pinned_by, 'asPinned');
  if (problem !== undefined) issues.addIssue({ code: 'custom', message: problem, path: ['pinned_rules'] });
});

const RepositorySchema = z.looseObject({ id: keyPart, source: z.enum(REPOSITORY_SOURCES) });

const ContextFileSchema = z.looseObject({
  schema_version: z.literal(CONTEXT_SCHEMA_VERSION),
  kind: z.enum(CONTEXT_KINDS),
  // Optional within version 1: files written before it was recorded are migrated on their next write.
  repository: RepositorySchema.optional(),
  contexts: z.array(ContextSchema),
});

/** The envelope of a context file: each of its contexts is decoded on its own, so one broken context is kept apart alone. */
const ContextFileEnvelope = ContextFileSchema.extend({ contexts: z.array(z.unknown()) });

/**
 * A context file as written to disk (schema version 1): its contexts in key order, then those
 * kept apart, exactly as they were read (which is why an entry's type is not known here).
 */
export type ContextFileDocument = Omit<z.infer<typeof ContextFileSchema>, 'contexts'> & {
  readonly contexts: ReadonlyArray<unknown>;
};

type ContextDocument = z.infer<typeof ContextSchema>;
/** A key as the files write it. */
export type KeyDocument = z.infer<typeof KeySchema>;
type FailureDocument = z.infer<typeof ContextSchema>['recent_failures'][number];

const corrupt = (message: string): ContextError => ({ code: 'corrupt', message });

/** Validates `value`; a failure names the first offending field and the rule it breaks, never the value. */
export const validate = <T>(schema: z.ZodType<T>, value: unknown): E.Either<ContextError, T> => {
  const parsed = schema.safeParse(value);
  if (parsed.success) return E.right(parsed.data);
  const issue = parsed.error.issues[0];
  return E.left(
    corrupt(
      issue === undefined
        ? 'does not match the schema'
        : `${formatPath(issue.path)}: ${collapseWhitespace(issue.message)}`,
    ),
  );
};

const toMillis = (iso: string): number => Date.parse(iso);
const toIso = (at: number): string => new Date(at).toISOString();
const optionalAt = (iso: string | undefined): { at?: number } => (iso === undefined ? {} : { at: toMillis(iso) });
const isoAt = (at: number | undefined): { at?: string } => (at === undefined ? {} : { at: toIso(at) });

/**
 * A key as the code holds it: each part normalized as a part a command gives is, so a key a
 * file stores as it was typed (by hand, by another tool, by a version that did not normalize:
 * `api `, a decomposed `café`) is found by the command's key, and written back normalized.
 */
export const keyFrom = (key: KeyDocument): ContextKey => ({
  repo: normalizeKeyPart(key.repo),
  branch: normalizeKeyPart(key.branch),
  workstreamId: normalizeKeyPart(key.workstream_id),
});
/** A key as the files write it. */
export const keyTo = (key: ContextKey): KeyDocument => ({
  repo: key.repo,
  branch: key.branch,
  workstream_id: key.workstreamId,
});

/** A failure as the code holds it; `known` names the fields of where it stands (a last run's status too). */
const failureFrom = (
  failure: FailureDocument,
  known: Readonly<Record<string, unknown>> = FailureFields,
): RunFailure => ({
  failedStep: failure.failed_step,
  error: failure.error,
  nextAction: failure.next_action,
  ...optionalAt(failure.at),
  ...unknownFieldsOf(failure, known),
});
const failureTo = (failure: RunFailure): FailureDocument => ({
  failed_step: failure.failedStep,
  error: failure.error,
  next_action: failure.nextAction,
  ...isoAt(failure.at),
  ...unknownFieldsTo(failure),
});

const lastRunFrom = (run: NonNullable<ContextDocument['last_run']>): LastRun =>
  run.status === 'succeeded'
    ? { status: 'succeeded', ...optionalAt(run.at), ...unknownFieldsOf(run, SucceededSchema.shape) }
    : { status: 'failed', ...failureFrom(run, FailedSchema.shape) };

const contextFrom = (doc: ContextDocument): SharedContext => ({
  key: keyFrom(doc.key),
  featureRequest: doc.feature_request,
  ...(doc.checkpoint === null
    ? {}
    : {
        checkpoint: {
          gitHead: doc.checkpoint.git_head,
          trackedFilesHash: doc.checkpoint.tracked_files_hash,
          ...(doc.checkpoint.tracked_files_hash_version === undefined
            ? {}
            : { trackedFilesHashVersion: doc.checkpoint.tracked_files_hash_version }),
          summaryHash: doc.checkpoint.summary_hash,
          ...(doc.checkpoint.uncommitted === undefined ? {} : { uncommitted: doc.checkpoint.uncommitted }),
          ...unknownFieldsOf(doc.checkpoint, CheckpointSchema.shape),
        },
      }),
  pinnedRules: doc.pinned_rules,
  ...(doc.pinned_by === undefined || Object.keys(doc.pinned_by).length === 0 ? {} : { pinnedBy: doc.pinned_by }),
  workingSummary: {
    text: doc.working_summary.text,
    ...(doc.working_summary.updated_at === null ? {} : { updatedAt: toMillis(doc.working_summary.updated_at) }),
    stale: doc.working_summary.stale,
    ...unknownFieldsOf(doc.working_summary, SummarySchema.shape),
  },
  openDecisions: doc.open_decisions.map((decision) => ({
    id: decision.id,
    text: decision.text,
    status: decision.status,
    ...unknownFieldsOf(decision, DecisionSchema.shape),
  })),
  checklist: doc.checklist.map((step) => ({
    text: step.text,
    done: step.done,
    ...unknownFieldsOf(step, StepSchema.shape),
  })),
  evidenceLedger: doc.evidence_ledger.map((entry) => ({
    claim: entry.claim,
    files: entry.files.map((file) => ({
      path: file.path,
      lines: file.lines,
      ...unknownFieldsOf(file, FileSchema.shape),
    })),
    symbols: entry.symbols,
    ...optionalAt(entry.recorded_at),
    ...unknownFieldsOf(entry, ClaimSchema.shape),
  })),
  ...(doc.last_run === null ? {} : { lastRun: lastRunFrom(doc.last_run) }),
  recentFailures: doc.recent_failures.map((failure) => failureFrom(failure)),
  ...unknownFieldsOf(doc, ContextFields),
});

const contextTo = (context: SharedContext): ContextDocument => ({
  key: keyTo(context.key),
  feature_request: context.featureRequest,
  checkpoint:
    context.checkpoint === undefined
      ? null
      : {
          git_head: context.checkpoint.gitHead,
          tracked_files_hash: context.checkpoint.trackedFilesHash,
          summary_hash: context.checkpoint.summaryHash,
          ...(context.checkpoint.uncommitted === undefined ? {} : { uncommitted: [...context.checkpoint.uncommitted] }),
          // After what a checkpoint records, not among it: git merges a context file line by line,
          // and a line both sides leave alone between two of its lines would let it take one from
          // each side's checkpoint without a conflict.
          ...(context.checkpoint.trackedFilesHashVersion === undefined
            ? {}
            : { tracked_files_hash_version: context.checkpoint.trackedFilesHashVersion }),
          ...unknownFieldsTo(context.checkpoint),
        },
  pinned_rules: [...context.pinnedRules],
  ...(context.pinnedBy === undefined || Object.keys(context.pinnedBy).length === 0
    ? {}
    : {
        pinned_by: Object.fromEntries(
          Object.entries(context.pinnedBy).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        ),
      }),
  working_summary: {
    text: context.workingSummary.text,
    updated_at: context.workingSummary.updatedAt === undefined ? null : toIso(context.workingSummary.updatedAt),
    stale: context.workingSummary.stale,
    ...unknownFieldsTo(context.workingSummary),
  },
  open_decisions: context.openDecisions.map((decision) => ({
    id: decision.id,
    text: decision.text,
    status: decision.status,
    ...unknownFieldsTo(decision),
  })),
  checklist: context.checklist.map((step) => ({ text: step.text, done: step.done, ...unknownFieldsTo(step) })),
  evidence_ledger: context.evidenceLedger.map((entry) => ({
    claim: entry.claim,
    files: entry.files.map((file) => ({ path: file.path, lines: file.lines, ...unknownFieldsTo(file) })),
    symbols: [...entry.symbols],
    ...(entry.at === undefined ? {} : { recorded_at: toIso(entry.at) }),
    ...unknownFieldsTo(entry),
  })),
  last_run:
    context.lastRun === undefined
      ? null
      : context.lastRun.status === 'succeeded'
        ? { status: 'succeeded', ...isoAt(context.lastRun.at), ...unknownFieldsTo(context.lastRun) }
        : { status: 'failed', ...failureTo(context.lastRun) },
  recent_failures: context.recentFailures.map(failureTo),
  ...unknownFieldsTo(context),
});

/** The schema version a parsed document declares: 0 for the draft layout, which has none. */
export const versionOf = (value: unknown): E.Either<ContextError, number> => {
  if (!isRecord(value)) return E.left(corrupt('expected a JSON object'));
  const version = value['schema_version'] ?? 0;
  return typeof version === 'number' && Number.isSafeInteger(version) && version >= 0
    ? E.right(version)
    : E.left(corrupt('schema_version is not a version number'));
};

/** Refuses a file written by a newer schema, naming its version; it is left as it is. */
export const notNewer = (version: number): E.Either<ContextError, number> =>
  version > CONTEXT_SCHEMA_VERSION
    ? E.left({
        code: 'future_version',
        message: `written with schema version ${version}, newer than the ${CONTEXT_SCHEMA_VERSION} this version of session-fact-tracker reads: upgrade it (the file was left as it is)`,
      })
    : E.right(version);

/** Refuses a file of the other kind. */
export const sameKind = (kind: ContextKind, found: ContextKind): E.Either<ContextError, ContextKind> =>
  found === kind ? E.right(kind) : E.left(corrupt(`holds ${found} context where ${kind} context belongs`));

/**
 * Refuses a file in which two entries share one key as written: no writer makes one, but git
 * joining a conflict's hunks wrongly does, which the reading of a conflict tells by this
 * refusal. Keys written apart that only read alike are not refused here (`keepApartSharedKeys`).
 */
export const uniqueKeys = (keys: ReadonlyArray<KeyDocument | undefined>): E.Either<ContextError, true> => {
  // An undefined key (an entry kept apart) holds its place, so the entries are named by their index in the file.
  const indexed = keys.flatMap((key, index) =>
    key === undefined ? [] : [{ key: { repo: key.repo, branch: key.branch, workstreamId: key.workstream_id }, index }],
  );
  const sorted = [...indexed].sort((a, b) => compareContextKeys(a.key, b.key) || a.index - b.index);
  const repeat = sorted.findIndex((entry, i) => i > 0 && isSameContextKey(entry.key, sorted[i - 1]!.key));
  const { key, index } = sorted[repeat] ?? {};
  return key === undefined
    ? E.right(true)
    : E.left(
        corrupt(
          `entries ${sorted[repeat - 1]!.index} and ${index} share one key (workstream ${redactSecrets(key.workstreamId)}, branch ${redactSecrets(key.branch)})`,
        ),
      );
};

/** The refusal of a file holding one key twice, marked so that a write leaves the file as it is (`repeatedKey`). */
const repeatedKey = (error: ContextError): ContextError => ({ ...error, repeatedKey: true });

/** One entry of a file's `contexts` (at `index`): decoded, or kept apart with where it breaks the schema. */
const decodeEntry = (raw: unknown, index: number): E.Either<QuarantinedContext, SharedContext> => {
  const parsed = ContextSchema.safeParse(raw);
  if (parsed.success) return E.right(contextFrom(restoreProtoFields(raw, parsed.data)));
  const issue = parsed.error.issues[0];
  const key = KeySchema.safeParse(typeof raw === 'object' && raw !== null ? (raw as { key?: unknown }).key : undefined);
  return E.left({
    raw,
    ...(key.success ? { key: keyFrom(key.data) } : {}),
    problem: `${formatPath(['contexts', index, ...(issue?.path ?? [])])}: ${collapseWhitespace(issue?.message ?? 'does not match the schema')}`,
  });
};

/**
 * The decoded entries of a file, with every one whose key another shares once read kept apart:
 * two entries spelled apart in the file (`api ` and `api`, a decomposed and a composed `café`:
 * a hand edit, or a version that stored keys as typed beside one that normalized them) name one
 * workstream. Serving either would hide the other and merging them would keep one summary of
 * two, so both stay as they are, for the user to merge or rename; the other workstreams are served.
 */
const keepApartSharedKeys = (
  raw: ReadonlyArray<unknown>,
  entries: ReadonlyArray<E.Either<QuarantinedContext, SharedContext>>,
): ReadonlyArray<E.Either<QuarantinedContext, SharedContext>> => {
  const holders = new Map<string, number[]>();
  entries.forEach((entry, index) => {
    if (E.isLeft(entry)) return;
    const id = contextKeyId(entry.right.key);
    holders.set(id, [...(holders.get(id) ?? []), index]);
  });
  const shared = new Map<number, ReadonlyArray<number>>();
  for (const indexes of holders.values())
    if (indexes.length > 1) for (const index of indexes) shared.set(index, indexes);
  return entries.map((entry, index) => {
    const indexes = shared.get(index);
    if (E.isLeft(entry) || indexes === undefined) return entry;
    const others = indexes.filter((other) => other !== index).map((other) => `contexts[${other}]`);
    return E.left({
      raw: raw[index],
      key: entry.right.key,
      problem: `contexts[${index}].key: names the same workstream as ${others.join(' and ')} once read normalized (Unicode NFC, whitespace runs as one space, none at either end): merge them into one entry, or rename all but one`,
    });
  });
};

/**
 * Decodes a parsed context file of `kind`: a newer version is refused, an older one migrated,
 * and version 1 validated field by field, each context on its own: one that breaks a cap or
 * its schema, or whose key another reads as, is kept apart (`quarantined`) and the others are
 * decoded, so a hand edit of one workstream never takes the file down. Only a file whose
 * envelope is wrong (not an object, another kind, two entries with one key as written) is
 * refused whole.
 */
export const decodeContextFile = (value: unknown, kind: ContextKind): E.Either<ContextError, ContextFile> => {
  // The kind is the caller's, not the file's: one that is none is a programmer's mistake.
  checkedKind(kind);
  return pipe(
    versionOf(value),
    E.chain(notNewer),
    // The spec's draft layout comes as version 0 and as version 1 (its own example): the migration tells them apart.
    E.chain(() => migrateContextDocument(value, kind)),
    // A field named `__proto__` is kept like any other the schema does not name (`restoreProtoFields`).
    E.chain((document) =>
      pipe(
        validate(ContextFileEnvelope, document),
        E.map((read) => restoreProtoFields(document, read)),
      ),
    ),
    E.chainFirst((document) => sameKind(kind, document.kind)),
    E.chain((document) => {
      const decoded = document.contexts.map(decodeEntry);
      const entries = keepApartSharedKeys(document.contexts, decoded);
      const contexts = entries.filter(E.isRight).map((entry) => entry.right);
      const quarantined = entries.filter(E.isLeft).map((entry) => entry.left);
      // Entries that decoded hold a key as the schema reads one.
      const written = document.contexts.map((raw, index) =>
        E.isRight(decoded[index]!) ? (raw as { readonly key: KeyDocument }).key : undefined,
      );
      return E.map(() =>
        deepFreeze({
          kind,
          ...(document.repository === undefined
            ? {}
            : {
                repository: {
                  // Normalized as the repo part of a key is: a re-keying compares the two.
                  id: normalizeKeyPart(document.repository.id),
                  source: document.repository.source,
                  ...unknownFieldsOf(document.repository, RepositorySchema.shape),
                },
              }),
          contexts: contexts.sort((a, b) => compareContextKeys(a.key, b.key)),
          ...(quarantined.length === 0 ? {} : { quarantined }),
          ...unknownFieldsOf(document, ContextFileSchema.shape),
        }),
      )(E.mapLeft(repeatedKey)(uniqueKeys(written)));
    }),
  );
};

/** The file as written to disk: version 1, contexts in key order, then those kept apart as they were read. */
export const encodeContextFile = (file: ContextFile): ContextFileDocument => ({
  schema_version: CONTEXT_SCHEMA_VERSION,
  kind: checkedContextFile(file).kind,
  ...(file.repository === undefined
    ? {}
    : {
        repository: {
          id: file.repository.id,
          source: file.repository.source,
          ...unknownFieldsTo(file.repository),
        },
      }),
  contexts: [
    ...[...file.contexts].sort((a, b) => compareContextKeys(a.key, b.key)).map(contextTo),
    ...(file.quarantined ?? []).map((entry) => entry.raw),
  ],
  ...unknownFieldsTo(file),
});

/** A document the reader would refuse, as the refusal of a write. */
export const unwritable = (error: ContextError): ContextError => ({
  code: 'invalid',
  message: `refused to write a file the reader would reject: ${error.message}`,
});

/**
 * The document to write for `file`, checked with the very schema that reads it back, so that
 * nothing is written that the next load would refuse (a time past year 9999, an empty field).
 * Contexts for which `decoded` holds (taken unchanged from a file this schema just read) are
 * not validated again: on a large file that halves the cost of a write.
 */
export const encodeCheckedContextFile = (
  file: ContextFile,
  decoded: (context: SharedContext) => boolean = () => false,
): E.Either<ContextError, ContextFileDocument> => {
  const document = encodeContextFile(file);
  const sorted = [...file.contexts].sort((a, b) => compareContextKeys(a.key, b.key));
  // The contexts kept apart go back exactly as they were read: only the others are checked.
  const unchecked = sorted.filter((context) => !decoded(context)).map(contextTo);
  return pipe(
    validate(ContextFileSchema, { ...document, contexts: unchecked }),
    E.chainFirst(() => uniqueKeys(sorted.map((context) => keyTo(context.key)))),
    E.bimap(unwritable, () => document),
  );
};

/** Where the stored form of `context` holds a secret (a path such as `working_summary.text`), if anywhere. */
export const findContextSecret = (context: SharedContext): SecretLocation | undefined =>
  findSecretField(contextTo(checkedContext(context)));
