/**
 * The report of `replay`, written as the replay goes: each prompt (and, in text, each rejected
 * line) as soon as it is replayed, the rest at the end. Byte for byte what rendering the whole
 * report at once gives, but the prompts of a long history are never all held in memory.
 */
import type { PromptReport, ReplayError, ReplayReport } from '../history/replay.js';
import { renderError, renderPrompt, renderReplayEnd } from './render.js';
import type { Style } from './style.js';

/** Where the report goes, piece by piece. */
export interface ReplayOutput {
  readonly prompt: (prompt: PromptReport) => void;
  readonly error: (error: ReplayError) => void;
  /** Writes what is buffered (after each batch of lines, not after each prompt). */
  readonly flush: () => void;
  /** Writes the end of the report and flushes. */
  readonly end: (report: ReplayReport) => void;
}

/**
 * Buffered writes: `write` is called with each piece `add` gathered, in order, on `flush`. The
 * pieces are not joined first: a replay's JSON is tens of megabytes, and joining its pieces
 * copied all of it once more (a fifth of a second on a 10,000-dispatch replay).
 */
const buffered = (write: (text: string) => void) => {
  let parts: string[] = [];
  return {
    add: (text: string): void => {
      parts.push(text);
    },
    flush: (): void => {
      const written = parts;
      parts = [];
      for (const part of written) write(part);
    },
  };
};

/** The text report: prompts and rejected lines in line order, then the valid facts and the token summary. */
export const textReplayOutput = (write: (text: string) => void, tokenizer: string, style: Style): ReplayOutput => {
  const out = buffered(write);
  let carried = 0;
  return {
    prompt: (prompt) => {
      carried += prompt.historyTokens;
      out.add(`${renderPrompt(prompt, style)}\n\n`);
    },
    error: (error) => out.add(`${renderError(error, style)}\n\n`),
    flush: out.flush,
    end: (report) => {
      out.add(`${renderReplayEnd(report, carried, tokenizer, style)}\n`);
      out.flush();
    },
  };
};

/**
 * `value` as two-space indented JSON, nested two levels down in a document indented the same
 * way: written inside two arrays, whose brackets are cut off (no pass over the text to indent it).
 */
const promptJson = (value: unknown): string => {
  const text = JSON.stringify([[value]], null, 2);
  return text.slice('[\n  [\n    '.length, text.length - '\n  ]\n]'.length);
};

/** The JSON report, as `JSON.stringify(report, null, 2)` and a newline would write it, the prompts streamed. */
export const jsonReplayOutput = (write: (text: string) => void): ReplayOutput => {
  const out = buffered(write);
  let prompts = 0;
  return {
    prompt: (prompt) => {
      out.add(`${prompts === 0 ? '{\n  "prompts": [\n    ' : ',\n    '}${promptJson(prompt)}`);
      prompts += 1;
    },
    error: () => undefined,
    flush: out.flush,
    end: ({ prompts: kept, ...rest }) => {
      // The rest of the document, after its opening brace, as it follows the prompts.
      const after = JSON.stringify(rest, null, 2).slice(1);
      out.add(prompts === 0 ? `{\n  "prompts": [],${after}\n` : `\n  ],${after}\n`);
      out.flush();
    },
  };
};
