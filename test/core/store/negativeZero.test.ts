/**
 * Times users really pass include -0 (`Math.round(-0.4)`, `-x` of a time 0, a history line's
 * `"at":-0`): JSON writes it as 0, so a store that held it would not deep-equal its own round trip.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  addFacts,
  createFactTracker,
  emptyFactStore,
  type FactStore,
  invalidate,
  recordTaskPrompt,
  replayHistory,
} from '../../../src/index.js';
import { fileFact } from '../../arbitraries.js';

const viaJson = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/** A time as callers compute it: -0 and 0 among small integers. */
const timeArb = fc.oneof(fc.constant(-0), fc.integer({ min: -3, max: 3 }));

describe('-0 as a time', () => {
  it('a store written at any times, -0 among them, deep-equals its JSON round trip', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(2), timeArb), { maxLength: 8 }), (steps) => {
        let store: FactStore = emptyFactStore();
        for (const [kind, at] of steps) {
          if (kind === 0) store = addFacts(store, [fileFact('src/a.ts', 'modified_by', `task:${at}`, at)]);
          else if (kind === 1) store = invalidate(store, 'src/a.ts', 'modified_by', at);
          else store = recordTaskPrompt(store, '1', `edit src/a.ts at ${at}`, at);
        }
        expect(viaJson(store)).toEqual(store);
      }),
    );
  });

  it('a tracker whose clock answers -0 and a history whose times are -0 hold stores equal to their JSON', () => {
    const tracker = createFactTracker({ clock: () => -0 });
    tracker.ingestOutput({
      role: 'implementer',
      taskId: '1',
      output: { task_id: '1', status: 'completed', summary: 'done', files_changed: ['src/a.ts'] },
    });
    tracker.compilePrompt({ taskId: '2', taskPrompt: 'edit src/a.ts' });
    tracker.invalidate('src/a.ts', 'modified_by');
    expect(viaJson(tracker.getSnapshot())).toEqual(tracker.getSnapshot());

    const history = [
      '{"type":"prompt","taskId":"1","taskPrompt":"edit src/a.ts","at":-0}',
      '{"type":"dispatch","role":"implementer","taskId":"1","at":-0,"output":{"task_id":"1","status":"completed","summary":"done","files_changed":["src/a.ts"]}}',
    ].join('\n');
    const { store } = replayHistory(history);
    expect(viaJson(store)).toEqual(store);
  });
});
