/**
 * The lines of a hooks file (`{id}.jsonl.hooks`, beside the session log): what the hook events
 * of one session leave for each other. Hook commands are separate processes, so these records
 * are their only memory; state.ts folds them.
 *
 * A dispatch is one call of a subagent tool, keyed by its `tool_use_id`. Its section reaches
 * the subagent by one channel, chosen once when the call is made:
 * - `input`: the hook rewrote the call's prompt (Claude Code);
 * - `start`: the section waits for the `SubagentStart` of a subagent of its type (Codex, and
 *   Claude Code versions that do not apply a rewritten prompt);
 * - `none`: the prompt carries a `[Session Context]` section already.
 * Its result is recorded once, from whichever event first brings it together with its dispatch:
 * the call's own `PostToolUse` (`join: 'tool'`, exact), or the `SubagentStop` of the agent it
 * is known to belong to. It is marked recorded (`result`) only once the session recorded it; a
 * result the session did not record is marked `missed`, and a later one may still be. A dispatch
 * is recorded before its prompt's line is written, so that a file that cannot take it refuses the
 * prompt; should the session then not record the prompt, the dispatch is `withdrawn`, else it is
 * `written`. A dispatch neither, whose process was killed between the two, is checked against the
 * log by the next process (transition.ts).
 */
import * as O from 'fp-ts/lib/Option.js';
import { z } from 'zod';
import { LOG_LINE_BREAK } from '../session/logFile.js';

/** How a section reaches its subagent. */
export type Channel = 'input' | 'start' | 'none';
/** How a dispatch learns its result: from its own tool call's end (`tool`), or from its agent's stop (`agent`). */
export type Join = 'tool' | 'agent';

/** A subagent tool call, with the section computed for its prompt. */
export interface DispatchRecord {
  readonly type: 'dispatch';
  /** The tool call's id, or `line:N` (the prompt's line in the session log) without one. */
  readonly key: string;
  readonly taskId: string;
  /** The line of the prompt event in the session log. */
  readonly line: number;
  readonly agentType?: string;
  readonly sessionContext: string;
  readonly channel: Channel;
  readonly join: Join;
  readonly at: number;
  /**
   * The key the session gave the prompt's event, on a record appended before its line was
   * written: it stands once a `written` record follows, or once the log is seen to hold that
   * event on `line`.
   */
  readonly eventKey?: string;
}

/** The session wrote the prompt's line of the dispatch `key` on `line`, after its record was appended. */
export interface WrittenRecord {
  readonly type: 'written';
  readonly key: string;
  readonly line: number;
  readonly at: number;
}

/**
 * The session did not record the prompt of the dispatch `key` on `line` after all (its record was
 * written first): the hook knows nothing of that call, as of one made before the hooks were added.
 */
export interface WithdrawRecord {
  readonly type: 'withdrawn';
  readonly key: string;
  readonly line: number;
  readonly at: number;
}

/** A subagent started and took the section of `key` (channel `start`). */
export interface ClaimRecord {
  readonly type: 'claim';
  readonly key: string;
  readonly agentId?: string;
  readonly at: number;
}

/** The tool call `key` named its subagent: an exact pairing. */
export interface LaunchRecord {
  readonly type: 'launch';
  readonly key: string;
  readonly agentId: string;
  readonly at: number;
}

/** The tool call `key` is over; `final` when no result can come later (it finished or failed). */
export interface EndRecord {
  readonly type: 'end';
  readonly key: string;
  readonly final: boolean;
  readonly at: number;
}

/** A subagent's report, kept until its dispatch is known. */
export interface ReportRecord {
  readonly type: 'report';
  readonly agentId: string;
  readonly text: string;
  /** `handback`: the report it handed back; `stop`: its last message. */
  readonly source: 'handback' | 'stop';
  readonly at: number;
}

/** A result was recorded: for the dispatch `key`, for the agent `agentId`, or both. */
export interface ResultRecord {
  readonly type: 'result';
  readonly key?: string;
  readonly agentId?: string;
  readonly taskId: string;
  readonly at: number;
}

/**
 * The session did not record a result for the dispatch `key`, the agent `agentId`, or both: it
 * refused its text (`retry` false: the same text would be refused again, and was told), or failed
 * in passing (`retry` true: the same text is sent again at the agent's next stop, with the time
 * its line was to be written with, `sentAt`, so a line that landed all the same is known as it). A later
 * result of another text is recorded as any other.
 */
export interface MissRecord {
  readonly type: 'missed';
  readonly key?: string;
  readonly agentId?: string;
  /** The digest of the result's text (`digestOf`). */
  readonly digest: string;
  readonly retry: boolean;
  readonly sentAt: number;
  /**
   * True where `sentAt` is the time the session was about to write the line with. An older
   * release noted the hook's own time, which the session may have moved past the log's last
   * event: a result it noted is known, sent again, by that time or by its content, as its task's
   * last result, as that release knew it.
   */
  readonly stamped?: true;
  readonly at: number;
}

/** Whether the host applied a rewritten prompt, as the end of the call `key` showed. */
export interface ObserveRecord {
  readonly type: 'observe';
  readonly key: string;
  readonly rewrite: 'honoured' | 'ignored';
  readonly at: number;
}

/**
 * The user was told that an answer for the dispatch `key` had no result block: told once per
 * dispatch, while a later answer with one is still recorded.
 */
export interface UnmarkedRecord {
  readonly type: 'unmarked';
  readonly key: string;
  readonly at: number;
}

/** One line of the hooks file. */
export type HookRecord =
  | DispatchRecord
  | WrittenRecord
  | WithdrawRecord
  | ClaimRecord
  | LaunchRecord
  | EndRecord
  | ReportRecord
  | ResultRecord
  | MissRecord
  | ObserveRecord
  | UnmarkedRecord;

const Time = z.number().finite();
const Text = z.string();
const Optional = z.string().optional();

/** The records, as read back: a line that is not one of them (a hand edit) is skipped, never a reason to stop. */
const HookRecordSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('dispatch'),
    key: Text,
    taskId: Text,
    line: z.number().int(),
    agentType: Optional,
    sessionContext: Text,
    channel: z.enum(['input', 'start', 'none']),
    join: z.enum(['tool', 'agent']),
    at: Time,
    eventKey: Optional,
  }),
  z.object({ type: z.literal('written'), key: Text, line: z.number().int(), at: Time }),
  z.object({ type: z.literal('withdrawn'), key: Text, line: z.number().int(), at: Time }),
  z.object({ type: z.literal('claim'), key: Text, agentId: Optional, at: Time }),
  z.object({ type: z.literal('launch'), key: Text, agentId: Text, at: Time }),
  z.object({ type: z.literal('end'), key: Text, final: z.boolean(), at: Time }),
  z.object({ type: z.literal('report'), agentId: Text, text: Text, source: z.enum(['handback', 'stop']), at: Time }),
  z.object({ type: z.literal('result'), key: Optional, agentId: Optional, taskId: Text, at: Time }),
  z.object({
    type: z.literal('missed'),
    key: Optional,
    agentId: Optional,
    digest: Text,
    retry: z.boolean(),
    sentAt: Time,
    stamped: z.literal(true).optional(),
    at: Time,
  }),
  z.object({ type: z.literal('observe'), key: Text, rewrite: z.enum(['honoured', 'ignored']), at: Time }),
  z.object({ type: z.literal('unmarked'), key: Text, at: Time }),
]);

/** The JSON value of a line, or none when it is not JSON. */
const parseJsonLine = (line: string): O.Option<unknown> => {
  try {
    return O.some(JSON.parse(line) as unknown);
  } catch {
    // Not JSON: a torn or hand-edited line, skipped like any other line that is not a record.
    return O.none;
  }
};

const parseRecord = (line: string): O.Option<HookRecord> => {
  if (line.trim() === '') return O.none;
  const value = parseJsonLine(line);
  if (O.isNone(value)) return O.none;
  const parsed = HookRecordSchema.safeParse(value.value);
  return parsed.success ? O.some(parsed.data as HookRecord) : O.none;
};

/** The records of a hooks file's lines, in order; lines that are not records are skipped. */
export const hookRecordsOf = (lines: ReadonlyArray<string>): ReadonlyArray<HookRecord> =>
  lines.flatMap((line) => {
    const record = parseRecord(line);
    return O.isSome(record) ? [record.value] : [];
  });

/**
 * The records of a hooks file's text, in order (`hookRecordsOf`). Its lines break as a log's do,
 * so a line the reader took as complete is never joined to the next one.
 */
export const parseHookRecords = (text: string): ReadonlyArray<HookRecord> => hookRecordsOf(text.split(LOG_LINE_BREAK));

/** The text of `records` as the hooks file holds them: one JSON object a line. */
export const formatHookRecords = (records: ReadonlyArray<HookRecord>): string =>
  records.map((record) => `${JSON.stringify(record)}\n`).join('');
