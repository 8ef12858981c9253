/**
 * `fact-tracker context SUBCOMMAND`: the options of the shared-context commands, and the
 * parser `args.ts` delegates to. Each subcommand accepts only its own options, so a misplaced
 * one is a usage error rather than silently ignored.
 */
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import { isBlank } from '../base/text.js';
import { formatLineRange, normalizeEvidencePath, parseLineRange, type ClaimInput } from '../context/ledger.js';
import { CONTEXT_KINDS, type ContextKind, type DecisionStatus } from '../context/model.js';
import type { FailedRun } from '../context/runInput.js';
import { HELP_OPTION, type OptionTable, type UsageError } from './options.js';

/** The subcommands of `fact-tracker context`. */
export const CONTEXT_SUBCOMMANDS = [
  'show',
  'bundle',
  'checkpoint',
  'claim',
  'record-failure',
  'resolve',
  'move',
] as const;
/** One subcommand of `fact-tracker context`. */
export type ContextSubcommand = (typeof CONTEXT_SUBCOMMANDS)[number];

/** What `checkpoint` records after a verified run (the summary may come from a file). */
export interface CheckpointRequest {
  readonly summary?: string;
  readonly summaryFile?: string;
  readonly featureRequest?: string;
  readonly pinRules: ReadonlyArray<string>;
  readonly unpinRules: ReadonlyArray<string>;
  readonly decisions: ReadonlyArray<string>;
  readonly settle: ReadonlyArray<{ readonly id: string; readonly status: DecisionStatus }>;
  /** Replaces the checklist when given. */
  readonly steps?: ReadonlyArray<string>;
}

/** What each subcommand does. */
export type ContextAction =
  | { readonly action: 'show' }
  | { readonly action: 'bundle'; readonly facts?: string; readonly query?: string }
  | ({ readonly action: 'checkpoint' } & CheckpointRequest)
  | { readonly action: 'claim'; readonly claim: ClaimInput }
  | { readonly action: 'record-failure'; readonly failure: FailedRun }
  | { readonly action: 'resolve' }
  | { readonly action: 'move'; readonly from: string; readonly removeSource: boolean };

/** `fact-tracker context SUBCOMMAND [--kind K] [--workstream ID] [--branch NAME] [--json] ...`. */
export type ContextCommand = {
  readonly name: 'context';
  readonly kind: ContextKind;
  readonly workstream?: string;
  /** The branch part of the key, instead of the current branch. */
  readonly branch?: string;
  readonly json: boolean;
} & ContextAction;

/** Every option of every subcommand (parseArgs needs one table); `CONTEXT_SUBCOMMAND_OPTIONS` says which belong where. */
export const CONTEXT_OPTIONS = {
  kind: { type: 'string', value: 'KIND', help: 'planning (default) or implementation' },
  workstream: { type: 'string', value: 'ID', help: 'the workstream (default: default)' },
  branch: {
    type: 'string',
    value: 'NAME',
    help: 'the branch part of the key (default: the current branch,\nor the branch a rebase or bisect works for)',
  },
  json: { type: 'boolean', help: 'one JSON document instead of text' },
  ...HELP_OPTION,
  facts: { type: 'string', value: 'FILE', help: 'session facts for the retrieved tier: a history or a saved state' },
  query: {
    type: 'string',
    value: 'TEXT',
    help: 'what the facts must be relevant to (default: the feature request)',
  },
  summary: {
    type: 'string',
    value: 'TEXT',
    help: 'the new working summary; without it (or --summary-file)\nthe current summary is re-verified at this state',
  },
  'summary-file': { type: 'string', value: 'FILE', help: 'read the new working summary from FILE' },
  feature: { type: 'string', value: 'TEXT', help: 'the feature request' },
  pin: { type: 'string', multiple: true, value: 'RULE', help: 'pin a rule (repeatable)' },
  unpin: { type: 'string', multiple: true, value: 'RULE', help: 'unpin a rule (repeatable)' },
  decision: { type: 'string', multiple: true, value: 'TEXT', help: 'add an open decision (repeatable)' },
  decide: { type: 'string', multiple: true, value: 'ID', help: 'mark decision ID decided (repeatable)' },
  drop: { type: 'string', multiple: true, value: 'ID', help: 'mark decision ID dropped (repeatable)' },
  step: { type: 'string', multiple: true, value: 'TEXT', help: 'the next steps, replacing the checklist (repeatable)' },
  file: {
    type: 'string',
    multiple: true,
    value: 'PATH:L10-L40',
    help: 'evidence: a file and a line range (repeatable)',
  },
  symbol: { type: 'string', multiple: true, value: 'NAME', help: 'evidence: a symbol (repeatable)' },
  'failed-step': { type: 'string', value: 'STEP', help: 'the step that failed (required)' },
  error: { type: 'string', value: 'TEXT', help: 'the error it gave (required)' },
  'next-action': { type: 'string', value: 'TEXT', help: 'what to do next (required)' },
  from: {
    type: 'string',
    value: 'BRANCH',
    help: 'the branch the context is stored under: the branch this one\nwas made from, the old name of a renamed branch, or a branch\nmerged here (required; --from=BRANCH for a name starting with -)',
  },
  'remove-source': {
    type: 'boolean',
    help: 'take the context away from BRANCH too (a renamed branch);\nby default BRANCH keeps its own',
  },
} as const satisfies OptionTable;

type OptionName = keyof typeof CONTEXT_OPTIONS;

/** The options every subcommand takes. */
export const CONTEXT_COMMON_OPTIONS: ReadonlyArray<OptionName> = ['kind', 'workstream', 'branch', 'json', 'help'];
/** The options of each subcommand beyond the common ones. */
export const CONTEXT_SUBCOMMAND_OPTIONS: Readonly<Record<ContextSubcommand, ReadonlyArray<OptionName>>> = {
  show: [],
  bundle: ['facts', 'query'],
  checkpoint: ['summary', 'summary-file', 'feature', 'pin', 'unpin', 'decision', 'decide', 'drop', 'step'],
  claim: ['file', 'symbol'],
  'record-failure': ['failed-step', 'error', 'next-action'],
  resolve: [],
  move: ['from', 'remove-source'],
};

const takes = (action: ContextSubcommand, name: string): boolean =>
  (CONTEXT_COMMON_OPTIONS as ReadonlyArray<string>).includes(name) ||
  (CONTEXT_SUBCOMMAND_OPTIONS[action] as ReadonlyArray<string>).includes(name);

type Values = Readonly<Record<string, unknown>>;

const usage = (message: string): UsageError => ({ command: 'context', message });

const text = (values: Values, name: OptionName): string | undefined => {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
};

const texts = (values: Values, name: OptionName): string[] => {
  const value = values[name];
  return Array.isArray(value) ? value.filter((entry): entry is string => typeof entry === 'string') : [];
};

const optional = <K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } =>
  (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };

const isSubcommand = (value: string | undefined): value is ContextSubcommand =>
  value !== undefined && (CONTEXT_SUBCOMMANDS as ReadonlyArray<string>).includes(value);

const parseKind = (values: Values): E.Either<UsageError, ContextKind> => {
  const kind = text(values, 'kind') ?? 'planning';
  return (CONTEXT_KINDS as ReadonlyArray<string>).includes(kind)
    ? E.right(kind as ContextKind)
    : E.left(usage(`--kind must be ${CONTEXT_KINDS.join(' or ')}, not ${JSON.stringify(kind)}`));
};

const onlyOwnOptions = (action: ContextSubcommand, values: Values): E.Either<UsageError, ContextSubcommand> => {
  const foreign = Object.keys(values).find((name) => values[name] !== undefined && !takes(action, name));
  return foreign === undefined ? E.right(action) : E.left(usage(`--${foreign} does not apply to context ${action}`));
};

/**
 * `PATH:L10-L40`, `PATH:10-40` or `PATH:7` as file evidence, the path resolved as the ledger
 * stores it (`src/../src/a.ts` is `src/a.ts`), or why not, naming the `--file` given.
 */
export const parseFileEvidence = (
  value: string,
): E.Either<UsageError, { readonly path: string; readonly lines: string }> => {
  const colon = value.lastIndexOf(':');
  const path = colon === -1 ? '' : value.slice(0, colon);
  if (path === '') return E.left(usage(`--file ${JSON.stringify(value)} needs a line range: PATH:L10-L40`));
  return pipe(
    E.Do,
    E.apS('path', normalizeEvidencePath(path)),
    E.apS('range', parseLineRange(value.slice(colon + 1))),
    E.bimap(
      (reason) => usage(`--file ${JSON.stringify(value)}: ${reason.message}`),
      ({ path: resolved, range }) => ({ path: resolved, lines: formatLineRange(range) }),
    ),
  );
};

const parseClaimRequest = (values: Values, rest: ReadonlyArray<string>): E.Either<UsageError, ContextAction> => {
  if (rest.length !== 1)
    return E.left(
      usage(
        rest.length === 0 ? 'missing the claim TEXT' : `expected one claim TEXT (quote it), got ${rest.length} words`,
      ),
    );
  const files: Array<{ path: string; lines: string }> = [];
  for (const value of texts(values, 'file')) {
    const file = parseFileEvidence(value);
    if (E.isLeft(file)) return file;
    files.push(file.right);
  }
  return E.right({ action: 'claim', claim: { claim: rest[0]!, files, symbols: texts(values, 'symbol') } });
};

const parseFailure = (values: Values): E.Either<UsageError, ContextAction> => {
  const failedStep = text(values, 'failed-step');
  const error = text(values, 'error');
  const nextAction = text(values, 'next-action');
  if (failedStep === undefined || error === undefined || nextAction === undefined)
    return E.left(usage('record-failure needs --failed-step STEP, --error TEXT and --next-action TEXT'));
  return E.right({ action: 'record-failure', failure: { status: 'failed', failedStep, error, nextAction } });
};

const DECISION_ID = /^D[1-9]\d{0,8}$/u;

/** The first of `names` given as an empty value (an unset variable), said in one line, else none. */
const emptyValue = (values: Values, names: ReadonlyArray<OptionName>, what: string): UsageError | undefined => {
  const empty = names.find((name) => text(values, name) === '');
  return empty === undefined ? undefined : usage(`--${empty} needs ${what}: the value given is empty`);
};

const parseCheckpoint = (values: Values): E.Either<UsageError, ContextAction> => {
  if (text(values, 'summary') !== undefined && text(values, 'summary-file') !== undefined)
    return E.left(usage('give --summary or --summary-file, not both'));
  const noFile = emptyValue(values, ['summary-file'], 'a file name (- for standard input)');
  if (noFile !== undefined) return E.left(noFile);
  const decide = texts(values, 'decide');
  const drop = texts(values, 'drop');
  const badId = [...decide, ...drop].find((id) => !DECISION_ID.test(id));
  if (badId !== undefined) return E.left(usage(`${JSON.stringify(badId)} is not a decision id: use D1, D2, ...`));
  return E.right({
    action: 'checkpoint',
    ...optional('summary', text(values, 'summary')),
    ...optional('summaryFile', text(values, 'summary-file')),
    ...optional('featureRequest', text(values, 'feature')),
    pinRules: texts(values, 'pin'),
    unpinRules: texts(values, 'unpin'),
    decisions: texts(values, 'decision'),
    settle: [
      ...decide.map((id) => ({ id, status: 'decided' as const })),
      ...drop.map((id) => ({ id, status: 'dropped' as const })),
    ],
    ...optional('steps', values['step'] === undefined ? undefined : texts(values, 'step')),
  });
};

const parseAction = (
  action: ContextSubcommand,
  values: Values,
  rest: ReadonlyArray<string>,
): E.Either<UsageError, ContextAction> => {
  if (action !== 'claim' && rest.length > 0)
    return E.left(usage(`context ${action} takes no arguments, got: ${rest.join(' ')}`));
  switch (action) {
    case 'show':
    case 'resolve':
      return E.right({ action });
    case 'bundle': {
      const empty =
        emptyValue(values, ['facts'], 'a file name (- for standard input)') ??
        (text(values, 'query') !== undefined && isBlank(text(values, 'query')!)
          ? usage('--query needs words to rank the facts by: the value given is blank')
          : undefined);
      if (empty !== undefined) return E.left(empty);
      return E.right({
        action,
        ...optional('facts', text(values, 'facts')),
        ...optional('query', text(values, 'query')),
      });
    }
    case 'checkpoint':
      return parseCheckpoint(values);
    case 'claim':
      return parseClaimRequest(values, rest);
    case 'record-failure':
      return parseFailure(values);
    case 'move': {
      const from = text(values, 'from');
      // A branch of invisible characters only (U+200B) is none, as a blank one.
      return from === undefined || isBlank(from)
        ? E.left(usage('move needs --from BRANCH: the branch the context is stored under'))
        : E.right({ action, from, removeSource: values['remove-source'] === true });
    }
  }
};

/** Parses the arguments after `context`: the subcommand, then its own options. */
export const parseContextCommand = (
  values: Values,
  positionals: ReadonlyArray<string>,
): E.Either<UsageError, ContextCommand> => {
  const [action, ...rest] = positionals;
  if (!isSubcommand(action))
    return E.left(
      usage(
        action === undefined
          ? `missing subcommand: one of ${CONTEXT_SUBCOMMANDS.join(', ')}`
          : `unknown subcommand ${JSON.stringify(action)}: expected one of ${CONTEXT_SUBCOMMANDS.join(', ')}`,
      ),
    );
  return pipe(
    E.Do,
    E.apS('action', onlyOwnOptions(action, values)),
    E.apS('kind', parseKind(values)),
    E.bind('request', () => parseAction(action, values, rest)),
    E.map(({ kind, request }) => ({
      name: 'context' as const,
      kind,
      json: values['json'] === true,
      ...optional('workstream', text(values, 'workstream')),
      ...optional('branch', text(values, 'branch')),
      ...request,
    })),
  );
};
