/**
 * A replay writes its store's maps as native maps (persistent/nativeMap.ts) and turns them into
 * tries whenever it hands a value out: what a caller gets is the plain data a fold of the
 * transition outside any run gives, whatever maps the replay held on the way.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  createFactTracker,
  decodeState,
  emptyFactStore,
  encodeState,
  type FactStore,
  initialTrackerState,
  parseHistory,
  replayHistory,
  trackerTransition,
} from '../../../src/index.js';
import { createOwner, transientRun } from '../../../src/persistent/owner.js';
import { withLastEventAt } from '../../../src/core/store/state.js';
import { implementer, reviewer } from '../../fixtures/results.js';

/** True when a `Map` is reachable from `value` (through objects, arrays, or a map's own entries). */
const holdsMap = (value: unknown): boolean => {
  const seen = new Set<object>();
  const pending: unknown[] = [value];
  for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
    if (typeof item !== 'object' || item === null || seen.has(item)) continue;
    if (item instanceof Map) return true;
    seen.add(item);
    if (!ArrayBuffer.isView(item)) pending.push(...Object.values(item));
  }
  return false;
};

/** True when every object and array reachable from `value` is frozen (typed arrays apart). */
const deeplyFrozen = (value: unknown): boolean => {
  const pending: unknown[] = [value];
  for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
    if (typeof item !== 'object' || item === null || ArrayBuffer.isView(item)) continue;
    if (!Object.isFrozen(item)) return false;
    pending.push(...Object.values(item));
  }
  return true;
};

const files = Array.from({ length: 30 }, (_, i) => `src/m${i % 7}/f${i}.ts`);
const words = ['login', 'token', 'schema', 'rate', 'limit', 'docs', 'retry', 'cache', 'parser', 'queue'];

/** One task's lines: its prompt, its implementer's result, maybe a review, an invalidation, a compaction. */
const taskArb = fc.record({
  changed: fc.subarray(files, { minLength: 1, maxLength: 6 }),
  prompt: fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 4 }),
  issues: fc.option(fc.subarray(files, { maxLength: 3 })),
  invalidate: fc.option(fc.constantFrom(...files)),
  compact: fc.option(fc.integer({ min: 0, max: 40 }), { freq: 8 }),
});

/** A history of 20 to 120 tasks over 30 files: maps of hundreds of entries, which compaction empties again. */
const historyArb = fc.array(taskArb, { minLength: 20, maxLength: 120 }).map((tasks) => {
  const lines: unknown[] = [];
  let at = 0;
  tasks.forEach(({ changed, prompt, issues, invalidate, compact }, i) => {
    const taskId = String(i + 1);
    lines.push({ type: 'prompt', taskId, taskPrompt: prompt.join(' '), at: (at += 1_000) });
    lines.push({
      type: 'dispatch',
      role: 'implementer',
      taskId,
      result: implementer(taskId, changed),
      at: (at += 1_000),
    });
    if (issues !== null) {
      const found = issues.map((file) => ({ file, message: `check ${file}` }));
      const verdict = found.length > 0 ? 'needs_changes' : 'approved';
      lines.push({
        type: 'dispatch',
        role: 'reviewer',
        taskId,
        result: reviewer(taskId, verdict, found),
        at: (at += 1_000),
      });
    }
    if (invalidate !== null)
      lines.push({ type: 'invalidate', subject: invalidate, relation: 'modified_by', at: (at += 1_000) });
    if (compact !== null) lines.push({ type: 'compact', maxFacts: compact, at: (at += 1_000) });
  });
  return lines.map((line) => JSON.stringify(line)).join('\n');
});

/**
 * The store before each prompt and at the end, of a fold of the transition over `text` outside
 * any write run (the last recording its last event's time, as a replay hands it out).
 */
const foldStores = (text: string, initial: FactStore): { beforePrompts: FactStore[]; last: FactStore } => {
  let state = initialTrackerState({ store: initial });
  const beforePrompts: FactStore[] = [];
  const { events } = parseHistory(text);
  for (const event of events) {
    if (event.type === 'prompt') beforePrompts.push(state.store);
    [state] = trackerTransition(state, event);
  }
  const lastEvent = events.at(-1);
  return { beforePrompts, last: lastEvent === undefined ? state.store : withLastEventAt(state.store, lastEvent.at) };
};

describe('a replay holding its maps natively', () => {
  it('hands out a store, kept retrievals and transition states that hold no Map, survive JSON and structuredClone, and equal the fold outside any run; a saved state decodes to frozen plain data that encodes back to the same document', () => {
    fc.assert(
      fc.property(historyArb, fc.integer({ min: 8, max: 60 }), fc.boolean(), (text, bound, keep) => {
        const initial = emptyFactStore({ maxValidFacts: bound });
        const result = replayHistory(text, { initial, keepRetrievals: keep });
        const fold = foldStores(text, initial);
        expect(holdsMap(result)).toBe(false);
        expect(result.store).toEqual(fold.last);
        expect(JSON.parse(JSON.stringify(result.store))).toEqual(result.store);
        expect(structuredClone(result.store)).toEqual(result.store);
        expect(result.retrievals.map(({ store }) => store)).toEqual(keep ? fold.beforePrompts : []);
        expect(holdsMap(fold)).toBe(false);
        // A saved state is decoded the same way, in one transient run: plain frozen data again.
        const document = JSON.parse(JSON.stringify(encodeState(result.store))) as unknown;
        const decoded = decodeState(document);
        if (decoded._tag === 'Left') throw new Error(decoded.left.message);
        expect(holdsMap(decoded.right)).toBe(false);
        expect(deeplyFrozen(decoded.right)).toBe(true);
        expect(JSON.parse(JSON.stringify(encodeState(decoded.right)))).toEqual(document);
      }),
      { numRuns: 25 },
    );
  });

  it('a tracker written inside transient runs hands out a state and a snapshot with no Map, equal to those of a tracker written outside any run', () => {
    const drive = (tracker: ReturnType<typeof createFactTracker>, task: number): void => {
      tracker.ingestOutput({
        role: 'implementer',
        taskId: String(task),
        output: implementer(String(task), [files[task % 30]!, files[(task * 7) % 30]!, files[(task * 3) % 30]!]),
      });
    };
    let now = 0;
    const inRuns = createFactTracker({ clock: () => now, maxValidFacts: 12 });
    const outside = createFactTracker({ clock: () => now, maxValidFacts: 12 });
    const owner = createOwner();
    for (let task = 1; task <= 60; task += 1) {
      now = task * 1_000;
      transientRun(owner, () => drive(inRuns, task));
      drive(outside, task);
    }
    expect(holdsMap(inRuns.getState())).toBe(false);
    expect(holdsMap(inRuns.getSnapshot())).toBe(false);
    expect(inRuns.getSnapshot()).toEqual(outside.getSnapshot());
    expect(structuredClone(inRuns.getState())).toEqual(outside.getState());
  });
});
