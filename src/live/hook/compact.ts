/**
 * Compaction of a hooks file: the records that leave the same state for every decision still
 * to be made, and when a file has grown far enough past them to be rewritten.
 */
import * as O from 'fp-ts/lib/Option.js';
import type { ClaimRecord, DispatchRecord, HookRecord } from './records.js';
import { isAgentSettled, isSettled, RETENTION_MS, selectNamedAt } from './select.js';
import type { DispatchState, HookState } from './state.js';

/** The hooks file is compacted once it holds this many lines and more than twice what compaction keeps. */
export const COMPACT_AT_LINES = 512;

/** Settled dispatches whose result markers a compacted file keeps, so repeated events stay no-ops. */
const KEPT_SETTLED = 256;

/** True when the dispatch `key` is known and no result can still come for it. */
const isSettledKey = (state: HookState, key: string): boolean => {
  const dispatch = state.byKey[key];
  return dispatch !== undefined && isSettled(dispatch);
};

/**
 * The record of a dispatch as a compacted file keeps it: one known to be written as a record
 * appended after its line (no `eventKey`), which needs no `written` record after it.
 */
const keptRecord = ({ record, written }: DispatchState): DispatchRecord => {
  if (!written || record.eventKey === undefined) return record;
  const { eventKey: _written, ...kept } = record;
  return kept;
};

/**
 * The records that leave the same state for every decision still to be made: live dispatches
 * with what happened to them, waiting reports, the results the session did not record, the
 * latest observation, and markers for the most
 * recent settled dispatches and agents (a repeated stop of one of them stays a no-op), with the
 * Claude Code call each such agent worked for (one resumed later starts after it). A
 * dispatch still waiting for its result after `retentionMs` at `now` is dropped (its subagent
 * has long stopped), and settled dispatches past the most recent KEPT_SETTLED leave no marker.
 */
export const compactHookRecords = (state: HookState, now: number, retentionMs: number): ReadonlyArray<HookRecord> => {
  const live = state.dispatches.filter((dispatch) => !isSettled(dispatch) && now - dispatch.record.at <= retentionMs);
  const settled = state.dispatches.filter(isSettled).slice(-KEPT_SETTLED);
  const records: HookRecord[] = [];
  // The subagent of a settled Claude Code call may be resumed by a call of its own, which its
  // start tells by the call it worked for (sections.ts): that call stays known, and the agent's
  // link to it, first, so a live call's claim links it to none other. Its section is left out:
  // nothing hands it out or checks it once the call is over.
  const linkedTo = new Map<string, string[]>();
  for (const [agentId, { key }] of Object.entries(state.agents))
    linkedTo.set(key, [...(linkedTo.get(key) ?? []), agentId]);
  // So does a Codex section a subagent took by a guess, whose result another's answer took: that
  // subagent's answer, still to come, is paired through it, and its spawn's end tells whose
  // section it started with (select.ts, results.ts). So does a spawn whose agent also took a live
  // call by a guess: that call's claim, kept below, would otherwise link the agent to it instead.
  const claimants = new Set(live.map((dispatch) => dispatch.claimedBy));
  for (const dispatch of settled) {
    const record = keptRecord(dispatch);
    const agents = linkedTo.get(record.key) ?? [];
    const dropped =
      record.join === 'tool'
        ? agents.length === 0
        : agents.every((agentId) => isAgentSettled(state, agentId) && !claimants.has(agentId));
    if (dropped) continue;
    records.push(record.join === 'tool' ? { ...record, sessionContext: '' } : record);
    for (const agentId of agents)
      records.push({
        type: state.agents[agentId]?.exact === true ? 'launch' : 'claim',
        key: record.key,
        agentId,
        at: record.at,
      });
    // When it named its agent, after which a call resuming that agent is made.
    if (dispatch.ended)
      records.push({ type: 'end', key: record.key, final: dispatch.final, at: selectNamedAt(dispatch) });
  }
  const claims: ClaimRecord[] = [];
  for (const dispatch of live) {
    const record = keptRecord(dispatch);
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
    if (dispatch.ended)
      records.push({ type: 'end', key: record.key, final: dispatch.final, at: selectNamedAt(dispatch) });
    if (dispatch.unmarked) records.push({ type: 'unmarked', key: record.key, at: record.at });
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
        id !== undefined &&
        (state.settledAgents[id] === true ||
          (state.agents[id]?.key === dispatch.record.key && isAgentSettled(state, id))),
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
  // What the session did not record of an agent or a dispatch that may still send a result, before
  // the reports (a refused one drops its agent's report, as it did when it was first read).
  const missedAgents = Object.entries(state.missedAgents)
    .filter(([agentId]) => !isAgentSettled(state, agentId))
    .slice(-KEPT_SETTLED);
  for (const [agentId, missed] of missedAgents) records.push({ type: 'missed', agentId, ...missed, at: now });
  const missedKeys = Object.entries(state.missedKeys)
    .filter(([key]) => state.settledKeys[key] !== true && !isSettledKey(state, key))
    .slice(-KEPT_SETTLED);
  for (const [key, missed] of missedKeys) records.push({ type: 'missed', key, ...missed, at: now });
  // A report of an agent whose call is over will never be recorded: it is not kept.
  records.push(...Object.values(state.reports).filter((report) => !isAgentSettled(state, report.agentId)));
  if (state.rewrite !== undefined && !live.some((dispatch) => dispatch.observed)) {
    const observed = [...state.dispatches].reverse().find((dispatch) => dispatch.observed);
    records.push({ type: 'observe', key: observed?.record.key ?? '', rewrite: state.rewrite, at: now });
  }
  return records;
};

/**
 * The records a hooks file whose records leave `state` is rewritten with at `now`, or none when
 * it is not yet worth it: below `COMPACT_AT_LINES`, or not more than twice what would be kept.
 */
export const selectCompaction = (state: HookState, now: number): O.Option<ReadonlyArray<HookRecord>> => {
  if (state.lines < COMPACT_AT_LINES) return O.none;
  const kept = compactHookRecords(state, now, RETENTION_MS);
  return state.lines > 2 * kept.length ? O.some(kept) : O.none;
};
