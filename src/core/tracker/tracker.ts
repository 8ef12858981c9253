/**
 * The stateful shell: one mutable binding holding the current store, a listener set and the
 * event log. Everything it does is a reducer call over plain data; it only adds the clock,
 * notification, and the guarantee that no call throws.
 */
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import { deepFreeze } from '../../persistent/freeze.js';
import { asOneRun, outsideRuns } from '../../persistent/owner.js';
import { createShell } from '../../shell/shell.js';
import type { DispatchResult, ImplementerResult, ReviewerResult } from '../extract/contract.js';
import { createExtractor, type Extraction, type Extractor, normalizeTaskId } from '../extract/extractor.js';
import { implementerRules, reviewerRules } from '../extract/rules.js';
import { type FactTag, isSourceRole, type SessionFact, type SourceRole } from '../fact.js';
import { formatSessionFacts } from '../prompt/format.js';
import { retrieveFacts } from '../prompt/retrieve.js';
import { buildDispatchDynamicTail } from '../prompt/tail.js';
import type { RankingOverrides } from '../retrieve/rank.js';
import {
  DEFAULT_LAYOUT,
  DEFAULT_MAX_FACTS,
  DEFAULT_MAX_TOKENS,
  SECTION_LAYOUTS,
  type SectionLayout,
} from '../retrieve/defaults.js';
import { addCheckedFacts } from '../store/addFacts.js';
import { type CompactionReport, compactWithReport } from '../store/compact.js';
import { applyEvent, type TrackerEvent } from '../store/events.js';
import { settleReview } from '../store/settleReview.js';
import { emptyFactStore, type FactStore } from '../store/state.js';
import type { TokenCounter } from '../../tokens/estimate.js';
import { type ContractError, parseDispatchOutput, parseDispatchResult } from '../extract/parse.js';

/** Options of `createFactTracker`. */
export interface FactTrackerOptions {
  /** Epoch milliseconds now (default `Date.now`). */
  readonly clock?: () => number;
  readonly maxValidFacts?: number;
  /** Default facts per prompt (`DEFAULT_MAX_FACTS`). */
  readonly maxFacts?: number;
  /** Default token budget of the section (`DEFAULT_MAX_TOKENS`). */
  readonly maxTokens?: number;
  readonly countTokens?: TokenCounter;
  /** Overrides of the ranking defaults. */
  readonly ranking?: RankingOverrides;
  /**
   * Facts one dispatch result may add (default `MAX_FACTS_PER_RESULT`, 1,000): past it, facts
   * are dropped in rule order, and the extraction's warnings say how many.
   */
  readonly maxFactsPerResult?: number;
  /**
   * Keep the event log `events()` returns (default true). Off, `events()` is empty and memory
   * no longer grows with every call: for a long-running caller that never replays the log.
   */
  readonly keepEvents?: boolean;
  /** The section's layout (default `lines`: one line per fact). */
  readonly layout?: SectionLayout;
  /** The store to start from (default: an empty one with `maxValidFacts`), such as one `decodeState` read back. */
  readonly initial?: FactStore;
}

/** Input of `ingestOutput`: raw agent text, or an already-parsed result object. */
export interface IngestInput {
  readonly role: SourceRole;
  readonly taskId: string;
  readonly output: string | unknown;
}

/** Input of `compilePrompt`. */
export interface CompilePromptInput {
  readonly taskId: string;
  readonly taskPrompt: string;
  readonly tags?: ReadonlyArray<FactTag>;
  readonly deltaPacket?: Record<string, unknown>;
  readonly maxOutputTokens?: number;
  readonly guideCacheKey?: string;
  readonly guideInstruction?: string;
  /** Facts for this prompt, over the tracker's default. */
  readonly maxFacts?: number;
  /** Token budget of this prompt's section, over the tracker's default. */
  readonly maxTokens?: number;
}

/** A compiled dispatch tail and what went into its `[Session Context]` section. */
export interface CompiledPrompt {
  readonly prompt: string;
  readonly sessionContext: string;
  readonly facts: ReadonlyArray<SessionFact>;
}

/** Called after a public call changed the state. */
export type StoreListener = (next: FactStore, previous: FactStore) => void;

/** The session's fact memory. No method throws. */
export interface FactTracker {
  ingestOutput(input: IngestInput): E.Either<ContractError, Extraction>;
  compilePrompt(input: CompilePromptInput): CompiledPrompt;
  /**
   * Records a task's prompt as context for the facts its dispatches will produce, at `at`
   * (default: the clock), without compiling a section: what `compilePrompt` does to the store.
   * For catching up on a log whose prompts were answered already. Bad input (a task id that is
   * not one, an empty prompt, a time that is not finite) records nothing.
   */
  recordPrompt(taskId: string, taskPrompt: string, at?: number): void;
  /** Closes the valid facts of (subject, relation) at `at` (default: the clock). */
  invalidate(subject: string, relation: string, at?: number): FactStore;
  /** Compacts to `maxFacts` valid facts and reports what went. */
  compact(maxFacts: number): CompactionReport;
  getSnapshot(): FactStore;
  subscribe(listener: StoreListener): () => void;
  events(): ReadonlyArray<TrackerEvent>;
}

const DEFAULT_MAX_OUTPUT_TOKENS = 1200;

const invalidInput = (message: string): ContractError => ({ code: 'invalid_input', message });

const asText = (value: unknown): string =>
  typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : '';

const orDefault = (value: unknown, fallback: number): number =>
  typeof value === 'number' && value >= 0 && !Number.isNaN(value) ? value : fallback;

/** A one-line description of anything thrown, without ever throwing itself (a value's `toString` may). */
const describeError = (error: unknown): string => {
  try {
    return error instanceof Error ? error.message : String(error);
  } catch {
    return 'an error that cannot be described';
  }
};

const readClock = (clock: () => number): E.Either<ContractError, number> => {
  try {
    const now = clock();
    return typeof now === 'number' && Number.isFinite(now)
      ? E.right(now)
      : E.left(invalidInput(`the clock returned ${describeError(now)}, not a finite number of milliseconds`));
  } catch (error) {
    return E.left(invalidInput(`the clock failed: ${describeError(error)}`));
  }
};

/** The fields `compilePrompt` reads. */
const PROMPT_FIELDS = [
  'taskId',
  'taskPrompt',
  'tags',
  'deltaPacket',
  'maxOutputTokens',
  'guideCacheKey',
  'guideInstruction',
  'maxFacts',
  'maxTokens',
] as const;

/** A compilePrompt input's fields as read: plain values, whatever the input was. */
type PromptFields = Partial<Record<(typeof PROMPT_FIELDS)[number], unknown>>;

/**
 * Reads each field of a compilePrompt input exactly once (a getter may throw, or answer
 * differently twice); a field whose getter throws reads as absent. Never throws.
 */
const readPromptFields = (input: unknown): PromptFields => {
  const fields: PromptFields = {};
  if (typeof input !== 'object' || input === null) return fields;
  for (const key of PROMPT_FIELDS)
    try {
      fields[key] = (input as Record<string, unknown>)[key];
    } catch {
      // A throwing getter (or a Proxy trap): the field is treated as not given.
    }
  return fields;
};

/** Creates a tracker holding an empty store, or the `initial` one. */
export const createFactTracker = (options: FactTrackerOptions = {}): FactTracker => {
  const settings = typeof options === 'object' && options !== null ? options : {};
  // The caller's functions run outside any write run (a replay calls them from inside its own).
  const userClock = settings.clock;
  const clock = typeof userClock === 'function' ? (): number => outsideRuns(userClock) : Date.now;
  const maxFacts = orDefault(settings.maxFacts, DEFAULT_MAX_FACTS);
  const maxTokens = orDefault(settings.maxTokens, DEFAULT_MAX_TOKENS);
  const userCounter = settings.countTokens;
  const countTokens: TokenCounter | undefined =
    typeof userCounter === 'function' ? (text) => outsideRuns(() => userCounter(text)) : undefined;
  const ranking = settings.ranking;
  const extractor = createExtractor({
    implementerRules,
    reviewerRules,
    ...(settings.maxFactsPerResult === undefined ? {} : { maxFactsPerResult: settings.maxFactsPerResult }),
  });
  const layout: SectionLayout = (SECTION_LAYOUTS as ReadonlyArray<unknown>).includes(settings.layout)
    ? (settings.layout as SectionLayout)
    : DEFAULT_LAYOUT;

  const shell = createShell<FactStore, TrackerEvent>({
    initial:
      settings.initial ??
      emptyFactStore(settings.maxValidFacts === undefined ? {} : { maxValidFacts: settings.maxValidFacts }),
    reduce: applyEvent,
    share: deepFreeze,
    keepLog: settings.keepEvents !== false,
  });

  /**
   * The state, shared: inside a write run (a replay of a history) the run may still
   * be writing in place, and a state handed out must never change afterwards.
   */
  const share = (): FactStore => {
    const state = shell.getState();
    deepFreeze(state);
    return state;
  };

  /** Applies events (with `reduce`, default their reducers), writing in place within the call; listeners see shared states. */
  const commit = (
    events: ReadonlyArray<TrackerEvent>,
    reduce: (store: FactStore, event: TrackerEvent) => FactStore = applyEvent,
  ): void => {
    asOneRun(() => shell.commit(events, reduce));
  };

  const ingest = (input: IngestInput): E.Either<ContractError, Extraction> => {
    if (typeof input !== 'object' || input === null) return E.left(invalidInput('the input is not an object'));
    const { role, output, taskId: rawTaskId } = input;
    if (!isSourceRole(role))
      return E.left(invalidInput(`unknown role ${JSON.stringify(String(role))}: expected implementer or reviewer`));
    return pipe(
      normalizeTaskId(rawTaskId),
      E.mapLeft(invalidInput),
      E.chain((taskId) =>
        pipe(
          typeof output === 'string' ? parseDispatchOutput(output, role) : parseDispatchResult(output, role),
          E.chain((result) =>
            pipe(
              readClock(clock),
              E.map((at) => ({ taskId, result, at })),
            ),
          ),
        ),
      ),
      E.map(({ taskId, result, at }) => {
        const extraction = extractFor(extractor, role, result, taskId, at);
        const settled = role === 'reviewer' ? settleReview(shell.getState(), taskId, extraction.facts, at) : [];
        const added: TrackerEvent = { type: 'facts/added', facts: extraction.facts };
        // The extractor checked these facts as it built them (commit freezes them first), so
        // they enter the store without a second check; a replay of the event checks them again.
        commit([...settled, added], (store, event) =>
          event === added ? addCheckedFacts(store, extraction.facts) : applyEvent(store, event),
        );
        return extraction;
      }),
    );
  };

  /** The task's prompt becomes context for the facts its dispatches will produce. */
  const record = (taskId: string, taskPrompt: string, now: E.Either<ContractError, number>): void => {
    const normalizedTaskId = normalizeTaskId(taskId);
    if (E.isRight(normalizedTaskId) && E.isRight(now) && taskPrompt.trim() !== '')
      commit([{ type: 'prompt/recorded', taskId: normalizedTaskId.right, taskPrompt, at: now.right }]);
  };

  const compile = (fields: PromptFields): CompiledPrompt => {
    const taskId = asText(fields.taskId);
    const taskPrompt = asText(fields.taskPrompt);
    const { tags, maxOutputTokens, guideCacheKey, guideInstruction } = fields;
    const facts = retrieveFacts(shell.getState(), {
      taskDescription: taskPrompt,
      taskId,
      ...(Array.isArray(tags) ? { tags: tags as FactTag[] } : {}),
      // Whatever was given: retrieval checks the numbers (a bad one gives no facts).
      maxFacts: fields.maxFacts === undefined ? maxFacts : (fields.maxFacts as number),
      maxTokens: fields.maxTokens === undefined ? maxTokens : (fields.maxTokens as number),
      ...(countTokens === undefined ? {} : { countTokens }),
      ...(ranking === undefined ? {} : { ranking }),
      layout,
    });
    const sessionContext = formatSessionFacts(facts, { layout });
    record(taskId, taskPrompt, readClock(clock));
    const { deltaPacket } = fields;
    const prompt = buildDispatchDynamicTail({
      taskId,
      maxOutputTokens: orDefault(maxOutputTokens, DEFAULT_MAX_OUTPUT_TOKENS),
      deltaPacket:
        typeof deltaPacket === 'object' && deltaPacket !== null ? (deltaPacket as Record<string, unknown>) : {},
      ...(typeof guideCacheKey === 'string' ? { guideCacheKey } : {}),
      ...(typeof guideInstruction === 'string' ? { guideInstruction } : {}),
      sessionContext,
      taskPrompt,
    });
    return { prompt, sessionContext, facts };
  };

  return {
    ingestOutput: (input) => {
      try {
        return ingest(input);
      } catch (error) {
        return E.left(invalidInput(`unexpected failure: ${describeError(error)}`));
      }
    },
    compilePrompt: (input) => {
      const fields = readPromptFields(input);
      try {
        return compile(fields);
      } catch {
        // Only the fields already read: the input is never read again.
        try {
          return {
            prompt: buildDispatchDynamicTail({
              taskId: asText(fields.taskId),
              maxOutputTokens: DEFAULT_MAX_OUTPUT_TOKENS,
              deltaPacket: {},
              taskPrompt: asText(fields.taskPrompt),
            }),
            sessionContext: '',
            facts: [],
          };
        } catch {
          return { prompt: '', sessionContext: '', facts: [] };
        }
      }
    },
    recordPrompt: (taskId, taskPrompt, at) => {
      try {
        if (typeof taskId === 'string' && typeof taskPrompt === 'string')
          record(
            taskId,
            taskPrompt,
            at === undefined
              ? readClock(clock)
              : Number.isFinite(at)
                ? E.right(at)
                : E.left(invalidInput('the time is not a finite number')),
          );
      } catch {
        // Bad input leaves the state as it is.
      }
    },
    invalidate: (subject, relation, at) => {
      try {
        const time = at === undefined ? readClock(clock) : E.right(at);
        if (E.isRight(time)) commit([{ type: 'facts/invalidated', subject, relation, at: time.right }]);
      } catch {
        // Bad input leaves the state as it is.
      }
      return share();
    },
    compact: (maxFacts) => {
      try {
        let report: CompactionReport = { removedClosed: [], summaries: [], dropped: [] };
        commit([{ type: 'store/compacted', maxFacts }], (store) => {
          const compacted = compactWithReport(store, maxFacts);
          report = compacted.report;
          return compacted.store;
        });
        return report;
      } catch {
        return { removedClosed: [], summaries: [], dropped: [] };
      }
    },
    getSnapshot: share,
    subscribe: (listener) => shell.subscribe(listener),
    events: () => shell.events(),
  };
};

const extractFor = (
  extractor: Extractor,
  role: SourceRole,
  result: DispatchResult,
  taskId: string,
  at: number,
): Extraction =>
  role === 'implementer'
    ? extractor.extractFromImplementer(result as ImplementerResult, taskId, at)
    : extractor.extractFromReviewer(result as ReviewerResult, taskId, at);

/** Facts in the `{ k, v, confidence }` shape of an orchestrator's state snapshot. */
export const toStateSnapshotFacts = (
  facts: ReadonlyArray<SessionFact>,
): ReadonlyArray<{ k: string; v: string; confidence: number }> =>
  facts.map((fact) => ({
    k: `session_fact:${fact.subject}:${fact.relation}`,
    v: fact.object,
    confidence: fact.confidence,
  }));
