/**
 * What the hook decides for one agent event, from the state its hooks file leaves and the time:
 * the records to append, the effects to run (the session calls, the lines for the user) and
 * the output to print. Pure: the session's answers come back to the transition as inputs of
 * their own (transition.ts).
 */
import type { ActiveHookEvent, HookDecision, HookSettings } from './model.js';
import type { HookEvent } from './payload.js';
import { onCallEnded, onCallFailed, onReport, settleExpiredReports } from './results.js';
import { onDispatch, onStart } from './sections.js';
import { applyHookRecords, type HookState } from './state.js';
import { holdsResult, type Turn } from './turn.js';

/** True when the event can change nothing in a session without a hooks file: it then touches no file. */
export const needsNoFiles = (event: HookEvent): boolean => {
  switch (event.event) {
    case 'SubagentStart':
    case 'PostToolUseFailure':
      return true;
    case 'PostToolUse':
      return event.response.status === 'async_launched' || !holdsResult(event.response.text);
    // An answer without a result block is only told about, for a dispatch the file knows.
    case 'SubagentStop':
      return !holdsResult(event.lastAssistantMessage);
    case 'Handback':
      return !holdsResult(event.message);
    default:
      return false;
  }
};

/** The output of the event itself, after the reports that expired are recorded. */
const decide = (event: ActiveHookEvent, turn: Turn): Readonly<Record<string, unknown>> | undefined => {
  switch (event.event) {
    case 'PreToolUse':
      return onDispatch(event, turn);
    case 'SubagentStart':
      return onStart(event, turn);
    case 'PostToolUse':
      onCallEnded(event, turn);
      return undefined;
    case 'PostToolUseFailure':
      onCallFailed(event, turn);
      return undefined;
    case 'Handback':
      onReport(turn, event.agentId, event.agentType, event.message, 'handback');
      return undefined;
    case 'SubagentStop':
      onReport(turn, event.agentId, event.agentType, event.lastAssistantMessage ?? '', 'stop');
      return undefined;
  }
};

/**
 * The state the event's own decision reads: the expiry's records applied, and the results it asks
 * for taken as recorded, as the same event sent again reads them (a dispatch an expired report is
 * recorded under waits no more).
 */
const afterExpiry = ({ state, records, effects }: Turn): HookState =>
  applyHookRecords(state, [...records, ...effects.flatMap((effect) => (effect.type === 'ingest' ? effect.marks : []))]);

/** The decision for an agent's event on `state` at `now`. */
export const decideEvent = (
  state: HookState,
  event: ActiveHookEvent,
  now: number,
  settings: HookSettings,
): HookDecision => {
  const expiry: Turn = { state, now, settings, records: [], effects: [] };
  // A call's end that names an agent, however late, records that agent's report under its task.
  settleExpiredReports(expiry, event.event === 'PostToolUse' ? event.response.agentId : undefined);
  const turn: Turn = { ...expiry, state: afterExpiry(expiry) };
  const output = decide(event, turn);
  return {
    records: turn.records,
    effects: turn.effects,
    ...(output === undefined ? {} : { output }),
    ...(output === undefined || turn.outputNeedsRecords === undefined ? {} : { outputNeedsRecords: true }),
  };
};
