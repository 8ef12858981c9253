/**
 * The hook's decisions as one pure transition: `hookTransition(state, input, now, settings)`
 * returns the state after, the records to append to the hooks file (the state is their fold),
 * the effects to carry out in order (tell the user, ask the session) and the output to print.
 * An input is an agent's event, or the session's answer to an effect, which comes back as an
 * input (xstate's pattern: effects are data, the shell runs them and feeds their results back).
 * The shell (hook.ts) only reads, locks, runs the effects, appends and prints.
 *
 * - `PreToolUse` of a subagent tool records the subagent's prompt in the session log (a prompt
 *   event, task id from a `Task ID:` line or the tool call's id) and computes its section. In
 *   Claude Code the section goes in front of the prompt through `updatedInput`, with no
 *   permission decision, so the user is asked exactly what they would be asked without the hook.
 *   Elsewhere, or where the host was seen not to apply the rewrite, it waits for `SubagentStart`.
 * - `PostToolUse` of the same `tool_use_id` records the subagent's answer under that call's task
 *   (or, for a subagent sent to the background, learns its agent id, so that its `SubagentStop`
 *   is recorded under the right task); `PostToolUseFailure` ends the call.
 * - `SubagentStart` hands a waiting section to a subagent of its type (`additionalContext`).
 * - `SubagentStop` records the last message of a subagent whose task is known; a repeated stop
 *   of an agent already recorded is a no-op, while a later stop of one whose result the session
 *   did not record is recorded (a Codex subagent stops after every turn).
 * Every event first records the reports whose call never named their agent in time (expiry),
 * but for the agent a call's end names: that end records its report under the call's task.
 * Before it, where a process was killed between the record of a call and its prompt's line, what
 * the log holds on that line settles the record (`checked`).
 * See state.ts and select.ts for the rules, and docs/hooks.md for which host gets which path.
 */
import * as E from 'fp-ts/lib/Either.js';
import { type Failure, failure } from '../../base/failure.js';
import { nameId } from '../session/id.js';
import { STORE_ACCESS_CODES } from '../session/model.js';
import { decideEvent } from './decide.js';
import { rewriteOutput } from './sections.js';
import {
  type CompileEffect,
  DEFAULT_HOOK_SETTINGS,
  type HookDecision,
  type HookInput,
  type HookSettings,
  type HookStep,
  type IngestEffect,
  type LogEvents,
  type SayEffect,
} from './model.js';
import type { DispatchRecord, HookRecord, MissRecord, WithdrawRecord, WrittenRecord } from './records.js';
import { selectUnwritten } from './select.js';
import { applyHookRecords, type DispatchState, type HookState } from './state.js';

/** A failure of the session, as the user reads it: what it was about, then why. */
const sessionSaid = (what: string, error: Failure, notice = true): SayEffect => ({
  type: 'say',
  failure: failure(error.code, `${what}: ${error.message}`),
  notice,
});

/**
 * The dispatch record of a prompt recorded on `line` with the section `sessionContext`; with the
 * key of its event (`eventKey`) where it is appended before the session writes that line.
 */
export const dispatchRecordOf = (
  effect: CompileEffect,
  {
    line,
    sessionContext,
    key: eventKey,
  }: { readonly line: number; readonly sessionContext: string; readonly key?: string },
): DispatchRecord => {
  const { key, ...dispatch } = effect.dispatch;
  return {
    type: 'dispatch',
    key: key ?? `line:${line}`,
    taskId: dispatch.taskId,
    line,
    ...(dispatch.agentType === undefined ? {} : { agentType: dispatch.agentType }),
    sessionContext,
    channel: dispatch.channel,
    join: dispatch.join,
    at: dispatch.at,
    ...(eventKey === undefined ? {} : { eventKey }),
  };
};

/** The record that `record`, appended before its prompt's line, stands: the session wrote that line. */
export const writtenRecord = ({ key, line }: DispatchRecord, now: number): WrittenRecord => ({
  type: 'written',
  key,
  line,
  at: now,
});

/** The record that withdraws `record`, whose prompt the session did not record after all. */
export const withdrawnRecord = ({ key, line }: DispatchRecord, now: number): WithdrawRecord => ({
  type: 'withdrawn',
  key,
  line,
  at: now,
});

/**
 * The dispatch record of a prompt the session recorded and the section it computed; the record
 * the shell appended before the prompt's line (`noted`) stays where it is that line's, and is
 * withdrawn where it is not (the session recorded nothing, or answered another line).
 */
const onCompiled = ({ effect, answer, noted }: Extract<HookInput, { type: 'compiled' }>, now: number): HookDecision => {
  const withdrawn: ReadonlyArray<WithdrawRecord> =
    noted === undefined ||
    (E.isRight(answer) && answer.right.line === noted.line && answer.right.sessionContext === noted.sessionContext)
      ? []
      : [withdrawnRecord(noted, now)];
  if (E.isLeft(answer)) {
    const { step, failure: error } = answer.left;
    const what =
      step === 'call'
        ? `the prompt of task ${nameId(effect.request.taskId)}`
        : `session ${nameId(effect.call.sessionId)}`;
    return { records: withdrawn, effects: [sessionSaid(what, error)] };
  }
  const record = dispatchRecordOf(effect, answer.right);
  const output = rewriteOutput(effect.call, record);
  const records = noted !== undefined && withdrawn.length === 0 ? [writtenRecord(noted, now)] : [...withdrawn, record];
  return { records, effects: [], ...(output === undefined ? {} : { output }) };
};

/**
 * What becomes of a dispatch whose prompt's line the log does not hold (the process that recorded
 * it was killed before the session wrote the line): its call stays known, its subagent paired with
 * it and its result recorded under its task as before, but without a section, which no subagent
 * may be handed since no line of the log holds it. One known by its line alone (`line:N`) is
 * withdrawn: the prompt the log holds on that line now, or will, is known by the same key.
 */
const unloggedRecords = (record: DispatchRecord, now: number): ReadonlyArray<HookRecord> => {
  const { eventKey: _planned, ...known } = record;
  const withdrawn = withdrawnRecord(record, now);
  return record.key === `line:${record.line}` ? [withdrawn] : [withdrawn, { ...known, sessionContext: '' }];
};

/**
 * Settles the dispatches whose record was appended before their prompt's line by a process that went
 * no further (`selectUnwritten`), by what the log holds on that line (`events`): the prompt's event,
 * and the record stands (`written`); nothing, or another writer's event, and it is kept without its
 * section (`unloggedRecords`). A log that could not be read leaves them for the next event.
 */
const onChecked = (
  state: HookState,
  { sessionId, answer }: Extract<HookInput, { type: 'checked' }>,
  now: number,
): HookDecision => {
  if (E.isLeft(answer))
    return { records: [], effects: [sessionSaid(`session ${nameId(sessionId)}`, answer.left.failure)] };
  const events: LogEvents = answer.right;
  const holds = ({ record }: DispatchState): boolean =>
    events.some(([key, line]) => key === record.eventKey && line === record.line);
  const records = selectUnwritten(state).flatMap((dispatch) =>
    holds(dispatch) ? [writtenRecord(dispatch.record, now)] : unloggedRecords(dispatch.record, now),
  );
  return { records, effects: [] };
};

/**
 * Failures of the session that say nothing about the result itself (it could not be reached,
 * locked, written or read, or failed): the same result may be recorded when sent again.
 */
const PASSING_CODES: ReadonlySet<string> = new Set<string>([
  'io',
  'conflict',
  'internal',
  'unknown_session',
  ...STORE_ACCESS_CODES,
]);

/**
 * The mark that the result of `effect` is not recorded: for good (`retry` false), or to be sent
 * again as it was, with the time the session was about to write its line with (`sentAt`, where
 * it planned one; else the time it was sent with), so that a line that reached the log all the
 * same is known as it. The shell writes it with `retry` and that time before the session writes
 * the line too (hook.ts).
 */
export const missedRecord = (
  effect: IngestEffect,
  retry: boolean,
  now: number,
  sentAt: number | undefined,
): MissRecord => {
  const [mark] = effect.marks;
  return {
    type: 'missed',
    ...(mark?.key === undefined ? {} : { key: mark.key }),
    ...(mark?.agentId === undefined ? {} : { agentId: mark.agentId }),
    digest: effect.digest,
    retry,
    sentAt: sentAt ?? effect.request.at,
    // Without a line planned, the time it is sent with: an older release's stays its own.
    ...(sentAt !== undefined || effect.byContent !== true ? { stamped: true } : {}),
    at: now,
  };
};

/**
 * What a recorded result leaves, and what the user is told: once the session recorded it, the
 * marks and the extraction's warnings (in the transcript only a result that lands on another
 * task than it names); else the failure, and a mark that it was missed: refused for good when
 * the session refused its text, else to be sent again, as it was, by the agent's next stop.
 */
const onIngested = (
  { effect, answer, sentAt }: Extract<HookInput, { type: 'ingested' }>,
  now: number,
): HookDecision => {
  const { what, request, marks } = effect;
  const about = `the result of ${what} for task ${nameId(request.taskId)}`;
  if (E.isLeft(answer)) {
    const { step, failure: error } = answer.left;
    const missed = missedRecord(effect, step === 'open' || PASSING_CODES.has(error.code), now, sentAt);
    return {
      // The reports the call's end took over (a stop its host did not name the agent of) are its
      // own now: settled, so none of them is recorded later under its agent's task.
      records: [missed, ...marks.slice(1)],
      effects: [sessionSaid(step === 'open' ? about : `${about} was not recorded`, error)],
    };
  }
  return {
    records: marks,
    effects: answer.right.warnings.map((warning): SayEffect => ({
      type: 'say',
      failure: failure('result_warning', `${about}: ${warning}`),
      notice: /differs from/u.test(warning),
    })),
  };
};

/**
 * The hook's transition. Total and deterministic: the same state, input, time and settings
 * give the same step, and `state` is never changed. The step's state is `state` with its
 * records applied, which is what the next process folds from the file.
 */
export const hookTransition = (
  state: HookState,
  input: HookInput,
  now: number,
  settings: HookSettings = DEFAULT_HOOK_SETTINGS,
): HookStep => {
  const decision =
    input.type === 'event'
      ? decideEvent(state, input.event, now, settings)
      : input.type === 'checked'
        ? onChecked(state, input, now)
        : input.type === 'compiled'
          ? onCompiled(input, now)
          : onIngested(input, now);
  return {
    state: applyHookRecords(state, decision.records),
    records: decision.records,
    effects: decision.effects,
    ...(decision.output === undefined ? {} : { output: decision.output }),
    ...(decision.outputNeedsRecords === undefined ? {} : { outputNeedsRecords: decision.outputNeedsRecords }),
  };
};
