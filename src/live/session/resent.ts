/**
 * What a prompt sent again answers: the section of the line that holds it, as `replay` computes
 * it there, never one of the state as it is now. A process keeps the sections of the last
 * prompts it recorded (a client that lost an answer sends the call again to the same server);
 * any other is computed again from the log's lines before its line, after the store's turn (its
 * lock) is over, as nothing is written.
 */
import * as E from 'fp-ts/lib/Either.js';
import type { HistoryPromptEvent } from '../../core/history/events.js';
import type { TrackerEnvironment, TrackerOutput } from '../../core/tracker/transition.js';
import type { SessionError } from './model.js';
import { type RecordedEvent, selectSectionAtLine } from './sessionState.js';
import type { SessionStore } from './store.js';

/** Sections of its latest prompts a process keeps. */
const KEPT_SECTIONS = 32;

/** The sections of a session's recorded prompts. */
export interface RecordedSections {
  /** Keeps the section of a prompt just recorded (anything else is not kept). */
  readonly keep: (key: string, recorded: RecordedEvent) => void;
  /** The section of the prompt of key `key` its line holds (`prompt.line`). */
  readonly at: (key: string, prompt: HistoryPromptEvent) => Promise<E.Either<SessionError, TrackerOutput>>;
}

/** The sections of the prompts of the session `id` in `store`. */
export const recordedSections = (store: SessionStore, id: string, env: TrackerEnvironment): RecordedSections => {
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
    at: async (key, prompt) => {
      // A line of a log replaced since holds another event: its key tells.
      const own = kept.get(prompt.line);
      if (own !== undefined && own.key === key) return E.right(own.output);
      const read = await store.read(id, 0);
      if (E.isLeft(read)) return read;
      const output = selectSectionAtLine(read.right.lines, prompt, env);
      keep(key, { line: prompt.line, duplicate: false, output });
      return E.right(output);
    },
  };
};
