import * as E from 'fp-ts/lib/Either.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  compact,
  decodeState,
  encodeState,
  type FactStore,
  replayHistory,
  selectValidCount,
  selectValidFacts,
} from '../../../src/index.js';
import { selectPairLog } from '../../../src/core/store/write.js';
import { implementer, reviewer } from '../../fixtures/results.js';

/** The store as a saved state file gives it back. */
const throughSavedState = (store: FactStore): FactStore => {
  const decoded = decodeState(JSON.parse(JSON.stringify(encodeState(store))));
  if (E.isLeft(decoded)) throw new Error(decoded.left.message);
  return decoded.right;
};

/** What a replay gives from line `cut` on: the sections of its prompts and its final store. */
const outcome = (result: ReturnType<typeof replayHistory>, cut: number) => ({
  sections: result.report.prompts.filter((prompt) => prompt.line > cut).map((prompt) => prompt.sessionContext),
  store: encodeState(result.store),
});

/** Replays `lines` from the saved state of their first `cut` lines. */
const resumed = (lines: ReadonlyArray<string>, cut: number) => {
  const first = replayHistory(lines.slice(0, cut).join('\n'));
  return outcome(replayHistory(lines.slice(cut).join('\n'), { initial: throughSavedState(first.store) }), -1);
};

const task = fc.constantFrom('1', '2', '3');
const file = fc.constantFrom('src/a.ts', 'src/b.ts');
/** A time or none, so the replay dates the line from the one before it; times may go backwards. */
const at = fc.option(
  fc.integer({ min: 0, max: 6 }).map((seconds) => seconds * 1000),
  { nil: undefined },
);
const timed = (event: Record<string, unknown>, time: number | undefined): string =>
  JSON.stringify(time === undefined ? event : { ...event, at: time });

const lineArb: fc.Arbitrary<string> = fc.oneof(
  fc
    .tuple(task, fc.array(file, { maxLength: 2 }), at)
    .map(([id, files, time]) =>
      timed({ type: 'dispatch', role: 'implementer', taskId: id, result: implementer(id, files) }, time),
    ),
  fc.tuple(task, fc.option(file, { nil: undefined }), at).map(([id, issueFile, time]) =>
    timed(
      {
        type: 'dispatch',
        role: 'reviewer',
        taskId: id,
        result: reviewer(id, 'needs_changes', [
          issueFile === undefined ? { message: 'naming' } : { file: issueFile, message: 'naming' },
        ]),
      },
      time,
    ),
  ),
  fc
    .tuple(task, file, at)
    .map(([id, target, time]) =>
      timed({ type: 'prompt', taskId: id, taskPrompt: `fix ${target}`, maxTokens: 200 }, time),
    ),
  fc
    .tuple(file, at)
    .map(([subject, time]) => timed({ type: 'invalidate', subject, relation: 'modified_by' }, time ?? 0)),
  fc.tuple(fc.integer({ min: 0, max: 3 }), at).map(([maxFacts, time]) => timed({ type: 'compact', maxFacts }, time)),
);

describe('resuming a replay from a saved state', () => {
  it('replaying a history in two parts through a saved state gives what one replay gives, wherever it is cut, with or without times', () => {
    fc.assert(
      fc.property(fc.array(lineArb, { maxLength: 12 }), fc.nat(), (lines, seed) => {
        const cut = seed % (lines.length + 1);
        expect(resumed(lines, cut)).toEqual(outcome(replayHistory(lines.join('\n')), cut));
      }),
      { numRuns: 300 },
    );
  });

  it('dates a line without time after the last event replayed, not after the latest time the store holds', () => {
    const lines = [
      timed({ type: 'dispatch', role: 'implementer', taskId: '1', result: implementer('1', ['src/a.ts']) }, 1000),
      timed({ type: 'dispatch', role: 'reviewer', taskId: '1', result: reviewer('1', 'approved') }, 0),
      timed({ type: 'prompt', taskId: '2', taskPrompt: 'fix src/a.ts' }, undefined),
    ];
    const first = replayHistory(lines.slice(0, 2).join('\n'));
    expect(encodeState(first.store).lastEventAt).toBe(0);
    const rest = replayHistory(lines[2]!, { initial: throughSavedState(first.store) });
    expect(rest.store.lastEventAt).toBe(1000);
  });

  it('resumes a state saved without the last event time after the latest time it records, as before', () => {
    const first = replayHistory(
      timed({ type: 'dispatch', role: 'implementer', taskId: '1', result: implementer('1', ['src/a.ts']) }, 5000),
    );
    const { lastEventAt: _dropped, ...older } = encodeState(first.store);
    const decoded = decodeState(JSON.parse(JSON.stringify(older)));
    if (E.isLeft(decoded)) throw new Error(decoded.left.message);
    expect(decoded.right.lastEventAt).toBeUndefined();
    const rest = replayHistory(timed({ type: 'compact', maxFacts: 5 }, undefined), { initial: decoded.right });
    expect(rest.store.lastEventAt).toBe(6000);
  });

  it('resumes a compacted store without the last event time after the invalidation its tombstone keeps, as the store before compaction', () => {
    const first = replayHistory(
      [
        timed({ type: 'dispatch', role: 'implementer', taskId: '1', result: implementer('1', ['src/a.ts']) }, 1000),
        timed({ type: 'dispatch', role: 'implementer', taskId: '2', result: implementer('2', ['src/b.ts']) }, 1000),
        timed({ type: 'invalidate', subject: 'src/a.ts', relation: 'modified_by' }, 5000),
      ].join('\n'),
    );
    // A write since the replay (here a compaction) drops the last event time; the closed pair goes, its tombstone stays.
    const compacted = compact(first.store, selectValidCount(first.store) - 1);
    expect(compacted.lastEventAt).toBeUndefined();
    expect(selectPairLog(compacted, 'src/a.ts', 'modified_by')).toBeUndefined();
    const { lastEventAt: _dropped, ...uncompacted } = first.store;
    const line = timed(
      { type: 'dispatch', role: 'implementer', taskId: '3', result: implementer('3', ['src/a.ts']) },
      undefined,
    );
    const changedA = (initial: FactStore) =>
      selectValidFacts(replayHistory(line, { initial }).store)
        .filter((fact) => fact.subject === 'src/a.ts')
        .map((fact) => [fact.relation, fact.object, fact.validFrom]);
    // Dated after the invalidation, task 3's change is valid, compacted or not, saved or not.
    expect(changedA(uncompacted)).toEqual([['modified_by', 'task:3', 6000]]);
    expect(changedA(compacted)).toEqual([['modified_by', 'task:3', 6000]]);
    expect(changedA(throughSavedState(compacted))).toEqual([['modified_by', 'task:3', 6000]]);
  });

  it('resumes a store built by hand whose last event time is no time after the latest time it records', () => {
    const first = replayHistory(
      timed({ type: 'dispatch', role: 'implementer', taskId: '1', result: implementer('1', ['src/a.ts']) }, 5000),
    );
    const initial = { ...first.store, lastEventAt: 'soon' as never };
    const rest = replayHistory(timed({ type: 'compact', maxFacts: 5 }, undefined), { initial });
    expect(rest.store.lastEventAt).toBe(6000);
  });

  it('a last event time outside the years 0000 to 9999 is no time: a saved state holding it is refused, a store built with it resumes as one without it', () => {
    const first = replayHistory(
      timed({ type: 'dispatch', role: 'implementer', taskId: '1', result: implementer('1', ['src/a.ts']) }, 5000),
    );
    const outside = fc.oneof(
      fc.constantFrom(1e308, -1e20, 253_402_300_800_000, -62_167_219_200_001, Infinity),
      fc.double({ min: 253_402_300_800_000, noNaN: true }),
      fc.double({ max: -62_167_219_200_001, noNaN: true }),
    );
    fc.assert(
      fc.property(outside, (time) => {
        expect(E.isLeft(decodeState({ ...encodeState(first.store), lastEventAt: time }))).toBe(true);
        const initial = { ...first.store, lastEventAt: time };
        const rest = replayHistory(timed({ type: 'compact', maxFacts: 5 }, undefined), { initial });
        expect(rest.store.lastEventAt).toBe(6000);
      }),
    );
    expect(decodeState({ ...encodeState(first.store), lastEventAt: 1e308 })).toEqual(
      E.left({ code: 'invalid_state', message: 'saved state lastEventAt is not a time within the years 0000 to 9999' }),
    );
  });

  it('refuses a saved state whose last event time is not a time', () => {
    const saved = { ...encodeState(replayHistory('').store), lastEventAt: 'soon' };
    expect(decodeState(saved)).toEqual(
      E.left({ code: 'invalid_state', message: 'saved state lastEventAt is not a finite time' }),
    );
  });
});
