/**
 * What the records of a hooks file leave: a fold over them. The hook's transition decides on
 * this state and returns the records it adds, so the state a later process reads back from the
 * file is exactly the one the transition returned.
 */
import type { DispatchRecord, HookRecord, MissRecord, ReportRecord } from './records.js';

/** A dispatch and what happened to it since. */
export interface DispatchState {
  readonly record: DispatchRecord;
  /** False while the log is not known to hold its prompt's line: its record was appended before that line (`eventKey`). */
  readonly written: boolean;
  /** The agent that took its section at `SubagentStart` (channel `start`). */
  readonly claimedBy?: string;
  /** True once a `SubagentStart` took it, with or without an agent id. */
  readonly claimed: boolean;
  /** The agent its own tool call named. */
  readonly agentId?: string;
  readonly ended: boolean;
  /** When its tool call first returned (its PostToolUse or PostToolUseFailure). */
  readonly endedAt?: number;
  readonly final: boolean;
  readonly resulted: boolean;
  readonly observed: boolean;
  /** True once the user was told an answer for it had no result block. */
  readonly unmarked: boolean;
}

/** Who an agent works for. */
export interface AgentLink {
  readonly key: string;
  /** True when the tool call named the agent; false when the agent only took the section at its start. */
  readonly exact: boolean;
}

/** A result the session did not record: its text's digest, and whether that text is to be sent again (`MissRecord`). */
export type Missed = Pick<MissRecord, 'digest' | 'retry' | 'sentAt' | 'stamped'>;

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
  /** The last result the session did not record, by agent and by dispatch key, until one is recorded. */
  readonly missedAgents: Readonly<Record<string, Missed>>;
  readonly missedKeys: Readonly<Record<string, Missed>>;
  /** The latest evidence of whether the host applies a rewritten prompt. */
  readonly rewrite?: 'honoured' | 'ignored';
  /** Lines read. */
  readonly lines: number;
}

/**
 * A record keyed by ids the host chose (tool call and agent ids), as a copy of `entries`:
 * without a prototype, so an id such as `constructor` or `__proto__` is a key like any other,
 * never a property every object inherits.
 */
const idRecord = <T>(entries: Readonly<Record<string, T>> = {}): Record<string, T> =>
  Object.assign(Object.create(null) as Record<string, T>, entries);

/** The state of an empty hooks file. */
export const emptyHookState: HookState = Object.freeze({
  dispatches: Object.freeze([]),
  byKey: Object.freeze(idRecord<DispatchState>()),
  agents: Object.freeze(idRecord<AgentLink>()),
  reports: Object.freeze(idRecord<ReportRecord>()),
  settledAgents: Object.freeze(idRecord<true>()),
  settledKeys: Object.freeze(idRecord<true>()),
  missedAgents: Object.freeze(idRecord<Missed>()),
  missedKeys: Object.freeze(idRecord<Missed>()),
  lines: 0,
});

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * The state `records` leave when applied after `state`, in order. A working copy of the state
 * is changed in place and frozen at the end: `state` itself is never touched.
 */
export const applyHookRecords = (state: HookState, records: ReadonlyArray<HookRecord>): HookState => {
  if (records.length === 0) return state;
  const byKey = new Map(state.dispatches.map((dispatch) => [dispatch.record.key, { ...dispatch }]));
  const agents = idRecord(state.agents);
  const reports = idRecord(state.reports);
  const settledAgents = idRecord(state.settledAgents);
  const settledKeys = idRecord(state.settledKeys);
  const missedAgents = idRecord(state.missedAgents);
  const missedKeys = idRecord(state.missedKeys);
  let rewrite = state.rewrite;
  const settleAgent = (agentId: string): void => {
    settledAgents[agentId] = true;
    delete reports[agentId];
    delete missedAgents[agentId];
  };
  const dispatchOf = (key: string): Mutable<DispatchState> | undefined => byKey.get(key);
  for (const record of records) {
    switch (record.type) {
      case 'dispatch':
        // A repeated call keeps its first record: its section was handed out as computed then.
        if (!byKey.has(record.key))
          byKey.set(record.key, {
            record,
            written: record.eventKey === undefined,
            claimed: false,
            ended: false,
            final: false,
            // A result recorded for its key before (a repeated call): nothing more is to come.
            resulted: settledKeys[record.key] === true,
            observed: false,
            unmarked: false,
          });
        break;
      case 'written': {
        const dispatch = dispatchOf(record.key);
        if (dispatch?.record.line === record.line) dispatch.written = true;
        break;
      }
      case 'withdrawn':
        // Only the record it withdraws: a call's later record of the same key stays.
        if (byKey.get(record.key)?.record.line === record.line) byKey.delete(record.key);
        break;
      case 'claim': {
        const dispatch = dispatchOf(record.key);
        if (dispatch === undefined) break;
        dispatch.claimed = true;
        if (record.agentId !== undefined) {
          dispatch.claimedBy = record.agentId;
          if (agents[record.agentId] === undefined) agents[record.agentId] = { key: record.key, exact: false };
        }
        break;
      }
      case 'launch': {
        const dispatch = dispatchOf(record.key);
        if (dispatch !== undefined) dispatch.agentId = record.agentId;
        agents[record.agentId] = { key: record.key, exact: true };
        break;
      }
      case 'end': {
        const dispatch = dispatchOf(record.key);
        if (dispatch === undefined) break;
        if (!dispatch.ended) dispatch.endedAt = record.at;
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
          delete missedKeys[record.key];
          const dispatch = dispatchOf(record.key);
          if (dispatch !== undefined) dispatch.resulted = true;
        }
        if (record.agentId !== undefined) settleAgent(record.agentId);
        break;
      }
      case 'missed': {
        const missed: Missed = Object.freeze({
          digest: record.digest,
          retry: record.retry,
          sentAt: record.sentAt,
          ...(record.stamped === true ? { stamped: true } : {}),
        });
        if (record.key !== undefined) missedKeys[record.key] = missed;
        if (record.agentId !== undefined) {
          missedAgents[record.agentId] = missed;
          // A report the session refused will never be recorded: it is not kept.
          if (!record.retry) delete reports[record.agentId];
        }
        break;
      }
      case 'unmarked': {
        const dispatch = dispatchOf(record.key);
        if (dispatch !== undefined) dispatch.unmarked = true;
        break;
      }
      case 'observe': {
        const dispatch = dispatchOf(record.key);
        if (dispatch !== undefined) dispatch.observed = true;
        rewrite = record.rewrite;
        break;
      }
    }
  }
  const dispatches = Object.freeze([...byKey.values()].map((dispatch): DispatchState => Object.freeze(dispatch)));
  return Object.freeze({
    dispatches,
    byKey: Object.freeze(idRecord(Object.fromEntries(dispatches.map((dispatch) => [dispatch.record.key, dispatch])))),
    agents: Object.freeze(agents),
    reports: Object.freeze(reports),
    settledAgents: Object.freeze(settledAgents),
    settledKeys: Object.freeze(settledKeys),
    missedAgents: Object.freeze(missedAgents),
    missedKeys: Object.freeze(missedKeys),
    ...(rewrite === undefined ? {} : { rewrite }),
    lines: state.lines + records.length,
  });
};

/** The state `records` leave, applied in order to an empty file's. */
export const foldHookRecords = (records: ReadonlyArray<HookRecord>): HookState =>
  applyHookRecords(emptyHookState, records);
