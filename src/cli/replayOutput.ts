/**
 * The report of `replay`, written as the replay goes: each prompt (and, in text, each rejected
 * line) as soon as it is replayed, the rest at the end. Byte for byte what rendering the whole
 * report at once gives, but the prompts of a long history are never all held in memory.
 */
import type { PromptReport, ReplayError, ReplayReport } from '../core/replay/replay.js';
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

/** About how many characters one write takes: pieces are joined up to this size (see `buffered`). */
const WRITE_SIZE = 64 * 1024;

/**
 * Buffered writes: `write` is called with the pieces `add` gathers, in order, joined into runs
 * of about WRITE_SIZE characters, each as soon as it is full (and the rest on `flush`). A
 * replay's JSON is tens of megabytes written in pieces of a prompt each: written one by one,
 * every piece pays a write of its own, and joined whole, all of it is copied once more. Held
 * until the end of a batch of lines (a few hundred prompts), the pieces outlived the engine's
 * young generation, to be copied out of it and collected later; a run is written while its
 * pieces are young. (The measures: docs/performance.md, Writing the report.)
 */
const buffered = (write: (text: string) => void) => {
  let parts: string[] = [];
  let size = 0;
  const flush = (): void => {
    if (parts.length === 0) return;
    const written = parts;
    parts = [];
    size = 0;
    write(written.length === 1 ? written[0]! : written.join(''));
  };
  return {
    add: (text: string): void => {
      parts.push(text);
      size += text.length;
      if (size >= WRITE_SIZE) flush();
    },
    flush,
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
 * `value` as `JSON.stringify(value, null, 2)` writes it `depth` levels down a document indented
 * the same way, its first line not indented: written inside `depth` arrays, whose brackets are
 * cut off (no pass over the text to indent it).
 */
const nestedJson = (value: unknown, depth: number): string | undefined => {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  let wrapped: unknown = value;
  for (let i = 0; i < depth; i += 1) wrapped = [wrapped];
  const text = JSON.stringify(wrapped, null, 2);
  const before = depth * (depth + 1) + 2 * depth;
  const after = depth * (depth + 1);
  return text.slice(before, text.length - after);
};

/** How deep a prompt's facts are in the report: `prompts`, a prompt, its `facts`, a fact. */
const FACT_DEPTH = 4;

/**
 * Each fact's JSON as a prompt of the report holds it. A fact is in the sections of many
 * prompts in a row, and a frozen fact never changes: its text is made once.
 */
const factTexts = new WeakMap<object, string>();

const factJson = (fact: unknown): string => {
  const frozen = typeof fact === 'object' && fact !== null && Object.isFrozen(fact);
  const known = frozen ? factTexts.get(fact) : undefined;
  if (known !== undefined) return known;
  const text = nestedJson(fact, FACT_DEPTH) ?? 'null';
  if (frozen) factTexts.set(fact, text);
  return text;
};

const FACT_INDENT = '  '.repeat(FACT_DEPTH);
const FIELD_INDENT = '  '.repeat(FACT_DEPTH - 1);
const PROMPT_INDENT = '  '.repeat(FACT_DEPTH - 2);

/**
 * A prompt of the report as `JSON.stringify` writes it two levels down (see `nestedJson`), its
 * facts' text made once per fact.
 */
const promptJson = (prompt: PromptReport): string => {
  let text = '{';
  let fields = 0;
  for (const [key, value] of Object.entries(prompt)) {
    const json =
      key === 'facts' && Array.isArray(value)
        ? value.length === 0
          ? '[]'
          : `[\n${FACT_INDENT}${value.map(factJson).join(`,\n${FACT_INDENT}`)}\n${FIELD_INDENT}]`
        : nestedJson(value, FACT_DEPTH - 1);
    if (json === undefined) continue;
    text += `${fields === 0 ? '' : ','}\n${FIELD_INDENT}${JSON.stringify(key)}: ${json}`;
    fields += 1;
  }
  return fields === 0 ? '{}' : `${text}\n${PROMPT_INDENT}}`;
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
