/**
 * Every size limit of live use, in one place: the session's own checks, the MCP server's schemas
 * (`maxLength`, `maximum`), its standard input, and the hook command all read these numbers, so
 * what one way in accepts, every other does too, and docs/formats.md lists them once.
 */
import { FACT_LIMITS } from '../../core/fact.js';
import { HISTORY_LINE_LIMITS } from '../../core/history/lines.js';

/** The longest session id, in characters (Claude Code's and Codex's ids are 36). */
export const MAX_SESSION_ID_LENGTH = 128;

/** The longest task id, in characters: facts carry it (`FACT_LIMITS.sourceTaskId`), so prompts and results alike stop there. */
export const MAX_TASK_ID_LENGTH = FACT_LIMITS.sourceTaskId;

/** The longest task prompt, in characters: a subagent's prompt is a few KB, a pasted file or two at most. */
export const MAX_PROMPT_LENGTH = 100_000;

/**
 * The longest dispatch output, in characters (of the text, or of the result object as JSON): a
 * result is a few KB, so 1,000,000 already means a transcript was sent instead of a final message.
 */
export const MAX_OUTPUT_LENGTH = 1_000_000;

/**
 * How deep an output object may nest arrays and objects: one level less than a history line may,
 * as its line holds it one level down (`{"type": "dispatch", "result": {...}}`).
 */
export const MAX_OUTPUT_DEPTH = HISTORY_LINE_LIMITS.depth - 1;

/**
 * How deep a hook event may nest arrays and objects: twice what a history line may, room for a
 * result object as deep as a line holds one, a few levels down in the host's event. Deeper, the
 * event is refused before anything is recorded: writing it back (the prompt the hook rewrites
 * carries the event's tool input) would overflow the stack.
 */
export const MAX_PAYLOAD_DEPTH = 2 * HISTORY_LINE_LIMITS.depth;

/**
 * The largest message read whole, in bytes: one JSON-RPC message of the MCP server, or the
 * payload of one hook event on standard input. Room for the largest output and prompt taken,
 * even with every character escaped, and not much more.
 */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/** The longest subject or relation a tool takes, as facts store them. */
export const MAX_SUBJECT_LENGTH = FACT_LIMITS.subject;
/** The longest relation a tool takes. */
export const MAX_RELATION_LENGTH = FACT_LIMITS.relation;

/** The longest time given as text (ISO-8601 takes at most 35 characters). */
export const MAX_TIME_LENGTH = 64;

/** The most facts and the largest token budget one section may ask for. */
export const MAX_SECTION_FACTS = 100;
/** The largest token budget one section may ask for. */
export const MAX_SECTION_TOKENS = 4_000;

/** The code of each refusal of the hook, as the first word of its message. */
export const LIMIT_CODES = {
  taskId: 'invalid_task_id',
  prompt: 'prompt_too_large',
  output: 'output_too_large',
  input: 'input_too_large',
} as const;
