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

/** JSON of a value that may hold cycles or bigints (the tail must always render). */
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
    );
  } catch {
    return '{}';
  }
};

const given = (text: string | undefined): text is string => typeof text === 'string' && text !== '';

/**
 * The dynamic tail of a dispatch prompt: task id, output budget, delta packet, guide key and
 * instruction when given, the session context when not blank, then the task prompt.
 */
export const buildDispatchDynamicTail = (input: DispatchTailInput): string => {
  const lines = [
    `Task ID: ${input.taskId}`,
    `Max output tokens: ${input.maxOutputTokens}`,
    `Delta context: ${safeJson(input.deltaPacket)}`,
  ];
  if (given(input.guideCacheKey)) lines.push(`Guide cache key: ${input.guideCacheKey}`);
  if (given(input.guideInstruction)) lines.push(input.guideInstruction);
  if (typeof input.sessionContext === 'string' && input.sessionContext.trim() !== '') lines.push(input.sessionContext);
  lines.push('Task prompt:', input.taskPrompt);
  return lines.join('\n');
};
