/**
 * The hooks file's state: a fold over its records. Compaction rewrites the file with fewer
 * records; it must leave every decision still to be made exactly as the full file would.
 */
import fc from 'fast-check';
import * as O from 'fp-ts/lib/Option.js';
import { describe, expect, it } from 'vitest';
import {
  compactHookRecords,
  foldHookRecords,
  type HookRecord,
  type HookState,
  isAgentSettled,
  isAwaitingToolResult,
  isSettled,
  parseHookRecords,
  selectDispatchOfAgent,
  selectWaiting,
} from '../../../src/live/hook/state.js';

const KEYS = ['toolu_a', 'toolu_b', 'toolu_c', 'line:4'];
const AGENTS = ['a1', 'a2', 'a3'];
const TYPES = ['worker', 'reviewer', undefined];

const at = fc.integer({ min: 0, max: 2_000_000 });
const optional = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined });
const strip = <T extends object>(record: T): T =>
  Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined)) as T;

/** Records over a small id space: collisions (a key dispatched twice, an agent claimed twice) are where bugs live. */
const record = fc.oneof(
  fc
    .record({
      type: fc.constant('dispatch' as const),
      key: fc.constantFrom(...KEYS),
      taskId: fc.constantFrom('1', '2', '3'),
      line: fc.integer({ min: 1, max: 9 }),
      agentType: fc.constantFrom(...TYPES),
      sessionContext: fc.constantFrom('', '[Session Context]\n- a'),
      channel: fc.constantFrom('input' as const, 'start' as const, 'none' as const),
      join: fc.constantFrom('tool' as const, 'agent' as const),
      at,
    })
    .map(strip),
  fc
    .record({
      type: fc.constant('claim' as const),
      key: fc.constantFrom(...KEYS),
      agentId: optional(fc.constantFrom(...AGENTS)),
      at,
    })
    .map(strip),
  fc.record({
    type: fc.constant('launch' as const),
    key: fc.constantFrom(...KEYS),
    agentId: fc.constantFrom(...AGENTS),
    at,
  }),
  fc.record({ type: fc.constant('end' as const), key: fc.constantFrom(...KEYS), final: fc.boolean(), at }),
  fc.record({
    type: fc.constant('report' as const),
    agentId: fc.constantFrom(...AGENTS),
    text: fc.constantFrom('one', 'two'),
    source: fc.constantFrom('handback' as const, 'stop' as const),
    at,
  }),
  fc
    .record({
      type: fc.constant('result' as const),
      key: optional(fc.constantFrom(...KEYS)),
      agentId: optional(fc.constantFrom(...AGENTS)),
      taskId: fc.constant('1'),
      at,
    })
    .map(strip),
  fc.record({
    type: fc.constant('observe' as const),
    key: fc.constantFrom(...KEYS),
    rewrite: fc.constantFrom('honoured' as const, 'ignored' as const),
    at,
  }),
);

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
  agents: AGENTS.map((agentId) =>
    isAgentSettled(state, agentId)
      ? 'settled'
      : O.toUndefined(
          O.map(({ dispatch, exact }: { dispatch: HookState['dispatches'][number]; exact: boolean }) => [
            dispatch.record.key,
            exact,
          ])(selectDispatchOfAgent(state, agentId)),
        ),
  ),
  live: state.dispatches
    .filter((dispatch) => !isSettled(dispatch))
    .map((dispatch) => [dispatch.record.key, dispatch.claimed, dispatch.agentId, dispatch.ended]),
  awaiting: isAwaitingToolResult(state, now, timeoutMs),
  reports: Object.values(state.reports).filter((report) => !isAgentSettled(state, report.agentId)),
  rewrite: state.rewrite,
});

/**
 * The orders the hook writes: a claim, launch, end or observation only for a call dispatched
 * before it (a result may name a call never seen: its answer came without a dispatch), and one
 * claim and one launch per call at most.
 */
const wellFormed = (records: ReadonlyArray<HookRecord>): HookRecord[] => {
  const dispatched = new Set<string>();
  // A call is claimed once and names its agent once: the hook writes neither again for it.
  const once = new Set<string>();
  return records.filter((entry) => {
    if (entry.type === 'dispatch') dispatched.add(entry.key);
    if (entry.type === 'claim' || entry.type === 'launch') {
      // An agent id is a call's own: a call names one agent, and no other call names it.
      const marks = [`${entry.type}:${entry.key}`, ...(entry.type === 'launch' ? [`agent:${entry.agentId}`] : [])];
      if (marks.some((mark) => once.has(mark))) return false;
      for (const mark of marks) once.add(mark);
    }
    return (
      !['claim', 'launch', 'end', 'observe'].includes(entry.type) || dispatched.has((entry as { key: string }).key)
    );
  });
};

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
});
