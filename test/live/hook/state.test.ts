/**
 * The hooks file's state: a fold over its records. Compaction rewrites the file with fewer
 * records; it must leave every decision still to be made exactly as the full file would.
 */
import fc from 'fast-check';
import * as O from 'fp-ts/lib/Option.js';
import { describe, expect, it } from 'vitest';
import { compactHookRecords } from '../../../src/live/hook/compact.js';
import { type HookRecord, parseHookRecords } from '../../../src/live/hook/records.js';
import {
  isAgentSettled,
  isAwaitingToolResult,
  isSettled,
  selectAnsweredDispatch,
  selectDispatchOfAgent,
  selectLateWaiting,
  selectMissed,
  selectNamedAt,
  selectWaiting,
} from '../../../src/live/hook/select.js';
import { foldHookRecords, type HookState } from '../../../src/live/hook/state.js';
import { hookTransition } from '../../../src/live/hook/transition.js';
import type { HookInput } from '../../../src/live/hook/model.js';
import { AGENTS, KEYS, record, TYPES, waitingSection, wellFormed } from './arbitraries.js';

/** Every answer a later event can ask of the state. */
const decisions = (state: HookState, now: number, timeoutMs: number) => ({
  waiting: TYPES.flatMap((type) =>
    (['section', 'guess'] as const).map((kind) =>
      O.toUndefined(
        O.map((found: { record: { key: string } }) => found.record.key)(
          selectWaiting(state, kind, type, now, timeoutMs),
        ),
      ),
    ),
  ),
  late: TYPES.flatMap((type) =>
    (['section', 'guess'] as const).map((kind) =>
      O.toUndefined(
        O.map((found: { record: { key: string } }) => found.record.key)(
          selectLateWaiting(state, kind, type, now, timeoutMs),
        ),
      ),
    ),
  ),
  agents: AGENTS.map((agentId) =>
    isAgentSettled(state, agentId)
      ? // A settled Claude Code subagent starting again is resumed, after the call it worked for.
        [
          'settled',
          O.toUndefined(
            O.map(({ dispatch }: { dispatch: HookState['dispatches'][number] }) => selectNamedAt(dispatch))(
              O.filter(
                ({ dispatch }: { dispatch: HookState['dispatches'][number] }) => dispatch.record.join === 'tool',
              )(selectDispatchOfAgent(state, agentId)),
            ),
          ),
        ]
      : O.toUndefined(
          O.map(({ dispatch, exact }: { dispatch: HookState['dispatches'][number]; exact: boolean }) => [
            dispatch.record.key,
            exact,
          ])(selectDispatchOfAgent(state, agentId)),
        ),
  ),
  live: state.dispatches
    .filter((dispatch) => !isSettled(dispatch))
    .map((dispatch) => [
      dispatch.record.key,
      dispatch.claimed,
      dispatch.agentId,
      dispatch.ended,
      dispatch.unmarked,
      dispatch.written,
    ]),
  awaiting: isAwaitingToolResult(state, now, timeoutMs),
  reports: Object.values(state.reports).filter((report) => !isAgentSettled(state, report.agentId)),
  missed: [
    ...AGENTS.filter((agentId) => !isAgentSettled(state, agentId)).flatMap((agentId) =>
      ['d1', 'd2'].map((digest) => O.toUndefined(selectMissed(state, undefined, agentId, digest))),
    ),
    ...KEYS.filter(
      (key) => state.settledKeys[key] !== true && !(state.byKey[key] !== undefined && isSettled(state.byKey[key])),
    ).flatMap((key) => ['d1', 'd2'].map((digest) => O.toUndefined(selectMissed(state, key, undefined, digest)))),
  ],
  rewrite: state.rewrite,
});

/** A call of task 1 whose section went in its prompt, at time 0. */
const dispatchOf = (key: string): HookRecord => ({
  type: 'dispatch',
  key,
  taskId: '1',
  line: 1,
  sessionContext: '',
  channel: 'input',
  join: 'tool',
  at: 0,
});

describe('the hooks file state', () => {
  it('compacting the records leaves every decision still to be made as the full records leave it', () => {
    fc.assert(
      fc.property(fc.array(record as fc.Arbitrary<HookRecord>, { maxLength: 40 }).map(wellFormed), (records) => {
        const now = 2_000_000;
        const full = foldHookRecords(records);
        const compacted = foldHookRecords(
          parseHookRecords(
            compactHookRecords(full, now, 10 * now)
              .map((entry) => JSON.stringify(entry))
              .join('\n'),
          ),
        );
        expect(decisions(compacted, now, 600_000)).toEqual(decisions(full, now, 600_000));
        expect(Object.keys(full.settledKeys).every((key) => compacted.settledKeys[key] === true)).toBe(true);
      }),
      { numRuns: 2_000 },
    );
  });

  it('keeps an agent live when a settled dispatch was claimed by an agent another call had named', () => {
    // The agent a2 works for toolu_b (its call named it); its claim of toolu_a, whose result was
    // recorded first, must not mark it settled once the file is compacted.
    const records: HookRecord[] = [
      dispatchOf('toolu_b'),
      { type: 'launch', key: 'toolu_b', agentId: 'a2', at: 0 },
      { type: 'result', key: 'toolu_a', taskId: '1', at: 0 },
      dispatchOf('toolu_a'),
      { type: 'claim', key: 'toolu_a', agentId: 'a2', at: 0 },
    ];
    const compacted = foldHookRecords(compactHookRecords(foldHookRecords(records), 0, 1));
    expect(isAgentSettled(compacted, 'a2')).toBe(false);
    expect(compacted.agents['a2']).toEqual({ key: 'toolu_b', exact: true });
  });

  it('keeps a Codex subagent pairing its answer through the section it guessed, once another answer settled that section', () => {
    // a2 took task 2's section and a3 task 3's, each the other's; a3's answer, naming task 2, was
    // recorded there. a2's answer, to come, names task 3: it is paired through its guess.
    const codex = (key: string, taskId: string): HookRecord => ({
      type: 'dispatch',
      key,
      taskId,
      line: Number(taskId),
      agentType: 'worker',
      sessionContext: `[Session Context]\n- ${taskId}`,
      channel: 'start',
      join: 'agent',
      at: 0,
    });
    const records: HookRecord[] = [
      codex('toolu_a', '2'),
      codex('toolu_b', '3'),
      { type: 'claim', key: 'toolu_a', agentId: 'a2', at: 0 },
      { type: 'claim', key: 'toolu_b', agentId: 'a3', at: 0 },
      { type: 'result', key: 'toolu_a', agentId: 'a3', taskId: '2', at: 0 },
    ];
    const full = foldHookRecords(records);
    const compacted = foldHookRecords(compactHookRecords(full, 0, 1));
    for (const state of [full, compacted]) {
      expect(isAgentSettled(state, 'a2')).toBe(false);
      expect(isAgentSettled(state, 'a3')).toBe(true);
      expect(state.agents['a2']).toEqual({ key: 'toolu_a', exact: false });
      const guessed = state.byKey['toolu_a']!;
      expect(guessed.record.sessionContext).toBe('[Session Context]\n- 2');
      expect(selectAnsweredDispatch(state, guessed, 'a2', '3').record.key).toBe('toolu_b');
      expect(selectAnsweredDispatch(state, guessed, 'a2', undefined).record.key).toBe('toolu_b');
    }
  });

  it('keeps an agent that took two sections working for the first it took, once the file is compacted', () => {
    const records: HookRecord[] = [
      dispatchOf('toolu_c'),
      dispatchOf('line:4'),
      { type: 'claim', key: 'line:4', agentId: 'a3', at: 0 },
      { type: 'claim', key: 'toolu_c', agentId: 'a3', at: 0 },
    ];
    const compacted = foldHookRecords(compactHookRecords(foldHookRecords(records), 0, 1));
    expect(compacted.agents['a3']).toEqual({ key: 'line:4', exact: false });
    expect(compacted.byKey['toolu_c']?.claimedBy).toBe('a3');
  });

  it("keeps the call a settled Claude Code subagent worked for, so one resumed once the file is compacted takes its new call's section", () => {
    // A host that ignores the rewrite: sections wait for SubagentStart. a1 answered toolu_a; the
    // foreground call toolu_b resumes it, and names it only at its end.
    const records: HookRecord[] = [
      waitingSection('toolu_a', 1_000),
      { type: 'claim', key: 'toolu_a', agentId: 'a1', at: 1_001 },
      { type: 'launch', key: 'toolu_a', agentId: 'a1', at: 1_002 },
      { type: 'result', key: 'toolu_a', agentId: 'a1', taskId: 'toolu_a', at: 1_002 },
      { type: 'end', key: 'toolu_a', final: true, at: 1_002 },
      waitingSection('toolu_b', 2_000),
    ];
    const full = foldHookRecords(records);
    const compacted = foldHookRecords(compactHookRecords(full, 3_000, 1_000_000));
    const start: HookInput = {
      type: 'event',
      event: { event: 'SubagentStart', sessionId: 's1', agentId: 'a1', agentType: 'worker' },
    };
    for (const state of [full, compacted]) {
      const started = hookTransition(state, start, 3_000);
      expect(started.records).toEqual([{ type: 'claim', key: 'toolu_b', agentId: 'a1', at: 3_000 }]);
      expect(isAgentSettled(state, 'a1')).toBe(true);
    }
  });

  it('keeps the settled Codex spawn that named an agent, once that agent took a live call by a guess', () => {
    // Not a host's order (an agent id is one host's), but the file must still read back the same:
    // a1 works for the settled spawn line:4, which named it; its claim of the live toolu_b must not
    // relink it once that spawn, its agents all settled, would be compacted away.
    const records: HookRecord[] = [
      { type: 'result', key: 'line:4', taskId: '1', at: 0 },
      dispatchOf('toolu_b'),
      {
        type: 'dispatch',
        key: 'line:4',
        taskId: '1',
        line: 1,
        agentType: 'worker',
        sessionContext: '',
        channel: 'input',
        join: 'agent',
        at: 0,
      },
      { type: 'launch', key: 'line:4', agentId: 'a1', at: 0 },
      { type: 'claim', key: 'toolu_b', agentId: 'a1', at: 0 },
    ];
    const full = foldHookRecords(records);
    const compacted = foldHookRecords(compactHookRecords(full, 0, 1));
    for (const state of [full, compacted]) {
      expect(isAgentSettled(state, 'a1')).toBe(true);
      expect(state.agents['a1']).toEqual({ key: 'line:4', exact: true });
      expect(state.byKey['toolu_b']?.claimedBy).toBe('a1');
    }
  });

  it('takes ids every object has a property of (constructor, toString, __proto__) as ids like any other', () => {
    const ids = ['constructor', 'toString', '__proto__', 'hasOwnProperty'];
    const empty = foldHookRecords([dispatchOf('toolu_z')]);
    for (const id of ids) {
      expect([empty.byKey[id], empty.agents[id], empty.reports[id]]).toEqual([undefined, undefined, undefined]);
      expect(isAgentSettled(empty, id)).toBe(false);
      expect(O.isNone(selectDispatchOfAgent(empty, id))).toBe(true);
    }
    const records: HookRecord[] = ids.flatMap((id): HookRecord[] => [
      dispatchOf(id),
      { type: 'launch', key: id, agentId: id, at: 0 },
    ]);
    records.push({ type: 'result', key: 'toString', agentId: 'toString', taskId: '1', at: 0 });
    for (const state of [
      foldHookRecords(records),
      foldHookRecords(compactHookRecords(foldHookRecords(records), 0, 1)),
    ]) {
      // toString's result is recorded: compaction may let go of its dispatch; the others stay live.
      const live = ids.filter((id) => id !== 'toString');
      expect(live.map((id) => state.byKey[id]?.record.key)).toEqual(live);
      expect(live.map((id) => state.agents[id])).toEqual(live.map((key) => ({ key, exact: true })));
      expect(ids.map((id) => isAgentSettled(state, id))).toEqual([false, true, false, false]);
      expect(Object.getPrototypeOf(state.agents)).toBeNull();
    }
  });

  it('reads lines that break at \\r or \\r\\n as lines, as the reader of the file cuts them', () => {
    const lines = [
      dispatchOf('toolu_a'),
      { type: 'launch', key: 'toolu_a', agentId: 'a1', at: 0 },
      { type: 'result', key: 'toolu_a', taskId: '1', at: 0 },
    ].map((entry) => JSON.stringify(entry));
    const records = parseHookRecords(lines.join('\n'));
    expect(records).toHaveLength(3);
    expect(parseHookRecords(`${lines[0]!}\r${lines[1]!}\r\n${lines[2]!}\r`)).toEqual(records);
  });

  it('skips lines that are not records, and keeps the first dispatch of a key', () => {
    const dispatch = (sessionContext: string): HookRecord => ({
      type: 'dispatch',
      key: 'toolu_a',
      taskId: '1',
      line: 1,
      sessionContext,
      channel: 'start',
      join: 'agent',
      at: 0,
    });
    const text = [
      JSON.stringify(dispatch('first')),
      '{"type": "dispatch"',
      'not json',
      JSON.stringify(dispatch('second')),
    ].join('\n');
    const state = foldHookRecords(parseHookRecords(text));
    expect(state.dispatches.map((entry) => entry.record.sessionContext)).toEqual(['first']);
  });

  it('withdraws the dispatch of a key only where it is the one on the line withdrawn', () => {
    const dispatch = (line: number): HookRecord => ({
      type: 'dispatch',
      key: 'toolu_a',
      taskId: '1',
      line,
      sessionContext: `on ${line}`,
      channel: 'start',
      join: 'agent',
      at: 0,
    });
    const withdrawn = (line: number): HookRecord => ({ type: 'withdrawn', key: 'toolu_a', line, at: 1 });
    const text = [dispatch(1), withdrawn(2), withdrawn(1), dispatch(3), withdrawn(1)]
      .map((record) => JSON.stringify(record))
      .join('\n');
    const state = foldHookRecords(parseHookRecords(text));
    expect(state.dispatches.map((entry) => entry.record.line)).toEqual([3]);
    expect(foldHookRecords([dispatch(1), withdrawn(1)]).byKey['toolu_a']).toBeUndefined();
  });
});
