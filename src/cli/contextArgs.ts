/**
 * `fact-tracker context SUBCOMMAND`: the options of the shared-context commands, and the
 * parser `args.ts` delegates to. Each subcommand accepts only its own options, so a misplaced
 * one is a usage error rather than silently ignored.
 */
import type { ParseArgsConfig } from 'node:util';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import { formatLineRange, parseLineRange, type ClaimInput } from '../context/ledger.js';
import { CONTEXT_KINDS, type ContextKind, type DecisionStatus } from '../context/model.js';
import type { FailedRun } from '../context/update.js';
import type { UsageError } from './args.js';

/** The subcommands of `fact-tracker context`. */
export const CONTEXT_SUBCOMMANDS = ['show', 'bundle', 'checkpoint', 'claim', 'record-failure', 'resolve'] as const;
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
  | { readonly action: 'resolve' };

/** `fact-tracker context SUBCOMMAND [--kind K] [--workstream ID] [--branch NAME] [--json] ...`. */
export type ContextCommand = {
  readonly name: 'context';
  readonly kind: ContextKind;
  readonly workstream?: string;
  /** The branch part of the key, instead of the current branch. */
  readonly branch?: string;
  readonly json: boolean;
} & ContextAction;

/** Every option of every subcommand (parseArgs needs one table); `OWN` says which belong where. */
export const CONTEXT_OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  kind: { type: 'string' },
  workstream: { type: 'string' },
  branch: { type: 'string' },
  json: { type: 'boolean' },
  facts: { type: 'string' },
  query: { type: 'string' },
  summary: { type: 'string' },
  'summary-file': { type: 'string' },
  feature: { type: 'string' },
  pin: { type: 'string', multiple: true },
  unpin: { type: 'string', multiple: true },
  decision: { type: 'string', multiple: true },
  decide: { type: 'string', multiple: true },
  drop: { type: 'string', multiple: true },
  step: { type: 'string', multiple: true },
  file: { type: 'string', multiple: true },
  symbol: { type: 'string', multiple: true },
  'failed-step': { type: 'string' },
  error: { type: 'string' },
  'next-action': { type: 'string' },
} as const satisfies ParseArgsConfig['options'];

type OptionName = keyof typeof CONTEXT_OPTIONS;

const COMMON: ReadonlyArray<OptionName> = ['help', 'kind', 'workstream', 'branch', 'json'];
const OWN: Readonly<Record<ContextSubcommand, ReadonlyArray<OptionName>>> = {
  show: COMMON,
  bundle: [...COMMON, 'facts', 'query'],
  checkpoint: [...COMMON, 'summary', 'summary-file', 'feature', 'pin', 'unpin', 'decision', 'decide', 'drop', 'step'],
  claim: [...COMMON, 'file', 'symbol'],
  'record-failure': [...COMMON, 'failed-step', 'error', 'next-action'],
  resolve: COMMON,
};

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
  const foreign = Object.keys(values).find(
    (name) => values[name] !== undefined && !OWN[action].includes(name as OptionName),
  );
  return foreign === undefined ? E.right(action) : E.left(usage(`--${foreign} does not apply to context ${action}`));
};

/** `PATH:L10-L40`, `PATH:10-40` or `PATH:7` as file evidence. */
export const parseFileEvidence = (
  value: string,
): E.Either<UsageError, { readonly path: string; readonly lines: string }> => {
  const colon = value.lastIndexOf(':');
  const path = colon === -1 ? '' : value.slice(0, colon);
  if (path === '') return E.left(usage(`--file ${JSON.stringify(value)} needs a line range: PATH:L10-L40`));
  return pipe(
    parseLineRange(value.slice(colon + 1)),
    E.bimap(
      (reason) => usage(`--file ${JSON.stringify(value)}: ${reason}`),
      (range) => ({ path, lines: formatLineRange(range) }),
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

const parseCheckpoint = (values: Values): E.Either<UsageError, ContextAction> => {
  if (text(values, 'summary') !== undefined && text(values, 'summary-file') !== undefined)
    return E.left(usage('give --summary or --summary-file, not both'));
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
    case 'bundle':
      return E.right({
        action,
        ...optional('facts', text(values, 'facts')),
        ...optional('query', text(values, 'query')),
      });
    case 'checkpoint':
      return parseCheckpoint(values);
    case 'claim':
      return parseClaimRequest(values, rest);
    case 'record-failure':
      return parseFailure(values);
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
