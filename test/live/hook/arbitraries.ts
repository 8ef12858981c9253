/** Arbitraries of the hook's records and events over a small id space: collisions are where bugs live. */
import fc from 'fast-check';
import type { HookRecord } from '../../../src/live/hook/records.js';

export const KEYS = ['toolu_a', 'toolu_b', 'toolu_c', 'line:4'];
export const AGENTS = ['a1', 'a2', 'a3'];
export const TYPES = ['worker', 'reviewer', undefined];

/**
 * A call of task `key` made at `at` whose section (`[Session Context]` and a line naming `key`)
 * waits for the start of its `worker` subagent: a host that ignores the rewritten prompt.
 */
export const waitingSection = (key: string, at: number, join: 'tool' | 'agent' = 'tool'): HookRecord => ({
  type: 'dispatch',
  key,
  taskId: key,
  line: at,
  agentType: 'worker',
  sessionContext: `[Session Context]\n- ${key}`,
  channel: 'start',
  join,
  at,
});

export const at = fc.integer({ min: 0, max: 2_000_000 });
export const optional = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined });
const strip = <T extends object>(record: T): T =>
  Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined)) as T;

/** Records over a small id space: collisions (a key dispatched twice, an agent claimed twice) are where bugs live. */
const anyRecord = fc.oneof(
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
      eventKey: optional(fc.constant('e1')),
    })
    .map(strip),
  fc.record({
    type: fc.constant('written' as const),
    key: fc.constantFrom(...KEYS),
    line: fc.integer({ min: 1, max: 9 }),
    at,
  }),
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
  fc
    .record({
      type: fc.constant('missed' as const),
      key: optional(fc.constantFrom(...KEYS)),
      agentId: optional(fc.constantFrom(...AGENTS)),
      digest: fc.constantFrom('d1', 'd2'),
      retry: fc.boolean(),
      sentAt: at,
      stamped: optional(fc.constant(true as const)),
      at,
    })
    .map(strip),
  fc.record({ type: fc.constant('unmarked' as const), key: fc.constantFrom(...KEYS), at }),
  fc.record({
    type: fc.constant('observe' as const),
    key: fc.constantFrom(...KEYS),
    rewrite: fc.constantFrom('honoured' as const, 'ignored' as const),
    at,
  }),
);

/** One record of a hooks file. */
export const record = anyRecord as fc.Arbitrary<HookRecord>;

/**
 * The orders the hook writes: a claim, launch, end or observation only for a call dispatched
 * before it (a result may name a call never seen: its answer came without a dispatch), and one
 * claim and one launch per call at most.
 */
export const wellFormed = (records: ReadonlyArray<HookRecord>): HookRecord[] => {
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
      !['claim', 'launch', 'end', 'observe', 'unmarked'].includes(entry.type) ||
      dispatched.has((entry as { key: string }).key)
    );
  });
};
