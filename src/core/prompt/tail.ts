import { refuseArgument } from '../../base/describe.js';
import { isRecord } from '../../base/record.js';
import { collapseWhitespace, isBlank } from '../../base/text.js';

/** Input of `buildDispatchDynamicTail`. */
export interface DispatchTailInput {
  readonly taskId: string;
  readonly maxOutputTokens: number;
  readonly deltaPacket: Record<string, unknown>;
  readonly guideCacheKey?: string;
  readonly guideInstruction?: string;
  readonly sessionContext?: string;
  readonly taskPrompt: string;
}

/**
 * The line breaks JSON text may hold raw (inside strings), each as its escape: the same JSON,
 * which stays on its one line.
 */
const RAW_LINE_BREAKS = /[\u0085\u2028\u2029]/gu;
const escaped = (char: string): string => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** JSON of a value that may hold cycles or bigints (the tail must always render), on one line. */
const safeJson = (value: unknown): string => {
  const seen = new WeakSet<object>();
  try {
    return (
      JSON.stringify(value, (_key, entry: unknown) => {
        if (typeof entry === 'bigint') return entry.toString();
        if (typeof entry === 'object' && entry !== null) {
          if (seen.has(entry)) return '[Circular]';
          seen.add(entry);
        }
        return entry;
      }) ?? '{}'
    ).replace(RAW_LINE_BREAKS, escaped);
  } catch {
    return '{}';
  }
};

/** A field of a line of its own (the task id, the cache key): whitespace-collapsed, so it cannot start another. */
const oneLine = (text: unknown): string => collapseWhitespace(String(text ?? ''));

const given = (text: string | undefined): text is string => typeof text === 'string' && text !== '';

/**
 * The dynamic tail of a dispatch prompt: task id, output budget, delta packet, guide key and
 * instruction when given, the session context when not blank, then the task prompt.
 */
export const buildDispatchDynamicTail = (input: DispatchTailInput): string => {
  // An input that is no object (null from an unset variable) is a programmer's mistake: said plainly.
  if (!isRecord(input)) refuseArgument('the input', input, "an object (a dispatch tail's fields)");
  // So are required fields left out or of the wrong kind: said, rather than printed as "undefined".
  if (typeof input.taskId !== 'string') refuseArgument('taskId', input.taskId, 'a string');
  if (typeof input.maxOutputTokens !== 'number') refuseArgument('maxOutputTokens', input.maxOutputTokens, 'a number');
  // NaN or a negative count is no budget either: printed, it would read "Max output tokens: NaN".
  if (!(input.maxOutputTokens >= 0))
    throw new TypeError(`maxOutputTokens is ${input.maxOutputTokens}, not a number of tokens, 0 or more`);
  if (!isRecord(input.deltaPacket)) refuseArgument('deltaPacket', input.deltaPacket, 'an object');
  if (typeof input.taskPrompt !== 'string') refuseArgument('taskPrompt', input.taskPrompt, 'a string');
  const lines = [
    `Task ID: ${oneLine(input.taskId)}`,
    `Max output tokens: ${input.maxOutputTokens}`,
    `Delta context: ${safeJson(input.deltaPacket)}`,
  ];
  const guideCacheKey = given(input.guideCacheKey) ? oneLine(input.guideCacheKey) : '';
  if (guideCacheKey !== '') lines.push(`Guide cache key: ${guideCacheKey}`);
  if (given(input.guideInstruction)) lines.push(input.guideInstruction);
  if (typeof input.sessionContext === 'string' && !isBlank(input.sessionContext)) lines.push(input.sessionContext);
  lines.push('Task prompt:', input.taskPrompt);
  return lines.join('\n');
};
