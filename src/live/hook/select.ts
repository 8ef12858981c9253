/** What the hook's decisions ask of its state: pure functions of the state, an agent or a type, and the time. */
import * as O from 'fp-ts/lib/Option.js';
import type { ReportRecord } from './records.js';
import type { DispatchState, HookState, Missed } from './state.js';

/** How long a dispatch still waiting for its result is kept at all (compact.ts). */
export const RETENTION_MS = 24 * 60 * 60_000;

/** True when no result can still come for the dispatch. */
export const isSettled = (dispatch: DispatchState): boolean => dispatch.resulted || dispatch.final;

/**
 * When the call of a dispatch told its agent's id: at its return (its end, or its launch in the
 * background), else when it was made. A call that resumes that agent names it, so it is made after.
 */
export const selectNamedAt = (dispatch: DispatchState): number => dispatch.endedAt ?? dispatch.record.at;

/**
 * The dispatches whose record was appended before their prompt's line and that nothing since says
 * the line was written or not: the process that appended it was killed (or lost its lock) between
 * the two. The log tells which (transition.ts).
 */
export const selectUnwritten = (state: HookState): ReadonlyArray<DispatchState> =>
  state.dispatches.filter((dispatch) => !dispatch.written);

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
 *   (a call that returned when its subagent was launched is not over) and its agent not named:
 *   a section whose spawn named its agent waits for that agent alone, whatever starts first;
 * - `guess`: a call whose section went in its prompt (channel `input`) and whose subagent is not
 *   known yet. Only a fallback, for settings without `PostToolUse`: a call's own end names its
 *   agent exactly.
 */
const WAITING: Readonly<Record<'section' | 'guess', (dispatch: DispatchState) => boolean>> = {
  section: (dispatch) =>
    dispatch.record.channel === 'start' &&
    !dispatch.claimed &&
    dispatch.agentId === undefined &&
    !dispatch.final &&
    !dispatch.resulted,
  guess: (dispatch) =>
    dispatch.record.join === 'tool' &&
    dispatch.record.channel !== 'start' &&
    !dispatch.claimed &&
    dispatch.agentId === undefined &&
    !isSettled(dispatch),
};

/**
 * The dispatch a subagent of `agentType` starting at `now` is paired with: the oldest waiting
 * one of that type no older than `timeoutMs`, else the oldest such one whose type was not known;
 * made after `after` when given. A denied or interrupted call never starts a subagent and never
 * ends: it stops waiting once it is `timeoutMs` old.
 */
export const selectWaiting = (
  state: HookState,
  kind: keyof typeof WAITING,
  agentType: string | undefined,
  now: number,
  timeoutMs: number,
  after = -Infinity,
): O.Option<DispatchState> =>
  oldestOfType(
    state.dispatches.filter(
      (dispatch) => WAITING[kind](dispatch) && dispatch.record.at > after && isFresh(dispatch, now, timeoutMs),
    ),
    agentType,
  );

/**
 * What a Claude Code subagent of `agentType` starting at `now` is paired with when nothing
 * waiting is younger than `timeoutMs` (`selectWaiting`): its call waited that long on the user's
 * permission (the hook runs before the user is asked). The newest such dispatch of its type,
 * else of no known type, since a call the user denied, which never starts, was asked about
 * before the one now started; none older than a compacted hooks file keeps (`RETENTION_MS`),
 * and made after `after` when given.
 */
export const selectLateWaiting = (
  state: HookState,
  kind: keyof typeof WAITING,
  agentType: string | undefined,
  now: number,
  timeoutMs: number,
  after = -Infinity,
): O.Option<DispatchState> =>
  oldestOfType(
    state.dispatches
      .filter(
        (dispatch) =>
          WAITING[kind](dispatch) &&
          dispatch.record.join === 'tool' &&
          dispatch.record.at > after &&
          !isFresh(dispatch, now, timeoutMs) &&
          isFresh(dispatch, now, RETENTION_MS),
      )
      .reverse(),
    agentType,
  );

/**
 * What a starting subagent is paired with: a dispatch waiting within `timeoutMs`
 * (`selectWaiting`), else a Claude Code call that waited longer on the user (`selectLateWaiting`),
 * either made after `after` when given.
 */
export const selectWaitingOrLate = (
  state: HookState,
  kind: keyof typeof WAITING,
  agentType: string | undefined,
  now: number,
  timeoutMs: number,
  after = -Infinity,
): O.Option<DispatchState> =>
  O.alt(() => selectLateWaiting(state, kind, agentType, now, timeoutMs, after))(
    selectWaiting(state, kind, agentType, now, timeoutMs, after),
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

/**
 * True when a subagent other than `agentId`, the one its spawn names, took the Codex section of
 * `dispatch` at its start: by its type, before the spawn named its own (no spawn resumes a Codex
 * subagent, so none other takes a section for a spawn of its own).
 */
export const isTakenByGuess = (dispatch: DispatchState, agentId: string): boolean =>
  dispatch.record.join === 'agent' && dispatch.claimed && dispatch.claimedBy !== agentId;

/**
 * True when the agent's result is in, or its call is over: nothing it sends from now on is
 * recorded. An agent a later call named (resumed by a call of its own) works for that call anew.
 */
export const isAgentSettled = (state: HookState, agentId: string | undefined): boolean => {
  if (agentId === undefined) return false;
  const link = state.agents[agentId];
  const dispatch = link === undefined ? undefined : state.byKey[link.key];
  if (link?.exact === true && dispatch !== undefined && !isSettled(dispatch)) return false;
  if (state.settledAgents[agentId] === true) return true;
  // A Codex section taken by a guess, whose result another subagent's answer took: this one's is to come.
  if (link?.exact === false && dispatch?.record.join === 'agent') return dispatch.final;
  return dispatch !== undefined && isSettled(dispatch);
};

/**
 * The dispatch a Codex subagent answered that took the section `guessed` by its type, before its
 * spawn named it: where its result names the task of another dispatch of its type still waiting
 * for a result, whose spawn named no other agent, that one (two such subagents may take each
 * other's sections, never each other's results); else `guessed`, unless another answer took it,
 * then the one whose section went to a subagent whose answer landed elsewhere.
 */
export const selectAnsweredDispatch = (
  state: HookState,
  guessed: DispatchState,
  agentId: string,
  resultTaskId: string | undefined,
): DispatchState => {
  const { agentType } = guessed.record;
  const isOpen = (dispatch: DispatchState): boolean =>
    dispatch.record.join === 'agent' &&
    dispatch.record.channel === 'start' &&
    dispatch.record.agentType === agentType &&
    !isSettled(dispatch) &&
    (dispatch.agentId === undefined || dispatch.agentId === agentId);
  if (resultTaskId === guessed.record.taskId) return guessed;
  const named = state.dispatches.find((dispatch) => dispatch.record.taskId === resultTaskId && isOpen(dispatch));
  if (named !== undefined) return named;
  if (!isSettled(guessed)) return guessed;
  const left = state.dispatches.find(
    (dispatch) =>
      dispatch.claimedBy !== undefined &&
      dispatch.claimedBy !== agentId &&
      state.settledAgents[dispatch.claimedBy] === true &&
      isOpen(dispatch),
  );
  return left ?? guessed;
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

/**
 * What became of an earlier try of the same text (`digest`) for the agent `agentId` or the
 * dispatch `key`, when the session did not record it: refused, or to be sent again.
 */
export const selectMissed = (
  state: HookState,
  key: string | undefined,
  agentId: string | undefined,
  digest: string,
): O.Option<Missed> =>
  O.fromNullable(
    [
      agentId === undefined ? undefined : state.missedAgents[agentId],
      key === undefined ? undefined : state.missedKeys[key],
    ].find((missed) => missed?.digest === digest),
  );
