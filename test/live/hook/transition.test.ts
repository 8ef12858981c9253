/**
 * The hook's transition, without files or processes: what it decides for each event from the
 * state and the time, and what it makes of the session's answers. The shell only runs these
 * steps, so the pairing, the channel and the expiry are checked here directly.
 */
import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { formatSessionFacts, makeFact } from '../../../src/index.js';
import { SECTION_LAYOUTS } from '../../../src/core/retrieve/defaults.js';
import {
  type ActiveHookEvent,
  DEFAULT_HOOK_SETTINGS,
  type HookEffect,
  type HookInput,
  type HookStep,
} from '../../../src/live/hook/model.js';
import type { SubagentDispatch } from '../../../src/live/hook/payload.js';
import type { DispatchRecord, HookRecord } from '../../../src/live/hook/records.js';
import { applyHookRecords, emptyHookState, foldHookRecords, type HookState } from '../../../src/live/hook/state.js';
import { dispatchRecordOf, hookTransition } from '../../../src/live/hook/transition.js';
import { selectRole } from '../../../src/live/hook/turn.js';
import { AGENTS, KEYS, optional, record, TYPES, waitingSection, wellFormed } from './arbitraries.js';

const SESSION = 's1';
const SECTION = '[Session Context]\n- src/a.ts modified_by task:0';
const RESULT = (taskId: string) =>
  `Done.\nBEGIN_DISPATCH_RESULT\n{"task_id": "${taskId}", "status": "completed"}\nEND_DISPATCH_RESULT`;
const TIMEOUT = DEFAULT_HOOK_SETTINGS.timeoutMs;

const dispatchEvent = (fields: Partial<SubagentDispatch> = {}): SubagentDispatch => ({
  event: 'PreToolUse',
  sessionId: SESSION,
  toolName: 'Agent',
  toolUseId: 'toolu_a',
  prompt: 'Task ID: 7\nAdd src/b.ts.',
  promptField: 'prompt',
  toolInput: { description: 'b', prompt: 'Task ID: 7\nAdd src/b.ts.', subagent_type: 'worker' },
  agentType: 'worker',
  ...fields,
});

const step = (state: HookState, input: HookInput, now = 1_000): HookStep => hookTransition(state, input, now);
const onEvent = (state: HookState, event: ActiveHookEvent, now = 1_000): HookStep =>
  step(state, { type: 'event', event }, now);

/** The step's effects of a type. */
const effectsOf = <T extends HookEffect['type']>(
  effects: ReadonlyArray<HookEffect>,
  type: T,
): ReadonlyArray<Extract<HookEffect, { type: T }>> =>
  effects.filter((effect): effect is Extract<HookEffect, { type: T }> => effect.type === type);

/**
 * Runs an input as the shell does, with a session that records every prompt on the next line
 * with `section` and every result without a warning: the state after, and everything it did.
 */
const run = (
  state: HookState,
  event: ActiveHookEvent,
  now: number,
  section = SECTION,
): { state: HookState; records: HookRecord[]; effects: HookEffect[]; output?: unknown } => {
  const records: HookRecord[] = [];
  const effects: HookEffect[] = [];
  let current = state;
  let output: unknown;
  const take = (next: HookStep): void => {
    current = next.state;
    records.push(...next.records);
    output = next.output ?? output;
    for (const effect of next.effects) {
      effects.push(effect);
      if (effect.type === 'compile')
        take(
          hookTransition(
            current,
            { type: 'compiled', effect, answer: E.right({ line: current.lines + 1, sessionContext: section }) },
            now,
          ),
        );
      if (effect.type === 'ingest')
        take(hookTransition(current, { type: 'ingested', effect, answer: E.right({ warnings: [] }) }, now));
    }
  };
  take(hookTransition(state, { type: 'event', event }, now));
  return { state: current, records, effects, ...(output === undefined ? {} : { output }) };
};

describe('the hook transition, by example', () => {
  it('Claude Code: a subagent call asks for its section, and the answer rewrites the prompt', () => {
    const event = dispatchEvent();
    const asked = onEvent(emptyHookState, event);
    expect(asked.records).toEqual([]);
    expect(asked.output).toBeUndefined();
    const [compile] = effectsOf(asked.effects, 'compile');
    expect(compile?.request).toEqual({ taskId: '7', taskPrompt: event.prompt, at: 1_000 });
    const answered = step(asked.state, {
      type: 'compiled',
      effect: compile!,
      answer: E.right({ line: 4, sessionContext: SECTION }),
    });
    expect(answered.records).toEqual([
      {
        type: 'dispatch',
        key: 'toolu_a',
        taskId: '7',
        line: 4,
        agentType: 'worker',
        sessionContext: SECTION,
        channel: 'input',
        join: 'tool',
        at: 1_000,
      },
    ]);
    expect(answered.output).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        updatedInput: { ...event.toolInput, prompt: `${SECTION}\n\n${event.prompt}` },
      },
    });
    // The same call again (a resumed call) gets the section computed the first time, and asks for nothing.
    const again = onEvent(answered.state, event, 2_000);
    expect(again.effects).toEqual([]);
    expect(again.output).toEqual(answered.output);
  });

  it("takes the orchestrator's Task ID line, not a fact line of the section the prompt starts with", () => {
    const prompt = `[Session Context]\n- Task ID: 1 modified_by task:3 [task:3]\n- src/login.ts modified_by task:3 [task:3]\n\nTask ID: 4\nfix the login bug`;
    const asked = onEvent(emptyHookState, dispatchEvent({ prompt, toolInput: { prompt } }));
    expect(effectsOf(asked.effects, 'compile').map((effect) => effect.request.taskId)).toEqual(['4']);
  });

  it('reads the id of a Task ID line written in Markdown without its code span, as without its emphasis', () => {
    // An orchestrator writing Markdown puts the id in a code span: the subagent reports it as
    // T-4, and a task recorded as `T-4` (backticks and all) had every result warned about.
    for (const line of [
      '**Task ID:** `T-4`',
      'Task ID: `T-4`',
      '> Task ID: ``T-4``',
      '- `Task ID: T-4`',
      'Task ID: T-4',
    ]) {
      const prompt = `${line}\nfix the login bug`;
      const asked = onEvent(emptyHookState, dispatchEvent({ prompt, toolInput: { prompt } }));
      expect(effectsOf(asked.effects, 'compile').map((effect) => effect.request.taskId)).toEqual(['T-4']);
    }
  });

  it('takes a bulleted Task ID line right after the section the prompt starts with, in either layout', () => {
    const facts = [
      ['src/a.ts', 'modified_by', 'task:3', '3'],
      ['src/b.ts', 'modified_by', 'task:3', '3'],
      ['Task ID: 9', 'issue', 'the id line is read twice', '3'],
    ].map(([subject, relation, object, sourceTaskId]) =>
      makeFact({
        subject: subject!,
        relation: relation!,
        object: object!,
        tags: ['file_change'],
        validFrom: 1,
        sourceTaskId: sourceTaskId!,
        sourceRole: 'implementer',
        confidence: 1,
      }),
    );
    for (const layout of SECTION_LAYOUTS) {
      const prompt = `${formatSessionFacts(facts, { layout })}\n- Task ID: 4\n- fix src/a.ts`;
      const asked = onEvent(emptyHookState, dispatchEvent({ prompt, toolInput: { prompt } }));
      expect(effectsOf(asked.effects, 'compile').map((effect) => effect.request.taskId)).toEqual(['4']);
    }
  });

  it('refuses a prompt of millions of characters whose Task ID line or section line runs on, and says why', () => {
    // One match over such a line, 8.5 million characters outside Latin-1, overflowed the engine's
    // regexp stack: the hook answered internal.
    const run = `${'x'.repeat(8_500_000)}設`;
    for (const prompt of [`Task ID: ${run}\nedit`, `Task ID: 7\n[Session Context]\n- task:${run}\nedit`]) {
      const asked = onEvent(emptyHookState, dispatchEvent({ prompt, toolInput: { prompt } }));
      expect(effectsOf(asked.effects, 'compile')).toEqual([]);
      expect(effectsOf(asked.effects, 'say').map((effect) => effect.failure.code)).toContain('prompt_too_large');
    }
  });

  it("takes the call's id, and says why, when the Task ID line names a secret", () => {
    const prompt = `Task ID: ghp_${'a1B2c3D4e5'.repeat(4).slice(0, 36)}\nPush the release.`;
    const asked = onEvent(emptyHookState, dispatchEvent({ prompt, toolInput: { prompt } }));
    expect(effectsOf(asked.effects, 'compile').map((effect) => effect.request.taskId)).toEqual(['toolu_a']);
    expect(JSON.stringify([asked.records, asked.output, asked.state])).not.toContain('a1B2c3D4e5');
    expect(JSON.stringify(asked)).toMatch(
      /names a task id holding what looks like a GitHub token, so the task is the tool call's id/u,
    );
  });

  it('Codex: the section waits for SubagentStart of its type, which takes it once', () => {
    const spawn = dispatchEvent({ toolName: 'spawn_agent', toolUseId: 'call_1', promptField: 'message' });
    const sent = run(emptyHookState, spawn, 1_000);
    expect(sent.output).toBeUndefined();
    expect(sent.records).toEqual([expect.objectContaining({ channel: 'start', join: 'agent', key: 'call_1' })]);
    const other = onEvent(sent.state, {
      event: 'SubagentStart',
      sessionId: SESSION,
      agentId: 'x',
      agentType: 'critic',
    });
    expect(other.output).toBeUndefined();
    const started = onEvent(sent.state, {
      event: 'SubagentStart',
      sessionId: SESSION,
      agentId: 'a1',
      agentType: 'worker',
    });
    expect(started.output).toEqual({
      hookSpecificOutput: { hookEventName: 'SubagentStart', additionalContext: SECTION },
    });
    expect(started.records).toEqual([{ type: 'claim', key: 'call_1', agentId: 'a1', at: 1_000 }]);
    // Taken by its type: printed only where the hooks file took the claim, or the next subagent of
    // the type would be handed it again; a section its spawn named the agent for needs no claim.
    expect(started.outputNeedsRecords).toBe(true);
    const named = applyHookRecords(sent.state, [{ type: 'launch', key: 'call_1', agentId: 'a1', at: 1_000 }]);
    const own = onEvent(named, { event: 'SubagentStart', sessionId: SESSION, agentId: 'a1', agentType: 'worker' });
    expect(own.output).toEqual(started.output);
    expect(own.outputNeedsRecords).toBeUndefined();
    // Its stop records its answer under the call's task, once.
    const stop = {
      event: 'SubagentStop',
      sessionId: SESSION,
      agentId: 'a1',
      agentType: 'worker',
      lastAssistantMessage: RESULT('7'),
    } as const;
    const stopped = run(started.state, stop, 2_000);
    expect(effectsOf(stopped.effects, 'ingest').map((effect) => effect.request)).toEqual([
      { role: 'implementer', taskId: '7', output: RESULT('7'), at: 2_000 },
    ]);
    expect(run(stopped.state, stop, 3_000).effects).toEqual([]);
  });

  it('a Claude Code subagent starting past the wait, its call held by the permission prompt, takes the newest section of its type', () => {
    // A host that ignores the rewrite: sections wait for SubagentStart. Call a was denied; call b
    // waited on the user past the wait.
    const state = foldHookRecords([waitingSection('toolu_a', 1_000), waitingSection('toolu_b', 2_000)]);
    const start = (agentId: string, now: number) =>
      onEvent(state, { event: 'SubagentStart', sessionId: SESSION, agentId, agentType: 'worker' }, now);
    const late = start('a2', 2_000 + TIMEOUT + 1);
    expect(late.output).toEqual({
      hookSpecificOutput: { hookEventName: 'SubagentStart', additionalContext: '[Session Context]\n- toolu_b' },
    });
    expect(late.records).toEqual([{ type: 'claim', key: 'toolu_b', agentId: 'a2', at: 2_000 + TIMEOUT + 1 }]);
    // Taken by its type: printed only once the claim is in the hooks file, or the next would take it again.
    expect(late.outputNeedsRecords).toBe(true);
    // A section made within the wait goes first: the subagent of that call is the one starting.
    const fresh = applyHookRecords(state, [waitingSection('toolu_c', 2_000 + TIMEOUT)]);
    const started = onEvent(
      fresh,
      { event: 'SubagentStart', sessionId: SESSION, agentId: 'a3', agentType: 'worker' },
      2_000 + TIMEOUT + 1,
    );
    expect(started.records).toEqual([expect.objectContaining({ key: 'toolu_c' })]);
    // A Codex spawn starts at once: one whose subagent did not start within the wait never will.
    const codexState = foldHookRecords([waitingSection('call_1', 1_000, 'agent')]);
    const codexStart = onEvent(
      codexState,
      { event: 'SubagentStart', sessionId: SESSION, agentId: 'a4', agentType: 'worker' },
      1_000 + TIMEOUT + 1,
    );
    expect(codexStart.output).toBeUndefined();
  });

  it('a Claude Code subagent resumed takes no section of a call made before its own call named it', () => {
    // A host that ignores the rewrite: sections wait for SubagentStart. a1 answered toolu_a, whose
    // end named it at 3_000; toolu_b was made while toolu_a ran (and denied), toolu_c after its end.
    const answered = foldHookRecords([
      waitingSection('toolu_a', 1_000),
      waitingSection('toolu_b', 2_000),
      { type: 'claim', key: 'toolu_a', agentId: 'a1', at: 2_500 },
      { type: 'launch', key: 'toolu_a', agentId: 'a1', at: 3_000 },
      { type: 'result', key: 'toolu_a', agentId: 'a1', taskId: 'toolu_a', at: 3_000 },
      { type: 'end', key: 'toolu_a', final: true, at: 3_000 },
    ]);
    const resume = (state: HookState, now: number) =>
      onEvent(state, { event: 'SubagentStart', sessionId: SESSION, agentId: 'a1', agentType: 'worker' }, now);
    // Resumed without a call of its own: within the wait, or past it, toolu_b's section is no one's to take.
    for (const now of [4_000, 2_000 + TIMEOUT + 1]) {
      const resumed = resume(answered, now);
      expect(resumed.output).toBeUndefined();
      expect(resumed.records).toEqual([]);
    }
    // A call made since its end may be the one resuming it: it takes that call's.
    const asked = applyHookRecords(answered, [waitingSection('toolu_c', 3_500)]);
    expect(resume(asked, 4_000).records).toEqual([{ type: 'claim', key: 'toolu_c', agentId: 'a1', at: 4_000 }]);
  });

  it('a report no call named in time is recorded under its agent, and the user is told', () => {
    const state = foldHookRecords([{ type: 'report', agentId: 'a9', text: RESULT('3'), source: 'stop', at: 0 }]);
    const early = onEvent(state, { event: 'PostToolUseFailure', sessionId: SESSION, toolName: 'Agent' }, TIMEOUT);
    expect(early.effects).toEqual([]);
    const late = onEvent(state, { event: 'PostToolUseFailure', sessionId: SESSION, toolName: 'Agent' }, TIMEOUT + 1);
    expect(late.effects).toEqual([
      {
        type: 'say',
        failure: {
          code: 'report_unpaired',
          message: 'no tool call named the subagent a9 within 600 s; its result is recorded under task a9',
        },
        notice: true,
      },
      {
        type: 'ingest',
        request: { role: 'implementer', taskId: 'a9', output: RESULT('3'), at: 0 },
        what: 'a subagent (a9)',
        marks: [{ type: 'result', agentId: 'a9', taskId: 'a9', at: TIMEOUT + 1 }],
        digest: expect.stringMatching(/^[0-9a-f]{32}$/u),
      },
    ]);
    // Marked recorded once the session answers that it is.
    expect(late.records).toEqual([]);
    const answered = run(state, { event: 'PostToolUseFailure', sessionId: SESSION, toolName: 'Agent' }, TIMEOUT + 1);
    expect(answered.records).toEqual([{ type: 'result', agentId: 'a9', taskId: 'a9', at: TIMEOUT + 1 }]);
  });

  it('a report of an agent id no task id can be is recorded under agent- and its digest, which the user is told', () => {
    const agentId = `agent-${'a'.repeat(60)}`;
    const state = foldHookRecords([{ type: 'report', agentId, text: RESULT('3'), source: 'stop', at: 0 }]);
    const late = onEvent(state, { event: 'PostToolUseFailure', sessionId: SESSION, toolName: 'Agent' }, TIMEOUT + 1);
    const [ingest] = effectsOf(late.effects, 'ingest');
    const taskId = ingest!.request.taskId;
    expect(taskId).toMatch(/^agent-[0-9a-f]{24}$/u);
    expect(effectsOf(late.effects, 'say').map((said) => said.failure.message)).toEqual([
      `no tool call named the subagent "agent-${'a'.repeat(34)}..." within 600 s; its result is recorded under task ${taskId}`,
    ]);
    expect(ingest!.marks).toEqual([{ type: 'result', agentId, taskId, at: TIMEOUT + 1 }]);
  });

  it("tells the session's failures and warnings, and records no dispatch for a prompt it refused", () => {
    const asked = onEvent(emptyHookState, dispatchEvent());
    const [compile] = effectsOf(asked.effects, 'compile');
    const closed = step(asked.state, {
      type: 'compiled',
      effect: compile!,
      answer: E.left({ step: 'open', failure: { code: 'io', message: 'cannot open the log' } }),
    });
    expect(closed.records).toEqual([]);
    expect(closed.state).toBe(asked.state);
    expect(closed.effects).toEqual([
      { type: 'say', failure: { code: 'io', message: `session ${SESSION}: cannot open the log` }, notice: true },
    ]);
    const refused = step(asked.state, {
      type: 'compiled',
      effect: compile!,
      answer: E.left({ step: 'call', failure: { code: 'prompt_too_large', message: 'too long' } }),
    });
    expect(refused.effects).toEqual([
      { type: 'say', failure: { code: 'prompt_too_large', message: 'the prompt of task 7: too long' }, notice: true },
    ]);
    const ingest = {
      type: 'ingest',
      request: { role: 'implementer', taskId: '7', output: RESULT('8'), at: 0 },
      what: 'worker (a1)',
      marks: [{ type: 'result', key: 'toolu_a', agentId: 'a1', taskId: '7', at: 0 }],
      digest: '0'.repeat(32),
    } as const;
    const warned = step(emptyHookState, {
      type: 'ingested',
      effect: ingest,
      answer: E.right({ warnings: ['result task_id "8" differs from the dispatch task "7"', 'a fact was dropped'] }),
    });
    expect(warned.effects.map((effect) => effect.type === 'say' && [effect.failure.code, effect.notice])).toEqual([
      ['result_warning', true],
      ['result_warning', false],
    ]);
  });

  it('a dispatch the shell recorded before its prompt stays where the session wrote that line, else it is withdrawn', () => {
    const event = dispatchEvent();
    const asked = onEvent(emptyHookState, event);
    const [compile] = effectsOf(asked.effects, 'compile');
    const noted = dispatchRecordOf(compile!, { line: 4, sessionContext: SECTION, key: 'e4' });
    expect(noted.eventKey).toBe('e4');
    const state = applyHookRecords(asked.state, [noted]);
    const compiled = (answer: Extract<HookInput, { type: 'compiled' }>['answer'], withNote = true) =>
      step(withNote ? state : asked.state, {
        type: 'compiled',
        effect: compile!,
        answer,
        ...(withNote ? { noted } : {}),
      });
    // Written on that line: the record is in the file already, and stands; the prompt is rewritten.
    expect(state.byKey['toolu_a']?.written).toBe(false);
    const kept = compiled(E.right({ line: 4, sessionContext: SECTION }));
    expect(kept.records).toEqual([{ type: 'written', key: 'toolu_a', line: 4, at: 1_000 }]);
    expect(kept.state.byKey['toolu_a']).toEqual({ ...state.byKey['toolu_a'], written: true });
    expect(kept.output).toEqual(
      step(asked.state, { type: 'compiled', effect: compile!, answer: E.right({ line: 4, sessionContext: SECTION }) })
        .output,
    );
    // Not written: withdrawn, so the hook knows nothing of the call, and its prompt stays as it is.
    const failed = compiled(E.left({ step: 'call', failure: { code: 'io', message: 'cannot append to the log' } }));
    expect(failed.records).toEqual([{ type: 'withdrawn', key: 'toolu_a', line: 4, at: 1_000 }]);
    expect(failed.state.byKey['toolu_a']).toBeUndefined();
    expect(failed.output).toBeUndefined();
    // Another line answered (the same prompt already there): that line's record replaces it.
    const moved = compiled(E.right({ line: 6, sessionContext: SECTION }));
    const { eventKey: _planned, ...known } = noted;
    expect(moved.records).toEqual([
      { type: 'withdrawn', key: 'toolu_a', line: 4, at: 1_000 },
      { ...known, line: 6 },
    ]);
    expect(moved.state.byKey['toolu_a']?.record.line).toBe(6);
    expect(moved.state.byKey['toolu_a']?.written).toBe(true);
    // A hooks file that could not take the record refused the prompt: told as the file's failure.
    const refused = compiled(
      E.left({ step: 'note', failure: { code: 'io', message: 'cannot append to x.hooks' } }),
      false,
    );
    expect(refused.records).toEqual([]);
    expect(refused.effects).toEqual([
      { type: 'say', failure: { code: 'io', message: `session ${SESSION}: cannot append to x.hooks` }, notice: true },
    ]);
  });

  it('a dispatch recorded before its prompt by a process that went no further is settled by what the log holds on its line', () => {
    const [compile] = effectsOf(onEvent(emptyHookState, dispatchEvent()).effects, 'compile');
    const planned = (key: string, line: number): DispatchRecord => ({
      ...dispatchRecordOf(compile!, { line, sessionContext: SECTION, key: `e${line}` }),
      key,
    });
    // Its line written (killed after it), never written (killed before it), another writer's event
    // there, and a call known by its line alone whose line was never written.
    const state = foldHookRecords([
      planned('toolu_a', 4),
      planned('toolu_b', 5),
      planned('toolu_c', 6),
      planned('line:7', 7),
    ]);
    const checked = (answer: Extract<HookInput, { type: 'checked' }>['answer']) =>
      step(state, { type: 'checked', sessionId: SESSION, answer });
    const settled = checked(
      E.right([
        ['e4', 4],
        ['other', 6],
      ]),
    );
    const unlogged = (key: string, line: number): HookRecord[] => {
      const { eventKey: _planned, ...known } = planned(key, line);
      return [
        { type: 'withdrawn', key, line, at: 1_000 },
        { ...known, sessionContext: '' },
      ];
    };
    expect(settled.records).toEqual([
      { type: 'written', key: 'toolu_a', line: 4, at: 1_000 },
      ...unlogged('toolu_b', 5),
      ...unlogged('toolu_c', 6),
      { type: 'withdrawn', key: 'line:7', line: 7, at: 1_000 },
    ]);
    // Each call is still known, but no section is handed out that the log does not hold.
    expect(settled.state.dispatches.map(({ record, written }) => [record.key, record.sessionContext, written])).toEqual(
      [
        ['toolu_a', SECTION, true],
        ['toolu_b', '', true],
        ['toolu_c', '', true],
      ],
    );
    // A log that could not be read leaves them to the next event, and the user is told.
    const unread = checked(E.left({ step: 'open', failure: { code: 'store_unreachable', message: 'no server' } }));
    expect(unread.records).toEqual([]);
    expect(unread.state).toBe(state);
    expect(unread.effects).toEqual([
      {
        type: 'say',
        failure: { code: 'store_unreachable', message: `session ${SESSION}: no server` },
        notice: true,
      },
    ]);
  });

  it('an answer without a result block is told as marker_missing once per call, and records no result', () => {
    const called = run(emptyHookState, dispatchEvent(), 1_000);
    const ended = {
      event: 'PostToolUse',
      sessionId: SESSION,
      toolName: 'Agent',
      toolUseId: 'toolu_a',
      response: { status: 'completed', agentId: 'a1', text: 'All done, tests pass.' },
    } as const;
    const told = onEvent(called.state, ended, 2_000);
    expect(told.effects).toEqual([
      {
        type: 'say',
        failure: {
          code: 'marker_missing',
          message:
            'the answer of worker (a1) for task 7 has no result between a line BEGIN_DISPATCH_RESULT and a line END_DISPATCH_RESULT, so nothing was recorded from it; ask subagents to end their answer with one (see docs/hooks.md)',
        },
        notice: true,
      },
    ]);
    expect(told.records.map((entry) => entry.type)).toEqual(['launch', 'unmarked', 'end']);
    expect(onEvent(told.state, ended, 3_000).effects).toEqual([]);
  });

  it('never changes the state it is given, and returns it as it is when it adds no record', () => {
    const state = foldHookRecords([
      { type: 'dispatch', key: 'k', taskId: '1', line: 1, sessionContext: '', channel: 'input', join: 'tool', at: 0 },
    ]);
    expect(Object.isFrozen(state) && Object.isFrozen(state.dispatches[0])).toBe(true);
    const idle = onEvent(state, { event: 'PostToolUseFailure', sessionId: SESSION, toolName: 'Agent' });
    expect(idle.state).toBe(state);
  });
});

const TEXTS = [RESULT('1'), 'No result block here.'];

/** Events over the same small id space as the records: every event carries the ids the hook pairs by. */
const event: fc.Arbitrary<ActiveHookEvent> = fc.oneof(
  fc
    .record({
      toolName: fc.constantFrom('Agent', 'spawn_agent'),
      toolUseId: fc.constantFrom(...KEYS),
      prompt: fc.constantFrom('Task ID: 1\nDo a.', 'Do b.', `${SECTION}\n\nDo c.`),
      agentType: optional(fc.constantFrom(...TYPES.filter((type) => type !== undefined))),
    })
    .map(({ toolName, toolUseId, prompt, agentType }) =>
      dispatchEvent({
        toolName,
        toolUseId,
        prompt,
        toolInput: { prompt },
        ...(agentType === undefined ? {} : { agentType }),
      }),
    ),
  fc
    .record({
      toolUseId: fc.constantFrom(...KEYS),
      status: fc.constantFrom('completed', 'async_launched'),
      agentId: optional(fc.constantFrom(...AGENTS)),
      text: optional(fc.constantFrom(...TEXTS)),
      prompt: optional(fc.constantFrom(`${SECTION}\n\nDo a.`, 'Do a.')),
    })
    .map(({ toolUseId, status, agentId, text, prompt }): ActiveHookEvent => ({
      event: 'PostToolUse',
      sessionId: SESSION,
      toolName: 'Agent',
      toolUseId,
      ...(prompt === undefined ? {} : { prompt }),
      response: {
        status,
        ...(agentId === undefined ? {} : { agentId }),
        ...(text === undefined ? {} : { text }),
      },
    })),
  fc.constantFrom(...KEYS).map((toolUseId): ActiveHookEvent => ({
    event: 'PostToolUseFailure',
    sessionId: SESSION,
    toolName: 'Agent',
    toolUseId,
  })),
  fc
    .record({ agentId: fc.constantFrom(...AGENTS), agentType: optional(fc.constantFrom('worker', 'reviewer')) })
    .map(({ agentId, agentType }): ActiveHookEvent => ({
      event: 'SubagentStart',
      sessionId: SESSION,
      agentId,
      ...(agentType === undefined ? {} : { agentType }),
    })),
  fc
    .record({
      agentId: fc.constantFrom(...AGENTS),
      text: fc.constantFrom(...TEXTS),
      handback: fc.boolean(),
    })
    .map(({ agentId, text, handback }): ActiveHookEvent =>
      handback
        ? { event: 'Handback', sessionId: SESSION, agentId, message: text }
        : { event: 'SubagentStop', sessionId: SESSION, agentId, lastAssistantMessage: text },
    ),
);

/** Files the hook could have written: it keeps only reports that hold a result block. */
const history = fc
  .array(record, { maxLength: 30 })
  .map(wellFormed)
  .map((records) =>
    records.map((entry): HookRecord => (entry.type === 'report' ? { ...entry, text: RESULT(entry.text) } : entry)),
  );
const time = fc.integer({ min: 0, max: 4_000_000 });

/** The record of a Claude Code call of task 1 under `key`, waiting for its end since 1. */
const waitingDispatch = (key: string): HookRecord => ({
  type: 'dispatch',
  key,
  taskId: '1',
  line: 1,
  agentType: 'worker',
  sessionContext: '',
  channel: 'input',
  join: 'tool',
  at: 1,
});

describe('the role of an agent type under the default reviewer pattern', () => {
  const roleOf = (agentType: string) => selectRole(agentType, DEFAULT_HOOK_SETTINGS.reviewerPattern);

  it('is reviewer where the type holds "review", in any case', () => {
    for (const agentType of [
      'REVIEWER',
      'CODE_REVIEWER',
      'CodeREVIEWER',
      'XMLReviewer',
      'gpt5-reviewer',
      'reviewer 2',
      'codereviewer',
    ])
      expect([agentType, roleOf(agentType)]).toEqual([agentType, 'reviewer']);
  });

  it('is implementer where "review" is only the end of "preview", or there is no type', () => {
    for (const agentType of ['PREVIEW', 'Previewer', 'interview', 'worker'])
      expect([agentType, roleOf(agentType)]).toEqual([agentType, 'implementer']);
    expect(selectRole(undefined, DEFAULT_HOOK_SETTINGS.reviewerPattern)).toBe('implementer');
  });
});

describe('a stop repeated while its report waits for a call', () => {
  it('keeps the report once and asks the session nothing the second time', () => {
    const text = 'Done.\nBEGIN_DISPATCH_RESULT\n{"task_id": "1", "status": "completed"}\nEND_DISPATCH_RESULT';
    const records = [
      waitingDispatch('toolu_c'),
      { type: 'report', agentId: 'a3', text: text.replace('"1"', '"one"'), source: 'handback', at: 0 },
      { type: 'claim', key: 'toolu_c', agentId: 'a3', at: 0 },
    ] as unknown as Parameters<typeof foldHookRecords>[0];
    const input = {
      event: 'SubagentStop',
      sessionId: 's1',
      agentId: 'a1',
      lastAssistantMessage: text,
    } as unknown as Parameters<typeof run>[1];
    const first = run(foldHookRecords(records), input, 600_001);
    const second = run(first.state, input, 600_001);
    expect(second.effects.filter((effect) => effect.type !== 'say')).toEqual([]);
  });
});

describe('a stop whose call is waited for at exactly the expiry of another report', () => {
  it('asks the session nothing the second time', () => {
    const records: ReadonlyArray<HookRecord> = [
      waitingDispatch('line:4'),
      { type: 'report', agentId: 'a2', text: RESULT('one'), source: 'handback', at: 1 },
      { type: 'report', agentId: 'a3', text: RESULT('one'), source: 'handback', at: 0 },
      { type: 'claim', key: 'line:4', agentId: 'a3', at: 0 },
    ];
    const input: ActiveHookEvent = {
      event: 'SubagentStop',
      sessionId: SESSION,
      agentId: 'a2',
      lastAssistantMessage: RESULT('1'),
    };
    const first = run(foldHookRecords(records), input, TIMEOUT + 1);
    const second = run(first.state, input, TIMEOUT + 1);
    expect(second.effects.filter((effect) => effect.type !== 'say')).toEqual([]);
  });
});

describe('the hook transition, over random files and events', () => {
  it('the state a step returns is the fold of the file read and the records the step appends', () => {
    fc.assert(
      fc.property(history, event, time, (records, input, now) => {
        const before = foldHookRecords(records);
        const copy = JSON.parse(JSON.stringify(before)) as unknown;
        const after = run(before, input, now);
        expect(after.state).toEqual(foldHookRecords([...records, ...after.records]));
        expect(before).toEqual(copy);
      }),
      { numRuns: 1_500 },
    );
  });

  it('the same event sent twice at one time asks the session for each prompt and each result once', () => {
    fc.assert(
      fc.property(history, event, time, (records, input, now) => {
        const first = run(foldHookRecords(records), input, now);
        const second = run(first.state, input, now);
        expect(second.effects.filter((effect) => effect.type !== 'say')).toEqual([]);
      }),
      { numRuns: 1_500 },
    );
  });

  it('is deterministic: the same state, event and time give the same step', () => {
    fc.assert(
      fc.property(history, event, time, (records, input, now) => {
        const state = foldHookRecords(records);
        expect(onEvent(state, input, now)).toEqual(onEvent(state, input, now));
      }),
      { numRuns: 300 },
    );
  });
});
