/**
 * What the hook events of one session have left for each other, kept as JSON Lines beside the
 * session log (`{id}.jsonl.hooks`). Hook commands are separate processes, so this file is their
 * only memory; the state is a fold over its records, and every decision below is a pure
 * function of that state, the event and the time.
 *
 * A dispatch is one call of a subagent tool, keyed by its `tool_use_id`. Its section reaches
 * the subagent by one channel, chosen once when the call is made:
 * - `input`: the hook rewrote the call's prompt (Claude Code);
 * - `start`: the section waits for the `SubagentStart` of a subagent of its type (Codex, and
 *   Claude Code versions that do not apply a rewritten prompt);
 * - `none`: the prompt carries a `[Session Context]` section already.
 * Its result is recorded once, from whichever event first brings it together with its dispatch:
 * the call's own `PostToolUse` (`join: 'tool'`, exact), or the `SubagentStop` of the agent it
 * is known to belong to.
 */
import * as O from 'fp-ts/lib/Option.js';
import { z } from 'zod';

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

/** Whether the host applied a rewritten prompt, as the end of the call `key` showed. */
export interface ObserveRecord {
  readonly type: 'observe';
  readonly key: string;
  readonly rewrite: 'honoured' | 'ignored';
  readonly at: number;
}

/** One line of the hooks file. */
export type HookRecord =
  DispatchRecord | ClaimRecord | LaunchRecord | EndRecord | ReportRecord | ResultRecord | ObserveRecord;

/** A dispatch and what happened to it since. */
export interface DispatchState {
  readonly record: DispatchRecord;
  /** The agent that took its section at `SubagentStart` (channel `start`). */
  readonly claimedBy?: string;
  /** True once a `SubagentStart` took it, with or without an agent id. */
  readonly claimed: boolean;
  /** The agent its own tool call named. */
  readonly agentId?: string;
  readonly ended: boolean;
  readonly final: boolean;
  readonly resulted: boolean;
  readonly observed: boolean;
}

/** Who an agent works for. */
export interface AgentLink {
  readonly key: string;
  /** True when the tool call named the agent; false when the agent only took the section at its start. */
  readonly exact: boolean;
}

/** The state the records of a hooks file leave. */
export interface HookState {
  /** Dispatches, oldest first. */
  readonly dispatches: ReadonlyArray<DispatchState>;
  readonly byKey: Readonly<Record<string, DispatchState>>;
  readonly agents: Readonly<Record<string, AgentLink>>;
  /** Reports not yet recorded, by agent: a handed-back report wins over a last message. */
  readonly reports: Readonly<Record<string, ReportRecord>>;
  /** Agents whose result was recorded. */
  readonly settledAgents: Readonly<Record<string, true>>;
  /** Dispatches whose result was recorded, known by key even after their records were compacted away. */
  readonly settledKeys: Readonly<Record<string, true>>;
  /** The latest evidence of whether the host applies a rewritten prompt. */
  readonly rewrite?: 'honoured' | 'ignored';
  /** Lines read. */
  readonly lines: number;
}

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
  }),
  z.object({ type: z.literal('claim'), key: Text, agentId: Optional, at: Time }),
  z.object({ type: z.literal('launch'), key: Text, agentId: Text, at: Time }),
  z.object({ type: z.literal('end'), key: Text, final: z.boolean(), at: Time }),
  z.object({ type: z.literal('report'), agentId: Text, text: Text, source: z.enum(['handback', 'stop']), at: Time }),
  z.object({ type: z.literal('result'), key: Optional, agentId: Optional, taskId: Text, at: Time }),
  z.object({ type: z.literal('observe'), key: Text, rewrite: z.enum(['honoured', 'ignored']), at: Time }),
]);

const parseRecord = (line: string): O.Option<HookRecord> => {
  if (line.trim() === '') return O.none;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return O.none;
  }
  const parsed = HookRecordSchema.safeParse(value);
  return parsed.success ? O.some(parsed.data as HookRecord) : O.none;
};

/** The records of a hooks file's text, in order; lines that are not records are skipped. */
export const parseHookRecords = (text: string): ReadonlyArray<HookRecord> =>
  text.split('\n').flatMap((line) => {
    const record = parseRecord(line);
    return O.isSome(record) ? [record.value] : [];
  });

interface MutableDispatch {
  record: DispatchRecord;
  claimedBy?: string;
  claimed: boolean;
  agentId?: string;
  ended: boolean;
  final: boolean;
  resulted: boolean;
  observed: boolean;
}

/** The state `records` leave, applied in order. */
export const foldHookRecords = (records: ReadonlyArray<HookRecord>): HookState => {
  const byKey = new Map<string, MutableDispatch>();
  const agents: Record<string, AgentLink> = {};
  const reports: Record<string, ReportRecord> = {};
  const settledAgents: Record<string, true> = {};
  const settledKeys: Record<string, true> = {};
  let rewrite: 'honoured' | 'ignored' | undefined;
  const settleAgent = (agentId: string): void => {
    settledAgents[agentId] = true;
    delete reports[agentId];
  };
  for (const record of records) {
    switch (record.type) {
      case 'dispatch':
        // A repeated call keeps its first record: its section was handed out as computed then.
        if (!byKey.has(record.key))
          byKey.set(record.key, {
            record,
            claimed: false,
            ended: false,
            final: false,
            // A result recorded for its key before (a repeated call): nothing more is to come.
            resulted: settledKeys[record.key] === true,
            observed: false,
          });
        break;
      case 'claim': {
        const dispatch = byKey.get(record.key);
        if (dispatch === undefined) break;
        dispatch.claimed = true;
        if (record.agentId !== undefined) {
          dispatch.claimedBy = record.agentId;
          if (agents[record.agentId] === undefined) agents[record.agentId] = { key: record.key, exact: false };
        }
        break;
      }
      case 'launch': {
        const dispatch = byKey.get(record.key);
        if (dispatch !== undefined) dispatch.agentId = record.agentId;
        agents[record.agentId] = { key: record.key, exact: true };
        break;
      }
      case 'end': {
        const dispatch = byKey.get(record.key);
        if (dispatch === undefined) break;
        dispatch.ended = true;
        dispatch.final ||= record.final;
        break;
      }
      case 'report': {
        if (settledAgents[record.agentId] === true) break;
        const earlier = reports[record.agentId];
        if (earlier === undefined || (earlier.source === 'stop' && record.source === 'handback'))
          reports[record.agentId] = record;
        break;
      }
      case 'result': {
        if (record.key !== undefined) {
          settledKeys[record.key] = true;
          const dispatch = byKey.get(record.key);
          if (dispatch !== undefined) dispatch.resulted = true;
        }
        if (record.agentId !== undefined) settleAgent(record.agentId);
        break;
      }
      case 'observe': {
        const dispatch = byKey.get(record.key);
        if (dispatch !== undefined) dispatch.observed = true;
        rewrite = record.rewrite;
        break;
      }
    }
  }
  const dispatches = [...byKey.values()].map((dispatch): DispatchState => ({ ...dispatch }));
  return {
    dispatches,
    byKey: Object.fromEntries(dispatches.map((dispatch) => [dispatch.record.key, dispatch])),
    agents,
    reports,
    settledAgents,
    settledKeys,
    ...(rewrite === undefined ? {} : { rewrite }),
    lines: records.length,
  };
};

/** True when no result can still come for the dispatch. */
export const isSettled = (dispatch: DispatchState): boolean => dispatch.resulted || dispatch.final;

/** True when the dispatch is younger than `timeoutMs` at `now`. */
const isFresh = (dispatch: DispatchState, now: number, timeoutMs: number): boolean =>
  now - dispatch.record.at <= timeoutMs;

/** The oldest of `open` of `agentType`, else the oldest whose type was not known. */
const oldestOfType = (open: ReadonlyArray<DispatchState>, agentType: string | undefined): O.Option<DispatchState> =>
  O.fromNullable(
    open.find((dispatch) => agentType !== undefined && dispatch.record.agentType === agentType) ??
      open.find((dispatch) => dispatch.record.agentType === undefined),
  );

/**
 * What a starting subagent may be paired with:
 * - `section`: a section waiting for its subagent (channel `start`), not taken, its call not over
 *   (a call that returned when its subagent was launched is not over);
 * - `guess`: a call whose section went in its prompt (channel `input`) and whose subagent is not
 *   known yet. Only a fallback, for settings without `PostToolUse`: a call's own end names its
 *   agent exactly.
 */
const WAITING: Readonly<Record<'section' | 'guess', (dispatch: DispatchState) => boolean>> = {
  section: (dispatch) =>
    dispatch.record.channel === 'start' && !dispatch.claimed && !dispatch.final && !dispatch.resulted,
  guess: (dispatch) =>
    dispatch.record.join === 'tool' &&
    dispatch.record.channel !== 'start' &&
    !dispatch.claimed &&
    dispatch.agentId === undefined &&
    !isSettled(dispatch),
};

/**
 * The dispatch a subagent of `agentType` starting at `now` is paired with: the oldest waiting
 * one of that type no older than `timeoutMs`, else the oldest such one whose type was not known.
 * A denied or interrupted call never starts a subagent and never ends: it stops waiting once it
 * is `timeoutMs` old.
 */
export const selectWaiting = (
  state: HookState,
  kind: keyof typeof WAITING,
  agentType: string | undefined,
  now: number,
  timeoutMs: number,
): O.Option<DispatchState> =>
  oldestOfType(
    state.dispatches.filter((dispatch) => WAITING[kind](dispatch) && isFresh(dispatch, now, timeoutMs)),
    agentType,
  );

/** The dispatch an agent works for, and whether that is known exactly. */
export const selectDispatchOfAgent = (
  state: HookState,
  agentId: string | undefined,
): O.Option<{ readonly dispatch: DispatchState; readonly exact: boolean }> => {
  if (agentId === undefined) return O.none;
  const link = state.agents[agentId];
  const dispatch = link === undefined ? undefined : state.byKey[link.key];
  return link === undefined || dispatch === undefined ? O.none : O.some({ dispatch, exact: link.exact });
};

/** True when the agent's result is in, or its call is over: nothing it sends from now on is recorded. */
export const isAgentSettled = (state: HookState, agentId: string | undefined): boolean => {
  if (agentId === undefined) return false;
  if (state.settledAgents[agentId] === true) return true;
  const link = state.agents[agentId];
  const dispatch = link === undefined ? undefined : state.byKey[link.key];
  return dispatch !== undefined && isSettled(dispatch);
};

/**
 * True while a dispatch that learns its result from its own tool call's end may still do so:
 * an agent nobody knows yet may be one of its subagents, whose call will name it.
 */
export const isAwaitingToolResult = (state: HookState, now: number, timeoutMs: number): boolean =>
  state.dispatches.some(
    (dispatch) =>
      dispatch.record.join === 'tool' &&
      !isSettled(dispatch) &&
      dispatch.agentId === undefined &&
      isFresh(dispatch, now, timeoutMs),
  );

/** Reports kept longer than `timeoutMs` whose agent's call is not over: no call named their agent in time. */
export const selectExpiredReports = (state: HookState, now: number, timeoutMs: number): ReadonlyArray<ReportRecord> =>
  Object.values(state.reports).filter(
    (report) => now - report.at > timeoutMs && !isAgentSettled(state, report.agentId),
  );

/** Settled dispatches whose result markers a compacted file keeps, so repeated events stay no-ops. */
const KEPT_SETTLED = 256;

/**
 * The records that leave the same state for every decision still to be made: live dispatches
 * with what happened to them, waiting reports, the latest observation, and markers for the most
 * recent settled dispatches and agents (a repeated stop of one of them stays a no-op). A
 * dispatch still waiting for its result after `retentionMs` at `now` is dropped (its subagent
 * has long stopped), and settled dispatches past the most recent KEPT_SETTLED leave no marker.
 */
export const compactHookRecords = (state: HookState, now: number, retentionMs: number): ReadonlyArray<HookRecord> => {
  const live = state.dispatches.filter((dispatch) => !isSettled(dispatch) && now - dispatch.record.at <= retentionMs);
  const settled = state.dispatches.filter(isSettled).slice(-KEPT_SETTLED);
  const records: HookRecord[] = [];
  const claims: ClaimRecord[] = [];
  for (const dispatch of live) {
    const { record } = dispatch;
    records.push(record);
    if (dispatch.claimed)
      claims.push({
        type: 'claim',
        key: record.key,
        ...(dispatch.claimedBy === undefined ? {} : { agentId: dispatch.claimedBy }),
        at: record.at,
      });
    if (dispatch.agentId !== undefined)
      records.push({ type: 'launch', key: record.key, agentId: dispatch.agentId, at: record.at });
    if (dispatch.ended) records.push({ type: 'end', key: record.key, final: dispatch.final, at: record.at });
    if (dispatch.observed && state.rewrite !== undefined)
      records.push({ type: 'observe', key: record.key, rewrite: state.rewrite, at: record.at });
  }
  // An agent that took several sections works for the first it took: its claim goes first.
  const linked = (claim: ClaimRecord) => claim.agentId !== undefined && state.agents[claim.agentId]?.key === claim.key;
  records.push(...claims.filter(linked), ...claims.filter((claim) => !linked(claim)));
  const markedAgents = new Set<string>();
  for (const dispatch of settled) {
    // Both the agent its call named and the one that took it at its start: neither may record
    // anything now. An agent linked to another dispatch works for that one: it is not marked.
    const agents = [...new Set([dispatch.agentId, dispatch.claimedBy])].filter(
      (id): id is string =>
        id !== undefined && (state.settledAgents[id] === true || state.agents[id]?.key === dispatch.record.key),
    );
    for (const agentId of agents) markedAgents.add(agentId);
    const [first, ...others] = agents;
    records.push({
      type: 'result',
      key: dispatch.record.key,
      ...(first === undefined ? {} : { agentId: first }),
      taskId: dispatch.record.taskId,
      at: dispatch.record.at,
    });
    for (const agentId of others)
      records.push({ type: 'result', agentId, taskId: dispatch.record.taskId, at: dispatch.record.at });
  }
  const markedKeys = new Set(settled.map((dispatch) => dispatch.record.key));
  const keys = Object.keys(state.settledKeys)
    .filter((key) => !markedKeys.has(key) && state.byKey[key] === undefined)
    .slice(-KEPT_SETTLED);
  for (const key of keys) records.push({ type: 'result', key, taskId: key, at: now });
  const orphans = Object.keys(state.settledAgents)
    .filter((agentId) => !markedAgents.has(agentId))
    .slice(-KEPT_SETTLED);
  for (const agentId of orphans) records.push({ type: 'result', agentId, taskId: agentId, at: now });
  // A report of an agent whose call is over will never be recorded: it is not kept.
  records.push(...Object.values(state.reports).filter((report) => !isAgentSettled(state, report.agentId)));
  if (state.rewrite !== undefined && !live.some((dispatch) => dispatch.observed)) {
    const observed = [...state.dispatches].reverse().find((dispatch) => dispatch.observed);
    records.push({ type: 'observe', key: observed?.record.key ?? '', rewrite: state.rewrite, at: now });
  }
  return records;
};
