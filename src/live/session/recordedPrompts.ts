/**
 * The prompts a session's log holds, read back as their lines have them:
 * - the section a prompt sent again answers, the one of the line that holds it (as `replay`
 *   computes it there), never one of the state as it is now. A process keeps the sections of the
 *   last prompts it recorded (a client that lost an answer sends the call again to the same
 *   server); any other is computed again from the log's lines before its line, after the
 *   store's turn (its lock) is over, as nothing is written;
 * - the latest prompt recorded for a task and a prompt text, whose settings (tags, limits,
 *   layout) tell how its section was made, for an explanation of that section.
 */
import * as E from 'fp-ts/lib/Either.js';
import * as O from 'fp-ts/lib/Option.js';
import { type HistoryPromptEvent, parseHistoryLine } from '../../core/history/events.js';
import type { TrackerEnvironment, TrackerOutput } from '../../core/tracker/transition.js';
import type { RecordedPrompt, SessionError } from './model.js';
import { type RecordedEvent, selectSectionAtLine } from './sessionState.js';
import type { SessionStore, StoredLine } from './store.js';

/** Sections of its latest prompts a process keeps. */
const KEPT_SECTIONS = 32;

/** A prompt line's settings, as a prompt to explain takes them. */
const recordedPromptOf = (event: HistoryPromptEvent): RecordedPrompt => {
  const { line, taskId, taskPrompt, tags, maxFacts, maxTokens, layout } = event;
  return {
    line,
    taskId,
    taskPrompt,
    ...(tags === undefined ? {} : { tags }),
    ...(maxFacts === undefined ? {} : { maxFacts }),
    ...(maxTokens === undefined ? {} : { maxTokens }),
    ...(layout === undefined ? {} : { layout }),
  };
};

/**
 * The latest prompt among `lines` (a log's, in order) for the task and prompt text of `query`,
 * read from the end; a line that is no prompt event is passed over, as `replay` passes it.
 */
export const selectRecordedPrompt = (
  lines: ReadonlyArray<StoredLine>,
  query: Pick<HistoryPromptEvent, 'taskId' | 'taskPrompt'>,
): O.Option<RecordedPrompt> => {
  for (let i = lines.length - 1; i >= 0; i -= 1) {
    const { line, text } = lines[i]!;
    // Most lines are results: only a line that may be a prompt of this task is parsed.
    if (!text.includes('"prompt"')) continue;
    const parsed = parseHistoryLine(text, line, undefined);
    if (E.isLeft(parsed) || parsed.right.type !== 'prompt') continue;
    const event = parsed.right;
    if (event.taskId === query.taskId && event.taskPrompt === query.taskPrompt) return O.some(recordedPromptOf(event));
  }
  return O.none;
};

/** The prompts of a session's log. */
export interface RecordedPrompts {
  /** Keeps the section of a prompt just recorded (anything else is not kept). */
  readonly keep: (key: string, recorded: RecordedEvent) => void;
  /** The section of the prompt of key `key` that its line (`prompt.line`) holds. */
  readonly sectionAt: (key: string, prompt: HistoryPromptEvent) => Promise<E.Either<SessionError, TrackerOutput>>;
  /** The latest prompt recorded for the task and prompt text of `query`. */
  readonly latest: (query: HistoryPromptEvent) => Promise<E.Either<SessionError, O.Option<RecordedPrompt>>>;
}

/** The prompts of the session `id` in `store`. */
export const recordedPrompts = (store: SessionStore, id: string, env: TrackerEnvironment): RecordedPrompts => {
  const kept = new Map<number, { readonly key: string; readonly output: TrackerOutput }>();
  const keep = (key: string, recorded: RecordedEvent): void => {
    if (recorded.output?.type !== 'prompt') return;
    kept.delete(recorded.line);
    kept.set(recorded.line, { key, output: recorded.output });
    // The oldest goes first: a Map iterates in the order its keys were set.
    if (kept.size > KEPT_SECTIONS) kept.delete(kept.keys().next().value!);
  };
  return {
    keep,
    sectionAt: async (key, prompt) => {
      // A line of a log replaced since holds another event: its key tells.
      const own = kept.get(prompt.line);
      if (own !== undefined && own.key === key) return E.right(own.output);
      const read = await store.read(id, 0);
      if (E.isLeft(read)) return read;
      const output = selectSectionAtLine(read.right.lines, prompt, env);
      keep(key, { line: prompt.line, duplicate: false, output });
      return E.right(output);
    },
    latest: async (query) => {
      const read = await store.read(id, 0);
      return E.isLeft(read) ? read : E.right(selectRecordedPrompt(read.right.lines, query));
    },
  };
};
