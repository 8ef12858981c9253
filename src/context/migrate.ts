/**
 * Migration of older context files to schema version 1, as a pure function of the parsed
 * document. The spec's draft layout is one context per file (its `key` at the top, no
 * `contexts`), tool sessions inline, no checklist and free-form times; it is version 0 without
 * a `schema_version`, and the spec's own example declares `"schema_version": 1` over it, so the
 * layout decides, not the number alone. The result is validated as version 1 afterwards, so a
 * migration only reshapes; it never vouches.
 */
import * as E from 'fp-ts/lib/Either.js';
import { type Fields, isRecord } from '../base/record.js';
import { isBlank } from '../base/text.js';
import { parseIsoTime } from '../base/time.js';
import { checkedKind } from './arguments.js';
import { formatLineRange, parseLineRange } from './ledger.js';
import { CONTEXT_SCHEMA_VERSION, type ContextError, type ContextKind } from './model.js';

type Json = Fields;

const record = (value: unknown): Json => (isRecord(value) ? value : {});
const list = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : []);
/** `value` when it is text that shows something (invisible characters only, U+200B, do not), else `fallback`. */
const textOr = (value: unknown, fallback: string): string =>
  typeof value === 'string' && !isBlank(value) ? value : fallback;

/** A draft time as ISO-8601, or null when it is missing or not a time. */
const isoOrNull = (value: unknown): string | null => {
  if (typeof value !== 'string') return null;
  const parsed = parseIsoTime(value);
  return E.isRight(parsed) && Number.isFinite(parsed.right) ? new Date(parsed.right).toISOString() : null;
};

/**
 * The optional time `name` of version 1 from a draft's free-form `value`: ISO-8601 when it is
 * a time, else left out (as a summary's unreadable time becomes null), never kept unreadable.
 */
const optionalTime = (name: string, value: unknown): Json => {
  const iso = isoOrNull(value);
  return iso === null ? {} : { [name]: iso };
};

/** `10-40` and `L10-L40` both become `L10-L40`; anything else is left for validation to name. */
const canonicalLines = (lines: unknown): unknown =>
  typeof lines === 'string' ? E.getOrElse((): unknown => lines)(E.map(formatLineRange)(parseLineRange(lines))) : lines;

const NOT_RECORDED = '(not recorded)';

const failureOf = (run: Json): Json => ({
  failed_step: textOr(run['failed_step'], NOT_RECORDED),
  error: textOr(run['error'], NOT_RECORDED),
  next_action: textOr(run['next_action'], NOT_RECORDED),
  ...optionalTime('at', run['at']),
});

/**
 * The draft's last run, with the fields this version does not know kept as it keeps them
 * everywhere; only the status, a failure's texts and the time are reshaped.
 */
const lastRunOf = (run: Json): Json => {
  const { at: _, ...rest } = run;
  return run['status'] === 'failed'
    ? { ...rest, status: 'failed', ...failureOf(run) }
    : { ...rest, status: 'succeeded', ...optionalTime('at', run['at']) };
};

/** A draft claim, its other fields kept: its lines made canonical, its time ISO-8601. */
const claimOf = (raw: unknown): Json => {
  const { recorded_at: _, ...entry } = record(raw);
  return {
    ...entry,
    claim: entry['claim'],
    files: list(entry['files']).map((file) => ({ ...record(file), lines: canonicalLines(record(file)['lines']) })),
    symbols: list(entry['symbols']),
    ...optionalTime('recorded_at', record(raw)['recorded_at']),
  };
};

/** The draft's fields this migration reads (or drops: `cli_sessions`); any other is kept on the context, as version 1 keeps fields it does not know. */
const DRAFT_FIELDS: ReadonlySet<string> = new Set([
  'schema_version',
  'kind',
  'key',
  'feature_request',
  'checkpoint',
  'pinned_rules',
  'working_summary',
  'open_decisions',
  'evidence_ledger',
  'cli_sessions',
  'last_run',
]);

/** The draft's one context as a version-1 context entry. */
const migrateDraftContext = (draft: Json): Json => {
  const key = record(draft['key']);
  const summary = record(draft['working_summary']);
  const run = isRecord(draft['last_run']) ? draft['last_run'] : undefined;
  const failed = run !== undefined && run['status'] === 'failed';
  return {
    ...Object.fromEntries(Object.entries(draft).filter(([name]) => !DRAFT_FIELDS.has(name))),
    key: { repo: key['repo'] ?? key['repo_path'], branch: key['branch'], workstream_id: key['workstream_id'] },
    feature_request: typeof draft['feature_request'] === 'string' ? draft['feature_request'] : '',
    checkpoint: isRecord(draft['checkpoint']) ? draft['checkpoint'] : null,
    pinned_rules: list(draft['pinned_rules']),
    working_summary: {
      ...summary,
      text: typeof summary['text'] === 'string' ? summary['text'] : '',
      updated_at: isoOrNull(summary['updated_at']),
      // A migrated summary has never been verified by this code: stale until a checkpoint says otherwise.
      stale: true,
    },
    open_decisions: list(draft['open_decisions']),
    checklist: [],
    evidence_ledger: list(draft['evidence_ledger']).map(claimOf),
    last_run: run === undefined ? null : lastRunOf(run),
    recent_failures: failed ? [failureOf(run)] : [],
  };
};

const corrupt = (message: string): ContextError => ({ code: 'corrupt', message });

/** True for the spec's draft layout: one context whose `key` is at the top, and no `contexts`. */
const isDraftLayout = (document: Json): boolean => isRecord(document['key']) && !('contexts' in document);

/**
 * Migrates a parsed context document of `kind` to version 1, or says why it cannot: the draft
 * layout, whether it declares version 0 (or nothing) or 1 as the spec's example does; a
 * version-1 file is returned as it is. The draft's inline `cli_sessions` are dropped: session
 * ids are best-effort acceleration, never a source of truth, and version 1 keeps them out of
 * shared files.
 */
export const migrateContextDocument = (document: unknown, kind: ContextKind): E.Either<ContextError, unknown> => {
  // The kind is the caller's, not the document's: one that is none is a programmer's mistake.
  checkedKind(kind);
  if (!isRecord(document)) return E.left(corrupt('expected a JSON object'));
  const version = document['schema_version'] ?? 0;
  if (version === CONTEXT_SCHEMA_VERSION && !isDraftLayout(document)) return E.right(document);
  if (version !== 0 && version !== CONTEXT_SCHEMA_VERSION)
    return E.left(corrupt(`no migration from schema version ${JSON.stringify(version)}`));
  if (!isRecord(document['key'])) return E.left(corrupt('a draft (version 0) context needs a key'));
  return E.right({ schema_version: CONTEXT_SCHEMA_VERSION, kind, contexts: [migrateDraftContext(document)] });
};
