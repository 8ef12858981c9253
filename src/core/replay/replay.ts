/**
 * Replaying a dispatch history: a fold of `trackerTransition` over its events, exactly what a
 * live orchestrator's tracker ran (a dispatch's facts enter at the event's time, a later review
 * of a task settles the issues it does not repeat, a prompt gets its section and is recorded as
 * context for the facts its dispatches will produce). The fold adds only the report: each
 * prompt's section and tokens, the rejected lines, the totals. The result is plain data, the
 * same for the same text and options.
 */
import * as E from 'fp-ts/lib/Either.js';
import * as O from 'fp-ts/lib/Option.js';
import { kindOf } from '../../base/describe.js';
import { isRecord, refuseUnlessDenseArray } from '../../base/record.js';
import { deepFreeze } from '../../persistent/freeze.js';
import { createOwner, outsideRuns, transientRun } from '../../persistent/owner.js';
import type { SessionFact } from '../fact.js';
import { explainRetrieval } from '../prompt/retrieve.js';
import type { FactQuery, RetrievalDecision } from '../retrieve/retrieve.js';
import type { TokenCounter } from '../../tokens/estimate.js';
import { normalizeTaskId } from '../extract/extractor.js';
import type { ContractError } from '../extract/parse.js';
import { selectAllFacts, selectResumeTime, selectValidCount, selectValidFacts } from '../store/selectors.js';
import { type FactStore, withLastEventAt } from '../store/state.js';
import {
  createHistoryLineReader,
  type HistoryEvent,
  type HistoryLineError,
  type HistoryLineErrorCode,
  type HistoryPromptEvent,
  isBlankLine,
  readLines,
} from '../history/events.js';
import { checkHistoryLine, type HistoryLine, linesOfText } from '../history/lines.js';
import type { SectionLayout } from '../retrieve/defaults.js';
import { initialTrackerState, type TrackerState } from '../tracker/state.js';
import {
  type PromptInput,
  type PromptOutput,
  promptQuery,
  type TrackerEnvironment,
  type TrackerError,
  trackerTransition,
} from '../tracker/transition.js';
import { checkedTokenCount } from '../../tokens/checked.js';
import { estimateTokens } from '../../tokens/estimate.js';
import { TOKENIZER_NAMES, type TokenizerName } from '../../tokens/names.js';

/** How many events pass between two progress reports. */
const PROGRESS_STEP = 100;
/**
 * The most rejected lines a report lists; the others are only counted (`errorsOmitted`), so a
 * file of 100 million junk lines gives a report of a thousand, not of 100 million.
 */
export const MAX_REPORTED_ERRORS = 1000;

/** Options of `replayHistory`. */
export interface ReplayOptions {
  /** Facts per prompt for every prompt, over the prompt event's own `maxFacts`. */
  readonly maxFacts?: number;
  /** Token budget for every prompt, over the prompt event's own `maxTokens`. */
  readonly maxTokens?: number;
  /** Overrides of the ranking defaults, as `createFactTracker` takes them. */
  readonly ranking?: FactQuery['ranking'];
  /** The sections' layout, over the prompt event's own `layout` (default: the prompt's, else `lines`). */
  readonly layout?: SectionLayout;
  /**
   * The store to start from (default: an empty one), for a replay that resumes where a saved
   * state left off: a line without `at` then happens one second after the last event of the
   * replay that built it (`lastEventAt`), or for a store without one, after the latest time it records.
   */
  readonly initial?: FactStore;
  /**
   * Counts tokens of sections and dispatch outputs (default: ceil(characters / 4)); given, it
   * also budgets every prompt, over the tokenizer a prompt's line names. An answer that is not a
   * finite number 0 or more throws a TypeError naming `countTokens`.
   */
  readonly countTokens?: TokenCounter;
  /**
   * Counters for the tokenizers prompt lines name (`tokenizer`: a live session that counted with
   * o200k writes it), so each such section is budgeted as the session budgeted it, e.g.
   * `{ o200k: countO200kTokens }` from `session-fact-tracker/o200k`. Looked up at each prompt
   * that names one; the estimate needs none. Without `countTokens`, the report's token counts
   * stay the estimate's; with it, this is not used. A prompt naming a tokenizer this lacks is
   * budgeted with the estimate, as every prompt was before lines named one.
   */
  readonly tokenCounters?: Readonly<Partial<Record<TokenizerName, TokenCounter>>>;
  /** Stop at the first event whose time is after this (epoch ms). */
  readonly asOf?: number;
  /** Stop after this line (used to explain the prompt on it without replaying the rest). */
  readonly untilLine?: number;
  /**
   * Keep each prompt's store and query in `retrievals`, for `explainRetrieval`: every prompt's
   * (`true`), or only that of the prompt on this line (default: none; a snapshot per prompt
   * makes a long replay several times slower).
   */
  readonly keepRetrievals?: boolean | number;
  /** Told now and then how many of the events have been replayed (for progress displays). */
  readonly onProgress?: (replayed: number, total: number) => void;
}

/** What one prompt event would have received. */
export interface PromptReport {
  readonly line: number;
  readonly taskId: string;
  readonly sessionContext: string;
  readonly facts: ReadonlyArray<SessionFact>;
  /** Tokens of `sessionContext`. */
  readonly contextTokens: number;
  /** Tokens of every earlier dispatch output: what the prompt would carry if nothing were masked. */
  readonly historyTokens: number;
}

/** A line that was not applied: a line that is not an event, or a dispatch result the contract rejected. */
export interface ReplayError {
  readonly line: number;
  readonly code: HistoryLineErrorCode | ContractError['code'] | TrackerError['code'];
  readonly message: string;
}

/** Totals of a replay. */
export interface ReplaySummary {
  /** Events replayed (rejected dispatches included). */
  readonly events: number;
  /** Dispatch events replayed (rejected ones included). */
  readonly dispatches: number;
  readonly prompts: number;
  readonly validFacts: number;
  /** Every record at the end, closed history included. */
  readonly allFacts: number;
  /** Tokens of every dispatch output replayed. */
  readonly historyTokens: number;
  /** Tokens injected over all prompts. */
  readonly contextTokens: number;
  /** `contextTokens / historyTokens`, rounded to 3 decimals (0 for an empty history). */
  readonly contextToHistoryRatio: number;
}

/** The replay as the command line prints it with `--json`. */
export interface ReplayReport {
  readonly prompts: ReadonlyArray<PromptReport>;
  /** The rejected lines, in line order: the first `MAX_REPORTED_ERRORS` of them. */
  readonly errors: ReadonlyArray<ReplayError>;
  /** How many more lines were rejected than `errors` lists (absent when it lists them all). */
  readonly errorsOmitted?: number;
  /** The facts valid at the end of the replay. */
  readonly facts: ReadonlyArray<SessionFact>;
  readonly summary: ReplaySummary;
}

/** Everything needed to explain one prompt's retrieval later: the store it saw and its query. */
export interface PromptRetrieval {
  readonly line: number;
  readonly taskPrompt: string;
  readonly store: FactStore;
  readonly query: FactQuery;
}

/** A replay: the report, the final store, and with `keepRetrievals` each prompt's retrieval input (same order as `report.prompts`). */
export interface ReplayResult {
  readonly report: ReplayReport;
  readonly store: FactStore;
  readonly retrievals: ReadonlyArray<PromptRetrieval>;
}

const outputText = (output: string | Readonly<Record<string, unknown>>): string =>
  typeof output === 'string' ? output : JSON.stringify(output);

const ratio = (part: number, whole: number): number => (whole > 0 ? Math.round((part / whole) * 1000) / 1000 : 0);

/** Options of `startHistoryReplay`: those of `replayHistory`, and where the results go as they come. */
export interface HistoryReplayOptions extends Omit<ReplayOptions, 'onProgress' | 'keepRetrievals'> {
  /**
   * Receives each prompt's report as soon as it is replayed; the result then keeps none, so
   * output written as the replay goes costs no memory per prompt.
   */
  readonly onPrompt?: (prompt: PromptReport) => void;
  /** Receives each rejected line the report lists (the first `MAX_REPORTED_ERRORS`), in line order. */
  readonly onError?: (error: ReplayError) => void;
  /** Keep each prompt's retrieval input (`true`), or only that of the prompt on this line (what `explain` needs). */
  readonly keepRetrievals?: boolean | number;
}

/** A replay fed a history line by line, for a history read as a stream. */
export interface HistoryReplay {
  /**
   * Replays the next lines of the history, in file order. False once the replay has stopped
   * (`asOf` or `untilLine` reached): later lines change nothing, so the caller may stop reading.
   */
  readonly feed: (lines: ReadonlyArray<HistoryLine>) => boolean;
  /** Events replayed so far. */
  readonly replayed: () => number;
  /** The result so far: the report, the store, the retrievals kept. */
  readonly finish: () => ReplayResult;
}

/** A line is read or rejected: what the replay does with each non-blank line, in order. */
type ReadLine = E.Either<HistoryLineError, HistoryEvent>;

/** True when a line cannot be an event at all (its first character is not `{`): no need to parse it to count it. */
const cannotBeEvent = (text: string): boolean => !/^\s*\{/u.test(text);

/**
 * Refuses `tokenCounters` that is not counters by name (a programmer's mistake, said plainly
 * where the replay starts rather than left to budget every prompt with the estimate).
 */
const checkTokenCounters = (counters: unknown): void => {
  if (counters === undefined) return;
  if (!isRecord(counters))
    throw new TypeError(
      `tokenCounters is ${kindOf(counters)}, not counters by tokenizer name ({ o200k: countO200kTokens })`,
    );
  for (const name of TOKENIZER_NAMES) {
    const counter = counters[name];
    if (counter !== undefined && typeof counter !== 'function')
      throw new TypeError(`tokenCounters.${name} is ${kindOf(counter)}, not a function`);
  }
};

/**
 * The replay itself: folds `trackerTransition` over the read lines one by one, reporting
 * prompts and rejected lines as they come.
 */
const createReplayCore = (options: HistoryReplayOptions) => {
  checkTokenCounters(options.tokenCounters);
  // The caller's counter runs outside the replay's write run, and its answers are checked: the
  // report's counts are sums of them. The library's own estimate is taken as it is: the budget
  // stage knows it adds up line by line, and spares a section measured twice (`budgeted`).
  const checked = (counter: TokenCounter): TokenCounter =>
    counter === estimateTokens ? estimateTokens : (text) => checkedTokenCount(outsideRuns(() => counter(text)));
  const userCounter = options.countTokens;
  const countTokens: TokenCounter = userCounter === undefined ? estimateTokens : checked(userCounter);
  const env: TrackerEnvironment = { countTokens };
  /** The environment of each named counter met, made once. */
  const namedEnvs = new Map<TokenCounter, TrackerEnvironment>();
  /** A prompt's environment: `countTokens` when given, else the counter of the tokenizer its line names. */
  const envOf = (event: HistoryPromptEvent): TrackerEnvironment => {
    const { tokenCounters } = options;
    if (userCounter !== undefined || event.tokenizer === undefined || typeof tokenCounters !== 'object') return env;
    const counter = tokenCounters?.[event.tokenizer];
    if (typeof counter !== 'function') return env;
    const known = namedEnvs.get(counter);
    if (known !== undefined) return known;
    const named: TrackerEnvironment = { countTokens: checked(counter) };
    namedEnvs.set(counter, named);
    return named;
  };
  let state: TrackerState = initialTrackerState({
    ...(options.ranking === undefined ? {} : { ranking: options.ranking }),
    ...(options.layout === undefined ? {} : { layout: options.layout }),
    ...(options.initial === undefined ? {} : { store: options.initial }),
  });
  const prompts: PromptReport[] = [];
  const retrievals: PromptRetrieval[] = [];
  const errors: ReplayError[] = [];
  let errorsOmitted = 0;
  let historyTokens = 0;
  let contextTokens = 0;
  let dispatches = 0;
  let promptCount = 0;
  let replayed = 0;
  /** The time of the last event replayed, which the store handed out records. */
  let lastAt: number | undefined;
  let stopped = false;
  const keepsRetrievalOf = (line: number): boolean =>
    options.keepRetrievals === true || options.keepRetrievals === line;

  /** A prompt event with the replay's overrides of its budget and layout. */
  const withOverrides = (event: HistoryPromptEvent): PromptInput =>
    options.maxFacts === undefined && options.maxTokens === undefined && options.layout === undefined
      ? event
      : {
          ...event,
          ...(options.maxFacts === undefined ? {} : { maxFacts: options.maxFacts }),
          ...(options.maxTokens === undefined ? {} : { maxTokens: options.maxTokens }),
          ...(options.layout === undefined ? {} : { layout: options.layout }),
        };

  const reject = (error: ReplayError): void => {
    if (errors.length < MAX_REPORTED_ERRORS) {
      errors.push(error);
      const { onError } = options;
      if (onError !== undefined) outsideRuns(() => onError(error));
    } else errorsOmitted += 1;
  };

  /** False past the point where the replay stops: this line and every later one are not replayed. */
  const reaches = (line: number, at?: number): boolean => {
    if (
      (options.untilLine !== undefined && line > options.untilLine) ||
      (options.asOf !== undefined && at !== undefined && at > options.asOf)
    )
      stopped = true;
    return !stopped;
  };

  const reportPrompt = (line: number, output: PromptOutput): void => {
    const tokens = countTokens(output.sessionContext);
    contextTokens += tokens;
    promptCount += 1;
    const report: PromptReport = {
      line,
      taskId: output.taskId,
      sessionContext: output.sessionContext,
      facts: output.facts,
      contextTokens: tokens,
      historyTokens,
    };
    const { onPrompt } = options;
    if (onPrompt === undefined) prompts.push(report);
    else outsideRuns(() => onPrompt(report));
  };

  const replayEvent = (event: HistoryEvent): void => {
    // Rejected events count too: the reader timed the next line from them all the same.
    lastAt = event.at;
    if (event.type === 'prompt') {
      // A prompt whose task no record can hold is refused, as a live tracker refuses it.
      const taskId = normalizeTaskId(event.taskId);
      if (E.isLeft(taskId)) {
        reject({ line: event.line, code: 'invalid_input', message: taskId.left });
        replayed += 1;
        return;
      }
    }
    if (event.type === 'dispatch') {
      dispatches += 1;
      historyTokens += countTokens(outputText(event.output));
    }
    const input = event.type === 'prompt' ? withOverrides(event) : event;
    const eventEnv = event.type === 'prompt' ? envOf(event) : env;
    if (event.type === 'prompt' && keepsRetrievalOf(event.line)) {
      // Handed out: sealed, so the run's later writes copy what it holds instead of changing it.
      deepFreeze(state.store);
      retrievals.push({
        line: event.line,
        taskPrompt: event.taskPrompt,
        store: state.store,
        query: promptQuery(state, input as PromptInput, eventEnv),
      });
    }
    const [next, , output] = trackerTransition(state, input, eventEnv);
    state = next;
    if (output.type === 'dispatch' && E.isLeft(output.ingested))
      reject({ line: event.line, code: output.ingested.left.code, message: output.ingested.left.message });
    if (output.type === 'prompt') reportPrompt(event.line, output);
    replayed += 1;
  };

  /** Applies one read line; false once the replay has stopped. */
  const apply = (read: ReadLine): boolean => {
    if (E.isLeft(read)) {
      if (reaches(read.left.line)) reject(read.left);
    } else if (reaches(read.right.line, read.right.at)) replayEvent(read.right);
    return !stopped;
  };

  /**
   * Counts a line as rejected without parsing it when it cannot be an event and the report
   * lists no more errors: its message would never be shown. False when the line needs reading.
   */
  const skipsUnread = (line: HistoryLine): boolean => {
    if (errors.length < MAX_REPORTED_ERRORS || !cannotBeEvent(line.text)) return false;
    if (reaches(line.line) && !isBlankLine(line.text)) errorsOmitted += 1;
    return true;
  };

  /**
   * Steps through `items` in order until `step` says the replay stopped, in one transient write
   * run (see `transientRun`): the store stays the replay's own, written in place from the first
   * line to the last, and is sealed only when handed out (a kept retrieval, the result).
   */
  const owner = createOwner();
  const inRun = <T>(items: ReadonlyArray<T>, step: (item: T) => boolean): void => {
    transientRun(owner, () => {
      for (let i = 0; i < items.length && !stopped; i += 1) if (!step(items[i]!)) break;
    });
  };

  /** The result so far: its lists are copies, so lines fed after it leave it as it was handed out. */
  const finish = (): ReplayResult => {
    deepFreeze(state.store);
    const store = lastAt === undefined ? state.store : withLastEventAt(state.store, lastAt);
    return {
      report: {
        prompts: [...prompts],
        errors: [...errors],
        ...(errorsOmitted === 0 ? {} : { errorsOmitted }),
        facts: selectValidFacts(store),
        summary: {
          events: replayed,
          dispatches,
          prompts: promptCount,
          validFacts: selectValidCount(store),
          allFacts: selectAllFacts(store).length,
          historyTokens,
          contextTokens,
          contextToHistoryRatio: ratio(contextTokens, historyTokens),
        },
      },
      store,
      retrievals: [...retrievals],
    };
  };

  return { apply, skipsUnread, inRun, finish, replayed: () => replayed, stopped: () => stopped };
};

/** The options of a replay, `startHistoryReplay`'s included. */
const OPTION_NAMES = [
  'maxFacts',
  'maxTokens',
  'ranking',
  'layout',
  'initial',
  'countTokens',
  'tokenCounters',
  'asOf',
  'untilLine',
  'keepRetrievals',
  'onProgress',
  'onPrompt',
  'onError',
] as const satisfies ReadonlyArray<keyof ReplayOptions | keyof HistoryReplayOptions>;

/**
 * The options given, each read once, or none for a value that is not an object (null reads as
 * no options, as `createFactTracker`'s). An option that is none (null) reads as none, as the
 * tracker's do: `untilLine: null` is no bound, not one that stops before the first line.
 */
const optionsOf = <T extends object>(options: T | null | undefined): Partial<T> => {
  if (typeof options !== 'object' || options === null) return {};
  const read: Record<string, unknown> = {};
  for (const name of OPTION_NAMES) {
    const value = (options as Record<string, unknown>)[name];
    if (value !== undefined && value !== null) read[name] = value;
  }
  return read as Partial<T>;
};

/**
 * Where the lines without `at` of a history that resumes `initial` are timed from: the event
 * before them in the whole history (see `selectResumeTime`), as one replay of it times them
 * (timed from 0 they would come before the store's facts, late assertions closed at once).
 */
const resumedAt = (initial: FactStore | undefined): number | undefined =>
  initial === undefined ? undefined : selectResumeTime(initial);

/**
 * Starts a replay fed line by line (for a history read as a stream, where `replayHistory`
 * needs the whole text): the same report, store and retrievals for the same lines, with
 * memory bounded by the store rather than the history when `onPrompt` takes the prompts.
 */
export const startHistoryReplay = (options: HistoryReplayOptions = {}): HistoryReplay => {
  const given = optionsOf(options);
  const core = createReplayCore(given);
  const read = createHistoryLineReader(resumedAt(given.initial));
  return {
    feed: (lines) => {
      refuseUnlessDenseArray('the lines', lines, 'an array of history lines');
      let index = 0;
      core.inRun(lines, (line) => {
        checkHistoryLine(line, index);
        index += 1;
        if (core.skipsUnread(line)) return true;
        const parsed = read(line);
        return parsed === undefined || core.apply(parsed);
      });
      return !core.stopped();
    },
    replayed: core.replayed,
    finish: core.finish,
  };
};

/**
 * Replays a JSON Lines history and reports, for each prompt event, the section it would get
 * and its token cost against the history it stands in for. Bad lines are reported and
 * skipped; everything else still applies.
 */
export const replayHistory = (text: string, options: ReplayOptions = {}): ReplayResult => {
  const { onProgress, keepRetrievals, ...rest } = optionsOf(options);
  const core = createReplayCore({ ...rest, ...(keepRetrievals === undefined ? {} : { keepRetrievals }) });
  // The lines are read first, so progress can say how many events there are in all.
  const lines = readLines(linesOfText(text), resumedAt(rest.initial));
  const total = lines.filter(E.isRight).length;
  core.inRun(lines, (line) => {
    const before = core.replayed();
    const going = core.apply(line);
    if (onProgress !== undefined && core.replayed() !== before && core.replayed() % PROGRESS_STEP === 0)
      outsideRuns(() => onProgress(core.replayed(), total));
    return going;
  });
  onProgress?.(core.replayed(), total);
  return core.finish();
};

/** Every fact's score and decision for the prompt event on `line` of a replay run with `keepRetrievals`, if that line is a replayed prompt. */
export const explainPromptAt = (result: ReplayResult, line: number): O.Option<ReadonlyArray<RetrievalDecision>> => {
  // A result that is not one (null from an unset variable) is a programmer's mistake: said plainly.
  if (!isRecord(result) || !Array.isArray(result.retrievals))
    throw new TypeError(
      `the result is ${isRecord(result) ? 'an object without retrievals' : kindOf(result)}, not a replay result (replayHistory makes one)`,
    );
  const retrieval = result.retrievals.find((entry) => entry.line === line);
  return retrieval === undefined ? O.none : O.some(explainRetrieval(retrieval.store, retrieval.query));
};
