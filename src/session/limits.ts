/**
 * The limits every live entry point shares: the hook command, the MCP server and the session
 * logs behind them read these numbers, so a task id, a prompt or an output that one of them
 * accepts is accepted by all of them, and one that one refuses is refused by all of them with
 * the same code.
 */
import { FACT_LIMITS } from '../fact.js';
import { HISTORY_LINE_LIMITS } from '../history/lines.js';

/** The longest task id (after collapsing whitespace): a fact's `sourceTaskId` holds it. */
export const MAX_TASK_ID_LENGTH: number = FACT_LIMITS.sourceTaskId;
/** The longest task prompt, in UTF-16 units. */
export const MAX_PROMPT_CHARACTERS = 1_000_000;
/** The longest subagent output (a result's raw text), in UTF-16 units. */
export const MAX_OUTPUT_CHARACTERS = 1_000_000;
/**
 * The most bytes a hook reads from standard input: one history line's worth, room for a payload
 * that carries a prompt and an output at their limits, escaped.
 */
export const MAX_HOOK_INPUT_BYTES: number = HISTORY_LINE_LIMITS.length;

/** The code of each refusal, as the first word of its message. */
export const LIMIT_CODES = {
  taskId: 'invalid_task_id',
  prompt: 'prompt_too_large',
  output: 'output_too_large',
  input: 'input_too_large',
} as const;
