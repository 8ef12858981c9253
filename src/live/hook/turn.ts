/**
 * One event's decision as it is made: the state it reads, the time, and the records and
 * effects it adds in order. Shared by the decisions about sections (sections.ts) and about
 * results (results.ts).
 */
import * as E from 'fp-ts/lib/Either.js';
import * as O from 'fp-ts/lib/Option.js';
import { type Failure, failure } from '../../base/failure.js';
import { sha256HexPrefix } from '../../base/hash.js';
import { isRecord } from '../../base/record.js';
import { collapseWhitespace } from '../../base/text.js';
import { BEGIN_MARKER, parseResultJson } from '../../core/extract/parse.js';
import { LIMIT_CODES, MAX_OUTPUT_LENGTH } from '../session/limits.js';
import { nameId } from '../session/id.js';
import type { HookEffect, HookSettings } from './model.js';
import type { HookRecord, ResultRecord } from './records.js';
import { selectMissed } from './select.js';
import type { HookState } from './state.js';

/** The role of an agent type's results. */
export const selectRole = (agentType: string | undefined, pattern: RegExp) =>
  agentType !== undefined && new RegExp(pattern.source, pattern.flags.replace('g', '')).test(agentType)
    ? ('reviewer' as const)
    : ('implementer' as const);

const BLOCK_LINE = new RegExp(`^[ \\t]*${BEGIN_MARKER}[ \\t]*$`, 'mu');

/** True when `text` holds a result block (a line with the begin marker alone). */
export const holdsResult = (text: string | undefined): text is string => text !== undefined && BLOCK_LINE.test(text);

/**
 * The `task_id` the result block of `text` names, whitespace collapsed as a task's is, if its JSON
 * names one: which task the subagent was told it works for, whatever section it took.
 */
export const selectResultTaskId = (text: string): string | undefined => {
  const parsed = parseResultJson(text);
  const taskId = E.isRight(parsed) && isRecord(parsed.right) ? parsed.right['task_id'] : undefined;
  return typeof taskId === 'string' ? collapseWhitespace(taskId) : undefined;
};

/** The digest of a result's text: the same text again is the same result. */
export const digestOf = (text: string): string => sha256HexPrefix(text, 16);

/** One event's decision as it is made: the state it reads, and what it adds, in order. */
export interface Turn {
  readonly state: HookState;
  readonly now: number;
  readonly settings: HookSettings;
  readonly records: HookRecord[];
  readonly effects: HookEffect[];
  /** Set where the output may be printed only once the records are in the hooks file (`HookDecision`). */
  outputNeedsRecords?: true;
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
  /** True where no later event brings it again (`IngestEffect`). */
  readonly final?: boolean;
}

/**
 * Asks the session to record a subagent's result; it is marked recorded (`marks`, and the extra
 * `alsoMarks`) once the session answers that it is (transition.ts). A text the session refused
 * before for the same agent or dispatch is not sent again (the user was told then); a text it
 * failed to record in passing is sent again with the time its line was to be written with (one
 * an older release noted, with its own time, known by its content too). A result whose own
 * `task_id` differs from the task it lands on is told to the user (transition.ts): the facts are
 * bound to the task of the call it answered.
 */
export const recordResult = (turn: Turn, result: ResultToRecord, alsoMarks: ReadonlyArray<ResultRecord> = []): void => {
  const { taskId, text, what, key, agentId } = result;
  const digest = digestOf(text);
  const missed = O.toUndefined(selectMissed(turn.state, key, agentId, digest));
  if (missed?.retry === false) return;
  const mark: ResultRecord = {
    type: 'result',
    ...(key === undefined ? {} : { key }),
    ...(agentId === undefined ? {} : { agentId }),
    taskId,
    at: turn.now,
  };
  if (text.length <= MAX_OUTPUT_LENGTH) {
    turn.effects.push({
      type: 'ingest',
      request: {
        role: selectRole(result.agentType, turn.settings.reviewerPattern),
        taskId,
        output: text,
        at: missed?.sentAt ?? result.at,
      },
      what,
      marks: [mark, ...alsoMarks],
      digest,
      ...(result.final === true ? { final: true } : {}),
      ...(missed !== undefined && missed.stamped !== true ? { byContent: true } : {}),
    });
    return;
  }
  say(
    turn,
    failure(
      LIMIT_CODES.output,
      `the result of ${what} for task ${nameId(taskId)} has ${text.length} characters; at most ${MAX_OUTPUT_LENGTH} are recorded, so it was not`,
    ),
  );
  turn.records.push({
    type: 'missed',
    ...(key === undefined ? {} : { key }),
    ...(agentId === undefined ? {} : { agentId }),
    digest,
    retry: false,
    sentAt: result.at,
    at: turn.now,
  });
};

/** An agent as messages name it: its type, and its id when known. */
export const agentName = (agentId: string | undefined, agentType: string | undefined): string =>
  `${agentType === undefined ? 'a subagent' : nameId(agentType)}${agentId === undefined ? '' : ` (${nameId(agentId)})`}`;
