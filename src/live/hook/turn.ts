/**
 * One event's decision as it is made: the state it reads, the time, and the records and
 * effects it adds in order. Shared by the decisions about sections (sections.ts) and about
 * results (results.ts).
 */
import { type Failure, failure } from '../../base/failure.js';
import { BEGIN_MARKER } from '../../core/extract/parse.js';
import { LIMIT_CODES, MAX_OUTPUT_LENGTH } from '../session/limits.js';
import { nameId } from '../session/id.js';
import type { HookEffect, HookSettings } from './model.js';
import type { HookRecord } from './records.js';
import type { HookState } from './state.js';

/** The role of an agent type's results. */
export const selectRole = (agentType: string | undefined, pattern: RegExp) =>
  agentType !== undefined && new RegExp(pattern.source, pattern.flags.replace('g', '')).test(agentType)
    ? ('reviewer' as const)
    : ('implementer' as const);

const BLOCK_LINE = new RegExp(`^[ \\t]*${BEGIN_MARKER}[ \\t]*$`, 'mu');

/** True when `text` holds a result block (a line with the begin marker alone). */
export const holdsResult = (text: string | undefined): text is string => text !== undefined && BLOCK_LINE.test(text);

/** One event's decision as it is made: the state it reads, and what it adds, in order. */
export interface Turn {
  readonly state: HookState;
  readonly now: number;
  readonly settings: HookSettings;
  readonly records: HookRecord[];
  readonly effects: HookEffect[];
}

/** Tells the user `said` (in the transcript too, unless `notice` is false). */
export const say = (turn: Turn, said: Failure, notice = true): void => {
  turn.effects.push({ type: 'say', failure: said, notice });
};

/** What recording a result needs. */
export interface ResultToRecord {
  readonly taskId: string;
  readonly text: string;
  readonly agentType: string | undefined;
  readonly at: number;
  readonly key?: string;
  readonly agentId?: string;
  /** Who the result is from, for messages. */
  readonly what: string;
}

/**
 * Asks the session to record a subagent's result, and marks it recorded. A result whose own
 * `task_id` differs from the task it lands on is told to the user (transition.ts): the facts
 * are bound to the task of the call it answered.
 */
export const recordResult = (turn: Turn, result: ResultToRecord): void => {
  const { taskId, text, what } = result;
  if (text.length > MAX_OUTPUT_LENGTH)
    say(
      turn,
      failure(
        LIMIT_CODES.output,
        `the result of ${what} for task ${nameId(taskId)} has ${text.length} characters; at most ${MAX_OUTPUT_LENGTH} are recorded, so it was not`,
      ),
    );
  else
    turn.effects.push({
      type: 'ingest',
      request: {
        role: selectRole(result.agentType, turn.settings.reviewerPattern),
        taskId,
        output: text,
        at: result.at,
      },
      what,
    });
  // Marked whatever the session answers: a result the contract rejected is not retried by a repeated stop.
  turn.records.push({
    type: 'result',
    ...(result.key === undefined ? {} : { key: result.key }),
    ...(result.agentId === undefined ? {} : { agentId: result.agentId }),
    taskId,
    at: turn.now,
  });
};

/** An agent as messages name it: its type, and its id when known. */
export const agentName = (agentId: string | undefined, agentType: string | undefined): string =>
  `${agentType === undefined ? 'a subagent' : nameId(agentType)}${agentId === undefined ? '' : ` (${nameId(agentId)})`}`;
