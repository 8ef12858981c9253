/**
 * The shape of a `[Session Context]` section as `formatSessionFacts` draws it, read back: a task
 * prompt built from an earlier one (an orchestrator that puts a compiled section in front of its
 * subagent's prompt, or dispatches again the prompt a task was given) carries that section, and
 * its lines are facts of other tasks, not the words of this one. They are left out wherever a
 * prompt's words are read: the query they would bend toward the facts already shown, and the
 * task's recorded prompt, whose context they would lend to every file they name.
 */

import { FACT_LIMITS } from '../fact.js';

/** The header line of the injected section. */
export const SESSION_CONTEXT_HEADER = '[Session Context]';

/**
 * A task id of no space and none of the characters a grouped line is made of (`- task:3 modified
 * a, b`, `[task:3,4]`), at most as long as a fact's: a loop over a line of millions of characters
 * outside Latin-1 (a prompt of a history line may hold 16 Mi) overflowed the engine's regexp stack.
 */
const PLAIN_ID = String.raw`[^\s,[\]]{1,${FACT_LIMITS.sourceTaskId}}`;
/** True for such a task id. */
export const PLAIN_TASK_ID = new RegExp(`^${PLAIN_ID}$`, 'u');
/** The start of the grouped line of a task's own files, whose id is plain. */
const FILES_LINE = new RegExp(`^- task:${PLAIN_ID} modified `, 'u');

/**
 * True when `line` has the shape of a line `formatSessionFacts` draws after its header, in
 * either layout: `- ... [task:ID]` (one fact, or facts of one subject, ending with their tasks)
 * or `- task:ID modified a, b` (a task's own files). A reader that skips a section to find what
 * follows it ends it at the first line of no such shape.
 */
export const isSectionFactLine = (line: string): boolean =>
  line.startsWith('- ') && ((line.endsWith(']') && line.lastIndexOf(' [task:') > 1) || FILES_LINE.test(line));

/** A line break, kept by `split` beside the lines it ends. */
const LINE_BREAK = /(\r\n|[\n\r\u2028\u2029])/u;

/**
 * `prompt` without the `[Session Context]` sections it holds: each header (alone on its line,
 * spaces aside), the fact lines after it (`isSectionFactLine`) and the blank lines that part it
 * from what follows (`[Session Context]\n- ...\n\nthe prompt` is `the prompt`), up to the first
 * line of another shape, which stays with everything else as it was written. The same string
 * when the prompt holds no header.
 */
export const withoutSessionContext = (prompt: string): string => {
  if (!prompt.includes(SESSION_CONTEXT_HEADER)) return prompt;
  // Lines at the even places, each followed by the break that ends it.
  const parts = prompt.split(LINE_BREAK);
  let kept = '';
  // Within a section: its fact lines, then the blank lines after them.
  let skipping: 'facts' | 'blanks' | undefined;
  for (let i = 0; i < parts.length; i += 2) {
    const line = parts[i]!;
    const blank = line.trim() === '';
    if (line.trim() === SESSION_CONTEXT_HEADER) skipping = 'facts';
    else if (skipping === 'facts' && isSectionFactLine(line)) continue;
    else if (skipping !== undefined && blank) skipping = 'blanks';
    else {
      skipping = undefined;
      kept += line + (parts[i + 1] ?? '');
    }
  }
  return kept;
};
