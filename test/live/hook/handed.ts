/**
 * The cross-check of what the hook handed out against what `fact-tracker replay` shows of the
 * session log: every section a subagent received is, byte for byte, the section replay computes
 * at a prompt's line (its own prompt's, where docs/hooks.md promises it); every prompt line whose
 * section replay shows was received by one subagent, but those docs/hooks.md says why not of; and
 * no section was handed out whose prompt line the log does not hold.
 */
import { expect } from 'vitest';
import { replayHistory } from '../../../src/index.js';
import type { Call, Given, Send } from './host.js';

type Payload = Record<string, unknown>;

/** A section one of the hook's outputs handed out, and the call or agent it was handed to. */
export interface Handed {
  readonly event: 'PreToolUse' | 'SubagentStart';
  /** The task of the rewritten prompt (its `Task ID:` line): the prompt line it must be the section of. */
  readonly taskId?: string;
  readonly agentId?: string;
  readonly section: string;
}

const fieldOf = (payload: Payload | undefined, name: string): unknown => payload?.[name];

/** The task a prompt names on its `Task ID:` line. */
const taskOfPrompt = (prompt: string): string | undefined => /Task ID: (\S+)/u.exec(prompt)?.[1];

/**
 * `send`, keeping each section the hook's outputs hand out, whether or not the host applies it:
 * the section in front of a rewritten prompt, and `SubagentStart`'s `additionalContext`.
 */
export const handing = (send: Send): { readonly send: Send; readonly handed: Handed[] } => {
  const handed: Handed[] = [];
  return {
    handed,
    send: async (payload) => {
      const answer = await send(payload);
      const own = fieldOf(answer.output, 'hookSpecificOutput') as Payload | undefined;
      const event = payload['hook_event_name'];
      const updated = fieldOf(own, 'updatedInput') as Payload | undefined;
      if (event === 'PreToolUse' && updated !== undefined) {
        const prompt = String(fieldOf(payload['tool_input'] as Payload, 'prompt'));
        const rewritten = String(updated['prompt']);
        expect(rewritten.endsWith(`\n\n${prompt}`)).toBe(true);
        const taskId = taskOfPrompt(prompt);
        handed.push({
          event,
          ...(taskId === undefined ? {} : { taskId }),
          section: rewritten.slice(0, -`\n\n${prompt}`.length),
        });
      }
      const context = fieldOf(own, 'additionalContext');
      if (event === 'SubagentStart' && typeof context === 'string')
        handed.push({ event, agentId: String(payload['agent_id']), section: context });
      return answer;
    },
  };
};

/** What the check is told of a run. */
export interface Run {
  /** The session log's text, as `fact-tracker replay` reads it. */
  readonly log: string;
  /** What each call's subagent received (the host model's `given`). */
  readonly given: ReadonlyMap<string, Given>;
  readonly handed: ReadonlyArray<Handed>;
  /** The calls whose subagent must have received its own prompt's section (docs/hooks.md promises it). */
  readonly own: ReadonlyArray<Call>;
  /**
   * The tasks whose prompt's section no subagent may have received, each for a reason
   * docs/hooks.md gives (a call the user denied, the first section on a host that ignores the
   * rewrite, a spawn that never started within the wait).
   */
  readonly unreceived?: ReadonlyArray<string>;
  /**
   * The tasks whose prompt's section two subagents may have received: one that took it by its type
   * before the call named its own agent, and that agent (docs/hooks.md).
   */
  readonly twice?: ReadonlyArray<string>;
}

/** The log last replayed, and its report: a sequence's checks read the same log several times. */
let lastReplayed: { readonly log: string; readonly report: ReturnType<typeof replayHistory>['report'] } | undefined;

/** What `fact-tracker replay` reports of `log`, replayed once however many checks read it. */
export const replayReportOf = (log: string): ReturnType<typeof replayHistory>['report'] => {
  if (lastReplayed?.log !== log) lastReplayed = { log, report: replayHistory(log).report };
  return lastReplayed.report;
};

/** The three invariants between what was handed out and the replay of the log (see the module's comment). */
export const expectHandedAsReplayed = ({ log, given, handed, own, unreceived = [], twice = [] }: Run): void => {
  const { prompts, errors } = replayReportOf(log);
  expect(errors).toEqual([]);
  const lines = prompts.map(({ line, taskId, sessionContext }) => ({ line, taskId, sessionContext }));
  const shown = (section: string) => lines.filter((prompt) => prompt.sessionContext === section);
  // 3. Each section handed out is that of a prompt line of the log: a rewrite's, that of its own.
  for (const { event, taskId, section } of handed) {
    expect(section, `a section handed out at ${event}`).not.toBe('');
    const of = shown(section).filter((prompt) => event === 'SubagentStart' || prompt.taskId === taskId);
    expect(of, `the prompt line of the section handed out at ${event}:\n${section}`).not.toEqual([]);
  }
  // 1. Each section a subagent received is the one replay computes at a prompt's line, its own where
  // promised; a repeated start hands the section it holds again. Each line reached one subagent,
  // but those the docs say why two of.
  const receivedBy = new Map<number, string>();
  const ownCalls = new Set(own.map((call) => call.toolUseId));
  for (const [toolUseId, { call, sections }] of given) {
    const taskId = taskOfPrompt(call.prompt);
    for (const section of new Set(sections)) {
      const of = shown(section).filter(
        (prompt) =>
          (!receivedBy.has(prompt.line) || twice.includes(prompt.taskId)) &&
          (!ownCalls.has(toolUseId) || prompt.taskId === taskId),
      );
      const mine = of.find((prompt) => prompt.taskId === taskId) ?? of[0];
      expect(mine, `the prompt line of the section ${call.agentId} received:\n${section}`).toBeDefined();
      receivedBy.set(mine!.line, call.agentId);
    }
  }
  for (const call of own) {
    const ofTask = lines.filter((prompt) => prompt.taskId === taskOfPrompt(call.prompt));
    expect(ofTask, `the prompt lines of task ${taskOfPrompt(call.prompt)}`).toHaveLength(1);
    expect([...new Set(given.get(call.toolUseId)?.sections)], `the sections ${call.agentId} received`).toEqual(
      ofTask[0]!.sessionContext === '' ? [] : [ofTask[0]!.sessionContext],
    );
  }
  // 2. Each prompt line whose section replay shows reached a subagent, but those the docs say why not of.
  const missed = lines.filter(
    (prompt) => prompt.sessionContext !== '' && !receivedBy.has(prompt.line) && !unreceived.includes(prompt.taskId),
  );
  expect(
    missed.map(({ line, taskId }) => ({ line, taskId })),
    'prompt lines whose section no subagent received',
  ).toEqual([]);
};
