/**
 * `trackerTransition`: one pure step per history event. Examples per kind of event, and the
 * property the design rests on: folding it over any history gives the sections and the final
 * valid facts `replayHistory` (and so `fact-tracker replay`) reports, byte for byte.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import {
  createFactTracker,
  encodeState,
  initialTrackerState,
  parseHistory,
  recordPrompt,
  replay,
  replayHistory,
  selectAllFacts,
  selectSessionContext,
  selectValidFacts,
  trackerTransition,
  type TrackerEvent,
  type TrackerState,
} from '../../../src/index.js';
import { createOwner, transientRun } from '../../../src/persistent/owner.js';
import { implementer, reviewer } from '../../fixtures/results.js';
import { isDeepFrozen } from '../store/invariants.js';

const example = readFileSync(new URL('../../../examples/web-api-session.jsonl', import.meta.url), 'utf8');

/** The sections and the final valid facts of a fold of the transition over `text`'s events, as JSON. */
const fold = (text: string): { sections: string[]; facts: string } => {
  let state = initialTrackerState();
  const sections: string[] = [];
  for (const event of parseHistory(text).events) {
    const [next, , output] = trackerTransition(state, event);
    if (output.type === 'prompt') sections.push(output.sessionContext);
    state = next;
  }
  return { sections, facts: JSON.stringify(selectValidFacts(state.store)) };
};

/** The same, as the replay reports them. */
const replayed = (text: string): { sections: string[]; facts: string } => {
  const { report } = replayHistory(text);
  return { sections: report.prompts.map((prompt) => prompt.sessionContext), facts: JSON.stringify(report.facts) };
};

const files = ['src/auth/login.ts', 'src/auth/token.ts', 'src/db/schema.ts', 'README.md', 'test/login.test.ts'];
const words = ['login', 'token', 'schema', 'rate', 'limit', 'docs', 'retry', 'cache'];

/** One history line: dispatches of both roles as text or objects, prompts, invalidations, compactions, and some junk. */
const lineArb = (at: number): fc.Arbitrary<unknown> =>
  fc.oneof(
    fc
      .record({ task: fc.constantFrom('1', '2', '3', '4'), changed: fc.subarray(files, { minLength: 1 }) })
      .map(({ task, changed }) => ({
        type: 'dispatch',
        role: 'implementer',
        taskId: task,
        result: implementer(task, changed),
        at,
      })),
    fc
      .record({ task: fc.constantFrom('1', '2', '3', '4'), changed: fc.subarray(files, { minLength: 1 }) })
      .map(({ task, changed }) => ({
        type: 'dispatch',
        role: 'implementer',
        taskId: task,
        output: `Done.\nBEGIN_DISPATCH_RESULT\n${JSON.stringify(implementer(task, changed))}\nEND_DISPATCH_RESULT`,
        at,
      })),
    fc
      .record({
        task: fc.constantFrom('1', '2', '3'),
        verdict: fc.constantFrom('approved', 'needs_changes'),
        issues: fc.subarray(files),
      })
      .map(({ task, verdict, issues }) => ({
        type: 'dispatch',
        role: 'reviewer',
        taskId: task,
        result: reviewer(
          task,
          verdict,
          issues.map((file) => ({ file, message: `check ${file}` })),
        ),
        at,
      })),
    fc
      .record({
        task: fc.constantFrom('2', '3', '4', '5'),
        prompt: fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 5 }),
      })
      .map(({ task, prompt }) => ({ type: 'prompt', taskId: task, taskPrompt: prompt.join(' '), at })),
    fc.constantFrom(...files).map((subject) => ({ type: 'invalidate', subject, relation: 'modified_by', at })),
    fc.integer({ min: 0, max: 12 }).map((maxFacts) => ({ type: 'compact', maxFacts, at })),
    fc.constant({ type: 'dispatch', role: 'implementer', taskId: '9', output: 'no markers here', at }),
    fc.constant('not json'),
  );

/** A history of up to 40 lines, times increasing by a second. */
const historyArb = fc
  .integer({ min: 0, max: 40 })
  .chain((length) => fc.tuple(...Array.from({ length }, (_, i) => lineArb(1_000 * (i + 1)))))
  .map((lines) => lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n'));

describe('trackerTransition', () => {
  it('a fold of it over any history gives the sections and the final valid facts replay reports, byte for byte', () => {
    fc.assert(
      fc.property(historyArb, (text) => {
        expect(fold(text)).toEqual(replayed(text));
      }),
      { numRuns: 150 },
    );
  });

  it('a fold of it over the example session gives what replay reports', () => {
    expect(fold(example)).toEqual(replayed(example));
  });

  it('answers a prompt with the section the state gives and records the prompt', () => {
    const start = initialTrackerState();
    const [afterDispatch, dispatchEvents, ingested] = trackerTransition(start, {
      type: 'dispatch',
      role: 'implementer',
      taskId: '1',
      output: implementer('1', ['src/auth/login.ts']),
      at: 1_000,
    });
    expect(E.isRight(ingested.ingested)).toBe(true);
    expect(dispatchEvents.map((event) => event.type)).toEqual(['facts/added']);
    const [afterPrompt, promptEvents, answer] = trackerTransition(afterDispatch, {
      type: 'prompt',
      taskId: '2',
      taskPrompt: 'Rate limit the login route',
      at: 2_000,
    });
    expect(answer.sessionContext).toContain('src/auth/login.ts modified_by task:1');
    expect(answer).toEqual(
      selectSessionContext(afterDispatch, {
        type: 'prompt',
        taskId: '2',
        taskPrompt: 'Rate limit the login route',
        at: 2_000,
      }),
    );
    expect(promptEvents).toEqual([
      { type: 'prompt/recorded', taskId: '2', taskPrompt: 'Rate limit the login route', at: 2_000 },
    ]);
    expect(afterPrompt.settings).toBe(afterDispatch.settings);
  });

  it('gives back the very same state, and no events, for an event that changes nothing', () => {
    const start = initialTrackerState();
    const rejected = trackerTransition(start, {
      type: 'dispatch',
      role: 'implementer',
      taskId: '1',
      output: 'no markers',
      at: 1,
    });
    expect(rejected[0]).toBe(start);
    expect(rejected[1]).toEqual([]);
    expect(E.isLeft(rejected[2].ingested) && rejected[2].ingested.left.code).toBe('marker_missing');
    const nothingToClose = trackerTransition(start, { type: 'invalidate', subject: 'x', relation: 'y', at: 1 });
    expect(nothingToClose[0]).toBe(start);
    expect(nothingToClose[2]).toEqual({ type: 'invalidate', closed: [] });
    const blank = trackerTransition(start, { type: 'prompt', taskId: '1', taskPrompt: '   ', at: 1 });
    expect(blank[0]).toBe(start);
  });

  it('returns a deeply frozen state for a state from JSON or structuredClone, the very one for an event that changes nothing', () => {
    const events = [
      { type: 'dispatch', role: 'implementer', taskId: '1', output: implementer('1', ['src/a.ts']), at: 1 },
      { type: 'prompt', taskId: '2', taskPrompt: 'Add rate limiting', at: 2 },
      { type: 'invalidate', subject: 'x', relation: 'y', at: 3 },
      { type: 'compact', maxFacts: 100, at: 4 },
    ] as const;
    const start = trackerTransition(initialTrackerState(), events[0])[0];
    for (const event of events)
      for (const input of [JSON.parse(JSON.stringify(start)) as TrackerState, structuredClone(start)]) {
        const before = JSON.stringify(input);
        const [next] = trackerTransition(input, event);
        expect(JSON.stringify(input)).toBe(before);
        expect(isDeepFrozen(next), event.type).toBe(true);
        if (event.type === 'invalidate' || event.type === 'compact') expect(next, event.type).toBe(input);
      }
    const input = structuredClone(start);
    const [recorded] = recordPrompt(input, { taskId: '3', taskPrompt: 'Add a route', at: 5 });
    expect(isDeepFrozen(recorded)).toBe(true);
  });

  it('records nothing for a task prompt of invisible characters only, as for a blank one', () => {
    const start = initialTrackerState();
    for (const taskPrompt of ['\u200b', ' \u200d\u2060 ', '\u00ad\u{E0041}']) {
      const [state, events] = recordPrompt(start, { taskId: '1', taskPrompt, at: 1 });
      expect(state).toBe(start);
      expect(events).toEqual([]);
    }
  });

  it('returns frozen states and events that replay rebuilds, and reads a state from JSON or structuredClone like its own', () => {
    const events: TrackerEvent[] = [];
    let state: TrackerState = initialTrackerState({ maxFacts: 5 });
    for (const event of parseHistory(example).events) {
      const [next, applied] = trackerTransition(state, event);
      events.push(...applied);
      state = next;
    }
    expect(Object.isFrozen(state)).toBe(true);
    expect(Object.isFrozen(state.store)).toBe(true);
    expect(Object.isFrozen(state.settings)).toBe(true);
    expect(events.every((event) => Object.isFrozen(event))).toBe(true);
    expect(encodeState(replay(events))).toEqual(encodeState(state.store));
    const prompt = {
      type: 'prompt',
      taskId: '99',
      taskPrompt: 'Add rate limiting to the login route',
      at: 1e13,
    } as const;
    const own = trackerTransition(state, prompt)[2];
    const parsed = JSON.parse(JSON.stringify({ settings: state.settings })) as Pick<TrackerState, 'settings'>;
    expect(trackerTransition({ store: structuredClone(state.store), settings: parsed.settings }, prompt)[2]).toEqual(
      own,
    );
  });

  it('a state made with any settings, unbounded counts included, answers every event of any history as its JSON copy does, byte for byte', () => {
    const countArb = fc.oneof(fc.constant(Number.POSITIVE_INFINITY), fc.integer({ min: 0, max: 40 }));
    const optionsArb = fc.record(
      { maxFacts: countArb, maxTokens: countArb, maxFactsPerResult: countArb },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(historyArb, optionsArb, (text, options) => {
        let state = initialTrackerState(options);
        let copy = JSON.parse(JSON.stringify(state)) as TrackerState;
        for (const event of parseHistory(text).events) {
          const [next, , output] = trackerTransition(state, event);
          const [nextCopy, , outputCopy] = trackerTransition(copy, event);
          expect(JSON.stringify(outputCopy)).toBe(JSON.stringify(output));
          state = next;
          copy = JSON.parse(JSON.stringify(nextCopy)) as TrackerState;
        }
      }),
      { numRuns: 60 },
    );
  });

  it('reads a path holding a lone surrogate (a model wrote "\\ud800") as its U+FFFD, one fact however it is written, and closes it under either spelling', () => {
    const text = ['src/a\\ud800.ts', 'src/a\\ud801.ts']
      .map((path, i) =>
        JSON.stringify({
          type: 'dispatch',
          role: 'implementer',
          taskId: '1',
          result: implementer('1', ['PATH']),
          at: 1_000 * (i + 1),
        }).replace('PATH', path),
      )
      .join('\n');
    let state = initialTrackerState();
    for (const event of parseHistory(text).events) state = trackerTransition(state, event)[0];
    const files = selectValidFacts(state.store).filter((fact) => fact.relation === 'modified_by');
    expect(files.map((fact) => fact.subject)).toEqual(['src/a\ufffd.ts']);
    const [closedState, , output] = trackerTransition(state, {
      type: 'invalidate',
      subject: 'src/a\udbff.ts',
      relation: 'modified_by',
      at: 3_000,
    });
    expect(output.closed.map((fact) => fact.subject)).toEqual(['src/a\ufffd.ts']);
    expect(selectValidFacts(closedState.store).filter((fact) => fact.relation === 'modified_by')).toEqual([]);
  });

  it('closes the facts of an invalidated pair and says which', () => {
    const [state] = trackerTransition(initialTrackerState(), {
      type: 'dispatch',
      role: 'implementer',
      taskId: '1',
      output: implementer('1', ['src/a.ts']),
      at: 1_000,
    });
    const [after, events, output] = trackerTransition(state, {
      type: 'invalidate',
      subject: 'src/a.ts',
      relation: 'modified_by',
      at: 2_000,
    });
    expect(output.closed.map((fact) => [fact.subject, fact.relation, fact.object])).toEqual([
      ['src/a.ts', 'modified_by', 'task:1'],
    ]);
    expect(events).toEqual([{ type: 'facts/invalidated', subject: 'src/a.ts', relation: 'modified_by', at: 2_000 }]);
    expect(selectValidFacts(after.store).some((fact) => fact.subject === 'src/a.ts')).toBe(false);
  });

  it("an invalidation inside a replay's write run says what it closed and seals nothing the run built, so its later writes stay in place", () => {
    /** The objects reachable from `value` that are not frozen (what the run may still write in place). */
    const unfrozen = (value: unknown): Set<object> => {
      const found = new Set<object>();
      const pending: unknown[] = [value];
      for (let item = pending.pop(); item !== undefined; item = pending.pop())
        if (typeof item === 'object' && item !== null && !Object.isFrozen(item) && !found.has(item)) {
          found.add(item);
          // A transient run holds its maps as native maps: their entries are what it built too.
          if (item instanceof Map) pending.push(...item.values());
          else if (!ArrayBuffer.isView(item)) pending.push(...Object.values(item));
        }
      return found;
    };
    const owner = createOwner();
    transientRun(owner, () => {
      let state = initialTrackerState();
      for (let task = 1; task <= 20; task += 1)
        [state] = trackerTransition(state, {
          type: 'dispatch',
          role: 'implementer',
          taskId: String(task),
          output: implementer(String(task), [`src/m${task % 7}.ts`, `src/n${task % 5}.ts`, 'src/shared.ts']),
          at: task * 1_000,
        });
      const built = unfrozen(state.store);
      expect(built.size).toBeGreaterThan(100);
      const [after, , output] = trackerTransition(state, {
        type: 'invalidate',
        subject: 'src/shared.ts',
        relation: 'modified_by',
        at: 30_000,
      });
      expect(output.closed).toHaveLength(1);
      expect([...built].filter((node) => Object.isFrozen(node))).toEqual([]);
      expect(unfrozen(after.store).size).toBeGreaterThan(100);
    });
  });

  it('a review settles the issues of its task it no longer raises, in the same step', () => {
    const issue = { file: 'src/a.ts', message: 'missing null check' };
    let state = initialTrackerState();
    for (const event of [
      { type: 'dispatch', role: 'implementer', taskId: '1', output: implementer('1', ['src/a.ts']), at: 1_000 },
      {
        type: 'dispatch',
        role: 'reviewer',
        taskId: '1',
        output: reviewer('1', 'needs_changes', [issue], ['add the check']),
        at: 2_000,
      },
    ] as const)
      state = trackerTransition(state, event)[0];
    const [, events] = trackerTransition(state, {
      type: 'dispatch',
      role: 'reviewer',
      taskId: '1',
      output: reviewer('1', 'approved'),
      at: 3_000,
    });
    expect(events.map((event) => event.type)).toEqual(['facts/invalidated', 'facts/invalidated', 'facts/added']);
  });
});

describe('reviews out of time order', () => {
  const review = (at: number, assessment: string, issues: string[] = [], fixes: string[] = []) =>
    ({
      type: 'dispatch',
      role: 'reviewer',
      taskId: '1',
      output: reviewer(
        '1',
        assessment,
        issues.map((message) => ({ file: 'src/a.ts', message })),
        fixes,
      ),
      at,
    }) as const;
  const fold = (events: ReadonlyArray<ReturnType<typeof review>>): TrackerState =>
    events.reduce((state, event) => trackerTransition(state, event)[0], initialTrackerState());
  const openItems = (state: TrackerState) =>
    selectValidFacts(state.store)
      .filter((fact) => fact.relation === 'issue' || fact.relation === 'must_fix')
      .map((fact) => fact.object);

  it('an approval that arrived before an earlier review asking for changes settles that review’s items at its own time', () => {
    const changes = review(2_000, 'needs_changes', ['string SQL'], ['use parameters']);
    const approval = review(3_000, 'approved');
    const [state, events] = trackerTransition(fold([approval]), changes);
    expect(events.map((event) => event.type)).toEqual(['facts/added', 'facts/invalidated', 'facts/invalidated']);
    expect(openItems(state)).toEqual([]);
    expect(replay(events, fold([approval]).store)).toEqual(state.store);
    // The same history as when they arrive in time order: the items closed at the approval's time.
    const records = (store: TrackerState['store']) =>
      selectAllFacts(store).map((f) => `${f.object} ${f.validFrom}-${f.validTo}`);
    expect(records(state.store)).toEqual(records(fold([changes, approval]).store));
    expect(records(state.store)).toContain('use parameters 2000-3000');
  });

  it('an item the later review repeated stays open', () => {
    const first = review(2_000, 'needs_changes', ['string SQL', 'no validation']);
    const later = review(3_000, 'needs_changes', ['string SQL']);
    expect(openItems(fold([later, first]))).toEqual(['string SQL']);
  });

  it('the valid facts after the reviews of a task are the same whatever order the reviews arrive in', () => {
    const reviewArb = fc.record({
      at: fc.integer({ min: 1, max: 50 }).map((at) => at * 1_000),
      assessment: fc.constantFrom('approved', 'needs_changes'),
      issues: fc.subarray(['string SQL', 'no validation']),
      fixes: fc.subarray(['use parameters', 'add a test']),
    });
    fc.assert(
      fc.property(fc.uniqueArray(reviewArb, { selector: (r) => r.at, maxLength: 6 }), (given) => {
        // The order generated is the order of arrival; time order is the one they were made in.
        const arrived = given.map((r) => review(r.at, r.assessment, r.issues, r.fixes));
        const inTime = [...arrived].sort((a, b) => a.at - b.at);
        const ids = (state: TrackerState) =>
          selectValidFacts(state.store)
            .map((fact) => fact.id)
            .sort();
        expect(ids(fold(arrived))).toEqual(ids(fold(inTime)));
      }),
    );
  });
});

describe('createFactTracker over the transition', () => {
  it('turns an exception nobody expected into a Left with code internal that onError hears, never a silent answer', () => {
    const heard: string[] = [];
    const tracker = createFactTracker({
      clock: () => 1_000,
      countTokens: () => {
        throw new Error('counter bug');
      },
      onError: (error) => heard.push(error.code),
    });
    tracker.ingestOutput({ role: 'implementer', taskId: '1', output: implementer('1', ['src/a.ts']) });
    const compiled = tracker.compilePrompt({ taskId: '2', taskPrompt: 'Change src/a.ts' });
    expect(compiled.error?.code).toBe('internal');
    expect(compiled.error?.message).toContain('counter bug');
    expect(compiled.sessionContext).toBe('');
    expect(compiled.prompt).toContain('Change src/a.ts');
    expect(heard).toEqual(['internal']);
  });

  it('says a token counter that throws is the one that threw: internal, naming countTokens, and its message', () => {
    const tracker = createFactTracker({
      clock: () => 1_000,
      countTokens: () => {
        throw new RangeError('counter bug');
      },
    });
    tracker.ingestOutput({ role: 'implementer', taskId: '1', output: implementer('1', ['src/a.ts']) });
    for (const compiled of [
      tracker.previewPrompt({ taskId: '2', taskPrompt: 'Change src/a.ts' }),
      tracker.compilePrompt({ taskId: '2', taskPrompt: 'Change src/a.ts' }),
    ])
      expect(compiled.error).toEqual({
        code: 'internal',
        message: 'unexpected failure (a bug; please report it): the token counter (countTokens) threw: counter bug',
      });
  });

  it('answers a token counter that answers no number of tokens with invalid_input naming countTokens, not internal, and the prompt without a section', () => {
    for (const [answer, said] of [
      [Number.NaN, 'NaN'],
      ['12', 'a string'],
      [undefined, 'undefined'],
      [-5, '-5'],
      [Number.POSITIVE_INFINITY, 'Infinity'],
    ] as const) {
      const heard: string[] = [];
      const tracker = createFactTracker({
        clock: () => 1_000,
        countTokens: (() => answer) as unknown as (text: string) => number,
        onError: (error) => heard.push(error.code),
      });
      tracker.ingestOutput({ role: 'implementer', taskId: '1', output: implementer('1', ['src/a.ts']) });
      const before = tracker.getSnapshot();
      for (const compiled of [
        tracker.previewPrompt({ taskId: '2', taskPrompt: 'Change src/a.ts' }),
        tracker.compilePrompt({ taskId: '2', taskPrompt: 'Change src/a.ts' }),
      ]) {
        expect(compiled.error).toEqual({
          code: 'invalid_input',
          message: `countTokens answered ${said}, not a number of tokens (a finite number 0 or more)`,
        });
        expect(compiled.sessionContext).toBe('');
        expect(compiled.prompt).toContain('Change src/a.ts');
      }
      // The caller's counter is at fault, not the tracker: onError hears bugs only, and nothing was recorded.
      expect(heard).toEqual([]);
      expect(tracker.getSnapshot()).toBe(before);
    }
  });

  it('previewPrompt answers what compilePrompt would, and records nothing', () => {
    const tracker = createFactTracker({ clock: () => 1_000 });
    tracker.ingestOutput({ role: 'implementer', taskId: '1', output: implementer('1', ['src/a.ts']) });
    const before = tracker.getSnapshot();
    const preview = tracker.previewPrompt({ taskId: '2', taskPrompt: 'Change src/a.ts' });
    expect(tracker.getSnapshot()).toBe(before);
    expect(tracker.compilePrompt({ taskId: '2', taskPrompt: 'Change src/a.ts' })).toEqual(preview);
    expect(tracker.getSnapshot()).not.toBe(before);
  });

  it('answers bad input to invalidate and compact with a Left, and a finished call with a Right', () => {
    const tracker = createFactTracker({ clock: () => 1_000 });
    expect(E.isLeft(tracker.compact(-1))).toBe(true);
    expect(E.isLeft(tracker.invalidate(3 as never, 'x'))).toBe(true);
    expect(E.isLeft(tracker.invalidate('a', 'b', Number.NaN))).toBe(true);
    expect(tracker.compact(10)).toEqual(E.right({ removedClosed: [], summaries: [], dropped: [] }));
    expect(tracker.invalidate('a', 'b')).toEqual(E.right({ closed: [] }));
  });
});
