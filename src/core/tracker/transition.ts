/**
 * The fact tracker as one pure transition, xstate's shape: `trackerTransition(state, event)`
 * takes a state and one history event (a dispatch result, a prompt, an invalidation, a
 * compaction; its time is its `at`) and returns the next state, the store events it applied
 * (data: `replay` of them rebuilds the store) and what the event answers (for a prompt, its
 * `[Session Context]` section). `replayHistory`, `createFactTracker`, the live session, the
 * MCP server and the hook all fold this one function, so they agree by construction.
 */
import * as E from 'fp-ts/lib/Either.js';
import { refuseArgument } from '../../base/describe.js';
import { quoteValue } from '../../base/schema.js';
import { type Failure, failure, type INTERNAL } from '../../base/failure.js';
import { isRecord } from '../../base/record.js';
import { redactSecrets, redactSecretsIn } from '../../base/secrets.js';
import { isBlank } from '../../base/text.js';
import { isWithinYears, parseEventTime, plainTime } from '../../base/time.js';
import type { DispatchResult } from '../extract/contract.js';
import { type Extraction, extractDispatchResult, normalizeTaskId } from '../extract/extractor.js';
import { type ContractError, parseDispatchOutput, parseDispatchResult } from '../extract/parse.js';
import { isSourceRole, type SessionFact } from '../fact.js';
import type {
  HistoryCompactEvent,
  HistoryDispatchEvent,
  HistoryEvent,
  HistoryInvalidateEvent,
  HistoryPromptEvent,
} from '../history/events.js';
import { formatSessionFacts } from '../prompt/format.js';
import { retrieveFacts } from '../prompt/retrieve.js';
import { isSectionLayout, type SectionLayout } from '../retrieve/defaults.js';
import type { FactQuery } from '../retrieve/retrieve.js';
import { addCheckedFacts } from '../store/addFacts.js';
import { type CompactionReport, compactWithReport } from '../store/compact.js';
import { applyEvent, type TrackerEvent } from '../store/events.js';
import { invalidatedPair } from '../store/invalidate.js';
import { settleByLaterReview, settleReview } from '../store/settleReview.js';
import { deepFreeze } from '../../persistent/freeze.js';
import { asOneRun, isMutating } from '../../persistent/owner.js';
import type { FactStore } from '../store/state.js';
import { checkedFactStore } from '../store/storeShape.js';
import { selectValidOfLog } from '../store/timeline.js';
import { selectPairLog } from '../store/write.js';
import type { TokenCounter } from '../../tokens/estimate.js';
import type { TrackerState } from './state.js';

/**
 * Why a call changed nothing: its fields were not usable or the contract rejected a dispatch
 * result (a `ContractError`), or, from a shell's boundary only, `internal`: a bug.
 */
export type TrackerError = Failure<ContractError['code'] | typeof INTERNAL>;

/** A history event as the transition takes it: its line number is optional (a library call has none). */
export type TrackerInput = HistoryEvent extends infer Event
  ? Event extends HistoryEvent
    ? Omit<Event, 'line'> & { readonly line?: number }
    : never
  : never;

/** A dispatch event, as the transition takes it. */
export type DispatchInput = Omit<HistoryDispatchEvent, 'line'> & { readonly line?: number };
/** A prompt event, as the transition takes it. */
export type PromptInput = Omit<HistoryPromptEvent, 'line'> & { readonly line?: number };
/** An invalidation event, as the transition takes it. */
export type InvalidateInput = Omit<HistoryInvalidateEvent, 'line'> & { readonly line?: number };
/** A compaction event, as the transition takes it. */
export type CompactInput = Omit<HistoryCompactEvent, 'line'> & { readonly line?: number };

/** What a dispatch answered: its extraction, or why the result was rejected. */
export interface DispatchOutput {
  readonly type: 'dispatch';
  readonly ingested: E.Either<TrackerError, Extraction>;
}

/** What a prompt answered: its `[Session Context]` section and the facts in it, in rank order. */
export interface PromptOutput {
  readonly type: 'prompt';
  readonly taskId: string;
  readonly sessionContext: string;
  readonly facts: ReadonlyArray<SessionFact>;
}

/** What an invalidation closed. */
export interface InvalidateOutput {
  readonly type: 'invalidate';
  readonly closed: ReadonlyArray<SessionFact>;
}

/** What a compaction removed, merged and dropped. */
export interface CompactOutput {
  readonly type: 'compact';
  readonly report: CompactionReport;
}

/** What one event answers. */
export type TrackerOutput = DispatchOutput | PromptOutput | InvalidateOutput | CompactOutput;

/** The transition's result: the next state, the store events applied, the answer. */
export type TrackerStep<O extends TrackerOutput = TrackerOutput> = readonly [
  TrackerState,
  ReadonlyArray<TrackerEvent>,
  O,
];

/**
 * What a transition may use besides its state and event: a token counter is a function, so it
 * travels beside the state rather than in it. The same environment gives the same results.
 */
export interface TrackerEnvironment {
  /** Counts the tokens of sections (default: ceil(characters / 4)). */
  readonly countTokens?: TokenCounter;
}

const invalidInput = (message: string): TrackerError => failure('invalid_input', message);

/** The state with `store`, or the same state when the store did not change. */
const withStore = (state: TrackerState, store: FactStore): TrackerState =>
  store === state.store ? state : Object.freeze({ store, settings: state.settings });

/**
 * Applies store events in order in one write run; returns the store and the events that
 * changed it (an event that changed nothing is not one to replay).
 */
const applyAll = (
  store: FactStore,
  steps: ReadonlyArray<readonly [TrackerEvent, (store: FactStore) => FactStore]>,
): readonly [FactStore, ReadonlyArray<TrackerEvent>] => {
  const applied: TrackerEvent[] = [];
  const next = asOneRun(() => {
    let result = store;
    for (const [event, reduce] of steps) {
      const after = reduce(result);
      if (after !== result) applied.push(Object.freeze(event));
      result = after;
    }
    return result;
  });
  return [next, Object.freeze(applied)];
};

const unchanged = <O extends TrackerOutput>(state: TrackerState, output: O): TrackerStep<O> => [
  state,
  Object.freeze([]),
  output,
];

const rejected = (state: TrackerState, error: TrackerError): TrackerStep<DispatchOutput> =>
  unchanged(state, { type: 'dispatch', ingested: E.left(error) });

/** A time a store may hold: epoch milliseconds within the years 0000 to 9999, as a history's. */
const isTime = (at: unknown): at is number => typeof at === 'number' && isWithinYears(at);

/** The result of a dispatch event, parsed: raw agent text between the markers, or the result object. */
const parseResult = (event: DispatchInput): E.Either<ContractError, DispatchResult> =>
  typeof event.output === 'string'
    ? parseDispatchOutput(event.output, event.role)
    : parseDispatchResult(event.output, event.role);

/** A store event as a step of `applyAll`. */
const asStep = (event: TrackerEvent) => [event, (current: FactStore) => applyEvent(current, event)] as const;

/**
 * A dispatch: its facts enter the store; a review first settles the items of its task it no
 * longer raises, and after them has its own settled by a later review of the task already stored.
 */
const ingest = (state: TrackerState, event: DispatchInput): TrackerStep<DispatchOutput> => {
  const { role } = event;
  const at = typeof event.at === 'number' ? plainTime(event.at) : event.at;
  if (!isSourceRole(role))
    return rejected(state, invalidInput(`unknown role ${quoteValue(role)}: expected implementer or reviewer`));
  const taskId = normalizeTaskId(event.taskId);
  if (E.isLeft(taskId)) return rejected(state, invalidInput(taskId.left));
  const result = parseResult(event);
  if (E.isLeft(result)) return rejected(state, result.left);
  if (!isTime(at)) {
    const problem = parseEventTime(at);
    const reason = E.isLeft(problem) ? problem.left.message : 'it is not epoch milliseconds';
    return rejected(state, invalidInput(`the time: ${reason}`));
  }
  const extraction = extractDispatchResult(role, result.right, taskId.right, at, state.settings.maxFactsPerResult);
  // Frozen as they enter: the same objects are the store's records and the caller's answer.
  for (const fact of extraction.facts) Object.freeze(fact);
  const facts = Object.freeze(extraction.facts);
  // A review repeats the items it proposed past the cap too, though they do not enter the store.
  const settled =
    role === 'reviewer' ? settleReview(state.store, taskId.right, [...facts, ...extraction.pastCap], at) : [];
  // A review that arrives after a later one of its task: what the later one did not repeat, it settled.
  const settledLater = role === 'reviewer' ? settleByLaterReview(state.store, taskId.right, facts, at) : [];
  const [store, events] = applyAll(state.store, [
    ...settled.map(asStep),
    // The extractor checked these facts as it built them: they enter without a second check
    // (a replay of the event checks them again).
    [{ type: 'facts/added', facts }, (current: FactStore) => addCheckedFacts(current, facts)] as const,
    ...settledLater.map(asStep),
  ]);
  return [
    withStore(state, store),
    events,
    { type: 'dispatch', ingested: E.right({ facts, warnings: extraction.warnings }) },
  ];
};

/**
 * The step with its state deeply frozen outside a write run, as every state a transition returns
 * is: a state from `JSON.parse` or `structuredClone` lends the state returned its settings, and
 * its store when the step leaves it as it is (the state itself when it changes nothing), and
 * what the result shares is frozen with it. One check each for a state a transition made, frozen
 * already; inside a run (a replay), the run's own values stay writable and the run freezes them.
 */
const sealed = <T extends readonly [TrackerState, ...unknown[]]>(step: T): T => {
  if (isMutating()) return step;
  const [state] = step;
  deepFreeze(state.settings);
  deepFreeze(state.store);
  deepFreeze(state);
  return step;
};

/**
 * Refuses, with a TypeError, a state that is not a tracker state: a programmer's mistake, said
 * plainly rather than as a failure deep inside.
 */
const checkState = (state: TrackerState): void => {
  if (!isRecord(state) || !isRecord(state.settings))
    throw new TypeError('the state is not a tracker state (initialTrackerState makes one)');
  checkedFactStore(state.store);
};

/** Refuses, with a TypeError naming what it is, an event that is no object (null from an unset variable). */
const checkEvent = (event: unknown, kind: string): void => {
  if (!isRecord(event)) refuseArgument('the event', event, `an object (${kind})`);
};

/** The retrieval query a prompt event runs on `state`: its own fields, the settings for the rest. */
const queryOf = (state: TrackerState, event: PromptInput, env: TrackerEnvironment): FactQuery => {
  const { settings } = state;
  // An environment that is none (null) reads as none, as options do.
  const countTokens = typeof env === 'object' && env !== null ? env.countTokens : undefined;
  return {
    taskDescription: event.taskPrompt,
    taskId: event.taskId,
    ...(event.tags === undefined ? {} : { tags: event.tags }),
    maxFacts: event.maxFacts ?? settings.maxFacts,
    maxTokens: event.maxTokens ?? settings.maxTokens,
    ...(countTokens === undefined ? {} : { countTokens }),
    ...(settings.ranking === undefined ? {} : { ranking: settings.ranking }),
    layout: layoutOf(state, event),
  };
};

/** The layout of a prompt event's section: its own, else the settings'. */
const layoutOf = (state: TrackerState, event: PromptInput): SectionLayout =>
  isSectionLayout(event.layout) ? event.layout : state.settings.layout;

/** The section of a prompt event on `state`. */
const sectionOf = (state: TrackerState, event: PromptInput, env: TrackerEnvironment): PromptOutput => {
  const facts = retrieveFacts(state.store, queryOf(state, event, env));
  return {
    type: 'prompt',
    taskId: event.taskId,
    sessionContext: formatSessionFacts(facts, { layout: layoutOf(state, event) }),
    facts,
  };
};

/** What recording a prompt event's task prompt does to `state` (see `recordPrompt`). */
const recordOf = (
  state: TrackerState,
  event: Pick<PromptInput, 'taskId' | 'taskPrompt' | 'at'>,
): readonly [TrackerState, ReadonlyArray<TrackerEvent>] => {
  const taskId = normalizeTaskId(event.taskId);
  const { taskPrompt, at } = event;
  if (E.isLeft(taskId) || typeof taskPrompt !== 'string' || isBlank(taskPrompt) || !isTime(at))
    return [state, Object.freeze([])];
  // Redacted as the store keeps it: the events are a tracker's log, which callers persist.
  const recorded: TrackerEvent = {
    type: 'prompt/recorded',
    taskId: taskId.right,
    taskPrompt: redactSecrets(taskPrompt),
    at: plainTime(at),
  };
  const [store, events] = applyAll(state.store, [[recorded, (current) => applyEvent(current, recorded)]]);
  return [withStore(state, store), events];
};

/** The retrieval query a prompt event runs on `state`: its own fields, the settings for the rest. */
export const promptQuery = (state: TrackerState, event: PromptInput, env: TrackerEnvironment = {}): FactQuery => {
  checkState(state);
  checkEvent(event, 'a prompt event');
  return queryOf(state, event, env);
};

/**
 * The section a prompt event would get on `state`, computed without recording anything: the
 * pure query beside `trackerTransition`, which also records the prompt.
 */
export const selectSessionContext = (
  state: TrackerState,
  event: PromptInput,
  env: TrackerEnvironment = {},
): PromptOutput => {
  checkState(state);
  checkEvent(event, 'a prompt event');
  return sectionOf(state, event, env);
};

/**
 * Records a prompt event's task prompt as context for the facts its dispatches will produce,
 * without computing its section: what a prompt event does to the state. A task id that is not
 * one, a blank prompt (invisible characters only, U+200B, are blank too) or a time that is not
 * finite records nothing.
 */
export const recordPrompt = (
  state: TrackerState,
  event: Pick<PromptInput, 'taskId' | 'taskPrompt' | 'at'>,
): readonly [TrackerState, ReadonlyArray<TrackerEvent>] => {
  checkState(state);
  checkEvent(event, 'a prompt event');
  return sealed(recordOf(state, event));
};

/**
 * A prompt: its section is computed on the state before it, then the prompt is recorded (the
 * state and the event were checked once, by `trackerTransition`).
 */
const prompt = (state: TrackerState, event: PromptInput, env: TrackerEnvironment): TrackerStep<PromptOutput> => {
  const output = sectionOf(state, event, env);
  const [next, events] = recordOf(state, event);
  return [next, events, output];
};

/** An invalidation closes the valid facts of its (subject, relation) pair at its time. */
const invalidate = (state: TrackerState, event: InvalidateInput): TrackerStep<InvalidateOutput> => {
  const { at } = event;
  // Redacted as the facts it closes were (a path holding a token is stored redacted), so the pair
  // still matches and the tracker's events hold no secret; any other value as given, for the store to refuse.
  const [subject, relation] = [redactSecretsIn(event.subject), redactSecretsIn(event.relation)] as [string, string];
  // The pair as the store keys it (see `invalidatedPair`).
  const [pairSubject, pairRelation] = invalidatedPair(state.store, String(subject), String(relation));
  // Read before the write: inside a write run (a replay's) the store is changed in place.
  const before = selectPairLog(state.store, pairSubject, pairRelation);
  const validBefore = before === undefined ? [] : [...selectValidOfLog(before)];
  const closing: TrackerEvent = {
    type: 'facts/invalidated',
    subject,
    relation,
    at: typeof at === 'number' ? plainTime(at) : at,
  };
  const [store, events] = applyAll(state.store, [[closing, (current) => applyEvent(current, closing)]]);
  if (store === state.store) return unchanged(state, { type: 'invalidate', closed: Object.freeze([]) });
  const after = selectPairLog(store, pairSubject, pairRelation);
  const stillValid = new Set(after === undefined ? [] : selectValidOfLog(after).map((fact) => fact.id));
  const closed = validBefore.filter((fact) => !stillValid.has(fact.id));
  return [withStore(state, store), events, { type: 'invalidate', closed: Object.freeze(closed) }];
};

/** A compaction brings the store within `maxFacts` valid facts. */
const compact = (state: TrackerState, event: CompactInput): TrackerStep<CompactOutput> => {
  let report: CompactionReport | undefined;
  const compacting: TrackerEvent = { type: 'store/compacted', maxFacts: event.maxFacts };
  const [store, events] = applyAll(state.store, [
    [
      compacting,
      (current) => {
        const compacted = compactWithReport(current, event.maxFacts);
        report = compacted.report;
        return compacted.store;
      },
    ],
  ]);
  return [withStore(state, store), events, { type: 'compact', report: report! }];
};

/**
 * The fact tracker's transition: applies one history event to `state` at the event's time and
 * returns the next state, the store events applied and the event's answer. Pure and total: the
 * same state and event give the same result, a bad event changes nothing and says why.
 */
export function trackerTransition(
  state: TrackerState,
  event: DispatchInput,
  env?: TrackerEnvironment,
): TrackerStep<DispatchOutput>;
export function trackerTransition(
  state: TrackerState,
  event: PromptInput,
  env?: TrackerEnvironment,
): TrackerStep<PromptOutput>;
export function trackerTransition(
  state: TrackerState,
  event: InvalidateInput,
  env?: TrackerEnvironment,
): TrackerStep<InvalidateOutput>;
export function trackerTransition(
  state: TrackerState,
  event: CompactInput,
  env?: TrackerEnvironment,
): TrackerStep<CompactOutput>;
export function trackerTransition(state: TrackerState, event: TrackerInput, env?: TrackerEnvironment): TrackerStep;
export function trackerTransition(state: TrackerState, event: TrackerInput, env: TrackerEnvironment = {}): TrackerStep {
  checkState(state);
  checkEvent(event, 'a history event');
  switch (event.type) {
    case 'dispatch':
      return sealed(ingest(state, event));
    case 'prompt':
      return sealed(prompt(state, event, env));
    case 'invalidate':
      return sealed(invalidate(state, event));
    case 'compact':
      return sealed(compact(state, event));
    default:
      // Only a caller outside the types gets here: a programmer error, which a shell reports as `internal`.
      throw new TypeError(`unknown event type ${JSON.stringify(String((event as { type?: unknown }).type))}`);
  }
}
