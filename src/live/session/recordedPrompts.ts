/**
 * The prompts a session's log holds, read back as their lines have them:
 * - the section a prompt sent again answers, the one of the line that holds it (as `replay`
 *   computes it there), never one of the state as it is now. A process keeps the sections of the
 *   last prompts it recorded (a client that lost an answer sends the call again to the same
 *   server); any other is computed again from the log's lines before its line, after the
 *   store's turn (its lock) is over, as nothing is written;
 * - the latest prompt recorded for a task and a prompt text, whose settings (tags, limits,
 *   layout, tokenizer) tell how its section was made, for an explanation of that section.
 */
import * as E from 'fp-ts/lib/Either.js';
import * as O from 'fp-ts/lib/Option.js';
import { sha256HexPrefix } from '../../base/hash.js';
import { type HistoryPromptEvent, parseHistoryLine } from '../../core/history/events.js';
import type { TrackerEnvironment, TrackerOutput } from '../../core/tracker/transition.js';
import { DEFAULT_TOKENIZER } from '../../tokens/names.js';
import type { SessionCounting } from './tokenizer.js';
import type { RecordedPrompt, SessionError } from './model.js';
import {
  applyLogLines,
  decodeSnapshot,
  holdsEvent,
  initialSessionState,
  type RecordedEvent,
  selectSectionAtLine,
  type SessionState,
} from './sessionState.js';
import { followedBy } from './follower.js';
import type { SessionStore, StoredLine } from './store.js';
import { CATCH_UP_LINES, turnOfTheLoop } from './turns.js';

/** How many prompts (of distinct tasks and texts) a process remembers the settings of, the latest kept. */
const KNOWN_PROMPTS = 4_096;

/** What a prompt is known by: its task and its text. */
const queryKey = ({ taskId, taskPrompt }: Pick<HistoryPromptEvent, 'taskId' | 'taskPrompt'>): string =>
  `${taskId}\u0000${sha256HexPrefix(taskPrompt, 32)}`;

/** Sections of its latest prompts a process keeps. */
const KEPT_SECTIONS = 32;

/**
 * A prompt line's settings, as a prompt to explain takes them. Its tokenizer is the one the line
 * names; a line that names none was budgeted with the estimate when this session counts with a
 * named tokenizer (which every line it writes names), else with the counter this session has too.
 */
const recordedPromptOf = (event: HistoryPromptEvent, counting: SessionCounting): RecordedPrompt => {
  const { line, taskId, taskPrompt, tags, maxFacts, maxTokens, layout } = event;
  const tokenizer = event.tokenizer ?? (counting.recorded === undefined ? undefined : DEFAULT_TOKENIZER);
  return {
    line,
    taskId,
    taskPrompt,
    ...(tags === undefined ? {} : { tags }),
    ...(maxFacts === undefined ? {} : { maxFacts }),
    ...(maxTokens === undefined ? {} : { maxTokens }),
    ...(layout === undefined ? {} : { layout }),
    ...(tokenizer === undefined ? {} : { tokenizer }),
  };
};

/**
 * The state of session `id` before its line `line`: from the newest snapshot the store keeps of
 * an earlier line (the one the newest replaced, when the newest is past the line), else from the
 * log's first line, applied a few lines a turn so that the process serves its other calls
 * meanwhile. Read as a follower of its own, which starts where that snapshot ends: the session's
 * place in the log is not moved. Undefined when the log read holds no event of key `key` on that
 * line: deleted and made anew since the session found it there, its lines are another log's.
 */
const stateBefore = async (
  shared: SessionStore,
  id: string,
  { line, key }: { readonly line: number; readonly key: string },
  env: TrackerEnvironment,
): Promise<E.Either<SessionError, SessionState | undefined>> => {
  const store = followedBy(shared);
  const snapshot = await store.readSnapshot(id, undefined, line - 1);
  const stored = E.isRight(snapshot) && snapshot.right !== undefined ? decodeSnapshot(snapshot.right) : undefined;
  const start =
    stored !== undefined && E.isRight(stored) && stored.right.lines < line ? stored.right : initialSessionState();
  const read = await store.read(id, start.lines);
  if (E.isLeft(read)) return read;
  let state = read.right.restarted ? initialSessionState() : start;
  const lines = read.right.lines.filter((stored) => stored.line < line);
  for (let from = 0; from < lines.length; from += CATCH_UP_LINES) {
    if (from > 0) await turnOfTheLoop();
    const chunk = lines.slice(from, from + CATCH_UP_LINES);
    state = applyLogLines(state, chunk, chunk[chunk.length - 1]!.line, env);
  }
  const before = state.lines === line - 1 ? state : applyLogLines(state, [], line - 1, env);
  const own = read.right.lines.find((stored) => stored.line === line);
  const held = own !== undefined && holdsEvent(applyLogLines(before, [own], line, env), key, line);
  return E.right(held ? before : undefined);
};

/** The prompts of a session's log. */
export interface RecordedPrompts {
  /** Keeps the section of a prompt just recorded (anything else is not kept). */
  readonly keep: (key: string, recorded: RecordedEvent) => void;
  /**
   * The section of the prompt of key `key` that its line (`prompt.line`) holds; undefined when
   * the log no longer holds it there (deleted and made anew since it was found).
   */
  readonly sectionAt: (
    key: string,
    prompt: HistoryPromptEvent,
  ) => Promise<E.Either<SessionError, TrackerOutput | undefined>>;
  /** Takes note of the prompts among lines the session read or wrote (all of them again after `restarted`). */
  readonly notice: (lines: ReadonlyArray<StoredLine>, restarted: boolean) => void;
  /** The latest prompt recorded for the task and prompt text of `query` (among the latest `KNOWN_PROMPTS` texts). */
  readonly latest: (query: HistoryPromptEvent) => Promise<E.Either<SessionError, O.Option<RecordedPrompt>>>;
}

/**
 * The prompts of the session `id` in `store`: the session's store as every follower shares it,
 * so reading back from an earlier line never moves where the session is.
 */
export const recordedPrompts = (store: SessionStore, id: string, counting: SessionCounting): RecordedPrompts => {
  const { env } = counting;
  const kept = new Map<number, { readonly key: string; readonly output: TrackerOutput }>();
  const keep = (key: string, recorded: RecordedEvent): void => {
    if (recorded.output?.type !== 'prompt') return;
    kept.delete(recorded.line);
    kept.set(recorded.line, { key, output: recorded.output });
    // The oldest goes first: a Map iterates in the order its keys were set.
    if (kept.size > KEPT_SECTIONS) kept.delete(kept.keys().next().value!);
  };
  // The settings of the latest prompt of each task and text, by task and a digest of the text (a
  // prompt may run to 100,000 characters: its text is not kept). Filled at the first question,
  // then followed: a session nobody asks holds none.
  const known = new Map<string, Omit<RecordedPrompt, 'taskId' | 'taskPrompt'>>();
  let scanned = false;
  const takeNote = (lines: ReadonlyArray<StoredLine>): void => {
    for (const { line, text } of lines) {
      // Most lines are results: only a line that may be a prompt is parsed.
      if (!text.includes('"prompt"')) continue;
      const parsed = parseHistoryLine(text, line, undefined);
      if (E.isLeft(parsed) || parsed.right.type !== 'prompt') continue;
      const key = queryKey(parsed.right);
      const { taskId: _task, taskPrompt: _text, ...settings } = recordedPromptOf(parsed.right, counting);
      known.delete(key);
      known.set(key, settings);
      if (known.size > KNOWN_PROMPTS) known.delete(known.keys().next().value!);
    }
  };
  const notice = (lines: ReadonlyArray<StoredLine>, restarted: boolean): void => {
    // A log replaced since holds other events on the same lines: nothing known of the old one stands.
    if (restarted) {
      known.clear();
      kept.clear();
      scanned = false;
    }
    if (scanned) takeNote(lines);
  };
  return {
    keep,
    sectionAt: async (key, prompt) => {
      // A line of a log replaced since holds another event: its key tells.
      const own = kept.get(prompt.line);
      if (own !== undefined && own.key === key) return E.right(own.output);
      // Budgeted with the tokenizer its line names, as `replay` budgets it there.
      const promptEnv = counting.envOf(prompt);
      if (E.isLeft(promptEnv)) return promptEnv;
      const before = await stateBefore(store, id, { line: prompt.line, key }, env);
      if (E.isLeft(before)) return before;
      if (before.right === undefined) return E.right(undefined);
      const output = selectSectionAtLine(before.right, prompt, promptEnv.right);
      keep(key, { line: prompt.line, duplicate: false, output });
      return E.right(output);
    },
    notice,
    latest: async (query) => {
      // Read whole once, then kept up to date by what the session reads and writes: no read per call.
      if (!scanned) {
        const read = await followedBy(store).read(id, 0);
        if (E.isLeft(read)) return read;
        known.clear();
        takeNote(read.right.lines);
        scanned = true;
      }
      const settings = known.get(queryKey(query));
      return E.right(
        settings === undefined ? O.none : O.some({ taskId: query.taskId, taskPrompt: query.taskPrompt, ...settings }),
      );
    },
  };
};
