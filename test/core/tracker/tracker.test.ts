import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import {
  addFacts,
  createFactTracker,
  emptyFactStore,
  type FactStore,
  type FactTracker,
  invalidate,
  makeFact,
  replay,
  selectAllFacts,
  selectValidCount,
  selectValidFacts,
  type SessionFact,
  toStateSnapshotFacts,
} from '../../../src/index.js';
import { createOwner, transientRun } from '../../../src/persistent/owner.js';
import { asOneRun } from '../../../src/persistent/owner.js';
import { isDeepFrozen } from '../store/invariants.js';
import { implementer, reviewer } from '../../fixtures/results.js';

const steppingClock = (start = 1_000, step = 1_000) => {
  let now = start - step;
  return () => (now += step);
};

const raw = (result: unknown) => `Done.\nBEGIN_DISPATCH_RESULT\n${JSON.stringify(result)}\nEND_DISPATCH_RESULT\n`;

const openItems = (store: FactStore, taskId: string) =>
  selectValidFacts(store)
    .filter((f) => f.sourceTaskId === taskId && (f.relation === 'issue' || f.relation === 'must_fix'))
    .map((f) => `${f.subject} ${f.relation} ${f.object}`)
    .sort();

describe('createFactTracker', () => {
  it('ingests raw output and parsed objects, stamping facts with the clock', () => {
    const tracker = createFactTracker({ clock: () => 42 });
    const result = tracker.ingestOutput({
      role: 'implementer',
      taskId: '1',
      output: raw(implementer('1', ['src/a.ts'])),
    });
    expect(E.isRight(result)).toBe(true);
    expect(selectValidFacts(tracker.getSnapshot()).every((f) => f.validFrom === 42)).toBe(true);
    expect(E.isRight(tracker.ingestOutput({ role: 'reviewer', taskId: '1', output: reviewer('1', 'approved') }))).toBe(
      true,
    );
  });

  it('returns contract errors as values and keeps the state', () => {
    const tracker = createFactTracker({ clock: steppingClock() });
    tracker.ingestOutput({ role: 'implementer', taskId: '1', output: implementer('1', ['src/a.ts']) });
    const before = tracker.getSnapshot();
    const cases: Array<[unknown, string]> = [
      [{ role: 'implementer', taskId: '2', output: 'no markers here' }, 'marker_missing'],
      [
        { role: 'implementer', taskId: '2', output: 'BEGIN_DISPATCH_RESULT\n{nope\nEND_DISPATCH_RESULT' },
        'json_parse_failed',
      ],
      [{ role: 'implementer', taskId: '2', output: { status: 'maybe' } }, 'schema_invalid'],
      [{ role: 'planner', taskId: '2', output: implementer('2', []) }, 'invalid_input'],
      [{ role: 'implementer', taskId: '', output: implementer('2', []) }, 'invalid_input'],
      [{ role: 'implementer', taskId: 'x'.repeat(51), output: implementer('2', []) }, 'invalid_input'],
      [null, 'invalid_input'],
    ];
    for (const [input, code] of cases) {
      const result = tracker.ingestOutput(input as never);
      expect(E.isLeft(result) && result.left.code).toBe(code);
    }
    expect(tracker.getSnapshot()).toBe(before);
  });

  it('a failing clock is an invalid_input error, not an exception', () => {
    const tracker = createFactTracker({
      clock: () => {
        throw new Error('no time');
      },
    });
    const result = tracker.ingestOutput({ role: 'implementer', taskId: '1', output: implementer('1', []) });
    expect(E.isLeft(result) && result.left.code).toBe('invalid_input');
    const nan = createFactTracker({ clock: () => Number.NaN });
    expect(E.isLeft(nan.ingestOutput({ role: 'implementer', taskId: '1', output: implementer('1', []) }))).toBe(true);
  });

  it('a later review closes the earlier issues and must-fixes of the task that it does not repeat', () => {
    const tracker = createFactTracker({ clock: steppingClock() });
    tracker.ingestOutput({
      role: 'reviewer',
      taskId: '3',
      output: reviewer(
        '3',
        'needs_changes',
        [{ file: 'src/a.ts', message: 'missing null check' }, { message: 'no docs' }],
        ['add null check', 'write docs'],
      ),
    });
    expect(openItems(tracker.getSnapshot(), '3')).toHaveLength(4);
    tracker.ingestOutput({
      role: 'reviewer',
      taskId: '3',
      output: reviewer('3', 'needs_changes', [{ message: 'no docs' }], ['write docs']),
    });
    expect(openItems(tracker.getSnapshot(), '3')).toEqual(['task:3 issue no docs', 'task:3 must_fix write docs']);
    tracker.ingestOutput({ role: 'reviewer', taskId: '3', output: reviewer('3', 'approved') });
    expect(openItems(tracker.getSnapshot(), '3')).toEqual([]);
    expect(selectAllFacts(tracker.getSnapshot()).filter((f) => f.relation === 'issue')).toHaveLength(2);
  });

  it('with its default clock, a review made within the same millisecond as the one before still settles what that one raised', () => {
    // Back-to-back calls mostly share a millisecond of Date.now: the default clock keeps them apart.
    for (let run = 0; run < 20; run += 1) {
      const tracker = createFactTracker();
      tracker.ingestOutput({
        role: 'reviewer',
        taskId: '3',
        output: reviewer('3', 'needs_changes', [{ file: 'src/a.ts', message: 'no validation' }], ['validate']),
      });
      tracker.ingestOutput({
        role: 'reviewer',
        taskId: '3',
        output: reviewer('3', 'needs_changes', [{ file: 'src/a.ts', message: 'string SQL' }], ['use parameters']),
      });
      expect(openItems(tracker.getSnapshot(), '3')).toEqual([
        'src/a.ts issue string SQL',
        'task:3 must_fix use parameters',
      ]);
    }
  });

  it('a review past its cap of facts per result does not settle an item it repeats, whether the item’s fact was kept or dropped', () => {
    // Rule order: the assessment, the issues, then the required fixes: past a cap of 3 the repeated fix is dropped.
    const tracker = createFactTracker({ clock: steppingClock(), maxFactsPerResult: 3 });
    tracker.ingestOutput({
      role: 'reviewer',
      taskId: '1',
      output: reviewer('1', 'needs_changes', [], ['use parameters']),
    });
    const capped = tracker.ingestOutput({
      role: 'reviewer',
      taskId: '1',
      output: reviewer(
        '1',
        'needs_changes',
        [{ message: 'string SQL' }, { message: 'no validation' }],
        ['use parameters'],
      ),
    });
    expect(E.isRight(capped) && capped.right.warnings).toEqual([
      'the result proposed 1 more fact past the cap of 3 per result; they were dropped',
    ]);
    expect(openItems(tracker.getSnapshot(), '1')).toEqual([
      'task:1 issue no validation',
      'task:1 issue string SQL',
      'task:1 must_fix use parameters',
    ]);
    // What it did not repeat, it still settles.
    tracker.ingestOutput({
      role: 'reviewer',
      taskId: '1',
      output: reviewer('1', 'needs_changes', [], ['use parameters']),
    });
    expect(openItems(tracker.getSnapshot(), '1')).toEqual(['task:1 must_fix use parameters']);
  });

  it('compaction merges no open review item into a summary, so the review that settles the item leaves nothing claiming it', () => {
    const tracker = createFactTracker({ clock: steppingClock(), maxValidFacts: 8 });
    tracker.ingestOutput({ role: 'implementer', taskId: '1', output: implementer('1', ['src/login.ts']) });
    tracker.ingestOutput({
      role: 'reviewer',
      taskId: '1',
      output: reviewer(
        '1',
        'needs_changes',
        [{ message: 'password compared in variable time' }],
        ['use timingSafeEqual'],
      ),
    });
    for (const taskId of ['2', '3', '4'])
      tracker.ingestOutput({ role: 'implementer', taskId, output: implementer(taskId, [`src/f${taskId}.ts`]) });
    const summaries = () =>
      selectValidFacts(tracker.getSnapshot())
        .filter((f) => f.relation === 'summary_of')
        .map((f) => f.object);
    // Task 1's subject was merged, its open items left as they were.
    expect(summaries()).toHaveLength(1);
    expect(openItems(tracker.getSnapshot(), '1')).toEqual([
      'task:1 issue password compared in variable time',
      'task:1 must_fix use timingSafeEqual',
    ]);
    tracker.ingestOutput({ role: 'reviewer', taskId: '1', output: reviewer('1', 'approved') });
    expect(openItems(tracker.getSnapshot(), '1')).toEqual([]);
    const section = tracker.compilePrompt({ taskId: '5', taskPrompt: 'password check timing login' }).sessionContext;
    expect(section).not.toMatch(/timingSafeEqual|variable time/);
    expect(summaries().join('\n')).not.toMatch(/issue|must_fix/);
  });

  it("does not close another task's open items", () => {
    const tracker = createFactTracker({ clock: steppingClock() });
    tracker.ingestOutput({ role: 'reviewer', taskId: '3', output: reviewer('3', 'needs_changes', [], ['fix 3']) });
    tracker.ingestOutput({ role: 'reviewer', taskId: '4', output: reviewer('4', 'approved') });
    expect(openItems(tracker.getSnapshot(), '3')).toEqual(['task:3 must_fix fix 3']);
  });

  it('compiles the dynamic tail with the section between the delta packet and the task prompt', () => {
    const tracker = createFactTracker({ clock: steppingClock() });
    tracker.ingestOutput({ role: 'implementer', taskId: '1', output: implementer('1', ['src/routes/login.ts']) });
    const compiled = tracker.compilePrompt({
      taskId: '2',
      taskPrompt: 'Rate limit the login route',
      deltaPacket: { k: 1 },
    });
    const lines = compiled.prompt.split('\n');
    expect(lines.slice(0, 4)).toEqual([
      'Task ID: 2',
      'Max output tokens: 1200',
      'Delta context: {"k":1}',
      '[Session Context]',
    ]);
    expect(lines.slice(-2)).toEqual(['Task prompt:', 'Rate limit the login route']);
    expect(lines.slice(3, -2).join('\n')).toBe(compiled.sessionContext);
    // The file the prompt matches first, then what else task 1 left (its status and summary, by recency).
    expect(lines[4]).toBe('- src/routes/login.ts modified_by task:1 [task:1]');
    expect(compiled.facts).toHaveLength(lines.length - 6);
    expect(compiled.facts.every((fact) => fact.sourceTaskId === '1')).toBe(true);
  });

  it('takes a number as a task id only when it is a whole number its digits say exactly, as the live session and the MCP server do', () => {
    const tracker = createFactTracker({ clock: steppingClock() });
    for (const taskId of [Number.NaN, 1.5, 1e21, Number.POSITIVE_INFINITY]) {
      const refused = tracker.ingestOutput({
        role: 'implementer',
        taskId,
        output: implementer('1', ['src/a.ts']),
      } as never);
      expect(refused).toEqual(
        E.left({
          code: 'invalid_input',
          message: `task id ${String(taskId)} is no whole number within 2^53 - 1: give it as a string`,
        }),
      );
      expect(tracker.compilePrompt({ taskId, taskPrompt: 'x' } as never).error?.code).toBe('invalid_input');
    }
    expect(tracker.events()).toEqual([]);
    expect(
      E.isRight(
        tracker.ingestOutput({ role: 'implementer', taskId: 7, output: implementer('7', ['src/a.ts']) } as never),
      ),
    ).toBe(true);
  });

  it('reads a delta packet that is no object (an array, a number) as the empty one, and still builds the prompt with its section', () => {
    const tracker = createFactTracker({ clock: steppingClock() });
    tracker.ingestOutput({ role: 'implementer', taskId: '1', output: implementer('1', ['src/routes/login.ts']) });
    for (const deltaPacket of [[], [1, 2], 7, 'x']) {
      const compiled = tracker.compilePrompt({
        taskId: '2',
        taskPrompt: 'Rate limit the login route',
        deltaPacket,
      } as never);
      expect(compiled.error).toBeUndefined();
      expect(compiled.prompt.split('\n').slice(0, 4)).toEqual([
        'Task ID: 2',
        'Max output tokens: 1200',
        'Delta context: {}',
        '[Session Context]',
      ]);
    }
  });

  it('reads an output budget that is no finite count (Infinity, NaN, a negative, a string) as the default', () => {
    const tracker = createFactTracker({ clock: steppingClock() });
    for (const maxOutputTokens of [Number.POSITIVE_INFINITY, Number.NaN, -1, '800']) {
      for (const compiled of [
        tracker.compilePrompt({ taskId: '2', taskPrompt: 'x', maxOutputTokens } as never),
        tracker.previewPrompt({ taskId: '2', taskPrompt: 'x', maxOutputTokens } as never),
      ]) {
        expect(compiled.error).toBeUndefined();
        expect(compiled.prompt.split('\n')[1]).toBe('Max output tokens: 1200');
      }
    }
    expect(tracker.compilePrompt({ taskId: '2', taskPrompt: 'x', maxOutputTokens: 800 }).prompt).toContain(
      'Max output tokens: 800\n',
    );
  });

  it('uses its own defaults for facts, tokens and counting', () => {
    const tracker = createFactTracker({ clock: steppingClock(), maxFacts: 1, countTokens: (t) => t.length });
    tracker.ingestOutput({
      role: 'implementer',
      taskId: '1',
      output: implementer('1', ['src/login/a.ts', 'src/login/b.ts']),
    });
    expect(tracker.compilePrompt({ taskId: '2', taskPrompt: 'login' }).facts).toHaveLength(1);
    const tight = createFactTracker({ clock: steppingClock(), maxTokens: 10, countTokens: (t) => t.length });
    tight.ingestOutput({ role: 'implementer', taskId: '1', output: implementer('1', ['src/login/a.ts']) });
    expect(tight.compilePrompt({ taskId: '2', taskPrompt: 'login' }).sessionContext).toBe('');
  });

  it('notifies subscribers once per call that changed the state, and never for one that did not', () => {
    const tracker = createFactTracker({ clock: steppingClock() });
    const calls: Array<[FactStore, FactStore]> = [];
    const unsubscribe = tracker.subscribe((next, previous) => calls.push([next, previous]));
    tracker.ingestOutput({
      role: 'reviewer',
      taskId: '3',
      output: reviewer('3', 'needs_changes', [{ message: 'a' }], ['b']),
    });
    expect(calls).toHaveLength(1);
    tracker.ingestOutput({ role: 'reviewer', taskId: '3', output: reviewer('3', 'approved') });
    expect(calls).toHaveLength(2);
    expect(calls[1]![0]).toBe(tracker.getSnapshot());
    expect(calls[1]![1]).toBe(calls[0]![0]);
    tracker.ingestOutput({ role: 'reviewer', taskId: '3', output: 'garbage' });
    tracker.compilePrompt({ taskId: '4', taskPrompt: 'anything' });
    expect(calls).toHaveLength(3);
    tracker.compilePrompt({ taskId: '4', taskPrompt: 'anything' });
    tracker.invalidate('nothing', 'here', 5);
    tracker.compact(1000);
    expect(calls).toHaveLength(3);
    unsubscribe();
    tracker.ingestOutput({ role: 'implementer', taskId: '5', output: implementer('5', ['x']) });
    expect(calls).toHaveLength(3);
  });

  it('a throwing listener does not break the call or other listeners', () => {
    const tracker = createFactTracker({ clock: steppingClock() });
    let called = 0;
    tracker.subscribe(() => {
      throw new Error('listener bug');
    });
    tracker.subscribe(() => (called += 1));
    expect(E.isRight(tracker.ingestOutput({ role: 'implementer', taskId: '1', output: implementer('1', ['a']) }))).toBe(
      true,
    );
    expect(called).toBe(1);
  });

  it('maps facts to state-snapshot facts', () => {
    const tracker = createFactTracker({ clock: steppingClock() });
    tracker.ingestOutput({ role: 'implementer', taskId: '1', output: implementer('1', ['src/a.ts']) });
    const snapshot = toStateSnapshotFacts(selectValidFacts(tracker.getSnapshot()));
    expect(snapshot).toContainEqual({ k: 'session_fact:src/a.ts:modified_by', v: 'task:1', confidence: 1 });
  });
});

describe('integration scenarios from the design', () => {
  it('the first task of a session gets no section', () => {
    const tracker = createFactTracker({ clock: steppingClock() });
    const compiled = tracker.compilePrompt({ taskId: '1', taskPrompt: 'Create the project skeleton' });
    expect(compiled.sessionContext).toBe('');
    expect(compiled.prompt).not.toContain('[Session Context]');
  });

  it("task 1's facts are available when compiling task 3", () => {
    const tracker = createFactTracker({ clock: steppingClock() });
    tracker.ingestOutput({
      role: 'implementer',
      taskId: '1',
      output: raw(implementer('1', ['src/services/FooService.ts'])),
    });
    tracker.ingestOutput({ role: 'reviewer', taskId: '1', output: reviewer('1', 'approved') });
    tracker.ingestOutput({ role: 'implementer', taskId: '2', output: implementer('2', ['src/db/schema.ts']) });
    const compiled = tracker.compilePrompt({ taskId: '3', taskPrompt: 'Extend FooService with caching' });
    expect(compiled.prompt).toContain('- src/services/FooService.ts modified_by task:1 [task:1]');
  });

  it('a fact from task 2 invalidated by task 4 is absent from the prompt of task 5', () => {
    const tracker = createFactTracker({ clock: steppingClock() });
    tracker.ingestOutput({ role: 'implementer', taskId: '2', output: implementer('2', ['src/config.ts']) });
    tracker.ingestOutput({ role: 'implementer', taskId: '4', output: implementer('4', ['src/config.ts']) });
    const compiled = tracker.compilePrompt({ taskId: '5', taskPrompt: 'Read the config flags' });
    expect(compiled.prompt).not.toContain('src/config.ts modified_by task:2');
    expect(compiled.prompt).toContain('src/config.ts modified_by task:4');
    tracker.invalidate('src/config.ts', 'modified_by');
    expect(tracker.compilePrompt({ taskId: '5', taskPrompt: 'Read the config flags' }).sessionContext).not.toContain(
      'config.ts',
    );
  });

  it('a prompt whose task id no record can hold is refused with invalid_input, never given a section it does not record', () => {
    const tracker = createFactTracker({ clock: steppingClock() });
    tracker.ingestOutput({ role: 'implementer', taskId: '1', output: implementer('1', ['src/a.ts']) });
    const before = tracker.events().length;
    for (const taskId of ['', '   ', 'x'.repeat(51)]) {
      const compiled = tracker.compilePrompt({ taskId, taskPrompt: 'change src/a.ts' });
      expect([compiled.sessionContext, compiled.error?.code]).toEqual(['', 'invalid_input']);
      expect(tracker.previewPrompt({ taskId, taskPrompt: 'change src/a.ts' }).error?.code).toBe('invalid_input');
    }
    expect(tracker.events().length).toBe(before);
    expect(tracker.compilePrompt({ taskId: 'x'.repeat(50), taskPrompt: 'change src/a.ts' }).error).toBeUndefined();
  });

  it('invalidating the path an agent reported closes the fact extraction made of it, however extraction normalized it', () => {
    const tracker = createFactTracker({ clock: steppingClock() });
    const long = `packages/${'very-long-directory-name/'.repeat(8)}component.tsx`;
    const reported = [long, 'docs/My  Notes.md', 'src/a\tb.ts'];
    tracker.ingestOutput({ role: 'implementer', taskId: '1', output: implementer('1', reported) });
    for (const path of reported) {
      const closed = tracker.invalidate(path, 'modified_by');
      expect(E.isRight(closed) && closed.right.closed.map((fact) => fact.relation)).toEqual(['modified_by']);
    }
    expect(selectValidFacts(tracker.getSnapshot()).filter((fact) => fact.relation === 'modified_by')).toEqual([]);
    // The replay of its events closes the same facts.
    expect(selectValidFacts(replay(tracker.events()))).toEqual(selectValidFacts(tracker.getSnapshot()));
  });

  it('a subject stored as given is closed as given, before any reading of it as a path', () => {
    const at = 1_000;
    const fields = { tags: ['convention'], sourceRole: 'reviewer', confidence: 1 } as const;
    const store = addFacts(
      emptyFactStore(),
      ['two  spaces', 'two spaces'].map((subject) =>
        makeFact({
          subject,
          relation: 'convention',
          object: 'kept apart',
          sourceTaskId: '1',
          validFrom: at,
          ...fields,
        }),
      ),
    );
    const closed = invalidate(store, 'two  spaces', 'convention', at + 1);
    expect(selectValidFacts(closed).map((fact) => fact.subject)).toEqual(['two spaces']);
  });

  it('a store of 600 facts compacts to its bound of 500 keeping the most recent', () => {
    const tracker = createFactTracker({ clock: steppingClock(), maxValidFacts: 500 });
    for (let task = 1; task <= 60; task += 1)
      tracker.ingestOutput({
        role: 'implementer',
        taskId: String(task),
        output: implementer(
          String(task),
          Array.from({ length: 8 }, (_, i) => `src/t${task}/f${i}.ts`),
        ),
      });
    const store = tracker.getSnapshot();
    expect(selectValidCount(store)).toBe(500);
    const newest = selectValidFacts(store).filter((f) => f.sourceTaskId === '60');
    expect(newest).toHaveLength(10);
  });
});

describe('tracker properties', () => {
  const resultArb = fc.oneof(
    fc.record({
      role: fc.constant('implementer' as const),
      taskId: fc.constantFrom('1', '2', '3'),
      files: fc.subarray(['src/a.ts', 'src/b.ts', 'src/c.ts']),
      status: fc.constantFrom('completed', 'blocked'),
    }),
    fc.record({
      role: fc.constant('reviewer' as const),
      taskId: fc.constantFrom('1', '2', '3'),
      assessment: fc.constantFrom('approved', 'needs_changes'),
      issues: fc.subarray([{ file: 'src/a.ts', message: 'naming convention broken' }, { message: 'missing test' }]),
      fixes: fc.subarray(['add test', 'rename']),
    }),
  );
  type ScriptedResult = typeof resultArb extends fc.Arbitrary<infer R> ? R : never;
  const ingest = (tracker: FactTracker, r: ScriptedResult) =>
    r.role === 'implementer'
      ? tracker.ingestOutput({
          role: 'implementer',
          taskId: r.taskId,
          output: implementer(r.taskId, r.files, { status: r.status }),
        })
      : tracker.ingestOutput({
          role: 'reviewer',
          taskId: r.taskId,
          output: reviewer(r.taskId, r.assessment, r.issues, r.fixes),
        });

  it('a tracker started from a JSON or structuredClone copy of a store answers as one started from the store, whatever its caller does to the copy afterwards', () => {
    /**
     * Overwrites every text the value holds, where it can: what a caller's later change to its copy
     * does. An object reached again (a structuredClone keeps what the store shares) was done once.
     */
    const scribble = (value: unknown, done = new Set<object>()): void => {
      if (typeof value !== 'object' || value === null || done.has(value)) return;
      done.add(value);
      const fields = value as Record<string, unknown>;
      for (const key of Object.keys(fields))
        try {
          if (typeof fields[key] === 'string') fields[key] = 'scribbled';
          else scribble(fields[key], done);
        } catch {
          // Frozen: the change is refused, which is the point.
        }
    };
    fc.assert(
      fc.property(fc.array(resultArb, { minLength: 1, maxLength: 8 }), fc.boolean(), (results, viaJson) => {
        const original = createFactTracker({ clock: steppingClock() });
        for (const result of results) ingest(original, result);
        const store = original.getSnapshot();
        const copy = (viaJson ? JSON.parse(JSON.stringify(store)) : structuredClone(store)) as FactStore;
        const resumed = createFactTracker({ clock: steppingClock(), initial: copy });
        scribble(copy);
        const prompt = { taskId: '4', taskPrompt: 'src/a.ts naming' };
        expect(resumed.previewPrompt(prompt)).toEqual(original.previewPrompt(prompt));
        expect(selectValidFacts(resumed.getSnapshot())).toEqual(selectValidFacts(store));
      }),
    );
  });

  it('replaying the tracker’s events from an empty store rebuilds its snapshot, whatever the clock does', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(resultArb, fc.integer({ min: 0, max: 20 })), { maxLength: 15 }),
        fc.integer({ min: 3, max: 12 }),
        (steps, maxValidFacts) => {
          let now = 0;
          const tracker = createFactTracker({ clock: () => now, maxValidFacts });
          for (const [result, at] of steps) {
            now = at;
            ingest(tracker, result);
          }
          expect(replay(tracker.events(), emptyFactStore({ maxValidFacts }))).toEqual(tracker.getSnapshot());
        },
      ),
    );
  });

  it('a tracker driven inside one in-place run, or in transient runs kept from one to the next, behaves exactly like one driven call by call, and every snapshot it hands out is deeply frozen and never changes', () => {
    const stepArb = fc.oneof(
      { weight: 4, arbitrary: resultArb.map((result) => ({ kind: 'ingest' as const, result })) },
      { weight: 2, arbitrary: fc.constantFrom('1', '2', '3').map((taskId) => ({ kind: 'prompt' as const, taskId })) },
      { weight: 1, arbitrary: fc.constant({ kind: 'snapshot' as const }) },
      {
        weight: 1,
        arbitrary: fc.integer({ min: 0, max: 6 }).map((maxFacts) => ({ kind: 'compact' as const, maxFacts })),
      },
    );
    fc.assert(
      fc.property(
        fc.array(stepArb, { maxLength: 20 }),
        fc.integer({ min: 3, max: 12 }),
        fc.array(fc.boolean(), { minLength: 20, maxLength: 20 }),
        (steps, maxValidFacts, cuts) => {
          let now = 0;
          const input = (taskId: string) => ({
            taskId,
            taskPrompt: 'Fix the naming convention in src/a.ts and add a test',
          });
          /** Runs the steps, each answer recorded (snapshots sealed and serialized as they are handed out). */
          const driveSteps = (
            tracker: FactTracker,
            handedOut: Array<{ store: FactStore; json: string }>,
            some: typeof steps,
          ): unknown[] =>
            some.map((step) => {
              now += 1_000;
              if (step.kind === 'ingest') return ingest(tracker, step.result);
              if (step.kind === 'prompt') return tracker.compilePrompt(input(step.taskId));
              if (step.kind === 'compact') return tracker.compact(step.maxFacts);
              const store = tracker.getSnapshot();
              expect(isDeepFrozen(store)).toBe(true);
              handedOut.push({ store, json: JSON.stringify(store) });
              return store;
            });
          const drive = (tracker: FactTracker, handedOut: Array<{ store: FactStore; json: string }>): unknown[] => {
            now = 0;
            return driveSteps(tracker, handedOut, steps);
          };
          const persistent = createFactTracker({ clock: () => now, maxValidFacts });
          const expected = drive(persistent, []);
          const transient = createFactTracker({ clock: () => now, maxValidFacts });
          const handedOut: Array<{ store: FactStore; json: string }> = [];
          let answers: unknown[] = [];
          asOneRun(() => {
            answers = drive(transient, handedOut);
            return transient.getSnapshot();
          });
          expect(answers).toEqual(expected);
          expect(transient.getSnapshot()).toEqual(persistent.getSnapshot());
          expect(isDeepFrozen(transient.getSnapshot())).toBe(true);
          expect(transient.events()).toEqual(persistent.events());
          for (const { store, json } of handedOut) expect(JSON.stringify(store)).toBe(json);

          // The same steps in transient runs (as a replay fed in batches writes): a new run where
          // `cuts` says, the state unfrozen in between, sealed only when handed out.
          const pieces = createFactTracker({ clock: () => now, maxValidFacts });
          const piecesHandedOut: Array<{ store: FactStore; json: string }> = [];
          const batches: Array<typeof steps> = [];
          steps.forEach((step, i) => {
            if (i === 0 || cuts[i] === true) batches.push([]);
            batches[batches.length - 1]!.push(step);
          });
          const piecesAnswers: unknown[] = [];
          now = 0;
          const owner = createOwner();
          for (const batch of batches)
            transientRun(owner, () => {
              for (const answer of driveSteps(pieces, piecesHandedOut, batch)) piecesAnswers.push(answer);
            });
          expect(piecesAnswers).toEqual(expected);
          expect(pieces.getSnapshot()).toEqual(persistent.getSnapshot());
          expect(isDeepFrozen(pieces.getSnapshot())).toBe(true);
          for (const { store, json } of piecesHandedOut) expect(JSON.stringify(store)).toBe(json);
        },
      ),
    );
  });

  it('model-based: the tracker agrees with a naive model of supersession and review closure', () => {
    type Model = {
      time: number;
      pairs: Map<string, { at: number; facts: Map<string, SessionFact> }>;
      notifications: number;
    };
    const key = (f: SessionFact) => `${f.subject}\u001f${f.relation}`;
    const assertAll = (m: Model, facts: ReadonlyArray<SessionFact>) => {
      const byPair = new Map<string, SessionFact[]>();
      for (const f of facts) byPair.set(key(f), [...(byPair.get(key(f)) ?? []), f]);
      for (const [k, group] of byPair) m.pairs.set(k, { at: m.time, facts: new Map(group.map((f) => [f.id, f])) });
    };
    type Real = { tracker: FactTracker; notifications: () => number };
    const check = (m: Model, r: Real) => {
      const modelIds = [...m.pairs.values()].flatMap((p) => [...p.facts.keys()]).sort();
      expect(
        selectValidFacts(r.tracker.getSnapshot())
          .map((f) => f.id)
          .sort(),
      ).toEqual(modelIds);
      expect(r.notifications()).toBe(m.notifications);
    };
    class Ingest implements fc.Command<Model, Real> {
      constructor(readonly r: ScriptedResult) {}
      check = () => true;
      run(m: Model, real: Real) {
        const before = real.tracker.getSnapshot();
        m.time += 1000;
        const result = ingest(real.tracker, this.r);
        if (E.isLeft(result)) throw new Error(result.left.message);
        const facts = result.right.facts;
        if (this.r.role === 'reviewer') {
          const reasserted = new Set(facts.map(key));
          for (const [k, pair] of m.pairs)
            if (
              !reasserted.has(k) &&
              [...pair.facts.values()].some(
                (f) =>
                  f.sourceTaskId === this.r.taskId &&
                  f.sourceRole === 'reviewer' &&
                  (f.relation === 'issue' || f.relation === 'must_fix'),
              )
            )
              m.pairs.delete(k);
        }
        assertAll(m, facts);
        if (real.tracker.getSnapshot() !== before) m.notifications += 1;
        check(m, real);
      }
      toString = () => `ingest(${JSON.stringify(this.r)})`;
    }
    class Compile implements fc.Command<Model, Real> {
      constructor(
        readonly taskId: string,
        readonly text: string,
      ) {}
      check = () => true;
      run(m: Model, real: Real) {
        const before = real.tracker.getSnapshot();
        m.time += 1000;
        const compiled = real.tracker.compilePrompt({ taskId: this.taskId, taskPrompt: this.text });
        if (real.tracker.getSnapshot() !== before) m.notifications += 1;
        const valid = new Set(selectValidFacts(real.tracker.getSnapshot()).map((f) => f.id));
        for (const f of compiled.facts) {
          expect(valid.has(f.id)).toBe(true);
          expect(f.sourceTaskId).not.toBe(this.taskId);
        }
        expect(compiled.prompt.endsWith(`Task prompt:\n${this.text}`)).toBe(true);
        check(m, real);
      }
      toString = () => `compile(${this.taskId}, ${JSON.stringify(this.text)})`;
    }
    const commands = [
      resultArb.map((r) => new Ingest(r)),
      fc
        .tuple(fc.constantFrom('1', '2', '3', '4'), fc.constantFrom('fix src/a.ts', 'add a test', 'naming'))
        .map(([t, text]) => new Compile(t, text)),
    ];
    fc.assert(
      fc.property(fc.commands(commands, { maxCommands: 20 }), (cmds) => {
        let notifications = 0;
        const tracker = createFactTracker({ clock: steppingClock(), maxValidFacts: 10_000 });
        tracker.subscribe(() => (notifications += 1));
        fc.modelRun(
          () => ({
            model: { time: 0, pairs: new Map(), notifications: 0 },
            real: { tracker, notifications: () => notifications },
          }),
          cmds,
        );
      }),
    );
  });

  it('ingestOutput, compilePrompt, invalidate and compact never throw, whatever they are given', () => {
    const tracker = createFactTracker({ clock: steppingClock() });
    tracker.ingestOutput({ role: 'implementer', taskId: '1', output: implementer('1', ['src/a.ts']) });
    fc.assert(
      fc.property(fc.anything(), fc.anything(), fc.anything(), (a, b, c) => {
        expect(() => tracker.ingestOutput(a as never)).not.toThrow();
        expect(() => tracker.ingestOutput({ role: 'implementer', taskId: '2', output: b } as never)).not.toThrow();
        expect(() =>
          tracker.ingestOutput({
            role: 'reviewer',
            taskId: '2',
            output: typeof c === 'string' ? c : (JSON.stringify(c) ?? ''),
          } as never),
        ).not.toThrow();
        expect(() => tracker.compilePrompt(a as never)).not.toThrow();
        expect(() =>
          tracker.compilePrompt({ taskId: b, taskPrompt: c, tags: a, deltaPacket: b } as never),
        ).not.toThrow();
        expect(() => tracker.invalidate(a as never, b as never, c as never)).not.toThrow();
        expect(() => tracker.recordPrompt(a as never, b as never, c as never)).not.toThrow();
        expect(() => tracker.compact(a as never)).not.toThrow();
      }),
    );
  });

  it('recordPrompt refuses a task id compilePrompt refuses, with the same invalid_input, and records nothing', () => {
    const tracker = createFactTracker({ clock: () => 5 });
    tracker.ingestOutput({ role: 'implementer', taskId: '1', output: implementer('1', ['src/a.ts']) });
    const before = tracker.getSnapshot();
    for (const taskId of ['', '   ', 'x'.repeat(60), `ghp_${'a1B2c3D4e5'.repeat(4)}`, 2.5]) {
      const recorded = tracker.recordPrompt(taskId as string, 'Fix the naming in src/a.ts', 5);
      const compiled = tracker.previewPrompt({ taskId: taskId as string, taskPrompt: 'Fix the naming in src/a.ts' });
      expect(recorded).toEqual(E.left(expect.objectContaining({ code: 'invalid_input' })));
      expect(E.isLeft(recorded) && recorded.left.message).toBe(compiled.error?.message);
    }
    expect(tracker.getSnapshot()).toBe(before);
  });

  it('recordPrompt refuses a prompt that is no text, as compilePrompt does, and records nothing', () => {
    const tracker = createFactTracker({ clock: () => 5 });
    tracker.ingestOutput({ role: 'implementer', taskId: '1', output: implementer('1', ['src/a.ts']) });
    const before = tracker.getSnapshot();
    for (const taskPrompt of [42, null, undefined, ['Fix src/a.ts'], { text: 'Fix src/a.ts' }]) {
      const recorded = tracker.recordPrompt('2', taskPrompt as never, 5);
      const compiled = tracker.previewPrompt({ taskId: '2', taskPrompt: taskPrompt as never });
      expect(recorded).toEqual(E.left(expect.objectContaining({ code: 'invalid_input' })));
      expect(E.isLeft(recorded) && recorded.left.message).toBe(compiled.error?.message);
    }
    expect(tracker.getSnapshot()).toBe(before);
  });

  it('recordPrompt changes the store exactly as compilePrompt of the same prompt at the same time does', () => {
    const prompt = fc.record({
      taskId: fc.constantFrom('1', '2', 'task-3', '', ' 4 ', 'x'.repeat(60)),
      taskPrompt: fc.constantFrom('Fix the naming in src/a.ts', 'Add rate limiting', '', '   '),
      at: fc.integer({ min: 0, max: 20 }),
    });
    fc.assert(
      fc.property(fc.array(fc.tuple(prompt, fc.boolean()), { maxLength: 10 }), (steps) => {
        let now = 0;
        const compiled = createFactTracker({ clock: () => now });
        const recorded = createFactTracker({ clock: () => now });
        for (const tracker of [compiled, recorded])
          tracker.ingestOutput({ role: 'implementer', taskId: '1', output: implementer('1', ['src/a.ts']) });
        for (const [{ taskId, taskPrompt, at }, byClock] of steps) {
          now = at;
          compiled.compilePrompt({ taskId, taskPrompt });
          recorded.recordPrompt(taskId, taskPrompt, byClock ? undefined : at);
        }
        expect(recorded.getSnapshot()).toEqual(compiled.getSnapshot());
      }),
    );
  });
});
