/**
 * What the hook events of one session have left for each other, kept as JSON Lines beside the
 * session log (`{id}.jsonl.hooks`): each `PreToolUse` of a subagent tool leaves a pending
 * section, each `SubagentStart` takes the oldest pending section of its agent type, each
 * `SubagentStop` finds the task its agent was started for. Hook commands are separate
 * processes, so this file is their only memory; the state is a fold over its records.
 */
import * as O from 'fp-ts/lib/Option.js';
import { z } from 'zod';

/** A section computed for a subagent about to start. */
export interface PendingSection {
  readonly type: 'pending';
  /** The line of the prompt event in the session log. */
  readonly line: number;
  readonly taskId: string;
  readonly agentType?: string;
  readonly toolUseId?: string;
  readonly sessionContext: string;
  readonly at: number;
}

/** A subagent took the pending section of `line`. */
export interface SubagentStartRecord {
  readonly type: 'started';
  readonly line: number;
  readonly taskId: string;
  readonly agentId?: string;
  readonly agentType?: string;
  readonly at: number;
}

/** A subagent finished. */
export interface SubagentStopRecord {
  readonly type: 'stopped';
  readonly taskId: string;
  readonly agentId?: string;
  readonly at: number;
}

/** One line of the hooks file. */
export type HookRecord = PendingSection | SubagentStartRecord | SubagentStopRecord;

/** The sections still pending, oldest first, and the task of each running agent. */
export interface HookState {
  readonly pending: ReadonlyArray<PendingSection>;
  readonly running: Readonly<Record<string, string>>;
}

const Time = z.number().finite();
const Optional = z.string().optional();

/** The records, as read back: a line that is not one of them (a hand edit) is skipped, never a reason to stop. */
const HookRecordSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('pending'),
    line: z.number().int(),
    taskId: z.string(),
    agentType: Optional,
    toolUseId: Optional,
    sessionContext: z.string(),
    at: Time,
  }),
  z.object({
    type: z.literal('started'),
    line: z.number().int(),
    taskId: z.string(),
    agentId: Optional,
    agentType: Optional,
    at: Time,
  }),
  z.object({ type: z.literal('stopped'), taskId: z.string(), agentId: Optional, at: Time }),
]);

const parseRecord = (line: string): O.Option<HookRecord> => {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return O.none;
  }
  const parsed = HookRecordSchema.safeParse(value);
  return parsed.success ? O.some(parsed.data as HookRecord) : O.none;
};

/** The state the records of a hooks file leave. */
export const foldHookRecords = (text: string): HookState => {
  const pending = new Map<number, PendingSection>();
  const running: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const record = parseRecord(line);
    if (O.isNone(record)) continue;
    const value = record.value;
    if (value.type === 'pending') pending.set(value.line, value);
    else if (value.type === 'started') {
      pending.delete(value.line);
      if (value.agentId !== undefined) running[value.agentId] = value.taskId;
    } else if (value.agentId !== undefined) delete running[value.agentId];
  }
  return { pending: [...pending.values()].sort((a, b) => a.line - b.line), running };
};

/**
 * The pending section a subagent of `agentType` gets: the oldest of that type, else the oldest
 * whose type was not known when it was computed. Subagents of one type started at once take
 * the sections of their type in the order their `SubagentStart` hooks run.
 */
export const selectPendingFor = (state: HookState, agentType: string | undefined): O.Option<PendingSection> =>
  O.fromNullable(
    state.pending.find((entry) => agentType !== undefined && entry.agentType === agentType) ??
      state.pending.find((entry) => entry.agentType === undefined),
  );
